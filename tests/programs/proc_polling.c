/* Polls /proc/self/stat 5 times (open, read, close: the kernel's interface, noise to a
 * trace's reader), then writes 5 bytes to <dir>/out.txt. */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char buffer[256];
    for (int i = 0; i < 5; i++) {
        int fd = open("/proc/self/stat", O_RDONLY);
        if (read(fd, buffer, sizeof buffer) < 0) return 3;
        close(fd);
    }
    int out = open("out.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (write(out, "done\n", 5) != 5) return 4;
    close(out);
    return 0;
}

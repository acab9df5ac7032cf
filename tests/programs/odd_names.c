/* Files whose names hold a newline and a terminal escape sequence (ESC [ 31 m): what a text
 * output must show escaped, never raw. Each gets one 10-byte write. */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    const char *names[] = {"two\nlines.dat", "red\033[31mtext.dat"};
    for (int i = 0; i < 2; i++) {
        int fd = open(names[i], O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "0123456789", 10) != 10) return 1;
        close(fd);
    }
    return 0;
}

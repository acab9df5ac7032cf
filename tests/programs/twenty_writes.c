/* Exactly 20 write() calls of 10 bytes to out.dat. */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    int fd = open("out.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 20; i++) write(fd, "0123456789", 10);
    close(fd);
    return 0;
}

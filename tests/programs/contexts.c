/* One helper reached from two code paths: the two paths are two calling contexts.
 * Built with -O0 -g -fno-omit-frame-pointer so every frame can be walked and named. */
#include <fcntl.h>
#include <unistd.h>

void write_block(int fd) { write(fd, "0123456789", 10); }

void write_checkpoint(int fd) { write_block(fd); }

void write_log(int fd) { write_block(fd); }

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    int fd = open("contexts.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 3; i++) write_checkpoint(fd);
    for (int i = 0; i < 2; i++) write_log(fd);
    close(fd);
    return 0;
}

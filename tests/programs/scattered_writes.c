/* N one-byte pwrite calls at scattered offsets (a linear congruential sequence: no stride
 * repeats, so every call needs staging room — 8 bytes in an offsets record), then exit
 * status 3. Arguments: directory, N. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long calls = atol(argv[2]);
    int fd = open("scattered.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 1;
    unsigned long position = 12345;
    for (long i = 0; i < calls; i++) {
        position = (position * 1103515245 + 12345) % 2147483648UL;
        if (pwrite(fd, "x", 1, (off_t)(position % (1 << 20))) != 1) return 1;
    }
    close(fd);
    exit(3);
}

/* Random access with large requests, as an out-of-core solver sweeping backwards does:
 * 1,100 reads of 2 MiB, each before the previous one, in a sparse 4 GiB file (Drishti: more
 * than 20% and more than 1,000 accesses not after the previous one). Requests are large,
 * and no byte is read twice. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    const off_t block = 2 << 20, blocks = 2048; /* 4 GiB */
    int fd = open("table.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, block * blocks) != 0) return 1;
    char *buffer = malloc(block);
    for (long i = 0; i < 1100; i++) {
        off_t index = blocks - 1 - i;
        if (pread(fd, buffer, block, index * block) != block) return 1;
    }
    close(fd);
    return unlink("table.dat");
}

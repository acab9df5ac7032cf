/* Random sizes: a checkpoint of compressed blocks, as an I/O library that compresses each
 * chunk (HDF5 with a filter such as SZ or ZFP, ADIOS2's compression operators) writes it.
 * Each block's compressed size is its own (1 to 8 KiB here, from a fixed generator), the
 * blocks are appended to one file with `write`, the table of their offsets and sizes
 * follows; a restart then reads the blocks back in shuffled order, each with `pread` of
 * its own size at its own offset (random sizes at random offsets).
 *
 *   random_sizes DIR BLOCKS */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LARGEST = 8192 };

static uint64_t state = 7;

static uint64_t next(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
}

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long blocks = atol(argv[2]);
    long *offsets = malloc(sizeof *offsets * blocks);
    long *sizes = malloc(sizeof *sizes * blocks);
    long *order = malloc(sizeof *order * blocks);
    static char buffer[LARGEST];
    memset(buffer, 'c', sizeof buffer);
    int fd = open("blocks.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || !offsets || !sizes || !order) return 1;
    long at = 0;
    for (long i = 0; i < blocks; i++) {
        sizes[i] = 1024 + (long)(next() % (LARGEST - 1024 + 1));
        offsets[i] = at;
        if (write(fd, buffer, (size_t)sizes[i]) != sizes[i]) return 1;
        at += sizes[i];
    }
    /* The block table after the blocks. */
    if (write(fd, offsets, sizeof *offsets * blocks) != (ssize_t)(sizeof *offsets * blocks)) return 1;
    if (write(fd, sizes, sizeof *sizes * blocks) != (ssize_t)(sizeof *sizes * blocks)) return 1;
    for (long i = 0; i < blocks; i++) order[i] = i;
    for (long i = blocks - 1; i > 0; i--) {
        long j = (long)(next() % (uint64_t)(i + 1));
        long swap = order[i];
        order[i] = order[j];
        order[j] = swap;
    }
    for (long i = 0; i < blocks; i++) {
        long b = order[i];
        if (pread(fd, buffer, (size_t)sizes[b], offsets[b]) != sizes[b]) return 1;
    }
    close(fd);
    free(offsets);
    free(sizes);
    free(order);
    return 0;
}

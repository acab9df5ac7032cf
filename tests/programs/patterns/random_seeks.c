/* IOR's random mode (-z: every block of the file once, in shuffled order), as its POSIX
 * backend does it: `lseek(fd, offset, SEEK_SET)` then `write` (then `read` back in another
 * order) of one 4 KiB transfer at each of the file's BLOCKS offsets, shuffled by a fixed
 * generator (Fisher-Yates over a linear congruential sequence), so runs repeat.
 *
 *   random_seeks DIR BLOCKS */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TRANSFER = 4096 };

static uint64_t state = 42;

static uint64_t next(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
}

static void shuffle(long *order, long n) {
    for (long i = 0; i < n; i++) order[i] = i;
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(next() % (uint64_t)(i + 1));
        long swap = order[i];
        order[i] = order[j];
        order[j] = swap;
    }
}

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long blocks = atol(argv[2]);
    long *order = malloc(sizeof *order * blocks);
    static char buffer[TRANSFER];
    memset(buffer, 'z', sizeof buffer);
    int fd = open("random.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || !order) return 1;
    for (int phase = 0; phase < 2; phase++) {
        shuffle(order, blocks);
        for (long i = 0; i < blocks; i++) {
            if (lseek(fd, order[i] * TRANSFER, SEEK_SET) != order[i] * TRANSFER) return 1;
            ssize_t moved = phase == 0 ? write(fd, buffer, TRANSFER) : read(fd, buffer, TRANSFER);
            if (moved != TRANSFER) return 1;
        }
    }
    close(fd);
    free(order);
    return 0;
}

/* IOR's random mode with a file per process (`ior -a POSIX -F -z`), as its POSIX backend
 * does it: every rank writes each 4 KiB block of its own file once, in an order shuffled
 * by its own generator (seeded with the rank), with `lseek(fd, offset, SEEK_SET)` then
 * `write`, and reads them back in another shuffled order. Below precision 100 the ranks'
 * seeks blur and the ranks share one stream, whose access order (Darshan's consecutive
 * and sequential counts) differs from rank to rank.
 *
 *   rank_random_seeks DIR BLOCKS */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TRANSFER = 4096 };

static uint64_t state;

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
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) MPI_Abort(MPI_COMM_WORLD, 2);
    long blocks = atol(argv[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/random.%08d", argv[1], rank);
    long *order = malloc(blocks * sizeof *order);
    char *buffer = malloc(TRANSFER);
    memset(buffer, 'a' + rank % 26, TRANSFER);
    state = 42 + (uint64_t)rank;
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || !order || !buffer) MPI_Abort(MPI_COMM_WORLD, 1);
    shuffle(order, blocks);
    for (long i = 0; i < blocks; i++) {
        lseek(fd, order[i] * TRANSFER, SEEK_SET);
        if (write(fd, buffer, TRANSFER) != TRANSFER) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    shuffle(order, blocks);
    for (long i = 0; i < blocks; i++) {
        lseek(fd, order[i] * TRANSFER, SEEK_SET);
        if (read(fd, buffer, TRANSFER) != TRANSFER) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    close(fd);
    free(order);
    free(buffer);
    MPI_Finalize();
    return 0;
}

/* Neighbours at a distance that wanders, as codes do whose communication partner changes
 * from step to step on a ring of ranks (a pipelined shift whose stride depends on the
 * step, as in the shifted exchanges of a Fourier or systolic algorithm, a load balancer
 * that hands work 1, 2 or 3 domains on): every step each rank sends one message to the rank
 * 1, 2 or 3 ahead (modulo the job), the same distance for every rank in a step, and
 * receives from the rank that far behind.
 *
 * Below precision 100 each call site's peers become a histogram. Kept as ranks, the
 * histogram of 16 ranks holds every rank; kept relative to the rank, it holds 1, 2 and 3:
 * a reader then draws for each rank only its own possible neighbours.
 *
 *   wandering_neighbours DIR STEPS   (at least 4 ranks) */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

/* 1, 2 or 3, from the step. */
static int distance(long step) {
    unsigned x = (unsigned)(step * 104729 + 12345);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return 1 + (int)(x % 3u);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0 || size < 4) MPI_Abort(MPI_COMM_WORLD, 2);
    long steps = atol(argv[2]);
    static double out[256], in[256];
    for (long step = 0; step < steps; step++) {
        MPI_Request request;
        int d = distance(step);
        MPI_Isend(out, 256, MPI_DOUBLE, (rank + d) % size, 7, MPI_COMM_WORLD, &request);
        MPI_Recv(in, 256, MPI_DOUBLE, (rank - d + size) % size, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}

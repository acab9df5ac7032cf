/* An irregular (non-SPMD) MPI program in the spirit of the ocean model the thesis traces
 * (POP): two rank groups with different message sizes and neighbour distances, message
 * sizes that jitter by a few percent with the rank and the time step, a solver loop whose
 * iteration count changes every step, and rank 0 alone writing a log of the step with
 * sizes that change too. No two ranks, and no two steps,
 * send the same sizes: a lossless trace cannot fold them; a precision level below 100
 * keeps them in histograms.
 *
 * Usage: irregular STEPS OUTPUT_FILE
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* Deterministic jitter in [0, spread): the same on every rank for the same inputs, so a
 * sender and its receiver agree on the size without talking. */
static int jitter(int rank, int step, int spread) {
    unsigned x = (unsigned)(rank * 7919 + step * 104729 + 12345);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return (int)(x % (unsigned)spread);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    const char *path = argc > 2 ? argv[2] : "irregular.log";
    /* Group 0 (first half) talks to neighbours 1 away with ~4 KiB messages; group 1 to
     * neighbours 2 away with ~16 KiB. */
    int group = rank < size / 2;
    int distance = group ? 1 : 2;
    int base = group ? 4096 : 16384;
    char *out = calloc(20000, 1), *in = calloc(20000, 1);
    int fd = -1;
    if (rank == 0)
        fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    /* Each group is a ring of its own: group 0 (the first half) passes ~4 KiB to the rank
     * 1 further, group 1 ~16 KiB to the rank 2 further (modulo the group). */
    int first = group ? 0 : size / 2, members = group ? size / 2 : size - size / 2;
    int right = first + (rank - first + distance) % members;
    int left = first + (rank - first - distance % members + members) % members;
    for (int step = 0; step < steps; step++) {
        int send_size = base + jitter(rank, step, base / 32);
        MPI_Request requests[2];
        MPI_Irecv(in, 20000, MPI_BYTE, left, 7, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(out, send_size, MPI_BYTE, right, 7, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        double local = send_size, total = 0;
        MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        /* A solver that converges after 20 to 23 iterations, the same on every rank (its
         * residual is global): each step's loop count differs. */
        int iterations = 20 + jitter(0, step, 4);
        for (int iteration = 0; iteration < iterations; iteration++) {
            double residual = 1.0 / (iteration + 1), global = 0;
            MPI_Allreduce(&residual, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        if (rank == 0) {
            char line[4096];
            int length = 1000 + jitter(0, step, 40);
            memset(line, 'a' + step % 26, (size_t)length);
            if (write(fd, line, (size_t)length) != length)
                return 2;
        }
    }
    if (fd >= 0)
        close(fd);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}

/* A load-imbalanced particle code (particle-in-cell codes such as VPIC, N-body codes such
 * as HACC): every step each rank sends the particles that left its domain to the next
 * rank, one message each, and receives those that entered from the previous one; how
 * many move differs from rank to rank and from step to step. Then it appends its
 * particles to its own file (a fixed-size record per particle, one write per particle),
 * and all ranks agree on the next time step.
 *
 * A lossless trace keeps each loop's count, so it grows with ranks and steps. Below
 * precision 100 the message loops' counts share histograms, within a rank and across
 * ranks; the writes' loops, whose counts differ too, are each rank's own (a rank's file
 * keeps its exact totals).
 *
 * Usage: imbalanced STEPS PREFIX   (rank r writes PREFIX.r)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

/* Deterministic jitter in [0, spread), as in irregular.c: a receiver knows how many
 * particles its neighbour sends without being told. */
static int jitter(int rank, int step, int spread) {
    unsigned x = (unsigned)(rank * 7919 + step * 104729 + 12345);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return (int)(x % (unsigned)spread);
}

/* Particles that leave `rank`'s domain at `step`: 40 to 47. */
static int leaving(int rank, int step) { return 40 + jitter(rank, step, 8); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    const char *prefix = argc > 2 ? argv[2] : "particles";
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        return 2;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char particle[48] = {0};
    int owned = 1000;
    for (int step = 0; step < steps; step++) {
        /* 48-byte messages go eagerly: sending all before receiving cannot block. */
        int out = leaving(rank, step), in = leaving(left, step);
        for (int i = 0; i < out; i++)
            MPI_Send(particle, sizeof particle, MPI_BYTE, right, 9, MPI_COMM_WORLD);
        for (int i = 0; i < in; i++)
            MPI_Recv(particle, sizeof particle, MPI_BYTE, left, 9, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        owned += in - out;
        /* This rank's particles, a record each. */
        int records = 100 + jitter(rank, step, 10);
        for (int i = 0; i < records; i++)
            if (write(fd, particle, sizeof particle) != (ssize_t)sizeof particle)
                return 3;
        double dt = 1.0 / owned, next = 0;
        MPI_Allreduce(&dt, &next, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    }
    close(fd);
    MPI_Finalize();
    return 0;
}

/* Every rank keeps its own log, a line a step whose length changes with the step and the
 * rank (a diagnostic value printed to as many digits as it needs), written with write(2)
 * as codes that log per rank do (WRF's rsl.out.NNNN, a solver's per-rank residual file);
 * every few steps the ranks agree on a time step.
 *
 * Lossless, every line's size is kept and the trace grows with the steps. Below precision
 * 100 the sizes become histograms and the ranks share one stream; each rank's file must
 * still have exactly the bytes it got.
 *
 * Usage: rank_logs STEPS PREFIX   (rank r writes PREFIX.r)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    const char *prefix = argc > 2 ? argv[2] : "rank_log";
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        return 2;
    double residual = 1.0 + rank;
    for (int step = 0; step < steps; step++) {
        residual *= 0.93 + 0.01 * ((step * 7 + rank * 3) % 5);
        char line[256];
        /* 1 to 12 digits: the line's length changes with the step and the rank. */
        int digits = 1 + (step * 5 + rank * 7) % 12;
        int length = snprintf(line, sizeof line, "rank %d step %d residual %.*f\n", rank, step,
                              digits, residual);
        if (write(fd, line, (size_t)length) != length)
            return 3;
        if (step % 10 == 9) {
            double dt = residual, next = 0;
            MPI_Allreduce(&dt, &next, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        }
    }
    close(fd);
    MPI_Finalize();
    return 0;
}

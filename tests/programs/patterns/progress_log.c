/* Rank 0 reports, the others only compute and communicate, as real codes do (LULESH's
 * rank 0 prints a summary at its end through C++ streams, HPCG's writes its report):
 * every step each rank exchanges with its neighbours on a ring and the ranks agree on a
 * residual; at the end rank 0 alone writes a report, a line per step of a length of its
 * own (the residual and notes of a length drawn from a fixed generator), with fprintf —
 * one call site whose sizes keep being new, so they are kept in the stream's column,
 * exactly. Rank 0 still shares the other ranks' stream (EVNT 28): only its own part
 * reads the column.
 *
 *   progress_log DIR STEPS   (rank 0 writes DIR/progress.log) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long steps = atol(argv[2]);
    double *residuals = malloc(sizeof *residuals * (size_t)steps);
    static double out[512], in[512];
    static char notes[401];
    for (int i = 0; i < 400; i++) notes[i] = (char)('a' + i % 26);
    for (long step = 0; step < steps; step++) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Sendrecv(out, 512, MPI_DOUBLE, right, 7, in, 512, MPI_DOUBLE, left, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double local = 1.0 / (double)(step + 1 + rank);
        MPI_Allreduce(&local, &residuals[step], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        FILE *log = fopen("progress.log", "w");
        unsigned long state = 12345;
        for (long step = 0; step < steps; step++) {
            state = state * 6364136223846793005ul + 1442695040888963407ul;
            int length = 1 + (int)(state >> 33) % 400;
            fprintf(log, "step %ld residual %g %.*s\n", step + 1, residuals[step], length,
                    notes);
        }
        fclose(log);
    }
    free(residuals);
    MPI_Finalize();
    return 0;
}

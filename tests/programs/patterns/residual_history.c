/* A solver's residual history, printed as it goes: every step the ranks exchange with
 * their neighbours on a ring and agree on a residual, and rank 0 prints a line of
 * progress inside the step loop — `fprintf(log, "step %ld residual %g\n", ...)`, as
 * LAMMPS' thermo output, OpenFOAM's solver log and most Krylov solvers' monitors do.
 * `%g` gives the residual as many digits as it needs, so the line is 21 to 32 bytes and
 * its length changes every few steps, rarely twice in a row: one loop body whose last
 * call's size keeps changing, among calls that repeat exactly. Its sizes go to the
 * stream's column (a change every five steps or so is information; as loops of equal
 * lengths it cost a loop per change: 109 KB for 20,000 steps), and rank 0 still shares
 * the other ranks' stream.
 *
 *   residual_history DIR STEPS   (rank 0 writes DIR/residuals.log) */
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
    static double out[512], in[512];
    FILE *log = rank == 0 ? fopen("residuals.log", "w") : NULL;
    if (rank == 0 && !log) MPI_Abort(MPI_COMM_WORLD, 1);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (long step = 0; step < steps; step++) {
        MPI_Sendrecv(out, 512, MPI_DOUBLE, right, 7, in, 512, MPI_DOUBLE, left, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* A sum over ranks of terms of their own: the same on every run with as many
         * ranks, so the test reads the lengths back from the log. */
        double local = 1.0 / (double)(step + 1 + rank), residual;
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (log && fprintf(log, "step %ld residual %g\n", step + 1, residual) < 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (log && fclose(log) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
    return 0;
}

/* A job whose only file output is rank 0's short log, as benchmarks such as mdtest write
 * (a few lines of results through stdio): 1.2 KB in all. Shares of so few bytes — rank 0
 * moves all of them, stdio all of them — are no bottleneck, so nothing is said. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0) {
        FILE *log = fopen("results.log", "w");
        if (!log) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int line = 0; line < 20; line++)
            fprintf(log, "Directory creation: %12.3f %12.3f %12.3f %12.3f\n", 1.0 * line, 2.0, 3.0, 4.0);
        fclose(log);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

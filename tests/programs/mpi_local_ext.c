/* A plugin linked against libmpi and loaded with RTLD_LOCAL (as Python loads extension
 * modules): its MPI calls reach the tracer's hooks, which must still find libmpi. */
#include <mpi.h>

int run(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return rank >= 0 ? 0 : 1;
}

/* A matrix transpose on a square process grid, as 2-D FFTs and pencil decompositions
 * (P3DFFT, 2DECOMP&FFT) do it by hand: rank (x, y) of a q × q grid exchanges its block
 * with rank (y, x) through MPI_Sendrecv; ranks on the diagonal keep theirs. Each iteration
 * transposes once and takes an MPI_Barrier.
 *
 *   transpose DIR ITERATIONS */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

enum { BLOCK = 1024 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int q = 1;
    while (q * q < size) q++;
    if (argc < 3 || chdir(argv[1]) != 0 || q * q != size) MPI_Abort(MPI_COMM_WORLD, 2);
    long iterations = atol(argv[2]);
    int x = rank % q, y = rank / q, partner = x * q + y;
    static double block[BLOCK], received[BLOCK];
    for (long iteration = 0; iteration < iterations; iteration++) {
        if (partner != rank)
            MPI_Sendrecv(block, BLOCK, MPI_DOUBLE, partner, 3, received, BLOCK, MPI_DOUBLE,
                         partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}

/* An allreduce written by hand with recursive doubling, as codes that tune their own
 * reductions (and MPICH's and Open MPI's allreduce for short messages) do it: in step k
 * each rank exchanges its partial sum with rank XOR 2^k through MPI_Sendrecv, log2(size)
 * steps for a power-of-two job; every iteration reduces a vector this way.
 *
 *   doubling DIR ITERATIONS */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

enum { LENGTH = 256 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0 || (size & (size - 1)) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long iterations = atol(argv[2]);
    static double sum[LENGTH], partner[LENGTH];
    for (long iteration = 0; iteration < iterations; iteration++) {
        for (int i = 0; i < LENGTH; i++) sum[i] = rank + i;
        for (int mask = 1; mask < size; mask <<= 1) {
            MPI_Sendrecv(sum, LENGTH, MPI_DOUBLE, rank ^ mask, 7, partner, LENGTH, MPI_DOUBLE,
                         rank ^ mask, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < LENGTH; i++) sum[i] += partner[i];
        }
    }
    MPI_Finalize();
    return sum[0] == (double)size * (size - 1) / 2 ? 0 : 1;
}

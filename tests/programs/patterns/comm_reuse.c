/* Communicators whose memory is reused on some ranks and not on others, as in mdtest
 * (hpc/ior), which makes and frees two node-local communicators (MPI_Comm_split_type)
 * before the one its phases use: Open MPI handed that one the freed memory on most ranks,
 * fresh memory on another. Here every rank makes a communicator, frees it and makes
 * another, then reduces over it every step; between the two, odd ranks take memory of
 * every small size (as a code allocating its own buffers would), so there the second
 * communicator cannot take the first one's place, while on even ranks it does. The traced
 * calls are the same on every rank: ranks must name the communicators alike and share
 * one stream.
 *
 *   comm_reuse DIR STEPS */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long steps = atol(argv[2]);
    MPI_Comm first, second;
    MPI_Comm_dup(MPI_COMM_WORLD, &first);
    MPI_Comm_free(&first);
    if (rank % 2 == 1)
        for (size_t size = 16; size <= 8192; size += 16)
            if (!malloc(size)) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &second);
    double value = rank, sum;
    for (long step = 0; step < steps; step++)
        MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, second);
    MPI_Comm_free(&second);
    MPI_Finalize();
    return 0;
}

/* Rank 0 doing the I/O, as codes that gather their data to rank 0 to write it do: on 4
 * ranks, rank 0 writes 4 MiB in 4 writes of 1 MiB; the others write nothing. */
#include <fcntl.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0) {
        char *block = calloc(1, 1 << 20);
        int fd = open("gathered.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int i = 0; i < 4; i++)
            if (write(fd, block, 1 << 20) != 1 << 20) MPI_Abort(MPI_COMM_WORLD, 1);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

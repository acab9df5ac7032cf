/* Unequal shares, as a domain decomposition with one heavy subdomain writes: on 4 ranks,
 * each writes its own file, rank 1 four times as much (4 MiB) as the others (1 MiB). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    char *block = calloc(1, 1 << 20), name[32];
    snprintf(name, sizeof name, "part-%d.dat", rank);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < (rank == 1 ? 4 : 1); i++)
        if (write(fd, block, 1 << 20) != 1 << 20) MPI_Abort(MPI_COMM_WORLD, 1);
    close(fd);
    MPI_Finalize();
    return 0;
}

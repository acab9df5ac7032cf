/* A job killed as a whole: every rank writes 10 blocks of 100 bytes to its own file, meets
 * the others at a barrier, says it is ready by creating ready-RANK, then waits for ever (the
 * test sends SIGKILL to mpirun).
 *
 *   mpi_hang DIR */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    char name[64], block[100] = {0};
    snprintf(name, sizeof name, "hang-%d.dat", rank);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 10; i++) write(fd, block, sizeof block);
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(name, sizeof name, "ready-%d", rank);
    close(open(name, O_CREAT | O_WRONLY, 0644));
    for (;;) pause();
}

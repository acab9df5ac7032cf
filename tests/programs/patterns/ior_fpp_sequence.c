/* IOR's file-per-process sequence through its POSIX backend (`ior -a POSIX -F -w -r`):
 * rank 0 prints its header to stdout first (as IOR does; every code's rank 0 writes the
 * job's output), then every rank looks for its own file (`stat`, which fails), creates it,
 * writes BLOCKS transfers with `lseek` + `write`, closes it, looks at its size, reopens it,
 * reads it back the same way, closes it and removes it; rank 0 prints a summary line.
 * Rank 0's output is a file the others never touch, so the files each rank touches first
 * are a different place of its file table on rank 0.
 *
 *   ior_fpp_sequence DIR BLOCKS */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { TRANSFER = 4096 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) MPI_Abort(MPI_COMM_WORLD, 2);
    long blocks = atol(argv[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/testfile.%08d", argv[1], rank);
    if (rank == 0) {
        printf("IOR-like: file per process, %ld transfers of %d bytes\n", blocks, TRANSFER);
        fflush(stdout);
    }
    char *buffer = malloc(TRANSFER);
    memset(buffer, 'a' + rank % 26, TRANSFER);
    struct stat status;
    stat(path, &status);
    int fd = open(path, O_CREAT | O_RDWR, 0664);
    if (fd < 0) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < blocks; i++) {
        lseek(fd, i * TRANSFER, SEEK_SET);
        if (write(fd, buffer, TRANSFER) != TRANSFER) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    stat(path, &status);
    fd = open(path, O_RDONLY);
    if (fd < 0) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < blocks; i++) {
        lseek(fd, i * TRANSFER, SEEK_SET);
        if (read(fd, buffer, TRANSFER) != TRANSFER) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    close(fd);
    unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("done: %ld bytes a rank\n", blocks * TRANSFER);
        fflush(stdout);
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}

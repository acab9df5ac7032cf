/* An IOR-like benchmark: every rank writes then reads `segments` blocks of `block` bytes in
 * transfers of `transfer` bytes, to one shared file (segment-interleaved by rank, as IOR
 * does) or to a file per process, through POSIX (pwrite/pread) or MPI-IO (write_at/read_at,
 * or their collective _all forms). Prints the slowest rank's elapsed seconds.
 *
 *   ior_like DIR API(posix|mpiio) LAYOUT(shared|fpp) COLLECTIVE(0|1) BLOCK TRANSFER SEGMENTS */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 8 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    int mpiio = strcmp(argv[2], "mpiio") == 0;
    int shared = strcmp(argv[3], "shared") == 0;
    int collective = atoi(argv[4]);
    long block = atol(argv[5]), transfer = atol(argv[6]), segments = atol(argv[7]);
    char *buffer = malloc(transfer);
    memset(buffer, 'a' + rank % 26, transfer);
    char name[64];
    if (shared) snprintf(name, sizeof name, "ior.dat");
    else snprintf(name, sizeof name, "ior.dat.%08d", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    int fd = -1;
    MPI_File file;
    MPI_Comm comm = shared ? MPI_COMM_WORLD : MPI_COMM_SELF;
    if (mpiio) MPI_File_open(comm, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    else fd = open(name, O_CREAT | O_RDWR, 0644);
    for (int phase = 0; phase < 2; phase++) {
        for (long segment = 0; segment < segments; segment++) {
            for (long offset = 0; offset < block; offset += transfer) {
                long position = (shared ? (segment * size + rank) * block : segment * block) + offset;
                if (mpiio && phase == 0 && collective) MPI_File_write_at_all(file, position, buffer, transfer, MPI_CHAR, MPI_STATUS_IGNORE);
                else if (mpiio && phase == 0) MPI_File_write_at(file, position, buffer, transfer, MPI_CHAR, MPI_STATUS_IGNORE);
                else if (mpiio && collective) MPI_File_read_at_all(file, position, buffer, transfer, MPI_CHAR, MPI_STATUS_IGNORE);
                else if (mpiio) MPI_File_read_at(file, position, buffer, transfer, MPI_CHAR, MPI_STATUS_IGNORE);
                else if (phase == 0) pwrite(fd, buffer, transfer, position);
                else pread(fd, buffer, transfer, position);
            }
        }
        if (mpiio) MPI_File_sync(file);
        else fsync(fd);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (mpiio) MPI_File_close(&file);
    else close(fd);
    double elapsed = MPI_Wtime() - start, slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%.6f\n", slowest);
    free(buffer);
    MPI_Finalize();
    return 0;
}

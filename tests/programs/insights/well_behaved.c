/* What the insights want: on 4 ranks, each writes its 8 MiB part of a shared file with two
 * non-blocking collective writes of 4 MiB, then reads it back once with one collective
 * read. */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    const int block = 4 << 20;
    char *buffer = calloc(1, block);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    for (int i = 0; i < 2; i++) {
        MPI_Request request;
        MPI_File_iwrite_at_all(file, ((MPI_Offset)i * size + rank) * block, buffer, block, MPI_CHAR, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_File_read_at_all(file, (MPI_Offset)rank * block, buffer, block, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
    MPI_Finalize();
    return 0;
}

/* Collective but blocking MPI-IO, as most codes write: on 4 ranks, 20 collective
 * MPI_File_write_at_all of 64 KiB each, none non-blocking. (The test lowers the count
 * threshold from 1,000 to 10.) */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    const int block = 65536;
    char *buffer = calloc(1, block);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
    for (int i = 0; i < 20; i++)
        MPI_File_write_at_all(file, ((MPI_Offset)i * size + rank) * block, buffer, block, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
    MPI_Finalize();
    return 0;
}

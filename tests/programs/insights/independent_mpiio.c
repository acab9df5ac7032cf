/* Independent MPI-IO only, as a code that never uses the collective calls does: on 4
 * ranks, 20 MPI_File_write_at of 64 KiB each on a shared file, in its own part. (The test
 * lowers the count threshold from 1,000 to 10, which the thresholds file allows.) */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    const int block = 65536, count = 20;
    char *buffer = calloc(1, block);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
    for (int i = 0; i < count; i++)
        MPI_File_write_at(file, ((MPI_Offset)rank * count + i) * block, buffer, block, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
    MPI_Finalize();
    return 0;
}

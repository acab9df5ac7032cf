/* A file's length set through MPI-IO, as HDF5's MPI-IO driver does at flush and close
 * (MPI_File_set_size to the end of its allocated space) and as codes that preallocate
 * their output do: every rank writes its 4 KiB block, then the ranks together
 * preallocate 64 KiB and cut the file to 1000 bytes short of the blocks' end. The file
 * stays (its final length is what to check). Usage: file_length DIRECTORY */
#include <mpi.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || chdir(argv[1]) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    static char block[4096];
    memset(block, 'h', sizeof block);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, "sized.h5", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    MPI_File_write_at(file, (MPI_Offset)rank * 4096, block, 4096, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_preallocate(file, 1 << 16);
    MPI_File_set_size(file, (MPI_Offset)size * 4096 - 1000);
    MPI_File_close(&file);
    MPI_Finalize();
    return 0;
}

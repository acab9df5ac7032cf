/* More MPI-IO per rank on one shared file: a non-blocking write (iwrite_at + Wait) of 4 KiB,
 * a shared-pointer write of 100 B, an ordered write of 200 B, a split collective write of
 * 1 KiB (begin/end), seek, get_size, preallocate, set_size; then rank 0 deletes the file. */
#include <mpi.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    static char data[4096];
    memset(data, 'm', sizeof data);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, "more.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    MPI_Request request;
    MPI_File_iwrite_at(file, (MPI_Offset)rank * 4096, data, 4096, MPI_CHAR, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_File_write_shared(file, data, 100, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_write_ordered(file, data, 200, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_write_at_all_begin(file, (MPI_Offset)(size + rank) * 4096, data, 1024, MPI_CHAR);
    MPI_File_write_at_all_end(file, data, MPI_STATUS_IGNORE);
    MPI_File_seek(file, 0, MPI_SEEK_SET);
    MPI_Offset bytes;
    MPI_File_get_size(file, &bytes);
    MPI_File_preallocate(file, 1 << 16);
    MPI_File_set_size(file, 1 << 16);
    MPI_File_close(&file);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_File_delete("more.dat", MPI_INFO_NULL);
    MPI_Finalize();
    return 0;
}

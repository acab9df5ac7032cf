/* A ring of Isend/Irecv/Waitall in nested loops (3 rounds of 5 steps of one int, each round
 * ending with an Allreduce of 4 doubles), a barrier,
 * and MPI-IO on one shared file: each rank writes its own 64 KiB block with one
 * MPI_File_write_at_all, then 4 blocks of 1 KiB with MPI_File_write_at, and reads its block
 * back with MPI_File_read_at_all. */
#include <mpi.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double local[4] = {1, 2, 3, 4}, total[4];
    for (int round = 0; round < 3; round++) {
        for (int step = 0; step < 5; step++) {
            int out = rank * 100 + step, in = -1;
            MPI_Request requests[2];
            MPI_Irecv(&in, 1, MPI_INT, left, step, MPI_COMM_WORLD, &requests[0]);
            MPI_Isend(&out, 1, MPI_INT, right, step, MPI_COMM_WORLD, &requests[1]);
            MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        }
        MPI_Allreduce(local, total, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    static char block[65536], small[1024];
    memset(block, 'a' + rank, sizeof block);
    memset(small, 'A' + rank, sizeof small);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    MPI_Offset base = (MPI_Offset)rank * (sizeof block + 4 * sizeof small);
    MPI_File_write_at_all(file, base, block, sizeof block, MPI_CHAR, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        MPI_File_write_at(file, base + sizeof block + i * sizeof small, small, sizeof small, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_read_at_all(file, base, block, sizeof block, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
    MPI_Finalize();
    return 0;
}

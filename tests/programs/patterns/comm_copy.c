/* What IOR does around its I/O (learned from hpc/ior's MPIIO and POSIX backends): the
 * benchmark runs on its own copy of the world (MPI_Comm_create with the world's group, as
 * IOR's testComm), rank 0 alone prints a header and opens the file over MPI_COMM_SELF to
 * create it before everyone opens it together over the copy; between phases, barriers,
 * reductions and broadcasts on the copy.
 *
 *   comm_copy DIR BLOCKS   (each rank writes and reads back BLOCKS blocks of 64 KiB) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int blocks = argc > 2 ? atoi(argv[2]) : 4;
    char path[4096];
    snprintf(path, sizeof path, "%s/copy.dat", argc > 1 ? argv[1] : ".");
    MPI_Group world;
    MPI_Comm copy;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Comm_create(MPI_COMM_WORLD, world, &copy);
    MPI_Group_free(&world);
    if (rank == 0) {
        printf("comm_copy: %d ranks, %d blocks\n", size, blocks);
        fflush(stdout);
        MPI_File alone;
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &alone);
        MPI_File_close(&alone);
    }
    MPI_Barrier(copy);
    static char block[65536];
    memset(block, 'a' + rank, sizeof block);
    MPI_File file;
    MPI_File_open(copy, path, MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    for (int phase = 0; phase < 2; phase++) {
        double seconds = MPI_Wtime(), slowest;
        for (int i = 0; i < blocks; i++) {
            MPI_Offset at = ((MPI_Offset)i * size + rank) * sizeof block;
            if (phase == 0)
                MPI_File_write_at(file, at, block, sizeof block, MPI_BYTE, MPI_STATUS_IGNORE);
            else
                MPI_File_read_at(file, at, block, sizeof block, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        seconds = MPI_Wtime() - seconds;
        MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, copy);
        MPI_Bcast(&slowest, 1, MPI_DOUBLE, 0, copy);
        MPI_Barrier(copy);
    }
    MPI_File_close(&file);
    MPI_Comm_free(&copy);
    MPI_Finalize();
    return 0;
}

/* A 1-D domain decomposition, as slab-decomposed solvers do it, with IOR's file-per-process
 * naming (`-F`: `testFile.00000003` for rank 3): every step each rank swaps a halo with its
 * left and right neighbour (none past the ends: rank 0 has no left, the last rank no
 * right), then joins an MPI_Allreduce of the residual; every `steps / 2` steps rank 0
 * appends a line to a log; at the end each rank writes its slab to its own file (4 ×
 * 16 KiB with pwrite) and to one shared file at rank × 64 KiB (MPI_File_write_at_all).
 *
 *   slabs DIR STEPS */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { HALO = 512, SLAB = 16384 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    int steps = atoi(argv[2]);
    static double left_out[HALO], right_out[HALO], left_in[HALO], right_in[HALO];
    double residual = 1.0, total;
    FILE *log = rank == 0 ? fopen("solver.log", "w") : NULL;
    for (int step = 0; step < steps; step++) {
        MPI_Request requests[4];
        int n = 0;
        if (rank > 0) {
            MPI_Irecv(left_in, HALO, MPI_DOUBLE, rank - 1, 1, MPI_COMM_WORLD, &requests[n++]);
            MPI_Isend(left_out, HALO, MPI_DOUBLE, rank - 1, 2, MPI_COMM_WORLD, &requests[n++]);
        }
        if (rank < size - 1) {
            MPI_Irecv(right_in, HALO, MPI_DOUBLE, rank + 1, 2, MPI_COMM_WORLD, &requests[n++]);
            MPI_Isend(right_out, HALO, MPI_DOUBLE, rank + 1, 1, MPI_COMM_WORLD, &requests[n++]);
        }
        MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
        MPI_Allreduce(&residual, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        residual *= 0.5;
        if (log && (step + 1) % (steps / 2 > 0 ? steps / 2 : 1) == 0) {
            fprintf(log, "step %d\n", step);
            fflush(log);
        }
    }
    if (log) fclose(log);

    static char slab[4 * SLAB];
    memset(slab, 'a' + rank % 26, sizeof slab);
    char name[64];
    snprintf(name, sizeof name, "testFile.%08d", rank);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 4; i++) pwrite(fd, slab + i * SLAB, SLAB, (off_t)i * SLAB);
    close(fd);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
    MPI_File_write_at_all(file, (MPI_Offset)rank * sizeof slab, slab, sizeof slab, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
    MPI_Finalize();
    return 0;
}

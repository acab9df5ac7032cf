/* A 2-D halo exchange on a process grid, as conjugate-gradient and multigrid solvers do
 * it (HPCG, miniGhost, the NAS MG/CG kernels): ranks form a px × py grid (MPI_Dims_create),
 * non-periodic, so corner, edge and interior ranks have 2, 3 or 4 neighbours; each step
 * posts an MPI_Irecv from every neighbour (west, east, south, north) and an MPI_Isend to
 * each, waits for all, and takes an MPI_Allreduce of the residual. Every tenth step rank 0
 * appends a line to a log.
 *
 *   halo2d DIR STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { HALO = 1024 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long steps = atol(argv[2]);
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    int x = rank % dims[0], y = rank / dims[0];
    int neighbours[4] = {
        x > 0 ? rank - 1 : -1,
        x < dims[0] - 1 ? rank + 1 : -1,
        y > 0 ? rank - dims[0] : -1,
        y < dims[1] - 1 ? rank + dims[0] : -1,
    };
    static double out[4][HALO], in[4][HALO];
    FILE *log = rank == 0 ? fopen("halo.log", "w") : NULL;
    for (long step = 0; step < steps; step++) {
        MPI_Request requests[8];
        int n = 0;
        for (int d = 0; d < 4; d++)
            if (neighbours[d] >= 0)
                MPI_Irecv(in[d], HALO, MPI_DOUBLE, neighbours[d], d ^ 1, MPI_COMM_WORLD, &requests[n++]);
        for (int d = 0; d < 4; d++)
            if (neighbours[d] >= 0)
                MPI_Isend(out[d], HALO, MPI_DOUBLE, neighbours[d], d, MPI_COMM_WORLD, &requests[n++]);
        MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
        double local = 1.0, global;
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (log && step % 10 == 9) fprintf(log, "step %ld residual %g\n", step + 1, global);
    }
    if (log) fclose(log);
    MPI_Finalize();
    return 0;
}

/* A 3-D 7-point stencil on a process grid, as structured-grid codes (miniGhost, the NAS MG
 * kernel, HPCG's 27-point variant) exchange faces: ranks form a px × py × pz grid
 * (MPI_Dims_create), non-periodic, so ranks on faces, edges and corners have 5, 4 or 3
 * neighbours and interior ones 6; each step posts an MPI_Irecv from every neighbour and an
 * MPI_Isend to each (tag = direction), waits for all, and takes an MPI_Allreduce.
 *
 *   stencil3d DIR STEPS */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

enum { FACE = 512 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long steps = atol(argv[2]);
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(size, 3, dims);
    int x = rank % dims[0], y = rank / dims[0] % dims[1], z = rank / (dims[0] * dims[1]);
    int plane = dims[0] * dims[1];
    int neighbours[6] = {
        x > 0 ? rank - 1 : -1,       x < dims[0] - 1 ? rank + 1 : -1,
        y > 0 ? rank - dims[0] : -1, y < dims[1] - 1 ? rank + dims[0] : -1,
        z > 0 ? rank - plane : -1,   z < dims[2] - 1 ? rank + plane : -1,
    };
    static double out[6][FACE], in[6][FACE];
    for (long step = 0; step < steps; step++) {
        MPI_Request requests[12];
        int n = 0;
        for (int d = 0; d < 6; d++)
            if (neighbours[d] >= 0)
                MPI_Irecv(in[d], FACE, MPI_DOUBLE, neighbours[d], d ^ 1, MPI_COMM_WORLD, &requests[n++]);
        for (int d = 0; d < 6; d++)
            if (neighbours[d] >= 0)
                MPI_Isend(out[d], FACE, MPI_DOUBLE, neighbours[d], d, MPI_COMM_WORLD, &requests[n++]);
        MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
        double local = 1.0, global;
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}

/* A molecular-dynamics time step's communication, as LAMMPS's CommBrick does it (its
 * Lennard-Jones benchmark, `in.lj`): ranks on a periodic 2-D grid; each step a forward
 * and a reverse exchange of ghost atoms with the four neighbours — per swap MPI_Irecv
 * posted for exactly the count the neighbour will send, MPI_Send, MPI_Wait — and every
 * REBUILD steps the neighbour lists are rebuilt: atoms that left migrate (MPI_Sendrecv of
 * their count, then the atoms; often none), the ghosts are re-sent (MPI_Sendrecv of the
 * count, then the coordinates), and from then on every swap's count is a new one, a few
 * percent from the last. Thermodynamic output (five MPI_Allreduce) every THERMO steps.
 * Nothing repeats exactly for more than REBUILD steps: the messages' sizes jitter.
 *
 *   md_ghosts STEPS */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

enum { REBUILD = 20, THERMO = 50, GHOSTS = 2000, MIGRANTS = 40 };

/* The count `from` sends `to` on swap `swap` after rebuild `rebuild`: both sides compute
 * it, so each receive is posted for exactly what arrives. */
static int count(int from, int to, int swap, int rebuild, int base, int spread) {
    uint64_t x = (uint64_t)from * 0x9E3779B97F4A7C15ull ^ (uint64_t)to * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)swap * 0x165667B19E3779F9ull ^ (uint64_t)rebuild * 0x27D4EB2F165667C5ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return base + (int)(x % (uint64_t)spread);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long steps = argc > 1 ? atol(argv[1]) : 100;
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    int down[2], up[2];
    for (int dim = 0; dim < 2; dim++) MPI_Cart_shift(grid, dim, 1, &down[dim], &up[dim]);
    /* Swap s sends to sendproc[s] and receives from recvproc[s] (world ranks: the grid
     * keeps the world's order). */
    int sendproc[4] = {down[0], up[0], down[1], up[1]};
    int recvproc[4] = {up[0], down[0], up[1], down[1]};
    double *out = malloc(sizeof(double) * 3 * (GHOSTS + GHOSTS / 8));
    double *in = malloc(sizeof(double) * 3 * (GHOSTS + GHOSTS / 8));
    int sendcount[4], recvcount[4];
    double energy[3] = {0}, sums[3];
    for (long step = 0; step < steps; step++) {
        if (step % REBUILD == 0) {
            int rebuild = (int)(step / REBUILD);
            /* exchange(): atoms that left, along each dimension. */
            for (int dim = 0; dim < 2; dim++) {
                int leaving = count(rank, down[dim], dim, rebuild, 0, MIGRANTS) * (rebuild % 3 != 2);
                int arriving;
                MPI_Sendrecv(&leaving, 1, MPI_INT, down[dim], 0, &arriving, 1, MPI_INT, up[dim], 0,
                             grid, MPI_STATUS_IGNORE);
                MPI_Request request;
                MPI_Irecv(in, 11 * arriving, MPI_DOUBLE, up[dim], 0, grid, &request);
                MPI_Send(out, 11 * leaving, MPI_DOUBLE, down[dim], 0, grid);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
            }
            /* borders(): the new ghosts' counts and coordinates, swap by swap. */
            for (int s = 0; s < 4; s++) {
                sendcount[s] = count(rank, sendproc[s], s, rebuild, GHOSTS - GHOSTS / 16, GHOSTS / 8);
                MPI_Sendrecv(&sendcount[s], 1, MPI_INT, sendproc[s], 0, &recvcount[s], 1, MPI_INT,
                             recvproc[s], 0, grid, MPI_STATUS_IGNORE);
                MPI_Request request;
                MPI_Irecv(in, 3 * recvcount[s], MPI_DOUBLE, recvproc[s], 0, grid, &request);
                MPI_Send(out, 3 * sendcount[s], MPI_DOUBLE, sendproc[s], 0, grid);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
            }
        } else {
            /* forward_comm(): the ghosts' new positions. */
            for (int s = 0; s < 4; s++) {
                MPI_Request request;
                MPI_Irecv(in, 3 * recvcount[s], MPI_DOUBLE, recvproc[s], 0, grid, &request);
                MPI_Send(out, 3 * sendcount[s], MPI_DOUBLE, sendproc[s], 0, grid);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
            }
        }
        /* reverse_comm(): the forces on ghosts, back to their owners. */
        for (int s = 3; s >= 0; s--) {
            MPI_Request request;
            MPI_Irecv(in, 3 * sendcount[s], MPI_DOUBLE, sendproc[s], 0, grid, &request);
            MPI_Send(out, 3 * recvcount[s], MPI_DOUBLE, recvproc[s], 0, grid);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        }
        if (step % THERMO == 0) {
            for (int i = 0; i < 5; i++)
                MPI_Allreduce(energy, sums, 1 + i % 3, MPI_DOUBLE, MPI_SUM, grid);
        }
    }
    MPI_Comm_free(&grid);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}

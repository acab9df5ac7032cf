/* A conjugate-gradient solver preconditioned by a multigrid V-cycle on a 3-D process grid,
 * as HPCG does it (hpcg-benchmark/hpcg: ExchangeHalo, ComputeMG_ref, CG_ref): ranks form a
 * px × py × pz grid (MPI_Dims_create), non-periodic; a 27-point stencil makes every rank
 * one step away in any direction a neighbour (up to 26: 7 for a corner of a 2 × 2 × 2
 * grid), kept in rank order (HPCG's std::map), so the order of faces, edges and corners
 * differs from rank to rank. A halo exchange posts an MPI_Irecv from each neighbour, sends
 * to each with MPI_Send, then waits for each receive in turn; a face carries n² doubles,
 * an edge n, a corner 1, n halving on each of the four grid levels (16, 8, 4, 2). Each
 * CG iteration applies the V-cycle (pre-smoothing and a residual on each level but the
 * coarsest, which smooths once, then post-smoothing on the way up: 10 exchanges), one more
 * exchange for its matrix-vector product, and three dot products (MPI_Allreduce).
 *
 * The tracer folds a rank's exchange (Irecv, Send, Wait a neighbour at a time) as short
 * blocks that break at the next call, then the whole iteration as one long block: the
 * trace builder read that long block back only if the short ones that never completed a
 * repetition had not made it forget the events before them (real HPCG on 16 ranks lost
 * 9 of every 10 calls of two ranks that way).
 *
 *   multigrid DIR ITERATIONS */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

enum { LEVELS = 4, FINEST = 16 };

static int neighbours[26], lengths[LEVELS][26], count;
static double buffers[2][26][FINEST * FINEST];

static void exchange(int level) {
    MPI_Request requests[26];
    for (int i = 0; i < count; i++)
        MPI_Irecv(buffers[0][i], lengths[level][i], MPI_DOUBLE, neighbours[i], 99,
                  MPI_COMM_WORLD, &requests[i]);
    for (int i = 0; i < count; i++)
        MPI_Send(buffers[1][i], lengths[level][i], MPI_DOUBLE, neighbours[i], 99, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++) MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
}

static void v_cycle(int level) {
    if (level == LEVELS - 1) {
        exchange(level); /* the coarsest level: one smoothing */
        return;
    }
    exchange(level); /* pre-smoothing */
    exchange(level); /* residual */
    v_cycle(level + 1);
    exchange(level); /* post-smoothing */
}

static double dot(void) {
    double local = 1.0, global;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long iterations = atol(argv[2]);
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(size, 3, dims);
    int x = rank % dims[0], y = rank / dims[0] % dims[1], z = rank / (dims[0] * dims[1]);
    /* In rank order: z, then y, then x from -1 to 1 (rank = x + px (y + py z)). */
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int nx = x + dx, ny = y + dy, nz = z + dz;
                if ((dx | dy | dz) == 0 || nx < 0 || ny < 0 || nz < 0 || nx >= dims[0] ||
                    ny >= dims[1] || nz >= dims[2])
                    continue;
                neighbours[count] = nx + dims[0] * (ny + dims[1] * nz);
                for (int level = 0, n = FINEST; level < LEVELS; level++, n /= 2)
                    lengths[level][count] = (dx ? 1 : n) * (dy ? 1 : n) * (dz ? 1 : n);
                count++;
            }
    for (long k = 0; k < iterations; k++) {
        v_cycle(0);
        dot();      /* r'z */
        exchange(0); /* A p */
        dot();      /* p'Ap */
        dot();      /* r'r */
    }
    MPI_Finalize();
    return 0;
}

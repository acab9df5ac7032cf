/* A conjugate-gradient iteration's halo exchanges as real HPCG does them on a 2 × 2 × 2
 * process grid (hpcg-benchmark/hpcg: ExchangeHalo, ComputeMG_ref, CG_ref), in one process
 * with file calls standing in for messages: each exchange sends to and then waits for its
 * seven neighbours in rank order, and for rank 1 of HPCG's grid those are a face, an edge,
 * a face, an edge, a face, a corner and an edge (2048, 128, 2048, 128, 2048, 8 and 128
 * bytes on the finest level, each halving its side on the next). Each iteration is a
 * V-cycle over four levels (10 exchanges), a dot product, one more exchange and two more
 * dot products: 234 calls, 157 of them reading.
 *
 * The neighbours' files are empty at first: the first exchange receives nothing, as
 * HPCG's first iteration differs from the others.
 *
 * The sizes inside one exchange repeat two by two (face, edge, face, edge) before the
 * corner breaks them, so the tracer starts a block of two there that never completes a
 * repetition — at every exchange. Such a block, recurring a whole number of its periods
 * later, made the tracer follow that distance instead of the 234 it was following, and
 * the iteration's block never started: corners 1 and 4 were staged call by call (real
 * HPCG's ranks 1, 4 and 6 of 8: 4 MB of staging each instead of 1.4 MB).
 *
 *   halo_waits DIR ITERATIONS [RANK [PX PY PZ]]   (rank 1 of 2 x 2 x 2 by default) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { LEVELS = 4, FINEST = 16, MOST = 26 };

/* Per neighbour in rank order: face 2, edge 1, corner 0 (rank 1's of 2 x 2 x 2: 2 1 2 1 2
 * 0 1), and how many. */
static int kinds[MOST], count;
static char buffer[FINEST * FINEST * 8];
static int neighbours[MOST], arrived, reductions;

static size_t length(int level, int neighbour) {
    size_t n = FINEST >> level, kind = kinds[neighbour];
    return (kind == 2 ? n * n : kind == 1 ? n : 1) * 8;
}

/* MPI_Irecv from each neighbour (a descriptor each), MPI_Send to each, then MPI_Wait for
 * each receive in turn: only the waits' sizes tell them apart. */
static void exchange(int level) {
    for (int i = 0; i < count; i++)
        if (pread(neighbours[i], buffer, length(level, i), 0) < 0) exit(3);
    for (int i = 0; i < count; i++)
        if (pwrite(neighbours[i], buffer, length(level, i), 0) < 0) exit(3);
    for (int i = 0; i < count; i++)
        if (pread(arrived, buffer, length(level, i), 0) < 0) exit(3);
}

static void v_cycle(int level) {
    if (level == LEVELS - 1) {
        exchange(level);
        return;
    }
    exchange(level);
    exchange(level);
    v_cycle(level + 1);
    exchange(level);
}

static void dot(void) {
    if (pwrite(reductions, buffer, 8, 0) != 8) exit(4);
}

static void setup_dot(void) {
    if (pwrite(reductions, buffer, 8, 8) != 8) exit(4);
}

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long iterations = atol(argv[2]);
    /* The rank this process plays on a px x py x pz grid (HPCG's rank = x + px (y + py z)),
     * its neighbours in rank order. */
    int rank = argc > 3 ? atoi(argv[3]) : 1;
    int px = argc > 6 ? atoi(argv[4]) : 2, py = argc > 6 ? atoi(argv[5]) : 2,
        pz = argc > 6 ? atoi(argv[6]) : 2;
    int x = rank % px, y = rank / px % py, z = rank / (px * py);
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                if ((dx | dy | dz) != 0 && x + dx >= 0 && x + dx < px && y + dy >= 0 &&
                    y + dy < py && z + dz >= 0 && z + dz < pz)
                    kinds[count++] = 3 - (dx != 0) - (dy != 0) - (dz != 0);
    char name[32];
    for (int i = 0; i < count; i++) {
        snprintf(name, sizeof name, "neighbour.%d", i);
        if ((neighbours[i] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0) return 2;
    }
    arrived = open("arrived", O_RDWR | O_CREAT | O_TRUNC, 0644);
    reductions = open("reductions", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (arrived < 0 || reductions < 0 || ftruncate(arrived, sizeof buffer) != 0) return 2;
    /* The set-up: two sites reducing four times each, and the first matrix-vector
     * product's exchange before the first V-cycle. */
    for (int i = 0; i < 4; i++) dot();
    for (int i = 0; i < 4; i++) setup_dot();
    exchange(0);
    for (long k = 0; k < iterations; k++) {
        v_cycle(0);
        dot();
        exchange(0);
        dot();
        dot();
    }
    for (int i = 0; i < count; i++) close(neighbours[i]);
    close(arrived);
    close(reductions);
    return 0;
}

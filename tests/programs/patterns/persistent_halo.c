/* A halo exchange on persistent requests, as PETSc's vector scatters (VecScatter's
 * MPI_Send_init / MPI_Recv_init, then MPI_Startall and MPI_Waitall every time the ghost
 * values are updated) and stencil codes that set their exchange up once do it: on a ring
 * (not periodic: the end ranks have one neighbour) each rank sets up a send of 512 doubles
 * to each neighbour and a receive of as many from each, then every step starts
 * them all, waits for them all (the statuses ignored) and agrees on a residual
 * (MPI_Allreduce). Every fifth step it also checks in with its right neighbour through a
 * persistent MPI_Ssend_init / MPI_Recv_init pair started one at a time (MPI_Start,
 * MPI_Wait). The requests are freed at the end.
 *
 *   persistent_halo DIR STEPS */
#include <mpi.h>
#include <stdlib.h>

#define HALO 512

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    static double out[2][HALO], in[2][HALO];
    MPI_Request halo[4];
    int requests = 0;
    int neighbours[2] = {rank - 1, rank + 1};
    for (int side = 0; side < 2; side++) {
        int neighbour = neighbours[side];
        if (neighbour < 0 || neighbour >= size) continue;
        MPI_Recv_init(in[side], HALO, MPI_DOUBLE, neighbour, 1 - side, MPI_COMM_WORLD,
                      &halo[requests++]);
        MPI_Send_init(out[side], HALO, MPI_DOUBLE, neighbour, side, MPI_COMM_WORLD,
                      &halo[requests++]);
    }
    int token = rank, got = 0;
    MPI_Request check[2];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Ssend_init(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &check[0]);
    MPI_Recv_init(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &check[1]);
    double residual = 1.0, total = 0.0;
    for (int step = 0; step < steps; step++) {
        MPI_Startall(requests, halo);
        MPI_Waitall(requests, halo, MPI_STATUSES_IGNORE);
        MPI_Allreduce(&residual, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (step % 5 == 4 && size > 1) {
            MPI_Start(&check[1]);
            MPI_Start(&check[0]);
            MPI_Wait(&check[0], MPI_STATUS_IGNORE);
            MPI_Wait(&check[1], MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; i < requests; i++) MPI_Request_free(&halo[i]);
    MPI_Request_free(&check[0]);
    MPI_Request_free(&check[1]);
    MPI_Finalize();
    return 0;
}

/* Two halves of a job with different roles that meet in collectives, as coupled models do
 * (a climate model's ocean and atmosphere components on disjoint ranks, CESM- or
 * OASIS-style, each exchanging its own halo, the two trading boundary fields, and all of
 * them agreeing on the time step), and as the thesis' table 5.1 shows: every step the
 * first half exchanges a ring message within its half (512 B) and a field with its partner
 * in the second half (1 KiB); the second half only the field; then all ranks take an
 * MPI_Bcast of the next time step from rank 0.
 *
 * The halves' loops have hardly a leaf in common (other call sites, other peers), so they
 * would be two streams; the broadcast they all call makes them one, each half's own calls
 * in parts of its ranks (collectives merge even where the loops around them do not).
 *
 *   coupled_halves DIR STEPS   (an even number of ranks) */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || chdir(argv[1]) != 0 || size % 2 != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long steps = atol(argv[2]);
    int half = size / 2;
    static char ring_in[512], ring_out[512], field_in[1024], field_out[1024];
    double dt = 1.0;
    for (long step = 0; step < steps; step++) {
        MPI_Request request;
        if (rank < half) {
            MPI_Irecv(ring_in, sizeof ring_in, MPI_CHAR, (rank + 1) % half, 1, MPI_COMM_WORLD, &request);
            MPI_Send(ring_out, sizeof ring_out, MPI_CHAR, (rank + half - 1) % half, 1, MPI_COMM_WORLD);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            MPI_Irecv(field_in, sizeof field_in, MPI_CHAR, rank + half, 2, MPI_COMM_WORLD, &request);
            MPI_Send(field_out, sizeof field_out, MPI_CHAR, rank + half, 2, MPI_COMM_WORLD);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(field_in, sizeof field_in, MPI_CHAR, rank - half, 2, MPI_COMM_WORLD, &request);
            MPI_Send(field_out, sizeof field_out, MPI_CHAR, rank - half, 2, MPI_COMM_WORLD);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        }
        MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}

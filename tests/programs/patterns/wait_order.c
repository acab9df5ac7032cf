/* Requests completed in another order than they were posted, as codes that overlap
 * several exchanges do it: in each pair of ranks (2k, 2k+1) the even rank posts two
 * receives from its partner (tag 1, then tag 2), waits for the second one first, answers
 * it (tag 3), and only then waits for the first, which the partner sends after the answer.
 * A replay that waited for the oldest request first would deadlock; the trace keeps only
 * how many requests each MPI_Wait named, not which.
 *
 *   wait_order DIR ROUNDS   (an even number of ranks) */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 2 ? atoi(argv[2]) : 10;
    int partner = rank ^ 1, first = 0, second = 0, answer = rank;
    for (int round = 0; round < rounds; round++) {
        if (rank % 2 == 0) {
            MPI_Request early, late;
            MPI_Irecv(&first, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, &early);
            MPI_Irecv(&second, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &late);
            MPI_Wait(&late, MPI_STATUS_IGNORE);
            MPI_Send(&answer, 1, MPI_INT, partner, 3, MPI_COMM_WORLD);
            MPI_Wait(&early, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(&answer, 1, MPI_INT, partner, 2, MPI_COMM_WORLD);
            MPI_Recv(&first, 1, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&answer, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

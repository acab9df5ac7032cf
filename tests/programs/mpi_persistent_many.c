/* More persistent requests than the tracer's table holds (4,096 a process): every rank
 * sets up 2,100 receive/send pairs of one int with itself (4,200 requests, receive then
 * send), starts them all at once, waits for them all, and frees them. The first 2,048
 * pairs' messages are traced; the starts of the other 104 requests are counted as calls let
 * through untraced. */
#include <mpi.h>
#include <stdlib.h>

#define PAIRS 2100

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static int out[PAIRS], in[PAIRS];
    static MPI_Request requests[2 * PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        out[i] = i;
        MPI_Recv_init(&in[i], 1, MPI_INT, rank, i, MPI_COMM_WORLD, &requests[2 * i]);
        MPI_Send_init(&out[i], 1, MPI_INT, rank, i, MPI_COMM_WORLD, &requests[2 * i + 1]);
    }
    MPI_Startall(2 * PAIRS, requests);
    MPI_Waitall(2 * PAIRS, requests, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 2 * PAIRS; i++) MPI_Request_free(&requests[i]);
    for (int i = 0; i < PAIRS; i++)
        if (in[i] != i) return 3;
    MPI_Finalize();
    return 0;
}

/* A receive request freed once its message has arrived, then a send whose request the MPI
 * library may hand out again at the same address (Open MPI keeps requests on a free list):
 * each rank posts MPI_Irecv of 64 bytes from its left neighbour, sends 64 bytes to its
 * right one, waits for the message to arrive (MPI_Test on the receive would complete it;
 * MPI_Barrier after the sends makes it likely, MPI_Request_free is allowed either way),
 * frees the receive request, then MPI_Isend of 100 bytes + MPI_Recv of 100 + MPI_Wait.
 * Per rank 164 bytes sent and 164 received. */
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char in[128], out[128] = {0};
    MPI_Request receive, send;
    MPI_Irecv(in, 64, MPI_BYTE, left, 1, MPI_COMM_WORLD, &receive);
    MPI_Send(out, 64, MPI_BYTE, right, 1, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request_free(&receive);
    MPI_Isend(out, 100, MPI_BYTE, right, 2, MPI_COMM_WORLD, &send);
    MPI_Recv(in, 100, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

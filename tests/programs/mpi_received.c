/* Receives posted larger than the messages that arrive, the way solvers post them: round a
 * ring, each rank posts MPI_Irecv with room for 64 KiB and gets 800 bytes (10 steps,
 * MPI_Waitall with MPI_STATUSES_IGNORE); then one MPI_Recv with room for 4096 bytes gets
 * 100 (MPI_STATUS_IGNORE); one MPI_Sendrecv with room for 250 ints gets 10; one MPI_Irecv
 * finished by an MPI_Test loop, one by MPI_Waitany and one by MPI_Waitsome (each 1 KiB of
 * room, 24 bytes arriving). Per rank: 8000 + 100 + 40 + 3 × 24 bytes sent and received,
 * 10 × 65536 + 4096 + 1000 + 3 × 1024 bytes of receives posted. */
#include <mpi.h>
#include <string.h>

static char in[65536], out[65536];

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    memset(out, rank, sizeof out);
    for (int step = 0; step < 10; step++) {
        MPI_Request requests[2];
        MPI_Irecv(in, 65536, MPI_BYTE, left, step, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(out, 800, MPI_BYTE, right, step, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    }
    MPI_Request send;
    MPI_Isend(out, 100, MPI_BYTE, right, 20, MPI_COMM_WORLD, &send);
    MPI_Recv(in, 4096, MPI_BYTE, left, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    int ints_out[10] = {0}, ints_in[250];
    MPI_Sendrecv(ints_out, 10, MPI_INT, right, 21, ints_in, 250, MPI_INT, left, 21,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request receive;
    int flag = 0, index, count, indices[1];
    MPI_Irecv(in, 1024, MPI_BYTE, left, 22, MPI_COMM_WORLD, &receive);
    MPI_Send(out, 24, MPI_BYTE, right, 22, MPI_COMM_WORLD);
    while (!flag) MPI_Test(&receive, &flag, MPI_STATUS_IGNORE);
    MPI_Irecv(in, 1024, MPI_BYTE, left, 23, MPI_COMM_WORLD, &receive);
    MPI_Send(out, 24, MPI_BYTE, right, 23, MPI_COMM_WORLD);
    MPI_Waitany(1, &receive, &index, MPI_STATUS_IGNORE);
    MPI_Irecv(in, 1024, MPI_BYTE, left, 24, MPI_COMM_WORLD, &receive);
    MPI_Send(out, 24, MPI_BYTE, right, 24, MPI_COMM_WORLD);
    MPI_Waitsome(1, &receive, &count, indices, MPI_STATUSES_IGNORE);
    MPI_Finalize();
    return 0;
}

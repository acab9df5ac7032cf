/* One call of each of several more MPI operations per rank (even number of ranks):
 * Sendrecv twice round a ring; even ranks Ssend one int to the next odd rank, which Probes
 * then Recvs it; everyone Iprobes once and Tests a null request once; Gather, Scatter,
 * Allgather, Alltoall, Scan, Exscan, Reduce_scatter_block of one int; Ibarrier + Wait,
 * Ibcast + Waitany, Iallreduce + Waitsome. */
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = rank, in = -1;
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(&out, 1, MPI_INT, right, 7, &in, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank % 2 == 0) {
        MPI_Ssend(&out, 1, MPI_INT, rank + 1, 8, MPI_COMM_WORLD);
    } else {
        MPI_Status status;
        MPI_Probe(rank - 1, 8, MPI_COMM_WORLD, &status);
        MPI_Recv(&in, 1, MPI_INT, rank - 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Request null_request = MPI_REQUEST_NULL;
    MPI_Test(&null_request, &flag, MPI_STATUS_IGNORE);
    int one = rank + 1, many[64], result;
    MPI_Gather(&one, 1, MPI_INT, many, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(many, 1, MPI_INT, &result, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(&one, 1, MPI_INT, many, 1, MPI_INT, MPI_COMM_WORLD);
    int outs[64];
    for (int i = 0; i < size; i++) outs[i] = rank;
    MPI_Alltoall(outs, 1, MPI_INT, many, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Scan(&one, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(&one, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(outs, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Request request;
    int index, count, indices[1];
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Ibcast(&one, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
    MPI_Waitany(1, &request, &index, MPI_STATUS_IGNORE);
    MPI_Iallreduce(&one, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Waitsome(1, &request, &count, indices, MPI_STATUSES_IGNORE);
    MPI_Finalize();
    return 0;
}

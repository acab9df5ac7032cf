/* More non-blocking receives pending at once than the tracer keeps (65,536 a process), as
 * a root that posts a receive from every rank of a very large job does: every rank posts
 * 70,000 receives of one int from itself, sends the 70,000 ints, waits for all of them in
 * one MPI_Waitall and checks what arrived. The first 65,536 receives' bytes are counted at
 * the wait; the 4,464 postings beyond are counted as calls let through untraced (what they
 * received is not in the trace), which the summary says. */
#include <mpi.h>

#define RECEIVES 70000

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static int out[RECEIVES], in[RECEIVES];
    static MPI_Request requests[RECEIVES];
    for (int i = 0; i < RECEIVES; i++)
        MPI_Irecv(&in[i], 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &requests[i]);
    for (int i = 0; i < RECEIVES; i++) {
        out[i] = i;
        MPI_Send(&out[i], 1, MPI_INT, rank, 0, MPI_COMM_WORLD);
    }
    MPI_Waitall(RECEIVES, requests, MPI_STATUSES_IGNORE);
    /* Receives from one source with one tag match in the order they were posted. */
    for (int i = 0; i < RECEIVES; i++)
        if (in[i] != i) return 3;
    MPI_Finalize();
    return 0;
}

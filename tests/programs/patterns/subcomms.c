/* Sub-communicators, as solvers on a process grid use them (row and column communicators
 * of a 2-D decomposition: ScaLAPACK/HPL's row and column broadcasts, the transposes of
 * FFT codes), a copy for a library (MPI_Comm_dup), a communicator of some ranks
 * (MPI_Comm_create over a group of the even ranks: the odd ones get MPI_COMM_NULL) and a
 * periodic ring (MPI_Cart_create). On 4 ranks (2 × 2):
 *   rows: split(color = rank / 2, key = rank % 2); an Allreduce of 8 bytes on each;
 *   columns: split(color = rank % 2, key = -rank), so rank order is reversed; a Bcast of
 *     64 bytes from column rank 0 and a Sendrecv of 16 bytes with the other rank;
 *   the row copy: a Barrier;
 *   the even ranks: an Allreduce of 4 bytes;
 *   the ring: a Sendrecv of 32 bytes to the next rank, from the previous;
 *   the node (MPI_Comm_split_type, shared memory: every rank here, as IOR counts nodes):
 *     an Allreduce of 4 bytes.
 * Usage: subcomms DIRECTORY (unused) */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char out[64], in[64];
    memset(out, 's', sizeof out);
    MPI_Comm row, column, copy, evens, ring;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank % 2, &row);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &column);
    double mine = rank, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, row);
    MPI_Bcast(out, 64, MPI_CHAR, 0, column);
    int column_rank, column_size;
    MPI_Comm_rank(column, &column_rank);
    MPI_Comm_size(column, &column_size);
    int other = (column_rank + 1) % column_size;
    MPI_Sendrecv(out, 16, MPI_CHAR, other, 5, in, 16, MPI_CHAR, other, 5, column, MPI_STATUS_IGNORE);
    MPI_Comm_dup(row, &copy);
    MPI_Barrier(copy);
    MPI_Group world_group, even_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int evens_list[32], n = 0;
    for (int r = 0; r < size; r += 2)
        evens_list[n++] = r;
    MPI_Group_incl(world_group, n, evens_list, &even_group);
    MPI_Comm_create(MPI_COMM_WORLD, even_group, &evens);
    if (evens != MPI_COMM_NULL) {
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, evens);
        MPI_Comm_free(&evens);
    }
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    MPI_Sendrecv(out, 32, MPI_CHAR, next, 6, in, 32, MPI_CHAR, previous, 6, ring, MPI_STATUS_IGNORE);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int one = 1, on_node = 0;
    MPI_Allreduce(&one, &on_node, 1, MPI_INT, MPI_SUM, node);
    MPI_Comm_free(&node);
    MPI_Group_free(&even_group);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&column);
    MPI_Comm_free(&row);
    MPI_Finalize();
    return 0;
}

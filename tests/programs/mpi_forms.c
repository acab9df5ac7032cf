/* One call of each v-form, w-form and non-blocking collective, of the remaining
 * point-to-point forms, communicator and datatype calls, and MPI-IO split collectives and
 * non-blocking collective forms, per rank (even number of ranks), and receives from
 * MPI_ANY_SOURCE with MPI_ANY_TAG on rank 0, all with known sizes:
 * ints (4 bytes), one per rank in v-forms, blocks of 4 ints in MPI-IO. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int one = rank, in = -1, two[2] = {rank, rank}, got[2];
    MPI_Request requests[2];

    /* Irsend: the receive is posted before the barrier, the ready send after it. */
    MPI_Irecv(&in, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irsend(&one, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    /* Ibsend from an attached buffer. */
    int buffer_size = 1024 + MPI_BSEND_OVERHEAD;
    void *buffer = malloc(buffer_size);
    MPI_Buffer_attach(buffer, buffer_size);
    MPI_Ibsend(&one, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &requests[0]);
    MPI_Recv(&in, 1, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    MPI_Buffer_detach(&buffer, &buffer_size);
    free(buffer);
    /* Matched probes: even ranks send two ints twice to the next odd rank. */
    if (rank % 2 == 0) {
        MPI_Send(two, 2, MPI_INT, rank + 1, 3, MPI_COMM_WORLD);
        MPI_Send(two, 2, MPI_INT, rank + 1, 4, MPI_COMM_WORLD);
    } else {
        MPI_Message message;
        MPI_Mprobe(rank - 1, 3, MPI_COMM_WORLD, &message, MPI_STATUS_IGNORE);
        MPI_Mrecv(got, 2, MPI_INT, &message, MPI_STATUS_IGNORE);
        int flag = 0;
        while (!flag)
            MPI_Improbe(rank - 1, 4, MPI_COMM_WORLD, &flag, &message, MPI_STATUS_IGNORE);
        MPI_Imrecv(got, 2, MPI_INT, &message, &requests[0]);
        MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    }

    /* Wildcard receives: every other rank sends rank 0 one int, tagged 100 + its rank;
     * rank 0 receives them from MPI_ANY_SOURCE with MPI_ANY_TAG. */
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            MPI_Status status;
            MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        }
    } else {
        MPI_Send(&one, 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);
    }

    /* V- and W-forms: one int per rank. */
    int *ones = malloc(size * sizeof(int)), *offsets = malloc(size * sizeof(int));
    int *many = malloc(size * sizeof(int)), *outs = malloc(size * sizeof(int));
    int *byte_offsets = malloc(size * sizeof(int));
    MPI_Datatype *types = malloc(size * sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++) {
        ones[i] = 1;
        offsets[i] = i;
        byte_offsets[i] = i * (int)sizeof(int);
        outs[i] = rank;
        types[i] = MPI_INT;
    }
    int result;
    MPI_Gatherv(&one, 1, MPI_INT, many, ones, offsets, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(many, ones, offsets, MPI_INT, &result, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgatherv(&one, 1, MPI_INT, many, ones, offsets, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(outs, ones, offsets, MPI_INT, many, ones, offsets, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallw(outs, ones, byte_offsets, types, many, ones, byte_offsets, types, MPI_COMM_WORLD);
    MPI_Reduce_scatter(outs, &result, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    /* Non-blocking collectives, each waited for at once. */
    MPI_Request request;
#define NOW(call) do { call; MPI_Wait(&request, MPI_STATUS_IGNORE); } while (0)
    NOW(MPI_Ireduce(&one, &result, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &request));
    NOW(MPI_Igather(&one, 1, MPI_INT, many, 1, MPI_INT, 0, MPI_COMM_WORLD, &request));
    NOW(MPI_Igatherv(&one, 1, MPI_INT, many, ones, offsets, MPI_INT, 0, MPI_COMM_WORLD, &request));
    NOW(MPI_Iscatter(many, 1, MPI_INT, &result, 1, MPI_INT, 0, MPI_COMM_WORLD, &request));
    NOW(MPI_Iscatterv(many, ones, offsets, MPI_INT, &result, 1, MPI_INT, 0, MPI_COMM_WORLD, &request));
    NOW(MPI_Iallgather(&one, 1, MPI_INT, many, 1, MPI_INT, MPI_COMM_WORLD, &request));
    NOW(MPI_Iallgatherv(&one, 1, MPI_INT, many, ones, offsets, MPI_INT, MPI_COMM_WORLD, &request));
    NOW(MPI_Ialltoall(outs, 1, MPI_INT, many, 1, MPI_INT, MPI_COMM_WORLD, &request));
    NOW(MPI_Ialltoallv(outs, ones, offsets, MPI_INT, many, ones, offsets, MPI_INT, MPI_COMM_WORLD, &request));
    NOW(MPI_Ialltoallw(outs, ones, byte_offsets, types, many, ones, byte_offsets, types, MPI_COMM_WORLD, &request));
    NOW(MPI_Ireduce_scatter(outs, &result, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request));
    NOW(MPI_Ireduce_scatter_block(outs, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request));
    NOW(MPI_Iscan(&one, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request));
    NOW(MPI_Iexscan(&one, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request));

    /* Communicators. */
    MPI_Comm halves, copy, created, ring;
    MPI_Group world_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
    MPI_Comm_dup(MPI_COMM_WORLD, &copy);
    MPI_Comm_create(MPI_COMM_WORLD, world_group, &created);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&halves);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&created);
    MPI_Comm_free(&ring);

    /* Datatypes. */
    MPI_Datatype made[6];
    int lengths[2] = {1, 1}, displacements[2] = {0, 2};
    int sizes[1] = {4 * size}, subsizes[1] = {4}, starts[1] = {4 * rank};
    int distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {size};
    MPI_Aint struct_displacements[2] = {0, sizeof(int)};
    MPI_Datatype struct_types[2] = {MPI_INT, MPI_INT};
    MPI_Type_contiguous(4, MPI_INT, &made[0]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &made[1]);
    MPI_Type_indexed(2, lengths, displacements, MPI_INT, &made[2]);
    MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &made[3]);
    MPI_Type_create_darray(size, rank, 1, sizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &made[4]);
    MPI_Type_create_struct(2, lengths, struct_displacements, struct_types, &made[5]);
    for (int i = 0; i < 6; i++) MPI_Type_commit(&made[i]);
    for (int i = 0; i < 6; i++) MPI_Type_free(&made[i]);

    /* MPI-IO: each rank its own block of 4 ints, by split collectives and i-forms. */
    char path[4096];
    snprintf(path, sizeof path, "%s/forms.dat", argc > 1 ? argv[1] : ".");
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    int block[4] = {rank, rank, rank, rank}, back[4];
    MPI_Offset at = (MPI_Offset)rank * sizeof block;
    MPI_File_seek(file, at, MPI_SEEK_SET);
    MPI_File_write_all_begin(file, block, 4, MPI_INT);
    MPI_File_write_all_end(file, block, MPI_STATUS_IGNORE);
    MPI_File_read_at_all_begin(file, at, back, 4, MPI_INT);
    MPI_File_read_at_all_end(file, back, MPI_STATUS_IGNORE);
    MPI_File_seek(file, at, MPI_SEEK_SET);
    MPI_File_read_all_begin(file, back, 4, MPI_INT);
    MPI_File_read_all_end(file, back, MPI_STATUS_IGNORE);
    NOW(MPI_File_iwrite_at_all(file, at, block, 4, MPI_INT, &request));
    NOW(MPI_File_iread_at_all(file, at, back, 4, MPI_INT, &request));
    MPI_File_seek(file, at, MPI_SEEK_SET);
    NOW(MPI_File_iwrite_all(file, block, 4, MPI_INT, &request));
    MPI_File_seek(file, at, MPI_SEEK_SET);
    NOW(MPI_File_iread_all(file, back, 4, MPI_INT, &request));
    MPI_File_write_ordered_begin(file, block, 4, MPI_INT);
    MPI_File_write_ordered_end(file, block, MPI_STATUS_IGNORE);
    MPI_File_seek_shared(file, 0, MPI_SEEK_SET);
    MPI_File_read_ordered_begin(file, back, 4, MPI_INT);
    MPI_File_read_ordered_end(file, back, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    NOW(MPI_File_iwrite_shared(file, block, 4, MPI_INT, &request));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_seek_shared(file, 0, MPI_SEEK_SET);
    NOW(MPI_File_iread_shared(file, back, 4, MPI_INT, &request));
    MPI_File_close(&file);
    free(ones); free(offsets); free(many); free(outs); free(byte_offsets); free(types);
    MPI_Finalize();
    return 0;
}

/* A task farm whose messages carry the task's id as their MPI tag (a common idiom: the
 * worker answers with the tag it received, the master matches the answer to its task by
 * the tag): rank 0 takes tasks from a priority queue — ids in no order — and deals them
 * round robin to the workers; each worker receives with MPI_ANY_TAG and sends its result
 * back under the same tag; the master collects the results from MPI_ANY_SOURCE with
 * MPI_ANY_TAG. The tags never repeat and never count: a lossless trace keeps one per
 * message; below precision 100 they become a histogram.
 *
 * Usage: tagged_tasks TASKS
 */
#include <mpi.h>
#include <stdlib.h>

/* The queue's order: task ids 1000..1000+tasks-1 shuffled (Fisher-Yates with a fixed
 * linear congruential generator, the same on every run). */
static int *queue(int tasks) {
    int *ids = malloc(sizeof(int) * (size_t)(tasks > 0 ? tasks : 1));
    unsigned long long state = 12345;
    for (int index = 0; index < tasks; index++)
        ids[index] = 1000 + index;
    for (int index = tasks - 1; index > 0; index--) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        int other = (int)((state >> 33) % (unsigned long long)(index + 1));
        int kept = ids[index];
        ids[index] = ids[other];
        ids[other] = kept;
    }
    return ids;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int tasks = argc > 1 ? atoi(argv[1]) : 100;
    int workers = size - 1;
    double payload[64] = {0};
    if (workers < 1) {
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        int *ids = queue(tasks);
        for (int index = 0; index < tasks; index++)
            MPI_Send(payload, 64, MPI_DOUBLE, 1 + index % workers, ids[index], MPI_COMM_WORLD);
        free(ids);
        for (int index = 0; index < tasks; index++)
            MPI_Recv(payload, 8, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    } else {
        int mine = tasks / workers + (rank - 1 < tasks % workers);
        for (int done = 0; done < mine; done++) {
            MPI_Status status;
            MPI_Recv(payload, 64, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            MPI_Send(payload, 8, MPI_DOUBLE, 0, status.MPI_TAG, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}

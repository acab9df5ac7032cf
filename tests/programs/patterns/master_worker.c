/* Master-worker task farming (parameter sweeps, Monte Carlo drivers, Python's
 * mpi4py.futures): rank 0 hands out TASKS tasks and receives each result from whichever
 * worker finished first (MPI_ANY_SOURCE), answering that worker with the next task or a
 * stop; workers compute for a time that depends on the task and send results whose size
 * does too. The order in which workers answer changes from run to run, so the master's
 * peers never repeat in a pattern: a lossless trace keeps one event per message; a
 * precision level below 100 keeps the master's peers and the sizes in histograms.
 *
 * Usage: master_worker TASKS
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

enum { WORK = 1, STOP = 2, RESULT = 3 };

static void compute(int task) {
    volatile double x = 0;
    for (int i = 0; i < 2000 + (task * 7919) % 5000; i++)
        x += i * 0.5;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int tasks = argc > 1 ? atoi(argv[1]) : 100;
    char *buffer = calloc(8192, 1);
    if (rank == 0) {
        int next = 0, running = 0;
        for (int worker = 1; worker < size; worker++) {
            int tag = next < tasks ? WORK : STOP;
            MPI_Send(&next, 1, MPI_INT, worker, tag, MPI_COMM_WORLD);
            if (tag == WORK) {
                next++;
                running++;
            }
        }
        while (running > 0) {
            MPI_Status status;
            MPI_Recv(buffer, 8192, MPI_BYTE, MPI_ANY_SOURCE, RESULT, MPI_COMM_WORLD, &status);
            running--;
            int tag = next < tasks ? WORK : STOP;
            MPI_Send(&next, 1, MPI_INT, status.MPI_SOURCE, tag, MPI_COMM_WORLD);
            if (tag == WORK) {
                next++;
                running++;
            }
        }
    } else {
        for (;;) {
            int task;
            MPI_Status status;
            MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            if (status.MPI_TAG == STOP)
                break;
            compute(task);
            /* A result of 4,000 to 4,199 bytes. */
            MPI_Send(buffer, 4000 + (task * 31) % 200, MPI_BYTE, 0, RESULT, MPI_COMM_WORLD);
        }
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}

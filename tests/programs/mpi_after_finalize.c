/* Each rank writes part-<rank>.dat (open, write 100 B, close) before MPI_Finalize; after
 * it, rank 0 writes summary.txt (open, 3 writes of 10 B, close): 5 calls the merge at
 * MPI_Finalize cannot have. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096], buffer[100] = {0};
    snprintf(path, sizeof path, "%s/part-%d.dat", argc > 1 ? argv[1] : ".", rank);
    int part = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    write(part, buffer, sizeof buffer);
    close(part);
    MPI_Finalize();
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/summary.txt", argc > 1 ? argv[1] : ".");
        int summary = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int i = 0; i < 3; i++) write(summary, "0123456789", 10);
        close(summary);
    }
    return 0;
}

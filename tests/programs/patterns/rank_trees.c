/* Each rank's own tree of directories, its rank in every name, as mdtest (hpc/ior) makes
 * with -u (a directory per rank: mdtest_tree.<rank>.0/mdtest_tree.<rank>.1/…/
 * file.mdtest.<rank>.<item>): every rank creates a directory and three below it, creates,
 * writes, stats and removes ITEMS files in each, then removes its directories. The file
 * table lists every name (lossless), each rank's as the others' with its rank: it is one
 * block, whatever the ranks.
 *
 *   rank_trees DIR ITEMS */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || chdir(argv[1]) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    long items = atol(argv[2]);
    char top[64], directory[128], name[192];
    snprintf(top, sizeof top, "tree.%d.0", rank);
    if (mkdir(top, 0755) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int branch = 0; branch <= 3; branch++) {
        if (branch == 0)
            snprintf(directory, sizeof directory, "%s", top);
        else {
            snprintf(directory, sizeof directory, "%s/tree.%d.%d", top, rank, branch);
            if (mkdir(directory, 0755) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (long item = 0; item < items; item++) {
            snprintf(name, sizeof name, "%s/file.%d.%ld", directory, rank, branch * items + item);
            int fd = open(name, O_CREAT | O_WRONLY, 0644);
            if (fd < 0 || write(fd, name, 16) != 16 || close(fd) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
        }
        struct stat info;
        for (long item = 0; item < items; item++) {
            snprintf(name, sizeof name, "%s/file.%d.%ld", directory, rank, branch * items + item);
            if (stat(name, &info) != 0 || unlink(name) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int branch = 3; branch >= 1; branch--) {
        snprintf(directory, sizeof directory, "%s/tree.%d.%d", top, rank, branch);
        if (rmdir(directory) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rmdir(top) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

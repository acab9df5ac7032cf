/* A checkpoint file per output step through a parallel I/O library, as S3D-IO
 * (github.com/wkliao/S3D-IO, the I/O kernel of the S3D combustion code) writes its fields
 * through PnetCDF: each step the library duplicates the communicator for the new file
 * (ncmpi_create's MPI_Comm_dup), opens a file named after the step (S3D-IO names it
 * after the simulated time, `field.1.000E-06.nc`), writes each rank's block of 4
 * variables collectively, closes the file and frees the communicator. Between steps
 * the odd ranks allocate memory of their own (as the solver does), so the MPI library
 * hands the new communicator and file handle other addresses on some ranks than on the
 * others, and from one step to the next.
 *
 *   checkpoint_files_mpiio DIR STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { VARIABLES = 4, BLOCK = 4096 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) MPI_Abort(MPI_COMM_WORLD, 2);
    long steps = atol(argv[2]);
    static double block[BLOCK];
    for (int i = 0; i < BLOCK; i++) block[i] = rank + i * 1e-3;
    for (long step = 0; step < steps; step++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        char path[4096];
        snprintf(path, sizeof path, "%s/field.%06ld.nc", argv[1], step);
        MPI_File file;
        MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
        for (int variable = 0; variable < VARIABLES; variable++) {
            MPI_Offset at = ((MPI_Offset)variable * size + rank) * (MPI_Offset)sizeof block;
            MPI_File_write_at_all(file, at, block, BLOCK, MPI_DOUBLE, MPI_STATUS_IGNORE);
        }
        MPI_File_close(&file);
        MPI_Comm_free(&comm);
        if (rank % 2 == 1 && step % 3 == 0)
            if (!malloc(64 + 16 * (size_t)step)) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}

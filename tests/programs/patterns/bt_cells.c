/* NPB BT-IO's layout (NASA's NAS Parallel Benchmarks, BT's I/O kernel; github.com/wkliao/BTIO
 * mpiio_m.f90 and make_set.f90): on P = n*n ranks each rank owns n cells of a GRID^3 array of
 * 5 doubles a point, one per z-layer of cells, placed block-tridiagonally — rank r's first
 * cell at (r mod n, r / n, 0), each next one a column on and a row back (mod n), a layer up.
 * The file view is the rank's cells (a subarray each, joined by a struct, resized to the
 * whole array) and every step appends one record of the whole array with an independent
 * MPI_File_write (BT-IO's method 1): the MPI library writes each cell's x-rows one by one,
 * so the POSIX offsets jump by a row, a plane and, between cells, by an amount that
 * depends on where the rank's cells wrap around the grid.
 *
 *   bt_cells DIR STEPS [GRID=16]   (a square number of ranks dividing GRID evenly) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long steps = argc > 2 ? atol(argv[2]) : 2;
    int grid = argc > 3 ? atoi(argv[3]) : 16;
    int n = 1;
    while (n * n < size) n++;
    if (argc < 2 || n * n != size || grid % n != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    int edge = grid / n;

    MPI_Datatype point, cells[64], joined, filetype;
    MPI_Type_contiguous(5, MPI_DOUBLE, &point);
    MPI_Type_commit(&point);
    int whole[3] = {grid, grid, grid}, part[3] = {edge, edge, edge};
    int lengths[64];
    MPI_Aint displacements[64];
    int x = rank % n, y = rank / n;
    for (int c = 0; c < n; c++) {
        /* Fortran order: x fastest, so C's (z, y, x). */
        int starts[3] = {c * edge, y * edge, x * edge};
        MPI_Type_create_subarray(3, whole, part, starts, MPI_ORDER_C, point, &cells[c]);
        lengths[c] = 1;
        displacements[c] = 0;
        x = (x + 1) % n;
        y = (y - 1 + n) % n;
    }
    MPI_Type_create_struct(n, lengths, displacements, cells, &joined);
    MPI_Aint record = (MPI_Aint)grid * grid * grid * 40;
    MPI_Type_create_resized(joined, 0, record, &filetype);
    MPI_Type_commit(&filetype);

    long count = (long)n * edge * edge * edge * 5;
    double *u = malloc(count * sizeof(double));
    for (long i = 0; i < count; i++) u[i] = rank + i * 1e-6;
    char path[4096];
    snprintf(path, sizeof path, "%s/bt.mpi", argv[1]);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
    MPI_File_set_view(file, 0, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
    for (long step = 0; step < steps; step++)
        MPI_File_write(file, u, (int)count, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
    for (int c = 0; c < n; c++) MPI_Type_free(&cells[c]);
    MPI_Type_free(&joined);
    MPI_Type_free(&filetype);
    MPI_Type_free(&point);
    free(u);
    MPI_Finalize();
    return 0;
}

/* PnetCDF, as E3SM, WRF and CESM write their history files through PIO's PnetCDF backend:
 * one dataset, a 2-D field decomposed by blocks of rows, each rank writing its block with a
 * collective ncmpi_put_vara_double_all, and a 1-D variable with one value per rank; then
 * the dataset is reopened and each rank reads its rows back in independent mode.
 *
 * usage: pnetcdf_vars DIR   (16 rows of 64 doubles, 8 KiB, per rank) */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 16
#define COLUMNS 64

static void check(int status, const char *what) {
    if (status != NC_NOERR) {
        fprintf(stderr, "pnetcdf_vars: %s: %s\n", what, ncmpi_strerror(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096];
    snprintf(path, sizeof path, "%s/history.nc", argc > 1 ? argv[1] : ".");

    double field[ROWS][COLUMNS];
    for (int row = 0; row < ROWS; row++)
        for (int column = 0; column < COLUMNS; column++)
            field[row][column] = rank * 1000.0 + row + column / 100.0;

    int ncid, y, x, r, temperature, ranks;
    check(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid),
          "create");
    check(ncmpi_def_dim(ncid, "y", (MPI_Offset)ROWS * size, &y), "def_dim y");
    check(ncmpi_def_dim(ncid, "x", COLUMNS, &x), "def_dim x");
    check(ncmpi_def_dim(ncid, "rank", size, &r), "def_dim rank");
    int dimensions[2] = {y, x};
    check(ncmpi_def_var(ncid, "temperature", NC_DOUBLE, 2, dimensions, &temperature),
          "def_var temperature");
    check(ncmpi_def_var(ncid, "rank", NC_INT, 1, &r, &ranks), "def_var rank");
    check(ncmpi_put_att_text(ncid, temperature, "units", 1, "K"), "put_att_text");
    check(ncmpi_enddef(ncid), "enddef");

    MPI_Offset start[2] = {(MPI_Offset)ROWS * rank, 0}, count[2] = {ROWS, COLUMNS};
    check(ncmpi_put_vara_double_all(ncid, temperature, start, count, &field[0][0]),
          "put_vara_double_all");
    MPI_Offset mine = rank, one = 1;
    check(ncmpi_put_vara_int_all(ncid, ranks, &mine, &one, &rank), "put_vara_int_all");
    check(ncmpi_close(ncid), "close");

    double back[ROWS][COLUMNS];
    check(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &ncid), "open");
    check(ncmpi_inq_varid(ncid, "temperature", &temperature), "inq_varid");
    check(ncmpi_begin_indep_data(ncid), "begin_indep_data");
    check(ncmpi_get_vara_double(ncid, temperature, start, count, &back[0][0]), "get_vara_double");
    check(ncmpi_end_indep_data(ncid), "end_indep_data");
    check(ncmpi_close(ncid), "close");

    int wrong = 0, all_wrong = 0;
    for (int row = 0; row < ROWS; row++)
        for (int column = 0; column < COLUMNS; column++)
            wrong += back[row][column] != field[row][column];
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all_wrong) fprintf(stderr, "pnetcdf_vars: %d values read back wrong\n", all_wrong);
    MPI_Finalize();
    return all_wrong != 0;
}

/* NetCDF-4, as serial climate and weather tools (CMOR, NCO, model post-processing) write
 * it: a NetCDF-4 (HDF5-based) dataset with a 2-D field of 16 x 64 doubles written in one
 * nc_put_vara_double, an attribute, then reopened and its first 8 rows read back. The
 * library underneath is HDF5: its H5Dwrite inside nc_put_vara_double is a sub-call.
 *
 * usage: netcdf4_vars DIR */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 16
#define COLUMNS 64

static void check(int status, const char *what) {
    if (status != NC_NOERR) {
        fprintf(stderr, "netcdf4_vars: %s: %s\n", what, nc_strerror(status));
        exit(1);
    }
}

int main(int argc, char **argv) {
    char path[4096];
    snprintf(path, sizeof path, "%s/field.nc", argc > 1 ? argv[1] : ".");
    static double field[ROWS][COLUMNS], back[ROWS][COLUMNS];
    for (int row = 0; row < ROWS; row++)
        for (int column = 0; column < COLUMNS; column++) field[row][column] = row + column / 100.0;

    int ncid, y, x, variable;
    check(nc_create(path, NC_CLOBBER | NC_NETCDF4, &ncid), "create");
    check(nc_def_dim(ncid, "y", ROWS, &y), "def_dim y");
    check(nc_def_dim(ncid, "x", COLUMNS, &x), "def_dim x");
    int dimensions[2] = {y, x};
    check(nc_def_var(ncid, "temperature", NC_DOUBLE, 2, dimensions, &variable), "def_var");
    check(nc_put_att_text(ncid, variable, "units", 1, "K"), "put_att_text");
    check(nc_enddef(ncid), "enddef");
    size_t start[2] = {0, 0}, count[2] = {ROWS, COLUMNS};
    check(nc_put_vara_double(ncid, variable, start, count, &field[0][0]), "put_vara_double");
    check(nc_close(ncid), "close");

    check(nc_open(path, NC_NOWRITE, &ncid), "open");
    check(nc_inq_varid(ncid, "temperature", &variable), "inq_varid");
    size_t half[2] = {ROWS / 2, COLUMNS};
    check(nc_get_vara_double(ncid, variable, start, half, &back[0][0]), "get_vara_double");
    check(nc_close(ncid), "close");

    int wrong = 0;
    for (int row = 0; row < ROWS / 2; row++)
        for (int column = 0; column < COLUMNS; column++) wrong += back[row][column] != field[row][column];
    if (wrong) fprintf(stderr, "netcdf4_vars: %d values read back wrong\n", wrong);
    return wrong != 0;
}

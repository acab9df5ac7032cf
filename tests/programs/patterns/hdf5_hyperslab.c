/* Parallel HDF5, as VPIC-IO, h5bench's write kernel and most HDF5 science codes do it:
 * each rank owns a contiguous hyperslab of a 1-D dataset and all ranks write it together
 * with a collective H5Dwrite (H5Pset_dxpl_mpio(H5FD_MPIO_COLLECTIVE)), once into a
 * contiguous dataset and once into a chunked one (a chunk per rank); rank 0's attribute
 * is written by all (HDF5 requires it); then the file is reopened and each rank reads its
 * slab of the chunked dataset back, independently.
 *
 * usage: hdf5_hyperslab DIR [ELEMENTS_PER_RANK]   (default 1024 doubles: 8 KiB per rank) */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    hsize_t per_rank = argc > 2 ? (hsize_t)atoll(argv[2]) : 1024;
    char path[4096];
    snprintf(path, sizeof path, "%s/slabs.h5", argc > 1 ? argv[1] : ".");

    double *data = malloc(per_rank * sizeof(double));
    for (hsize_t i = 0; i < per_rank; i++) data[i] = rank * 1e6 + (double)i;

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);

    hsize_t total = per_rank * (hsize_t)size, start = per_rank * (hsize_t)rank;
    hid_t filespace = H5Screate_simple(1, &total, NULL);
    hid_t memspace = H5Screate_simple(1, &per_rank, NULL);
    H5Sselect_hyperslab(filespace, H5S_SELECT_SET, &start, NULL, &per_rank, NULL);
    hid_t collective = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(collective, H5FD_MPIO_COLLECTIVE);

    hid_t contiguous = H5Dcreate2(file, "contiguous", H5T_NATIVE_DOUBLE, filespace, H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(contiguous, H5T_NATIVE_DOUBLE, memspace, filespace, collective, data);

    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &per_rank);
    hid_t chunked = H5Dcreate2(file, "chunked", H5T_NATIVE_DOUBLE, filespace, H5P_DEFAULT, dcpl,
                               H5P_DEFAULT);
    H5Dwrite(chunked, H5T_NATIVE_DOUBLE, memspace, filespace, collective, data);

    int ranks[4] = {size, rank == 0, 0, 0};
    hsize_t four = 4;
    hid_t attribute_space = H5Screate_simple(1, &four, NULL);
    hid_t attribute = H5Acreate2(chunked, "ranks", H5T_NATIVE_INT, attribute_space, H5P_DEFAULT,
                                 H5P_DEFAULT);
    H5Awrite(attribute, H5T_NATIVE_INT, ranks);
    H5Aclose(attribute);
    H5Sclose(attribute_space);

    H5Dclose(chunked);
    H5Dclose(contiguous);
    H5Fclose(file);

    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    chunked = H5Dopen2(file, "chunked", H5P_DEFAULT);
    double *back = malloc(per_rank * sizeof(double));
    H5Dread(chunked, H5T_NATIVE_DOUBLE, memspace, filespace, H5P_DEFAULT, back);
    int wrong = 0;
    for (hsize_t i = 0; i < per_rank; i++) wrong += back[i] != data[i];
    H5Dclose(chunked);
    H5Fclose(file);

    H5Pclose(collective);
    H5Pclose(dcpl);
    H5Pclose(fapl);
    H5Sclose(memspace);
    H5Sclose(filespace);
    free(data);
    free(back);
    int all_wrong = 0;
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all_wrong) fprintf(stderr, "hdf5_hyperslab: %d values read back wrong\n", all_wrong);
    MPI_Finalize();
    return all_wrong != 0;
}

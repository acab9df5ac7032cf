/* A dataset per segment, as IOR's HDF5 backend writes (`ior -a HDF5 -s SEGMENTS`), and
 * as codes that keep one dataset per time step do (VPIC-IO's h5bench kernels, many
 * checkpointers): through the 1.6 API IOR is built with (H5Dcreate1), each segment makes
 * a dataset of every rank's block, each rank writes its block in independent transfers
 * through MPI-IO, and closes the dataset. HDF5 gives each new dataset a new id and never
 * the same twice, and puts the next dataset's object header in the file between datasets
 * now and then: a pwrite's step after H5Dcreate1 is +0 some segments and +2048 others.
 * Then, as `ior -r` does, the file is opened again and every segment's dataset opened
 * (H5Dopen1), read back in the same transfers, and closed.
 *
 * usage: dataset_per_segment DIR [SEGMENTS]   (default 10; 4 transfers of 16 KiB a block) */
#define H5_USE_16_API 1
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { TRANSFERS = 4, TRANSFER = 2048 /* long longs: 16 KiB */ };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int segments = argc > 2 ? atoi(argv[2]) : 10;
    char path[4096];
    snprintf(path, sizeof path, "%s/segments.h5", argc > 1 ? argv[1] : ".");

    static long long data[TRANSFER];
    for (int i = 0; i < TRANSFER; i++) data[i] = rank * 1000000LL + i;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t independent = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(independent, H5FD_MPIO_INDEPENDENT);

    hsize_t block = (hsize_t)TRANSFERS * TRANSFER, total = block * (hsize_t)size;
    hsize_t count = TRANSFER;
    hid_t filespace = H5Screate_simple(1, &total, NULL);
    hid_t memspace = H5Screate_simple(1, &count, NULL);
    for (int segment = 0; segment < segments; segment++) {
        char name[64];
        snprintf(name, sizeof name, "segment-%d", segment);
        hid_t dataset = H5Dcreate(file, name, H5T_NATIVE_LLONG, filespace, H5P_DEFAULT);
        for (int transfer = 0; transfer < TRANSFERS; transfer++) {
            hsize_t start = block * (hsize_t)rank + (hsize_t)transfer * TRANSFER;
            H5Sselect_hyperslab(filespace, H5S_SELECT_SET, &start, NULL, &count, NULL);
            if (H5Dwrite(dataset, H5T_NATIVE_LLONG, memspace, filespace, independent, data) < 0)
                return 1;
        }
        H5Dclose(dataset);
    }
    H5Fclose(file);
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    for (int segment = 0; segment < segments; segment++) {
        char name[64];
        snprintf(name, sizeof name, "segment-%d", segment);
        hid_t dataset = H5Dopen(file, name);
        for (int transfer = 0; transfer < TRANSFERS; transfer++) {
            hsize_t start = block * (hsize_t)rank + (hsize_t)transfer * TRANSFER;
            H5Sselect_hyperslab(filespace, H5S_SELECT_SET, &start, NULL, &count, NULL);
            if (H5Dread(dataset, H5T_NATIVE_LLONG, memspace, filespace, independent, data) < 0 ||
                data[1] != rank * 1000000LL + 1)
                return 1;
        }
        H5Dclose(dataset);
    }
    H5Fclose(file);
    H5Sclose(memspace);
    H5Sclose(filespace);
    H5Pclose(independent);
    H5Pclose(fapl);
    MPI_Finalize();
    return 0;
}

/* Deflated chunks, as HDF5 writes a chunked dataset with the deflate filter — h5py's
 * `compression="gzip"`, NetCDF-4's `zlib=True`, most climate model output: each chunk of
 * 4096 ints is compressed to a size of its own and appended (HDF5's sec2 driver: `pwrite`
 * at the end of the file), a few thousand bytes each, drifting with the data; every 56
 * chunks HDF5 reserves room for a B-tree node it writes at the end. Linked with Debian's
 * HDF5 (the parallel build, used serially: no MPI call).
 *
 * usage: deflated_chunks DIR CHUNKS   (writes DIR/chunks.h5) */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int chunks = atoi(argv[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/chunks.h5", argv[1]);
    hsize_t chunk = 4096, total = chunk * (hsize_t)chunks;
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(1, &total, NULL);
    hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(properties, 1, &chunk);
    H5Pset_deflate(properties, 1);
    hid_t dataset = H5Dcreate2(file, "field", H5T_NATIVE_INT, space, H5P_DEFAULT, properties,
                               H5P_DEFAULT);
    hid_t memory = H5Screate_simple(1, &chunk, NULL);
    int *data = malloc(chunk * sizeof(int));
    unsigned long long state = 7;
    for (int c = 0; c < chunks; c++) {
        /* Values in a range that widens with the chunk: each compresses differently. */
        for (hsize_t i = 0; i < chunk; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            data[i] = (int)((state >> 33) % (unsigned long long)(1 + c % 1000));
        }
        hsize_t start = chunk * (hsize_t)c;
        H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &chunk, NULL);
        if (H5Dwrite(dataset, H5T_NATIVE_INT, memory, space, H5P_DEFAULT, data) < 0) return 1;
    }
    free(data);
    H5Dclose(dataset);
    H5Sclose(memory);
    H5Sclose(space);
    H5Pclose(properties);
    return H5Fclose(file) < 0;
}

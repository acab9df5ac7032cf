/* N calls of two generated HDF5 hooks, timed by the program itself: H5Pset_alignment (a
 * property-list setting: HDF5 does little, so the hook's own cost shows) and H5Dwrite of
 * one double into an in-memory (core driver) file (the hook asks HDF5 for the selection's
 * size and the dataset's file). Prints "set_alignment_ns write_ns" per call.
 *
 * usage: hdf5_loop N */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    long count = argc > 1 ? atol(argv[1]) : 100000;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 20, 0);
    hid_t file = H5Fcreate("in-memory.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t one = 1;
    hid_t space = H5Screate_simple(1, &one, NULL);
    hid_t dataset = H5Dcreate2(file, "x", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                               H5P_DEFAULT);
    double start = now();
    for (long i = 0; i < count; i++) H5Pset_alignment(fapl, 1, 1 + (i & 1));
    double middle = now();
    double value = 0;
    for (long i = 0; i < count; i++) {
        value = (double)i;
        H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value);
    }
    double end = now();
    printf("%.1f %.1f\n", (middle - start) / count, (end - middle) / count);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Fclose(file);
    H5Pclose(fapl);
    return 0;
}

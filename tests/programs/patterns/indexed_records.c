/* A record store written and read back through its index, each access through one call
 * site: each record's data appended to the data region and its entry (offset, length) to
 * the index region, then each entry read and its record after it — as a TFRecord- or
 * LMDB-style reader does, and as HDF5 reads a dataset per step back (the dataset's object
 * header, then its data, through the same pread under MPI-IO). Two strided streams at one
 * call site: the distance from one access to the next keeps changing, each stream's own
 * stride does not.
 *
 *   indexed_records DIR RECORDS */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

enum { RECORD = 4096 };

struct entry {
    int64_t offset, length;
};

static char record[RECORD];

/* One call site each for writing and reading, as a store's I/O layer has. */
__attribute__((noinline)) static int put(int fd, const void *buffer, size_t size, off_t offset) {
    return pwrite(fd, buffer, size, offset) == (ssize_t)size;
}

__attribute__((noinline)) static int get(int fd, void *buffer, size_t size, off_t offset) {
    return pread(fd, buffer, size, offset) == (ssize_t)size;
}

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long records = atol(argv[2]);
    int fd = open("store.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0) return 1;
    off_t data = (off_t)records * (off_t)sizeof(struct entry);
    for (long i = 0; i < records; i++) {
        struct entry entry = {data + i * RECORD, RECORD};
        record[0] = (char)i;
        if (!put(fd, record, RECORD, entry.offset)) return 1;
        if (!put(fd, &entry, sizeof entry, i * (off_t)sizeof entry)) return 1;
    }
    for (long i = 0; i < records; i++) {
        struct entry entry;
        if (!get(fd, &entry, sizeof entry, i * (off_t)sizeof entry)) return 1;
        if (!get(fd, record, (size_t)entry.length, entry.offset) || record[0] != (char)i) return 1;
    }
    return close(fd);
}

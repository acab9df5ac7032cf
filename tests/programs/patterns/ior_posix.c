/* IOR's POSIX backend (src/aiori-POSIX.c, POSIX_Xfer): every transfer is
 * `lseek64(fd, offset, SEEK_SET)` then `write` (or `read`) of the transfer size; a test
 * writes `segments` segments of `transfers` transfers, fsyncs, closes, then reopens and
 * reads them back the same way. One process here; under MPI, IOR's shared file puts rank
 * r's block of a segment at (segment * ranks + r) * block.
 *
 *   ior_posix DIR SEGMENTS [TRANSFERS=256] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TRANSFER = 4096 };

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long segments = atol(argv[2]), transfers = argc > 3 ? atol(argv[3]) : 256;
    long block = transfers * TRANSFER;
    static char buffer[TRANSFER];
    memset(buffer, 'i', sizeof buffer);
    for (int phase = 0; phase < 2; phase++) {
        int fd = phase == 0 ? open("ior.dat", O_CREAT | O_RDWR | O_TRUNC, 0644)
                            : open("ior.dat", O_RDONLY);
        if (fd < 0) return 1;
        for (long segment = 0; segment < segments; segment++) {
            for (long i = 0; i < transfers; i++) {
                off64_t offset = segment * block + i * TRANSFER;
                if (lseek64(fd, offset, SEEK_SET) != offset) return 1;
                ssize_t moved = phase == 0 ? write(fd, buffer, TRANSFER) : read(fd, buffer, TRANSFER);
                if (moved != TRANSFER) return 1;
            }
        }
        if (phase == 0) fsync(fd);
        close(fd);
    }
    return 0;
}

/* Interleaved strided streams: sixteen streams of 4 KiB records, each in its own 64 KiB
 * region of one file, written round-robin (`lseek((i % 16) * 65536 + (i / 16) * 4096)`,
 * then `write`), as a code with several variables per time step writes each into its own
 * region (IOR's -z off, N-1 strided layouts; WRF-style per-variable regions). Then read
 * back the same way with `pread`, once per time step.
 *
 *   interleaved DIR STEPS */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { RECORD = 4096, STREAMS = 16, REGION = 65536, RECORDS = STREAMS * REGION / RECORD };

static off_t position(long i) { return (i % STREAMS) * REGION + (i / STREAMS) * RECORD; }

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long steps = atol(argv[2]);
    static char buffer[RECORD];
    memset(buffer, 's', sizeof buffer);
    int fd = open("streams.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0) return 1;
    for (long step = 0; step < steps; step++) {
        for (long i = 0; i < RECORDS; i++) {
            lseek(fd, position(i), SEEK_SET);
            if (write(fd, buffer, RECORD) != RECORD) return 1;
        }
        for (long i = 0; i < RECORDS; i++)
            if (pread(fd, buffer, RECORD, position(i)) != RECORD) return 1;
    }
    close(fd);
    return 0;
}

/* Random-access reads, as a database, a key-value store or a deep-learning data loader
 * does them (IOR -z, the MLPerf/DLIO sample reader): `pread` of 4 KiB at a pseudo-random
 * aligned offset of a 64 MiB file (a fixed linear congruential generator, so the run is
 * reproducible). Nothing repeats: the trace can only be as small as the offsets are.
 *
 *   random_reads DIR READS */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

enum { RECORD = 4096, RECORDS = 16384 };

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long reads = atol(argv[2]);
    int fd = open("table.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)RECORD * RECORDS) != 0) return 1;
    static char buffer[RECORD];
    uint64_t state = 12345;
    for (long i = 0; i < reads; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        off_t offset = (off_t)((state >> 33) % RECORDS) * RECORD;
        if (pread(fd, buffer, RECORD, offset) != RECORD) return 1;
    }
    close(fd);
    return 0;
}

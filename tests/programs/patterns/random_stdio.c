/* Random records through stdio, as a program reading a record file by key does it (a
 * lookup table, a sample index, Python's `f.seek(k * size); f.read(size)` on a buffered
 * file): `fseek` to a pseudo-random 512-byte record of a 2 MiB file, then `fread` it (a
 * fixed linear congruential generator, so the run is reproducible). The records are
 * written first, sequentially.
 *
 *   random_stdio FILE READS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { RECORD = 512, RECORDS = 4096 };

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    long reads = atol(argv[2]);
    FILE *file = fopen(argv[1], "w+");
    if (!file) return 1;
    static char record[RECORD];
    for (int i = 0; i < RECORDS; i++)
        if (fwrite(record, 1, RECORD, file) != RECORD) return 1;
    uint64_t state = 7;
    for (long i = 0; i < reads; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        if (fseek(file, (long)((state >> 33) % RECORDS) * RECORD, SEEK_SET) != 0) return 1;
        if (fread(record, 1, RECORD, file) != RECORD) return 1;
    }
    fclose(file);
    return 0;
}

/* Lines of their own lengths read back: a simulation's log of thermodynamic output (LAMMPS'
 * log.lammps, a solver's residual history), whose numbers have as many digits as they
 * have, is written with `fprintf` and then read back by a post-processing step three
 * ways — line by line with `fgets`, with `getline`, and in 4 KiB `read` calls (the last
 * one short). Each read asks for the same size and gets another: what varies is its
 * result, not its request.
 *
 *   log_lines DIR LINES */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long lines = atol(argv[2]);
    FILE *log = fopen("thermo.log", "w");
    if (!log) return 1;
    unsigned state = 12345, bytes = 0;
    for (long step = 0; step < lines; step++) {
        state = state * 1103515245u + 12345u;
        /* Energies of 1 to 7 digits: lines of 18 to 30 bytes. */
        int n = fprintf(log, "%ld %u %.3f\n", step, state % (1u + (state >> 9)), step * 0.5);
        if (n < 0) return 1;
        bytes += (unsigned)n;
    }
    if (fclose(log) != 0) return 1;

    char line[256];
    long seen = 0;
    FILE *in = fopen("thermo.log", "r");
    if (!in) return 1;
    while (fgets(line, sizeof line, in)) seen++;
    fclose(in);

    in = fopen("thermo.log", "r");
    if (!in) return 1;
    char *text = NULL;
    size_t capacity = 0;
    while (getline(&text, &capacity, in) > 0) seen++;
    free(text);
    fclose(in);

    int fd = open("thermo.log", O_RDONLY);
    if (fd < 0) return 1;
    static char block[4096];
    ssize_t got;
    unsigned read_back = 0;
    while ((got = read(fd, block, sizeof block)) > 0) read_back += (unsigned)got;
    close(fd);
    return seen == 2 * lines && read_back == bytes ? 0 : 1;
}

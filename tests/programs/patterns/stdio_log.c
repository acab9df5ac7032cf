/* A stdio log, as simulation codes keep one (LAMMPS' log.lammps, OpenFOAM's stdout
 * redirected to a file): a header, then per step an `fprintf` line of a few numbers, a
 * `fflush` every tenth step so the log survives a crash, and `ftell` to report its size;
 * then the log is read back line by line with `fgets` (a post-processing script's view).
 *
 *   stdio_log DIR STEPS */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long steps = atol(argv[2]);
    FILE *log = fopen("run.log", "w");
    if (!log) return 1;
    fputs("step     energy      pressure\n", log);
    long size = 0;
    for (long step = 0; step < steps; step++) {
        /* Fixed width, so every line is 30 bytes. */
        fprintf(log, "%07ld %10.4f %10.4f\n", step % 10000000, 1.5, 2.25);
        if (step % 10 == 9) {
            fflush(log);
            size = ftell(log);
        }
    }
    fclose(log);
    FILE *in = fopen("run.log", "r");
    if (!in) return 1;
    char line[128];
    long lines = 0;
    while (fgets(line, sizeof line, in)) lines++;
    fclose(in);
    return lines == steps + 1 && size == 30 * (steps - steps % 10) + 30 ? 0 : 1;
}

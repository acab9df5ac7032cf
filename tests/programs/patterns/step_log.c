/* A time-stepping code's output: each step writes its three fields (4 KiB, 8 KiB and 512 B)
 * with `pwrite` and a line of progress with `fprintf` ("step 99 residual 1.000000e-02"), as LAMMPS' thermo
 * output and most solvers' residual histories do. The residual has a fixed width (`%e`);
 * the step number has as many digits as it has, so from step 10, 100 and 1000 on every
 * line is a byte longer than before, and the step's calls repeat with another size.
 *
 *   step_log DIR STEPS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long steps = atol(argv[2]);
    int fd = open("results.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    FILE *log = fopen("step.log", "w");
    if (fd < 0 || !log) return 1;
    static char block[8192];
    const long fields[3] = {4096, 8192, 512}, per_step = 4096 + 8192 + 512;
    for (long step = 0; step < steps; step++) {
        memset(block, (int)(step & 0xff), sizeof block);
        long at = step * per_step;
        for (int field = 0; field < 3; field++) {
            if (pwrite(fd, block, fields[field], at) != fields[field]) return 1;
            at += fields[field];
        }
        if (fprintf(log, "step %ld residual %e\n", step, 1.0 / (double)(step + 1)) < 0) return 1;
    }
    if (fclose(log) != 0 || close(fd) != 0) return 1;
    return 0;
}

/* A time-step loop whose inner loop runs a data-dependent number of times: a particle
 * dump writing one record per particle (the count drifts from step to step), a solver
 * whose iterations change with the input, a log flushed per event. Each step writes its
 * records, then checks the file's size (`fstat`). Counts run 200, 207, 214, 201, 208, ...
 * (200 + 7·step mod 20): no two steps in a row alike.
 *
 * Lossless, every step keeps its own count (one loop of n writes each, never cut to
 * repeat the step before); below precision 100 the steps fold into one loop with a
 * histogram of the counts. The tracer stages each step as a few records.
 *
 *   uneven_steps DIR STEPS */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long steps = atol(argv[2]);
    int fd = open("particles.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    static char record[48];
    struct stat status;
    for (long step = 0; step < steps; step++) {
        long particles = 200 + (7 * step) % 20;
        for (long i = 0; i < particles; i++)
            if (write(fd, record, sizeof record) != (ssize_t)sizeof record) return 1;
        if (fstat(fd, &status) != 0) return 1;
    }
    close(fd);
    return 0;
}

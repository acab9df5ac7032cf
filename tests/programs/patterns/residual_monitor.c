/* A solver's convergence monitor alone in its loop: every iteration prints one line,
 * `fprintf(log, "iteration %ld residual %g\n", ...)` (PETSc's -ksp_monitor, a Krylov
 * solver's residual history), and nothing else. `%g` gives the residual as many digits as
 * it needs: 18 to 30 bytes, the length changing every few lines. The loop is one call
 * whose size keeps changing among a handful: its sizes go to the column (as runs of equal
 * lengths it cost a run per change: 33.7 KB for 20,000 lines).
 *
 *   residual_monitor DIR LINES   (writes DIR/monitor.log) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long lines = atol(argv[2]);
    FILE *log = fopen("monitor.log", "w");
    if (!log) return 1;
    double sum = 0;
    for (long iteration = 0; iteration < lines; iteration++) {
        sum += 1.0 / (double)(iteration + 1);
        if (fprintf(log, "iteration %ld residual %g\n", iteration + 1, 1.0 / sum) < 0) return 1;
    }
    return fclose(log) == 0 ? 0 : 1;
}

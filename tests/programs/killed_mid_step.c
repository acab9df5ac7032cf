/* A time-step loop killed in the middle of a step, as a job's time limit or the OOM killer
 * stops a particle code: each step writes one record per particle (200 + 7·step mod 20
 * of them, a count that changes every step) and checks the file's size; in step STEPS,
 * after 123 records, the process sends itself SIGKILL.
 *
 * Below precision 100 the tracer stages such steps in a steps record whose head holds
 * the inner loop in progress, updated call by call: the kill loses none of its calls.
 *
 *   killed_mid_step DIR STEPS */
#include <fcntl.h>
#include <signal.h>
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
    for (long step = 0;; step++) {
        long particles = step < steps ? 200 + (7 * step) % 20 : 123;
        for (long i = 0; i < particles; i++)
            if (write(fd, record, sizeof record) != (ssize_t)sizeof record) return 1;
        if (step == steps) raise(SIGKILL);
        if (fstat(fd, &status) != 0) return 1;
    }
}

/* Names argv[2] distinct paths that do not exist (open fails with ENOENT), each about 100
 * bytes long, in argv[1]; then opens the first and the last of them again, creates
 * late.dat, forks, and the child writes 10 bytes to late.dat through the descriptor it
 * inherited. Prints the peak resident set in KiB. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void name(char *out, size_t size, const char *directory, long i) {
    snprintf(out, size, "%s/a-rather-long-directory-name-for-testing/file-with-a-long-name-%08ld.dat",
             directory, i);
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    long n = atol(argv[2]);
    char path[512];
    for (long i = 0; i < n; i++) {
        name(path, sizeof path, argv[1], i);
        if (open(path, O_RDONLY) >= 0) return 3;
    }
    name(path, sizeof path, argv[1], 0);
    if (open(path, O_RDONLY) >= 0) return 3;
    name(path, sizeof path, argv[1], n - 1);
    if (open(path, O_RDONLY) >= 0) return 3;
    snprintf(path, sizeof path, "%s/late.dat", argv[1]);
    int late = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (late < 0) return 4;
    pid_t child = fork();
    if (child == 0) {
        if (write(late, "0123456789", 10) != 10) _exit(5);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    close(late);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("%ld\n", usage.ru_maxrss);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 6;
}

/* N one-byte pwrite() calls to a file, at offset 0 (or, with a third argument "scattered",
 * at offsets i * i mod 1000003, whose steps never repeat, so the tracer cannot fold them as
 * they happen; with "pairs", at 0 and 4096 in turn: a loop of two calls, which the tracer
 * folds as a block); prints the mean nanoseconds per call of the loop. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    long count = atol(argv[2]);
    int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 3;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int scattered = argc > 3 && strcmp(argv[3], "scattered") == 0;
    int pairs = argc > 3 && strcmp(argv[3], "pairs") == 0;
    for (long i = 0; i < count; i++)
        pwrite(fd, "x", 1, scattered ? (i * i) % 1000003 : pairs ? (i % 2) * 4096 : 0);
    clock_gettime(CLOCK_MONOTONIC, &end);
    close(fd);
    double elapsed = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
    printf("%.2f\n", elapsed / count);
    return 0;
}

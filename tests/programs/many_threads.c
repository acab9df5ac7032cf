/* argv[2] threads, all alive at once, each making argv[3] one-byte pwrites to argv[1] at
 * offsets no pattern covers ((t·n + i)² mod 1000003), so every call is staged as its own
 * record. Prints the peak resident set in KiB. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static int fd;
static long per_thread;
static pthread_barrier_t all_started;

static void *work(void *argument) {
    long thread = (long)argument;
    char byte = 0;
    for (long i = 0; i < per_thread; i++) {
        long k = thread * per_thread + i;
        if (pwrite(fd, &byte, 1, (k * k) % 1000003) != 1) exit(3);
    }
    pthread_barrier_wait(&all_started);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int threads = atoi(argv[2]);
    per_thread = atol(argv[3]);
    fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 2;
    pthread_barrier_init(&all_started, 0, threads);
    pthread_t *handles = malloc(sizeof *handles * threads);
    for (long t = 0; t < threads; t++) pthread_create(&handles[t], 0, work, (void *)t);
    for (int t = 0; t < threads; t++) pthread_join(handles[t], 0);
    close(fd);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("%ld\n", usage.ru_maxrss);
    return 0;
}

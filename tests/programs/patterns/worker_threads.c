/* A pool of worker threads doing the same job on their own part of the data, as a
 * threaded writer (an OpenMP or pthreads checkpoint, HDF5's or ADIOS2's background
 * writers) does: each worker opens its own file, writes 100 blocks of 512 bytes, closes
 * it, and writes its 10 records of 64 bytes at its own offsets of a shared file. The
 * workers run one after another (each joined before the next starts), so descriptors and
 * thread order are the same in every run.
 *
 *   worker_threads DIR THREADS */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int shared_fd;

static void *worker(void *argument) {
    long index = (long)argument;
    char name[32], block[512];
    memset(block, 'w', sizeof block);
    snprintf(name, sizeof name, "part-%03ld.dat", index);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 100; i++) write(fd, block, sizeof block);
    close(fd);
    for (int i = 0; i < 10; i++) pwrite(shared_fd, block, 64, (index * 10 + i) * 64);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long threads = atol(argv[2]);
    shared_fd = open("shared.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (long i = 0; i < threads; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, worker, (void *)i) != 0) return 1;
        pthread_join(thread, NULL);
    }
    close(shared_fd);
    return 0;
}

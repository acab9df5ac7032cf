/* 8 threads: each writes its own file (1000 x 512 B) and 100 x 64 B into a shared file. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int shared_fd;

static void *worker(void *argument) {
    long index = (long)argument;
    char name[32], block[512];
    memset(block, 't', sizeof block);
    snprintf(name, sizeof name, "t%ld.dat", index);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 1000; i++) write(fd, block, sizeof block);
    close(fd);
    for (int i = 0; i < 100; i++) pwrite(shared_fd, block, 64, (index * 100 + i) * 64);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    shared_fd = open("shared.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    pthread_t threads[8];
    for (long i = 0; i < 8; i++) pthread_create(&threads[i], NULL, worker, (void *)i);
    for (int i = 0; i < 8; i++) pthread_join(threads[i], NULL);
    close(shared_fd);
    return 0;
}

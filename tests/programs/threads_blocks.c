/* Loops of three calls (pwrite, pwrite, write) in 3 threads at once, each on files of its
 * own, while the main thread runs a loop of two pwrites and forks in the middle of it (the
 * child writes a loop of its own and exits): blocks in several threads and across fork. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void *work(void *argument) {
    long id = (long)argument;
    char name[32], buffer[64] = {0};
    snprintf(name, sizeof name, "t%ld.dat", id);
    int a = open(name, O_CREAT | O_RDWR | O_TRUNC, 0644);
    snprintf(name, sizeof name, "u%ld.dat", id);
    int b = open(name, O_CREAT | O_RDWR | O_TRUNC, 0644);
    for (long i = 0; i < 20000; i++) {
        pwrite(a, buffer, 64, 64 * i);
        pwrite(b, buffer, 32, 32 * i);
        write(b, buffer, 8);
    }
    close(a);
    close(b);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    pthread_t threads[3];
    for (long i = 0; i < 3; i++) pthread_create(&threads[i], 0, work, (void *)i);
    char buffer[16] = {0};
    int c = open("main.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    for (int i = 0; i < 1000; i++) {
        pwrite(c, buffer, 16, 16 * i);
        pwrite(c, buffer, 8, 100000 + 8 * i);
        if (i == 500) {
            pid_t child = fork();
            if (child == 0) {
                for (int k = 0; k < 100; k++) {
                    pwrite(c, buffer, 4, 200000 + 4 * k);
                    write(c, buffer, 2);
                }
                _exit(0);
            }
            waitpid(child, 0, 0);
        }
    }
    for (long i = 0; i < 3; i++) pthread_join(threads[i], 0);
    close(c);
    return 0;
}

/* A timer signal every 50 µs whose handler write()s one byte, while the main loop keeps
 * malloc busy and opens files under new names (which makes the tracer remember paths). A
 * tracer that allocated through malloc inside the handler's write() could deadlock here.
 * Prints how many writes the handler made. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static int handler_fd;
static volatile sig_atomic_t handler_writes;

static void on_timer(int signal_number) {
    (void)signal_number;
    int saved = 0;
    if (write(handler_fd, "t", 1) == 1) handler_writes++;
    (void)saved;
}

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    handler_fd = open("handler.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_timer;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);
    struct itimerval timer = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &timer, NULL);
    char name[64];
    for (int i = 0; i < 3000; i++) {
        for (int j = 0; j < 50; j++) free(malloc(16 + (size_t)(i * j) % 4096));
        snprintf(name, sizeof name, "name-%d.tmp", i);
        int fd = open(name, O_CREAT | O_WRONLY, 0644);
        close(fd);
        unlink(name);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    close(handler_fd);
    printf("%d\n", (int)handler_writes);
    return 0;
}

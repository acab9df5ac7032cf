/* A program that first probes a few configuration files (as netCDF's start-up looks for
 * ~/.ncrc, ~/.daprc, ~/.dodsrc…: a loop over names, one open and read each), then writes
 * a log of one file in a loop. The probes are one folded loop over several files, whose
 * time each file gets a share of (estimated); the log's loop is of one file, exact.
 *
 * usage: probes_then_log DIR WRITES */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long writes = atol(argv[2]);
    char name[64], buffer[64];
    for (int probe = 0; probe < 5; probe++) {
        snprintf(name, sizeof name, "probe%d.rc", probe);
        int fd = open(name, O_CREAT | O_RDWR, 0644);
        if (fd < 0 || read(fd, buffer, sizeof buffer) < 0) return 1;
        close(fd);
    }
    int log = open("run.log", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (long i = 0; i < writes; i++)
        if (write(log, "a line of the log\n", 18) != 18) return 1;
    return close(log);
}

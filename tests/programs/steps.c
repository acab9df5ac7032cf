/* One checkpoint file per time step: argv[2] steps, each opening ckpt-NNNNN.dat, writing
 * 4 blocks of 1 KiB, closing and removing it, and appending a line to a log. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long steps = atol(argv[2]);
    char block[1024], name[64];
    memset(block, 's', sizeof block);
    int log = open("steps.log", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (long step = 0; step < steps; step++) {
        snprintf(name, sizeof name, "ckpt-%05ld.dat", step);
        int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int i = 0; i < 4; i++) write(fd, block, sizeof block);
        close(fd);
        unlink(name);
        write(log, "step done\n", 10);
    }
    close(log);
    return 0;
}

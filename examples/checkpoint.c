/* A small simulation-like program for the README's first command: it reads a
 * configuration, writes a checkpoint file per step with POSIX calls (a header, then the
 * field in 64 KiB blocks), appends a log line per step through stdio, and reads the last
 * checkpoint back to verify it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 5
#define BLOCKS 16
#define BLOCK (64 * 1024)

int main(void) {
    FILE *config = fopen("checkpoint.conf", "w");
    fprintf(config, "steps=%d\nblocks=%d\n", STEPS, BLOCKS);
    fclose(config);
    config = fopen("checkpoint.conf", "r");
    char line[128];
    while (fgets(line, sizeof line, config)) {}
    fclose(config);

    static char field[BLOCK];
    FILE *log = fopen("checkpoint.log", "w");
    char name[64];
    for (int step = 0; step < STEPS; step++) {
        memset(field, 'a' + step, sizeof field);
        snprintf(name, sizeof name, "ckpt-%03d.dat", step);
        int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        int header[4] = {step, BLOCKS, BLOCK, 0};
        write(fd, header, sizeof header);
        for (int block = 0; block < BLOCKS; block++) write(fd, field, BLOCK);
        fsync(fd);
        close(fd);
        fprintf(log, "step %d wrote %s\n", step, name);
    }
    fclose(log);

    int fd = open(name, O_RDONLY);
    int header[4];
    read(fd, header, sizeof header);
    long total = 0;
    ssize_t got;
    while ((got = read(fd, field, BLOCK)) > 0) total += got;
    close(fd);
    for (int step = 0; step < STEPS - 1; step++) {
        snprintf(name, sizeof name, "ckpt-%03d.dat", step);
        unlink(name);
    }
    return total == (long)BLOCKS * BLOCK ? 0 : 1;
}

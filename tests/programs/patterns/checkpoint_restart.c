/* Checkpoint/restart, as most simulation codes do it (a file per checkpoint, numbered by
 * step, written whole; the newest read back at restart): every `interval` steps
 * `ckpt-%06d.dat` is created, a 64-byte header and `fields` 32 KiB fields are written with
 * `pwrite` at increasing offsets, the file is fsynced and closed, and the previous
 * checkpoint is unlinked; at the end the last one is reopened, stat'ed and read back.
 *
 *   checkpoint_restart DIR CHECKPOINTS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { FIELDS = 4, FIELD = 32768, HEADER = 64 };

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long checkpoints = atol(argv[2]);
    static char field[FIELD];
    char header[HEADER], name[64], previous[64] = "";
    memset(field, 'f', sizeof field);
    memset(header, 'h', sizeof header);
    for (long c = 0; c < checkpoints; c++) {
        snprintf(name, sizeof name, "ckpt-%06ld.dat", c);
        int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) return 1;
        if (pwrite(fd, header, HEADER, 0) != HEADER) return 1;
        for (int f = 0; f < FIELDS; f++)
            if (pwrite(fd, field, FIELD, HEADER + (off_t)f * FIELD) != FIELD) return 1;
        fsync(fd);
        close(fd);
        if (previous[0]) unlink(previous);
        strcpy(previous, name);
    }
    struct stat info;
    if (stat(previous, &info) != 0 || info.st_size != HEADER + FIELDS * FIELD) return 1;
    int fd = open(previous, O_RDONLY);
    if (fd < 0 || read(fd, header, HEADER) != HEADER) return 1;
    for (int f = 0; f < FIELDS; f++)
        if (read(fd, field, FIELD) != FIELD) return 1;
    close(fd);
    return 0;
}

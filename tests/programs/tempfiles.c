/* A temporary file the way libraries make them (mkstemp: no open by name), space reserved
 * and advice given on it, its size and mode changed by name and by descriptor, then it is
 * removed; and posix_fallocate on a pipe, which returns its error (ESPIPE) without errno.
 * Prints the temporary file's name. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char name[] = "scratch-XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0) return 1;
    for (int i = 0; i < 3; i++)
        if (write(fd, "0123456789", 10) != 10) return 1;
    if (posix_fallocate(fd, 0, 1 << 20) != 0) return 1;
    if (posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL) != 0) return 1;
    if (fallocate(fd, 0, 0, 1 << 21) != 0) return 1;
    if (truncate(name, 200) != 0 || fchmod(fd, 0640) != 0 || chmod(name, 0600) != 0) return 1;
    if (faccessat(AT_FDCWD, name, R_OK, 0) != 0) return 1;
    close(fd);
    unlink(name);
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) return 1;
    int error = posix_fallocate(pipe_ends[1], 0, 4096);
    errno = 0;
    if (error != ESPIPE) return 3;
    printf("%s\n", name);
    return 0;
}

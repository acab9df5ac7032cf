/* Metadata-bound, as a code that keeps one small file per task does: 1,000 files created,
 * stat'ed, closed and removed, each with one 10-byte write. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char name[32];
    struct stat status;
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "task-%04d.dat", i);
        int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "0123456789", 10) != 10) return 1;
        if (fstat(fd, &status) != 0 || close(fd) != 0 || unlink(name) != 0) return 1;
    }
    return 0;
}

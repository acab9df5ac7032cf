/* A metadata benchmark's phases, as mdtest (github.com/hpc/ior, src/mdtest.c) runs them
 * in each rank's directory: create N directories, stat them, rename each to its
 * neighbour's name (mdtest's rename phase: the first to "NAME-XX", each next one to the
 * name the one before left, the "-XX" one back to the last name freed), then create N
 * files of 4 KiB (mdtest -w 4096), stat them, read them back (-e 4096), and remove files
 * and directories. Every name is new, a number in a fixed pattern; nothing else changes.
 *
 *   metadata DIR N */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void item(char *name, const char *kind, long index) {
    sprintf(name, "tree.0/%s.mdtest.0.%ld", kind, index);
}

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long n = atol(argv[2]);
    char name[256], last[256], first[256];
    static char block[4096];
    memset(block, 'm', sizeof block);
    struct stat status;
    if (mkdir("tree.0", 0755) != 0) return 1;
    for (long i = 0; i < n; i++) {
        item(name, "dir", i);
        if (mkdir(name, 0755) != 0) return 1;
    }
    for (long i = 0; i < n; i++) {
        item(name, "dir", i);
        if (stat(name, &status) != 0) return 1;
    }
    for (long i = 0; i < n; i++) {
        item(name, "dir", i);
        if (i == 0) {
            sprintf(first, "%s-XX", name);
            strcpy(last, first);
        } else if (i == n - 1) {
            strcpy(name, first);
        }
        if (rename(name, last) != 0) return 1;
        strcpy(last, name);
    }
    for (long i = 0; i < n; i++) {
        item(name, "file", i);
        int fd = open(name, O_CREAT | O_WRONLY, 0644);
        if (fd < 0 || write(fd, block, sizeof block) != sizeof block) return 1;
        close(fd);
    }
    for (long i = 0; i < n; i++) {
        item(name, "file", i);
        if (stat(name, &status) != 0) return 1;
    }
    for (long i = 0; i < n; i++) {
        item(name, "file", i);
        int fd = open(name, O_RDONLY);
        if (fd < 0 || read(fd, block, sizeof block) != sizeof block) return 1;
        close(fd);
    }
    for (long i = 0; i < n; i++) {
        item(name, "file", i);
        if (unlink(name) != 0) return 1;
    }
    for (long i = 0; i < n; i++) {
        item(name, "dir", i);
        if (rmdir(name) != 0) return 1;
    }
    return rmdir("tree.0") == 0 ? 0 : 1;
}

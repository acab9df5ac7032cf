/* Known POSIX I/O on one file (see crates/cli/tests/programs.rs for the expected figures). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    static char block[4096];
    memset(block, 'b', sizeof block);
    int fd = open("data.bin", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0) return 3;
    for (int i = 0; i < 16; i++) write(fd, block, sizeof block);   /* 16 writes, 65536 B */
    lseek(fd, 0, SEEK_SET);                                       /* 1 seek */
    for (int i = 0; i < 8; i++) read(fd, block, sizeof block);    /* 8 reads, 32768 B */
    pwrite(fd, block, 100, 1 << 20);                               /* 1 write, 100 B */
    pread(fd, block, 100, 1 << 20);                                /* 1 read, 100 B */
    struct iovec parts[3] = {{block, 10}, {block, 20}, {block, 30}};
    writev(fd, parts, 3);                                          /* 1 write, 60 B */
    fsync(fd);                                                     /* 2 syncs */
    fdatasync(fd);
    ftruncate(fd, 70000);                                          /* 1 meta */
    struct stat status;
    fstat(fd, &status);                                            /* 1 stat */
    close(fd);
    stat("data.bin", &status);                                     /* 1 stat */
    access("data.bin", R_OK);                                      /* 1 meta */
    rename("data.bin", "moved.bin");                               /* 1 meta (on data.bin) */
    unlink("moved.bin");                                           /* 1 meta on moved.bin */
    return 0;
}

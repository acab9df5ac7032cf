/* Misaligned requests, as a file with a 512-byte header followed by 2 MiB records is
 * written: 20 writes of 2 MiB, each starting 512 bytes past a 4 KiB boundary (Darshan's
 * POSIX_FILE_NOT_ALIGNED; Drishti flags more than 10%). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    const size_t record = 2 << 20;
    char *buffer = calloc(1, record);
    int fd = open("records.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 20; i++)
        if (pwrite(fd, buffer, record, 512 + (off_t)i * record) != (ssize_t)record) return 1;
    close(fd);
    return unlink("records.dat");
}

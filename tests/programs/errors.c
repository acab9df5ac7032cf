/* Failing calls: prints every result and errno, so traced and untraced runs can be compared. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    errno = 0;
    int missing = open("/nonexistent-dir/x", O_RDONLY);
    printf("open missing: %d errno %d\n", missing, errno);
    int fd = open("exists.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    close(fd);
    int read_only = open("exists.txt", O_RDONLY);
    errno = 0;
    ssize_t written = write(read_only, "x", 1);
    printf("write to read-only: %zd errno %d\n", written, errno);
    close(read_only);
    errno = 0;
    char byte;
    ssize_t got = read(read_only, &byte, 1);
    printf("read of closed fd: %zd errno %d\n", got, errno);
    errno = 0;
    FILE *stream = fopen("/nonexistent-dir/y", "r");
    printf("fopen missing: %s errno %d\n", stream ? "stream" : "NULL", errno);
    errno = 77;
    int again = open("exists.txt", O_RDONLY);
    printf("errno after a successful open: %d\n", errno);
    errno = 0;
    off_t position = lseek(again, -5, SEEK_SET);
    printf("lseek to -5: %lld errno %d\n", (long long)position, errno);
    close(again);
    return 5;
}

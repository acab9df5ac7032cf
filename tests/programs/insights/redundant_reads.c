/* Reading the same data again, as a code re-reading its input every step does: a 1 MiB
 * file written once, then read whole three times. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    const size_t size = 1 << 20;
    char *buffer = malloc(size);
    memset(buffer, 'i', size);
    int fd = open("input.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buffer, size) != (ssize_t)size) return 1;
    for (int pass = 0; pass < 3; pass++)
        if (pread(fd, buffer, size, 0) != (ssize_t)size) return 1;
    return close(fd);
}

/* argv[2] one-byte pwrites to argv[1], all at offset 0 (or, with a third argument
 * "scattered", at offsets i * i mod 1000003, no two steps alike in a row); prints the
 * peak resident memory (VmHWM, kB). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    long count = atol(argv[2]);
    int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    int scattered = argc > 3 && strcmp(argv[3], "scattered") == 0;
    for (long i = 0; i < count; i++) pwrite(fd, "x", 1, scattered ? (i * i) % 1000003 : 0);
    close(fd);
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    while (fgets(line, sizeof line, status))
        if (strncmp(line, "VmHWM:", 6) == 0) printf("%ld\n", atol(line + 6));
    fclose(status);
    return 0;
}

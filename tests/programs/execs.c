/* First image writes first.dat and execs itself; the second image keeps writing the
 * inherited descriptor and writes second.dat. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    char block[1000];
    memset(block, 'e', sizeof block);
    if (argc == 3 && strcmp(argv[2], "first") == 0) {
        if (chdir(argv[1]) != 0) return 2;
        int fd = open("first.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int i = 0; i < 4; i++) write(fd, block, 1000);
        char number[16];
        snprintf(number, sizeof number, "%d", fd);
        execl("/proc/self/exe", argv[0], "second", number, (char *)NULL);
        return 3;
    }
    int inherited = atoi(argv[2]);
    for (int i = 0; i < 2; i++) write(inherited, block, 500);
    close(inherited);
    int fd = open("second.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 3; i++) write(fd, block, 300);
    close(fd);
    return 0;
}

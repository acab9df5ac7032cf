/* Writes, leaves a stdio buffer unflushed, and leaves through _exit(7). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char block[100];
    memset(block, 'x', sizeof block);
    int fd = open("out.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 3; i++) write(fd, block, 100);
    FILE *f = fopen("buffered.dat", "w");
    fwrite(block, 1, 50, f);
    _exit(7);
}

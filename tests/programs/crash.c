/* Writes, then dies of SIGSEGV (or of abort() with a second argument "abort"). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char block[100];
    memset(block, 'c', sizeof block);
    int fd = open("out.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 5; i++) write(fd, block, 100);
    if (argc > 2 && strcmp(argv[2], "abort") == 0) abort();
    *(volatile int *)0 = 1;
    return 0;
}

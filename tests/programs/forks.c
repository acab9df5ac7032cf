/* Parent writes parent.dat, forks; the child writes child.dat and the inherited descriptor. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char block[200];
    memset(block, 'f', sizeof block);
    int fd = open("parent.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 10; i++) write(fd, block, 100);
    pid_t child = fork();
    if (child == 0) {
        int own = open("child.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int i = 0; i < 5; i++) write(own, block, 200);
        close(own);
        for (int i = 0; i < 3; i++) write(fd, block, 10);
        exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    for (int i = 0; i < 10; i++) write(fd, block, 100);
    close(fd);
    return WEXITSTATUS(status);
}

/* Writes, publishes its pid in pid.txt, and waits to be killed with SIGKILL. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char block[100];
    memset(block, 'k', sizeof block);
    int fd = open("out.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 4; i++) write(fd, block, 100);
    char pid[32];
    int length = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    int pid_fd = open("pid.tmp", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    write(pid_fd, pid, length);
    close(pid_fd);
    rename("pid.tmp", "pid.txt");
    for (;;) pause();
}

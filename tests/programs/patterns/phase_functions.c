/* Phases named by function, with no change to the program (`cairn summary --phases
 * write_checkpoint,read_restart`): the checkpoint and restart routines of a simulation,
 * as a user asks "what did my checkpoint cost?" of an unmodified code.
 *
 * Usage: phase_functions DIRECTORY */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static char block[4096];

__attribute__((noinline)) void write_checkpoint(void) {
    int fd = open("checkpoint.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 4; i++)
        write(fd, block, sizeof block);
    close(fd);
}

__attribute__((noinline)) void read_restart(void) {
    int fd = open("checkpoint.bin", O_RDONLY);
    read(fd, block, sizeof block);
    close(fd);
}

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0)
        return 2;
    memset(block, 'c', sizeof block);
    for (int step = 0; step < 3; step++)
        write_checkpoint();
    read_restart();
    int fd = open("other.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    write(fd, block, 10);
    close(fd);
    return 0;
}

/* Phases marked by the program (include/cairn.h), as a simulation marks its checkpoint
 * and restart (Score-P user regions, Darshan's DXT start/stop markers): 5 time steps each
 * write a 64 KiB checkpoint in 16 writes inside "checkpoint" (a phase begun and ended in
 * every step of a loop), then one restart reads it back in 4 reads inside "restart", with
 * the "solver" phase around the steps holding a log line per step (stdio) outside the
 * checkpoint. Calls outside every phase: the open and close of the log.
 *
 * Usage: phases DIRECTORY */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../../include/cairn.h"

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0)
        return 2;
    static char block[4096];
    memset(block, 'c', sizeof block);
    FILE *log = fopen("log.txt", "w");
    CAIRN_PHASE_BEGIN("solver");
    for (int step = 0; step < 5; step++) {
        fprintf(log, "step %d\n", step);
        CAIRN_PHASE_BEGIN("checkpoint");
        int fd = open("checkpoint.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int i = 0; i < 16; i++)
            write(fd, block, sizeof block);
        close(fd);
        CAIRN_PHASE_END("checkpoint");
    }
    CAIRN_PHASE_END("solver");
    CAIRN_PHASE_BEGIN("restart");
    int fd = open("checkpoint.bin", O_RDONLY);
    for (int i = 0; i < 4; i++)
        read(fd, block, 16384 > sizeof block ? sizeof block : 16384);
    close(fd);
    CAIRN_PHASE_END("restart");
    fclose(log);
    return 0;
}

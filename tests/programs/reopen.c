/* Loops that open and close files in their bodies, for the tracer's block records:
 * argv[2] iterations of each of
 *   F: open log.dat (append), write 100 B, close                        (a log per step)
 *   G: open config.dat, read 64 B twice, close                          (re-read a file)
 *   H: read 32 B and write 32 B of state.dat at its position, close it, open it again:
 *      the first iteration reads at 100 (after a seek), the others at 0 (after the open)
 *   I: fopen stream.txt ("a"), fwrite 40 B, fclose                       (stdio)
 *   K: open ckpt.dat (truncate), write 4 KiB four times, close          (rewrite a file)
 * With a third argument "steps", also per iteration a file of its own, ckpt-<i>.dat, opened,
 * written (1 KiB) and closed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long n = atol(argv[2]);
    int steps = argc > 3 && strcmp(argv[3], "steps") == 0;
    static char buffer[4096];
    int config = open("config.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    write(config, buffer, 128);
    close(config);
    for (long i = 0; i < n; i++) {
        int log = open("log.dat", O_CREAT | O_WRONLY | O_APPEND, 0644);
        write(log, buffer, 100);
        close(log);
    }
    for (long i = 0; i < n; i++) {
        int in = open("config.dat", O_RDONLY);
        read(in, buffer, 64);
        read(in, buffer, 64);
        close(in);
    }
    int state = open("state.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    pwrite(state, buffer, 4096, 0);
    lseek(state, 100, SEEK_SET);
    for (long i = 0; i < n; i++) {
        read(state, buffer, 32);
        write(state, buffer, 32);
        close(state);
        state = open("state.dat", O_RDWR);
    }
    close(state);
    for (long i = 0; i < n; i++) {
        FILE *stream = fopen("stream.txt", "a");
        fwrite(buffer, 1, 40, stream);
        fclose(stream);
    }
    for (long i = 0; i < n; i++) {
        int checkpoint = open("ckpt.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int j = 0; j < 4; j++) write(checkpoint, buffer, 4096);
        close(checkpoint);
    }
    for (long i = 0; i < n && steps; i++) {
        char name[64];
        snprintf(name, sizeof name, "ckpt-%ld.dat", i);
        int checkpoint = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        write(checkpoint, buffer, 1024);
        close(checkpoint);
    }
    return 0;
}

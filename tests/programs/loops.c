/* Nested loops of small I/O: argv[2] outer iterations, each a seek, 4 reads of 64 B and a
 * write of 64 B, and every 10th iteration an inner burst of 8 appends to a log. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long outer = atol(argv[2]);
    char block[64];
    memset(block, 'l', sizeof block);
    int data = open("loops.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    for (int i = 0; i < 8; i++) write(data, block, sizeof block);
    int log = open("loops.log", O_CREAT | O_WRONLY | O_TRUNC | O_APPEND, 0644);
    for (long i = 0; i < outer; i++) {
        lseek(data, 0, SEEK_SET);
        for (int j = 0; j < 4; j++) read(data, block, sizeof block);
        write(data, block, sizeof block);
        if (i % 10 == 9)
            for (int j = 0; j < 8; j++) write(log, "entry\n", 6);
    }
    close(log);
    close(data);
    return 0;
}

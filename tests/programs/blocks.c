/* Loops whose bodies are several calls, for the tracer's block records: argv[2] iterations
 * of each of
 *   A: pwrite 64 B to a.dat at 64·i, pwrite 32 B to b.dat at 4096 + 128·i   (period 2)
 *   B: pread 64 B of a.dat at 64·i, fstat a.dat, pwrite 16 B to b.dat at 0  (period 3)
 *   C: 8 × (pwrite 8 B to a.dat, pwrite 8 B to b.dat), at 4096·i + 16·j      (nested)
 *   D: pwrites of 1, 2, … 17 B to c.dat, each at 0                           (period 17)
 *   E: after a seek of a.dat to 0, read 64 B of a.dat, write 64 B to c.dat   (a copy)
 * then one more A-like pair cut after its first call, and fsync of each file. With a third
 * argument "flat", only A, B and E (loops the tracer folds whole). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long n = atol(argv[2]);
    int flat = argc > 3 && strcmp(argv[3], "flat") == 0;
    static char buffer[64];
    struct stat status;
    int a = open("a.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    int b = open("b.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    int c = open("c.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
    for (long i = 0; i < n; i++) {
        pwrite(a, buffer, 64, 64 * i);
        pwrite(b, buffer, 32, 4096 + 128 * i);
    }
    for (long i = 0; i < n; i++) {
        pread(a, buffer, 64, 64 * i);
        fstat(a, &status);
        pwrite(b, buffer, 16, 0);
    }
    for (long i = 0; i < n && !flat; i++)
        for (long j = 0; j < 8; j++) {
            pwrite(a, buffer, 8, 4096 * i + 16 * j);
            pwrite(b, buffer, 8, 4096 * i + 16 * j);
        }
    for (long i = 0; i < n && !flat; i++)
        for (int size = 1; size <= 17; size++) pwrite(c, buffer, size, 0);
    lseek(a, 0, SEEK_SET);
    for (long i = 0; i < n; i++) {
        read(a, buffer, 64);
        write(c, buffer, 64);
    }
    pwrite(a, buffer, 64, 64 * n);
    fsync(a);
    fsync(b);
    fsync(c);
    close(c);
    close(b);
    close(a);
    return 0;
}

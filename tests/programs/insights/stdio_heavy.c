/* Bulk data through stdio, as many legacy codes write their output: 100 fwrite calls of
 * 10 KiB (Drishti: stdio moving more than 10% of the bytes). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    static char block[10240];
    memset(block, 'b', sizeof block);
    FILE *out = fopen("output.dat", "w");
    if (!out) return 1;
    for (int i = 0; i < 100; i++)
        if (fwrite(block, 1, sizeof block, out) != sizeof block) return 1;
    return fclose(out);
}

/* Known stdio calls on one stream. Built with -fno-builtin so the compiler keeps the calls. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char block[100];
    memset(block, 'a', sizeof block);
    block[99] = '\n';
    FILE *f = fopen("stdio.txt", "w+");
    fprintf(f, "%d %s\n", 12345, "hello");  /* 12 B */
    fputs("line two\n", f);                 /* 9 B */
    fputc('x', f);                          /* 1 B */
    fputc('\n', f);                         /* 1 B */
    fwrite(block, 1, 100, f);               /* 100 B */
    fflush(f);
    long position = ftell(f);               /* 123 */
    rewind(f);
    int number;
    char word[32];
    int items = fscanf(f, "%d %31s", &number, word);
    fseek(f, 0, SEEK_SET);
    char line[256];
    fgets(line, sizeof line, f);            /* 12 B */
    char *text = NULL;
    size_t capacity = 0;
    ssize_t got = getline(&text, &capacity, f); /* 9 B */
    char back[50];
    size_t read_items = fread(back, 1, 50, f);  /* 50 B */
    fclose(f);
    free(text);
    return (position == 123 && items == 2 && got == 9 && read_items == 50) ? 0 : 1;
}

/* Small requests, as a naive checkpoint writes them: 2,000 sequential writes of 4 KiB, each
 * on a block boundary (Drishti: more than 10% and more than 1,000 requests of at most
 * 1 MB). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    char record[4096];
    memset(record, 'r', sizeof record);
    int fd = open("records.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 2000; i++)
        if (write(fd, record, sizeof record) != sizeof record) return 1;
    return close(fd);
}

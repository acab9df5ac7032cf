/* Records of tagged fields, as a writer of self-describing records does: five fields of
 * their own sizes, then a tag and its value in turn (2 and 3 bytes: tag, value, tag, value,
 * tag), then seven more fields: 17 writes and 81 bytes a record, a record after another.
 *
 * The single-process form of what real HPCG showed (see multigrid.c): the tracer takes the
 * third tag as the start of a short repeated block that breaks at the next field (a block
 * of no whole repetition), then the whole record as one long block. The trace builder
 * forgot the events before a block of no repetition, so it could not read the long block
 * back and dropped it without a word: 34 of 850 writes were left at 50 records (test
 * `a_short_block_that_breaks_does_not_lose_the_long_block_after_it`).
 *
 *   record_fields DIR RECORDS */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3 || chdir(argv[1]) != 0) return 2;
    long records = atol(argv[2]);
    static const int sizes[] = {2, 3, 4, 5, 6, 2, 3, 2, 3, 2, 4, 5, 6, 7, 8, 9, 10};
    char buffer[16] = {0};
    int fd = open("records.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) return 1;
    for (long record = 0; record < records; record++)
        for (int field = 0; field < 17; field++)
            if (write(fd, buffer, sizes[field]) != sizes[field]) return 1;
    return close(fd) == 0 ? 0 : 1;
}

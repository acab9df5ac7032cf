/* Calls that move bytes between two files or later than they are asked for, and the
 * metadata calls of directory walkers and temporary-file users:
 *   source    1 MiB written, then read by copy_file_range (1 MiB, at its position), by
 *             sendfile (64 KiB at 4096), by splice (32 KiB at 8192), by readahead;
 *   copied    1 MiB written by copy_file_range (two calls: 1 MiB, then 0 at the end);
 *   sent      64 KiB written by sendfile, then renamed to sent2 (renameat) and touched
 *             (utimensat);
 *   spliced   32 KiB written by splice from a pipe (filled by splice from source);
 *   async     4 × 16 KiB written by aio_write at 16 KiB steps (aio_suspend, aio_error,
 *             aio_return), then 16 KiB read back by aio_read at 16384, then 2 × 4 KiB
 *             written at 64 KiB by one lio_listio;
 *   a pipe's 100 bytes copied into another by tee (pipes: runtime noise to the summary);
 *   positions 10 + 10 bytes by fwrite with fgetpos between, fsetpos back, 5 more bytes;
 *   a tmpfile with 100 bytes, and the directory listed with opendir/readdir/closedir. */
#define _GNU_SOURCE
#include <aio.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1 << 20)

static char buffer[MIB];

static int wait_for(struct aiocb *request) {
    const struct aiocb *list[1] = {request};
    while (aio_error(request) == EINPROGRESS)
        if (aio_suspend(list, 1, NULL) != 0 && errno != EINTR) return -1;
    return aio_error(request) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    memset(buffer, 'c', sizeof buffer);
    int source = open("source", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (source < 0 || write(source, buffer, MIB) != MIB) return 1;
    if (lseek(source, 0, SEEK_SET) != 0) return 1;

    int copied = open("copied", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (copied < 0) return 1;
    ssize_t moved;
    long total = 0;
    while ((moved = copy_file_range(source, NULL, copied, NULL, 2 * MIB, 0)) > 0) total += moved;
    if (moved < 0 || total != MIB) return 3;
    if (sync_file_range(copied, 0, 0, SYNC_FILE_RANGE_WRITE) != 0) return 1;

    int sent = open("sent", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    off_t offset = 4096;
    if (sent < 0 || sendfile(sent, source, &offset, 65536) != 65536 || offset != 4096 + 65536)
        return 4;

    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) return 1;
    loff_t from = 8192;
    if (splice(source, &from, pipe_ends[1], NULL, 32768, 0) != 32768) return 5;
    int spliced = open("spliced", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (spliced < 0 || splice(pipe_ends[0], NULL, spliced, NULL, 32768, 0) != 32768) return 5;
    if (readahead(source, 0, 65536) != 0) return 1;

    int async = open("async", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (async < 0) return 1;
    struct aiocb requests[4];
    for (int i = 0; i < 4; i++) {
        memset(&requests[i], 0, sizeof requests[i]);
        requests[i].aio_fildes = async;
        requests[i].aio_buf = buffer + i * 16384;
        requests[i].aio_nbytes = 16384;
        requests[i].aio_offset = (off_t)i * 16384;
        if (aio_write(&requests[i]) != 0) return 6;
    }
    for (int i = 0; i < 4; i++)
        if (wait_for(&requests[i]) != 0 || aio_return(&requests[i]) != 16384) return 6;
    struct aiocb back;
    memset(&back, 0, sizeof back);
    back.aio_fildes = async;
    back.aio_buf = buffer;
    back.aio_nbytes = 16384;
    back.aio_offset = 16384;
    if (aio_read(&back) != 0 || wait_for(&back) != 0 || aio_return(&back) != 16384) return 6;
    struct aiocb listed[2];
    struct aiocb *list[2] = {&listed[0], &listed[1]};
    for (int i = 0; i < 2; i++) {
        memset(&listed[i], 0, sizeof listed[i]);
        listed[i].aio_fildes = async;
        listed[i].aio_buf = buffer;
        listed[i].aio_nbytes = 4096;
        listed[i].aio_offset = 65536 + i * 4096;
        listed[i].aio_lio_opcode = LIO_WRITE;
    }
    if (lio_listio(LIO_WAIT, list, 2, NULL) != 0) return 6;
    for (int i = 0; i < 2; i++)
        if (aio_return(&listed[i]) != 4096) return 6;

    int first[2], second[2];
    char copied_back[100];
    if (pipe(first) != 0 || pipe(second) != 0 || write(first[1], buffer, 100) != 100) return 1;
    if (tee(first[0], second[1], 100, 0) != 100) return 11;
    if (read(second[0], copied_back, 100) != 100 || read(first[0], copied_back, 100) != 100)
        return 11;

    FILE *positions = fopen("positions", "w+");
    fpos_t middle;
    if (!positions || fwrite(buffer, 1, 10, positions) != 10 || fgetpos(positions, &middle) != 0)
        return 7;
    if (fwrite(buffer, 1, 10, positions) != 10 || fsetpos(positions, &middle) != 0) return 7;
    if (fwrite(buffer, 1, 5, positions) != 5 || fclose(positions) != 0) return 7;

    FILE *scratch = tmpfile();
    if (!scratch || fwrite(buffer, 1, 100, scratch) != 100 || fclose(scratch) != 0) return 8;

    close(source);
    close(copied);
    close(sent);
    close(spliced);
    close(async);
    close(pipe_ends[0]);
    close(pipe_ends[1]);
    if (renameat(AT_FDCWD, "sent", AT_FDCWD, "sent2") != 0) return 9;
    if (utimensat(AT_FDCWD, "sent2", NULL, 0) != 0) return 9;

    DIR *directory = opendir(".");
    if (!directory) return 10;
    int entries = 0;
    while (readdir(directory)) entries++;
    if (closedir(directory) != 0) return 10;
    printf("%d\n", entries);
    return 0;
}

/* A second preload library that also wraps write(): counts the calls it sees and, at
 * exit, writes the count to the file named by $WRAP_WRITE_REPORT. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long calls;

ssize_t write(int fd, const void *buffer, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    calls++;
    return real(fd, buffer, count);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("WRAP_WRITE_REPORT");
    if (!path) return;
    char text[32];
    int length = snprintf(text, sizeof text, "%ld\n", calls);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    syscall(SYS_write, fd, text, length);
    syscall(SYS_close, fd);
}

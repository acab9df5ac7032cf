/* The library of toylib.h: a "dataset" is a handle from toy_open; writes and reads move
 * the bytes they are asked to (into nothing), so a traced program's figures are known. */
#include "toylib.h"

#include <stdarg.h>
#include <string.h>

#define HANDLE 42

toy_file toy_open(const char *path, int flags) { return path && flags >= 0 ? HANDLE : -1; }
int toy_close(toy_file file) { return file == HANDLE ? 0 : -1; }
long toy_write(toy_file file, const void *data, size_t size) {
    return file == HANDLE && data ? (long)size : -1;
}
long toy_read(toy_file file, void *data, size_t size) {
    if (file != HANDLE || !data) return -1;
    memset(data, 7, size);
    return (long)size;
}
int toy_flush(toy_file file) { return file == HANDLE ? 0 : -1; }
unsigned toy_version(void) { return 3; }
char *toy_name(toy_file file, char *buffer, size_t length) {
    if (file != HANDLE || length < 4) return NULL;
    strcpy(buffer, "toy");
    return buffer;
}
int toy_notify(toy_file file, toy_callback callback, int type) {
    if (file != HANDLE) return -1;
    if (callback) callback(type);
    return 0;
}
int toy_log(const char *format, ...) { return format ? 0 : -1; }
int toy_configure(toy_file file, toy_options options) { return file == HANDLE ? options.level : -1; }
long double toy_precise(toy_file file) { return file == HANDLE ? 1.5L : 0.0L; }
int toy_secret(toy_file file) { return file == HANDLE ? 7 : -1; }
int toy_helper(int value) { return value + 1; }

/* A small C library's header, for wrapgen's tests: typedef chains, pointers to text and to
 * data, a function pointer, an anonymous parameter, `(void)`, a Rust keyword as a name, and
 * functions a hook cannot forward (variadic, a struct by value, long double). */
#ifndef TOYLIB_H
#define TOYLIB_H

#include <stddef.h>
#include <stdint.h>
/* A system header: its functions (printf...) are never candidates. */
#include <stdio.h>
/* A header beside this one: its functions are. */
#include "toylib_include.h"

typedef int64_t toy_handle;
typedef toy_handle toy_file;
typedef struct toy_options { int level; } toy_options;
typedef void (*toy_callback)(int);

toy_file toy_open(const char *path, int flags);
int toy_close(toy_file file);
long toy_write(toy_file file, const void *data, size_t size);
long toy_read(toy_file file, void *data, size_t size);
int toy_flush(toy_file);
unsigned toy_version(void);
char *toy_name(toy_file file, char *buffer, size_t length);
int toy_notify(toy_file file, toy_callback callback, int type);
int toy_log(const char *format, ...);
int toy_configure(toy_file file, toy_options options);
long double toy_precise(toy_file file);
int toy_secret(toy_file file);
#define toy_create(path) toy_open(path, 1)

#endif

/* A library as distributions ship them (stripped: only exported symbols left): its exported
 * entry point calls a static function, placed after it, that does the writes. A frame in
 * that function must not be named after the exported symbol before it. Built with
 * -fno-toplevel-reorder (functions in source order) and stripped by the test. */
#include <unistd.h>

static void hidden_writes(int fd, int count);

int stripped_entry(int fd, int count) {
    hidden_writes(fd, count);
    return 0;
}

__attribute__((noinline)) static void hidden_writes(int fd, int count) {
    for (int i = 0; i < count; i++)
        if (write(fd, "stripped", 8) != 8) return;
}

/* Bytes the tracer cannot see: 1 MiB written with write() to seen.dat, and, with an
 * argument, 1 MiB more with syscall(SYS_write) to raw.dat (as programs that bypass libc do,
 * and statically linked code or io_uring's read/write would). The kernel's own counters
 * (/proc/self/io) tell the difference.
 *
 *   raw_syscalls DIR [raw] */
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    static char block[65536];
    memset(block, 'x', sizeof block);
    int seen = open("seen.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    int raw = open("raw.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 16; i++)
        if (write(seen, block, sizeof block) != sizeof block) return 1;
    if (argc > 2)
        for (int i = 0; i < 16; i++)
            if (syscall(SYS_write, raw, block, sizeof block) != sizeof block) return 1;
    close(seen);
    close(raw);
    return 0;
}

/* Files whose names a report must show as text and never run: one under a directory named
 * "<script>alert(1)<" (so its path reads "<script>alert(1)</script>"), one named like an
 * HTML image tag whose error handler retitles the page, one with a newline, one with a byte
 * that is not UTF-8. Each gets one 10-byte write. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    if (mkdir("<script>alert(1)<", 0755) != 0) return 3;
    const char *names[] = {
        "<script>alert(1)</script>",
        "<img src=x onerror=\"document.title='pwned'\">",
        "two\nlines.dat",
        "bad\xff.dat",
    };
    for (int i = 0; i < 4; i++) {
        int fd = open(names[i], O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "0123456789", 10) != 10) return 1;
        close(fd);
    }
    return 0;
}

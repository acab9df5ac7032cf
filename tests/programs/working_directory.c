/* Relative names after the working directory changes, as codes that chdir into a run
 * directory do (and Fortran's CALL CHDIR, Python's os.chdir): the tracer names each file
 * against the directory of the moment, whichever thread moved it, by chdir or fchdir, and
 * a failed chdir leaves errno as the C library set it.
 *
 *   working_directory DIR
 *
 * DIR/a/f 10 B, DIR/b/f 20 B, DIR/a/g 30 B (after another thread went back to a),
 * DIR/a/h 40 B (after fchdir), DIR/a/i 50 B (after a chdir that failed). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(const char *name, size_t bytes) {
    char buffer[64];
    memset(buffer, 'x', sizeof buffer);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buffer, bytes) != (ssize_t)bytes || close(fd) != 0) exit(2);
}

static void *back_to_a(void *unused) {
    (void)unused;
    if (chdir("../a") != 0) exit(4);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 1;
    if (mkdir("a", 0755) != 0 || mkdir("b", 0755) != 0) return 1;
    if (chdir("a") != 0) return 1;
    put("f", 10);
    int a = open(".", O_RDONLY | O_DIRECTORY);
    if (a < 0 || chdir("../b") != 0) return 1;
    put("f", 20);
    pthread_t thread;
    if (pthread_create(&thread, NULL, back_to_a, NULL) != 0 || pthread_join(thread, NULL) != 0)
        return 1;
    put("g", 30);
    if (chdir("../b") != 0 || fchdir(a) != 0) return 1;
    put("h", 40);
    errno = 0;
    if (chdir("missing") != -1 || errno != ENOENT) return 3;
    put("i", 50);
    return close(a);
}

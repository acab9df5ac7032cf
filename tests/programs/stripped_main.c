/* Calls the stripped library's entry point (3 writes from inside it), then writes once
 * itself. */
#include <fcntl.h>
#include <unistd.h>

int stripped_entry(int fd, int count);

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0) return 2;
    int fd = open("stripped.out", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || stripped_entry(fd, 3) != 0 || write(fd, "main", 4) != 4) return 1;
    close(fd);
    return 0;
}

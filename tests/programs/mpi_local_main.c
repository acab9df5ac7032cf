/* Loads mpi_local_ext (argv[1]) with RTLD_LOCAL and runs it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "%s\n", dlerror());
        return 3;
    }
    int (*run)(int, char **) = (int (*)(int, char **))dlsym(plugin, "run");
    return run ? run(argc, argv) : 4;
}

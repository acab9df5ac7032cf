/* The C-variadic stdio hooks. Rust cannot define variadic functions on stable, so these
 * small wrappers turn `...` into a va_list, call the real v-function, and let the Rust side
 * (cairn_stdio_begin / cairn_stdio_end) time and record the call. They are declared in the
 * call table like every other hook (crates/model/src/calls.rs, `custom` rows). */
#include <stdarg.h>

/* Not <stdio.h>: it redirects `fscanf` to `__isoc99_fscanf` by an asm label, which would
 * make the two definitions below collide. */
typedef struct _IO_FILE FILE;

/* Opaque to C: the Rust side keeps its per-call state here between begin and end. */
struct cairn_pending {
    unsigned long long opaque[4];
};

/* Which hook is calling: must match `ShimCall` in src/hooks.rs. */
enum {
    SHIM_FPRINTF = 0,
    SHIM_VFPRINTF = 1,
    SHIM_FPRINTF_CHK = 2,
    SHIM_VFPRINTF_CHK = 3,
    SHIM_FSCANF = 4,
    SHIM_ISOC99_FSCANF = 5,
    SHIM_VFSCANF = 6,
    SHIM_ISOC99_VFSCANF = 7,
};

/* A hook's name: the function's own when preloaded; `__wrap_` + it when linked into a
 * static program with `ld --wrap` (built with CAIRN_WRAP, see crates/preload-static). */
#ifdef CAIRN_WRAP
#define HOOK(name) __wrap_##name
#else
#define HOOK(name) name
#endif

int cairn_stdio_begin(struct cairn_pending *pending);
void cairn_stdio_end(struct cairn_pending *pending, int call, FILE *stream, long long result);
/* The next definition of the real v-function that a hook forwards to. */
void *cairn_real_function(int call);

typedef int (*vfprintf_fn)(FILE *, const char *, va_list);
typedef int (*vfprintf_chk_fn)(FILE *, int, const char *, va_list);
typedef int (*vfscanf_fn)(FILE *, const char *, va_list);

__attribute__((noinline)) static int traced_vfprintf(int call, FILE *stream, const char *format, va_list args) {
    vfprintf_fn real = (vfprintf_fn)cairn_real_function(SHIM_VFPRINTF);
    struct cairn_pending pending;
    if (!cairn_stdio_begin(&pending))
        return real(stream, format, args);
    int result = real(stream, format, args);
    cairn_stdio_end(&pending, call, stream, result);
    return result;
}

__attribute__((noinline)) static int traced_vfprintf_chk(int call, FILE *stream, int flag, const char *format, va_list args) {
    vfprintf_chk_fn real = (vfprintf_chk_fn)cairn_real_function(SHIM_VFPRINTF_CHK);
    struct cairn_pending pending;
    if (!cairn_stdio_begin(&pending))
        return real(stream, flag, format, args);
    int result = real(stream, flag, format, args);
    cairn_stdio_end(&pending, call, stream, result);
    return result;
}

__attribute__((noinline)) static int traced_vfscanf(int call, int real_call, FILE *stream, const char *format, va_list args) {
    vfscanf_fn real = (vfscanf_fn)cairn_real_function(real_call);
    struct cairn_pending pending;
    if (!cairn_stdio_begin(&pending))
        return real(stream, format, args);
    int result = real(stream, format, args);
    cairn_stdio_end(&pending, call, stream, result);
    return result;
}

int HOOK(fprintf)(FILE *stream, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int result = traced_vfprintf(SHIM_FPRINTF, stream, format, args);
    va_end(args);
    return result;
}

int HOOK(vfprintf)(FILE *stream, const char *format, va_list args) {
    return traced_vfprintf(SHIM_VFPRINTF, stream, format, args);
}

int HOOK(__fprintf_chk)(FILE *stream, int flag, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int result = traced_vfprintf_chk(SHIM_FPRINTF_CHK, stream, flag, format, args);
    va_end(args);
    return result;
}

int HOOK(__vfprintf_chk)(FILE *stream, int flag, const char *format, va_list args) {
    return traced_vfprintf_chk(SHIM_VFPRINTF_CHK, stream, flag, format, args);
}

int HOOK(fscanf)(FILE *stream, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int result = traced_vfscanf(SHIM_FSCANF, SHIM_VFSCANF, stream, format, args);
    va_end(args);
    return result;
}

int HOOK(__isoc99_fscanf)(FILE *stream, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int result = traced_vfscanf(SHIM_ISOC99_FSCANF, SHIM_ISOC99_VFSCANF, stream, format, args);
    va_end(args);
    return result;
}

int HOOK(vfscanf)(FILE *stream, const char *format, va_list args) {
    return traced_vfscanf(SHIM_VFSCANF, SHIM_VFSCANF, stream, format, args);
}

int HOOK(__isoc99_vfscanf)(FILE *stream, const char *format, va_list args) {
    return traced_vfscanf(SHIM_ISOC99_VFSCANF, SHIM_ISOC99_VFSCANF, stream, format, args);
}

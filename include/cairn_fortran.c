/* Fortran phase marks that link without cairn: compile this file with a Fortran program
 * that calls `cairn_phase_begin("name")` / `cairn_phase_end("name")` (gfortran's names and
 * hidden lengths). They hand the name to the C marks of cairn.h, which the preloaded
 * tracer defines under `cairn run`; without the tracer they do nothing. */
#include <stddef.h>
#include <string.h>

#include "cairn.h"

/* The name without Fortran's blank padding, NUL-terminated (cut at 256 bytes). */
static void c_name(char *out, const char *name, size_t length) {
    if (length > 256)
        length = 256;
    while (length > 0 && name[length - 1] == ' ')
        length--;
    memcpy(out, name, length);
    out[length] = 0;
}

void cairn_phase_begin_(const char *name, size_t length) {
    char buffer[257];
    if (!cairn_phase_begin)
        return;
    c_name(buffer, name, length);
    cairn_phase_begin(buffer);
}

void cairn_phase_end_(const char *name, size_t length) {
    char buffer[257];
    if (!cairn_phase_end)
        return;
    c_name(buffer, name, length);
    cairn_phase_end(buffer);
}

/* cairn.h: mark phases of a program for cairn (https://…/cairn, docs in README.md).
 *
 *     #include "cairn.h"
 *     cairn_phase_begin("checkpoint");
 *     write_checkpoint();
 *     cairn_phase_end("checkpoint");
 *
 * `cairn summary` then attributes the calls made between the marks to the phase (calls,
 * bytes, time, per layer). Phases may nest; a call belongs to the innermost one.
 *
 * The functions are declared weak: a program built with this header links without cairn,
 * and when it runs without the tracer the marks do nothing (the macros below check that
 * the tracer defined them). Under `cairn run` the preloaded tracer defines them.
 *
 * Fortran: compile include/cairn_fortran.c with the program, then
 * `call cairn_phase_begin("checkpoint")` … `call cairn_phase_end("checkpoint")`. */
#ifndef CAIRN_H
#define CAIRN_H

#ifdef __cplusplus
extern "C" {
#endif

void cairn_phase_begin(const char *name) __attribute__((weak));
void cairn_phase_end(const char *name) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* A mark that does nothing when the tracer is not there. */
#define CAIRN_PHASE_BEGIN(name) \
    do { if (cairn_phase_begin) cairn_phase_begin(name); } while (0)
#define CAIRN_PHASE_END(name) \
    do { if (cairn_phase_end) cairn_phase_end(name); } while (0)

#endif

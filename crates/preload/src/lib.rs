//! `libcairn.so`, the preload library: it captures a program's I/O calls and nothing else.
//!
//! Design decisions (measured on this machine, see shared/PRELOAD-NOTES.md):
//! - Hooks are generated from the call table in `cairn-model` ([`hooks`]); each forwards to
//!   the next definition (`dlsym(RTLD_NEXT)`), so other preload libraries keep working.
//! - Events go straight into a per-thread chunk of a file mapped `MAP_SHARED`
//!   ([`recorder`]): no lock on the hot path, nothing lost on `SIGKILL`, `_exit` or `exec`,
//!   and bounded memory (one chunk per thread). Analysis never happens here; `cairn` turns
//!   the staging segments into a trace afterwards.
//! - The traced program must not notice: `errno` is saved and restored, our own I/O uses raw
//!   system calls, our own memory never comes from libc's `malloc` ([`allocator`]), a thread-local re-entry flag keeps our work out of the trace, and a panic
//!   switches tracing off instead of unwinding into C.
//!
//! Configuration (environment): `CAIRN_DIR` = directory for staging segments (default
//! `./cairn-trace.d`), `CAIRN_DISABLE=1` = load but trace nothing.

mod adapters;
mod allocator;
mod clock;
mod context;
mod files;
mod hooks;
mod lifecycle;
mod real;
mod recorder;
mod spin;
mod sys;

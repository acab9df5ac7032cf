//! `libcairn.so`, the preload library: it captures a program's I/O calls and nothing else.
//!
//! Design decisions (measured on this machine, see shared/PRELOAD-NOTES.md):
//! - Hooks are generated from the call table in `cairn-model` (`hooks.rs`); each forwards to
//!   the next definition (`dlsym(RTLD_NEXT)`), so other preload libraries keep working.
//! - Events go straight into a per-thread chunk of a file mapped `MAP_SHARED`
//!   (`recorder.rs`): no lock on the hot path, nothing lost on `SIGKILL`, `_exit` or `exec`,
//!   and bounded memory (one chunk per thread). Folding starts here, as cheaply as it can:
//!   a call repeating the thread's previous one is added in place to a run record
//!   (`recorder.rs`), so a loop of one call does not grow the staging file. Everything else
//!   (longer loops, the trace) is `cairn`'s, afterwards — at `MPI_Finalize` too, where this
//!   library only runs `cairn` and moves the ranks' traces over PMPI (`finalize.rs`).
//! - MPI is resolved at run time and works with Open MPI's and MPICH's ABIs
//!   (`cairn-mpi-abi`, shared with the replayer).
//! - The traced program must not notice: `errno` is saved and restored, our own I/O uses raw
//!   system calls, our own memory never comes from libc's `malloc` (`allocator.rs`), a thread-local re-entry flag keeps our work out of the trace, and a panic
//!   switches tracing off instead of unwinding into C.
//!
//! Configuration (environment): `CAIRN_DIR` = directory for staging segments (default
//! `./cairn-trace.d`), `CAIRN_DISABLE=1` = load but trace nothing, `CAIRN_OUTPUT` = the
//! trace an MPI job's rank 0 writes at `MPI_Finalize` (with `CAIRN_MERGE_FANIN`,
//! `CAIRN_RUNTIME_IO`, `CAIRN_PRECISION`, `CAIRN_BIN`, `CAIRN_QUIET`), `CAIRN_RUNS=0` = stage
//! every call as its own record (no run records).
//!
//! The same source builds `libcairn_static.a` (crates/preload-static, `cfg(cairn_wrap)`),
//! linked into static programs with `ld --wrap` (`cairn link-flags`): each hook is then
//! named `__wrap_X` and its real function is the linker's `__real_X`.

// Hooks keep their C names (`MPI_Comm_split`); `export_name` does not silence the lint as
// `no_mangle` does.
#![cfg_attr(cairn_wrap, allow(non_snake_case))]

mod adapters;
mod allocator;
mod clock;
mod communicators;
mod context;
mod files;
mod finalize;
mod handles;
mod header_page;
mod hooks;
mod lifecycle;
/// The MPI binary interfaces, shared with the replayer (`cairn-mpi-abi`).
use cairn_mpi_abi as mpi_abi;
mod pairs;
mod persistent;
mod phases;
mod real;
mod receives;
mod recorder;
mod spin;
mod sys;

//! Analyses of a [`cairn_trace::Trace`], one module each, all fed by walking the trace's
//! event streams once.
//!
//! - [`summary`]: per file, per call, per layer and per process: counts, bytes, time, size
//!   statistics, Darshan's access-size histogram, sequential and consecutive accesses.
//! - [`kernel_io`]: the kernel's own count of each process's reads and writes against the
//!   trace's: what went through calls cairn does not see.
//! - [`messages`]: MPI bytes sent, received (from the statuses) and posted for.
//! - [`layers`]: per I/O layer, operations, access sizes (histogram, most common),
//!   sequential and consecutive shares, I/O time per rank (mean, slowest, variance).
//! - [`stack`]: each MPI-IO call and what it became at the POSIX layer; each library call
//!   (HDF5) and what it became at the MPI-IO, MPI and POSIX layers below.
//! - [`alignment`]: misaligned POSIX requests (the one analysis that expands the trace,
//!   up to a limit of events).
//! - [`insights`]: Drishti's rules on the summary's figures (small or random requests,
//!   imbalance, no collective or non-blocking MPI-IO, stdio, metadata time, redundant reads).
//!
//! Design decision: figures are computed from the trace alone (never from the preload
//! library), so any trace file can be analysed anywhere; runtime noise is excluded by
//! default and counted separately, so what is hidden is always said.

pub mod alignment;
pub mod insights;
pub mod kernel_io;
pub mod layers;
pub mod messages;
pub mod phases;
pub mod precision;
pub mod stack;
pub mod summary;

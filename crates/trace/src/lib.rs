//! The trace as a program sees it: [`Trace`] holds the run's processes, files, calling
//! contexts and per-thread event streams, and is the only entry point the analyses, the
//! report and the command line use.
//!
//! - [`Trace::open`] reads and validates a trace file; event streams stay encoded and are
//!   decoded lazily, one event at a time ([`Stream::events`]), so a large trace is never
//!   expanded in memory.
//! - [`collect::collect`] builds a trace from the staging segments the preload library left
//!   in a directory (what `cairn run` does when the program ends, and `cairn merge` does by
//!   hand). It reconstructs what the hot path leaves out on purpose: offsets of `read` /
//!   `write` / `fread` (tracked per open file description, across `dup` and threads), the
//!   process tree (fork and exec), and which files are runtime noise ([`noise`]).
//! - [`merge::merge_traces`] merges whole traces (per-rank traces, partial merges of a
//!   tree) into one; [`synthetic`] generates per-rank traces of an SPMD program to measure
//!   that merge at scales this machine cannot run.
//!
//! Design decision: the file names its calls (CALLS section) and the reader maps names to
//! [`cairn_model::Call`] by name, so traces from other builds stay readable.

pub mod collect;
mod data;
mod elf;
mod handles;
pub mod merge;
mod names;
pub mod noise;
pub mod ranks;
pub mod symbols;
pub mod synthetic;
mod table;
pub mod walk;

pub use data::*;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum TraceError {
    #[error(transparent)]
    Format(#[from] cairn_format::FormatError),
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, TraceError>;

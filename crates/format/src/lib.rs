//! The one place cairn's file formats live (specification: `docs/FORMAT.md`).
//!
//! - [`container`]: the trace file. A fixed header, then sections, then a section table and
//!   a footer that points at it. Each section has a kind, a version, a CRC-32 and is
//!   optionally zstd-compressed, so new kinds of data (loops, ranklists, histograms) are new
//!   sections or new section versions, never a rewrite, and a reader skips what it does not
//!   know.
//! - [`segment`]: the staging files the preload library writes while a program runs: one
//!   file per process image, cut into per-thread chunks of fixed-size records, designed to
//!   survive `SIGKILL` because they are shared file mappings.
//! - [`bytes`]: bounds-checked varint and byte-string reading and writing used by both.
//!
//! Design decisions: every length read from a file is checked against the bytes that are
//! really there before anything is allocated, so a truncated, corrupt or hostile file gives
//! a [`FormatError`] and never a panic or a huge allocation.

pub mod bytes;
pub mod container;
pub mod segment;

use thiserror::Error;

/// Why a file could not be read or written.
#[derive(Debug, Error)]
pub enum FormatError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("not a cairn trace (bad magic number)")]
    NotATrace,
    #[error(
        "trace format version {major}.{minor} is not supported (this cairn reads {supported}.x)"
    )]
    UnsupportedVersion {
        major: u16,
        minor: u16,
        supported: u16,
    },
    #[error("truncated: {0}")]
    Truncated(String),
    #[error("corrupt: {0}")]
    Corrupt(String),
    #[error("checksum mismatch in section {0}")]
    Checksum(String),
}

impl FormatError {
    pub fn io(path: &std::path::Path, source: std::io::Error) -> FormatError {
        FormatError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, FormatError>;

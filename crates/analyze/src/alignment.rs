//! Misaligned requests: POSIX reads and writes whose file offset is not a multiple of the
//! file system's alignment (Darshan's `POSIX_FILE_NOT_ALIGNED`; Drishti flags more than
//! 10%). A request that straddles two blocks makes the file system read or lock both.
//!
//! The only figure that needs every access's offset, so the one analysis that expands the
//! trace: it does so for traces of up to a limit of events (a thresholds field) and
//! otherwise says it did not judge. MPI-IO's offsets (in etypes of a view) are left out;
//! the POSIX calls the MPI library makes inside MPI-IO calls are counted, as Darshan's
//! POSIX module counts them.

use std::collections::HashMap;

use cairn_model::{event_flags, CallClass, Layer};
use cairn_trace::Trace;
use serde::Serialize;

/// A file's POSIX reads and writes at a known offset, and how many were misaligned.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Alignment {
    pub accesses: u64,
    pub misaligned: u64,
}

/// Per trace file index, its counts; `None` when the trace has more than `limit` events
/// (not judged).
pub fn count(
    trace: &Trace,
    include_noise: bool,
    alignment: u64,
    limit: u64,
) -> Option<HashMap<u32, Alignment>> {
    let events: u64 = trace.streams.iter().map(|stream| stream.count).sum();
    if events > limit {
        return None;
    }
    let alignment = alignment.max(1);
    let mut files: HashMap<u32, Alignment> = HashMap::new();
    for stream in &trace.streams {
        trace.expand(stream, |event| {
            let call = &trace.calls[event.call as usize];
            let Some(file) = event.file else {
                return;
            };
            let noise = trace.files[file as usize].noise.is_some()
                || event.flags & event_flags::RUNTIME != 0;
            if call.layer() != Some(Layer::Posix)
                || !matches!(call.class(), Some(CallClass::Read | CallClass::Write))
                || event.failed()
                || event.offset < 0
                || (noise && !include_noise)
            {
                return;
            }
            let entry = files.entry(file).or_default();
            entry.accesses += 1;
            if !(event.offset as u64).is_multiple_of(alignment) {
                entry.misaligned += 1;
            }
        });
    }
    Some(files)
}

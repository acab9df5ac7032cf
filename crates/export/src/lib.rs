//! cairn traces in the formats of the tools people already use. One module per format,
//! each reading a [`cairn_trace::Trace`] through its public API and writing as it goes, so
//! memory stays bounded by one stream's pending events, never by the expanded trace.
//!
//! - [`perfetto`]: Perfetto's protobuf trace (`ui.perfetto.dev`, its trace processor):
//!   a track per process, per thread and per layer, a slice per call, flows from each
//!   MPI-IO call to the POSIX calls the MPI library made inside it.
//!
//! Design decision: loops are expanded event by event with the times the trace kept
//! (exact for calls that did not fold; a folded leaf's events get its mean duration and
//! gap), and the output says so in its metadata rather than per slice.

pub mod perfetto;

/// What can go wrong while exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("writing the export: {0}")]
    Io(#[from] std::io::Error),
}

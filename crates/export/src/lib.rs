//! cairn traces in the formats of the tools people already use. One module per format,
//! each reading a [`cairn_trace::Trace`] through its public API and writing as it goes, so
//! memory stays bounded by one stream's pending events, never by the expanded trace.
//!
//! - [`perfetto`]: Perfetto's protobuf trace (`ui.perfetto.dev`, its trace processor):
//!   a track per process, per thread and per layer, a slice per call, flows from each
//!   MPI-IO call to the POSIX calls the MPI library made inside it.
//! - [`chrome`]: Chrome's JSON trace-event format, for small traces and tools that read
//!   only it.
//! - [`csv`]: the events as a table, a row per call, for pandas, R or SQL.
//! - [`otf2`]: an OTF2 archive (Vampir, the Score-P tools) through libotf2, loaded at run
//!   time so that cairn needs it only for this format.
//!
//! Both take a [`Filter`]: ranks, layers, a time window, runtime noise or not.
//!
//! Design decision: loops are expanded event by event with the times the trace kept
//! (exact for calls that did not fold; a folded leaf's events get its mean duration and
//! gap), and the output says so in its metadata rather than per slice.

pub mod chrome;
pub mod csv;
pub mod otf2;
pub mod parquet;
pub mod perfetto;
pub mod table;

use cairn_model::{event_flags, Event, Layer};
use cairn_trace::{Process, Stream, Trace};

/// The peer and tag of a point-to-point message event (one that names no file), or the
/// source (and no tag) of a completion of one receive that kept it (`MPI_Wait` on an
/// `MPI_Irecv`: where the message came from); `None` for every other event.
pub(crate) fn message(trace: &Trace, event: &Event) -> Option<(i32, Option<i32>)> {
    match trace.calls[event.call as usize].class() {
        Some(cairn_model::CallClass::PointToPoint) if event.file.is_none() => {
            let (peer, tag) = cairn_model::peer_and_tag(event.aux);
            Some((peer, Some(tag)))
        }
        Some(cairn_model::CallClass::Completion) => {
            cairn_model::completion_source(event.aux, event.flags).map(|source| (source, None))
        }
        _ => None,
    }
}

/// Which of a thread's posted receives — (source, what the exporter keeps of each), oldest
/// first — the completion `event` finished, taken out: for a completion of one receive that
/// kept its source, the earliest posted from it; for one that names no source but got
/// bytes (an `MPI_Waitall` of receives), all of them; otherwise (a test that found nothing
/// finished, a wait on sends) none. Both the Perfetto and the OTF2 export draw a posted
/// receive's message as arriving there.
pub(crate) fn finished_receives<T>(posted: &mut Vec<(u32, T)>, event: &Event) -> Vec<(u32, T)> {
    if event.failed() {
        return Vec::new();
    }
    match cairn_model::completion_source(event.aux, event.flags) {
        Some(source) => posted
            .iter()
            .position(|(peer, _)| i64::from(*peer) == i64::from(source))
            .map(|index| posted.remove(index))
            .into_iter()
            .collect(),
        None if event.result > 0 => std::mem::take(posted),
        None => Vec::new(),
    }
}

/// Told how many events were walked since it was last told (every [`PROGRESS_STEP`] events
/// and at the end of each stream): a progress bar's feed.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Progress")
    }
}

/// Events walked between two reports to a [`Progress`].
pub const PROGRESS_STEP: u64 = 1 << 16;

/// A call the MPI library made inside an MPI-IO call (a POSIX call, or MPI communication).
pub fn is_subcall(trace: &Trace, event: &Event) -> bool {
    event.flags & event_flags::INSIDE_MPIIO != 0
        && trace.calls[event.call as usize].layer() != Some(Layer::MpiIo)
}

/// Which events an export keeps, and who is told how far the walk went.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Also the runtime's own I/O and calls on files that are not the program's (noise),
    /// which the summary leaves out.
    pub all: bool,
    /// Only these ranks (inclusive ranges); processes without a rank are kept only when
    /// this is `None`.
    pub ranks: Option<Vec<(u32, u32)>>,
    /// Only calls of these layers.
    pub layers: Option<Vec<Layer>>,
    /// Only calls that start in this window, ns since the run's start (inclusive, exclusive).
    pub time: Option<(u64, u64)>,
    pub progress: Option<Progress>,
}

impl Filter {
    pub fn keeps_process(&self, process: &Process) -> bool {
        match (&self.ranks, process.rank) {
            (None, _) => true,
            (Some(ranges), Some(rank)) => ranges
                .iter()
                .any(|(first, last)| (*first..=*last).contains(&rank)),
            (Some(_), None) => false,
        }
    }

    /// Expands `stream`, visiting the events this filter keeps until `visit` returns false,
    /// and reports the walk's progress.
    pub fn expand(&self, trace: &Trace, stream: &Stream, mut visit: impl FnMut(Event) -> bool) {
        let mut walked = 0u64;
        trace.expand_while(stream, |event| {
            walked += 1;
            if walked == PROGRESS_STEP {
                if let Some(Progress(progress)) = &self.progress {
                    progress(walked);
                }
                walked = 0;
            }
            !self.keeps_event(trace, &event) || visit(event)
        });
        if let Some(Progress(progress)) = &self.progress {
            progress(walked);
        }
    }

    /// [`Filter::expand`], handing each call with the calls the MPI library made inside it
    /// (`subcalls`; empty for all but MPI-IO calls). Those are recorded before their MPI-IO
    /// call (a call is recorded when it returns), so they wait for the next call that is not
    /// one. Sub-calls no call followed (it was filtered out, or never returned) are handed at
    /// the end, each alone; [`is_subcall`] tells them apart.
    pub fn expand_calls(
        &self,
        trace: &Trace,
        stream: &Stream,
        mut visit: impl FnMut(Event, &[Event]) -> bool,
    ) {
        let mut subcalls: Vec<Event> = Vec::new();
        let mut going = true;
        self.expand(trace, stream, |event| {
            if is_subcall(trace, &event) {
                subcalls.push(event);
                return true;
            }
            going = visit(event, &subcalls);
            subcalls.clear();
            going
        });
        for subcall in subcalls {
            if !going {
                break;
            }
            going = visit(subcall, &[]);
        }
    }

    pub fn keeps_event(&self, trace: &Trace, event: &Event) -> bool {
        let noise = event
            .file
            .is_some_and(|file| trace.files[file as usize].noise.is_some());
        if !self.all && (noise || event.flags & event_flags::RUNTIME != 0) {
            return false;
        }
        if let Some(layers) = &self.layers {
            let layer = trace.calls[event.call as usize].layer();
            if !layer.is_some_and(|layer| layers.contains(&layer)) {
                return false;
            }
        }
        self.time
            .is_none_or(|(from, to)| (from..to).contains(&event.start))
    }
}

/// What can go wrong while exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("writing the export: {0}")]
    Io(#[from] std::io::Error),
    #[error("OTF2: {0}")]
    Otf2(String),
    #[error("Parquet: {0}")]
    Parquet(String),
    #[error("summarising the trace: {0}")]
    Summary(String),
    /// The consumer of a stream of events went away (a Python iterator dropped).
    #[error("the reader stopped")]
    Stopped,
}

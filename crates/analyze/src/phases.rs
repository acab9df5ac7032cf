//! Phases the program marked (`cairn_phase_begin("checkpoint")` … `cairn_phase_end`, see
//! include/cairn.h): the calls made between a phase's marks, per phase — how many, the
//! bytes read and written, the time in them, per layer — so a user sees what the
//! checkpoint cost against the restart or the solver, as Score-P's regions do for time.
//!
//! Fed one occurrence at a time by the summary's walk, which visits a stream's folded
//! structure in order (a loop's body once, for all its iterations): each stream keeps a
//! stack of open phases, a mark pushes or pops it, and a call belongs to the innermost
//! phase open at its place in the structure. A loop whose iterations each begin and end a
//! phase is attributed exactly; marks that open in one iteration and close in the next
//! are out of reach of a walk that does not expand the loop (the calls then count where
//! the structure puts them). Calls outside every phase are kept under no name, so the
//! phases and the rest add up to the summary's totals.
//!
//! Without touching the program, functions can be named as phases (`cairn summary
//! --phases write_checkpoint,read_restart`, or `CAIRN_PHASES`): a call whose calling
//! context (the frames the tracer kept, symbolised) holds one of them belongs to the
//! innermost. A function deeper than the kept frames is not seen.

use std::collections::{BTreeMap, HashMap};

use cairn_model::{CallClass, Layer};
use cairn_trace::symbols::Symbolizer;
use cairn_trace::walk::Occurrence;
use cairn_trace::Trace;
use serde::Serialize;

/// The marks' calls.
pub const BEGIN: &str = "cairn_phase_begin";
pub const END: &str = "cairn_phase_end";
/// How a phase's name is kept as its marks' file.
pub const PREFIX: &[u8] = b"phase:";

/// What was done inside one phase (or outside all of them).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PhaseSummary {
    /// The phase's name; empty for the calls outside every phase.
    pub name: String,
    /// How many times it began (0 for the calls outside, and for a function's phase,
    /// whose calls are not traced).
    pub occurrences: u64,
    /// A function named as a phase (`--phases`), not marks.
    pub function: bool,
    /// Calls made in it (its marks and the phases nested in it aside).
    pub calls: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Seconds spent in its calls.
    pub time: f64,
    /// Calls, bytes and seconds per layer (`posix`, `stdio`, `mpiio`, `mpi`).
    pub layers: BTreeMap<String, LayerShare>,
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct LayerShare {
    pub calls: u64,
    pub bytes: u64,
    pub time: f64,
}

/// The phases being attributed during a walk.
#[derive(Default)]
pub struct Phases {
    /// Calling contexts (as events number them) inside a function named as a phase: the
    /// innermost such function.
    functions: HashMap<u32, String>,
    /// Per stream (by address), the open phases, innermost last.
    open: HashMap<usize, Vec<String>>,
    phases: BTreeMap<String, PhaseSummary>,
    /// Whether any mark was seen (without one, no phases are reported).
    marked: bool,
}

impl Phases {
    /// Phases marked by the program, and the calls of `functions` (a call whose calling
    /// context holds one of them counts in the innermost, before any mark): each of the
    /// trace's contexts is named once, here.
    pub fn new(trace: &Trace, functions: &[String]) -> Phases {
        let mut phases = Phases::default();
        if functions.is_empty() {
            return phases;
        }
        phases.marked = true;
        let mut symbols = Symbolizer::new(trace);
        for context in 1..=trace.contexts.len() as u32 {
            // Frames run from the call site outwards: the first listed one is innermost.
            let inside = symbols
                .frames(context)
                .into_iter()
                .find(|frame| functions.contains(&frame.function));
            if let Some(frame) = inside {
                phases.functions.insert(context, frame.function);
            }
        }
        for function in functions {
            phases.phases.insert(
                function.clone(),
                PhaseSummary {
                    name: function.clone(),
                    function: true,
                    ..PhaseSummary::default()
                },
            );
        }
        phases
    }

    /// Whether `occurrence` is a phase mark (to be handed to [`Phases::mark`], not counted
    /// as I/O).
    pub fn is_mark(occurrence: &Occurrence) -> bool {
        occurrence.layer == Layer::Process
            && (occurrence.call.name == BEGIN || occurrence.call.name == END)
    }

    /// A begin or end mark: opens or closes its phase in its stream.
    pub fn mark(&mut self, occurrence: &Occurrence) {
        self.marked = true;
        let name = occurrence
            .file
            .map(|file| {
                let path = &occurrence.trace.files[file as usize].path;
                String::from_utf8_lossy(path.strip_prefix(PREFIX).unwrap_or(path)).into_owned()
            })
            .unwrap_or_default();
        let stack = self
            .open
            .entry(occurrence.stream as *const _ as usize)
            .or_default();
        if occurrence.call.name == BEGIN {
            self.phases
                .entry(name.clone())
                .or_insert_with(|| PhaseSummary {
                    name: name.clone(),
                    ..PhaseSummary::default()
                })
                .occurrences += occurrence.count;
            stack.push(name);
        } else if let Some(at) = stack.iter().rposition(|open| *open == name) {
            // An end closes its phase and any left open inside it.
            stack.truncate(at);
        }
    }

    /// A call: counted in the function phase its context is in, else in the innermost
    /// phase open in its stream.
    pub fn add(&mut self, occurrence: &Occurrence) {
        let name = self
            .functions
            .get(&occurrence.key.context)
            .or_else(|| {
                self.open
                    .get(&(occurrence.stream as *const _ as usize))
                    .and_then(|stack| stack.last())
            })
            .cloned()
            .unwrap_or_default();
        let phase = self
            .phases
            .entry(name.clone())
            .or_insert_with(|| PhaseSummary {
                name,
                ..PhaseSummary::default()
            });
        let bytes = if !occurrence.failed() {
            occurrence.counted_bytes()
        } else {
            0
        };
        // The POSIX calls an MPI-IO call made moved the bytes it counts already.
        let io = (matches!(occurrence.layer, Layer::Posix | Layer::Stdio | Layer::MpiIo)
            || occurrence.layer.is_library())
            && !occurrence.inside_mpiio()
            && !occurrence.inside_library();
        match occurrence.class {
            CallClass::Read if io => phase.bytes_read += bytes,
            CallClass::Write if io => phase.bytes_written += bytes,
            _ => {}
        }
        phase.calls += occurrence.count;
        phase.time += occurrence.time / 1e9;
        let layer = phase
            .layers
            .entry(occurrence.layer.name().to_string())
            .or_default();
        layer.calls += occurrence.count;
        layer.bytes += bytes;
        layer.time += occurrence.time / 1e9;
    }

    /// The phases in order of name, the calls outside them first; nothing for a program
    /// that marked none.
    pub fn finish(self) -> Vec<PhaseSummary> {
        if !self.marked {
            return Vec::new();
        }
        self.phases.into_values().collect()
    }
}

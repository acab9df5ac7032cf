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

use std::collections::{BTreeMap, HashMap};

use cairn_model::{CallClass, Layer};
use cairn_trace::walk::Occurrence;
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
    /// How many times it began (0 for the calls outside).
    pub occurrences: u64,
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
    /// Per stream (by address), the open phases, innermost last.
    open: HashMap<usize, Vec<String>>,
    phases: BTreeMap<String, PhaseSummary>,
    /// Whether any mark was seen (without one, no phases are reported).
    marked: bool,
}

impl Phases {
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

    /// A call: counted in the innermost phase open in its stream.
    pub fn add(&mut self, occurrence: &Occurrence) {
        let name = self
            .open
            .get(&(occurrence.stream as *const _ as usize))
            .and_then(|stack| stack.last())
            .cloned()
            .unwrap_or_default();
        let phase = self
            .phases
            .entry(name.clone())
            .or_insert_with(|| PhaseSummary {
                name,
                ..PhaseSummary::default()
            });
        let bytes = if occurrence.class.moves_data() && !occurrence.failed() {
            occurrence.bytes()
        } else {
            0
        };
        // The POSIX calls an MPI-IO call made moved the bytes it counts already.
        let io = matches!(occurrence.layer, Layer::Posix | Layer::Stdio | Layer::MpiIo)
            && !occurrence.inside_mpiio();
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

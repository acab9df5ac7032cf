//! The summary: what the program did with each file, and with each call.
//!
//! Counting rules (docs/SUMMARY-JSON.md): every call counts once, at the level the program
//! called it — an `fwrite` is one stdio write, and the `write` glibc issues inside it is
//! never seen, so nothing is counted twice. Bytes are what the call returned (bytes moved),
//! failed calls count as calls with zero bytes. Times are the calls' durations in seconds.

use crate::kernel_io::KernelIoSummary;
use crate::messages::MessageSummary;
pub use crate::stack::{LibraryCallSummary, MpiIoCallSummary};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use cairn_compress::histogram::Histogram;
use cairn_model::CallClass;
use cairn_trace::symbols::{self, Symbolizer};
use cairn_trace::walk::{self, Occurrence, Visitor};
use cairn_trace::{Result, Trace};
use serde::Serialize;

pub use cairn_model::{size_bin, SIZE_BINS, SIZE_BIN_NAMES};

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct SizeStats {
    pub count: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    #[serde(skip)]
    sum: f64,
    #[serde(skip)]
    sum_of_squares: f64,
}

impl SizeStats {
    #[cfg(test)]
    fn add(&mut self, size: u64) {
        self.add_many(size, 1);
    }

    /// `count` accesses of `size` bytes each.
    fn add_many(&mut self, size: u64, count: u64) {
        if count == 0 {
            return;
        }
        if self.count == 0 || size < self.min {
            self.min = size;
        }
        self.max = self.max.max(size);
        self.count += count;
        self.sum += size as f64 * count as f64;
        self.sum_of_squares += (size as f64) * (size as f64) * count as f64;
        self.update();
    }

    /// `count` accesses whose sizes `sizes` describes (a blurred leaf's histogram, `shift`
    /// added to each value) and which moved `bytes` in all: its extremes are exact, and
    /// so are the mean (the bytes are) and, up to floating point, the spread.
    fn add_histogram(&mut self, sizes: &Histogram, shift: i64, count: u64, bytes: u64) {
        if count == 0 || sizes.count == 0 {
            return;
        }
        let low = (sizes.min + shift).max(0) as u64;
        if self.count == 0 || low < self.min {
            self.min = low;
        }
        self.max = self.max.max((sizes.max + shift).max(0) as u64);
        self.count += count;
        self.sum += bytes as f64;
        self.sum_of_squares += sizes.mean_square(shift) * count as f64;
        self.update();
    }

    fn update(&mut self) {
        self.mean = self.sum / self.count as f64;
        let variance = (self.sum_of_squares / self.count as f64 - self.mean * self.mean).max(0.0);
        self.stddev = variance.sqrt();
    }
}

/// Everything about one file.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FileSummary {
    /// The absolute path; bytes that are not UTF-8 appear as `\xNN` and a backslash as
    /// `\\`, and then `path_escaped` is true (see docs/SUMMARY-JSON.md).
    pub path: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub path_escaped: bool,
    pub opens: u64,
    pub closes: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub seeks: u64,
    pub syncs: u64,
    pub flushes: u64,
    pub stats: u64,
    /// unlink, rename, mkdir, rmdir, access, ftruncate.
    pub metas: u64,
    pub dups: u64,
    pub mmaps: u64,
    pub failures: u64,
    pub read_time: f64,
    pub write_time: f64,
    pub meta_time: f64,
    /// Whether the times above are in part estimates: a folded loop's leaf that touched
    /// several files keeps one timing statistic for all of them, shared out equally.
    pub time_estimated: bool,
    /// Bytes per second while reading (bytes_read / read_time), 0 without reads.
    pub read_bandwidth: f64,
    pub write_bandwidth: f64,
    pub read_sizes: SizeStats,
    pub write_sizes: SizeStats,
    /// Darshan's bins, see [`SIZE_BIN_NAMES`].
    pub read_histogram: [u64; 10],
    pub write_histogram: [u64; 10],
    /// Accesses starting exactly where the previous one (same process, same file) ended.
    pub consecutive_reads: u64,
    pub consecutive_writes: u64,
    /// Accesses starting after the previous one ended (consecutive ones included).
    pub sequential_reads: u64,
    pub sequential_writes: u64,
    /// Largest offset + size accessed.
    pub max_offset: u64,
    /// Calls per layer (`posix`, `stdio`, `mpiio`), MPI-IO's POSIX sub-calls included.
    pub layers: BTreeMap<String, u64>,
    /// POSIX calls the MPI library made on this file inside MPI-IO calls (not counted in
    /// `reads`/`writes`, which count the program's own calls), and their bytes.
    pub mpiio_subcalls: u64,
    pub mpiio_subcall_bytes: u64,
    /// MPI-IO and POSIX calls a library (HDF5) made on this file inside the program's
    /// library calls, and their bytes (not counted in `reads`/`writes`/`bytes_*` either).
    pub library_subcalls: u64,
    pub library_subcall_bytes: u64,
    /// POSIX reads and writes at a known offset and how many were not on an alignment
    /// boundary (absent when not judged: see `alignment`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alignment: Option<crate::alignment::Alignment>,
    /// Process ids that touched the file.
    pub pids: BTreeSet<u32>,
    /// MPI ranks that touched the file (empty without MPI): all of them for a shared file,
    /// one for a file per process.
    pub ranks: BTreeSet<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<String>,
    /// Consecutive and sequential reads, then writes, as the walk adds them (a leaf of
    /// irregular accesses gives each visit its share of its counts); the counts above are
    /// these, rounded, once the walk is over.
    #[serde(skip)]
    order: [f64; 4],
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct CallSummary {
    pub layer: String,
    pub class: String,
    pub count: u64,
    pub bytes: u64,
    pub time: f64,
    pub failures: u64,
    /// Of `count`: calls made through MPI's Fortran bindings (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub fortran: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ProcessSummary {
    pub pid: u32,
    pub parent_pid: u32,
    pub executable: String,
    pub arguments: Vec<String>,
    pub forked: bool,
    pub exec_of_pid: Option<u32>,
    pub ending: String,
    pub threads: u32,
    pub start: f64,
    pub end: f64,
    /// Whether `start` and `end` are estimates from the statistics of the process's group
    /// (ranks of one command whose every stream ranks share): its group's earliest start
    /// and latest end are exact, at the ranks that had them.
    pub times_estimated: bool,
    /// Whether `kernel_io` and the MPI runtime's counts not kept are estimates from its
    /// group's statistics (members whose counters lie close to the group's medians): their sums
    /// over the group are exact.
    pub counters_estimated: bool,
    pub events: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Calls let through untraced because the thread was already inside the tracer (a
    /// signal handler's I/O during the tracer's own bookkeeping).
    pub untraced_calls: u64,
    /// Calls the tracer could not record (its staging file could not grow): the process's
    /// figures leave them out.
    pub unrecorded_calls: u64,
    /// MPI rank, when the process was launched as one.
    pub rank: Option<u32>,
    /// Calls by kind, the table the thesis reports for POP and FLASH-IO.
    pub calls_by_kind: CallsByKind,
    /// What the kernel counted for the process and how much of it the trace holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_io: Option<KernelIoSummary>,
    /// MPI bytes sent, received and posted for (absent without point-to-point messages).
    #[serde(skip_serializing_if = "MessageSummary::is_empty")]
    pub mpi_messages: MessageSummary,
}

/// Calls by kind: file I/O the program made (any layer, sub-calls excluded), collective,
/// blocking and non-blocking point-to-point communication, and request completions.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct CallsByKind {
    pub io: f64,
    pub collective: f64,
    pub blocking: f64,
    pub non_blocking: f64,
    pub completion: f64,
}

impl CallsByKind {
    fn add(&mut self, other: &CallsByKind) {
        self.io += other.io;
        self.collective += other.collective;
        self.blocking += other.blocking;
        self.non_blocking += other.non_blocking;
        self.completion += other.completion;
    }

    fn scaled(mut self, factor: f64) -> CallsByKind {
        for value in [
            &mut self.io,
            &mut self.collective,
            &mut self.blocking,
            &mut self.non_blocking,
            &mut self.completion,
        ] {
            *value *= factor;
        }
        self
    }
}

/// For MPI runs: calls by kind of rank 0 and the average of the other ranks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RankTable {
    pub rank_0: CallsByKind,
    pub other_ranks_average: CallsByKind,
    pub other_ranks: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Filtered {
    pub files: u64,
    pub events: u64,
    /// Files per reason.
    pub reasons: BTreeMap<String, u64>,
    /// Of `events`: the MPI runtime's own I/O of ranks other than the first, which the
    /// trace counted but did not keep (shown even with `--all`).
    pub runtime_events_not_kept: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub schema: &'static str,
    pub command: Vec<String>,
    pub exit_status: Option<i32>,
    /// Seconds from the first process's start to the last event.
    pub duration: f64,
    pub processes: u64,
    /// Distinct MPI ranks among the processes (0 for a run without MPI).
    pub ranks: u64,
    /// Events counted (runtime noise excluded unless asked for).
    pub events: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub files: Vec<FileSummary>,
    pub calls: BTreeMap<String, CallSummary>,
    pub layers: BTreeMap<String, CallSummary>,
    /// Per I/O layer, Darshan's job-summary figures (see `layers`).
    pub layer_profiles: BTreeMap<String, crate::layers::LayerProfile>,
    pub process_list: Vec<ProcessSummary>,
    /// Calls the tracer could not record, over all processes (0: the trace is complete);
    /// each such process has a note in `diagnostics`.
    pub unrecorded_calls: u64,
    /// The processes' kernel counters together (those the tracer could read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_io: Option<KernelIoSummary>,
    /// MPI bytes sent, received and posted for, over all processes (absent without
    /// point-to-point messages).
    #[serde(skip_serializing_if = "MessageSummary::is_empty")]
    pub mpi_messages: MessageSummary,
    /// For MPI runs (null otherwise): rank 0 against the average of the other ranks.
    pub rank_table: Option<RankTable>,
    /// Per MPI-IO call: its latency, and what it became at the POSIX layer below.
    pub mpiio_calls: BTreeMap<String, MpiIoCallSummary>,
    /// Per library call (HDF5...): its latency, and what it became at the MPI-IO, MPI and
    /// POSIX layers below (empty without library calls).
    pub library_calls: BTreeMap<String, LibraryCallSummary>,
    /// Files only libraries touched, inside the program's library calls (their own
    /// configuration and plugin files): not in `files`, whose figures are the program's.
    pub library_files: Vec<String>,
    /// Call sites, by time spent: each distinct calling context and call.
    pub call_sites: Vec<CallSiteSummary>,
    /// The I/O problems the figures show, with their evidence (see `insights`).
    pub insights: Vec<crate::insights::Insight>,
    /// Parameters a precision level below 100 kept as histograms, per call (empty for a
    /// lossless trace): these calls' sizes or offsets are estimates; counts and bytes are
    /// not.
    pub blurred: Vec<crate::precision::BlurredParameter>,
    /// The phases the program marked (see `phases`), the calls outside them under an
    /// empty name; empty if it marked none.
    pub phases: Vec<crate::phases::PhaseSummary>,
    pub filtered: Filtered,
    pub diagnostics: Vec<String>,
}

/// One call from one calling context (`main → write_checkpoint → pwrite64`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CallSiteSummary {
    /// The calling context's number, as events carry it (`call_site` in the exported
    /// events table); 0 when the context is unknown.
    pub context: u32,
    /// The symbolised stack, outermost first, ending with the call.
    pub stack: String,
    /// `file:line` of the call, when the module has line information.
    pub location: Option<String>,
    pub call: String,
    pub count: u64,
    pub bytes: u64,
    pub time: f64,
}

/// What to include.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Also count runtime noise (loader, /proc, language runtime, before main).
    pub include_noise: bool,
    /// When the insights are raised.
    pub thresholds: crate::insights::Thresholds,
    /// Functions whose calls are phases (`write_checkpoint`): a call with one of them in
    /// its calling context counts in that phase (see `phases`).
    pub phase_functions: Vec<String>,
}

/// Escapes a path for JSON reversibly: valid UTF-8 stays, a backslash becomes `\\`, and
/// every byte of an invalid sequence becomes `\xNN`. Returns whether anything was escaped.
pub fn escape_path(bytes: &[u8]) -> (String, bool) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return (text.to_string(), false);
    }
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(&chunk.valid().replace('\\', "\\\\"));
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    (out, true)
}

/// Reverses [`escape_path`] for an escaped path.
pub fn unescape_path(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'\\' {
            match bytes.get(at + 1)? {
                b'\\' => {
                    out.push(b'\\');
                    at += 2;
                }
                b'x' => {
                    let hex = std::str::from_utf8(bytes.get(at + 2..at + 4)?).ok()?;
                    out.push(u8::from_str_radix(hex, 16).ok()?);
                    at += 4;
                }
                _ => return None,
            }
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    Some(out)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn seconds(nanoseconds: u64) -> f64 {
    nanoseconds as f64 / 1e9
}

impl FileSummary {
    fn add(&mut self, occurrence: &Occurrence) {
        let count = occurrence.count;
        let time = occurrence.time / 1e9;
        *self
            .layers
            .entry(occurrence.layer.name().to_string())
            .or_default() += count;
        self.pids.insert(occurrence.process.pid);
        if let Some(rank) = occurrence.process.rank {
            self.ranks.insert(rank);
        }
        if occurrence.failed() {
            self.failures += count;
        }
        match occurrence.class {
            CallClass::Read | CallClass::Write => {
                let is_read = occurrence.class == CallClass::Read;
                let bytes = occurrence.bytes();
                if is_read {
                    self.reads += count;
                    self.bytes_read += bytes;
                    self.read_time += time;
                } else {
                    self.writes += count;
                    self.bytes_written += bytes;
                    self.write_time += time;
                }
                if !occurrence.failed() {
                    let (sizes, histogram) = if is_read {
                        (&mut self.read_sizes, &mut self.read_histogram)
                    } else {
                        (&mut self.write_sizes, &mut self.write_histogram)
                    };
                    match occurrence.size_histogram() {
                        Some((blurred, shift)) => {
                            sizes.add_histogram(blurred, shift, count, occurrence.bytes())
                        }
                        None => sizes.add_many(occurrence.size(), count),
                    }
                    occurrence.for_each_size(|size, count| histogram[size_bin(size)] += count);
                    if occurrence.offset_high >= 0 {
                        self.max_offset = self.max_offset.max(occurrence.offset_high as u64);
                    }
                    let [consecutive, sequential] = occurrence.access_order();
                    let first = if is_read { 0 } else { 2 };
                    self.order[first] += consecutive;
                    self.order[first + 1] += sequential;
                }
            }
            // Completing a split or non-blocking MPI-IO call: its time belongs to the file,
            // its count to the call that started it.
            CallClass::Completion => self.meta_time += time,
            other => {
                self.meta_time += time;
                let counter = match other {
                    CallClass::Open => &mut self.opens,
                    CallClass::Close => &mut self.closes,
                    CallClass::Seek => &mut self.seeks,
                    CallClass::Sync => &mut self.syncs,
                    CallClass::Flush => &mut self.flushes,
                    CallClass::Stat => &mut self.stats,
                    CallClass::Dup => &mut self.dups,
                    CallClass::Mmap => &mut self.mmaps,
                    _ => &mut self.metas,
                };
                *counter += count;
            }
        }
    }

    fn finish(&mut self) {
        let [consecutive_reads, sequential_reads, consecutive_writes, sequential_writes] =
            self.order.map(|count| count.round() as u64);
        self.consecutive_reads = consecutive_reads;
        self.sequential_reads = sequential_reads;
        self.consecutive_writes = consecutive_writes;
        self.sequential_writes = sequential_writes;
        if self.read_time > 0.0 {
            self.read_bandwidth = self.bytes_read as f64 / self.read_time;
        }
        if self.write_time > 0.0 {
            self.write_bandwidth = self.bytes_written as f64 / self.write_time;
        }
    }
}

fn add_call(summary: &mut CallSummary, occurrence: &Occurrence) {
    summary.layer = occurrence.layer.name().to_string();
    summary.class = occurrence.class.name().to_string();
    summary.count += occurrence.count;
    // An MPI completion's bytes are those of the receives it finished.
    summary.bytes += occurrence.counted_bytes();
    summary.time += occurrence.time / 1e9;
    if occurrence.failed() {
        summary.failures += occurrence.count;
    }
    if occurrence.key.flags & cairn_model::event_flags::FORTRAN != 0 {
        summary.fortran += occurrence.count;
    }
}

fn ending_name(ending: cairn_trace::Ending) -> String {
    match ending {
        cairn_trace::Ending::Exited => "exit".into(),
        cairn_trace::Ending::ExitCall(status) => format!("_exit({status})"),
        cairn_trace::Ending::Exec => "exec".into(),
        cairn_trace::Ending::Unknown => "killed or crashed (no exit seen)".into(),
    }
}

/// The summary is itself a [`Visitor`]: every class goes through [`Visitor::event`].
struct Builder {
    options: Options,
    summary: Summary,
    files: Vec<Option<FileSummary>>,
    filtered_files: BTreeSet<u32>,
    /// (context, call index) → count, bytes, time (seconds).
    call_sites: BTreeMap<(u32, u16), (u64, u64, f64)>,
    /// Per stream (by address): sub-calls waiting for their MPI-IO call.
    stack: crate::stack::Stack,
    /// Per leaf (by its place in its stream, [`Occurrence::leaf`]) whose visits stood for
    /// only part of its occurrences: the files those visits named (their times are shares).
    split_leaves: HashMap<(usize, usize), BTreeSet<u32>>,
    layer_profiles: crate::layers::LayerProfiles,
    blurred: crate::precision::Blurred,
    phases: crate::phases::Phases,
}

impl Visitor for Builder {
    fn event(&mut self, occurrence: &Occurrence) {
        let trace = occurrence.trace;
        // A phase mark is not I/O (its file is the phase's name): it opens or closes the
        // phase the calls after it count in, and counts as a call of its own.
        if crate::phases::Phases::is_mark(occurrence) {
            self.phases.mark(occurrence);
            self.summary.events += occurrence.count;
            self.summary.process_list[occurrence.stream.process as usize].events +=
                occurrence.count;
            add_call(
                self.summary
                    .calls
                    .entry(occurrence.call.name.clone())
                    .or_default(),
                occurrence,
            );
            return;
        }
        let noise = occurrence
            .file
            .and_then(|file| trace.files[file as usize].noise);
        if !self.options.include_noise && (noise.is_some() || occurrence.is_runtime()) {
            self.summary.filtered.events += occurrence.count;
            if let Some(file) = occurrence.file {
                self.filtered_files.insert(file);
            }
            return;
        }
        let summary = &mut self.summary;
        summary.events += occurrence.count;
        let process_summary = &mut summary.process_list[occurrence.stream.process as usize];
        process_summary.events += occurrence.count;
        // A POSIX call the MPI library made inside an MPI-IO call, or any call a library
        // (HDF5) made inside the program's library call, moved bytes the program's call
        // already counts: it is that call's sub-call.
        let subcall = occurrence.inside_mpiio() || occurrence.inside_library();
        self.stack.add(occurrence);
        process_summary.mpi_messages.add_occurrence(occurrence);
        self.layer_profiles.add_occurrence(occurrence);
        self.blurred.add_occurrence(occurrence);
        self.phases.add(occurrence);
        let count = occurrence.count as f64;
        let kinds = &mut process_summary.calls_by_kind;
        // What a library (HDF5) did inside the program's call is not the program's call.
        match occurrence.class {
            _ if occurrence.inside_library() => {}
            // A persistent request's init moves nothing (its starts count).
            CallClass::PointToPoint if occurrence.call.name.ends_with("_init") => {}
            // `MPI_Isend` from C, `mpi_isend_` from Fortran; a persistent request's start.
            CallClass::PointToPoint
                if occurrence
                    .call
                    .name
                    .get(..5)
                    .is_some_and(|prefix| prefix.eq_ignore_ascii_case("MPI_I"))
                    || occurrence.call.name.starts_with("MPI_Start_") =>
            {
                kinds.non_blocking += count
            }
            CallClass::PointToPoint => kinds.blocking += count,
            CallClass::Collective => kinds.collective += count,
            CallClass::Completion => kinds.completion += count,
            _ if occurrence.file.is_some() && !subcall => kinds.io += count,
            _ => {}
        }
        if !occurrence.failed() && !subcall {
            match occurrence.class {
                CallClass::Read => {
                    process_summary.bytes_read += occurrence.bytes();
                    summary.bytes_read += occurrence.bytes();
                }
                CallClass::Write => {
                    process_summary.bytes_written += occurrence.bytes();
                    summary.bytes_written += occurrence.bytes();
                }
                _ => {}
            }
        }
        add_call(
            summary
                .calls
                .entry(occurrence.call.name.clone())
                .or_default(),
            occurrence,
        );
        let site = self
            .call_sites
            .entry((occurrence.key.context, occurrence.key.call))
            .or_default();
        site.0 += occurrence.count;
        site.1 += occurrence.counted_bytes();
        site.2 += occurrence.time / 1e9;
        add_call(
            summary
                .layers
                .entry(occurrence.layer.name().to_string())
                .or_default(),
            occurrence,
        );
        if let Some(file) = occurrence.file {
            if occurrence.count < occurrence.duration.count {
                self.split_leaves
                    .entry(occurrence.leaf)
                    .or_default()
                    .insert(file);
            }
            let entry = self.files[file as usize].get_or_insert_with(|| {
                let info = &trace.files[file as usize];
                let (path, path_escaped) = escape_path(&info.path);
                FileSummary {
                    path,
                    path_escaped,
                    noise: info.noise.map(|noise| noise.name().to_string()),
                    ..FileSummary::default()
                }
            });
            if subcall {
                let moved = if matches!(occurrence.class, CallClass::Read | CallClass::Write) {
                    occurrence.bytes()
                } else {
                    0
                };
                if occurrence.inside_mpiio() {
                    entry.mpiio_subcalls += occurrence.count;
                    entry.mpiio_subcall_bytes += moved;
                }
                if occurrence.inside_library() {
                    entry.library_subcalls += occurrence.count;
                    entry.library_subcall_bytes += moved;
                }
                *entry
                    .layers
                    .entry(occurrence.layer.name().to_string())
                    .or_default() += occurrence.count;
            } else {
                entry.add(occurrence);
            }
        }
    }
}

/// Summarises a trace.
pub fn summarize(trace: &Trace, options: Options) -> Result<Summary> {
    let files: Vec<Option<FileSummary>> = vec![None; trace.files.len()];
    let mut summary = Summary {
        schema: "cairn-summary/1",
        command: trace
            .meta
            .command
            .iter()
            .map(|argument| lossy(argument))
            .collect(),
        exit_status: trace.meta.exit_status,
        duration: seconds(trace.meta.duration),
        processes: trace.processes.len() as u64,
        ranks: trace
            .processes
            .iter()
            .filter_map(|process| process.rank)
            .collect::<BTreeSet<_>>()
            .len() as u64,
        diagnostics: trace.diagnostics.clone(),
        ..Summary::default()
    };
    summary.process_list = trace
        .processes
        .iter()
        .map(|process| ProcessSummary {
            pid: process.pid,
            parent_pid: process.parent_pid,
            executable: lossy(&process.executable),
            arguments: process
                .arguments
                .iter()
                .map(|argument| lossy(argument))
                .collect(),
            forked: process.forked,
            exec_of_pid: process
                .exec_of
                .map(|index| trace.processes[index as usize].pid),
            ending: ending_name(process.ending),
            threads: process.threads,
            start: seconds(process.start),
            end: seconds(process.end),
            times_estimated: process.group_times,
            counters_estimated: process.group_counters,
            untraced_calls: process.untraced_calls,
            unrecorded_calls: process.unrecorded.map_or(0, |unrecorded| unrecorded.calls),
            rank: process.rank,
            ..ProcessSummary::default()
        })
        .collect();
    let mut builder = Builder {
        options: options.clone(),
        summary,
        files,
        filtered_files: BTreeSet::new(),
        call_sites: BTreeMap::new(),
        stack: crate::stack::Stack::default(),
        split_leaves: HashMap::new(),
        layer_profiles: Default::default(),
        blurred: Default::default(),
        phases: crate::phases::Phases::new(trace, &options.phase_functions),
    };
    let not_kept: u64 = trace
        .processes
        .iter()
        .map(|process| process.runtime_events_dropped)
        .sum();
    builder.summary.filtered.events += not_kept;
    builder.summary.filtered.runtime_events_not_kept = not_kept;
    walk::walk(trace, &mut builder);
    let Builder {
        mut summary,
        mut files,
        filtered_files,
        call_sites,
        split_leaves,
        layer_profiles,
        blurred,
        phases,
        stack,
        ..
    } = builder;
    (summary.mpiio_calls, summary.library_calls) = stack.finish();
    summary.layer_profiles = layer_profiles.finish();
    summary.phases = phases.finish();
    summary.blurred = blurred.finish();
    summary
        .blurred
        .extend(crate::precision::blurred_loops(trace));
    // A leaf whose share went to several files: each one's time is an equal share.
    for leaf_files in split_leaves.values().filter(|files| files.len() > 1) {
        for file in leaf_files {
            if let Some(Some(entry)) = files.get_mut(*file as usize) {
                entry.time_estimated = true;
            }
        }
    }
    let mut symbols = Symbolizer::new(trace);
    summary.call_sites = call_sites
        .into_iter()
        .map(|((context, call), (count, bytes, time))| {
            let name = &trace.calls[call as usize].name;
            let frames = symbols.frames(context);
            CallSiteSummary {
                context,
                stack: symbols::describe(&frames, name),
                location: frames.first().and_then(|frame| frame.location.clone()),
                call: name.clone(),
                count,
                bytes,
                time,
            }
        })
        .collect();
    summary.call_sites.sort_by(|a, b| {
        b.time
            .total_cmp(&a.time)
            .then_with(|| a.stack.cmp(&b.stack))
    });
    for layer in summary.layers.values_mut() {
        layer.class.clear();
    }
    for file in &filtered_files {
        if files[*file as usize].is_none() {
            summary.filtered.files += 1;
            let reason = trace.files[*file as usize]
                .noise
                .map_or("before main", |noise| noise.name());
            *summary
                .filtered
                .reasons
                .entry(reason.to_string())
                .or_default() += 1;
        }
    }
    let mut by_rank: BTreeMap<u32, CallsByKind> = BTreeMap::new();
    for process in &summary.process_list {
        if let Some(rank) = process.rank {
            by_rank.entry(rank).or_default().add(&process.calls_by_kind);
        }
    }
    if let Some(rank_0) = by_rank.get(&0).copied() {
        let others: Vec<&CallsByKind> = by_rank
            .iter()
            .filter(|(rank, _)| **rank != 0)
            .map(|(_, kinds)| kinds)
            .collect();
        let mut total = CallsByKind::default();
        others.iter().for_each(|kinds| total.add(kinds));
        let average = if others.is_empty() {
            total
        } else {
            total.scaled(1.0 / others.len() as f64)
        };
        summary.rank_table = Some(RankTable {
            rank_0,
            other_ranks_average: average,
            other_ranks: others.len() as u64,
        });
    }
    for process in &summary.process_list {
        summary.mpi_messages.add(&process.mpi_messages);
    }
    for (process, kernel) in summary
        .process_list
        .iter_mut()
        .zip(crate::kernel_io::compare(trace))
    {
        process.kernel_io = kernel;
        if let Some(kernel) = kernel {
            summary
                .kernel_io
                .get_or_insert_with(KernelIoSummary::default)
                .add(&kernel);
            if kernel.notable_unseen() {
                summary.diagnostics.push(format!(
                    "process {}{}: the kernel counted {} bytes read and {} written that no \
                     traced call accounts for (calls cairn does not hook: copy_file_range, \
                     sendfile, raw syscall(), statically linked code, the dynamic loader)",
                    process.pid,
                    process
                        .rank
                        .map_or(String::new(), |rank| format!(" (rank {rank})")),
                    kernel.unseen_read_bytes,
                    kernel.unseen_written_bytes
                ));
            }
        }
    }
    let untraced: u64 = trace
        .processes
        .iter()
        .map(|process| process.untraced_calls)
        .sum();
    if untraced > 0 {
        summary.diagnostics.push(format!(
            "{untraced} calls were let through untraced and are not in the trace: made while \
             their thread was inside the tracer (signal handlers interrupting it, or library \
             functions calling hooked functions), by threads beyond those the tracer records \
             at once (a note of the process says how many), or MPI persistent requests started \
             whose set-up the tracer did not keep (beyond 4,096 a process, or persistent \
             collectives): their messages; or MPI receives posted while 65,536 others were \
             pending in the process: what they received"
        ));
    }
    // First among the notes: the figures above leave these calls out.
    let incomplete: Vec<String> = trace
        .processes
        .iter()
        .filter_map(|process| Some(process.unrecorded?.message(process)))
        .collect();
    summary.unrecorded_calls = trace
        .processes
        .iter()
        .filter_map(|process| process.unrecorded)
        .map(|unrecorded| unrecorded.calls)
        .sum();
    summary.diagnostics.splice(0..0, incomplete);
    // Derived here, not stored: merged traces would otherwise repeat it once per input.
    let counted_only: Vec<u64> = trace
        .processes
        .iter()
        .map(|process| process.runtime_events_dropped)
        .filter(|dropped| *dropped > 0)
        .collect();
    if !counted_only.is_empty() {
        summary.diagnostics.push(format!(
            "the MPI runtime's own I/O of {} ranks was counted, not kept ({} events); `--runtime-io first-rank` keeps rank 0's, `all` every rank's",
            counted_only.len(),
            counted_only.iter().sum::<u64>()
        ));
    }
    let thresholds = &options.thresholds;
    match crate::alignment::count(
        trace,
        options.include_noise,
        thresholds.alignment_bytes,
        thresholds.alignment_check_events,
    ) {
        Some(counts) => {
            for (file, counts) in counts {
                if let Some(Some(entry)) = files.get_mut(file as usize) {
                    entry.alignment = Some(counts);
                }
            }
        }
        None => summary.diagnostics.push(format!(
            "misaligned requests not judged: the trace has more than {} events (`alignment_check_events` in a thresholds file raises the limit)",
            thresholds.alignment_check_events
        )),
    }
    // A file only a library touched inside the program's calls (NetCDF's probe of
    // `~/.daprc`, HDF5's of a plugin directory) has no figures of the program's: named
    // apart, its calls counted with their layers.
    let (used, library_only): (Vec<FileSummary>, Vec<FileSummary>) = files
        .into_iter()
        .flatten()
        .partition(|file| !file.pids.is_empty() || file.library_subcalls == 0);
    summary.files = used;
    summary.library_files = library_only.into_iter().map(|file| file.path).collect();
    summary.library_files.sort();
    for file in &mut summary.files {
        file.finish();
    }
    summary.files.sort_by(|a, b| a.path.cmp(&b.path));
    summary.insights = crate::insights::insights(&summary, &options.thresholds);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn darshan_bins() {
        assert_eq!(size_bin(0), 0);
        assert_eq!(size_bin(100), 0);
        assert_eq!(size_bin(101), 1);
        assert_eq!(size_bin(1024), 1);
        assert_eq!(size_bin(4 << 20), 5);
        assert_eq!(size_bin((4 << 20) + 1), 6);
        assert_eq!(size_bin(1 << 30), 8);
        assert_eq!(size_bin((1 << 30) + 1), 9);
    }

    #[test]
    fn path_escaping_is_reversible() {
        for path in [
            &b"/tmp/plain"[..],
            b"/tmp/caf\xc3\xa9",
            b"/tmp/bad\xff\xfename",
            b"/tmp/back\\slash\xff",
        ] {
            let (text, escaped) = escape_path(path);
            if escaped {
                assert_eq!(unescape_path(&text).as_deref(), Some(path));
            } else {
                assert_eq!(text.as_bytes(), path);
            }
        }
        assert_eq!(escape_path(b"/a\xffb"), ("/a\\xffb".to_string(), true));
    }

    #[test]
    fn size_statistics() {
        let mut stats = SizeStats::default();
        for size in [2, 4, 4, 4, 5, 5, 7, 9] {
            stats.add(size);
        }
        assert_eq!((stats.count, stats.min, stats.max), (8, 2, 9));
        assert!((stats.mean - 5.0).abs() < 1e-12);
        assert!((stats.stddev - 2.0).abs() < 1e-12);
    }
}

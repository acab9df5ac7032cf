//! Builds a [`Trace`] from the staging segments the preload library left in a directory.
//!
//! Two passes per segment keep memory bounded by one chunk per thread plus the encoded
//! output: the first reads the definitions (paths, contexts, marks) and indexes each
//! thread's chunks; the second merges the threads' events in time order — needed because
//! threads share descriptors and their offsets — and encodes them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cairn_compress::stats::Stats;
use cairn_compress::stream::{BlockPosition, StreamEncoder};
use cairn_format::segment::{
    self, last_repetitions, mark, KernelIo, ProcessHeader, RawEvent, RawOffsetsPosition, RawRun,
    RawSpread, Record, SegmentFile, MAX_BLOCK_PERIOD,
};
use cairn_model::{event_flags, positional, Call, CallClass, Event, Layer, UNKNOWN};

mod sink;
mod steps;
use sink::{Push, Sink, PIPELINE_CHUNKS};
use steps::StepsExpansion;

use crate::elf::Segments;
use crate::handles::Handles;
pub use crate::handles::{MADE_COMMUNICATOR, MADE_HDF5_ID, NUMBERED_HANDLE, OPENED_MPI_FILE};
use crate::noise::{self, Noise};
use crate::table::Table;
use crate::{
    CallInfo, Context, Ending, FileInfo, Meta, Process, Result, Stream, Trace, TraceError,
    Unrecorded,
};

/// What the caller knows about the run that the segments do not.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    pub writer: String,
    pub command: Vec<Vec<u8>>,
    pub exit_status: Option<i32>,
    /// Which ranks' MPI runtime I/O to keep (see [`collect`]).
    pub runtime_io: RuntimeIo,
    /// The job's lowest rank when the segments are one rank's, collected apart from the
    /// others (each rank of a launched job builds its own trace); by default, the lowest
    /// rank among the segments.
    pub first_rank: Option<u32>,
    /// A precision level below 100 (`Some`): sizes and offsets that differ at a call site
    /// by at most (100 − level)% become histograms of `histogram_bins` bins as the streams
    /// are built (`cairn_compress::stream::StreamEncoder::set_precision`). `None`: exact.
    pub precision: Option<u8>,
    pub histogram_bins: usize,
    /// The bytes each thread's stream may hold as it is built (uncompressed) before its
    /// least regular values degrade to histograms
    /// (`cairn_compress::stream::StreamEncoder::set_budget`); the trace's diagnostics say
    /// which streams did, and after how many events. `None`: unbounded.
    pub stream_budget: Option<u64>,
}

/// Which ranks' own MPI runtime I/O a trace keeps; the rest is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RuntimeIo {
    /// The lowest rank's.
    FirstRank,
    AllRanks,
    /// None: only counted (the default).
    #[default]
    NoRank,
}

/// Converts a segment's raw times (TSC ticks or nanoseconds) to monotonic nanoseconds by
/// interpolating between calibration pairs; outside them, the slope over all pairs is used.
#[derive(Clone, Debug)]
struct TimeConverter {
    pairs: Vec<(u64, u64)>,
}

impl TimeConverter {
    fn new(header: &ProcessHeader, mut pairs: Vec<(u64, u64)>) -> TimeConverter {
        if header.clock != segment::CLOCK_TSC {
            return TimeConverter { pairs: Vec::new() };
        }
        pairs.extend_from_slice(&header.calibration);
        pairs.retain(|(ticks, nanoseconds)| *ticks > 0 && *nanoseconds > 0);
        pairs.sort_unstable();
        pairs.dedup_by_key(|(ticks, _)| *ticks);
        TimeConverter { pairs }
    }

    fn along(from: (u64, u64), to: (u64, u64), ticks: u64) -> u64 {
        let (span_ticks, span_time) = (
            to.0.saturating_sub(from.0) as i128,
            to.1 as i128 - from.1 as i128,
        );
        if span_ticks == 0 {
            return from.1;
        }
        let offset = ticks as i128 - from.0 as i128;
        (from.1 as i128 + offset * span_time / span_ticks).max(0) as u64
    }

    /// Nanoseconds per clock unit around `ticks` (for durations summarised in clock units).
    fn scale(&self, ticks: u64) -> f64 {
        if self.pairs.len() < 2 {
            return 1.0;
        }
        const SPAN: u64 = 1 << 20;
        let from = ticks.saturating_sub(SPAN / 2);
        (self.nanoseconds(from + SPAN) as f64 - self.nanoseconds(from) as f64) / SPAN as f64
    }

    fn nanoseconds(&self, ticks: u64) -> u64 {
        let pairs = &self.pairs;
        if pairs.len() < 2 {
            return if pairs.is_empty() { ticks } else { pairs[0].1 };
        }
        let (first, last) = (pairs[0], pairs[pairs.len() - 1]);
        if ticks <= first.0 || ticks >= last.0 {
            return Self::along(first, last, ticks);
        }
        let next = pairs.partition_point(|(pair_ticks, _)| *pair_ticks <= ticks);
        Self::along(pairs[next - 1], pairs[next], ticks)
    }
}

/// Everything learned about one segment in the first pass.
struct SegmentSummary {
    path: PathBuf,
    header: ProcessHeader,
    paths: HashMap<u32, Vec<u8>>,
    modules: HashMap<u32, Vec<u8>>,
    contexts: HashMap<u32, Vec<(u32, u64)>>,
    /// Chunk indices of each thread, in the thread's order.
    threads: HashMap<u32, Vec<(u32, u64)>>,
    main_start: Option<u64>,
    ending: Ending,
    untraced_calls: u64,
    kernel_io: Option<KernelIo>,
    /// Calls the tracer could not stage; `clock` in monotonic nanoseconds once read.
    unrecorded: Option<cairn_format::segment::Unrecorded>,
    /// In monotonic nanoseconds.
    last_time: u64,
    clock: TimeConverter,
    /// Files (this image's numbers) that the program's own calls named: an MPI call's
    /// POSIX sub-calls on any other file (ROMIO's lock tests, shared-file-pointer
    /// segments, plugins) are the runtime's I/O.
    program_files: std::collections::HashSet<u32>,
}

fn first_pass(path: &Path, diagnostics: &mut Vec<String>) -> Result<SegmentSummary> {
    let file = SegmentFile::open(path)?;
    let mut summary = SegmentSummary {
        path: path.to_path_buf(),
        last_time: 0,
        clock: TimeConverter { pairs: Vec::new() },
        header: file.header.clone(),
        paths: HashMap::new(),
        modules: HashMap::new(),
        contexts: HashMap::new(),
        threads: HashMap::new(),
        main_start: None,
        ending: Ending::Unknown,
        untraced_calls: file.untraced_calls,
        kernel_io: file.kernel_io,
        unrecorded: file.unrecorded,
        program_files: Default::default(),
    };
    let mut buffer = Vec::new();
    let mut pairs = Vec::new();
    let mut last_raw_time = 0;
    for index in 0..file.chunk_count() {
        file.read_chunk(index, &mut buffer)?;
        let Some(chunk) = segment::decode_chunk_header(&buffer) else {
            continue;
        };
        pairs.push((chunk.clock, chunk.monotonic));
        summary
            .threads
            .entry(chunk.thread)
            .or_default()
            .push((chunk.sequence, index));
        let records = match segment::records(&buffer) {
            Ok(records) => records,
            Err(error) => {
                diagnostics.push(format!(
                    "pid {}: chunk {index} is damaged ({error}); its events are skipped",
                    file.header.pid
                ));
                continue;
            }
        };
        for record in records {
            match record {
                // A run repeats the event before it: only its end is new here.
                Record::Run { run, .. } => last_raw_time = last_raw_time.max(run.last_end),
                Record::Block { count, positions } if count > 0 => {
                    for run in &positions {
                        last_raw_time = last_raw_time.max(run.last_end);
                    }
                }
                Record::Block { .. } => {}
                Record::Offsets { positions, .. } => {
                    for position in &positions {
                        last_raw_time = last_raw_time.max(position.run.last_end);
                        note_program_file(&mut summary.program_files, &position.event);
                    }
                }
                Record::Steps(steps) => {
                    for item in &steps.items {
                        last_raw_time = last_raw_time.max(item.run.last_end);
                        note_program_file(&mut summary.program_files, &item.event);
                    }
                }
                Record::Event { event, .. } => {
                    last_raw_time = last_raw_time.max(event.start + event.duration);
                    note_program_file(&mut summary.program_files, &event);
                }
                Record::Path { file, path, .. } => {
                    summary.paths.insert(file, path.to_vec());
                }
                Record::Module { module, path } => {
                    summary.modules.insert(module, path.to_vec());
                }
                Record::Context { context, frames } => {
                    summary.contexts.insert(context, frames);
                }
                Record::Mark {
                    mark: kind,
                    time,
                    value,
                } => {
                    last_raw_time = last_raw_time.max(time);
                    match kind {
                        mark::MAIN_START => summary.main_start = Some(time),
                        mark::EXIT if summary.ending == Ending::Unknown => {
                            summary.ending = Ending::Exited;
                        }
                        mark::EXIT_CALL => summary.ending = Ending::ExitCall(value as u32 as i32),
                        mark::DISABLED => diagnostics.push(format!(
                            "pid {}: the tracer disabled itself",
                            file.header.pid
                        )),
                        _ => {}
                    }
                }
                Record::Message { text } => {
                    diagnostics.push(format!(
                        "pid {}: {}",
                        file.header.pid,
                        String::from_utf8_lossy(text)
                    ));
                }
                Record::Unknown { .. } => {}
            }
        }
    }
    for chunks in summary.threads.values_mut() {
        chunks.sort_unstable();
    }
    // The end the header page kept, where no chunk could take its mark (a full staging
    // file system).
    match file.ending {
        Some((mark::EXIT_CALL, value)) if summary.ending == Ending::Unknown => {
            summary.ending = Ending::ExitCall(value as u32 as i32);
        }
        Some((mark::EXIT, _)) if summary.ending == Ending::Unknown => {
            summary.ending = Ending::Exited;
        }
        _ => {}
    }
    summary.clock = TimeConverter::new(&summary.header, pairs);
    if let Some(unrecorded) = &mut summary.unrecorded {
        unrecorded.clock = summary.clock.nanoseconds(unrecorded.clock);
    }
    summary.main_start = summary
        .main_start
        .map(|time| summary.clock.nanoseconds(time));
    summary.last_time = summary
        .header
        .start_monotonic
        .max(summary.clock.nanoseconds(last_raw_time));
    Ok(summary)
}

/// What a thread staged: one event, or a run of repetitions folded as the program ran
/// (with its first repetition: the event before it, its offset moved by the stride), or a
/// block of repetitions of several events.
enum Staged {
    Event(RawEvent),
    Run(RawEvent, Box<RawRun>),
    Block(Box<StagedBlock>),
    /// A body repeated with its first position at irregular offsets (an offsets record):
    /// per position its call, first occurrence and statistics; the first's offsets.
    Offsets(Vec<RawOffsetsPosition>, Vec<i64>, Vec<u64>),
    /// A steps record: expanded by the thread's cursor, occurrence by occurrence, into
    /// event and run records (never handed on as it is).
    Steps(Box<segment::Steps>),
}

/// A block record with the events it repeats: per position the call, the first
/// repetition (the event before the block, of whichever record, moved by the stride) and the
/// position's run (stride, last end, statistics over `count` repetitions).
struct StagedBlock {
    count: u64,
    calls: Vec<u32>,
    first: Vec<RawEvent>,
    positions: Vec<RawRun>,
}

/// Notes the file of a call the program made itself (not its MPI runtime or MPI-IO).
fn note_program_file(files: &mut std::collections::HashSet<u32>, event: &RawEvent) {
    let library = event_flags::IN_RUNTIME | event_flags::INSIDE_MPIIO;
    if event.flags & library == 0 {
        files.insert(event.file);
    }
}

impl Staged {
    /// The (first) occurrence.
    fn first(&self) -> &RawEvent {
        match self {
            Staged::Event(event) | Staged::Run(event, _) => event,
            Staged::Offsets(positions, ..) => &positions[0].event,
            Staged::Block(block) => &block.first[0],
            Staged::Steps(steps) => &steps.items[0].event,
        }
    }
}

/// A run's statistics in nanoseconds (`scale` per clock unit). Durations come with their
/// histogram, made to add up to the run's count (a tracer killed during an update may leave
/// them one apart); gaps keep none, as traces store them.
fn run_statistics(raw: &RawSpread, histogram: Option<&[u32; 8]>, count: u64, scale: f64) -> Stats {
    let mut bins = [0u64; 8];
    if let Some(histogram) = histogram {
        for (bin, raw) in bins.iter_mut().zip(histogram) {
            *bin = *raw as u64;
        }
        let fullest = (0..bins.len())
            .max_by_key(|index| bins[*index])
            .unwrap_or(0);
        let others: u64 = bins
            .iter()
            .enumerate()
            .filter(|(index, _)| *index != fullest)
            .map(|(_, bin)| *bin)
            .sum();
        if others > count {
            bins = [0; 8];
            bins[fullest] = count;
        } else {
            bins[fullest] = count - others;
        }
    }
    let in_nanoseconds = |value: u64| (value as f64 * scale).round() as u64;
    let (mean, m2) = raw.mean_and_m2(count);
    // As a mean of whole nanoseconds would be: a whole total over the count (so the float
    // carries no more digits than the events' own statistics, and compresses as well).
    let per_count = |value: f64| (value * count as f64).round() / count as f64;
    Stats {
        count,
        min: in_nanoseconds(raw.min),
        max: in_nanoseconds(raw.max),
        mean: if count == 1 {
            in_nanoseconds(raw.min) as f64
        } else {
            per_count(mean * scale)
        },
        m2: if count == 1 {
            0.0
        } else {
            per_count(m2 * scale * scale)
        },
        histogram: bins,
    }
}

/// A thread's events, read one chunk at a time.
struct ThreadCursor {
    thread: u32,
    chunks: std::vec::IntoIter<(u32, u64)>,
    events: std::vec::IntoIter<(u32, Staged)>,
    /// The thread's last event record, which a run record repeats.
    last: Option<RawEvent>,
    /// The last events (at most [`MAX_BLOCK_PERIOD`]) of event, run and block records (a
    /// run's or block's repetitions count) since the thread's last record of another kind
    /// but a definition (path, context, module): what a block record repeats.
    plain: VecDeque<(u32, RawEvent)>,
    /// A steps record being expanded, and the records of its occurrence not yet handed on.
    expanding: Option<StepsExpansion>,
    ready: VecDeque<(u32, Staged)>,
    /// Events of run and block records that could not be read back (what they repeat was
    /// in a damaged chunk).
    lost: u64,
}

impl ThreadCursor {
    /// The block a block record makes of the events before it (`None` if there are
    /// fewer than its period, after a damaged chunk, if it holds no whole repetition, or
    /// more than the tracer ever counts).
    fn block(
        plain: &VecDeque<(u32, RawEvent)>,
        count: u64,
        positions: &[RawRun],
    ) -> Option<StagedBlock> {
        let period = positions.len();
        // The tracer ends a block before its count passes u32::MAX: a larger one is damage.
        if count == 0 || count > u32::MAX as u64 || plain.len() < period {
            return None;
        }
        let body = plain.iter().skip(plain.len() - period);
        // The first repetition follows the events it repeats (its times only order it
        // among other threads' events; its statistics are the block's).
        let mut previous_end = plain
            .back()
            .map_or(0, |(_, event)| event.start.saturating_add(event.duration));
        let mut calls = Vec::with_capacity(period);
        let mut first = Vec::with_capacity(period);
        for ((call, event), run) in body.zip(positions) {
            let start = previous_end;
            previous_end = start.saturating_add(event.duration);
            calls.push(*call);
            first.push(RawEvent {
                start,
                ..event.moved(run.stride)
            });
        }
        Some(StagedBlock {
            count,
            calls,
            first,
            positions: positions.to_vec(),
        })
    }

    /// Keeps an event among the last ones a block may repeat.
    fn remember(&mut self, call: u32, event: RawEvent) {
        if self.plain.len() == MAX_BLOCK_PERIOD {
            self.plain.pop_front();
        }
        self.plain.push_back((call, event));
    }

    fn next(&mut self, file: &SegmentFile, buffer: &mut Vec<u8>) -> Option<(u32, Staged)> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            if let Some(expanding) = &mut self.expanding {
                if expanding.next(&mut self.ready) {
                    continue;
                }
                self.expanding = None;
            }
            if let Some(event) = self.events.next() {
                if let (_, Staged::Steps(steps)) = event {
                    self.expanding = Some(StepsExpansion::new(steps));
                    continue;
                }
                return Some(event);
            }
            let (_, index) = self.chunks.next()?;
            if file.read_chunk(index, buffer).is_err() {
                continue;
            }
            let Ok(records) = segment::records(buffer) else {
                // A damaged chunk: a run or block after it would repeat events we did not
                // read.
                self.last = None;
                self.plain.clear();
                continue;
            };
            let mut events = Vec::new();
            for record in records {
                match record {
                    // A block that never completed a repetition (the next event did not
                    // continue it) adds nothing: its waiting events follow as event records,
                    // and the tracer keeps the events before it for a longer block.
                    Record::Block { count: 0, .. } => {}
                    Record::Block { count, positions } => {
                        let Some(block) = Self::block(&self.plain, count, &positions) else {
                            // Damage (a chunk that could not be read): its events are lost,
                            // and said so.
                            self.lost = self
                                .lost
                                .saturating_add(count.saturating_mul(positions.len() as u64));
                            self.plain.clear();
                            continue;
                        };
                        // Its repetitions, for a longer block whose body holds them.
                        for (repetition, position) in
                            last_repetitions(block.count, positions.len(), MAX_BLOCK_PERIOD)
                        {
                            let stride = positions[position].stride;
                            self.remember(
                                block.calls[position],
                                block.first[position].moved(stride.wrapping_mul(repetition as i64)),
                            );
                        }
                        events.push((0, Staged::Block(Box::new(block))));
                    }
                    Record::Event { call, event } => {
                        self.last = Some(event);
                        self.remember(call, event);
                        events.push((call, Staged::Event(event)));
                    }
                    Record::Run { call, run } => {
                        let Some(previous) = self.last else {
                            // Nothing before it to repeat (after a damaged chunk): lost, and
                            // said so.
                            self.lost = self.lost.saturating_add(run.count);
                            self.plain.clear();
                            continue;
                        };
                        let first = RawEvent {
                            start: previous.start.saturating_add(previous.duration),
                            ..previous.moved(run.stride)
                        };
                        // Its repetitions, for a block whose body holds them.
                        for (repetition, _) in last_repetitions(run.count, 1, MAX_BLOCK_PERIOD) {
                            self.remember(
                                call,
                                first.moved(run.stride.wrapping_mul(repetition as i64)),
                            );
                        }
                        events.push((call, Staged::Run(first, run)));
                    }
                    Record::Offsets {
                        positions,
                        offsets,
                        sizes,
                    } => {
                        // Blocks never repeat across it; a run after it would repeat its last
                        // event (the tracer writes an event record first).
                        self.plain.clear();
                        let mut last = positions[positions.len() - 1].event;
                        if positions.len() == 1 {
                            last.offset = offsets.last().copied().unwrap_or(last.offset);
                            if let Some(size) = sizes.last() {
                                (last.request, last.result) = (*size, *size as i64);
                            }
                        }
                        self.last = Some(last);
                        events.push((0, Staged::Offsets(positions, offsets, sizes)));
                    }
                    Record::Steps(steps) => {
                        // Like an offsets record: blocks never repeat across it, and the
                        // tracer writes an event record before any run after it.
                        self.plain.clear();
                        self.last = None;
                        events.push((0, Staged::Steps(steps)));
                    }
                    // What a block repeats are the events of event, run and block records
                    // with nothing else between them but definitions (as the tracer has it).
                    Record::Path { .. } | Record::Context { .. } | Record::Module { .. } => {}
                    _ => self.plain.clear(),
                }
            }
            self.events = events.into_iter();
        }
    }
}

/// File offsets the hot path does not record: positions of open file descriptions (shared
/// through `dup`) and of stdio streams.
#[derive(Default)]
struct OffsetTracker {
    descriptors: HashMap<u64, usize>,
    positions: Vec<Option<i64>>,
    streams: HashMap<u64, Option<i64>>,
}

impl OffsetTracker {
    fn new_description(&mut self, position: Option<i64>) -> usize {
        self.positions.push(position);
        self.positions.len() - 1
    }

    fn description(&mut self, fd: u64) -> usize {
        if let Some(description) = self.descriptors.get(&fd) {
            return *description;
        }
        let description = self.new_description(None);
        self.descriptors.insert(fd, description);
        description
    }

    /// Whether each occurrence of `event` moves a position this tracker keeps on by what it
    /// read or wrote (a descriptor's or a stream's).
    fn moves_position(call: Call, event: &Event) -> bool {
        match (call.layer(), call.class()) {
            (Layer::Posix, CallClass::Read | CallClass::Write) => {
                event.flags & event_flags::EXPLICIT_OFFSET == 0
            }
            (Layer::Stdio, CallClass::Read | CallClass::Write) => !is_scanf(call),
            _ => false,
        }
    }

    /// After [`OffsetTracker::apply`] on a seek that later occurrences repeated, each
    /// further on (a run or a block's position): the last of them went `by` further, and
    /// what the body did after it at the descriptor's position moved on by as much.
    fn seeks_moved(&mut self, call: Call, event: &Event, by: i64) {
        if call.class() != CallClass::Seek || event.failed() || event.offset < 0 || by == 0 {
            return;
        }
        if let Some(position) = self.position_mut(call.layer(), event.handle) {
            *position = position.wrapping_add(by);
        }
    }

    /// The known position of a descriptor (POSIX) or a stream (stdio), by handle.
    fn position_mut(&mut self, layer: Layer, handle: u64) -> Option<&mut i64> {
        match layer {
            Layer::Posix => {
                let description = self.description(handle);
                self.positions[description].as_mut()
            }
            Layer::Stdio => self.streams.get_mut(&handle).and_then(Option::as_mut),
            _ => None,
        }
    }

    /// After [`OffsetTracker::apply`] on the first of a run: `more` further occurrences of
    /// the same call with the same values.
    fn repeat(&mut self, call: Call, event: &Event, more: u64) {
        // Seeks to the same place, syncs, stats, MPI calls: each occurrence leaves the
        // state as the first did.
        if !Self::moves_position(call, event) {
            return;
        }
        let moved = (event.bytes() as i64).saturating_mul(more as i64);
        if let Some(position) = self.position_mut(call.layer(), event.handle) {
            *position += moved;
        }
    }

    fn apply(&mut self, call: Call, event: &mut Event) {
        let ok = !event.failed();
        let explicit = event.flags & event_flags::EXPLICIT_OFFSET != 0;
        let start_position = |flags: u64| {
            if flags & libc_append() != 0 {
                None
            } else {
                Some(0)
            }
        };
        match (call.layer(), call.class()) {
            (Layer::Posix, CallClass::Open) if ok => {
                let description = self.new_description(start_position(event.aux));
                self.descriptors.insert(event.result as u64, description);
            }
            (Layer::Posix, CallClass::Close) if ok => {
                self.descriptors.remove(&event.handle);
            }
            (Layer::Posix, CallClass::Dup) if ok => {
                let description = self.description(event.handle);
                self.descriptors.insert(event.result as u64, description);
            }
            (Layer::Posix, CallClass::Read | CallClass::Write) if !explicit => {
                let description = self.description(event.handle);
                let position = &mut self.positions[description];
                event.offset = position.unwrap_or(UNKNOWN);
                if let Some(position) = position {
                    *position += event.bytes() as i64;
                }
            }
            (Layer::Posix, CallClass::Seek) if ok => {
                let description = self.description(event.handle);
                self.positions[description] = Some(event.result);
            }
            (Layer::Stdio, CallClass::Open) if ok => {
                let position = if call == Call::fdopen {
                    let description = self.description(event.aux);
                    self.positions[description]
                } else {
                    start_position(event.request)
                };
                self.streams.insert(event.handle, position);
            }
            (Layer::Stdio, CallClass::Close) => {
                self.streams.remove(&event.handle);
                if ok {
                    self.descriptors.remove(&event.aux);
                }
            }
            (Layer::Stdio, CallClass::Read | CallClass::Write) => {
                let position = self.streams.entry(event.handle).or_insert(None);
                event.offset = position.unwrap_or(UNKNOWN);
                if is_scanf(call) {
                    // scanf does not say how many bytes it consumed.
                    *position = None;
                } else if let Some(position) = position {
                    *position += event.bytes() as i64;
                }
            }
            (Layer::Stdio, CallClass::Seek) if ok && event.offset >= 0 => {
                self.streams.insert(event.handle, Some(event.offset));
            }
            _ => {}
        }
    }
}

fn is_scanf(call: Call) -> bool {
    matches!(
        call,
        Call::fscanf | Call::__isoc99_fscanf | Call::vfscanf | Call::__isoc99_vfscanf
    )
}

/// `O_APPEND` on Linux (the same on every architecture cairn builds for).
const fn libc_append() -> u64 {
    0o2000
}

/// Lists the staging segments of a directory.
pub fn segment_files(directory: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(directory).map_err(|source| TraceError::Io {
        path: directory.display().to_string(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "seg"))
        .collect();
    files.sort();
    Ok(files)
}

/// The trace's modules and calling contexts, filled as kept events use them.
#[derive(Default)]
struct ContextTable {
    modules: Table<Vec<u8>>,
    contexts: Table<Context>,
    /// Code ranges per module path (`None`: unreadable, frames are trusted).
    module_code: HashMap<Vec<u8>, Option<Segments>>,
}

impl ContextTable {
    /// The trace's index + 1 of the segment's context `id` (0 if it was never recorded).
    fn intern(&mut self, segment: &SegmentSummary, id: u32) -> u32 {
        let Some(frames) = segment.contexts.get(&id) else {
            return 0;
        };
        // The call site is always exact; deeper frames stop at the first one that is not a
        // return address (in code, after a call instruction): a frame-pointer walk through
        // code built without frame pointers reads stack data, so equal paths compare equal.
        // A deeper frame must also be able to have called the frame before it (a direct
        // call's target is that frame's function, or a stub into another module): stale
        // return addresses left on the stack by earlier calls follow a call instruction too.
        let mut kept = 0;
        for (depth, (module, offset)) in frames.iter().enumerate() {
            let callee = depth.checked_sub(1).map(|deeper| frames[deeper]).map(
                |(callee_module, callee_offset)| {
                    (callee_module == *module).then_some(callee_offset)
                },
            );
            let in_code = segment.modules.get(module).is_some_and(|path| {
                self.module_code
                    .entry(path.clone())
                    .or_insert_with(|| Segments::read(Path::new(OsStr::from_bytes(path))))
                    .as_ref()
                    .is_none_or(|segments| {
                        segments.holds_return_address(*offset)
                            && callee.is_none_or(|callee| segments.may_have_called(*offset, callee))
                    })
            });
            if depth > 0 && !in_code {
                break;
            }
            kept += 1;
        }
        let frames = frames[..kept]
            .iter()
            .map(|(module, offset)| {
                let module = segment
                    .modules
                    .get(module)
                    .map(|path| self.modules.intern(path));
                (module, *offset)
            })
            .collect();
        self.contexts.intern(&Context { frames }) + 1
    }
}

/// Gives every path of every segment its index in the trace's file table.
///
/// Processes without a rank come first, each file in its process's order of first use
/// (files a loop opens one after another, `ckpt-%d`, get consecutive indices, which the
/// file table stores as one numbered run). Ranks follow in rank order, column by column —
/// every rank's first file, then every rank's second… — so one file per rank
/// (`part-%d{rank}`) also gets consecutive indices.
fn index_files(
    segments: &[SegmentSummary],
    python_prefixes: &[Vec<u8>],
    files: &mut Vec<FileInfo>,
    file_use: &mut Vec<(bool, bool, bool)>,
) -> Vec<HashMap<u32, u32>> {
    let mut file_index: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut by_segment: Vec<HashMap<u32, u32>> = vec![HashMap::new(); segments.len()];
    let paths: Vec<Vec<(u32, &Vec<u8>)>> = segments
        .iter()
        .map(|segment| {
            let mut paths: Vec<(u32, &Vec<u8>)> =
                segment.paths.iter().map(|(id, path)| (*id, path)).collect();
            paths.sort_unstable();
            paths
        })
        .collect();
    let mut index_one = |segment: usize, (id, path): (u32, &Vec<u8>)| {
        let index = *file_index.entry(path.clone()).or_insert_with(|| {
            files.push(FileInfo {
                path: path.clone(),
                noise: noise::classify_path(path, python_prefixes),
            });
            file_use.push((false, false, false));
            (files.len() - 1) as u32
        });
        by_segment[segment].insert(id, index);
    };
    let (mut ranked, unranked): (Vec<usize>, Vec<usize>) =
        (0..segments.len()).partition(|index| segments[*index].header.rank.is_some());
    for segment in unranked {
        for path in &paths[segment] {
            index_one(segment, *path);
        }
    }
    ranked.sort_by_key(|index| (segments[*index].header.rank, *index));
    let widest = ranked.iter().map(|index| paths[*index].len()).max();
    for column in 0..widest.unwrap_or(0) {
        for segment in &ranked {
            if let Some(path) = paths[*segment].get(column) {
                index_one(*segment, *path);
            }
        }
    }
    by_segment
}

/// Keeps only the files some stream names (a process names every path it touches, but the
/// events of some are only counted): in their order, or, for several MPI ranks
/// (`natural`), in natural order as a merge of their traces lists them (each rank's
/// files together, so the file table stores them as one block whatever the ranks).
fn drop_unused_files(
    files: Vec<FileInfo>,
    mut streams: Vec<Stream>,
    natural: bool,
) -> (Vec<FileInfo>, Vec<Stream>) {
    let mut used = vec![false; files.len()];
    for stream in &streams {
        for file in &stream.files {
            used[*file as usize] = true;
        }
    }
    let mut kept: Vec<u32> = (0..files.len() as u32)
        .filter(|index| used[*index as usize])
        .collect();
    if natural {
        kept.sort_by_cached_key(|index| crate::names::natural_order(&files[*index as usize].path));
    }
    let files = crate::reorder_files(files, &kept, &mut streams);
    (files, streams)
}

/// Builds the trace of the segments in `directory`.
///
/// The MPI runtime's own I/O (before `main`, inside `MPI_Init`/`MPI_Finalize`, and threads
/// that only touch runtime files such as the progress threads' event descriptors) differs
/// from rank to rank with timing, so it would make every rank's stream different and the
/// trace grow with the number of ranks. By default (`run.runtime_io`) it is only counted
/// ([`Process::runtime_events_dropped`]; the summary says so); it can be kept in full for
/// the first rank or for every rank.
pub fn collect(directory: &Path, run: RunInfo) -> Result<Trace> {
    collect_segments(&segment_files(directory)?, run)
}

/// [`collect`] of the given segment files (e.g. one rank's, from a staging directory all
/// ranks share).
pub fn collect_segments(paths: &[PathBuf], run: RunInfo) -> Result<Trace> {
    let mut diagnostics = Vec::new();
    let mut segments = Vec::new();
    for path in paths {
        match first_pass(path, &mut diagnostics) {
            Ok(summary) => segments.push(summary),
            Err(error) => diagnostics.push(format!("{}: skipped ({error})", path.display())),
        }
    }
    // Process images in start order: parents and exec predecessors come first. The images
    // of MPI ranks then take their places in rank order (a rank's own images, forks and
    // execs, keep their start order), so the per-process columns step by one rank.
    segments.sort_by_key(|segment| (segment.header.start_monotonic, segment.header.pid));
    let ranked_places: Vec<usize> = (0..segments.len())
        .filter(|index| segments[*index].header.rank.is_some())
        .collect();
    let mut by_rank = ranked_places.clone();
    by_rank.sort_by_key(|index| (segments[*index].header.rank, *index));
    let mut slots: Vec<Option<SegmentSummary>> = segments.into_iter().map(Some).collect();
    let moved: Vec<SegmentSummary> = by_rank
        .iter()
        .map(|index| slots[*index].take().expect("each image moves once"))
        .collect();
    for (place, segment) in ranked_places.iter().zip(moved) {
        slots[*place] = Some(segment);
    }
    let segments: Vec<SegmentSummary> = slots.into_iter().flatten().collect();
    let run_start = segments
        .iter()
        .map(|segment| segment.header.start_monotonic)
        .min()
        .unwrap_or(0);
    let run_end = segments
        .iter()
        .map(|segment| segment.last_time)
        .max()
        .unwrap_or(run_start);
    let relative = |time: u64| time.saturating_sub(run_start);

    let mut processes: Vec<Process> = Vec::with_capacity(segments.len());
    for (index, segment) in segments.iter().enumerate() {
        let header = &segment.header;
        let earlier = |pid: u32| {
            (0..index)
                .rev()
                .find(|&other| segments[other].header.pid == pid)
        };
        let exec_of = if header.forked {
            None
        } else {
            earlier(header.pid)
        };
        let parent = match exec_of {
            Some(previous) => processes[previous].parent.map(|p| p as usize),
            None => earlier(header.parent_pid),
        };
        if let Some(previous) = exec_of {
            if processes[previous].ending == Ending::Unknown {
                processes[previous].ending = Ending::Exec;
            }
        }
        processes.push(Process {
            pid: header.pid,
            parent_pid: header.parent_pid,
            parent: parent.map(|p| p as u32),
            exec_of: exec_of.map(|p| p as u32),
            forked: header.forked,
            executable: header.executable.clone(),
            arguments: header
                .command_line
                .split(|byte| *byte == 0)
                .filter(|argument| !argument.is_empty())
                .map(<[u8]>::to_vec)
                .collect(),
            working_directory: header.working_directory.clone(),
            hostname: header.hostname.clone(),
            start: relative(header.start_monotonic),
            end: relative(segment.last_time),
            main_start: segment.main_start.map(relative),
            ending: segment.ending,
            threads: segment.threads.len() as u32,
            untraced_calls: segment.untraced_calls,
            rank: header.rank,
            runtime_events_dropped: 0,
            runtime_bytes_dropped: [0; 2],
            kernel_io: segment.kernel_io,
            unrecorded: segment.unrecorded.map(|lost| Unrecorded {
                calls: lost.calls,
                errno: lost.errno,
                at: relative(lost.clock),
            }),
            group_times: false,
            group_counters: false,
        });
    }
    let first_rank = run.first_rank.or(segments
        .iter()
        .filter_map(|segment| segment.header.rank)
        .min());

    let python_prefixes: Vec<Vec<u8>> = {
        let mut prefixes: Vec<Vec<u8>> = processes
            .iter()
            .filter_map(|process| noise::python_prefix(&process.executable))
            .collect();
        prefixes.sort();
        prefixes.dedup();
        prefixes
    };

    let mut calls: Table<String> = Table::default();
    // What the segments say of calls this build has no row for.
    let mut kinds: HashMap<String, (Layer, CallClass)> = HashMap::new();
    let mut files: Vec<FileInfo> = Vec::new();
    // (used by any event, used by an event after main) per file.
    let mut file_use: Vec<(bool, bool, bool)> = Vec::new();
    let mut context_table = ContextTable::default();
    let mut streams = Vec::new();
    let files_by_segment = index_files(&segments, &python_prefixes, &mut files, &mut file_use);

    for (process_index, segment) in segments.iter().enumerate() {
        let header = &segment.header;
        // Per-process ids → calls; a call enters the trace's table when a kept event first
        // uses it (the segment names every hooked call).
        // A library call this build has no row for (hooks a user generated into another
        // libcairn.so) is collected as the stand-in of its class; the trace keeps its name,
        // layer and class.
        let calls_here: Vec<Option<Call>> = header
            .call_names
            .iter()
            .enumerate()
            .map(|(index, name)| {
                Call::from_name(name).or_else(|| {
                    let (layer, class) = header.call_kinds.get(index)?;
                    let layer = *Layer::ALL.get(*layer as usize)?;
                    let class = *CallClass::ALL.get(*class as usize)?;
                    if !layer.is_library() {
                        return None;
                    }
                    kinds.insert(name.clone(), (layer, class));
                    Some(Call::stand_in(class))
                })
            })
            .collect();
        let mut call_numbers: Vec<Option<u16>> = vec![None; calls_here.len()];
        let files_here = &files_by_segment[process_index];
        // Contexts enter the trace when a kept event first uses them.
        let mut contexts_here: HashMap<u32, u32> = HashMap::new();

        let file = SegmentFile::open(&segment.path)?;
        let mut buffer = Vec::new();
        let mut cursors: Vec<ThreadCursor> = segment
            .threads
            .iter()
            .map(|(thread, chunks)| ThreadCursor {
                thread: *thread,
                chunks: chunks.clone().into_iter(),
                events: Vec::new().into_iter(),
                last: None,
                plain: VecDeque::new(),
                expanding: None,
                ready: VecDeque::new(),
                lost: 0,
            })
            .collect();
        cursors.sort_by_key(|cursor| cursor.thread);
        let encoders: Vec<StreamEncoder> = cursors
            .iter()
            .map(|_| {
                let mut encoder = StreamEncoder::default();
                encoder.set_rank(header.rank.map(i64::from));
                if let Some(precision) = run.precision.filter(|precision| *precision < 100) {
                    encoder.set_precision(precision, run.histogram_bins);
                }
                if let Some(budget) = run.stream_budget {
                    encoder.set_budget(budget);
                }
                encoder
            })
            .collect();
        // Each thread's own file table (trace-wide index → position), so a rank's events
        // name its files the way every other rank's do.
        let mut local_files: Vec<(HashMap<u32, u32>, Vec<u32>)> =
            cursors.iter().map(|_| Default::default()).collect();
        // Descriptors, handles, ids and addresses differ between processes and steps:
        // numbered per process (see `handles`).
        let mut handles = Handles::default();
        let mut heap = BinaryHeap::new();
        let mut pending: Vec<Option<(u32, Staged)>> = Vec::with_capacity(cursors.len());
        for (slot, cursor) in cursors.iter_mut().enumerate() {
            let next = cursor.next(&file, &mut buffer);
            if let Some((_, staged)) = &next {
                heap.push(Reverse((staged.first().start, slot)));
            }
            pending.push(next);
        }
        let main_known = segment.main_start.is_some();
        let runtime_counted_only = header.rank.is_some()
            && match run.runtime_io {
                RuntimeIo::FirstRank => header.rank != first_rank,
                RuntimeIo::AllRanks => false,
                RuntimeIo::NoRank => true,
            };
        // Per thread: whether it did anything but the runtime's I/O.
        let mut program_seen = vec![false; cursors.len()];
        let mut dropped = 0u64;
        // Bytes (read, written) of the POSIX and stdio calls not kept (for the comparison
        // with the kernel's counters), and per thread of those kept.
        let mut dropped_bytes = [0u64; 2];
        let mut kept_bytes = vec![[0u64; 2]; cursors.len()];
        let mut tracker = OffsetTracker::default();
        // One staged event (or the first of a run's or a block position's `occurrences`)
        // made the trace's: calls, contexts, files, descriptors and handles numbered,
        // offsets resolved (and moved on by the other occurrences, or, for a block's
        // positions, listed in `deferred` to be moved on once all are resolved); `None` if
        // it is not kept. `sizes`: what all the occurrences moved, when each has a size of
        // its own (an offsets record of sizes), instead of the first's bytes each.
        let mut prepare = |tracker: &mut OffsetTracker,
                           slot: usize,
                           call_id: u32,
                           raw: RawEvent,
                           occurrences: u64,
                           sizes: Option<u64>,
                           deferred: Option<&mut Vec<(Call, Event)>>|
         -> Option<(Call, Event)> {
            let Some(Some(call)) = calls_here.get(call_id as usize).copied() else {
                diagnostics.push(format!(
                    "pid {}: event of unknown call #{call_id} skipped",
                    header.pid
                ));
                return None;
            };
            let mut flags = raw.flags;
            if !main_known {
                flags &= !event_flags::BEFORE_MAIN;
            }
            // Named as the C call it stands for (`Call::reported_name`): the binding is kept.
            if call.fortran_binding() != cairn_model::FortranBinding::None {
                flags |= event_flags::FORTRAN;
            }
            if call == Call::MPI_Comm_made {
                flags |= event_flags::AUX_IS_RANKS;
            }
            let file_index = files_here.get(&raw.file).copied();
            let start = segment.clock.nanoseconds(raw.start);
            let end = segment
                .clock
                .nanoseconds(raw.start.saturating_add(raw.duration))
                .max(start);
            // The tracer keeps a seek's positions relative to the position reached.
            let (request, result) =
                positional::absolute(flags, raw.offset, raw.request, raw.result);
            // An AIO completion holds its submission's clock reading: the latency from
            // submission to completion is kept instead (0 when the submission is unknown).
            let aux = if call.latency_in_aux() && raw.aux != 0 {
                end.saturating_sub(segment.clock.nanoseconds(raw.aux))
            } else {
                raw.aux
            };
            let mut event = Event {
                call: 0,
                start: relative(start),
                duration: end - start,
                file: file_index,
                handle: raw.handle,
                offset: raw.offset,
                request,
                result,
                errno: raw.errno,
                context: 0,
                aux,
                flags,
            };
            tracker.apply(call, &mut event);
            match deferred {
                Some(deferred) => deferred.push((call, event.clone())),
                None if occurrences > 1 => tracker.repeat(call, &event, occurrences - 1),
                None => {}
            }
            let runtime_file = flags & event_flags::INSIDE_MPIIO != 0
                && file_index.is_some()
                && !segment.program_files.contains(&raw.file);
            let direction = match (call.layer(), call.class()) {
                (Layer::Posix | Layer::Stdio, CallClass::Read) => Some(0),
                (Layer::Posix | Layer::Stdio, CallClass::Write) => Some(1),
                _ => None,
            };
            let moved = match sizes {
                Some(sizes) if !event.failed() => sizes,
                _ => (event.result.max(0) as u64).saturating_mul(occurrences),
            };
            if runtime_counted_only && (flags & event_flags::RUNTIME != 0 || runtime_file) {
                dropped += occurrences;
                if let Some(direction) = direction {
                    dropped_bytes[direction] += moved;
                }
                return None;
            }
            if let Some(direction) = direction {
                kept_bytes[slot][direction] += moved;
            }
            event.call = *call_numbers[call_id as usize].get_or_insert_with(|| {
                let name = &header.call_names[call_id as usize];
                calls.intern(&Call::reported_name(name).into_owned()) as u16
            });
            event.context = match contexts_here.get(&raw.context) {
                Some(index) => *index,
                None => {
                    let index = context_table.intern(segment, raw.context);
                    contexts_here.insert(raw.context, index);
                    index
                }
            };
            let (positions, table) = &mut local_files[slot];
            let mut local = |index: u32| {
                *positions.entry(index).or_insert_with(|| {
                    table.push(index);
                    table.len() as u32 - 1
                })
            };
            if matches!(call, Call::rename | Call::renameat | Call::renameat2) {
                // aux holds the per-process file id of the new name: made the stream's.
                event.aux = files_here
                    .get(&(raw.aux as u32))
                    .map_or(0, |index| local(*index) as u64 + 1);
                if event.aux != 0 && file_index.is_some() {
                    event.flags |= event_flags::AUX_IS_FILE;
                }
            }
            program_seen[slot] |=
                file_index.is_none_or(|index| files[index as usize].noise.is_none());
            if let Some(index) = file_index {
                let usage = &mut file_use[index as usize];
                usage.0 = true;
                let library = event_flags::IN_RUNTIME | event_flags::INSIDE_MPIIO;
                usage.1 |= flags & (event_flags::RUNTIME | library) == 0;
                usage.2 |= flags & library != 0;
                event.file = Some(local(index));
            }
            handles.renumber(call, &mut event);
            Some((call, event))
        };
        // A large process's encoding runs beside the reading (see `Sink`).
        let chunks: usize = segment.threads.values().map(Vec::len).sum();
        let mut sink = Sink::new(encoders, chunks >= PIPELINE_CHUNKS);
        while let Some(Reverse((_, slot))) = heap.pop() {
            let Some((call_id, staged)) = pending[slot].take() else {
                continue;
            };
            let next = cursors[slot].next(&file, &mut buffer);
            if let Some((_, next_staged)) = &next {
                heap.push(Reverse((next_staged.first().start, slot)));
            }
            pending[slot] = next;
            match staged {
                Staged::Event(raw) => {
                    if let Some((call, event)) =
                        prepare(&mut tracker, slot, call_id, raw, 1, None, None)
                    {
                        sink.push(Push::Event(slot, event, Some(call.class())));
                    }
                }
                Staged::Run(first, run) => {
                    let Some((call, event)) =
                        prepare(&mut tracker, slot, call_id, first, run.count, None, None)
                    else {
                        continue;
                    };
                    let scale = segment.clock.scale(first.start);
                    let stride = if first.offset >= 0 {
                        run.stride
                    } else {
                        // At the descriptor's position: each occurrence moves it on.
                        event.bytes() as i64
                    };
                    // Seeks moving by a stride leave the position where the last one went.
                    if run.count > 1 {
                        tracker.seeks_moved(
                            call,
                            &event,
                            stride.wrapping_mul(run.count as i64 - 1),
                        );
                    }
                    sink.push(Push::Run {
                        slot,
                        event,
                        class: Some(call.class()),
                        count: run.count,
                        stride,
                        last_end: relative(segment.clock.nanoseconds(run.last_end)),
                        statistics: Box::new((
                            run_statistics(&run.duration, Some(&run.histogram), run.count, scale),
                            run_statistics(&run.gap, None, run.count, scale),
                        )),
                    });
                }
                Staged::Offsets(positions, offsets, sizes) => {
                    let count = offsets.len() as u64;
                    let scale = segment.clock.scale(positions[0].event.start);
                    // Each position made the trace's once (its first repetition applied to
                    // the offsets tracked, its bytes counted for every repetition, or the
                    // sizes' sum); the others are then resolved in turn — a transfer at the
                    // descriptor's position lands where the seek before it went, or where
                    // the transfer before it left it.
                    let mut deferred = Vec::with_capacity(positions.len());
                    // Per position, its entry in `deferred` (none for an unknown call): the
                    // event as the tracker knows it, with the process's own descriptor and
                    // stream handles (the prepared event's are renumbered, and a stream
                    // renumbered is one the tracker never saw: every repetition after the
                    // first lost its position).
                    let mut entries = Vec::with_capacity(positions.len());
                    let prepared: Vec<Option<(Call, Event)>> = positions
                        .iter()
                        .enumerate()
                        .map(|(index, position)| {
                            let sizes = (index == 0 && !sizes.is_empty()).then(|| {
                                sizes
                                    .iter()
                                    .fold(0u64, |sum, size| sum.saturating_add(*size))
                            });
                            let entry = deferred.len();
                            let prepared = prepare(
                                &mut tracker,
                                slot,
                                position.call,
                                position.event,
                                count,
                                sizes,
                                Some(&mut deferred),
                            );
                            entries.push((deferred.len() > entry).then_some(entry));
                            prepared
                        })
                        .collect();
                    let first_offset = positions[0].event.offset;
                    let mut resolved = Vec::with_capacity(offsets.len() * positions.len());
                    for (repetition, offset) in offsets.iter().enumerate() {
                        for (index, (prepared, entry)) in prepared.iter().zip(&entries).enumerate()
                        {
                            let Some(entry) = entry else {
                                continue;
                            };
                            let (call, tracked) = &deferred[*entry];
                            if repetition == 0 {
                                if let Some((_, event)) = prepared {
                                    resolved.push(event.offset);
                                }
                                continue;
                            }
                            let mut event = tracked.clone();
                            if index == 0 && !sizes.is_empty() {
                                let size = sizes[repetition];
                                (event.request, event.result) = (size, size as i64);
                                if *offset >= 0 {
                                    event.offset = *offset;
                                }
                            } else if index == 0 {
                                let by = offset.wrapping_sub(first_offset);
                                (event.request, event.result) =
                                    positional::moved(event.flags, by, event.request, event.result);
                                event.offset = *offset;
                            }
                            tracker.apply(*call, &mut event);
                            if prepared.is_some() {
                                resolved.push(event.offset);
                            }
                        }
                    }
                    let body: Vec<BlockPosition> = prepared
                        .into_iter()
                        .zip(&positions)
                        .filter_map(|(prepared, position)| {
                            let (call, event) = prepared?;
                            let run = &position.run;
                            Some(BlockPosition {
                                event,
                                class: Some(call.class()),
                                stride: 0,
                                last_end: relative(segment.clock.nanoseconds(run.last_end)),
                                duration: run_statistics(
                                    &run.duration,
                                    Some(&run.histogram),
                                    count,
                                    scale,
                                ),
                                gap: run_statistics(&run.gap, None, count, scale),
                            })
                        })
                        .collect();
                    sink.push(Push::Offsets {
                        slot,
                        body,
                        offsets: resolved,
                        sizes,
                        count,
                    });
                }
                // Expanded by the thread's cursor before it gets here.
                Staged::Steps(_) => {}
                Staged::Block(block) => {
                    let scale = segment.clock.scale(block.first[0].start);
                    let mut body = Vec::with_capacity(block.first.len());
                    let mut deferred = Vec::with_capacity(block.first.len());
                    let mut kept = Vec::with_capacity(block.first.len());
                    // Per position, its entry in `deferred` (none for an unknown call).
                    let mut entries = Vec::with_capacity(block.first.len());
                    for (call_id, first) in block.calls.iter().zip(&block.first) {
                        let entry = deferred.len();
                        // A position only the runtime made (and not kept) leaves the body.
                        kept.push(prepare(
                            &mut tracker,
                            slot,
                            *call_id,
                            *first,
                            block.count,
                            None,
                            Some(&mut deferred),
                        ));
                        entries.push((deferred.len() > entry).then_some(entry));
                    }
                    // Each repetition moves a descriptor's position by what its calls at
                    // that position moved in one — unless one of them is a seek (it returned
                    // the same position in every repetition) or the body opens the
                    // descriptor or stream (with the same flags each time): then each
                    // repetition leaves it where the first did. The repetitions before the
                    // block ended likewise, so even calls before that open in the body find
                    // it where the first repetition did.
                    let restarted: Vec<(u64, Layer)> = deferred
                        .iter()
                        .filter_map(|(call, event)| match (call.layer(), call.class()) {
                            (Layer::Posix | Layer::Stdio, CallClass::Seek) => {
                                Some((event.handle, call.layer()))
                            }
                            (Layer::Posix, CallClass::Open) if !event.failed() => {
                                Some((event.result as u64, Layer::Posix))
                            }
                            (Layer::Stdio, CallClass::Open) if !event.failed() => {
                                Some((event.handle, Layer::Stdio))
                            }
                            _ => None,
                        })
                        .collect();
                    let moves = |event: &Event, call: Call| {
                        OffsetTracker::moves_position(call, event)
                            && !restarted.contains(&(event.handle, call.layer()))
                    };
                    let advance = |handle: u64, layer: Layer| -> i64 {
                        deferred
                            .iter()
                            .filter(|(call, event)| {
                                moves(event, *call)
                                    && event.handle == handle
                                    && call.layer() == layer
                            })
                            .map(|(_, event)| event.bytes() as i64)
                            .sum()
                    };
                    // A seek moving by a stride (IOR's `lseek(fd, i * size)`) moves the
                    // calls at the descriptor's position after it by the same stride; calls
                    // before the body's first seek follow the body's last one (of the
                    // repetition before).
                    let seek_stride = |index: usize, handle: u64, layer: Layer| -> Option<i64> {
                        let is_seek = |i: &usize| {
                            entries[*i].is_some_and(|entry| {
                                let (call, event) = &deferred[entry];
                                call.class() == CallClass::Seek
                                    && call.layer() == layer
                                    && event.handle == handle
                                    && event.offset >= 0
                            })
                        };
                        (0..index)
                            .rev()
                            .find(is_seek)
                            .or_else(|| (index..entries.len()).rev().find(is_seek))
                            .map(|i| block.positions[i].stride)
                    };
                    let strides: Vec<i64> = entries
                        .iter()
                        .enumerate()
                        .zip(&block.positions)
                        .map(
                            |((index, entry), run)| match entry.map(|entry| &deferred[entry]) {
                                Some((call, event)) if moves(event, *call) => {
                                    advance(event.handle, call.layer())
                                }
                                Some((call, event))
                                    if OffsetTracker::moves_position(*call, event)
                                        && event.offset >= 0 =>
                                {
                                    seek_stride(index, event.handle, call.layer())
                                        .unwrap_or(run.stride)
                                }
                                _ => run.stride,
                            },
                        )
                        .collect();
                    if block.count > 1 {
                        for (call, event) in &deferred {
                            if !restarted.contains(&(event.handle, call.layer())) {
                                tracker.repeat(*call, event, block.count - 1);
                            }
                        }
                        // The position each seek-restarted descriptor is left at moves by
                        // the stride of the body's last seek on it.
                        let mut last_seeks: Vec<(Call, &Event, i64)> = Vec::new();
                        for (entry, run) in entries.iter().zip(&block.positions) {
                            if let Some((call, event)) = entry.map(|entry| &deferred[entry]) {
                                if call.class() == CallClass::Seek {
                                    last_seeks.retain(|(c, e, _)| {
                                        !(e.handle == event.handle && c.layer() == call.layer())
                                    });
                                    last_seeks.push((*call, event, run.stride));
                                }
                            }
                        }
                        let more = block.count as i64 - 1;
                        for (call, event, stride) in last_seeks {
                            tracker.seeks_moved(call, event, stride.wrapping_mul(more));
                        }
                    }
                    for ((prepared, run), stride) in
                        kept.into_iter().zip(&block.positions).zip(strides)
                    {
                        let Some((call, event)) = prepared else {
                            continue;
                        };
                        body.push(BlockPosition {
                            event,
                            class: Some(call.class()),
                            stride,
                            last_end: relative(segment.clock.nanoseconds(run.last_end)),
                            duration: run_statistics(
                                &run.duration,
                                Some(&run.histogram),
                                block.count,
                                scale,
                            ),
                            gap: run_statistics(&run.gap, None, block.count, scale),
                        });
                    }
                    sink.push(Push::Block {
                        slot,
                        body,
                        count: block.count,
                    });
                }
            }
        }
        let encoders = sink.finish();
        for ((((cursor, encoder), (_, table)), program), kept) in cursors
            .iter()
            .zip(encoders)
            .zip(local_files)
            .zip(program_seen)
            .zip(&kept_bytes)
        {
            if runtime_counted_only && !program {
                dropped += encoder.len();
                dropped_bytes[0] += kept[0];
                dropped_bytes[1] += kept[1];
                continue;
            }
            if cursor.lost > 0 {
                diagnostics.push(format!(
                    "pid {} thread {}: {} events of folded repetitions could not be read back (the events they repeat were in a damaged chunk) and are not in the trace",
                    header.pid, cursor.thread, cursor.lost
                ));
            }
            if let Some(after) = encoder.degraded_after() {
                diagnostics.push(format!(
                    "pid {} thread {}: its stream passed its budget of {} bytes after {after} of its {} events; the rest keep their changing sizes, offsets and loop counts as histograms (precision {}), counts and bytes exact",
                    header.pid,
                    cursor.thread,
                    run.stream_budget.unwrap_or(0),
                    encoder.len(),
                    cairn_compress::stream::BUDGET_PRECISION,
                ));
            }
            if !encoder.is_empty() {
                streams.push(Stream::new(
                    process_index as u32,
                    cursor.thread,
                    encoder.finish(),
                    table,
                ));
            }
        }
        processes[process_index].runtime_events_dropped = dropped;
        processes[process_index].runtime_bytes_dropped = dropped_bytes;
    }
    // (used at all, used by the program itself, used inside the MPI runtime)
    for (file, (used, used_by_program, used_by_runtime)) in files.iter_mut().zip(&file_use) {
        if file.noise.is_none() && *used && !used_by_program {
            file.noise = Some(if *used_by_runtime {
                Noise::MpiRuntime
            } else {
                Noise::BeforeMain
            });
        }
    }

    let calls = CallInfo::table(&calls.values, &kinds);
    // A file's first access left beside the loop of the others (it is neither consecutive
    // nor sequential) joins it before ranks merge, so ranks share the joined loop.
    crate::data::rewrite_own_streams(&calls, &mut streams, |events, io| {
        events.with_iterations_joined(io)
    });
    let streams =
        crate::ranks::merge_streams(&processes, &calls, streams, run.precision.unwrap_or(100));
    let ranks: std::collections::HashSet<u32> = processes
        .iter()
        .filter_map(|process| process.rank)
        .collect();
    let (files, streams) = drop_unused_files(files, streams, ranks.len() > 1);
    Ok(Trace {
        meta: Meta {
            writer: run.writer,
            command: run.command,
            exit_status: run.exit_status,
            start_realtime: segments
                .first()
                .map_or(0, |segment| segment.header.start_realtime),
            duration: run_end.saturating_sub(run_start),
            process_time_step: 1,
        },
        calls,
        processes,
        files,
        modules: context_table.modules.values,
        contexts: context_table.contexts.values,
        streams,
        diagnostics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_conversion_interpolates_and_extrapolates() {
        let header = ProcessHeader {
            clock: segment::CLOCK_TSC,
            calibration: vec![(1_000, 100), (3_000, 1_100)],
            ..ProcessHeader::default()
        };
        // 2 ticks per ns up to tick 3000, then 4 ticks per ns (a later chunk's pair).
        let clock = TimeConverter::new(&header, vec![(7_000, 2_100)]);
        assert_eq!(clock.nanoseconds(1_000), 100);
        assert_eq!(clock.nanoseconds(2_000), 600);
        assert_eq!(clock.nanoseconds(5_000), 1_600);
        // Outside the pairs: the slope from the first to the last pair (6000 ticks, 2000 ns).
        assert_eq!(clock.nanoseconds(10_000), 3_100);
        assert_eq!(clock.nanoseconds(0), 0);
        let plain = TimeConverter::new(&ProcessHeader::default(), vec![(5, 6)]);
        assert_eq!(plain.nanoseconds(12_345), 12_345);
    }
}

//! The trace's contents and their sections on disk (see docs/FORMAT.md, "Sections").

use std::path::Path;
use std::sync::Arc;

use cairn_compress::stream::{Column, ColumnRole, EncodedStream, RankView};
use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::container::{SectionKind, TraceFile, TraceWriter};
pub use cairn_format::segment::KernelIo;
use cairn_model::{Call, CallClass, Event, Layer, MessageBytes};

use crate::noise::Noise;
use crate::{Result, TraceError};

mod groups;
mod processes;
use processes::{decode_processes, encode_processes};

/// Section versions this reader understands.
const VERSION: u16 = 1;
/// Version 29 of EVNT: the column is kept per call site, each site's offsets' steps, access
/// orders and sizes bit-packed in blocks (`compress/src/stream/column.rs`): 100,000 random
/// 4 KiB-aligned reads take 2.1 bytes each, not 3.0.
/// Version 28 of EVNT: a stream ranks share may carry the column of the one member whose
/// parts read it (rank 0 printing lines of their own sizes shares the others' stream).
/// Version 27 of EVNT: a key's result is a code in which a call that moved nothing (a
/// receive's posting) is one byte; receives made through Open MPI's Fortran bindings hold what arrived,
/// as C's do (a posting 0 bytes, a blocking receive and a completion the bytes their
/// statuses say arrived, a `MPI_SENDRECV` its `MPI_Sendrecv_received` share); before, a
/// posted capacity that readers reported as an estimate.
/// Version 26 of EVNT: a completion may be kept against the requests its loop body posted
/// (key flags 2^16 on it, 2^15 on the posts it counts; `compress/src/stream/pending.rs`).
/// Version 25 of EVNT: statistics of two or three observations may be those values (the
/// range's low bit says which). Version 24 of EVNT: a duration histogram writes no bin below its minimum's (they are
/// empty), and a standard deviation keeps 8 significant bits
/// in a two-byte code. Version 23 of EVNT: a file a thread touches for the first time is the next of its table
/// (file reference 3), whatever it touched before, and a call site's first file is a delta
/// from the thread's last file. Version 22 of EVNT: a leaf that counts its access order (key flag 2^27, or offsets in
/// the column or blurred) in a stream ranks share keeps each member's counts. Version 21
/// of EVNT: timing statistics as integers (a mean above the minimum and a standard
/// deviation in 1/16 ns). Version 20 of EVNT: key flag 2^17 with 2^29, a point-to-point call that got nothing
/// (a posting) whose capacities are the size histogram's, its key's request and result 0.
/// Version 19 of EVNT: a read's or write's size may be in the stream's column, after its
/// offset's entry (key flag 2^18: sizes that keep being new), its leaf then keeping the
/// sizes' sum, extremes, sum of squares and Darshan bins. Version 18 of EVNT: a leaf with blurred sizes that several ranks share keeps each
/// member's count and sum of them (key flag 2^19: every file's bytes exact). Version 17
/// of EVNT: a point-to-point peer may double or halve the last mask (peer XOR
/// rank) at its call site (key flags 2^21, 2^20), and a stream of one rank keeps its rank
/// when one does (slope table length × 4 + 2). Version 16 of EVNT: a loop's node count quadrupled plus 2 when it keeps each member's
/// exact occurrences and iterations (a loop whose counts differ between ranks and that
/// accesses files); version 15: members' file tables as runs. Version 14 of EVNT: a blurred peer's histogram relative to the rank as well, once ranks
/// merge; version 13: aux as a rename's file or a communicator's ranks. Version 12: in a stream ranks share, a loop's count histogram holds every
/// member's occurrences (loops whose counts differ between ranks merge below precision
/// 100), and blurred point-to-point tags (key flag 2^23, a tag histogram); version 11: histograms (a precision level below 100) of a leaf's sizes and
/// offsets and of a loop's counts, a loop's node count doubled plus whether it has one
/// (version 10 and 9: a stream's column of irregular offsets, and leaves whose offsets
/// are in it; version 8 a leaf's duration count against the product of its loops' counts,
/// and its gap count against its duration count; version 7 point-to-point tags against the last at the same context, version 6
/// added rank sets, for parts only some ranks have; version 5 loop count slopes and peer
/// moduli, statistics kept their floats in 8 bytes
/// and implied the fullest histogram bin; version 4 added the
/// slowest rank per leaf, version 3 streams shared by ranks and per-stream file tables,
/// version 2 one stream per thread with trace-wide file indices, version 1 flat columns).
const EVENTS_VERSION: u16 = 32;
/// Version 12 of PROC: the per-process columns ranks have alike (parent and exec'd process,
/// forked, string entries, argument counts, group codes, ending, status, threads, untraced
/// calls, runtime events, ranks, which have counters or lost calls) as runs of equal values
/// where shorter. Version 11 of PROC: ranks of one command whose every stream ranks share, at least four,
/// keep their start, end and `main` times as their group's statistics (the extremes with
/// the ranks, mean, standard deviation). Version 10 of PROC: host names as FILE version 3's table. Version 9 of PROC: the calls each process could not record (a full staging file
/// system); version 8 what the kernel counted per process (`/proc/self/io`); version 7
/// strings as tables of distinct values (numbered runs fold) and an entry per process
/// (version 6 ends and `main` times or offsets, whichever is shorter,
/// against the previous process's, version 5 put
/// process times in units of a time step, version 4 parent pids and
/// runtime event counts against the previous process's, version 3 added the count of
/// runtime events only counted, version 2 the count of untraced calls and the rank).
const PROCESSES_VERSION: u16 = 12;
/// Version 3 of FILE: blocks of entries repeated with their numbers stepping evenly;
/// version 2 runs of numbered names (version 1 listed every name).
const FILES_VERSION: u16 = 3;

/// Facts about the whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// The cairn version that wrote the trace.
    pub writer: String,
    /// The command that was traced, one entry per argument.
    pub command: Vec<Vec<u8>>,
    /// Exit status of the command as the shell reports it (128+N for signal N), if known.
    pub exit_status: Option<i32>,
    /// Wall-clock time of the run's start, nanoseconds since the Unix epoch.
    pub start_realtime: u64,
    /// Run duration in nanoseconds (first process start to last event or exit).
    pub duration: u64,
    /// Processes' start, end and `main` times are multiples of this many nanoseconds: 1 (or
    /// 0) when exact, more when a precision level below 100 rounded them
    /// ([`Trace::apply_precision`]).
    pub process_time_step: u64,
}

/// A call named in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallInfo {
    pub name: String,
    /// The call as this build knows it; `None` for a call from a newer cairn or from hooks
    /// generated into another build (`cairn wrapgen`).
    pub call: Option<Call>,
    /// Its layer and class as the trace says them (for a call this build does not know;
    /// for one it knows, the build's own).
    pub kind: Option<(Layer, CallClass)>,
}

impl CallInfo {
    pub fn new(name: &str) -> CallInfo {
        let call = Call::from_name(name);
        CallInfo {
            name: name.to_string(),
            call,
            kind: call.map(|call| (call.layer(), call.class())),
        }
    }

    /// A call with the layer and class the trace gives it: this build's own if it knows
    /// the name.
    pub fn described(name: &str, kind: Option<(Layer, CallClass)>) -> CallInfo {
        let known = CallInfo::new(name);
        CallInfo {
            kind: known.kind.or(kind),
            ..known
        }
    }

    /// The call table of names in order, with the kinds known of calls this build has no
    /// row for.
    pub fn table(
        names: &[String],
        kinds: &std::collections::HashMap<String, (Layer, CallClass)>,
    ) -> Vec<CallInfo> {
        names
            .iter()
            .map(|name| CallInfo::described(name, kinds.get(name).copied()))
            .collect()
    }

    pub fn layer(&self) -> Option<Layer> {
        self.kind.map(|(layer, _)| layer)
    }

    pub fn class(&self) -> Option<CallClass> {
        self.kind.map(|(_, class)| class)
    }
}

/// How a process image ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// Normal exit (the library's destructor ran).
    Exited,
    /// `_exit`/`_Exit` with this status.
    ExitCall(i32),
    /// Replaced by `exec`: the next image of the same pid continues it.
    Exec,
    /// No end mark: killed by a signal, crashed, or still running when collected.
    Unknown,
}

/// One process image (a fork or an exec starts a new one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    pub parent_pid: u32,
    /// Index of the parent's image in [`Trace::processes`], if it was traced.
    pub parent: Option<u32>,
    /// Index of the image this one replaced through `exec`.
    pub exec_of: Option<u32>,
    pub forked: bool,
    pub executable: Vec<u8>,
    pub arguments: Vec<Vec<u8>>,
    pub working_directory: Vec<u8>,
    pub hostname: Vec<u8>,
    /// Nanoseconds since the start of the run.
    pub start: u64,
    pub end: u64,
    /// When `main` started, if the tracer saw it.
    pub main_start: Option<u64>,
    pub ending: Ending,
    pub threads: u32,
    /// Calls let through untraced because the thread was inside the tracer (a signal
    /// handler's I/O during the tracer's bookkeeping, nested library calls).
    pub untraced_calls: u64,
    /// The MPI rank the launcher gave the process, if it was launched as one.
    pub rank: Option<u32>,
    /// Events of the MPI runtime's own I/O that were counted but not kept (ranks other
    /// than the first, unless the trace was built with `--runtime-io all`).
    pub runtime_events_dropped: u64,
    /// Bytes read and written by the POSIX and stdio calls among those (compared with what
    /// the kernel counted).
    pub runtime_bytes_dropped: [u64; 2],
    /// What the kernel counted for the image (every read- and write-like system call,
    /// traced or not), if the tracer could read it.
    pub kernel_io: Option<KernelIo>,
    /// Calls the tracer could not record because the staging file could not grow.
    pub unrecorded: Option<Unrecorded>,
    /// Whether `start`, `end` and `main_start` are estimates from the statistics of its
    /// group (PROC version 11: ranks of one command whose every stream ranks share, at
    /// least four): the group's earliest and latest of each are exact, at the ranks that
    /// had them, the others' values keep the group's mean and standard deviation.
    pub group_times: bool,
    /// Whether `kernel_io`, `runtime_bytes_dropped` and `runtime_events_dropped` are
    /// estimates from its group's statistics (of the members whose counters lie close to
    /// the group's medians: bytes within 1/16 or 4 KiB, calls and events within a quarter; the
    /// others keep their own): their sums over those members are exact, and so are the
    /// extremes at the ranks that had them.
    pub group_counters: bool,
}

impl Unrecorded {
    /// The line every reader shows for it: `incomplete: 977071 calls of process 4242
    /// (rank 3) not recorded (no space left on device at 0.412 s)`.
    pub fn message(&self, process: &Process) -> String {
        let error = std::io::Error::from_raw_os_error(self.errno).to_string();
        let error = error.split(" (os error").next().unwrap_or_default();
        let mut reason = error.chars();
        let reason: String = reason
            .next()
            .map(|first| first.to_lowercase().chain(reason).collect())
            .unwrap_or_default();
        format!(
            "incomplete: {} calls of process {}{} not recorded ({reason} at {:.3} s)",
            self.calls,
            process.pid,
            process
                .rank
                .map_or(String::new(), |rank| format!(" (rank {rank})")),
            self.at as f64 / 1e9
        )
    }
}

/// Calls a process made that its trace does not hold: the staging file could not grow (a
/// full file system, a quota); the tracer counted them from then on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unrecorded {
    pub calls: u64,
    /// The error of the first failure to grow (`ENOSPC`, `EDQUOT`…).
    pub errno: i32,
    /// When it happened, nanoseconds since the start of the run.
    pub at: u64,
}

/// One file (or other descriptor target) the run touched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// The path as the program named it, made absolute; `pipe:[…]`-style names for
    /// descriptors that are not files.
    pub path: Vec<u8>,
    /// Why the file is not the program's own I/O, or `None` if it is.
    pub noise: Option<Noise>,
}

/// A calling context: frames from the call site outwards, as (module, offset).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    /// (index into [`Trace::modules`] or `None` if unknown, offset or raw address).
    pub frames: Vec<(Option<u32>, u64)>,
}

/// One thread's events, folded into loops (see `cairn_compress::stream`).
///
/// Ranks whose streams merged (`cairn_compress::ranks`) share one encoded stream: each
/// member keeps its distance from the shared stream's base rank, its share of the shared
/// timing statistics, its own first and last times and its own file table.
#[derive(Clone, Debug, PartialEq)]
pub struct Stream {
    pub process: u32,
    pub thread: u32,
    pub count: u64,
    pub events: Arc<EncodedStream>,
    /// This stream's rank minus the shared stream's base rank (0 for a stream of its own).
    pub rank_delta: i64,
    /// The members sharing `events` (1 for a stream of its own): each walk takes
    /// 1/`members` of the shared timing statistics; and this one's index among them.
    pub members: u32,
    pub member: u32,
    /// Start of the first event and end of the last, ns since the run's start.
    pub first_start: u64,
    pub last_end: u64,
    /// The stream's file table: its events name files by position here; each entry is an
    /// index into [`Trace::files`].
    pub files: Vec<u32>,
    /// Set only in a trace made for a replay on another rank count (`cairn replay
    /// --scale-ranks`): how this rank walks the shared events ([`RankView`]); never stored.
    pub scaled: Option<RankView>,
    /// A member's own column of irregular offsets, where the members of a shared stream
    /// each have theirs (EVNT version 32: ranks that read the same HDF5 headers, each
    /// reaching the column at its own event, or writing headers of their own).
    pub column: Option<Arc<Column>>,
}

impl Stream {
    pub fn new(process: u32, thread: u32, events: EncodedStream, files: Vec<u32>) -> Stream {
        Stream {
            process,
            thread,
            count: events.count,
            rank_delta: 0,
            members: 1,
            member: 0,
            first_start: events.first_start,
            last_end: events.last_end,
            files,
            events: Arc::new(events),
            scaled: None,
            column: None,
        }
    }

    /// The column this stream's irregular offsets are taken from: its own, or its events'.
    pub fn column(&self) -> &Column {
        self.column
            .as_deref()
            .unwrap_or_else(|| self.events.column())
    }

    /// How this member walks the shared events.
    pub fn view(&self) -> RankView {
        self.scaled.unwrap_or(RankView {
            member: self.member,
            members: self.members,
            ..RankView::of(self.rank_delta)
        })
    }

    /// The stream's top level, as this member sees it.
    pub fn nodes(&self) -> cairn_compress::stream::Body<'_> {
        self.events.nodes_for_view(self.view())
    }

    /// The trace-wide index of a file the stream names as `local_plus_one` (0 = none).
    pub fn file(&self, local_plus_one: u64) -> Option<u32> {
        local_plus_one
            .checked_sub(1)
            .and_then(|local| self.files.get(local as usize))
            .copied()
    }

    /// This member's share of the shared statistics.
    pub fn share(&self) -> f64 {
        1.0 / self.members.max(1) as f64
    }
}

/// Replaces the events of each stream of one thread of one rank (that no other stream
/// shares) by `rewrite` of them, if it gives any; `rewrite` is told which calls are reads
/// and writes (the calls whose sizes and access order a loop merge may let differ).
pub(crate) fn rewrite_own_streams(
    calls: &[CallInfo],
    streams: &mut [Stream],
    rewrite: impl Fn(&EncodedStream, &dyn Fn(u16) -> Option<ColumnRole>) -> Option<EncodedStream>,
) {
    // What a call's column entry holds when its values differ from one loop to the next:
    // a read's or write's size; an MPI message's size, a posted receive's capacity, a
    // completion's received bytes.
    let role = |info: &CallInfo| match info.class()? {
        CallClass::Read | CallClass::Write => Some(ColumnRole::Request),
        _ => match info.call?.message_bytes()? {
            MessageBytes::Sent | MessageBytes::Received => Some(ColumnRole::Request),
            MessageBytes::Posted => Some(ColumnRole::Capacity),
            MessageBytes::Completed => Some(ColumnRole::Result),
            MessageBytes::Probed | MessageBytes::Described => None,
        },
    };
    // Once per call, not at every comparison of two leaves.
    let roles: Vec<Option<ColumnRole>> = calls.iter().map(role).collect();
    let io = |call: u16| roles.get(call as usize).copied().flatten();
    for stream in streams {
        if stream.members != 1 || Arc::strong_count(&stream.events) != 1 {
            continue;
        }
        if let Some(events) = rewrite(&stream.events, &io) {
            stream.events = Arc::new(events);
        }
    }
}

/// Replaces every stream's encoded events by `change` of them, once per stream that ranks
/// share (its members keep sharing the result).
pub(crate) fn map_shared_events(
    streams: &mut [Stream],
    mut change: impl FnMut(&EncodedStream) -> EncodedStream,
) {
    let mut changed: std::collections::HashMap<*const EncodedStream, Arc<EncodedStream>> =
        std::collections::HashMap::new();
    for stream in streams {
        let events = changed
            .entry(Arc::as_ptr(&stream.events))
            .or_insert_with(|| Arc::new(change(&stream.events)))
            .clone();
        stream.events = events;
    }
}

/// The file table with only the files `order` lists, in its order (old indices), and every
/// stream's file table renumbered to match.
pub(crate) fn reorder_files(
    files: Vec<FileInfo>,
    order: &[u32],
    streams: &mut [Stream],
) -> Vec<FileInfo> {
    let mut new_index = vec![0u32; files.len()];
    for (position, old) in order.iter().enumerate() {
        new_index[*old as usize] = position as u32;
    }
    for stream in streams {
        for file in &mut stream.files {
            *file = new_index[*file as usize];
        }
    }
    let mut files: Vec<Option<FileInfo>> = files.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|old| files[*old as usize].take())
        .collect()
}

/// A whole trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub meta: Meta,
    pub calls: Vec<CallInfo>,
    pub processes: Vec<Process>,
    pub files: Vec<FileInfo>,
    pub modules: Vec<Vec<u8>>,
    pub contexts: Vec<Context>,
    pub streams: Vec<Stream>,
    /// Messages from the tracer (it disabled itself, a table filled up...).
    pub diagnostics: Vec<String>,
}

fn optional(writer: &mut ByteWriter, value: Option<u32>) {
    writer.u64(value.map_or(0, |v| v as u64 + 1));
}

fn read_optional(reader: &mut ByteReader, limit: usize, what: &str) -> Result<Option<u32>> {
    match reader.u64()? {
        0 => Ok(None),
        value if value - 1 < limit as u64 => Ok(Some((value - 1) as u32)),
        _ => Err(TraceError::Invalid(format!("{what} index out of range"))),
    }
}

/// Each present value replaced by the mean of the values that lie within three quarters of
/// `margin` above the smallest not yet taken (in sorted order), rounded to a multiple of
/// `grid` (at most `margin / 2`): every value moves by at most `margin`, and values that
/// lie close together become one, which a column of differences stores in nothing.
fn share_close_values(
    values: impl Iterator<Item = Option<u64>>,
    margin: u64,
    grid: u64,
) -> Vec<Option<u64>> {
    let values: Vec<Option<u64>> = values.collect();
    let grid = grid.max(1);
    let width = margin - margin / 4;
    let mut order: Vec<usize> = (0..values.len())
        .filter(|index| values[*index].is_some())
        .collect();
    order.sort_by_key(|index| values[*index]);
    let value = |index: usize| values[index].unwrap_or(0);
    let mut shared = vec![None; values.len()];
    let mut begin = 0;
    while begin < order.len() {
        let lowest = value(order[begin]);
        let end = begin
            + order[begin..]
                .iter()
                .take_while(|index| value(**index) - lowest <= width)
                .count();
        let sum: u128 = order[begin..end]
            .iter()
            .map(|index| value(*index) as u128)
            .sum();
        let mean = (sum / (end - begin) as u128) as u64;
        let rounded = (mean.saturating_add(grid / 2) / grid).saturating_mul(grid);
        for index in &order[begin..end] {
            shared[*index] = Some(rounded);
        }
        begin = end;
    }
    shared
}

impl Trace {
    pub fn open(path: &Path) -> Result<Trace> {
        Trace::from_file(&TraceFile::open(path)?)
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Result<Trace> {
        Trace::from_file(&TraceFile::from_bytes(bytes)?)
    }

    pub fn call(&self, event: &Event) -> &CallInfo {
        &self.calls[event.call as usize]
    }

    pub fn event_count(&self) -> u64 {
        self.streams.iter().map(|stream| stream.count).sum()
    }

    /// Encodes the trace into a file image.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(TraceWriter::new())
    }

    fn encode(&self, mut writer: TraceWriter) -> Vec<u8> {
        let mut meta = ByteWriter::new();
        meta.str(&self.meta.writer);
        meta.u64(self.meta.command.len() as u64);
        for argument in &self.meta.command {
            meta.bytes(argument);
        }
        meta.u64(self.meta.exit_status.is_some() as u64);
        meta.i64(self.meta.exit_status.unwrap_or(0) as i64);
        meta.u64(self.meta.start_realtime);
        meta.u64(self.meta.duration);
        writer.add_section(SectionKind::META, VERSION, &meta.into_inner(), false);

        let mut calls = ByteWriter::new();
        calls.u64(self.calls.len() as u64);
        for call in &self.calls {
            calls.str(&call.name);
        }
        // Then each call's layer and class by name (empty: unknown), so a reader without a
        // row for a call (a user's generated hooks) still counts it in its layer.
        for call in &self.calls {
            calls.str(call.layer().map_or("", Layer::name));
            calls.str(call.class().map_or("", CallClass::name));
        }
        writer.add_section(SectionKind::CALLS, VERSION, &calls.into_inner(), true);

        let mut processes = ByteWriter::new();
        // A process whose every stream ranks share (see `encode_processes`).
        let mut shared = vec![None; self.processes.len()];
        for stream in &self.streams {
            if let Some(all) = shared.get_mut(stream.process as usize) {
                *all = Some(all.unwrap_or(true) && stream.members > 1);
            }
        }
        let shared: Vec<bool> = shared.into_iter().map(|all| all == Some(true)).collect();
        encode_processes(
            &self.processes,
            &shared,
            self.meta.process_time_step,
            &mut processes,
        );
        writer.add_section(
            SectionKind::PROCESSES,
            PROCESSES_VERSION,
            &processes.into_inner(),
            true,
        );

        let mut files = ByteWriter::new();
        crate::names::encode(&self.files, &mut files);
        writer.add_section(SectionKind::FILES, FILES_VERSION, &files.into_inner(), true);

        let mut contexts = ByteWriter::new();
        contexts.u64(self.modules.len() as u64);
        for module in &self.modules {
            contexts.bytes(module);
        }
        contexts.u64(self.contexts.len() as u64);
        for context in &self.contexts {
            contexts.u64(context.frames.len() as u64);
            for (module, offset) in &context.frames {
                optional(&mut contexts, *module);
                contexts.u64(*offset);
            }
        }
        writer.add_section(SectionKind::CONTEXTS, VERSION, &contexts.into_inner(), true);

        let mut events = ByteWriter::new();
        crate::ranks::encode_streams(self, &mut events);
        writer.add_section(
            SectionKind::EVENTS,
            EVENTS_VERSION,
            &events.into_inner(),
            true,
        );

        let mut diagnostics = ByteWriter::new();
        diagnostics.u64(self.diagnostics.len() as u64);
        for message in &self.diagnostics {
            diagnostics.str(message);
        }
        writer.add_section(
            SectionKind::DIAGNOSTICS,
            VERSION,
            &diagnostics.into_inner(),
            true,
        );
        writer.finish()
    }

    /// Writes the trace atomically (temporary file + rename); returns its size.
    pub fn write(&self, path: &Path) -> Result<u64> {
        let bytes = self.to_bytes();
        cairn_format::container::write_file_atomically(path, &bytes)?;
        Ok(bytes.len() as u64)
    }

    /// As [`Trace::write`], compressed for speed rather than size
    /// ([`TraceWriter::quick`]): a rank's part handed to the next merge of a job's tree.
    pub fn write_handoff(&self, path: &Path) -> Result<u64> {
        let bytes = self.encode(TraceWriter::quick());
        cairn_format::container::write_file_atomically(path, &bytes)?;
        Ok(bytes.len() as u64)
    }

    fn from_file(file: &TraceFile) -> Result<Trace> {
        let versioned = |kind: SectionKind, expected: u16| -> Result<Vec<u8>> {
            match file.section(kind)? {
                Some((version, bytes)) if version == expected => Ok(bytes),
                Some((version, _)) => Err(TraceError::Invalid(format!(
                    "section {} has version {version}, this cairn reads version {expected}",
                    kind.name()
                ))),
                None => Err(TraceError::Invalid(format!(
                    "section {} is missing",
                    kind.name()
                ))),
            }
        };
        let section = |kind: SectionKind| versioned(kind, VERSION);
        let mut trace = Trace::default();

        let bytes = section(SectionKind::META)?;
        let mut reader = ByteReader::new(&bytes, "section META");
        trace.meta.writer = reader.string()?;
        for _ in 0..reader.count(1)? {
            trace.meta.command.push(reader.bytes()?.to_vec());
        }
        let has_status = reader.u64()? != 0;
        let status = reader.i32()?;
        trace.meta.exit_status = has_status.then_some(status);
        trace.meta.start_realtime = reader.u64()?;
        trace.meta.duration = reader.u64()?;

        let bytes = section(SectionKind::CALLS)?;
        let mut reader = ByteReader::new(&bytes, "section CALL");
        let mut names = Vec::new();
        for _ in 0..reader.count(1)? {
            names.push(reader.string()?);
        }
        // Traces written before kinds were stored end here.
        for name in names {
            let kind = if reader.is_empty() {
                None
            } else {
                let layer = Layer::from_name(&reader.string()?);
                let class = CallClass::from_name(&reader.string()?);
                layer.zip(class)
            };
            trace.calls.push(CallInfo::described(&name, kind));
        }

        let bytes = versioned(SectionKind::PROCESSES, PROCESSES_VERSION)?;
        let mut reader = ByteReader::new(&bytes, "section PROC");
        (trace.processes, trace.meta.process_time_step) = decode_processes(&mut reader)?;

        let bytes = versioned(SectionKind::FILES, FILES_VERSION)?;
        let mut reader = ByteReader::new(&bytes, "section FILE");
        trace.files = crate::names::decode(&mut reader)?;

        let bytes = section(SectionKind::CONTEXTS)?;
        let mut reader = ByteReader::new(&bytes, "section CTXT");
        for _ in 0..reader.count(1)? {
            trace.modules.push(reader.bytes()?.to_vec());
        }
        let modules = trace.modules.len();
        for _ in 0..reader.count(1)? {
            let mut frames = Vec::new();
            for _ in 0..reader.count(2)? {
                let module = read_optional(&mut reader, modules, "module")?;
                frames.push((module, reader.u64()?));
            }
            trace.contexts.push(Context { frames });
        }

        let bytes = versioned(SectionKind::EVENTS, EVENTS_VERSION)?;
        let mut reader = ByteReader::new(&bytes, "section EVNT");
        trace.streams = crate::ranks::decode_streams(&mut reader, &trace.processes)?;

        if let Some((_, bytes)) = file.section(SectionKind::DIAGNOSTICS)? {
            let mut reader = ByteReader::new(&bytes, "section DIAG");
            for _ in 0..reader.count(1)? {
                trace.diagnostics.push(reader.string()?);
            }
        }
        trace.validate()?;
        Ok(trace)
    }

    /// Checks that every leaf refers to calls and contexts that exist, so readers can index
    /// without checks. (Files are resolved while walking and checked there.)
    fn validate(&self) -> Result<()> {
        for stream in &self.streams {
            if stream.events.count > 0 && stream.events.max_call as usize >= self.calls.len() {
                return Err(TraceError::Invalid(format!(
                    "event names call #{} that the trace lacks",
                    stream.events.max_call
                )));
            }
            if stream.events.max_context as usize > self.contexts.len() {
                return Err(TraceError::Invalid(
                    "event names a context that the trace lacks".into(),
                ));
            }
            if stream
                .files
                .iter()
                .any(|file| *file as usize >= self.files.len())
            {
                return Err(TraceError::Invalid(
                    "event stream names a file that the trace lacks".into(),
                ));
            }
        }
        Ok(())
    }

    /// Merges, in each stream of one thread of one rank, adjacent loops that differ only in
    /// reads' and writes' sizes (a log line a byte longer from step 100 on), the sizes kept
    /// in the stream's column, and joins iterations left beside their loops
    /// ([`EncodedStream::with_resized_loops_merged`]). For the
    /// trace as written, after every rank merge: such a stream no longer merges with
    /// other ranks'.
    pub fn merge_resized_loops(&mut self) {
        rewrite_own_streams(&self.calls, &mut self.streams, |events, io| {
            events.with_resized_loops_merged(io)
        });
    }

    /// Applies a precision level (0–100; 100 keeps everything exact) to what is kept as
    /// timing, as the thesis's histograms do: values within (100 − precision)% of one
    /// another may be merged. Processes' start, end and `main` times that lie within
    /// three quarters of that margin (of the run's duration) of one another share one value,
    /// their mean on a grid of half the margin, so each stays within the margin of its exact
    /// value and ranks that started (or ended) together cost nothing each; every leaf's
    /// timing statistics (min, max, mean, spread) keep the significant bits that relative
    /// error allows, so merged statistics do not grow with the ranks they cover. Counts,
    /// sizes, offsets, files and the events' structure stay exact; a diagnostic says what was
    /// rounded.
    pub fn apply_precision(&mut self, precision: u8) {
        let precision = precision.min(100) as u64;
        if precision == 100 {
            return;
        }
        let margin = (self.meta.duration as u128 * (100 - precision) as u128 / 100) as u64;
        // A trace rounded before keeps at least its grid's margin.
        let margin = margin
            .max(2)
            .max(self.meta.process_time_step.saturating_mul(2));
        let grid = margin / 2;
        let starts = share_close_values(
            self.processes.iter().map(|process| Some(process.start)),
            margin,
            grid,
        );
        let ends = share_close_values(
            self.processes.iter().map(|process| Some(process.end)),
            margin,
            grid,
        );
        let mains = share_close_values(
            self.processes.iter().map(|process| process.main_start),
            margin,
            grid,
        );
        for (index, process) in self.processes.iter_mut().enumerate() {
            let start = starts[index].unwrap_or(0);
            process.start = start;
            process.end = ends[index].unwrap_or(start).max(start);
            process.main_start = mains[index].map(|main| main.max(start));
        }
        self.meta.process_time_step = grid;
        // Relative error (100 − precision)% ≥ 2^-bits.
        let bits = (100.0 / (100 - precision) as f64).log2().ceil().max(1.0) as u32;
        map_shared_events(&mut self.streams, |events| {
            events.map_leaves(|leaf| {
                leaf.duration.round(bits);
                leaf.gap.round(bits);
            })
        });
        self.diagnostics.push(format!(
            "precision {precision}: process times rounded to within {:.3} ms (those within {:.3} ms of one another share one value), timing statistics to {bits} significant bits; counts, byte totals and files are exact (sizes, offsets and loop counts that became histograms are listed in the summary as estimated)",
            margin as f64 / 1e6,
            (margin - margin / 4) as f64 / 1e6,
        ));
    }

    /// Whether a precision level below 100 made some sizes, offsets, peers or loop counts
    /// histograms (their values are then drawn when the trace is expanded).
    pub fn is_lossy(&self) -> bool {
        fn lossy(body: cairn_compress::stream::Body) -> bool {
            body.iter().any(|item| match item {
                cairn_compress::stream::Item::Leaf(leaf) => leaf.blurred.is_some(),
                cairn_compress::stream::Item::Loop { body, counts, .. } => {
                    counts.is_some_and(|counts| !counts.is_exact()) || lossy(body)
                }
            })
        }
        let mut seen = std::collections::HashSet::new();
        self.streams
            .iter()
            .any(|stream| seen.insert(Arc::as_ptr(&stream.events)) && lossy(stream.events.nodes()))
    }

    /// The class of the call at `index` in the trace's call table.
    pub fn class_of(&self, index: u16) -> Option<CallClass> {
        self.calls.get(index as usize).and_then(CallInfo::class)
    }

    /// Every event of a stream in order, with exact calls, files, offsets, sizes and
    /// results; start and duration are the leaf's mean values (see `EncodedStream::expand`).
    pub fn expand(&self, stream: &Stream, mut visit: impl FnMut(Event)) {
        self.expand_while(stream, |event| {
            visit(event);
            true
        })
    }

    /// [`Trace::expand`] one event at a time: for readers that walk several streams side
    /// by side (memory: the loop nest, not the events).
    pub fn events<'t>(&'t self, stream: &'t Stream) -> impl Iterator<Item = Event> + Send + 't {
        self.events_seeded(stream, cairn_compress::stream::EXPANSION_SEED)
    }

    /// [`Trace::events`] with blurred values drawn from `seed` (the default one is
    /// [`cairn_compress::stream::EXPANSION_SEED`], every other reader's).
    pub fn events_seeded<'t>(
        &'t self,
        stream: &'t Stream,
        seed: u64,
    ) -> impl Iterator<Item = Event> + Send + 't {
        stream
            .events
            .events_with_column(
                stream.view(),
                stream.first_start,
                move |call| self.class_of(call),
                seed,
                stream.column(),
            )
            .map(move |mut event| {
                event.file = event.file.and_then(|local| stream.file(local as u64 + 1));
                event
            })
    }

    /// [`Trace::expand`] until `visit` returns false, where the walk stops.
    pub fn expand_while(&self, stream: &Stream, mut visit: impl FnMut(Event) -> bool) {
        for event in self.events(stream) {
            if !visit(event) {
                return;
            }
        }
    }
}

/// A process's start, end and `main` after its start: the times PROC version 11 keeps as
/// a group's statistics (for tests of them).
#[cfg(test)]
pub(crate) fn process_times() -> [fn(&Process) -> u64; 3] {
    [
        |process| process.start,
        |process| process.end,
        |process| process.main_start.unwrap_or(process.start) - process.start,
    ]
}

#[cfg(test)]
mod tests {
    use super::groups;
    use super::processes::{decode_string_column, encode_string_column};
    use super::*;
    use proptest::prelude::*;

    fn process(rank: u32, hostname: &str, start: u64) -> Process {
        Process {
            pid: 1000 + rank,
            parent_pid: 999,
            parent: None,
            exec_of: None,
            forked: false,
            executable: b"/bin/app".to_vec(),
            arguments: vec![b"app".to_vec(), b"-n".to_vec()],
            working_directory: b"/scratch".to_vec(),
            hostname: hostname.as_bytes().to_vec(),
            start,
            end: start + 5_000,
            main_start: (!rank.is_multiple_of(3)).then_some(start + 100),
            ending: Ending::Exited,
            threads: 1,
            untraced_calls: 0,
            rank: Some(rank),
            runtime_events_dropped: 0,
            // Every other process: the kernel's counters, the runtime's bytes not kept.
            runtime_bytes_dropped: match rank % 2 {
                0 => [0; 2],
                _ => [4096 + rank as u64, 17],
            },
            kernel_io: (rank % 2 == 1).then_some(KernelIo {
                read_bytes: 1 << 20,
                written_bytes: 3 * rank as u64,
                read_calls: 40,
                write_calls: rank as u64,
            }),
            // A process in three lost calls to a full staging file system.
            unrecorded: (rank % 3 == 2).then_some(Unrecorded {
                calls: 977_071 + rank as u64,
                errno: 28,
                at: 1_500_000 * rank as u64,
            }),
            group_times: false,
            group_counters: false,
        }
    }

    fn roundtrip(processes: &[Process]) -> (Vec<Process>, usize) {
        roundtrip_shared(processes, false)
    }

    /// Encodes and decodes a process table whose processes all share (`shared`) or all
    /// keep their own streams.
    fn roundtrip_shared(processes: &[Process], shared: bool) -> (Vec<Process>, usize) {
        let mut writer = ByteWriter::new();
        encode_processes(processes, &vec![shared; processes.len()], 1, &mut writer);
        let bytes = writer.into_inner();
        let (back, step) = decode_processes(&mut ByteReader::new(&bytes, "test")).unwrap();
        assert_eq!(step, 1);
        // zstd, as in a trace: the bytes the section costs.
        let stored = zstd::bulk::compress(&bytes, 19).unwrap().len();
        (back, stored)
    }

    /// splitmix64 of (rank, salt): noise no compressor predicts.
    fn noise(rank: u32, salt: u64) -> u64 {
        let mut z = (rank as u64 * 16 + salt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Ranks of one command launched over 40 ms, each running about 2 s, their `main`
    /// 12 ms after their start, every time jittered to the nanosecond (as real launches).
    fn jittered_ranks(ranks: u32) -> Vec<Process> {
        (0..ranks)
            .map(|rank| {
                let jitter = |salt: u64| noise(rank, salt) % 1_000_000;
                let start = 40_000_000 * rank as u64 / ranks as u64 + jitter(1);
                Process {
                    end: 2_000_000_000 + jitter(2),
                    main_start: Some(start + 12_000_000 + jitter(3)),
                    // Every process's counters alike: only times tell ranks apart.
                    kernel_io: None,
                    runtime_bytes_dropped: [0; 2],
                    unrecorded: None,
                    ..process(rank, "n1", start)
                }
            })
            .collect()
    }

    #[test]
    fn ranks_sharing_their_streams_keep_their_times_as_statistics() {
        // The only per-rank bytes of a regular program's trace were its ranks' times to
        // the nanosecond; kept as the group's statistics, 64 ranks cost what 16 do.
        let mut sizes = Vec::new();
        for ranks in [16u32, 64] {
            let processes = jittered_ranks(ranks);
            let (back, bytes) = roundtrip_shared(&processes, true);
            let (exact, exact_bytes) = roundtrip(&processes);
            assert_eq!(exact, processes);
            sizes.push((bytes, exact_bytes));
            assert!(back.iter().all(|process| process.group_times));
            // Everything but the times is each rank's own.
            let untimed = |process: &Process| Process {
                start: 0,
                end: 0,
                main_start: None,
                group_times: false,
                ..process.clone()
            };
            assert_eq!(
                back.iter().map(untimed).collect::<Vec<_>>(),
                processes.iter().map(untimed).collect::<Vec<_>>()
            );
            // Each time (`main` after the start): the extremes exact at the ranks that had
            // them, the mean and the deviation within a nanosecond or two.
            for time in process_times() {
                let values =
                    |processes: &[Process]| processes.iter().map(time).collect::<Vec<u64>>();
                let (original, kept) = (values(&processes), values(&back));
                let extreme = |values: &[u64], max: bool| {
                    let value = match max {
                        true => values.iter().max(),
                        false => values.iter().min(),
                    };
                    let value = *value.unwrap();
                    (value, values.iter().position(|v| *v == value).unwrap())
                };
                assert_eq!(extreme(&kept, false), extreme(&original, false));
                assert_eq!(extreme(&kept, true), extreme(&original, true));
                let moments = |values: &[u64]| {
                    let mean = values.iter().sum::<u64>() as f64 / values.len() as f64;
                    let variance = values
                        .iter()
                        .map(|value| (*value as f64 - mean).powi(2))
                        .sum::<f64>()
                        / values.len() as f64;
                    (mean, variance.sqrt())
                };
                let ((mean, deviation), (kept_mean, kept_deviation)) =
                    (moments(&original), moments(&kept));
                assert!((mean - kept_mean).abs() <= 2.0, "{mean} {kept_mean}");
                assert!(
                    (deviation - kept_deviation).abs() <= 2.0,
                    "{deviation} {kept_deviation}"
                );
                assert!(back
                    .iter()
                    .all(|process| process.start <= process.main_start.unwrap()
                        && process.main_start.unwrap() <= process.end));
            }
            // Merged again (a tree merge's next level), the statistics are the same.
            let (again, _) = roundtrip_shared(&back, true);
            assert_eq!(again, back);
            // A rank of its own again (its stream no longer shared): the estimate stays
            // marked as one.
            let (alone, _) = roundtrip(&back);
            assert_eq!(alone, back);
        }
        // 16 → 64 ranks: the exact times cost about 11 B a rank, the statistics nothing
        // a rank (the pids, hosts and ranks left are runs).
        eprintln!("(statistics, exact) bytes at 16 and 64 ranks: {sizes:?}");
        assert!(sizes[1].0 <= sizes[0].0 + 48, "{sizes:?}");
        assert!(sizes[1].1 >= sizes[0].1 + 48 * 8, "{sizes:?}");
    }

    #[test]
    fn alike_counters_of_a_group_keep_exact_sums_and_a_rank_unlike_the_others_keeps_its_own() {
        // The kernel's counters of 16 ranks varying by a few calls (the MPI runtime's
        // progress) become the group's statistics: every sum exact, the extremes at their
        // ranks, each rank close to its own. A rank far from the others keeps its own: a
        // per-rank estimate could name the wrong rank.
        let ranks = |odd_one: Option<usize>| -> Vec<Process> {
            jittered_ranks(16)
                .into_iter()
                .enumerate()
                .map(|(rank, mut process)| {
                    let wobble = |salt: u64| noise(rank as u32, salt) % 11;
                    // The runtime's reads and writes, and (as in real runs) everything
                    // the kernel saw written.
                    let (read, written) = (25_100 + 8 * wobble(4), 6_000 + wobble(5));
                    process.runtime_bytes_dropped = [read, written];
                    process.runtime_events_dropped = 1_728 + 2 * wobble(6);
                    let odd = 1_048_576 * (odd_one == Some(rank)) as u64;
                    process.kernel_io = Some(KernelIo {
                        read_bytes: read + 82_300 + wobble(7) + odd,
                        written_bytes: written,
                        read_calls: 412 + wobble(9),
                        write_calls: 148 + wobble(10),
                    });
                    process
                })
                .collect()
        };
        let sums = |processes: &[Process]| {
            processes.iter().fold([0u64; 7], |mut sums, process| {
                let values = groups::counters(process).unwrap();
                for (sum, value) in sums.iter_mut().zip(values) {
                    *sum += value;
                }
                sums
            })
        };
        let alike = ranks(None);
        let (back, alike_bytes) = roundtrip_shared(&alike, true);
        assert!(back
            .iter()
            .all(|process| process.group_counters && process.group_times));
        assert_eq!(sums(&back), sums(&alike));
        for (kept, own) in back.iter().zip(&alike) {
            let (kept, own) = (
                groups::counters(kept).unwrap(),
                groups::counters(own).unwrap(),
            );
            for (kept, own) in kept.iter().zip(own) {
                assert!(kept.abs_diff(own) <= (own / 2).max(64), "{kept} {own}");
            }
        }
        assert_eq!(roundtrip_shared(&back, true).0, back);
        // The rank reading 1 MiB more (an aggregator, an untraced copy) keeps its own
        // counters, exact; the other 15 share theirs.
        let odd = ranks(Some(5));
        let (back, odd_bytes) = roundtrip_shared(&odd, true);
        assert!(back.iter().all(|process| process.group_times));
        let counted = |process: &Process| {
            (
                process.kernel_io,
                process.runtime_bytes_dropped,
                process.runtime_events_dropped,
            )
        };
        for (rank, (kept, own)) in back.iter().zip(&odd).enumerate() {
            assert_eq!(kept.group_counters, rank != 5, "rank {rank}");
            if rank == 5 {
                assert_eq!(counted(kept), counted(own));
            }
        }
        assert_eq!(sums(&back), sums(&odd));
        // Merged again: the sums and who keeps what stay; the estimates move by rounding
        // of the deviation at most.
        let (again, _) = roundtrip_shared(&back, true);
        assert_eq!(sums(&again), sums(&odd));
        for (again, kept) in again.iter().zip(&back) {
            assert_eq!(again.group_counters, kept.group_counters);
            let (again, kept) = (
                groups::counters(again).unwrap(),
                groups::counters(kept).unwrap(),
            );
            for (again, kept) in again.iter().zip(kept) {
                assert!(again.abs_diff(kept) <= 8, "{again} {kept}");
            }
        }
        // Exact counters for every rank, for comparison: what statistics save.
        let (_, exact_bytes) = roundtrip(&alike);
        eprintln!(
            "16 ranks' counters: alike {alike_bytes} B, one odd rank {odd_bytes} B, each rank's own {exact_bytes} B"
        );
        assert!(
            odd_bytes + 16 * 3 < exact_bytes,
            "{odd_bytes} {exact_bytes}"
        );
    }

    #[test]
    fn a_few_ranks_or_ranks_of_their_own_keep_their_exact_times() {
        // Three ranks sharing their streams: exact times are as short as statistics. Ranks
        // whose streams are their own (an irregular program): their events' times are
        // their own, so is their start.
        let three = jittered_ranks(3);
        assert_eq!(roundtrip_shared(&three, true).0, three);
        let sixteen = jittered_ranks(16);
        assert_eq!(roundtrip(&sixteen).0, sixteen);
        // Two commands: a group each.
        let mut two = jittered_ranks(8);
        for process in &mut two[4..] {
            process.executable = b"/bin/other".to_vec();
        }
        let (back, _) = roundtrip_shared(&two, true);
        assert!(back.iter().all(|process| process.group_times));
        assert_eq!(back[0].start, two[0].start);
        assert_eq!(back[4].start, two[4].start);
        let latest = |processes: &[Process]| processes.iter().map(|process| process.end).max();
        assert_eq!(latest(&back[4..]), latest(&two[4..]));
        assert_eq!(latest(&back[..4]), latest(&two[..4]));
    }

    #[test]
    fn numbered_hosts_cost_one_name_run() {
        // 64 ranks per host: the hostnames column is one run of numbered names and its
        // entries a run of 64 equal steps a host (PROC version 12), so 16 times the hosts
        // cost the same table and two runs more a host, not a byte a rank.
        let ranks = |hosts: u32| -> Vec<Process> {
            (0..hosts * 64)
                .map(|rank| process(rank, &format!("nid{:05}", rank / 64), 0))
                .collect()
        };
        let (back, _) = roundtrip(&ranks(16));
        assert_eq!(back, ranks(16));
        let table = |hosts: u32| {
            let mut writer = ByteWriter::new();
            encode_string_column(ranks(hosts).into_iter().map(|p| p.hostname), &mut writer);
            let bytes = writer.into_inner();
            let column =
                decode_string_column(&mut ByteReader::new(&bytes, "test"), hosts as usize * 64)
                    .unwrap();
            assert_eq!(
                column[64 * hosts as usize - 1],
                format!("nid{:05}", hosts - 1).into_bytes()
            );
            bytes.len()
        };
        let (few, many) = (table(4), table(64));
        assert!(many - few <= 60 * 4 && many < 320, "{few} {many}");
        // An entry past the table is refused.
        let mut writer = ByteWriter::new();
        encode_string_column([b"a".to_vec()].into_iter(), &mut writer);
        writer.i64(1);
        let bytes = writer.into_inner();
        let mut reader = ByteReader::new(&bytes, "test");
        assert!(decode_string_column(&mut reader, 2).is_err());
    }

    proptest! {
        #[test]
        fn shared_times_stay_within_the_margin(
            values in proptest::collection::vec(proptest::option::of(0u64..10_000_000), 0..200),
            margin in 2u64..2_000_000,
        ) {
            let grid = margin / 2;
            let shared = share_close_values(values.iter().copied(), margin, grid);
            prop_assert_eq!(shared.len(), values.len());
            for (value, shared) in values.iter().zip(&shared) {
                prop_assert_eq!(value.is_some(), shared.is_some());
                if let (Some(value), Some(shared)) = (value, shared) {
                    prop_assert!(value.abs_diff(*shared) <= margin, "{value} -> {shared}");
                    prop_assert_eq!(shared % grid, 0);
                }
            }
            // Values within ¾ of the margin of the smallest share one value.
            let present: Vec<u64> = values.iter().flatten().copied().collect();
            if let Some(lowest) = present.iter().min() {
                let close: std::collections::HashSet<u64> = values
                    .iter()
                    .zip(&shared)
                    .filter(|(value, _)| value.is_some_and(|value| value - lowest <= margin - margin / 4))
                    .map(|(_, shared)| shared.unwrap())
                    .collect();
                prop_assert_eq!(close.len(), 1);
            }
        }

        #[test]
        fn any_process_table_roundtrips(
            starts in proptest::collection::vec(0u64..1_000_000_000, 1..50),
            hosts in proptest::collection::vec(0u32..5, 50),
        ) {
            let processes: Vec<Process> = starts
                .iter()
                .enumerate()
                .map(|(rank, start)| process(rank as u32, &format!("n{}", hosts[rank]), *start))
                .collect();
            prop_assert_eq!(roundtrip(&processes).0, processes);
        }
    }
}

//! Staging segments: what the preload library writes while the program runs.
//!
//! One file per process image (`<pid>-<nonce>.seg`; the nonce keeps an `exec`'d image from
//! truncating its predecessor's file). The first [`HEADER_BYTES`] hold the process header;
//! after that come chunks of [`CHUNK_BYTES`], each owned by one thread, filled with records.
//!
//! A record is an 8-byte header — a `u32` word `kind << 24 | body_length` and a `u32` extra
//! value — followed by the body, padded to 8 bytes. The writer stores the body first and the
//! header word last (release ordering), and chunks start zero-filled, so a reader stops at
//! the first zero word and never sees a half-written record: a `SIGKILL` loses at most the
//! record being written.
//!
//! Consecutive calls of a thread that repeat the previous one — same call, context, file,
//! descriptor, sizes, result and flags, offsets moving by a constant stride — are folded
//! as they happen into one run record ([`RawRun`]) that the writer updates in place: a
//! loop of one call costs the staging three records however long it runs. A run record
//! names no event of its own: it repeats the thread's previous event record. Its count is
//! stored after its statistics, so a `SIGKILL` during an update leaves at most one
//! occurrence's timing counted or not.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::bytes::{ByteReader, ByteWriter};
use crate::{FormatError, Result};

pub mod steps;
pub use steps::{
    changing, steps_record_bytes, Cursor as StepsCursor, RawStepsHead, RawStepsItem, Steps,
    MAX_STEPS_PERIOD, RAW_STEPS_HEAD_BYTES, RAW_STEPS_ITEM_BYTES,
};

pub const MAGIC: &[u8; 8] = b"CAIRNSEG";
pub const VERSION: u32 = 6;
pub const HEADER_BYTES: u64 = 64 * 1024;
pub const CHUNK_BYTES: u64 = 256 * 1024;
pub const CHUNK_MAGIC: u32 = u32::from_le_bytes(*b"CHNK");
pub const CHUNK_HEADER_BYTES: usize = 32;
pub const RECORD_HEADER_BYTES: usize = 8;
/// Offset of the process-header payload inside the header area.
pub const HEADER_PAYLOAD_OFFSET: usize = 16;
/// Offset, inside the header area, of a `u64` the tracer increments (through a shared
/// mapping, so it survives `SIGKILL`) for every call it let through untraced because the
/// thread was already inside the tracer: I/O of a signal handler that interrupted the
/// tracer's own bookkeeping, or a library function calling another hooked function.
pub const UNTRACED_COUNTER_OFFSET: u64 = HEADER_BYTES - 4096;

/// Offset, inside the header area (the counter's page, shared the same way), of the
/// kernel's own I/O counters for the process (`/proc/self/io`): a `u64` marker
/// ([`KERNEL_IO_MARKER`] once the first reading is stored), then `rchar`, `wchar`,
/// `syscr`, `syscw` when the image started, then the same as last read (when each chunk
/// is taken and at the end), so a `SIGKILL` keeps the reading of the last chunk taken.
pub const KERNEL_IO_OFFSET: u64 = UNTRACED_COUNTER_OFFSET + 8;
pub const KERNEL_IO_MARKER: u64 = u64::from_le_bytes(*b"KERNELIO");

/// Offset, inside the header area (the counter's page, shared the same way), of what the
/// tracer could not record because the staging file could not grow (a full file system,
/// a quota): a `u64` marker ([`UNRECORDED_MARKER`] once anything was lost), the number of
/// calls not recorded, the `errno` of the first failure and the clock reading (the
/// process's event clock) when it happened. Tracing goes on counting.
pub const UNRECORDED_OFFSET: u64 = KERNEL_IO_OFFSET + 9 * 8;
pub const UNRECORDED_MARKER: u64 = u64::from_le_bytes(*b"UNRECORD");

/// Offset, in the same page, of the image's end as the tracer last saw it, written there
/// as well as in a chunk (which a full file system may refuse): a `u64` marker
/// ([`ENDING_MARKER`]), the [`mark`] kind and its value.
pub const ENDING_OFFSET: u64 = UNRECORDED_OFFSET + 4 * 8;
pub const ENDING_MARKER: u64 = u64::from_le_bytes(*b"ENDSEEN!");
// Both lie in the page the tracer keeps mapped.
const _: () = assert!(ENDING_OFFSET + 24 <= HEADER_BYTES);

/// Calls the tracer could not record (see [`UNRECORDED_OFFSET`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unrecorded {
    pub calls: u64,
    pub errno: i32,
    /// The process's event clock when the first call was lost.
    pub clock: u64,
}

fn word_at(area: &[u8], at: usize) -> Option<u64> {
    area.get(at..at + 8)
        .map(|bytes| u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
}

impl Unrecorded {
    fn from_area(area: &[u8]) -> Option<Unrecorded> {
        let at = UNRECORDED_OFFSET as usize;
        if word_at(area, at)? != UNRECORDED_MARKER {
            return None;
        }
        Some(Unrecorded {
            calls: word_at(area, at + 8)?,
            errno: word_at(area, at + 16)? as i32,
            clock: word_at(area, at + 24)?,
        })
    }
}

/// The end mark kept in the header area (see [`ENDING_OFFSET`]): (kind, value).
fn ending_from_area(area: &[u8]) -> Option<(u32, u64)> {
    let at = ENDING_OFFSET as usize;
    if word_at(area, at)? != ENDING_MARKER {
        return None;
    }
    Some((word_at(area, at + 8)? as u32, word_at(area, at + 16)?))
}

/// What the kernel counted for a process image: bytes and calls of every read- and
/// write-like system call (`/proc/self/io`'s `rchar`, `wchar`, `syscr`, `syscw`), whoever
/// made them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelIo {
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub read_calls: u64,
    pub write_calls: u64,
}

impl KernelIo {
    /// The image's counters from the header area: the last reading minus the first.
    fn from_area(area: &[u8]) -> Option<KernelIo> {
        let at = KERNEL_IO_OFFSET as usize;
        let word = |index: usize| {
            area.get(at + 8 * index..at + 8 * index + 8)
                .map(|bytes| u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
        };
        if word(0)? != KERNEL_IO_MARKER {
            return None;
        }
        let difference = |index: usize| Some(word(5 + index)?.saturating_sub(word(1 + index)?));
        Some(KernelIo {
            read_bytes: difference(0)?,
            written_bytes: difference(1)?,
            read_calls: difference(2)?,
            write_calls: difference(3)?,
        })
    }
}

/// Jobs of at most this many ranks merge their traces flat by default: every rank's
/// straight to rank 0.
pub const FLAT_MERGE_RANKS: u32 = 64;

/// Children per node of the tree a job's rank traces merge up (`given`:
/// `CAIRN_MERGE_FANIN`, at least 2). By default a job of up to [`FLAT_MERGE_RANKS`] ranks
/// merges flat and a larger one with 4 children per node: each level of the tree aligns
/// every rank's streams again, so on few ranks the levels only lengthen the job's end
/// (real runs on 2 cores, whole `mpirun` against untraced: 32 load-imbalanced ranks ×1.64
/// with 4 children, ×1.39 flat; a 64-rank multigrid ×1.34 and ×1.24), while thousands of
/// ranks of one stream merge faster up a tree (16,384 generated ranks: 0.25 s on the
/// tree's critical path, 2.1 s flat) and no rank holds every rank's trace at once.
pub fn merge_fan_in(given: Option<u32>, ranks: u32) -> u32 {
    match given {
        Some(fan_in) => fan_in.max(2),
        None if ranks <= FLAT_MERGE_RANKS => ranks.max(2),
        None => 4,
    }
}

/// `rchar`, `wchar`, `syscr` and `syscw` from the text of `/proc/self/io`, without
/// allocating (the tracer reads it inside the traced program).
pub fn parse_proc_io(text: &[u8]) -> Option<[u64; 4]> {
    let mut values = [None; 4];
    for line in text.split(|byte| *byte == b'\n') {
        let Some(colon) = line.iter().position(|byte| *byte == b':') else {
            continue;
        };
        let slot = match &line[..colon] {
            b"rchar" => 0,
            b"wchar" => 1,
            b"syscr" => 2,
            b"syscw" => 3,
            _ => continue,
        };
        let mut value = 0u64;
        for byte in line[colon + 1..].iter().filter(|byte| **byte != b' ') {
            if !byte.is_ascii_digit() {
                return None;
            }
            value = value.checked_mul(10)?.checked_add((byte - b'0') as u64)?;
        }
        values[slot] = Some(value);
    }
    Some([values[0]?, values[1]?, values[2]?, values[3]?])
}

/// Record kinds (the top byte of a record's header word).
pub mod kind {
    /// A traced call; extra = the call's id in this segment's call-name list.
    pub const EVENT: u32 = 1;
    /// A file path; extra = the per-process file id.
    pub const PATH: u32 = 2;
    /// A calling context; extra = the per-process context id.
    pub const CONTEXT: u32 = 3;
    /// A loaded module (executable or shared object); extra = the module id.
    pub const MODULE: u32 = 4;
    /// A lifecycle mark; extra = one of [`super::mark`].
    pub const MARK: u32 = 5;
    /// A diagnostic message from the tracer itself.
    pub const MESSAGE: u32 = 6;
    /// Repetitions of the thread's previous event ([`super::RawRun`]); extra = the call's id.
    pub const RUN: u32 = 7;
    /// Repetitions of the thread's last few event records as a whole ([`super::RawBlock`]
    /// and a [`super::RawRun`] per event); extra = how many events (the period).
    pub const BLOCK: u32 = 8;
    /// Repetitions of a few events, the first at irregular offsets
    /// ([`super::RawOffsetsHead`]); extra = how many events (the period).
    pub const OFFSETS: u32 = 9;
    /// A step's calls repeated with sizes or inner loop counts that change
    /// ([`super::RawStepsHead`]); extra = how many items (the period).
    pub const STEPS: u32 = 10;
}

/// Lifecycle marks.
pub mod mark {
    /// `main` is about to run; value = 0.
    pub const MAIN_START: u32 = 1;
    /// The library's destructor ran (normal exit).
    pub const EXIT: u32 = 2;
    /// `_exit`/`_Exit` called; value = status.
    pub const EXIT_CALL: u32 = 3;
    /// The tracer switched itself off; value = reason code.
    pub const DISABLED: u32 = 4;
}

/// How a path record's file became known.
pub mod path_origin {
    /// Opened by name by this process (open, fopen, creat...).
    pub const OPENED: u32 = 1;
    /// Found from a descriptor this process did not open (inherited, opened before the
    /// tracer loaded, or by a raw system call), through `/proc/self/fd`.
    pub const FROM_DESCRIPTOR: u32 = 2;
    /// Named by a metadata call (stat, unlink, rename...).
    pub const NAMED: u32 = 3;
    /// Known to the parent when this process was forked.
    pub const INHERITED: u32 = 4;
}

/// The body of an event record, exactly as stored.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawEvent {
    /// CLOCK_MONOTONIC nanoseconds.
    pub start: u64,
    pub duration: u64,
    pub handle: u64,
    pub offset: i64,
    pub request: u64,
    pub result: i64,
    pub aux: u64,
    /// Per-process file id, 0 = none.
    pub file: u32,
    pub context: u32,
    pub errno: i32,
    pub flags: u32,
}

impl RawEvent {
    /// The same event `stride` further on, as a run or block repeats it: an explicit offset
    /// moves, one at the descriptor's position (-1) stays.
    pub fn moved(self, stride: i64) -> RawEvent {
        RawEvent {
            offset: if self.offset >= 0 {
                self.offset.wrapping_add(stride)
            } else {
                self.offset
            },
            ..self
        }
    }
}

pub const RAW_EVENT_BYTES: usize = std::mem::size_of::<RawEvent>();
const _: () = assert!(RAW_EVENT_BYTES == 72);

/// Upper bounds (exclusive) of the timing histograms' bins, in nanoseconds: <100 ns, <1 µs,
/// <10 µs, <100 µs, <1 ms, <10 ms, <100 ms, and the rest.
pub const HISTOGRAM_BOUNDS_NS: [u64; 7] = [
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Running statistics of a run's gaps (and, with a histogram, durations), in the segment's
/// clock units. Sums are of the differences from the first value (`shift`): no division on
/// the tracer's hot path, and no cancellation when the variance is small against the mean.
/// The count is the run's.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RawSpread {
    pub min: u64,
    pub max: u64,
    pub shift: u64,
    /// Sum of `value − shift`.
    pub sum: f64,
    /// Sum of `(value − shift)²`.
    pub squares: f64,
}

impl RawSpread {
    /// The mean and the sum of squared differences from it, for `count` values.
    pub fn mean_and_m2(&self, count: u64) -> (f64, f64) {
        let count = count.max(1) as f64;
        let mean_shifted = self.sum / count;
        let m2 = (self.squares - self.sum * mean_shifted).max(0.0);
        (self.shift as f64 + mean_shifted, m2)
    }
}

/// The body of a run record: the thread's previous event record repeats `count` more
/// times with the same values, each repetition's offset `stride` further than the one
/// before (explicit offsets; calls at the descriptor's position have offset -1). Durations
/// carry the trace's decade histogram (`<100 ns`, `<1 µs`, … `≥100 ms`), its bounds
/// converted to clock units with the start-up calibration; a run ends before a bin
/// would overflow.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RawRun {
    pub count: u64,
    pub stride: i64,
    /// End of the last repetition, in clock units.
    pub last_end: u64,
    pub duration: RawSpread,
    pub histogram: [u32; 8],
    /// Time from the end of each repetition's predecessor to its start.
    pub gap: RawSpread,
}

pub const RAW_RUN_BYTES: usize = std::mem::size_of::<RawRun>();
const _: () = assert!(RAW_RUN_BYTES == 136);

/// The head of an offsets record: a body of `period` events (1 ≤ period ≤
/// [`MAX_OFFSETS_PERIOD`]; a [`RawOffsetsPosition`] each follows the head) repeated
/// `count` times, its first position at irregular offsets — random accesses (`pread` at
/// scattered offsets; IOR's `-z`: a seek to a shuffled block, then the transfer at the
/// position) which no stride describes — the others with the same values every time. The
/// first position's offset of each repetition follows the positions (`i64` each, room for
/// as many as the body length leaves): 8 bytes a repetition instead of an event record per
/// call. A call whose sizes wander (compressed blocks) repeats the same way with its size,
/// or its offset and size, in each repetition's entry ([`varying`]). Whether a site's
/// offsets are irregular is `cairn_model::IrregularSteps`' rule, whether its sizes wander
/// `cairn_model::WanderingSizes`', the trace builder's too. The writer stores each entry
/// and the statistics before the count that covers them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawOffsetsHead {
    pub count: u64,
    pub period: u64,
}

/// One position of an offsets record: its call (the id in the segment's call-name list),
/// what varies from one repetition to the next ([`varying`]; only the first position's
/// may), its first occurrence, and its statistics over every repetition with the end of the
/// last (the run's count and stride are not used).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RawOffsetsPosition {
    pub call: u32,
    pub varying: u32,
    pub event: RawEvent,
    pub run: RawRun,
}

/// What an offsets record's first position changes in each repetition, and so what each
/// repetition's entry holds.
pub mod varying {
    /// The offset: one `i64` word a repetition.
    pub const OFFSET: u32 = 0;
    /// The size (a read or write at the descriptor's position moving all it asked for:
    /// request = result): one `u64` word a repetition.
    pub const SIZE: u32 = 1;
    /// The offset, then the size: two words a repetition.
    pub const OFFSET_AND_SIZE: u32 = 2;

    /// Words a repetition takes (`None`: not a known kind).
    pub const fn words(varying: u32) -> Option<usize> {
        match varying {
            OFFSET | SIZE => Some(1),
            OFFSET_AND_SIZE => Some(2),
            _ => None,
        }
    }
}

pub const RAW_OFFSETS_HEAD_BYTES: usize = std::mem::size_of::<RawOffsetsHead>();
pub const RAW_OFFSETS_POSITION_BYTES: usize = std::mem::size_of::<RawOffsetsPosition>();
const _: () = assert!(RAW_OFFSETS_POSITION_BYTES == 8 + RAW_EVENT_BYTES + RAW_RUN_BYTES);
/// The longest body an offsets record repeats.
pub const MAX_OFFSETS_PERIOD: usize = 4;

/// Bytes of an offsets record's body of `period` positions with room for `room` offsets.
pub const fn offsets_record_bytes(period: usize, room: usize) -> usize {
    RAW_OFFSETS_HEAD_BYTES + period * RAW_OFFSETS_POSITION_BYTES + 8 * room
}

/// The head of a block record: the thread's last `period` events (2 ≤ period ≤
/// [`MAX_BLOCK_PERIOD`]) repeat `count` more times as a whole, in order. Those events are
/// the ones of the event, run and block records before it (a run's or block's
/// repetitions count as their events, see [`last_repetitions`]), with no record of another
/// kind between them. A [`RawRun`] per event follows: its stride (each repetition's offset
/// that much further than the one before), the end of its last repetition and its timing
/// statistics over the `count` repetitions (its own count field is not used). The count
/// is stored after the statistics of each repetition: a reader after a crash sees at most
/// one repetition's statistics without its count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawBlock {
    pub count: u64,
    pub period: u64,
}

pub const RAW_BLOCK_BYTES: usize = std::mem::size_of::<RawBlock>();
/// The longest body a block repeats: a loop of up to 1,024 calls, inner loops flattened (a
/// record of 139 KB), so a loop that holds loops folds as the program runs — a CG
/// iteration of real HPCG's interior ranks is 564 calls at 16 ranks, 861 from 27. (The
/// tracer folds bodies of up to 256 until a thread meets a longer loop.)
pub const MAX_BLOCK_PERIOD: usize = 1024;

/// The last `wanted` (at most) of `count` repetitions of a body of `period` events, oldest
/// first, as (repetition, position) pairs: the events a run or block record adds to those a
/// later block may repeat (the repetition `r` of a position is its first moved by `r`
/// strides). Tracer and reader both take their windows of recent events from here, so
/// they agree.
pub fn last_repetitions(
    count: u64,
    period: usize,
    wanted: usize,
) -> impl Iterator<Item = (u64, usize)> {
    let period = period.max(1) as u64;
    let total = count.saturating_mul(period);
    (total.saturating_sub(wanted as u64)..total)
        .map(move |index| (index / period, (index % period) as usize))
}

/// Maximum frames kept per calling context.
pub const MAX_FRAMES: usize = 16;

/// The process header, written once when a process image starts tracing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessHeader {
    pub pid: u32,
    pub parent_pid: u32,
    pub nonce: u64,
    /// CLOCK_MONOTONIC and CLOCK_REALTIME at the start, nanoseconds.
    pub start_monotonic: u64,
    pub start_realtime: u64,
    pub executable: Vec<u8>,
    /// argv, NUL-separated as in /proc/self/cmdline.
    pub command_line: Vec<u8>,
    pub working_directory: Vec<u8>,
    pub hostname: Vec<u8>,
    /// The names of the calls, indexed by the call ids used in event records.
    pub call_names: Vec<String>,
    /// Each call's layer and class, as indices into the writer's `Layer::ALL` and
    /// `CallClass::ALL` (so a builder that has no row for a call still knows what it is;
    /// empty from a writer that did not say).
    pub call_kinds: Vec<(u8, u8)>,
    /// True when this image started as a forked child (not a fresh exec).
    pub forked: bool,
    /// The MPI rank the launcher gave this process (from its environment), if any.
    pub rank: Option<u32>,
    /// What event and mark times count: [`CLOCK_MONOTONIC_NS`] or [`CLOCK_TSC`].
    pub clock: u32,
    /// (clock value, CLOCK_MONOTONIC ns) pairs taken at start, to convert ticks to time;
    /// every chunk header adds one more.
    pub calibration: Vec<(u64, u64)>,
}

/// Times are CLOCK_MONOTONIC nanoseconds.
pub const CLOCK_MONOTONIC_NS: u32 = 0;
/// Times are time-stamp-counter ticks (constant and non-stop TSC), converted with the
/// calibration pairs.
pub const CLOCK_TSC: u32 = 1;

impl ProcessHeader {
    /// The complete header area: magic, version, payload length, payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut payload = ByteWriter::new();
        payload.u64(self.pid as u64);
        payload.u64(self.parent_pid as u64);
        payload.u64(self.nonce);
        payload.u64(self.start_monotonic);
        payload.u64(self.start_realtime);
        payload.bytes(&self.executable);
        payload.bytes(&self.command_line);
        payload.bytes(&self.working_directory);
        payload.bytes(&self.hostname);
        payload.u64(self.forked as u64);
        payload.u64(self.call_names.len() as u64);
        for name in &self.call_names {
            payload.str(name);
        }
        payload.u64(self.rank.map_or(0, |rank| rank as u64 + 1));
        payload.u64(self.clock as u64);
        payload.u64(self.calibration.len() as u64);
        for (ticks, nanoseconds) in &self.calibration {
            payload.u64(*ticks);
            payload.u64(*nanoseconds);
        }
        payload.u64(self.call_kinds.len() as u64);
        for (layer, class) in &self.call_kinds {
            payload.u64(*layer as u64);
            payload.u64(*class as u64);
        }
        let payload = payload.into_inner();
        let mut out = Vec::with_capacity(HEADER_PAYLOAD_OFFSET + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    pub fn decode(area: &[u8]) -> Result<ProcessHeader> {
        if area.len() < HEADER_PAYLOAD_OFFSET || &area[..8] != MAGIC {
            return Err(FormatError::Corrupt("not a cairn staging segment".into()));
        }
        let version = u32::from_le_bytes(area[8..12].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(FormatError::Corrupt(format!(
                "staging segment version {version} is not supported"
            )));
        }
        let length = u32::from_le_bytes(area[12..16].try_into().expect("4 bytes")) as usize;
        let payload = area
            .get(HEADER_PAYLOAD_OFFSET..HEADER_PAYLOAD_OFFSET + length)
            .ok_or_else(|| FormatError::Truncated("staging segment header".into()))?;
        let mut reader = ByteReader::new(payload, "segment header");
        let mut header = ProcessHeader {
            pid: reader.u32()?,
            parent_pid: reader.u32()?,
            nonce: reader.u64()?,
            start_monotonic: reader.u64()?,
            start_realtime: reader.u64()?,
            executable: reader.bytes()?.to_vec(),
            command_line: reader.bytes()?.to_vec(),
            working_directory: reader.bytes()?.to_vec(),
            hostname: reader.bytes()?.to_vec(),
            forked: reader.u64()? != 0,
            call_names: Vec::new(),
            call_kinds: Vec::new(),
            clock: CLOCK_MONOTONIC_NS,
            calibration: Vec::new(),
            rank: None,
        };
        let count = reader.count(1)?;
        for _ in 0..count {
            header.call_names.push(reader.string()?);
        }
        header.rank = reader.u32()?.checked_sub(1);
        header.clock = reader.u32()?;
        for _ in 0..reader.count(2)? {
            header.calibration.push((reader.u64()?, reader.u64()?));
        }
        if !reader.is_empty() {
            for _ in 0..reader.count(2)? {
                let layer = u8::try_from(reader.u64()?);
                let class = u8::try_from(reader.u64()?);
                let (Ok(layer), Ok(class)) = (layer, class) else {
                    return Err(FormatError::Corrupt("call kind out of range".into()));
                };
                header.call_kinds.push((layer, class));
            }
        }
        Ok(header)
    }
}

/// One decoded record of a chunk.
#[derive(Clone, Debug, PartialEq)]
pub enum Record<'a> {
    Event {
        call: u32,
        event: RawEvent,
    },
    Run {
        call: u32,
        run: Box<RawRun>,
    },
    /// A body of a few events repeated with its first position at other offsets, one
    /// repetition per entry of `offsets` (the first is the body's own; -1 each, as the
    /// event has it, when the call is at the descriptor's position) — and, where the first
    /// position's size varies, of other sizes, one per entry of `sizes` (else empty).
    Offsets {
        positions: Vec<RawOffsetsPosition>,
        offsets: Vec<i64>,
        sizes: Vec<u64>,
    },
    /// A step's items repeated with sizes or inner counts of their own ([`steps`]).
    Steps(Box<Steps>),
    /// The last `positions.len()` event records repeat `count` times (0: the block ended
    /// before a whole repetition).
    Block {
        count: u64,
        positions: Vec<RawRun>,
    },
    Path {
        file: u32,
        origin: u32,
        path: &'a [u8],
    },
    Context {
        context: u32,
        frames: Vec<(u32, u64)>,
    },
    Module {
        module: u32,
        path: &'a [u8],
    },
    Mark {
        mark: u32,
        time: u64,
        value: u64,
    },
    Message {
        text: &'a [u8],
    },
    /// A record of a kind this reader does not know; skipped.
    Unknown {
        kind: u32,
    },
}

/// The thread-owned header of a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    pub thread: u32,
    /// Position of this chunk among the thread's chunks.
    pub sequence: u32,
    /// A calibration pair taken when the chunk was started: (clock value, monotonic ns).
    pub clock: u64,
    pub monotonic: u64,
}

pub fn encode_chunk_header(header: ChunkHeader) -> [u8; CHUNK_HEADER_BYTES] {
    let mut out = [0u8; CHUNK_HEADER_BYTES];
    out[0..4].copy_from_slice(&CHUNK_MAGIC.to_le_bytes());
    out[4..8].copy_from_slice(&header.thread.to_le_bytes());
    out[8..12].copy_from_slice(&header.sequence.to_le_bytes());
    out[16..24].copy_from_slice(&header.clock.to_le_bytes());
    out[24..32].copy_from_slice(&header.monotonic.to_le_bytes());
    out
}

/// Reads the chunk header; `None` for a chunk that was never handed to a thread.
pub fn decode_chunk_header(chunk: &[u8]) -> Option<ChunkHeader> {
    if chunk.len() < CHUNK_HEADER_BYTES
        || u32::from_le_bytes(chunk[0..4].try_into().ok()?) != CHUNK_MAGIC
    {
        return None;
    }
    Some(ChunkHeader {
        thread: u32::from_le_bytes(chunk[4..8].try_into().ok()?),
        sequence: u32::from_le_bytes(chunk[8..12].try_into().ok()?),
        clock: u64::from_le_bytes(chunk[16..24].try_into().ok()?),
        monotonic: u64::from_le_bytes(chunk[24..32].try_into().ok()?),
    })
}

pub fn record_word(kind: u32, body_length: usize) -> u32 {
    (kind << 24) | body_length as u32
}

pub fn padded(length: usize) -> usize {
    (length + 7) & !7
}

/// The record whose header is at `position` (at least a header's bytes before the end of
/// `chunk`): its header word and where the next record starts; `None` at an empty slot.
/// The one walk of a chunk's records, for [`records`] and [`SegmentFile::read_chunk`].
fn record_at(chunk: &[u8], position: usize) -> Option<(u32, usize)> {
    let word = u32::from_le_bytes(chunk[position..position + 4].try_into().expect("4 bytes"));
    let length = (word & 0x00ff_ffff) as usize;
    (word != 0).then(|| (word, position + RECORD_HEADER_BYTES + padded(length)))
}

/// Decodes the records of one chunk, stopping at the first empty slot.
pub fn records(chunk: &[u8]) -> Result<Vec<Record<'_>>> {
    let mut records = Vec::new();
    let mut position = CHUNK_HEADER_BYTES;
    while position + RECORD_HEADER_BYTES <= chunk.len() {
        let Some((word, next)) = record_at(chunk, position) else {
            break;
        };
        let extra = u32::from_le_bytes(
            chunk[position + 4..position + 8]
                .try_into()
                .expect("4 bytes"),
        );
        let kind = word >> 24;
        let length = (word & 0x00ff_ffff) as usize;
        let body_start = position + RECORD_HEADER_BYTES;
        let body = chunk.get(body_start..body_start + length).ok_or_else(|| {
            FormatError::Corrupt(format!("record at {position} runs past its chunk"))
        })?;
        records.push(decode_record(kind, extra, body)?);
        position = next;
    }
    Ok(records)
}

/// The [`RawRun`] at `at` in a record's body.
fn raw_run_at(
    u32_at: &dyn Fn(usize) -> Result<u32>,
    u64_at: &dyn Fn(usize) -> Result<u64>,
    at: usize,
) -> Result<RawRun> {
    let spread_at = |at: usize| -> Result<RawSpread> {
        Ok(RawSpread {
            min: u64_at(at)?,
            max: u64_at(at + 8)?,
            shift: u64_at(at + 16)?,
            sum: f64::from_bits(u64_at(at + 24)?),
            squares: f64::from_bits(u64_at(at + 32)?),
        })
    };
    let mut histogram = [0u32; 8];
    for (index, bin) in histogram.iter_mut().enumerate() {
        *bin = u32_at(at + 64 + 4 * index)?;
    }
    Ok(RawRun {
        count: u64_at(at)?,
        stride: u64_at(at + 8)? as i64,
        last_end: u64_at(at + 16)?,
        duration: spread_at(at + 24)?,
        histogram,
        gap: spread_at(at + 96)?,
    })
}

/// Readers of a record body's little-endian `u32` and `u64` words at a byte offset (a
/// short body is damage).
fn word_readers(
    body: &[u8],
) -> (
    impl Fn(usize) -> Result<u32> + '_,
    impl Fn(usize) -> Result<u64> + '_,
) {
    let u32_at = |at: usize| -> Result<u32> {
        body.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .ok_or_else(|| FormatError::Corrupt("short record".into()))
    };
    let u64_at = |at: usize| -> Result<u64> {
        body.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| FormatError::Corrupt("short record".into()))
    };
    (u32_at, u64_at)
}

fn decode_record(kind: u32, extra: u32, body: &[u8]) -> Result<Record<'_>> {
    let (u32_at, u64_at) = word_readers(body);
    Ok(match kind {
        kind::EVENT => {
            if body.len() != RAW_EVENT_BYTES {
                return Err(FormatError::Corrupt(
                    "event record of the wrong size".into(),
                ));
            }
            Record::Event {
                call: extra,
                event: raw_event_at(&u32_at, &u64_at, 0)?,
            }
        }
        kind::BLOCK => {
            let period = extra as usize;
            if !(2..=MAX_BLOCK_PERIOD).contains(&period)
                || body.len() != RAW_BLOCK_BYTES + period * RAW_RUN_BYTES
                || u64_at(8)? != period as u64
            {
                return Err(FormatError::Corrupt(
                    "block record of the wrong size".into(),
                ));
            }
            let positions = (0..period)
                .map(|index| raw_run_at(&u32_at, &u64_at, RAW_BLOCK_BYTES + index * RAW_RUN_BYTES))
                .collect::<Result<Vec<RawRun>>>()?;
            Record::Block {
                count: u64_at(0)?,
                positions,
            }
        }
        kind::RUN => {
            if body.len() != RAW_RUN_BYTES {
                return Err(FormatError::Corrupt("run record of the wrong size".into()));
            }
            let run = raw_run_at(&u32_at, &u64_at, 0)?;
            if run.count == 0 {
                return Err(FormatError::Corrupt("run record of no events".into()));
            }
            Record::Run {
                call: extra,
                run: Box::new(run),
            }
        }
        kind::OFFSETS => {
            let period = extra as usize;
            let head = offsets_record_bytes(period, 0);
            if !(1..=MAX_OFFSETS_PERIOD).contains(&period)
                || body.len() < head + 8
                || !(body.len() - head).is_multiple_of(8)
                || u64_at(8)? != period as u64
            {
                return Err(FormatError::Corrupt(
                    "offsets record of the wrong size".into(),
                ));
            }
            let positions = (0..period)
                .map(|index| {
                    let at = RAW_OFFSETS_HEAD_BYTES + index * RAW_OFFSETS_POSITION_BYTES;
                    Ok(RawOffsetsPosition {
                        call: u32_at(at)?,
                        varying: u32_at(at + 4)?,
                        event: raw_event_at(&u32_at, &u64_at, at + 8)?,
                        run: raw_run_at(&u32_at, &u64_at, at + 8 + RAW_EVENT_BYTES)?,
                    })
                })
                .collect::<Result<Vec<RawOffsetsPosition>>>()?;
            let kind = positions[0].varying;
            let words = varying::words(kind)
                .filter(|_| positions[1..].iter().all(|p| p.varying == varying::OFFSET))
                .ok_or_else(|| FormatError::Corrupt("offsets record of an unknown kind".into()))?;
            let count = u64_at(0)?;
            if count == 0 || count > ((body.len() - head) / (8 * words)) as u64 {
                return Err(FormatError::Corrupt(
                    "offsets record counting more offsets than it holds".into(),
                ));
            }
            let word = |index: usize| u64_at(head + 8 * index);
            let (offsets, sizes) = match kind {
                varying::SIZE => (
                    vec![positions[0].event.offset; count as usize],
                    (0..count as usize)
                        .map(word)
                        .collect::<Result<Vec<u64>>>()?,
                ),
                varying::OFFSET_AND_SIZE => (
                    (0..count as usize)
                        .map(|index| word(2 * index).map(|word| word as i64))
                        .collect::<Result<Vec<i64>>>()?,
                    (0..count as usize)
                        .map(|index| word(2 * index + 1))
                        .collect::<Result<Vec<u64>>>()?,
                ),
                _ => (
                    (0..count as usize)
                        .map(|index| word(index).map(|word| word as i64))
                        .collect::<Result<Vec<i64>>>()?,
                    Vec::new(),
                ),
            };
            Record::Offsets {
                positions,
                offsets,
                sizes,
            }
        }
        kind::STEPS => Record::Steps(Box::new(steps::decode(extra as usize, body)?)),
        kind::PATH => {
            let origin = u32_at(0)?;
            let length = u32_at(4)? as usize;
            let path = body
                .get(8..8 + length)
                .ok_or_else(|| FormatError::Corrupt("short path record".into()))?;
            Record::Path {
                file: extra,
                origin,
                path,
            }
        }
        kind::CONTEXT => {
            let count = u32_at(0)? as usize;
            if count > MAX_FRAMES {
                return Err(FormatError::Corrupt("context with too many frames".into()));
            }
            let mut frames = Vec::with_capacity(count);
            for index in 0..count {
                let at = 8 + index * 16;
                frames.push((u32_at(at)?, u64_at(at + 8)?));
            }
            Record::Context {
                context: extra,
                frames,
            }
        }
        kind::MODULE => Record::Module {
            module: extra,
            path: body,
        },
        kind::MARK => Record::Mark {
            mark: extra,
            time: u64_at(0)?,
            value: u64_at(8)?,
        },
        kind::MESSAGE => Record::Message { text: body },
        other => Record::Unknown { kind: other },
    })
}

/// The event stored at `at` of a record body.
fn raw_event_at(
    u32_at: &dyn Fn(usize) -> Result<u32>,
    u64_at: &dyn Fn(usize) -> Result<u64>,
    at: usize,
) -> Result<RawEvent> {
    Ok(RawEvent {
        start: u64_at(at)?,
        duration: u64_at(at + 8)?,
        handle: u64_at(at + 16)?,
        offset: u64_at(at + 24)? as i64,
        request: u64_at(at + 32)?,
        result: u64_at(at + 40)? as i64,
        aux: u64_at(at + 48)?,
        file: u32_at(at + 56)?,
        context: u32_at(at + 60)?,
        errno: u32_at(at + 64)? as i32,
        flags: u32_at(at + 68)?,
    })
}

/// An event as the tracer writes the `repr(C)` struct in memory: its fields in order,
/// little endian, no padding.
pub fn encode_raw_event(event: &RawEvent) -> Vec<u8> {
    let mut body = Vec::with_capacity(RAW_EVENT_BYTES);
    for word in [
        event.start,
        event.duration,
        event.handle,
        event.offset as u64,
        event.request,
        event.result as u64,
        event.aux,
    ] {
        body.extend_from_slice(&word.to_le_bytes());
    }
    for word in [event.file, event.context, event.errno as u32, event.flags] {
        body.extend_from_slice(&word.to_le_bytes());
    }
    body
}

/// A run as the tracer writes it (see [`encode_raw_event`]).
pub fn encode_raw_run(run: &RawRun) -> Vec<u8> {
    let mut body = Vec::with_capacity(RAW_RUN_BYTES);
    for word in [run.count, run.stride as u64, run.last_end] {
        body.extend_from_slice(&word.to_le_bytes());
    }
    let spread = |body: &mut Vec<u8>, spread: &RawSpread| {
        for word in [
            spread.min,
            spread.max,
            spread.shift,
            spread.sum.to_bits(),
            spread.squares.to_bits(),
        ] {
            body.extend_from_slice(&word.to_le_bytes());
        }
    };
    spread(&mut body, &run.duration);
    for bin in run.histogram {
        body.extend_from_slice(&bin.to_le_bytes());
    }
    spread(&mut body, &run.gap);
    body
}

/// Reads a staging segment file chunk by chunk.
pub struct SegmentFile {
    file: File,
    pub header: ProcessHeader,
    chunk_count: u64,
    /// Calls let through untraced (see [`UNTRACED_COUNTER_OFFSET`]).
    pub untraced_calls: u64,
    /// What the kernel counted (see [`KERNEL_IO_OFFSET`]), if the tracer could read it.
    pub kernel_io: Option<KernelIo>,
    /// Calls the tracer could not record (see [`UNRECORDED_OFFSET`]).
    pub unrecorded: Option<Unrecorded>,
    /// The image's end as kept in the header area (see [`ENDING_OFFSET`]): (mark, value).
    pub ending: Option<(u32, u64)>,
}

impl SegmentFile {
    pub fn open(path: &Path) -> Result<SegmentFile> {
        let file = File::open(path).map_err(|error| FormatError::io(path, error))?;
        let length = file
            .metadata()
            .map_err(|error| FormatError::io(path, error))?
            .len();
        let mut area = vec![0u8; HEADER_BYTES.min(length) as usize];
        file.read_exact_at(&mut area, 0)
            .map_err(|error| FormatError::io(path, error))?;
        let header = ProcessHeader::decode(&area)?;
        let chunk_count = length.saturating_sub(HEADER_BYTES) / CHUNK_BYTES;
        let at = UNTRACED_COUNTER_OFFSET as usize;
        let untraced_calls = area
            .get(at..at + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        Ok(SegmentFile {
            file,
            header,
            chunk_count,
            untraced_calls,
            kernel_io: KernelIo::from_area(&area),
            unrecorded: Unrecorded::from_area(&area),
            ending: ending_from_area(&area),
        })
    }

    pub fn chunk_count(&self) -> u64 {
        self.chunk_count
    }

    /// Reads chunk `index` into `buffer`: its header and whole records up to the first empty
    /// slot (or the chunk's end), read in doubling pieces from 16 KiB — a short-lived
    /// thread's chunk holds a few records in its 256 KiB, and 160 such threads made the
    /// trace build read 80 MB (each chunk is read twice).
    pub fn read_chunk(&self, index: u64, buffer: &mut Vec<u8>) -> Result<()> {
        const FIRST_READ: usize = 16 * 1024;
        let chunk = CHUNK_BYTES as usize;
        let start = HEADER_BYTES + index * CHUNK_BYTES;
        let read = |buffer: &mut Vec<u8>, from: usize, to: usize| {
            buffer.resize(to, 0);
            self.file
                .read_exact_at(&mut buffer[from..to], start + from as u64)
                .map_err(|error| FormatError::Corrupt(format!("staging chunk {index}: {error}")))
        };
        buffer.clear();
        read(buffer, 0, FIRST_READ.min(chunk))?;
        // Where the next record's header is: records are contiguous from the chunk header.
        let mut position = CHUNK_HEADER_BYTES;
        loop {
            let filled = buffer.len();
            if position + RECORD_HEADER_BYTES > filled {
                if filled == chunk {
                    return Ok(());
                }
                let want = (position + RECORD_HEADER_BYTES).max(2 * filled).min(chunk);
                read(buffer, filled, want)?;
                continue;
            }
            let Some((_, next)) = record_at(buffer, position) else {
                return Ok(());
            };
            if next > chunk {
                // A record that runs past its chunk: `records` says so.
                if filled < chunk {
                    read(buffer, filled, chunk)?;
                }
                return Ok(());
            }
            position = next;
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn proc_self_io_is_read_without_the_fields_it_does_not_need() {
        let text = b"rchar: 4101\nwchar: 1048600\nsyscr: 12\nsyscw: 3\nread_bytes: 0\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_proc_io(text), Some([4101, 1048600, 12, 3]));
        assert_eq!(parse_proc_io(b"rchar: 1\nwchar: 2\n"), None);
        assert_eq!(
            parse_proc_io(b"rchar: x\nwchar: 2\nsyscr: 3\nsyscw: 4\n"),
            None
        );
        // Stored in the header area: the last reading minus the first.
        let mut area = vec![0u8; HEADER_BYTES as usize];
        assert_eq!(KernelIo::from_area(&area), None);
        let words = [KERNEL_IO_MARKER, 100, 200, 3, 4, 150, 1200, 5, 9];
        for (index, word) in words.iter().enumerate() {
            let at = KERNEL_IO_OFFSET as usize + 8 * index;
            area[at..at + 8].copy_from_slice(&word.to_le_bytes());
        }
        assert_eq!(
            KernelIo::from_area(&area),
            Some(KernelIo {
                read_bytes: 50,
                written_bytes: 1000,
                read_calls: 2,
                write_calls: 5,
            })
        );
    }

    use super::*;

    #[test]
    fn losses_and_the_ending_are_read_from_the_header_area() {
        let mut area = vec![0u8; HEADER_BYTES as usize];
        assert_eq!(Unrecorded::from_area(&area), None);
        assert_eq!(ending_from_area(&area), None);
        let mut put = |at: u64, words: &[u64]| {
            for (index, word) in words.iter().enumerate() {
                let at = at as usize + 8 * index;
                area[at..at + 8].copy_from_slice(&word.to_le_bytes());
            }
        };
        put(
            UNRECORDED_OFFSET,
            &[UNRECORDED_MARKER, 977_071, 28, 123_456],
        );
        put(ENDING_OFFSET, &[ENDING_MARKER, mark::EXIT_CALL as u64, 3]);
        assert_eq!(
            Unrecorded::from_area(&area),
            Some(Unrecorded {
                calls: 977_071,
                errno: 28,
                clock: 123_456
            })
        );
        assert_eq!(ending_from_area(&area), Some((mark::EXIT_CALL, 3)));
    }

    #[test]
    fn a_chunk_is_read_up_to_its_last_record_whatever_the_records_lengths() {
        // Three chunks: empty, records ending past the first 16 KiB piece (a message record
        // whose body crosses it), and full to the last byte; each must read back as the
        // whole chunk parses.
        let header = ProcessHeader {
            pid: 1,
            parent_pid: 0,
            nonce: 0,
            start_monotonic: 0,
            start_realtime: 0,
            executable: b"/bin/x".to_vec(),
            command_line: b"x\0".to_vec(),
            working_directory: b"/".to_vec(),
            hostname: b"h".to_vec(),
            call_names: vec![],
            call_kinds: vec![],
            forked: false,
            clock: CLOCK_MONOTONIC_NS,
            calibration: vec![],
            rank: None,
        };
        let mut file = vec![0u8; HEADER_BYTES as usize];
        let area = header.encode();
        file[..area.len()].copy_from_slice(&area);
        let chunk_bytes = CHUNK_BYTES as usize;
        let chunk_with = |lengths: &[usize]| {
            let mut chunk = vec![0u8; chunk_bytes];
            chunk[..CHUNK_HEADER_BYTES].copy_from_slice(&encode_chunk_header(ChunkHeader {
                thread: 1,
                sequence: 0,
                clock: 0,
                monotonic: 0,
            }));
            let mut at = CHUNK_HEADER_BYTES;
            for (index, length) in lengths.iter().enumerate() {
                let word = record_word(kind::MESSAGE, *length);
                chunk[at..at + 4].copy_from_slice(&word.to_le_bytes());
                for byte in &mut chunk[at + RECORD_HEADER_BYTES..][..*length] {
                    *byte = b'a' + index as u8;
                }
                at += RECORD_HEADER_BYTES + padded(*length);
            }
            chunk
        };
        let full = chunk_bytes - CHUNK_HEADER_BYTES - RECORD_HEADER_BYTES;
        let chunks = [
            chunk_with(&[]),
            chunk_with(&[100, 20_000, 30, 40_000]),
            chunk_with(&[full]),
        ];
        for chunk in &chunks {
            file.extend_from_slice(chunk);
        }
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("1.seg");
        std::fs::write(&path, &file).unwrap();
        let segment = SegmentFile::open(&path).unwrap();
        assert_eq!(segment.chunk_count(), 3);
        let mut buffer = Vec::new();
        for (index, chunk) in chunks.iter().enumerate() {
            segment.read_chunk(index as u64, &mut buffer).unwrap();
            let read = records(&buffer).unwrap();
            assert_eq!(read, records(chunk).unwrap(), "chunk {index}");
            assert_eq!(read.len(), [0, 4, 1][index], "chunk {index}");
        }
        // The empty chunk took one piece, not the whole chunk.
        segment.read_chunk(0, &mut buffer).unwrap();
        assert_eq!(buffer.len(), 16 * 1024);
    }

    #[test]
    fn header_roundtrip() {
        let header = ProcessHeader {
            pid: 42,
            parent_pid: 7,
            nonce: 99,
            start_monotonic: 5,
            start_realtime: 6,
            executable: b"/bin/x".to_vec(),
            command_line: b"x\0-v\0".to_vec(),
            working_directory: b"/tmp".to_vec(),
            hostname: b"node1".to_vec(),
            call_names: vec!["open".into(), "write".into()],
            call_kinds: vec![(0, 0), (7, 3)],
            forked: true,
            clock: CLOCK_TSC,
            calibration: vec![(1000, 10), (3000, 1010)],
            rank: Some(3),
        };
        assert_eq!(ProcessHeader::decode(&header.encode()).unwrap(), header);
    }

    fn raw_run_bytes(run: &RawRun) -> Vec<u8> {
        let body = encode_raw_run(run);
        assert_eq!(body.len(), RAW_RUN_BYTES);
        body
    }

    #[test]
    fn run_records_read_back_as_the_tracer_lays_them_out() {
        let run = RawRun {
            count: 1_000_000,
            stride: -512,
            last_end: 123_456,
            duration: RawSpread {
                min: 5,
                max: 90,
                shift: 7,
                sum: 7.5,
                squares: 12.25,
            },
            histogram: [999_990, 10, 0, 0, 0, 0, 0, 0],
            gap: RawSpread {
                min: 1,
                max: 2,
                shift: 2,
                sum: -1.5,
                squares: 0.25,
            },
        };
        let body = raw_run_bytes(&run);
        let mut chunk = vec![0u8; CHUNK_HEADER_BYTES + RECORD_HEADER_BYTES + RAW_RUN_BYTES + 8];
        let at = CHUNK_HEADER_BYTES;
        chunk[at..at + 4].copy_from_slice(&record_word(kind::RUN, RAW_RUN_BYTES).to_le_bytes());
        chunk[at + 4..at + 8].copy_from_slice(&11u32.to_le_bytes());
        chunk[at + 8..at + 8 + RAW_RUN_BYTES].copy_from_slice(&body);
        assert_eq!(
            records(&chunk).unwrap(),
            vec![Record::Run {
                call: 11,
                run: Box::new(run)
            }]
        );
        // A run of no occurrences, or of the wrong size, is damage.
        chunk[at + 8..at + 16].copy_from_slice(&0u64.to_le_bytes());
        assert!(records(&chunk).is_err());
        chunk[at..at + 4].copy_from_slice(&record_word(kind::RUN, 72).to_le_bytes());
        assert!(records(&chunk).is_err());
    }

    #[test]
    fn offsets_records_read_back_as_the_tracer_lays_them_out() {
        // A seek to irregular offsets, then a write at the position: two positions, room
        // for four offsets, three filled.
        let seek = RawEvent {
            start: 10,
            duration: 3,
            handle: 5,
            offset: 8192,
            file: 2,
            context: 9,
            flags: 384,
            ..RawEvent::default()
        };
        let write = RawEvent {
            start: 14,
            offset: -1,
            request: 4096,
            result: 4096,
            context: 10,
            ..seek
        };
        let run = |last_end| RawRun {
            last_end,
            histogram: [3, 0, 0, 0, 0, 0, 0, 0],
            ..RawRun::default()
        };
        let mut body = Vec::new();
        body.extend_from_slice(&3u64.to_le_bytes());
        body.extend_from_slice(&2u64.to_le_bytes());
        for (call, event, last_end) in [(4u32, seek, 90u64), (6, write, 99)] {
            body.extend_from_slice(&call.to_le_bytes());
            body.extend_from_slice(&0u32.to_le_bytes());
            body.extend_from_slice(&encode_raw_event(&event));
            body.extend_from_slice(&raw_run_bytes(&run(last_end)));
        }
        for offset in [8192i64, 0, 65536, 0] {
            body.extend_from_slice(&offset.to_le_bytes());
        }
        assert_eq!(body.len(), offsets_record_bytes(2, 4));
        let mut chunk = vec![0u8; CHUNK_HEADER_BYTES + RECORD_HEADER_BYTES + body.len() + 8];
        let at = CHUNK_HEADER_BYTES;
        chunk[at..at + 4].copy_from_slice(&record_word(kind::OFFSETS, body.len()).to_le_bytes());
        chunk[at + 4..at + 8].copy_from_slice(&2u32.to_le_bytes());
        chunk[at + 8..at + 8 + body.len()].copy_from_slice(&body);
        let position = |call, event, last_end| RawOffsetsPosition {
            call,
            varying: 0,
            event,
            run: run(last_end),
        };
        assert_eq!(
            records(&chunk).unwrap(),
            vec![Record::Offsets {
                positions: vec![position(4, seek, 90), position(6, write, 99)],
                offsets: vec![8192, 0, 65536],
                sizes: vec![],
            }]
        );
        // More offsets counted than there is room for, none, a period the head does not
        // repeat, or a ragged body: damage.
        let count_at = at + 8;
        chunk[count_at..count_at + 8].copy_from_slice(&5u64.to_le_bytes());
        assert!(records(&chunk).is_err());
        chunk[count_at..count_at + 8].copy_from_slice(&0u64.to_le_bytes());
        assert!(records(&chunk).is_err());
        chunk[count_at..count_at + 8].copy_from_slice(&3u64.to_le_bytes());
        assert!(records(&chunk).is_ok());
        chunk[at + 4..at + 8].copy_from_slice(&1u32.to_le_bytes());
        assert!(records(&chunk).is_err());
        chunk[at + 4..at + 8].copy_from_slice(&2u32.to_le_bytes());
        chunk[at..at + 4]
            .copy_from_slice(&record_word(kind::OFFSETS, body.len() - 4).to_le_bytes());
        assert!(records(&chunk).is_err());
    }

    #[test]
    fn offsets_records_of_sizes_read_back_with_each_repetitions_size() {
        // One write whose sizes vary: at the descriptor's position (a word a repetition),
        // then at explicit offsets (offset and size, two words).
        let write = RawEvent {
            start: 10,
            duration: 3,
            handle: 5,
            request: 1500,
            result: 1500,
            file: 2,
            context: 9,
            ..RawEvent::default()
        };
        let record = |event: RawEvent, varying: u32, words: &[u64], count: u64| {
            let mut body = Vec::new();
            body.extend_from_slice(&count.to_le_bytes());
            body.extend_from_slice(&1u64.to_le_bytes());
            body.extend_from_slice(&7u32.to_le_bytes());
            body.extend_from_slice(&varying.to_le_bytes());
            body.extend_from_slice(&encode_raw_event(&event));
            body.extend_from_slice(&raw_run_bytes(&RawRun::default()));
            for word in words {
                body.extend_from_slice(&word.to_le_bytes());
            }
            let mut chunk = vec![0u8; CHUNK_HEADER_BYTES + RECORD_HEADER_BYTES + body.len() + 8];
            let at = CHUNK_HEADER_BYTES;
            chunk[at..at + 4]
                .copy_from_slice(&record_word(kind::OFFSETS, body.len()).to_le_bytes());
            chunk[at + 4..at + 8].copy_from_slice(&1u32.to_le_bytes());
            chunk[at + 8..at + 8 + body.len()].copy_from_slice(&body);
            chunk
        };
        let position = |event, varying| RawOffsetsPosition {
            call: 7,
            varying,
            event,
            run: RawRun::default(),
        };
        let appended = RawEvent {
            offset: -1,
            ..write
        };
        assert_eq!(
            records(&record(appended, varying::SIZE, &[1500, 2048, 1024, 0], 3)).unwrap(),
            vec![Record::Offsets {
                positions: vec![position(appended, varying::SIZE)],
                offsets: vec![-1, -1, -1],
                sizes: vec![1500, 2048, 1024],
            }]
        );
        let placed = RawEvent {
            offset: 4096,
            ..write
        };
        assert_eq!(
            records(&record(
                placed,
                varying::OFFSET_AND_SIZE,
                &[4096, 1500, 0, 2048, 0, 0],
                2
            ))
            .unwrap(),
            vec![Record::Offsets {
                positions: vec![position(placed, varying::OFFSET_AND_SIZE)],
                offsets: vec![4096, 0],
                sizes: vec![1500, 2048],
            }]
        );
        // Two words a repetition: room for three; an unknown kind: damage.
        assert!(records(&record(placed, varying::OFFSET_AND_SIZE, &[0; 6], 4)).is_err());
        assert!(records(&record(placed, 3, &[0; 6], 1)).is_err());
    }

    proptest::proptest! {
        #[test]
        fn damaged_offsets_records_never_panic(
            count in 0u64..12,
            period in 0u64..6,
            extra in 0u32..6,
            varyings in proptest::collection::vec(0u32..5, 6),
            words in 0usize..40,
            cut in 0usize..12,
        ) {
            // Heads, kinds, periods and lengths that disagree: an error or a record whose
            // lists hold what its count says, never a panic.
            let mut body = Vec::new();
            body.extend_from_slice(&count.to_le_bytes());
            body.extend_from_slice(&period.to_le_bytes());
            for varying in varyings.iter().take(extra as usize) {
                body.extend_from_slice(&7u32.to_le_bytes());
                body.extend_from_slice(&varying.to_le_bytes());
                body.extend_from_slice(&[0u8; RAW_EVENT_BYTES + RAW_RUN_BYTES]);
            }
            for word in 0..words as u64 {
                body.extend_from_slice(&word.to_le_bytes());
            }
            body.truncate(body.len().saturating_sub(cut * 4));
            let mut chunk = vec![0u8; CHUNK_HEADER_BYTES + RECORD_HEADER_BYTES + body.len() + 8];
            let at = CHUNK_HEADER_BYTES;
            chunk[at..at + 4].copy_from_slice(&record_word(kind::OFFSETS, body.len()).to_le_bytes());
            chunk[at + 4..at + 8].copy_from_slice(&extra.to_le_bytes());
            chunk[at + 8..at + 8 + body.len()].copy_from_slice(&body);
            if let Ok(records) = records(&chunk) {
                for record in records {
                    if let Record::Offsets { positions, offsets, sizes } = record {
                        proptest::prop_assert_eq!(positions.len() as u32, extra);
                        proptest::prop_assert_eq!(offsets.len() as u64, count);
                        proptest::prop_assert!(sizes.is_empty() || sizes.len() as u64 == count);
                    }
                }
            }
        }
    }

    #[test]
    fn block_records_read_back_as_the_tracer_lays_them_out() {
        // A head (count, period) and a run per position, as `repr(C)` structs in memory.
        let positions: Vec<RawRun> = (0..3)
            .map(|index| RawRun {
                count: 7,
                stride: 64 * index,
                last_end: 1000 + index as u64,
                histogram: [7, 0, 0, 0, 0, 0, 0, 0],
                ..RawRun::default()
            })
            .collect();
        let mut body = Vec::new();
        body.extend_from_slice(&7u64.to_le_bytes());
        body.extend_from_slice(&3u64.to_le_bytes());
        for position in &positions {
            body.extend_from_slice(&raw_run_bytes(position));
        }
        assert_eq!(body.len(), RAW_BLOCK_BYTES + 3 * RAW_RUN_BYTES);
        let mut chunk = vec![0u8; CHUNK_HEADER_BYTES + RECORD_HEADER_BYTES + body.len() + 8];
        let at = CHUNK_HEADER_BYTES;
        chunk[at..at + 4].copy_from_slice(&record_word(kind::BLOCK, body.len()).to_le_bytes());
        chunk[at + 4..at + 8].copy_from_slice(&3u32.to_le_bytes());
        chunk[at + 8..at + 8 + body.len()].copy_from_slice(&body);
        assert_eq!(
            records(&chunk).unwrap(),
            vec![Record::Block {
                count: 7,
                positions: positions.clone()
            }]
        );
        // A period the head does not repeat, one out of range, or a body of another size
        // is damage.
        chunk[at + 4..at + 8].copy_from_slice(&2u32.to_le_bytes());
        assert!(records(&chunk).is_err());
        chunk[at + 4..at + 8].copy_from_slice(&(MAX_BLOCK_PERIOD as u32 + 1).to_le_bytes());
        assert!(records(&chunk).is_err());
        chunk[at + 4..at + 8].copy_from_slice(&3u32.to_le_bytes());
        chunk[at..at + 4].copy_from_slice(&record_word(kind::BLOCK, 16 + 2 * 136).to_le_bytes());
        assert!(records(&chunk).is_err());
    }

    #[test]
    fn last_repetitions_are_the_newest_in_order() {
        // 4 repetitions of a body of 3: the last 5 events are repetition 2's last two
        // positions and repetition 3 whole.
        let last: Vec<(u64, usize)> = last_repetitions(4, 3, 5).collect();
        assert_eq!(last, vec![(2, 1), (2, 2), (3, 0), (3, 1), (3, 2)]);
        assert_eq!(last_repetitions(2, 3, 100).count(), 6);
        assert_eq!(last_repetitions(0, 3, 5).count(), 0);
        assert_eq!(last_repetitions(u64::MAX, 256, 512).count(), 512);
    }

    #[test]
    fn records_stop_at_empty_slot_and_reject_overruns() {
        let mut chunk = vec![0u8; 256];
        chunk[..CHUNK_HEADER_BYTES].copy_from_slice(&encode_chunk_header(ChunkHeader {
            thread: 3,
            sequence: 0,
            clock: 5,
            monotonic: 6,
        }));
        let body = [1u8, 0, 0, 0, 4, 0, 0, 0, b'/', b'a', b'b', b'c'];
        let at = CHUNK_HEADER_BYTES;
        chunk[at..at + 4].copy_from_slice(&record_word(kind::PATH, body.len()).to_le_bytes());
        chunk[at + 4..at + 8].copy_from_slice(&5u32.to_le_bytes());
        chunk[at + 8..at + 8 + body.len()].copy_from_slice(&body);
        let parsed = records(&chunk).unwrap();
        assert_eq!(
            parsed,
            vec![Record::Path {
                file: 5,
                origin: 1,
                path: b"/abc"
            }]
        );
        let next = at + 8 + padded(body.len());
        chunk[next..next + 4].copy_from_slice(&record_word(kind::MESSAGE, 10_000).to_le_bytes());
        assert!(records(&chunk).is_err());
    }
}

//! Per-thread recording into the process's staging segment.
//!
//! Each thread owns one chunk of the segment file at a time, mapped `MAP_SHARED`: records
//! written there are in the page cache at once, so they survive `_exit`, a crash, `SIGKILL`
//! and `exec` without any flush. The hot path is: one thread-local access (the [`Slot`]),
//! a bounds check, a 72-byte copy and one release store — for an event written as a record,
//! also a copy into the recent events and a comparison per block period; for an event
//! folded into a run or block, a comparison with what it repeats and a few sums. Memory per
//! thread is one chunk ([`CHUNK_BYTES`]) and about 90 KiB of folding state (the recent
//! events and the open block's body, on the heap; about 340 KiB for a thread that met a
//! loop longer than 256 calls, see [`Bodies`]); full chunks are unmapped and stay in the
//! file.
//!
//! Folding starts here: from the third occurrence, a call that repeats the thread's
//! previous one (same call and values, offsets moving by a constant stride) is added to a
//! run record in place — its count, timing statistics and end; the record (136 bytes, less
//! than two events) repeats the event record before it — instead of writing another
//! record, so a loop of one call does not grow the staging file (see
//! `cairn_format::segment`). A loop of 2 to 256 calls (up to 1,024 once the thread meets
//! such a loop) folds the same way into a block record
//! once its body has been seen twice (same calls and values, each offset moving by its own
//! constant stride; opening a file by name and closing it may be in the body): the record
//! counts whole repetitions of the last event records and keeps each position's
//! statistics. Definitions (paths, contexts, modules), which a loop's first iteration
//! writes, do not interrupt a body; other records start the recent events afresh. The
//! repetition being completed waits in the thread's state until its last call (so a
//! SIGKILL loses at most 255 events of a block, 1,023 in a thread whose bodies grew). A run or
//! a block inside a body counts as its events (the body of a seek, four reads and a write
//! folds; so does a loop of nine such iterations and a burst of appends): periods of 2 to
//! 16 are found at every event record by a streak per period; longer ones, up to
//! [`MAX_BLOCK_PERIOD`] events with inner loops flattened, from where a pair of
//! consecutive events (a loop's way in or out) last occurred — one table look-up per event
//! record, and a scan of the recent events only when that distance is new. A long body
//! made mostly of a run's repetitions (a step of n writes and an fstat, n changing from
//! step to step) is left to its runs: as a block it would break at the next n. Bodies
//! longer than that fold when the trace is built. What no stride describes — a call, or a body of
//! up to 4 calls, repeating at irregular offsets (random reads, IOR's `-z`) — goes to
//! offsets records, 8 bytes a repetition (`irregular.rs`); so does a read or write whose
//! sizes keep being new (compressed blocks), 8 or 16 bytes a call with its offset. Below
//! precision 100, a time step whose calls repeat with a size, a result or an inner loop's
//! count that changes (a jittering message, a solver's iterations) goes to steps records,
//! a word per changing item and step (`steps.rs`).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use cairn_format::segment::{
    self, encode_chunk_header, last_repetitions, record_word, ChunkHeader, RawBlock, RawEvent,
    RawRun, RawSpread, CHUNK_BYTES, CHUNK_HEADER_BYTES, HEADER_BYTES, MAX_BLOCK_PERIOD,
    MAX_OFFSETS_PERIOD, RAW_BLOCK_BYTES, RAW_EVENT_BYTES, RAW_RUN_BYTES, RECORD_HEADER_BYTES,
};
use cairn_model::{IrregularSteps, WanderingSizes};

mod irregular;
pub mod steps;

use crate::context::CONTEXT_CACHE_SIZE;
use crate::header_page;
use crate::spin::SpinLock;
use crate::sys::{self, PathBuffer};

/// What the tracer knows about the current process image's staging file.
pub struct Segment {
    pub path: PathBuffer,
    next_chunk: u64,
    reserved_until: u64,
}

pub static SEGMENT: SpinLock<Option<Segment>> = SpinLock::new(None);

/// Set once the staging file could not grow: no chunk is asked for again, each call that
/// needs room is counted instead (see `header_page::count_unrecorded`).
static STAGING_FULL: AtomicBool = AtomicBool::new(false);

/// Whether repeated calls fold into run records (`CAIRN_RUNS=0` turns it off, to compare
/// traces built both ways).
pub static RUNS: AtomicBool = AtomicBool::new(true);

/// Bumped in a forked child, so thread states inherited from the parent are never reused.
pub static GENERATION: AtomicU32 = AtomicU32::new(0);

pub struct ThreadState {
    chunk: *mut u8,
    cursor: usize,
    /// The chunk's records before this offset are no longer mapped into memory (they are
    /// in the file): see [`ThreadState::release_written`].
    released: usize,
    /// When the cursor passes this, the records written since `released` are released.
    next_release: usize,
    sequence: u32,
    tid: u32,
    generation: u32,
    pub stack_low: usize,
    pub stack_high: usize,
    /// MPI-IO calls this thread is inside (their POSIX sub-calls are marked).
    pub mpiio_depth: u32,
    /// Library-layer calls (HDF5...) this thread is inside (their sub-calls are marked).
    pub library_depth: u32,
    /// The layer of the outermost library call this thread is inside (`Layer as u8`): a
    /// call of the same layer inside it is the library calling its own API, one of another
    /// layer is a library it builds on (NetCDF-4's `H5Dwrite`).
    pub library_layer: u8,
    /// Direct-mapped cache from stack hash to context id (see `context`).
    pub context_cache: [(u64, u32); CONTEXT_CACHE_SIZE],
    /// The working directory as `getcwd` gave it, and the count of changes it was taken
    /// at (0: none taken; see `files::working_directory`).
    pub working_directory: (u64, PathBuffer),
    /// The thread's last event and its call (`NO_CALL` if none), for runs.
    previous: RawEvent,
    previous_call: u32,
    /// The run record the last event went into, in the current chunk (null if none).
    run: *mut RawRun,
    /// The offset step from the event before the last to the last, when the last repeated
    /// it: a third occurrence with the same step starts a run.
    candidate_stride: Option<i64>,
    /// Where the next remembered event goes in [`History::recent`], how many the thread
    /// remembered, and how many it had at its last record of another kind (or a run the
    /// tracer left unfinished in a full chunk): a block's body lies after that.
    recent_next: usize,
    remembered: u64,
    window_start: u64,
    /// Per short period p: how many of the latest events have the signature of the one p
    /// before.
    streaks: [u16; SHORT_PERIODS + 1],
    /// The long period being followed (0 if none) and how many of the latest events have
    /// the signature of the one that far before.
    long_period: usize,
    long_streak: usize,
    /// Whether the long streak reaches back to the window's start: where the loop began
    /// is then unknown (the window was cut short: the bodies grew, or a streak outlived
    /// two periods of the ring), and a block may start at any event that repeats.
    long_unanchored: bool,
    /// Event records at the end of what the thread staged, with no other record after them.
    plain_events: usize,
    /// The last block started: how many events had been remembered then, its period and
    /// its first event's signature. A block like it starting a whole number of its periods
    /// later (a row of strided streams folded as a short block, row after row) makes that
    /// distance the long period followed, so the rows fold as one block.
    last_block: (u64, usize, u64),
    /// Signatures of events that never fold (each different from any other).
    unique: u64,
    /// Events the thread wrote (folded or not), counting this one, and where the block
    /// that closed last started and ended in that count, with its period: whether a short
    /// body's sizes were seen contiguously (`irregular.rs`).
    events_seen: u64,
    block_started_at: u64,
    /// The same for the run open now (a block of one call, for the sizes' rule).
    run_started_at: u64,
    closed_block: (usize, u64, u64),
    /// The open block: its record in the current chunk (null if none), its period (0 if
    /// none) and how many events of the repetition being completed it holds (the rest of
    /// it is in [`History`]).
    block: *mut u8,
    block_period: usize,
    block_filled: usize,
    /// Irregular offsets (`irregular.rs`): the period of the body repeating with its first
    /// position at irregular offsets (0 if none), how many positions of the repetition
    /// being completed wait in [`History::irregular_pending`], the open offsets record
    /// (null until a repetition completes, and once one is full), how many offsets it has
    /// room for, and how many such records this stretch has written (each has more room).
    irregular_period: usize,
    irregular_filled: usize,
    /// What the stretch's first position changes each repetition (`segment::varying`:
    /// its offset, or its size — a transfer whose sizes keep being new — with or without
    /// its offset).
    irregular_varying: u32,
    offsets: *mut u8,
    offsets_room: usize,
    offsets_records: u32,
    /// Steps (`steps.rs`, at a precision level below 100): items followed since the last
    /// stretch, the stretch's period in items (0 if none), the body's item in progress and
    /// its calls so far, the open steps record (null if none), the body item it starts
    /// with, its room and used words, and how many records the stretch has written.
    items_seen: usize,
    steps_period: usize,
    steps_item: usize,
    steps_calls: u64,
    steps_record: *mut u8,
    steps_first: usize,
    steps_room: usize,
    steps_used: usize,
    steps_records: u32,
    history: Box<History>,
    bodies: Bodies,
    /// The longest body the thread folds now ([`BASE_PERIOD`] or [`MAX_BLOCK_PERIOD`]),
    /// and its ring's length less one.
    max_period: usize,
    ring_mask: usize,
}

/// The recent events and the open block's body, sized for the longest body the thread
/// folds: [`BASE_PERIOD`] events at first (about 70 KiB), [`MAX_BLOCK_PERIOD`] once the
/// thread meets a loop longer than that (about 290 KiB; at most [`LONG_THREADS`] threads
/// of a process at a time), so a CG iteration of a process grid's interior rank (564 calls
/// at 16 ranks of real HPCG, 861 at 27) folds as it runs while hundreds of threads stay
/// within the memory budget.
struct Bodies {
    /// The events last remembered (of event records, and the repetitions of run and
    /// block records), newest at `recent_next - 1` (a ring of two bodies of the longest
    /// period, a power of two): their calls, values and signatures, for blocks.
    recent: Box<[RawEvent]>,
    recent_calls: Box<[u32]>,
    recent_signatures: Box<[u64]>,
    /// Whether the event is a repetition a run record added (not an event record).
    recent_in_run: Box<[bool]>,
    /// Per position of the open block: the call, the event as last repeated, the stride,
    /// and the repetition being completed: (start, duration, gap).
    block_calls: Box<[u32]>,
    block_body: Box<[RawEvent]>,
    block_strides: Box<[i64]>,
    block_pending: Box<[(u64, u64, u64)]>,
    /// Per file of a candidate body: the stride its accesses at explicit offsets move by
    /// (an open-addressing table, for checking that they move together; a body of p
    /// events uses the first 2p rounded up to a power of two).
    file_keys: Box<[(u64, u64)]>,
    file_strides: Box<[i64]>,
}

impl Bodies {
    fn new(period: usize) -> Bodies {
        let ring = 2 * period;
        Bodies {
            recent: vec![RawEvent::default(); ring].into_boxed_slice(),
            recent_calls: vec![0; ring].into_boxed_slice(),
            recent_signatures: vec![0; ring].into_boxed_slice(),
            recent_in_run: vec![false; ring].into_boxed_slice(),
            block_calls: vec![0; period].into_boxed_slice(),
            block_body: vec![RawEvent::default(); period].into_boxed_slice(),
            block_strides: vec![0; period].into_boxed_slice(),
            block_pending: vec![(0, 0, 0); period].into_boxed_slice(),
            file_keys: vec![(0, 0); ring].into_boxed_slice(),
            file_strides: vec![0; ring].into_boxed_slice(),
        }
    }
}

/// The rest of a thread's folding state, on the heap (about 25 KiB: a thread with a small
/// stack never holds it there).
struct History {
    /// Per hashed pair of consecutive signatures: the number (counting from 1, as
    /// `remembered`) of the event that last ended such a pair (0 = none).
    pairs: [u64; PAIR_SLOTS],
    /// The steps of the thread's current chain of repetitions (the same call and values at
    /// other offsets): whether they are irregular, by the trace builder's rule.
    steps: IrregularSteps,
    /// The same for the first position of a short body repeating (a seek, then the
    /// transfer at the position), and the site they are of: (call, context, period).
    body_steps: IrregularSteps,
    body_steps_site: (u32, u32, u32),
    /// The sizes of the thread's current chain of transfers repeating with other sizes
    /// (the same call and values otherwise, each moving all it asked for): whether they
    /// wander, by the trace builder's rule for putting sizes in its column.
    sizes: WanderingSizes,
    /// The same for the first position of a short body repeating (a transfer with sizes of
    /// its own, then calls unchanged), and the site they are of: (call, context, period).
    body_sizes: WanderingSizes,
    body_sizes_site: (u32, u32, u32),
    /// `events_seen` at the last size `sizes` and `body_sizes` took, and the repetitions
    /// of the call or body each has seen contiguously since it started afresh.
    sizes_at: u64,
    sizes_repeated: u64,
    body_sizes_at: u64,
    body_sizes_repeated: u64,
    /// The irregular body: per position its call and event (the first position's as last
    /// repeated), and the repetition being completed: (start, duration, gap).
    irregular_body: [(u32, RawEvent); MAX_OFFSETS_PERIOD],
    irregular_pending: [(u64, u64, u64); MAX_OFFSETS_PERIOD],
    /// Steps: the last items (a ring), the item in progress, and the stretch's body.
    item_ring: [steps::Item; steps::ITEM_RING],
    current_item: steps::Item,
    steps_body: [steps::Item; segment::MAX_STEPS_PERIOD],
}

const NO_CALL: u32 = u32::MAX;
/// How much of its chunk a thread's written records may keep resident before they are
/// released ([`ThreadState::release_written`]), once more than [`RELEASE_ABOVE_THREADS`]
/// threads hold chunks (fewer threads keep their whole chunk: releasing costs a system
/// call per 64 KiB of records, about 10 ns per record staged).
const RELEASE_BYTES: usize = 64 * 1024;
const RELEASE_ABOVE_THREADS: usize = 32;
/// Threads of this process holding a chunk.
static THREADS_WITH_CHUNKS: AtomicUsize = AtomicUsize::new(0);
/// Most threads that may hold recording state at once, so that a process stays within
/// its 64 MiB whatever it does: at worst 32 threads keep whole chunks (353 KiB each with
/// their folding state), the others at most 68 KiB of chunk and 97 KiB of state, and the
/// path, context and descriptor tables take under 19 MiB: 11 + 208 × 0.161 + 19 < 64 MiB
/// (busy threads measured about 120 KiB). A thread whose bodies grew to fold a longer
/// loop (about 250 KiB more, [`Bodies`]) counts as three. The calls of threads beyond it are let through
/// untraced and counted, as Darshan marks a log partial when its memory runs out, and the
/// trace says so.
pub const MAX_THREAD_STATES: usize = 240;
static THREAD_STATES: AtomicUsize = AtomicUsize::new(0);
/// Calls of threads refused state because [`MAX_THREAD_STATES`] threads held one.
static REFUSED_CALLS: AtomicU64 = AtomicU64::new(0);

/// In a forked child: only the forking thread is left.
pub fn counts_after_fork_in_child() {
    THREAD_STATES.store(1, Ordering::Relaxed);
    THREADS_WITH_CHUNKS.store(0, Ordering::Relaxed);
    LONG_BODIES.store(0, Ordering::Relaxed);
}

/// Writes, once, how many calls threads beyond [`MAX_THREAD_STATES`] made untraced.
pub fn note_refused_calls(state: &mut ThreadState) {
    let calls = REFUSED_CALLS.swap(0, Ordering::Relaxed);
    if calls > 0 {
        let text = format!(
            "{calls} calls of threads beyond the {MAX_THREAD_STATES} recording at once were counted, not traced (the tracer's memory budget)"
        );
        state.write_record(segment::kind::MESSAGE, 0, &[text.as_bytes()]);
    }
}

/// Where a chunk's written records are next released: `RELEASE_BYTES` on from `cursor`
/// when many threads hold chunks, never otherwise.
fn next_release_after(cursor: usize) -> usize {
    if THREADS_WITH_CHUNKS.load(Ordering::Relaxed) > RELEASE_ABOVE_THREADS {
        cursor + RELEASE_BYTES
    } else {
        usize::MAX
    }
}
/// Periods found by a streak per period, at every event record.
const SHORT_PERIODS: usize = 16;
/// The longest body a thread folds until it meets a longer loop.
const BASE_PERIOD: usize = 256;
/// Threads of a process whose bodies may grow to [`MAX_BLOCK_PERIOD`] at a time, and how
/// many have.
const LONG_THREADS: usize = 16;
static LONG_BODIES: AtomicUsize = AtomicUsize::new(0);
const PAIR_SLOTS: usize = 1024;

/// How an event may fold in the tracer ([`ThreadState::write_event`]).
pub mod fold {
    /// Duplicating, mapping, renaming, `fdopen`, MPI-IO opens: the trace builder tracks each.
    pub const NEVER: u8 = 0;
    /// May repeat in a run or a block.
    pub const REPEATABLE: u8 = 1;
    /// A read or write: may repeat in a run or a block, and with sizes of its own in an
    /// offsets record (the trace builder puts such sizes in its column).
    pub const TRANSFER: u8 = 2;
}

/// What must be equal for two events to be repetitions (offsets and times aside).
#[inline(always)]
fn signature(call: u32, event: &RawEvent) -> u64 {
    let mix = |hash: u64, value: u64| (hash ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut hash = mix(call as u64, event.handle);
    hash = mix(hash, event.request);
    hash = mix(hash, event.result as u64);
    hash = mix(hash, event.aux);
    hash = mix(hash, (event.file as u64) << 32 | event.context as u64);
    hash = mix(hash, (event.errno as u32 as u64) << 32 | event.flags as u64);
    mix(hash, (event.offset < 0) as u64)
}

/// The offset step from `previous` to `next` (already found to be the same call) if `next`
/// repeats it: every value equal but the times, and the offsets both explicit or both at the
/// descriptor's position (step 0). Events that repeat their predecessors with one step get
/// the same key when the trace is built.
#[inline(always)]
fn repeats(previous: &RawEvent, next: &RawEvent) -> Option<i64> {
    let same = previous.handle == next.handle
        && previous.request == next.request
        && previous.result == next.result
        && previous.aux == next.aux
        && previous.file == next.file
        && previous.context == next.context
        && previous.errno == next.errno
        && previous.flags == next.flags;
    match (same, previous.offset < 0, next.offset < 0) {
        (true, true, true) => Some(0),
        (true, false, false) => Some(next.offset.wrapping_sub(previous.offset)),
        _ => None,
    }
}

/// Whether `next` repeats `previous` (already found to be the same call) but for its size:
/// every other value equal, the offsets both explicit or both at the descriptor's
/// position, and each moving all it asked for (so one number, the size, is what changed).
#[inline(always)]
fn resized(previous: &RawEvent, next: &RawEvent) -> bool {
    let whole = |event: &RawEvent| event.result >= 0 && event.result as u64 == event.request;
    previous.handle == next.handle
        && previous.aux == next.aux
        && previous.file == next.file
        && previous.context == next.context
        && previous.errno == next.errno
        && previous.flags == next.flags
        && (previous.offset < 0) == (next.offset < 0)
        && whole(previous)
        && whole(next)
}

/// Adds one value to running statistics (sums shifted by the first value: two multiply-adds,
/// no division).
#[inline(always)]
fn add_to(spread: &mut RawSpread, count_before: u64, value: u64) {
    if count_before == 0 {
        spread.min = value;
        spread.shift = value;
    }
    spread.min = spread.min.min(value);
    spread.max = spread.max.max(value);
    let shifted = value as f64 - spread.shift as f64;
    spread.sum += shifted;
    spread.squares += shifted * shifted;
}

/// Adds one repetition to a run.
#[inline(always)]
fn add_repetition(run: &mut RawRun, count_before: u64, duration: u64, gap: u64) {
    add_to(&mut run.duration, count_before, duration);
    run.histogram[crate::clock::histogram_bin(duration)] += 1;
    add_to(&mut run.gap, count_before, gap);
}

/// The thread-local part: a re-entry flag and the thread's state. `const`-initialised and
/// without `Drop`, so access is one `__tls_get_addr` and never fails during thread exit.
pub struct Slot {
    busy: Cell<bool>,
    state: Cell<*mut ThreadState>,
}

thread_local! {
    static SLOT: Slot = const { Slot { busy: Cell::new(false), state: Cell::new(std::ptr::null_mut()) } };
}

impl Segment {
    pub fn create(path: PathBuffer, header: &[u8]) -> Option<Segment> {
        let fd = sys::open(
            &path,
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o600,
        )
        .ok()?;
        let header_ok =
            header.len() as u64 <= segment::UNTRACED_COUNTER_OFFSET && sys::pwrite(fd, header, 0);
        // The page holding the untraced-calls counter stays mapped for the image's life.
        let counter_page = if header_ok {
            sys::allocate(fd, 0, HEADER_BYTES)
                .ok()
                .or_else(|| sys::ftruncate(fd, HEADER_BYTES).ok())
                .and_then(|()| sys::map_shared(fd, segment::UNTRACED_COUNTER_OFFSET, 4096))
        } else {
            None
        };
        sys::close(fd);
        header_page::install(counter_page.unwrap_or(std::ptr::null_mut()));
        header_page::sample_kernel_io(true);
        header_ok.then_some(Segment {
            path,
            next_chunk: 0,
            reserved_until: HEADER_BYTES,
        })
    }

    /// Maps the next free chunk of the file; the error number if the file cannot grow.
    fn map_next_chunk(&mut self) -> Result<*mut u8, i32> {
        let offset = HEADER_BYTES + self.next_chunk * CHUNK_BYTES;
        // Opened per chunk and closed at once: a long-lived descriptor could be closed or
        // reused by the program (daemons close every descriptor).
        let fd = sys::open(&self.path, libc::O_RDWR | libc::O_CLOEXEC, 0)?;
        let end = offset + CHUNK_BYTES;
        let mut grown = Ok(());
        if end > self.reserved_until {
            grown = match sys::allocate(fd, offset, CHUNK_BYTES) {
                Err(libc::EOPNOTSUPP) | Err(libc::ENOSYS) => {
                    if sys::fstat_size(fd).is_some_and(|size| size >= end) {
                        Ok(())
                    } else {
                        sys::ftruncate(fd, end)
                    }
                }
                other => other,
            };
        }
        let mapping = grown
            .and_then(|()| sys::map_shared(fd, offset, CHUNK_BYTES as usize).ok_or(libc::ENOMEM));
        sys::close(fd);
        let mapping = mapping?;
        self.reserved_until = self.reserved_until.max(end);
        self.next_chunk += 1;
        header_page::sample_kernel_io(false);
        Ok(mapping)
    }
}

impl ThreadState {
    fn create() -> *mut ThreadState {
        let (stack_low, stack_high) = crate::context::stack_bounds();
        let state = Box::new(ThreadState {
            chunk: std::ptr::null_mut(),
            cursor: 0,
            released: 0,
            next_release: 0,
            sequence: 0,
            tid: sys::gettid(),
            generation: GENERATION.load(Ordering::Relaxed),
            stack_low,
            stack_high,
            mpiio_depth: 0,
            library_depth: 0,
            library_layer: 0,
            context_cache: [(0, 0); CONTEXT_CACHE_SIZE],
            working_directory: (0, PathBuffer::new()),
            previous: RawEvent::default(),
            previous_call: NO_CALL,
            run: std::ptr::null_mut(),
            candidate_stride: None,
            recent_next: 0,
            remembered: 0,
            window_start: 0,
            streaks: [0; SHORT_PERIODS + 1],
            long_period: 0,
            long_streak: 0,
            long_unanchored: false,
            plain_events: 0,
            last_block: (0, 0, 0),
            unique: 0,
            events_seen: 0,
            block_started_at: 0,
            run_started_at: 0,
            closed_block: (0, 0, 0),
            block: std::ptr::null_mut(),
            block_period: 0,
            block_filled: 0,
            irregular_period: 0,
            irregular_filled: 0,
            irregular_varying: segment::varying::OFFSET,
            offsets: std::ptr::null_mut(),
            offsets_room: 0,
            offsets_records: 0,
            items_seen: 0,
            steps_period: 0,
            steps_item: 0,
            steps_calls: 0,
            steps_record: std::ptr::null_mut(),
            steps_first: 0,
            steps_room: 0,
            steps_used: 0,
            steps_records: 0,
            // SAFETY: every field of History is integers (RawEvent too), for which all
            // zeros is a value; nothing reads an entry before it is written (the window).
            history: unsafe { Box::<History>::new_zeroed().assume_init() },
            bodies: Bodies::new(BASE_PERIOD),
            max_period: BASE_PERIOD,
            ring_mask: 2 * BASE_PERIOD - 1,
        });
        let mut state = state;
        state.history.current_item = steps::Item::none();
        let state = Box::into_raw(state);
        crate::lifecycle::register_thread_exit(state.cast());
        state
    }

    /// Forgets the chunk inherited from the parent after `fork` (it belongs to the parent's
    /// file and must not be written again).
    pub fn reset_after_fork(&mut self) {
        self.chunk = std::ptr::null_mut();
        self.cursor = 0;
        self.sequence = 0;
        self.tid = sys::gettid();
        self.generation = GENERATION.load(Ordering::Relaxed);
        self.context_cache = [(0, 0); CONTEXT_CACHE_SIZE];
        self.previous_call = NO_CALL;
        self.run = std::ptr::null_mut();
        self.candidate_stride = None;
        // The parent's open block and its waiting events are the parent's.
        self.block = std::ptr::null_mut();
        self.block_period = 0;
        self.block_filled = 0;
        // So is its irregular body's waiting repetition.
        self.irregular_period = 0;
        self.irregular_filled = 0;
        self.irregular_varying = segment::varying::OFFSET;
        self.offsets = std::ptr::null_mut();
        // And its steps record.
        self.steps_period = 0;
        self.steps_record = std::ptr::null_mut();
        self.items_seen = 0;
        self.history.current_item = steps::Item::none();
        self.plain_events = 0;
        self.forget_recent();
    }

    /// Nothing remembered so far may be a block's body: after another kind of record, or
    /// where the trace builder's view of the recent events may differ from the tracer's.
    fn forget_recent(&mut self) {
        self.last_block = (0, 0, 0);
        self.streaks = [0; SHORT_PERIODS + 1];
        self.window_start = self.remembered;
        self.long_period = 0;
        self.long_streak = 0;
        self.long_unanchored = false;
    }

    /// Releases the thread's chunk at thread exit.
    pub fn release(&mut self) {
        if self.generation == GENERATION.load(Ordering::Relaxed) {
            self.close_block();
            self.end_irregular();
            self.end_steps();
        }
        if !self.chunk.is_null() && self.generation == GENERATION.load(Ordering::Relaxed) {
            sys::unmap(self.chunk, CHUNK_BYTES as usize);
            THREADS_WITH_CHUNKS.fetch_sub(1, Ordering::Relaxed);
        }
        self.chunk = std::ptr::null_mut();
    }

    fn next_chunk(&mut self) -> bool {
        if STAGING_FULL.load(Ordering::Relaxed) {
            return false;
        }
        // The open run stays in the chunk being left (an open block never does: it is
        // closed before anything else is written); its count will not be read again, so
        // blocks start afresh.
        if !self.run.is_null() {
            self.plain_events = 0;
            self.forget_recent();
        }
        self.run = std::ptr::null_mut();
        // Never open here (it is closed before another record is written); kept safe.
        self.offsets = std::ptr::null_mut();
        self.steps_record = std::ptr::null_mut();
        if !self.chunk.is_null() {
            sys::unmap(self.chunk, CHUNK_BYTES as usize);
            self.chunk = std::ptr::null_mut();
        } else {
            THREADS_WITH_CHUNKS.fetch_add(1, Ordering::Relaxed);
        }
        let mapping = SEGMENT.with(|segment| {
            segment
                .as_mut()
                .map_or(Err(libc::ENOENT), Segment::map_next_chunk)
        });
        let mapping = match mapping {
            Ok(mapping) => mapping,
            // The staging file cannot grow (a full file system, a quota): tracing goes on
            // counting the calls it cannot record, in the header page, which also keeps
            // the image's end; nothing is retried.
            Err(errno) if header_page::available() => {
                header_page::note_unrecorded(errno, crate::clock::now());
                STAGING_FULL.store(true, Ordering::Release);
                return false;
            }
            Err(_) => {
                crate::lifecycle::disable();
                return false;
            }
        };
        // A thread's first chunk is faulted page by page: most threads (a pool's workers, a
        // runtime's helpers) write a few records and end, and read-ahead made each one's
        // start cost the page cache 32 pages (160 short threads: 250 µs each). A thread
        // that moves on to a second chunk is a busy one, for which read-ahead batches its
        // faults.
        if self.sequence == 0 {
            sys::advise_no_readahead(mapping, CHUNK_BYTES as usize);
        }
        let header = encode_chunk_header(ChunkHeader {
            thread: self.tid,
            sequence: self.sequence,
            clock: crate::clock::now(),
            monotonic: crate::clock::monotonic(),
        });
        // SAFETY: the mapping is CHUNK_BYTES long and ours alone.
        unsafe { std::ptr::copy_nonoverlapping(header.as_ptr(), mapping, CHUNK_HEADER_BYTES) };
        self.chunk = mapping;
        self.cursor = CHUNK_HEADER_BYTES;
        self.released = 0;
        self.next_release = next_release_after(self.cursor);
        self.sequence += 1;
        true
    }

    /// Reserves room for a record with a body of `body_length` bytes; returns where the
    /// body goes. The record becomes visible only through [`ThreadState::publish`].
    #[inline(always)]
    fn reserve(&mut self, body_length: usize) -> Option<*mut u8> {
        let needed = RECORD_HEADER_BYTES + segment::padded(body_length);
        let full = self.chunk.is_null() || self.cursor + needed > CHUNK_BYTES as usize;
        if full && (needed > CHUNK_BYTES as usize - CHUNK_HEADER_BYTES || !self.next_chunk()) {
            return None;
        }
        // SAFETY: cursor + needed <= CHUNK_BYTES, checked above.
        Some(unsafe { self.chunk.add(self.cursor + RECORD_HEADER_BYTES) })
    }

    #[inline(always)]
    fn publish(&mut self, kind: u32, extra: u32, body_length: usize) {
        // SAFETY: `reserve` checked the space; the header slot is 8-aligned inside the chunk.
        unsafe {
            let header = self.chunk.add(self.cursor);
            header.add(4).cast::<u32>().write(extra);
            // The word goes last, with release ordering: a reader that sees it sees the body.
            AtomicU32::from_ptr(header.cast::<u32>())
                .store(record_word(kind, body_length), Ordering::Release);
        }
        self.cursor += RECORD_HEADER_BYTES + segment::padded(body_length);
        if self.cursor >= self.next_release {
            self.release_written();
        }
    }

    /// Stops keeping the chunk's written pages in memory, but for the page of an open run
    /// or block (updated in place): with many threads, one that records events one by one
    /// holds at most [`RELEASE_BYTES`] of its chunk resident instead of the whole chunk, so
    /// hundreds of such threads stay within the memory budget.
    #[cold]
    fn release_written(&mut self) {
        self.next_release = next_release_after(self.cursor);
        let page = sys::page_size();
        let mut end = self.cursor & !(page - 1);
        for open in [
            self.run.cast::<u8>(),
            self.block,
            self.offsets,
            self.steps_record,
        ] {
            if !open.is_null() {
                end = end.min((open as usize - self.chunk as usize) & !(page - 1));
            }
        }
        if end > self.released {
            // SAFETY: [released, end) lies inside the chunk, page-aligned (the chunk is).
            sys::release_pages(
                unsafe { self.chunk.add(self.released) },
                end - self.released,
            );
            self.released = end;
        }
    }

    /// Writes an event, or adds it to a run when it repeats its predecessor, or to a block
    /// when it continues a repeated sequence, as `folding` allows ([`fold`]). A run starts at
    /// the third occurrence, once two steps agree: same-sized accesses at scattered offsets
    /// never start one; a block likewise at the first event of the third repetition.
    #[inline(always)]
    pub fn write_event(&mut self, call: u32, event: &RawEvent, folding: u8) {
        let repeatable = folding != fold::NEVER && RUNS.load(Ordering::Relaxed);
        self.events_seen = self.events_seen.wrapping_add(1);
        let previous_end = self.previous.start.saturating_add(self.previous.duration);
        let gap = event.start.saturating_sub(previous_end);
        if self.block_period > 0 {
            if repeatable && self.block_takes(call, event, gap) {
                self.previous = *event;
                self.previous_call = call;
                return;
            }
            self.close_block();
        }
        if self.irregular_period > 0 {
            // At irregular offsets the body goes on in offsets records until its values
            // change or its steps turn regular (`IrregularSteps`).
            if repeatable && self.irregular_takes(call, event, gap) {
                self.previous = *event;
                self.previous_call = call;
                return;
            }
            self.end_irregular();
        }
        if self.steps_period > 0 {
            // A step's calls go on in the steps record until one fits neither its item
            // nor the next.
            if repeatable && self.steps_takes(call, event, gap) {
                self.previous = *event;
                self.previous_call = call;
                return;
            }
            self.end_steps();
        }
        let steps_period = if steps::STEPS.load(Ordering::Relaxed) {
            self.track_item(call, event, repeatable)
        } else {
            0
        };
        let run = self.run;
        let step = if repeatable && call == self.previous_call {
            repeats(&self.previous, event)
        } else {
            None
        };
        let other_size = step.is_none()
            && folding == fold::TRANSFER
            && repeatable
            && call == self.previous_call
            && resized(&self.previous, event);
        self.previous = *event;
        self.previous_call = call;
        let candidate = std::mem::replace(&mut self.candidate_stride, step);
        if let Some(step) = step {
            if !run.is_null() {
                // SAFETY: an open run is a record of the current chunk, written by this
                // thread; the count is stored last, so a reader (after a crash) sees at most
                // one occurrence's statistics without its count.
                unsafe {
                    let run = &mut *run;
                    // A run ends before a histogram bin could overflow.
                    if run.stride == step && run.count < u32::MAX as u64 {
                        let count = run.count;
                        add_repetition(run, count, event.duration, gap);
                        run.last_end = event.start.saturating_add(event.duration);
                        std::ptr::write_volatile(&mut run.count, count + 1);
                        return;
                    }
                }
            } else if candidate == Some(step) {
                // The third occurrence: the previous event record (the second) repeats.
                let mut record = RawRun {
                    count: 1,
                    stride: step,
                    last_end: event.start.saturating_add(event.duration),
                    ..RawRun::default()
                };
                add_repetition(&mut record, 0, event.duration, gap);
                if let Some(body) = self.reserve(RAW_RUN_BYTES) {
                    // SAFETY: `body` has room for RAW_RUN_BYTES and is 8-aligned.
                    unsafe { body.cast::<RawRun>().write(record) };
                    self.publish(segment::kind::RUN, call, RAW_RUN_BYTES);
                    self.run = body.cast();
                    self.run_started_at = self.events_seen;
                } else {
                    header_page::count_unrecorded();
                }
                return;
            }
        }
        if !run.is_null() {
            self.remember_run(run);
            self.closed_block = (1, self.run_started_at, self.events_seen);
        }
        self.run = std::ptr::null_mut();
        match step {
            Some(step) if event.offset >= 0 => {
                if self.history.steps.step(step) {
                    self.begin_irregular(1, segment::varying::OFFSET, call, event, gap);
                    return;
                }
            }
            None => self.history.steps.reset(),
            Some(_) => {}
        }
        if other_size {
            // Sizes that keep being new (`irregular.rs`).
            if self.sizes_wander(1, event.request, false) {
                let varying = if event.offset >= 0 {
                    segment::varying::OFFSET_AND_SIZE
                } else {
                    segment::varying::SIZE
                };
                self.begin_irregular(1, varying, call, event, gap);
                return;
            }
        } else if step.is_none() {
            self.history.sizes.reset();
            self.history.sizes_repeated = 0;
        }
        let signature = if repeatable {
            signature(call, event)
        } else {
            // Never equal to another event's.
            self.unique = self.unique.wrapping_add(1);
            self.unique | 1 << 63
        };
        if repeatable && self.start_block(call, event, signature, gap) {
            return;
        }
        if repeatable && event.offset >= 0 {
            if let Some(period) = self.irregular_body_starts(call, event, signature) {
                self.begin_irregular(period, segment::varying::OFFSET, call, event, gap);
                return;
            }
        }
        if repeatable && folding == fold::TRANSFER {
            if let Some(period) = self.sized_body_starts(call, event) {
                let varying = if event.offset >= 0 {
                    segment::varying::OFFSET_AND_SIZE
                } else {
                    segment::varying::SIZE
                };
                self.begin_irregular(period, varying, call, event, gap);
                return;
            }
        }
        if steps_period > 0 && self.begin_steps(steps_period, event, gap) {
            return;
        }
        self.write_plain(call, event, signature);
    }

    /// Writes an event record and remembers it for blocks.
    #[inline(always)]
    fn write_plain(&mut self, call: u32, event: &RawEvent, signature: u64) {
        self.remember(call, event, signature);
        if let Some(body) = self.reserve(RAW_EVENT_BYTES) {
            // SAFETY: `body` has room for RAW_EVENT_BYTES and is 8-aligned.
            unsafe { body.cast::<RawEvent>().write(*event) };
            self.publish(segment::kind::EVENT, call, RAW_EVENT_BYTES);
            self.plain_events += 1;
        } else {
            header_page::count_unrecorded();
        }
    }

    /// Remembers the repetitions a run that just ended added to the event record before it
    /// (the last remembered): to blocks they are events like the others (the trace builder
    /// reads them back from the run record).
    fn remember_run(&mut self, run: *mut RawRun) {
        // SAFETY: an open run is a record of the current chunk, written by this thread.
        let (count, stride) = unsafe { ((*run).count, (*run).stride) };
        let (call, repeated) = self.recent_at(1);
        let (first, signature) = (repeated.moved(stride), self.signature_at(1));
        for (repetition, _) in last_repetitions(count, 1, self.ring_mask + 1) {
            let event = first.moved(stride.wrapping_mul(repetition as i64));
            self.remember(call, &event, signature);
            let slot = self.recent_next.wrapping_sub(1) & self.ring_mask;
            self.bodies.recent_in_run[slot] = true;
        }
        self.plain_events = self.plain_events.saturating_add(count as usize);
    }

    /// Adds an event to the recent ones and its signature to the periods' streaks.
    #[inline(always)]
    fn remember(&mut self, call: u32, event: &RawEvent, signature: u64) {
        // A streak counts only events of the window: one compared with an event from before
        // it would give the streak a start the trace builder does not see.
        let window = self.window();
        let (bodies, mask) = (&mut self.bodies, self.ring_mask);
        for period in 2..=SHORT_PERIODS {
            let before = bodies.recent_signatures[self.recent_next.wrapping_sub(period) & mask];
            self.streaks[period] = if before == signature && period <= window {
                self.streaks[period].saturating_add(1)
            } else {
                0
            };
        }
        // The pair this event makes with the one before it: in a loop that holds loops,
        // its way into an inner loop (or out of it) occurs once per repetition, so the
        // distance to the pair's last occurrence is the outer loop's period.
        let before = bodies.recent_signatures[self.recent_next.wrapping_sub(1) & mask];
        let pair = ((before.rotate_left(23) ^ signature).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54)
            as usize
            % PAIR_SLOTS;
        self.remembered += 1;
        let last = std::mem::replace(&mut self.history.pairs[pair], self.remembered);
        let slot = self.recent_next & mask;
        bodies.recent[slot] = *event;
        bodies.recent_calls[slot] = call;
        bodies.recent_signatures[slot] = signature;
        bodies.recent_in_run[slot] = false;
        self.recent_next = (slot + 1) & mask;
        if self.long_period > 0 {
            if self.signature_at(self.long_period + 1) == signature
                && self.long_streak + self.long_period < self.window()
            {
                self.long_streak += 1;
            } else {
                self.long_period = 0;
                self.long_streak = 0;
                self.long_unanchored = false;
            }
        }
        // `last` may be from before the window was last reset, or another pair's (hashed):
        // the scan checks.
        if last > self.window_start {
            let distance = (self.remembered - last) as usize;
            if distance > self.max_period && distance <= MAX_BLOCK_PERIOD {
                // A loop longer than the thread's bodies: they grow (once), and the
                // period is followed from its next recurrence, when the ring holds two.
                self.grow_bodies();
            } else if distance > SHORT_PERIODS
                && distance <= self.max_period
                && distance != self.long_period
                && (self.long_period == 0 || self.long_period.is_multiple_of(distance))
            {
                self.follow_long_period(distance);
            }
        }
    }

    /// Follows `period` instead of the long period followed so far if the latest events
    /// repeat it at least as far back as they repeat that one: its streak, counted back
    /// through the window. (A distance met by chance — a hashed pair's, or a block of two
    /// waits recurring at every exchange — must not replace the period of a loop around
    /// them that the latest events already repeat further: then the loop's block could
    /// only start where the streak it was followed with allows, and it never did.)
    #[cold]
    fn follow_long_period(&mut self, period: usize) {
        let (mut streak, window) = (0, self.window());
        while streak + period < window
            && self.signature_at(streak + 1) == self.signature_at(streak + 1 + period)
        {
            streak += 1;
        }
        if streak > 0 && (self.long_period == 0 || streak >= self.long_streak) {
            self.long_period = period;
            self.long_streak = streak;
            self.long_unanchored = streak + period >= window;
        }
    }

    /// Makes the thread's bodies [`MAX_BLOCK_PERIOD`] long, keeping the recent events and
    /// the last block's body, if fewer than [`LONG_THREADS`] threads have. The window
    /// starts no earlier than the events kept.
    #[cold]
    fn grow_bodies(&mut self) {
        if self.max_period >= MAX_BLOCK_PERIOD
            || LONG_BODIES
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |threads| {
                    (threads < LONG_THREADS).then_some(threads + 1)
                })
                .is_err()
        {
            return;
        }
        // The memory budget counts such a thread as three ([`MAX_THREAD_STATES`]).
        if THREAD_STATES
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |states| {
                (states + 2 <= MAX_THREAD_STATES).then_some(states + 2)
            })
            .is_err()
        {
            LONG_BODIES.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let old = std::mem::replace(&mut self.bodies, Bodies::new(MAX_BLOCK_PERIOD));
        let (old_mask, mask) = (self.ring_mask, 2 * MAX_BLOCK_PERIOD - 1);
        let kept = (old_mask as u64 + 1).min(self.remembered) as usize;
        let next = self.remembered as usize & mask;
        for back in 1..=kept {
            let (from, to) = (
                self.recent_next.wrapping_sub(back) & old_mask,
                next.wrapping_sub(back) & mask,
            );
            self.bodies.recent[to] = old.recent[from];
            self.bodies.recent_calls[to] = old.recent_calls[from];
            self.bodies.recent_signatures[to] = old.recent_signatures[from];
            self.bodies.recent_in_run[to] = old.recent_in_run[from];
        }
        // A block closing remembers its repetitions, which may grow the bodies before it
        // writes its unfinished repetition's events from them.
        let period = old.block_calls.len();
        self.bodies.block_calls[..period].copy_from_slice(&old.block_calls);
        self.bodies.block_body[..period].copy_from_slice(&old.block_body);
        self.bodies.block_strides[..period].copy_from_slice(&old.block_strides);
        self.bodies.block_pending[..period].copy_from_slice(&old.block_pending);
        self.recent_next = next;
        self.ring_mask = mask;
        self.max_period = MAX_BLOCK_PERIOD;
        self.window_start = self.window_start.max(self.remembered - kept as u64);
    }

    /// How many of the recent events a block's body may be taken from.
    #[inline(always)]
    fn window(&self) -> usize {
        (self.remembered - self.window_start).min(self.ring_mask as u64 + 1) as usize
    }

    /// The signature of the event `back` before the next one (1 = the last remembered).
    #[inline(always)]
    fn signature_at(&self, back: usize) -> u64 {
        self.bodies.recent_signatures[self.recent_next.wrapping_sub(back) & self.ring_mask]
    }

    /// The event `back` events before the next one (1 = the last remembered).
    fn recent_at(&self, back: usize) -> (u32, &RawEvent) {
        let slot = self.recent_next.wrapping_sub(back) & self.ring_mask;
        (self.bodies.recent_calls[slot], &self.bodies.recent[slot])
    }

    /// Whether the last two repetitions of a body of `period` events moved by a stride per
    /// position (kept in `block_strides`), which `event` continues, and positions on one
    /// file at explicit offsets by the same stride. (No block is open: the open block's
    /// strides are free to hold them.) The new event is checked first: a body that does
    /// not fit usually fails there.
    fn strides_fit(&mut self, call: u32, event: &RawEvent, period: usize) -> bool {
        let (first_call, first) = self.recent_at(2 * period);
        let (second_call, second) = self.recent_at(period);
        if first_call != second_call || second_call != call {
            return false;
        }
        match (repeats(first, second), repeats(second, event)) {
            (Some(step), Some(next)) if step == next => self.bodies.block_strides[0] = step,
            _ => return false,
        }
        for position in 1..period {
            let (first_call, first) = self.recent_at(2 * period - position);
            let (second_call, second) = self.recent_at(period - position);
            if first_call != second_call {
                return false;
            }
            let Some(step) = repeats(first, second) else {
                return false;
            };
            self.bodies.block_strides[position] = step;
        }
        self.files_move_together(period)
    }

    /// Starts a block with `event` if it begins a third repetition of the last events
    /// (the smallest short period that fits, else the long period followed): the block
    /// record repeats the last `period` events, and `event` waits as the first of its next
    /// repetition.
    fn start_block(&mut self, call: u32, event: &RawEvent, signature: u64, gap: u64) -> bool {
        // A whole number of repetitions since the streak began: the block starts where
        // the repeated body does, as folding the events one by one would have it. A short
        // body is of event records only (a block of blocks is a long one). A long streak
        // that reaches back to the window's start began where the window did, not where
        // the loop does: waiting for a whole number of its periods could wait forever (a
        // step of sixteen strided streams, 768 calls in blocks of blocks, reached the
        // period inside an inner block, and the window of two periods never lets the
        // streak reach the next multiple), so such a block starts at the first event that
        // can start it.
        let short = (2..=SHORT_PERIODS).find(|period| {
            let streak = self.streaks[*period] as usize;
            streak >= *period
                && streak.is_multiple_of(*period)
                && self.plain_events >= *period
                && self.signature_at(*period) == signature
        });
        let long = || {
            let (period, streak) = (self.long_period, self.long_streak);
            (period > 0
                && streak >= period
                && (streak.is_multiple_of(period) || self.long_unanchored)
                && self.signature_at(period) == signature)
                .then_some(period)
        };
        let mut found = None;
        if let Some(short) = short {
            // The calls may repeat with a short period while their offsets repeat only
            // with a multiple of it (sixteen strided reads in turn: the calls repeat every
            // one, the strides every sixteen). The events since the streak began are whole
            // repetitions of any multiple that divides them.
            let since = self.streaks[short] as usize + short;
            let mut period = short;
            while period <= self.max_period && 2 * period <= since {
                if since.is_multiple_of(period)
                    && self.plain_events >= period
                    && self.strides_fit(call, event, period)
                {
                    found = Some(period);
                    break;
                }
                period += short;
            }
        } else if let Some(period) = long() {
            found = self.strides_fit(call, event, period).then_some(period);
        }
        let Some(period) = found.filter(|period| !self.mostly_runs(*period)) else {
            return false;
        };
        // A block like the last one, a whole number of its periods after it: rows of a
        // longer body (sixteen strided streams, each a seek and a write, folded as a block
        // of two per row); the rows' distance is the long period to follow.
        let (last_at, last_period, last_signature) = self.last_block;
        let distance = self.remembered.saturating_sub(last_at) as usize;
        if last_period == period
            && last_signature == signature
            && distance > SHORT_PERIODS
            && distance <= self.max_period
            && distance.is_multiple_of(period)
            && distance != self.long_period
        {
            self.follow_long_period(distance);
        }
        self.last_block = (self.remembered, period, signature);
        let length = RAW_BLOCK_BYTES + period * RAW_RUN_BYTES;
        let Some(body) = self.reserve(length) else {
            return false;
        };
        // SAFETY: `body` has room for `length` bytes and is 8-aligned; the runs follow the
        // 16-byte head.
        unsafe {
            body.cast::<RawBlock>().write(RawBlock {
                count: 0,
                period: period as u64,
            });
            for (position, stride) in self.bodies.block_strides.iter().enumerate().take(period) {
                body.add(RAW_BLOCK_BYTES + position * RAW_RUN_BYTES)
                    .cast::<RawRun>()
                    .write(RawRun {
                        stride: *stride,
                        ..RawRun::default()
                    });
            }
        }
        self.publish(segment::kind::BLOCK, period as u32, length);
        for position in 0..period {
            let (call, event) = self.recent_at(period - position);
            let event = *event;
            self.bodies.block_calls[position] = call;
            self.bodies.block_body[position] = event;
        }
        self.block = body;
        self.block_period = period;
        self.block_started_at = self.events_seen;
        self.bodies.block_pending[0] = (event.start, event.duration, gap);
        self.block_filled = 1;
        self.plain_events = 0;
        self.candidate_stride = None;
        true
    }

    /// Whether more than half the last `period` events are repetitions of run records: a
    /// loop around a loop of one call (`for step { fstat; for n writes }`), whose inner
    /// count often changes from one step to the next (a particle count, a solver's
    /// iterations). As a block its body would cost a position per inner iteration and
    /// break at the first count that changes, its partial repetition then staged event by
    /// event; as runs it costs a few records a step, and the trace builder folds the steps.
    #[cold]
    fn mostly_runs(&self, period: usize) -> bool {
        period > SHORT_PERIODS
            && 2 * (1..=period)
                .filter(|back| {
                    self.bodies.recent_in_run[self.recent_next.wrapping_sub(*back) & self.ring_mask]
                })
                .count()
                > period
    }

    /// Whether, in the body of the last `period` events, accesses to one file at explicit
    /// offsets by one call, context and size move by one stride: else where each lands
    /// against the others would change from one repetition to the next (the trace keeps
    /// offsets relative to the previous access to the same file, or to the last of the
    /// same call, context and size when that one repeats: several streams of their own
    /// strides). One pass, with a table of each stream's stride.
    fn files_move_together(&mut self, period: usize) -> bool {
        const EMPTY: (u64, u64) = (0, 0);
        let slots = (2 * period)
            .next_power_of_two()
            .min(self.bodies.file_keys.len());
        self.bodies.file_keys[..slots].fill(EMPTY);
        for position in 0..period {
            let stride = self.bodies.block_strides[position];
            let (_, event) = self.recent_at(period - position);
            if event.offset < 0 {
                continue;
            }
            // Files by id, descriptors without one by handle; never (0, 0). Accesses of
            // one call, context and size are one stream of the file, which the trace
            // builder takes from its own last access (an index entry, then its record):
            // only those must move together. (A hash collision only asks more of them.)
            let (call, _) = self.recent_at(period - position);
            let own = (call as u64) << 32 ^ event.context as u64 ^ event.request.rotate_left(17);
            let key = if event.file != 0 {
                (
                    1,
                    event.file as u64 ^ own.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                )
            } else {
                (2, event.handle ^ own.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            };
            let mut slot = (key.1.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & (slots - 1);
            loop {
                let bodies = &mut self.bodies;
                if bodies.file_keys[slot] == EMPTY {
                    bodies.file_keys[slot] = key;
                    bodies.file_strides[slot] = stride;
                    break;
                }
                if bodies.file_keys[slot] == key {
                    if bodies.file_strides[slot] != stride {
                        return false;
                    }
                    break;
                }
                slot = (slot + 1) & (slots - 1);
            }
        }
        true
    }

    /// Takes `event` into the open block if it is the next of the repetition being
    /// completed; completing one adds it to the record.
    #[inline(always)]
    fn block_takes(&mut self, call: u32, event: &RawEvent, gap: u64) -> bool {
        let position = self.block_filled;
        let history = &mut self.bodies;
        if self.block.is_null()
            || call != history.block_calls[position]
            || repeats(&history.block_body[position], event)
                != Some(history.block_strides[position])
        {
            return false;
        }
        history.block_pending[position] = (event.start, event.duration, gap);
        self.block_filled += 1;
        if self.block_filled == self.block_period {
            self.complete_repetition();
        }
        true
    }

    fn complete_repetition(&mut self) {
        // SAFETY: an open block is a record of the current chunk, written by this thread,
        // with `block_period` runs after its head; the count is stored last.
        unsafe {
            let head = &mut *self.block.cast::<RawBlock>();
            let count = head.count;
            for position in 0..self.block_period {
                let run = &mut *self
                    .block
                    .add(RAW_BLOCK_BYTES + position * RAW_RUN_BYTES)
                    .cast::<RawRun>();
                let history = &mut self.bodies;
                let (start, duration, gap) = history.block_pending[position];
                add_repetition(run, count, duration, gap);
                run.last_end = start.saturating_add(duration);
                run.count = count + 1;
                history.block_body[position] =
                    history.block_body[position].moved(history.block_strides[position]);
            }
            std::ptr::write_volatile(&mut head.count, count + 1);
            self.block_filled = 0;
            // A block ends before a histogram bin could overflow.
            if count + 1 >= u32::MAX as u64 {
                self.block = std::ptr::null_mut();
            }
        }
    }

    /// Ends the open block, if any: the events of its unfinished repetition are written as
    /// event records.
    pub fn close_block(&mut self) {
        if self.block_period == 0 {
            return;
        }
        let (period, filled) = (self.block_period, self.block_filled);
        // SAFETY: an open block is a record of the current chunk, written by this thread
        // (a block whose count reached the limit is no longer open but keeps its period).
        let count = if self.block.is_null() {
            u32::MAX as u64
        } else {
            unsafe { (*self.block.cast::<RawBlock>()).count }
        };
        self.block = std::ptr::null_mut();
        self.block_period = 0;
        self.block_filled = 0;
        self.candidate_stride = None;
        self.closed_block = (period, self.block_started_at, self.events_seen);
        // Its repetitions are events like the others to a longer block around it (the
        // trace builder reads them back from the block record): the first is the body
        // as last repeated, `count - 1` strides back.
        let back = 1i64.wrapping_sub(count as i64);
        for (repetition, position) in last_repetitions(count, period, self.ring_mask + 1) {
            let history = &self.bodies;
            let stride = history.block_strides[position];
            let call = history.block_calls[position];
            let event = history.block_body[position]
                .moved(stride.wrapping_mul(back.wrapping_add(repetition as i64)));
            self.remember(call, &event, signature(call, &event));
        }
        self.streaks = [0; SHORT_PERIODS + 1];
        debug_assert!(filled < period);
        for position in 0..filled {
            let history = &self.bodies;
            let mut event = history.block_body[position].moved(history.block_strides[position]);
            (event.start, event.duration, _) = history.block_pending[position];
            let call = history.block_calls[position];
            let signature = signature(call, &event);
            self.write_plain(call, &event, signature);
        }
    }

    /// Writes a record whose body is the concatenation of `parts` (after the events an open
    /// block holds back: records keep the program's order). An open run ends. What a block
    /// repeats are event and run records with nothing else between them but definitions
    /// (paths, contexts, modules: the trace builder passes over them too), which the first
    /// iteration of every loop writes; any other record starts the recent events afresh.
    pub fn write_record(&mut self, kind: u32, extra: u32, parts: &[&[u8]]) {
        self.close_block();
        self.end_irregular();
        self.end_steps();
        let run = std::mem::replace(&mut self.run, std::ptr::null_mut());
        self.candidate_stride = None;
        let definition = matches!(
            kind,
            segment::kind::PATH | segment::kind::CONTEXT | segment::kind::MODULE
        );
        if !definition {
            self.plain_events = 0;
            self.forget_recent();
        } else if !run.is_null() {
            self.remember_run(run);
        }
        let length: usize = parts.iter().map(|part| part.len()).sum();
        if let Some(body) = self.reserve(length) {
            let mut at = 0;
            for part in parts {
                // SAFETY: the parts add up to `length`, which was reserved.
                unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), body.add(at), part.len()) };
                at += part.len();
            }
            self.publish(kind, extra, length);
        }
    }

    pub fn write_mark(&mut self, mark: u32, value: u64) {
        let time = crate::clock::now();
        self.write_record(
            segment::kind::MARK,
            mark,
            &[&time.to_le_bytes(), &value.to_le_bytes()],
        );
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        THREAD_STATES.fetch_sub(1, Ordering::Relaxed);
        if self.max_period > BASE_PERIOD {
            // Saturating: after fork the child counts afresh.
            let less = |counter: &AtomicUsize, by: usize| {
                let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |count| {
                    Some(count.saturating_sub(by))
                });
            };
            less(&LONG_BODIES, 1);
            less(&THREAD_STATES, 2);
        }
    }
}

/// An active hook on this thread: re-entry is blocked until it drops.
pub struct Scope {
    slot: *const Slot,
    state: *mut ThreadState,
}

impl Scope {
    /// Enters tracing for one call, or `None` if this call must not be traced (the tracer is
    /// off, still starting, or already inside a hook on this thread).
    #[inline(always)]
    pub fn enter() -> Option<Scope> {
        if !crate::lifecycle::is_ready() {
            return None;
        }
        let slot = SLOT.with(|slot| slot as *const Slot);
        // SAFETY: the slot lives as long as the thread; it has no destructor.
        let slot_ref = unsafe { &*slot };
        if slot_ref.busy.get() {
            header_page::count_untraced();
            return None;
        }
        slot_ref.busy.set(true);
        let mut state = slot_ref.state.get();
        // SAFETY: a non-null state pointer was made by ThreadState::create for this thread.
        if state.is_null() || unsafe { (*state).generation } != GENERATION.load(Ordering::Relaxed) {
            if !state.is_null() {
                // SAFETY: as above; an inherited state is reset, not freed (fork child).
                unsafe { (*state).reset_after_fork() };
            } else {
                if THREAD_STATES.fetch_add(1, Ordering::Relaxed) >= MAX_THREAD_STATES {
                    THREAD_STATES.fetch_sub(1, Ordering::Relaxed);
                    slot_ref.busy.set(false);
                    header_page::count_untraced();
                    REFUSED_CALLS.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
                state = ThreadState::create();
                slot_ref.state.set(state);
            }
        }
        Some(Scope { slot, state })
    }

    /// Lets hooks on this thread trace again while the real call runs: a signal handler
    /// that does I/O during a long `read` must be traced, not skipped. Safe because the
    /// tracer holds nothing of the thread's state across the real call.
    #[inline(always)]
    pub fn pause(&self) {
        // SAFETY: see Scope::enter.
        unsafe { (*self.slot).busy.set(false) };
    }

    /// Ends [`Scope::pause`] once the real call has returned.
    #[inline(always)]
    pub fn resume(&self) {
        // SAFETY: see Scope::enter.
        unsafe { (*self.slot).busy.set(true) };
    }

    /// Splits the scope into plain words for the C shim, which holds it across the call.
    pub fn into_parts(self) -> (usize, usize) {
        let parts = (self.slot as usize, self.state as usize);
        std::mem::forget(self);
        parts
    }

    /// Rebuilds a scope split by [`Scope::into_parts`].
    ///
    /// # Safety
    /// The parts must come from `into_parts` on this thread, and be used once.
    pub unsafe fn from_parts(slot: usize, state: usize) -> Scope {
        Scope {
            slot: slot as *const Slot,
            state: state as *mut ThreadState,
        }
    }

    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub fn state(&self) -> &mut ThreadState {
        // SAFETY: the state belongs to this thread and the busy flag excludes re-entry.
        unsafe { &mut *self.state }
    }
}

impl Drop for Scope {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: see Scope::enter.
        unsafe { (*self.slot).busy.set(false) };
    }
}

/// The current thread's state, if it has one, for lifecycle code that runs outside hooks.
pub fn with_current_state(f: impl FnOnce(&mut ThreadState)) {
    if let Some(scope) = Scope::enter() {
        f(scope.state());
    }
}

/// Clears the thread's slot pointer when its state is released at thread exit.
pub fn forget_current_state(state: *mut ThreadState) {
    SLOT.with(|slot| {
        if slot.state.get() == state {
            slot.state.set(std::ptr::null_mut());
        }
    });
}

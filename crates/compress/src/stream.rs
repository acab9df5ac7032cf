//! One thread's events as a folded tree: value encodings that make repetitions equal, the
//! folding itself, and the bytes of the result (EVNT section, docs/FORMAT.md).
//!
//! Value encodings (what makes the 100th iteration's key equal to the first's):
//! - **file**: `Bound` when the file is the one already bound to the event's descriptor or
//!   stream in this thread (every `write` after its `open`); otherwise the difference
//!   between the file's index and the last file used at the same calling context, so
//!   `open("ckpt-%d.dat")` in a loop is "+1" every time while the trace's file table still
//!   names every file exactly.
//! - **offset**: the difference to where the previous access to the same file in this
//!   thread ended (0 = consecutive); the first access to a file keeps its offset. Any arithmetic pattern at any loop depth
//!   (offset = 4096·(100·i + j)) becomes a constant; the exact offset comes back by summing.
//!   Once 16 steps in a row at a calling context were none of the last 64 distinct steps
//!   there (random access: `cairn_model::IrregularSteps`, the tracer's rule too), its
//!   offsets go to the stream's **column** with their access order, so the key repeats and
//!   the events fold; readers that do not expand get the order counts from the leaf
//!   (`relative.rs`). The tracer stages such calls in offsets records, which
//!   [`StreamEncoder::push_offsets`] takes whole (`offsets.rs`). Jumps (nonzero steps)
//!   that take a few close values in no period (`cairn_model::JitterSteps`: HDF5's
//!   metadata blocks among a dataset per step's data) go to the column too, a block's
//!   repetitions included, so those steps fold as one loop.
//!   When the difference keeps changing while the difference to the last access of the
//!   same call, context and size repeats — several strided streams at one call site, an
//!   index entry then its record — the offset is taken from that one
//!   ([`OffsetRef::OwnDelta`]).
//! - **result**: relative to the request (0 when a call moved what it asked for).
//! - **MPI tag** (point-to-point calls): itself, so a halo exchange's tags (one per
//!   direction) are the same on every rank whichever neighbours it lacks; minus the last tag
//!   at the same calling context when it counts ([`TAG_STEP`]), so a loop whose tag is its
//!   step (`MPI_Isend(…, tag = step, …)`) folds like offsets do.
//! - **MPI-IO explicit offset** (in aux): minus the last one at the same calling context,
//!   so `MPI_File_write_at_all` advancing by its transfer folds even though the aggregator's
//!   `pwritev` calls in between access the same file elsewhere; in the column when its
//!   jumps jitter (HDF5's MPI-IO driver writing a dataset per step).
//! - **seek positions** (`lseek(fd, i * size, SEEK_SET)` and its result): minus the
//!   position reached (`cairn_model::positional`), so a loop of seeks repeats its key.
//! - calls, contexts, handles, sizes, flags, whence, errno: exact — unless a precision level
//!   below 100 blurs a call site's sizes and wandering offsets into histograms
//!   (`blur.rs`, [`crate::histogram`]): the key then marks them and holds no value, the
//!   leaf holds the histogram, and loops whose counts differ within the margin fold with a
//!   count histogram (`fold.rs`).
//!
//! Timing (duration, compute gap before the event) is kept as statistics per leaf; the exact
//! start of the stream's first event and end of its last are kept.
//!
//! Here: keys, the encoder and the checked stream; reading nodes back (`body.rs`) and
//! expanding them into events (`expand.rs`) are beside it.

use std::sync::Arc;

use cairn_format::bytes::{unzigzag, zigzag, ByteReader, ByteWriter};
use cairn_format::{FormatError, Result};
use cairn_model::{event_flags, positional, CallClass, Event};

mod blur;
mod body;
mod column;
mod encoded;
mod expand;
mod offsets;
pub mod pending;
mod relative;
mod resized;
mod sharing;
mod sizes;

pub use blur::{
    BLURRED_CAPACITY, BLURRED_OFFSET, BLURRED_PEER, BLURRED_RESULT, BLURRED_SIZE, BLURRED_TAG,
    MEMBER_EXTENTS, MEMBER_SIZES, ORDER_IN_LEAF, PEER_DOUBLED, PEER_HALVED,
};

/// The generator's seed of an expansion (then the rank's distance from the stream's base
/// rank): every reader draws the same values for a blurred trace.
pub const EXPANSION_SEED: u64 = 0xca1e_5eed;
use body::read_leaf;
use body::Walked;
pub use body::{Body, DecodedBodies, Item, Shares};
pub use column::{site as column_site, Column, ColumnCursor};
pub use encoded::EncodedStream;
pub use relative::{column_parts, Relative, TAG_STEP};
pub use sharing::{MemberExtents, MemberTotals, RankSet, RankSlopes, RankView, Sharing};
pub use sizes::{
    with_column_entry, ColumnRole, ColumnSizes, COLUMN_HOLDS_CAPACITY, COLUMN_HOLDS_RESULT,
    SIZE_IN_COLUMN,
};

use crate::fold::{body_runs, Folder, Leaf, Limits, Node};
use crate::hash::FastMap;
use crate::histogram::{Blurred, Histogram, PeerSet, SplitMix, DEFAULT_BINS};
use crate::stats::Stats;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileRef {
    None,
    /// The file bound to the event's handle (set by the last event on that handle).
    Bound,
    /// (file index + 1) minus the last (file index + 1) seen at the same context.
    Delta(i64),
    /// A file the thread had not touched yet: the next of its table, which lists files in
    /// the order the thread first touched them. Ranks that touched other files before (rank
    /// 0's output) name their own next file alike.
    New,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OffsetRef {
    Unknown,
    /// The first access to the file in this thread: the offset itself.
    First(i64),
    /// Offset minus the end of the previous access to the same file.
    Delta(i64),
    /// Offset minus the end of the previous access to the same file by the same call at the
    /// same calling context with the same size (reads and writes whose size the key keeps;
    /// EVNT version 30): one of several strided streams a call site interleaves — an index
    /// entry, then its record; an HDF5 object header, then its dataset's data — whose
    /// distance to the previous access keeps changing while each stream's stride does not.
    OwnDelta(i64),
    /// Irregular: the offset (as a [`OffsetRef::Delta`] would hold it) and the access order
    /// of each occurrence are the next entry of the stream's column, in event order.
    Column,
    /// Blurred by a precision level below 100: the offsets are the leaf's histogram (of
    /// absolute offsets), the access order its counts.
    Blurred,
}

/// Everything about an event that is kept exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventKey {
    pub call: u16,
    pub context: u32,
    pub handle: u64,
    pub file: FileRef,
    pub offset: OffsetRef,
    pub request: u64,
    /// result − request.
    pub result: i64,
    pub errno: i32,
    pub aux: u64,
    pub flags: u32,
    /// Darshan's access order, against the previous access in the same direction (read or
    /// write) to the same file in this thread: [`CONSECUTIVE`] and/or [`SEQUENTIAL`].
    pub order: u8,
    /// In a stream shared by several ranks: 1 + the index of the [`RankSlopes`] that turn
    /// this key into each rank's own; 0 when every rank has exactly this key.
    pub parameters: u32,
}

/// The access starts exactly where the previous one in the same direction ended.
pub const CONSECUTIVE: u8 = 1;
/// The access starts at or after where the previous one in the same direction ended.
pub const SEQUENTIAL: u8 = 2;

impl EventKey {
    /// The access order is not in the key but counted in the leaf
    /// ([`Leaf::order_counts`]): offsets in the column or blurred, or an access right after
    /// a seek to a blurred offset ([`ORDER_IN_LEAF`]).
    pub fn order_in_leaf(&self) -> bool {
        matches!(self.offset, OffsetRef::Column | OffsetRef::Blurred)
            || self.flags & ORDER_IN_LEAF != 0
    }

    pub fn is_consecutive(&self) -> bool {
        self.order & CONSECUTIVE != 0
    }

    pub fn is_sequential(&self) -> bool {
        self.order & SEQUENTIAL != 0
    }

    pub fn result(&self) -> i64 {
        (self.request as i64).wrapping_add(self.result)
    }

    pub fn failed(&self) -> bool {
        self.flags & event_flags::FAILED != 0
    }

    /// Bytes moved by one occurrence of a data call.
    pub fn bytes(&self) -> u64 {
        if self.failed() {
            0
        } else {
            self.result().max(0) as u64
        }
    }
}

/// Keys remembered for reference by index; further new keys are written inline each time,
/// so neither writer nor reader memory grows with an irregular stream.
pub const MAX_DICTIONARY: usize = 1 << 16;
/// Loops nested deeper than this are rejected when reading.
const MAX_DEPTH: usize = 64;

const TAG_KEY_REFERENCE: u64 = 0;
const TAG_LOOP: u64 = 1;
const TAG_KEY_DEFINED: u64 = 2;
const TAG_KEY_INLINE: u64 = 3;

fn encode_key(key: &EventKey, out: &mut ByteWriter) {
    out.u64(key.call as u64);
    out.u64(key.context as u64);
    out.u64(key.handle);
    match key.file {
        FileRef::None => out.u64(0),
        FileRef::Bound => out.u64(1),
        FileRef::Delta(delta) => {
            out.u64(2);
            out.i64(delta);
        }
        FileRef::New => out.u64(3),
    }
    match key.offset {
        OffsetRef::Unknown => out.u64(0),
        OffsetRef::Delta(delta) => {
            out.u64(1);
            out.i64(delta);
        }
        OffsetRef::First(offset) => {
            out.u64(2);
            out.i64(offset);
        }
        OffsetRef::Column => out.u64(3),
        OffsetRef::Blurred => out.u64(4),
        OffsetRef::OwnDelta(delta) => {
            out.u64(5);
            out.i64(delta);
        }
    }
    out.u64(key.request);
    out.u64(result_code(key.request, key.result));
    out.i64(key.errno as i64);
    out.u64(key.aux);
    out.u64(key.flags as u64);
    out.u64(key.order as u64);
    out.u64(key.parameters as u64);
}

/// A key's result (result − request) as written: zigzag, except that a call that moved
/// nothing of what it asked for (result 0: a receive's posting, a read at the end of a
/// file) is 1, one byte whatever the request, the codes from 1 up to that value's zigzag
/// moving up by one (since EVNT version 27; a posting's capacity was two or three bytes
/// again).
fn result_code(request: u64, result: i64) -> u64 {
    let code = zigzag(result);
    let nothing = zigzag((request as i64).wrapping_neg());
    if request == 0 || code == 0 || code > nothing {
        code
    } else if code == nothing {
        1
    } else {
        code + 1
    }
}

/// The inverse of [`result_code`].
fn result_of_code(request: u64, code: u64) -> i64 {
    let nothing = zigzag((request as i64).wrapping_neg());
    let code = if request == 0 || code == 0 || code > nothing {
        code
    } else if code == 1 {
        nothing
    } else {
        code - 1
    };
    unzigzag(code)
}

fn decode_key(reader: &mut ByteReader) -> Result<EventKey> {
    let call =
        u16::try_from(reader.u64()?).map_err(|_| reader.corrupt("call index out of range"))?;
    let context = reader.u32()?;
    let handle = reader.u64()?;
    let file = match reader.u64()? {
        0 => FileRef::None,
        1 => FileRef::Bound,
        2 => FileRef::Delta(reader.i64()?),
        3 => FileRef::New,
        _ => return Err(reader.corrupt("unknown file encoding")),
    };
    let offset = match reader.u64()? {
        0 => OffsetRef::Unknown,
        1 => OffsetRef::Delta(reader.i64()?),
        2 => OffsetRef::First(reader.i64()?),
        3 => OffsetRef::Column,
        4 => OffsetRef::Blurred,
        5 => OffsetRef::OwnDelta(reader.i64()?),
        _ => return Err(reader.corrupt("unknown offset encoding")),
    };
    let request = reader.u64()?;
    let result = result_of_code(request, reader.u64()?);
    Ok(EventKey {
        call,
        context,
        handle,
        file,
        offset,
        request,
        result,
        errno: reader.i32()?,
        aux: reader.u64()?,
        flags: reader.u32()?,
        order: u8::try_from(reader.u64()?).map_err(|_| reader.corrupt("bad access order"))?,
        parameters: reader.u32()?,
    })
}

/// Writes finished nodes: keys by dictionary index where possible.
struct NodeWriter<'a> {
    dictionary: FastMap<EventKey, u64>,
    /// Writing a stream several ranks share: leaves say which rank was slowest and loops
    /// how their count changes with the rank and which ranks have them.
    shared: bool,
    sharing: &'a Sharing,
    loops_written: usize,
    leaves_written: usize,
    /// Some key's peer follows the rank ([`PEER_DOUBLED`], [`PEER_HALVED`]): a stream of
    /// one rank then keeps its rank.
    rank_peers: bool,
}

/// A stream of one rank shares nothing.
static NOT_SHARED: Sharing = Sharing {
    parameters: Vec::new(),
    loop_slopes: Vec::new(),
    loop_ranks: Vec::new(),
    loop_totals: Vec::new(),
    leaf_extents: Vec::new(),
    leaf_sizes: Vec::new(),
    leaf_orders: Vec::new(),
    rank_sets: Vec::new(),
    base_rank: 0,
};

impl Default for NodeWriter<'_> {
    fn default() -> Self {
        NodeWriter {
            dictionary: FastMap::default(),
            shared: false,
            sharing: &NOT_SHARED,
            loops_written: 0,
            leaves_written: 0,
            rank_peers: false,
        }
    }
}

impl NodeWriter<'_> {
    /// Writes `node`, which the loops around it run `occurrences` times (the product of
    /// their counts).
    fn node(&mut self, node: &Node<EventKey>, occurrences: u64, out: &mut ByteWriter) {
        match node {
            Node::Leaf(leaf) => {
                self.rank_peers |= leaf.key.flags & (PEER_DOUBLED | PEER_HALVED) != 0;
                if let Some(index) = self.dictionary.get(&leaf.key) {
                    out.u64(index << 2 | TAG_KEY_REFERENCE);
                } else if self.dictionary.len() < MAX_DICTIONARY {
                    self.dictionary
                        .insert(leaf.key, self.dictionary.len() as u64);
                    out.u64(TAG_KEY_DEFINED);
                    encode_key(&leaf.key, out);
                } else {
                    out.u64(TAG_KEY_INLINE);
                    encode_key(&leaf.key, out);
                }
                // A leaf's count is as many as the loops around it run it (kept as the
                // difference, 0 unless ranks share the stream), and every occurrence has a
                // duration and a gap before it (the gap's count is the duration's, kept as
                // the difference): a leaf's bytes do not grow with its loops' counts.
                out.i64(leaf.duration.count.wrapping_sub(occurrences) as i64);
                leaf.duration.encode_after_count(out, true);
                out.i64(leaf.gap.count.wrapping_sub(leaf.duration.count) as i64);
                leaf.gap.encode_after_count(out, false);
                out.i64(leaf.offset_low);
                out.i64(leaf.offset_high.wrapping_sub(leaf.offset_low));
                if self.shared {
                    out.i64(leaf.slowest);
                    if leaf.key.flags & MEMBER_EXTENTS != 0 {
                        let own = [(leaf.offset_low, leaf.offset_high)];
                        let extents =
                            members_or(&self.sharing.leaf_extents, self.leaves_written, &own);
                        encode_extents(extents, out);
                    }
                    if leaf.key.flags & MEMBER_SIZES != 0 {
                        let own = leaf
                            .blurred
                            .as_ref()
                            .and_then(|b| b.size.as_ref())
                            .map_or((0, 0), |size| (size.count, size.sum.max(0) as u64));
                        let own = [own];
                        let sizes = members_or(&self.sharing.leaf_sizes, self.leaves_written, &own);
                        encode_totals(sizes, out);
                    }
                }
                if leaf.key.order_in_leaf() {
                    let own = [(leaf.order_counts[0], leaf.order_counts[1])];
                    if self.shared {
                        // Each member's own, so every file's counts stay exact.
                        let orders =
                            members_or(&self.sharing.leaf_orders, self.leaves_written, &own);
                        encode_totals(orders, out);
                    } else {
                        out.u64(own[0].0);
                        out.u64(own[0].1);
                    }
                }
                self.leaves_written += 1;
                let blurred = leaf.blurred.as_deref();
                let empty = Histogram::new(1);
                if leaf.key.offset == OffsetRef::Blurred {
                    blurred
                        .and_then(|b| b.offset.as_ref())
                        .unwrap_or(&empty)
                        .encode(out);
                }
                if leaf.key.flags & BLURRED_SIZE != 0 {
                    blurred
                        .and_then(|b| b.size.as_ref())
                        .unwrap_or(&empty)
                        .encode(out);
                }
                if leaf.key.flags & BLURRED_PEER != 0 {
                    blurred
                        .and_then(|b| b.peer.as_ref())
                        .unwrap_or(&empty)
                        .encode(out);
                    match blurred.and_then(|b| b.peers_seen.as_ref()) {
                        Some(seen) => {
                            out.u64(1);
                            seen.encode(out);
                        }
                        None => out.u64(0),
                    }
                    // The same relative to the rank (ranks sharing the stream): 0 none,
                    // 1 the histogram, 2 with the peers seen; then the modulus.
                    let relative = blurred
                        .filter(|_| self.shared)
                        .and_then(|b| Some((b.peer_relative.as_ref()?, b)));
                    match relative {
                        Some((relative, b)) => {
                            out.u64(1 + b.peers_seen_relative.is_some() as u64);
                            relative.encode(out);
                            if let Some(seen) = &b.peers_seen_relative {
                                seen.encode(out);
                            }
                            out.i64(b.peer_modulus);
                        }
                        None => out.u64(0),
                    }
                }
                if leaf.key.flags & BLURRED_TAG != 0 {
                    blurred
                        .and_then(|b| b.tag.as_ref())
                        .unwrap_or(&empty)
                        .encode(out);
                }
                if leaf.key.flags & SIZE_IN_COLUMN != 0 {
                    // Every leaf so keyed was made with its sizes (pushed, or read).
                    debug_assert!(leaf.column_sizes.is_some());
                    let unknown = ColumnSizes::unknown(leaf.duration.count);
                    leaf.column_sizes.as_deref().unwrap_or(&unknown).encode(out);
                }
            }
            Node::Loop {
                count,
                body,
                counts,
            } => {
                let index = self.loops_written;
                let slope = self.sharing.loop_slopes.get(index).copied().unwrap_or(0);
                let ranks = self.sharing.loop_ranks.get(index).copied().unwrap_or(0);
                let totals = self
                    .sharing
                    .loop_totals
                    .get(index)
                    .and_then(Option::as_ref)
                    .filter(|_| self.shared && counts.is_some());
                self.loops_written += 1;
                let mut inner = ByteWriter::new();
                // A loop whose counts differ runs its body as often as they add up to.
                let runs = body_runs(*count, counts.as_deref(), occurrences);
                for child in body {
                    self.node(child, runs, &mut inner);
                }
                out.u64(count << 2 | TAG_LOOP);
                out.u64(
                    (body.len() as u64) << 2
                        | (totals.is_some() as u64) << 1
                        | counts.is_some() as u64,
                );
                if let Some(counts) = counts {
                    counts.encode(out);
                }
                if self.shared {
                    out.i64(slope);
                    out.u64(ranks as u64);
                }
                if let Some(totals) = totals {
                    encode_totals(totals, out);
                }
                out.bytes(&inner.buffer);
            }
        }
    }
}

/// An MPI point-to-point call's tag (aux's high 32 bits), signed.
fn tag_value(aux: u64) -> i64 {
    (aux >> 32) as u32 as i32 as i64
}

/// One event of a block the tracer folded: its first repetition (as the trace has it), its
/// class, how far each repetition's offset moves, the end of its last repetition and its
/// statistics over every repetition.
#[derive(Clone, Debug)]
pub struct BlockPosition {
    pub event: Event,
    pub class: Option<CallClass>,
    pub stride: i64,
    pub last_end: u64,
    pub duration: Stats,
    pub gap: Stats,
}

impl BlockPosition {
    /// The event of the `repetition`-th repetition after the first (times aside): an
    /// explicit offset `stride` further each time, one at the descriptor's position kept.
    fn nth(&self, repetition: u64) -> Event {
        let first = self.event.offset;
        if first < 0 {
            return self.event.clone();
        }
        let offset = first.saturating_add(self.stride.saturating_mul(repetition as i64));
        // A seek's positions move with its offset.
        let (request, result) = positional::moved(
            self.event.flags,
            offset.wrapping_sub(first),
            self.event.request,
            self.event.result,
        );
        Event {
            offset,
            request,
            result,
            ..self.event
        }
    }
}

/// Folds one thread's events as they come and writes finished nodes out at once, so its
/// memory is the folding window and the key dictionary, whatever the stream's length.
pub struct StreamEncoder {
    relative: Relative,
    folder: Folder<EventKey>,
    writer: NodeWriter<'static>,
    body: ByteWriter,
    top_level_nodes: u64,
    first_start: Option<u64>,
    last_end: u64,
    count: u64,
    /// Offsets of irregular accesses, in event order ([`OffsetRef::Column`]), and sizes
    /// that keep being new.
    column: Column,
    /// Bins of the histograms a precision level below 100 makes, and that level.
    bins: usize,
    precision: u8,
    /// The bytes the stream may hold (its nodes as written and its column, uncompressed)
    /// before its irregular values degrade to histograms, and how many events it had
    /// when they did ([`StreamEncoder::set_budget`]).
    budget: Option<u64>,
    degraded_after: Option<u64>,
    /// The thread's MPI rank, if it has one ([`StreamEncoder::set_rank`]).
    rank: Option<i64>,
}

/// The precision level a stream over its budget continues at: every value that differs
/// from the last at its call site becomes a histogram (regular values, which repeat, stay
/// exact).
pub const BUDGET_PRECISION: u8 = 0;

impl Default for StreamEncoder {
    fn default() -> StreamEncoder {
        StreamEncoder::new(Limits::default())
    }
}

impl StreamEncoder {
    pub fn new(limits: Limits) -> StreamEncoder {
        StreamEncoder {
            relative: Relative::default(),
            folder: Folder::new(limits),
            writer: NodeWriter::default(),
            body: ByteWriter::new(),
            top_level_nodes: 0,
            first_start: None,
            last_end: 0,
            count: 0,
            column: Column::default(),
            bins: DEFAULT_BINS,
            precision: 100,
            budget: None,
            degraded_after: None,
            rank: None,
        }
    }

    /// The thread's MPI rank: a point-to-point call's peer may then be kept against it
    /// (recursive doubling's `rank XOR 2^k`, [`PEER_DOUBLED`]), and the stream keeps the
    /// rank if it was. Set before the first event.
    pub fn set_rank(&mut self, rank: Option<i64>) {
        self.rank = rank.filter(|rank| *rank >= 0);
        self.relative.set_rank(self.rank);
    }

    /// Bounds the stream's memory: once its nodes as written and its column of irregular
    /// offsets hold more than `bytes` (uncompressed), the rest of it continues at
    /// [`BUDGET_PRECISION`] — the least regular parts (sizes and offsets that keep
    /// changing, loops whose counts differ) become histograms instead of growing the
    /// stream; counts and byte totals stay exact. [`StreamEncoder::degraded_after`] says
    /// from where.
    pub fn set_budget(&mut self, bytes: u64) {
        self.budget = Some(bytes);
    }

    /// How many events the stream had when it passed its budget, if it did.
    pub fn degraded_after(&self) -> Option<u64> {
        self.degraded_after
    }

    /// Writes the nodes that left the folding window, then degrades the stream if that
    /// passed its budget.
    fn write_finished(&mut self) {
        for node in self.folder.take_finished() {
            self.write(&node);
        }
        let held = self.body.buffer.len() as u64 + 8 * self.column.len();
        if let (Some(budget), None) = (self.budget, self.degraded_after) {
            if held > budget && self.precision > BUDGET_PRECISION {
                self.degraded_after = Some(self.count);
                self.relative.degrade(BUDGET_PRECISION);
                self.folder.set_precision(BUDGET_PRECISION);
                self.precision = BUDGET_PRECISION;
            }
        }
    }

    /// Keeps parameters that differ at a call site by at most (100 − `precision`)% in
    /// histograms of `bins` bins (see `blur.rs`); 100 keeps everything exact. Set before
    /// the first event.
    pub fn set_precision(&mut self, precision: u8, bins: usize) {
        self.relative = Relative::with_precision(precision);
        self.relative.set_rank(self.rank);
        self.folder.set_precision(precision);
        self.precision = precision.min(100);
        self.bins = bins;
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds the next event; `class` is the class of its call (for dup bindings and offsets).
    pub fn push(&mut self, event: &Event, class: Option<CallClass>) {
        let gap = match self.first_start {
            None => {
                self.first_start = Some(event.start);
                0
            }
            Some(_) => event.start.saturating_sub(self.last_end),
        };
        self.last_end = self
            .last_end
            .max(event.start.saturating_add(event.duration));
        let (key, order) = self
            .relative
            .encode_into_column(event, class, &mut self.column);
        let order_counts = if key.order_in_leaf() {
            [
                (order & CONSECUTIVE != 0) as u64,
                (order & SEQUENTIAL != 0) as u64,
            ]
        } else {
            [0; 2]
        };
        let blurred = blurred_values(self.bins, self.precision, &key, event, 1);
        let (offset_low, offset_high) = if event.offset >= 0 {
            let moved = if matches!(class, Some(CallClass::Read | CallClass::Write)) {
                event.bytes() as i64
            } else {
                0
            };
            (event.offset, event.offset.saturating_add(moved))
        } else {
            (-1, -1)
        };
        // The size is its site's last in the column (the request as the key would keep it).
        let column_sizes = (key.flags & SIZE_IN_COLUMN != 0)
            .then(|| {
                self.column
                    .last_size(column::site(event.call, event.context))
            })
            .flatten()
            .map(|size| Box::new(ColumnSizes::of(size as u64)));
        self.folder.push(Leaf {
            key,
            duration: Stats::of(event.duration),
            gap: Stats::of(gap),
            offset_low,
            offset_high,
            slowest: 0,
            order_counts,
            order_of: 0,
            blurred,
            column_sizes,
        });
        self.count += 1;
        self.write_finished();
    }

    /// Adds `count` occurrences of `first` folded as the program ran (a run), each
    /// `stride` further (see [`StreamEncoder::push_block`]).
    #[allow(clippy::too_many_arguments)]
    pub fn push_run(
        &mut self,
        first: &Event,
        class: Option<CallClass>,
        count: u64,
        stride: i64,
        last_end: u64,
        duration: Stats,
        gap: Stats,
    ) {
        let position = BlockPosition {
            event: first.clone(),
            class,
            stride,
            last_end,
            duration,
            gap,
        };
        self.push_block(std::slice::from_ref(&position), count);
    }

    /// Adds `count` repetitions of the events of `body` folded as the program ran (a block:
    /// each position's first repetition, offsets moving by its stride, statistics over
    /// every repetition). Their keys are the first repetition's (the events before it were
    /// one repetition of the same, so the relative encodings already repeat), and the
    /// relative state ends as the last repetition leaves it.
    pub fn push_block(&mut self, body: &[BlockPosition], count: u64) {
        let Some(head) = body.first() else {
            return;
        };
        if count == 0 {
            return;
        }
        if self.first_start.is_none() {
            self.first_start = Some(head.event.start);
        }
        // Below precision 100 a block's call sites are judged as its events pushed one by
        // one would be (a message size blurs from its first value, a size that changed
        // within the margin stays blurred), so a step the tracer folded and one it did not
        // get the same keys and fold together.
        let blurring = self.precision < 100;
        let before = (count > 1 || blurring).then(|| self.relative.clone());
        // A position whose jump jitters keeps its offsets in the column, as it would
        // pushed alone: each repetition's entry (the first repetition's jump is from what
        // came before the block, the others' from the repetition before, all alike).
        let mut first_entries = Vec::new();
        // Per position, the access order of its first repetition and of the others, when
        // its offsets are in the column (the leaf then counts them).
        let mut orders: Vec<[u8; 2]> = vec![[0; 2]; body.len()];
        let keys: Vec<EventKey> = body
            .iter()
            .zip(orders.iter_mut())
            .map(|(position, order)| {
                let key = self
                    .relative
                    .encode_blurring(&position.event, position.class);
                let jittered = self.relative.take_jitter();
                if let Some((_, entry)) = jittered {
                    *order = [column_parts(entry).1; 2];
                }
                jitter_key(key, jittered, &mut first_entries)
            })
            .collect();
        let mut next_entries = Vec::new();
        if let Some(before) = before {
            // Each repetition must have the first one's keys (the tracer only folds bodies
            // whose accesses to one file move together); if not, one by one. Offsets
            // blurred or following a blurred seek are each their own value: one by one.
            let mut probe = self.relative.clone();
            let second: Vec<EventKey> = if count > 1 {
                body.iter()
                    .zip(orders.iter_mut())
                    .map(|(position, order)| {
                        let key = probe.encode_blurring(&position.nth(1), position.class);
                        let jittered = probe.take_jitter();
                        if let Some((_, entry)) = jittered {
                            order[1] = column_parts(entry).1;
                        }
                        jitter_key(key, jittered, &mut next_entries)
                    })
                    .collect()
            } else {
                keys.clone()
            };
            let drawn = |key: &EventKey| {
                key.offset == OffsetRef::Blurred || key.flags & blur::ORDER_IN_LEAF != 0
            };
            // A jittering position's entries are taken as the second repetition's for every
            // later one: so they must be the third's too. Each is a jump from the access
            // before it, which moves by its own stride; a jump from another position that
            // moves by another stride (a record that moves after an index that does not)
            // differs from one repetition to the next, and the block goes one by one.
            let mut third_entries = Vec::new();
            if count > 2 && !next_entries.is_empty() {
                let mut third = probe.clone();
                for position in body {
                    third.encode_blurring(&position.nth(2), position.class);
                    if let Some(entry) = third.take_jitter() {
                        third_entries.push(entry);
                    }
                }
            }
            if second != keys
                || keys.iter().any(drawn)
                || (count > 2 && !next_entries.is_empty() && third_entries != next_entries)
            {
                self.relative = before;
                self.push_block_one_by_one(body, count);
                return;
            }
            self.relative = probe;
        }
        for (site, entry) in &first_entries {
            self.column.push_offset(*site, *entry);
        }
        for _ in 1..count {
            for (site, entry) in &next_entries {
                self.column.push_offset(*site, *entry);
            }
        }
        if count > 2 {
            // The relative state after the last repetition, as if each had been pushed
            // (its precision sites already judged the repetitions alike: the jump from the
            // second to the last is not a step of the program's).
            for position in body {
                let key = self
                    .relative
                    .encode(&position.nth(count - 1), position.class);
                let jump = match key.offset {
                    OffsetRef::Delta(delta) | OffsetRef::OwnDelta(delta) => delta,
                    OffsetRef::Unknown if key.flags & event_flags::OFFSET_IN_AUX != 0 => {
                        key.aux as i64
                    }
                    _ => 0,
                };
                self.relative
                    .repeat_jitter(position.event.context, jump, count - 3);
            }
            for position in body {
                self.relative
                    .repeat_sizes(&position.event, position.class, count - 3);
            }
        }
        for position in body {
            self.last_end = self.last_end.max(position.last_end);
        }
        // Each position's statistics, taken a repetition at a time as the folder asks.
        let mut rest: Vec<(Stats, Stats)> = body
            .iter()
            .map(|position| (position.duration, position.gap))
            .collect();
        // Single repetitions' statistics set aside for later calls (the folder asks for all
        // but the last repetition, then the last).
        let mut set_aside: Vec<Vec<(Stats, Stats)>> = vec![Vec::new(); body.len()];
        let mut start = 0u64;
        let (bins, precision) = (self.bins, self.precision);
        let mut leaves = |repetitions: u64| -> Vec<Leaf<EventKey>> {
            let all = start + repetitions >= count;
            let leaves = body
                .iter()
                .zip(keys.iter().zip(&orders))
                .zip(rest.iter_mut().zip(set_aside.iter_mut()))
                .map(|((position, (key, orders)), ((duration, gap), aside))| {
                    let first = position.nth(start);
                    let moved = if first.offset >= 0
                        && matches!(position.class, Some(CallClass::Read | CallClass::Write))
                    {
                        key.bytes() as i64
                    } else {
                        0
                    };
                    let last = position.nth(start + repetitions - 1).offset;
                    let (offset_low, offset_high) = if first.offset >= 0 {
                        (
                            first.offset.min(last),
                            first.offset.max(last).saturating_add(moved),
                        )
                    } else {
                        (-1, -1)
                    };
                    let (duration, gap) = if all {
                        let mut taken = (std::mem::take(duration), std::mem::take(gap));
                        for (duration, gap) in aside.drain(..) {
                            taken.0.merge(&duration);
                            taken.1.merge(&gap);
                        }
                        taken
                    } else if repetitions == 1 {
                        aside
                            .pop()
                            .unwrap_or_else(|| (duration.take_one(), gap.take_one()))
                    } else {
                        // Those after these, one at a time, later; these take the rest.
                        for _ in start + repetitions..count {
                            aside.push((duration.take_one(), gap.take_one()));
                        }
                        (std::mem::take(duration), std::mem::take(gap))
                    };
                    // The access orders of these repetitions, when the column has
                    // their offsets: the first repetition's own, the others alike.
                    let order_counts = if key.offset == OffsetRef::Column {
                        let firsts = (start == 0) as u64;
                        let others = repetitions - firsts;
                        let counted = |bit: u8| {
                            firsts * (orders[0] & bit != 0) as u64
                                + others * (orders[1] & bit != 0) as u64
                        };
                        [counted(CONSECUTIVE), counted(SEQUENTIAL)]
                    } else {
                        [0; 2]
                    };
                    Leaf {
                        key: *key,
                        duration,
                        gap,
                        offset_low,
                        offset_high,
                        slowest: 0,
                        order_counts,
                        order_of: 0,
                        // Blurred sizes, peers and tags: every repetition's (the same) value.
                        blurred: blurred_values(bins, precision, key, &position.event, repetitions),
                        column_sizes: None,
                    }
                })
                .collect();
            start += repetitions;
            leaves
        };
        self.folder.push_block(&keys, count, &mut leaves);
        self.count += count.saturating_mul(body.len() as u64);
        self.write_finished();
    }

    /// A block whose repetitions do not share keys, pushed event by event: offsets exact,
    /// each occurrence's duration and gap its position's mean.
    fn push_block_one_by_one(&mut self, body: &[BlockPosition], count: u64) {
        let mut clock = body[0].event.start;
        for repetition in 0..count {
            for (index, position) in body.iter().enumerate() {
                let gap = if repetition == 0 && index == 0 {
                    0
                } else {
                    position.gap.mean.round() as u64
                };
                let duration = position.duration.mean.round() as u64;
                let event = Event {
                    start: clock.saturating_add(gap),
                    duration,
                    ..position.nth(repetition)
                };
                clock = event.start.saturating_add(duration);
                self.push(&event, position.class);
            }
        }
    }

    fn write(&mut self, node: &Node<EventKey>) {
        self.writer.node(node, 1, &mut self.body);
        self.top_level_nodes += 1;
    }

    pub fn finish(mut self) -> EncodedStream {
        let folder = std::mem::take(&mut self.folder);
        for node in folder.finish() {
            self.write(&node);
        }
        let first_start = self.first_start.unwrap_or(0);
        let ranked = Sharing {
            base_rank: self.rank.unwrap_or(0),
            ..Sharing::default()
        };
        assemble(
            first_start,
            self.last_end,
            self.count,
            self.top_level_nodes,
            &ranked,
            (false, self.writer.rank_peers),
            &self.column,
            &self.body.buffer,
        )
        .expect("a stream this encoder wrote reads back")
    }
}

/// A stream's bytes: its header, its rank-slope table (its length × 4, plus 1 if several
/// ranks share the stream, plus 2 if a stream of one rank keeps its rank), if shared its
/// base rank and rank sets (else, if kept, its rank), its column of irregular offsets (its
/// length, then each entry), then its top-level nodes. `(shared, ranked)`.
#[allow(clippy::too_many_arguments)]
fn assemble(
    first_start: u64,
    last_end: u64,
    count: u64,
    top_level_nodes: u64,
    sharing: &Sharing,
    (shared, ranked): (bool, bool),
    column: &Column,
    body: &[u8],
) -> cairn_format::Result<EncodedStream> {
    let ranked = ranked && !shared;
    let mut out = ByteWriter::new();
    out.u64(first_start);
    out.u64(last_end.saturating_sub(first_start));
    out.u64(count);
    out.u64(top_level_nodes);
    out.u64((sharing.parameters.len() as u64) << 2 | (ranked as u64) << 1 | shared as u64);
    for slopes in &sharing.parameters {
        for value in slopes.to_array() {
            out.i64(value);
        }
        let rows = slopes.peer_row_width > 0;
        out.u64((slopes.peer_modulus as u64) << 2 | (rows as u64) << 1 | slopes.peer_xor as u64);
        if rows {
            out.u64(slopes.peer_row_width as u64);
            out.i64(slopes.peer_row_slope);
        }
    }
    if shared {
        out.i64(sharing.base_rank);
        out.u64(sharing.rank_sets.len() as u64);
        for set in &sharing.rank_sets {
            set.encode(&mut out);
        }
    } else if ranked {
        out.i64(sharing.base_rank);
    }
    column.write(&mut out);
    out.buffer.extend_from_slice(body);
    EncodedStream::from_bytes(out.into_inner())
}

/// The histograms of the parameters `key` says are blurred, holding `event`'s values
/// `count` times (an event pushed alone, or a block's repetitions, which have the same
/// sizes, peer and tag; a block's blurred offsets go one by one), of `bins` bins at
/// `precision`.
fn blurred_values(
    bins: usize,
    precision: u8,
    key: &EventKey,
    event: &Event,
    count: u64,
) -> Option<Box<Blurred>> {
    let histogram = |value: i64| {
        let mut histogram = Histogram::new(bins);
        histogram.precision = precision;
        histogram.add_many(value, count, -1);
        histogram
    };
    let mut blurred = None;
    if key.offset == OffsetRef::Blurred {
        blurred.get_or_insert_with(Box::<Blurred>::default).offset = Some(histogram(event.offset));
    }
    if key.flags & BLURRED_SIZE != 0 {
        let (request, _) =
            positional::relative(event.flags, event.offset, event.request, event.result);
        let value = if key.flags & BLURRED_RESULT != 0 {
            event.result
        } else {
            request as i64
        };
        blurred.get_or_insert_with(Box::<Blurred>::default).size = Some(histogram(value));
    }
    if key.flags & BLURRED_PEER != 0 {
        let peer = event.aux as u32 as i32 as i64;
        let blurred = blurred.get_or_insert_with(Box::<Blurred>::default);
        blurred.peer = Some(histogram(peer));
        blurred.peers_seen = Some(PeerSet::of(peer));
    }
    if key.flags & BLURRED_TAG != 0 {
        blurred.get_or_insert_with(Box::<Blurred>::default).tag =
            Some(histogram(tag_value(event.aux)));
    }
    blurred
}

#[cfg(test)]
mod tests;

/// Members whose totals one loop may list (a shared stream has at most one per process).
const MAX_MEMBER_TOTALS: u64 = 1 << 24;

/// A column of per-member pairs: `u` members, then each member's two values as
/// differences from the previous member's (ranks of one job differ by little).
fn encode_pairs(pairs: impl ExactSizeIterator<Item = (i64, i64)>, out: &mut ByteWriter) {
    out.u64(pairs.len() as u64);
    let mut previous = (0i64, 0i64);
    for pair in pairs {
        out.i64(pair.0.wrapping_sub(previous.0));
        out.i64(pair.1.wrapping_sub(previous.1));
        previous = pair;
    }
}

/// Reads what [`encode_pairs`] wrote (`what` names the column in errors).
fn decode_pairs(reader: &mut ByteReader, what: &str) -> Result<Vec<(i64, i64)>> {
    let members = reader.u64()?;
    if members == 0 || members > MAX_MEMBER_TOTALS || members > reader.remaining() as u64 / 2 {
        return Err(reader.corrupt(&format!("{what} out of range")));
    }
    let mut pairs = Vec::with_capacity(members as usize);
    let mut previous = (0i64, 0i64);
    for _ in 0..members {
        let pair = (
            previous.0.wrapping_add(reader.i64()?),
            previous.1.wrapping_add(reader.i64()?),
        );
        pairs.push(pair);
        previous = pair;
    }
    Ok(pairs)
}

/// The members' values of leaf `leaf` (pre-order) from `table`, or `own` when the table
/// keeps none for it (a leaf only one rank has, or members alike).
fn members_or<'a, T>(
    table: &'a [Option<std::sync::Arc<[T]>>],
    leaf: usize,
    own: &'a [T],
) -> &'a [T] {
    table.get(leaf).and_then(Option::as_deref).unwrap_or(own)
}

/// A loop's [`MemberTotals`] (each member's occurrences and iterations), or a leaf's
/// members' counts and sums of sizes or access orders.
fn encode_totals(totals: &[(u64, u64)], out: &mut ByteWriter) {
    encode_pairs(totals.iter().map(|&(a, b)| (a as i64, b as i64)), out);
}

/// Reads what [`encode_totals`] wrote; the members' occurrences and iterations must add
/// up to the loop's count histogram's exact count and sum.
pub(crate) fn decode_totals(reader: &mut ByteReader, counts: &Histogram) -> Result<MemberTotals> {
    let totals = decode_member_totals(reader)?;
    let (occurrences, iterations) = totals.iter().fold((0u128, 0i128), |(o, i), (a, b)| {
        (o + *a as u128, i + *b as i128)
    });
    if occurrences != counts.count as u128 || iterations != counts.sum {
        return Err(reader.corrupt("member totals do not add up to the loop's counts"));
    }
    Ok(totals)
}

/// The sums of members' pairs (their consecutive and sequential accesses).
pub(crate) fn pair_sums(pairs: impl IntoIterator<Item = (u64, u64)>) -> [u64; 2] {
    pairs.into_iter().fold([0; 2], |[first, second], (a, b)| {
        [first.saturating_add(a), second.saturating_add(b)]
    })
}

/// Reads what [`encode_totals`] wrote, unchecked.
pub(crate) fn decode_member_totals(reader: &mut ByteReader) -> Result<MemberTotals> {
    let pairs = decode_pairs(reader, "member totals")?;
    Ok(pairs
        .into_iter()
        .map(|(a, b)| (a as u64, b as u64))
        .collect())
}

/// A leaf's [`MemberExtents`]: each member's lowest offset and its range's length.
fn encode_extents(extents: &[(i64, i64)], out: &mut ByteWriter) {
    encode_pairs(
        extents
            .iter()
            .map(|&(low, high)| (low, high.wrapping_sub(low))),
        out,
    );
}

/// Reads what [`encode_extents`] wrote.
pub(crate) fn decode_extents(reader: &mut ByteReader) -> Result<Vec<(i64, i64)>> {
    let pairs = decode_pairs(reader, "member offset ranges")?;
    Ok(pairs
        .into_iter()
        .map(|(low, length)| (low, low.wrapping_add(length)))
        .collect())
}

/// `key` with its offset in the column when it jitters (`jittered`: the column entry its
/// encoding gave, kept in `entries`).
fn jitter_key(
    mut key: EventKey,
    jittered: Option<(u64, i64)>,
    entries: &mut Vec<(u64, i64)>,
) -> EventKey {
    if let Some(entry) = jittered {
        key.offset = OffsetRef::Column;
        key.order = 0;
        if key.flags & event_flags::OFFSET_IN_AUX != 0 {
            // An MPI-IO explicit offset's jump (encoded without a column, the key kept it).
            key.aux = 0;
        }
        entries.push(entry);
    }
    key
}

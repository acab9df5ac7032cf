//! The relative value encodings (see the parent module's list): the state the encoder and
//! every reader of a stream keep per thread, so that a value that moves regularly — an
//! offset after the previous access, a file after the last at the call site, a tag or an
//! MPI-IO offset after the last at the call site — has the same key every time, and the
//! column that takes irregular offsets out of the keys.

use cairn_model::{
    event_flags, positional, CallClass, Event, IrregularSteps, JitterSteps, WanderingSizes, UNKNOWN,
};

use super::blur::{
    Blur, BLURRED_CAPACITY, BLURRED_PEER, BLURRED_RESULT, BLURRED_SIZE, BLURRED_TAG, ORDER_IN_LEAF,
    PEER_DOUBLED, PEER_HALVED,
};
use super::column::site;
use super::sizes::SIZE_IN_COLUMN;
use super::{Column, EventKey, FileRef, OffsetRef, CONSECUTIVE, SEQUENTIAL};
use crate::hash::FastMap;

/// The state both sides of the relative encodings keep, per thread.
#[derive(Default, Clone, Debug)]
pub struct Relative {
    context_file: FastMap<u32, u64>,
    /// The highest file (index + 1) the thread touched: its table lists files in the order
    /// it first touched them, so the next it touches for the first time is this + 1
    /// ([`FileRef::New`]).
    files_touched: u64,
    /// The last file (index + 1) the thread touched: a call site's first file is taken
    /// after it (IOR's `open` of the file its `stat` just looked at: the same on every
    /// rank, whatever other files rank 0 touched before).
    last_file: u64,
    bound: FastMap<u64, u64>,
    file_end: FastMap<u64, i64>,
    /// Per read or write whose size the key keeps — (file + 1, call, context, request) —
    /// the end of its last access ([`OffsetRef::OwnDelta`]'s reference) and, encoding only,
    /// the two deltas its last access had (to the file's previous access, to its own).
    own_end: FastMap<(u64, u16, u32, u64), OwnEnd>,
    /// End of the last read (true) or write (false) per file: only for the access order.
    direction_end: FastMap<(u64, bool), i64>,
    /// The MPI tags of point-to-point calls at each context (see [`TagHistory`]).
    context_tag: FastMap<u32, TagHistory>,
    /// The last MPI-IO explicit offset at each context ([`event_flags::OFFSET_IN_AUX`]).
    context_aux: FastMap<u32, u64>,
    /// Encoding only: per context, the offset deltas seen last (see
    /// [`Relative::encode_into_column`]).
    context_deltas: FastMap<u32, IrregularSteps>,
    /// Encoding only: per context and size ([`periods_site`]), whether its nonzero
    /// offset steps keep missing the one a period back (see [`irregular_step`]).
    site_periods: FastMap<(u32, u64), WanderingSizes>,
    /// Encoding only: where the last access through an MPI-IO explicit offset ended at
    /// each context, so that the rules judge those offsets' steps as a file offset's (0:
    /// consecutive).
    /// (And that access's size: a step of 0 after an access of another size follows
    /// another site's access, as a header read right after the block before it.)
    aux_end: FastMap<u32, (u64, u64)>,
    /// Encoding only: per context, the bands of its offset jumps (see [`JitterSteps`]):
    /// jumps that jitter go to the column too.
    context_jitter: FastMap<u32, JitterSteps>,
    /// Encoding only: the column entry (site, entry) of the event just encoded without a
    /// column whose offset jitters — a block's position ([`Relative::take_jitter`]).
    jittered: Option<(u64, i64)>,
    /// Encoding only: per context, the sizes of reads and writes seen last: sizes that
    /// keep being new go to the column too ([`SIZE_IN_COLUMN`]).
    context_sizes: FastMap<u32, WanderingSizes>,
    /// Encoding only: the events being encoded are an offsets record's whose sizes the
    /// tracer staged as wandering — a body it saw repeat contiguously — so a site's sizes
    /// are taken by the rule over its last 64 ([`WanderingSizes::step`]); events pushed
    /// one at a time may be a sample among many other calls (a terminal's line written
    /// now and then in a hydro code's step), and take 16 new in a row
    /// ([`WanderingSizes::step_sampled`]): once wandering, a site is so for both.
    pub(super) record_sizes: bool,
    /// Encoding only: files (index + 1) whose last event was a seek to an irregular
    /// offset: the access after it (IOR's `lseek` then `write` at random offsets) goes to
    /// the column too, since its access order is as irregular as the seek's offset.
    sought_irregularly: FastMap<u64, ()>,
    /// Encoding only: the precision level's choice of parameters kept as histograms.
    blur: Blur,
    /// Encoding only: files whose last event was a seek to a blurred offset (the access
    /// after it counts its order in its leaf, [`ORDER_IN_LEAF`]).
    sought_blurred: FastMap<u64, ()>,
    /// Encoding only: files whose last access was at a drawn offset (blurred, or right
    /// after a seek to one): the next exact offset there is kept whole.
    after_drawn: FastMap<u64, ()>,
    /// The thread's MPI rank, when it has one: peers are also seen as masks (peer XOR
    /// rank), so recursive doubling's partners repeat their key ([`PEER_DOUBLED`]).
    rank: Option<i64>,
    /// Per call site (call, context): the last peer's mask (−1: none, or not exact) and
    /// whether it was kept as doubled (1) or halved (2) — a chain never turns back, so a
    /// two-round exchange (masks 1, 2, 1, 2…) keeps its first mask rather than halving.
    site_masks: FastMap<(u16, u32), (i64, u8)>,
    /// Encoding only, below precision 100: call sites (call, context) of point-to-point
    /// calls that posted a capacity and got nothing (a non-blocking receive): there an
    /// empty posting (capacity 0, as a solver posts to a neighbour with no atoms to send)
    /// joins the others' histogram too ([`BLURRED_CAPACITY`]).
    capacity_sites: FastMap<(u16, u32), ()>,
}

/// Whether an offset step (as the key would keep it: from the end of the file's previous
/// access, or of the site's own last one) sends the access to the column: when it is none
/// of the context's recent steps (`seen`: random accesses), or a nonzero step that keeps
/// missing the one a period back at its context and size (`periods`: an HDF5 reader's
/// object headers, a few dozen distinct steps from header to header in no period a loop
/// could hold, read by the same call at the same context as the datasets' data, whose
/// steps repeat). A step of 0 is regular, unless the access does not follow the file's
/// previous one (`apart`) while the steps keep missing: a dataset's data right after the
/// previous dataset's, its header read in between.
fn irregular_step(
    seen: &mut IrregularSteps,
    periods: &mut WanderingSizes,
    step: i64,
    apart: bool,
) -> bool {
    let unseen = seen.step(step);
    if step == 0 {
        unseen || (apart && periods.is_wandering())
    } else {
        let unexpected = periods.step_sampled(step as u64);
        unseen | unexpected
    }
}

/// Where [`Relative::site_periods`] judges an access's offset steps: per calling context
/// and, for a read or write whose key keeps its size, per size too (sizes that wander, or
/// blur, are one site: each size its own would never be judged).
fn periods_site(context: u32, class: Option<CallClass>, request: u64, sized: bool) -> (u32, u64) {
    match class {
        Some(CallClass::Read | CallClass::Write) if sized => (context, request),
        _ => (context, u64::MAX),
    }
}

/// What [`Relative::own_end`] keeps per call, context, file and size.
#[derive(Clone, Copy, Debug, Default)]
struct OwnEnd {
    end: i64,
    /// The delta to the file's previous access and to this one's own last, the last time.
    file_delta: i64,
    own_delta: Option<i64>,
}

/// Whether an access with these key flags keeps its size in the key (so a reader knows
/// the size before the offset and can find its own last access).
fn exact_size(flags: u32) -> bool {
    flags & (SIZE_IN_COLUMN | BLURRED_SIZE) == 0
}

/// The mask a point-to-point call's peer takes at its call site, and the key flag that
/// says so (0: the peer is kept as itself), given the site's last mask and form. Only
/// powers of two chain (recursive doubling's and halving's masks, a binomial tree's
/// children): a halo exchange whose one call site sends west (mask 1), east (3), then
/// south (6) must keep its peers as themselves on every rank, or that rank's key would
/// differ from its neighbours' and the ranks would no longer share a stream.
fn peer_form(mask: i64, (last, form): (i64, u8)) -> u32 {
    if mask <= 0 || last <= 0 || mask & (mask - 1) != 0 || last & (last - 1) != 0 {
        0
    } else if form != 2 && last.checked_mul(2) == Some(mask) {
        PEER_DOUBLED
    } else if form != 1 && last % 2 == 0 && last / 2 == mask {
        PEER_HALVED
    } else {
        0
    }
}

/// The last `N` distinct values seen (a ring once full).
#[derive(Clone, Debug, Default)]
struct Recent<T, const N: usize> {
    values: Vec<T>,
    next: usize,
}

impl<T: PartialEq, const N: usize> Recent<T, N> {
    /// Whether `value` is among the recent ones; remembers it.
    fn remember(&mut self, value: T) -> bool {
        if self.values.contains(&value) {
            return true;
        }
        if self.values.len() < N {
            self.values.push(value);
        } else {
            self.values[self.next] = value;
            self.next = (self.next + 1) % N;
        }
        false
    }

    fn is_full(&self) -> bool {
        self.values.len() == N
    }
}

/// A column entry: an offset delta and the access order bits, one number.
pub(super) fn column_entry(delta: i64, order: u8) -> Option<i64> {
    delta
        .checked_mul(4)
        .map(|shifted| shifted | (order & 3) as i64)
}

/// The (offset delta, access order) of a column entry.
pub fn column_parts(entry: i64) -> (i64, u8) {
    (entry >> 2, (entry & 3) as u8)
}

/// An MPI point-to-point call's tag: the high 32 bits of aux (the peer is the low 32).
fn tag_of(aux: u64) -> u32 {
    (aux >> 32) as u32
}

fn with_tag(aux: u64, tag: u32) -> u64 {
    (aux & 0xffff_ffff) | (tag as u64) << 32
}

/// The tags at one calling context. A tag is kept as itself, so the tags of a halo
/// exchange (one per direction, some directions missing on a grid's boundary ranks) are the
/// same in every iteration and on every rank; once the context has seen more distinct tags
/// than a stencil has directions, a tag not among the recent ones is kept as its step from
/// the last ([`TAG_STEP`]): tags that count (`tag = step`, `tag = 10·step + direction`)
/// then repeat their steps. Readers only need the last tag.
#[derive(Clone, Debug, Default)]
struct TagHistory {
    last: u32,
    /// Encoding only: the distinct tags seen last, more than a 3-D stencil's 26
    /// directions.
    recent: Recent<u32, 32>,
}

/// Key flag (above the event flags): a point-to-point call's tag is kept as its step from
/// the last tag at the same context.
pub const TAG_STEP: u32 = 1 << 31;

impl Relative {
    /// The encoder's state at a precision level (0–100; 100 keeps every value exact).
    pub fn with_precision(precision: u8) -> Relative {
        Relative {
            blur: Blur::new(precision),
            ..Relative::default()
        }
    }

    /// The thread's MPI rank (`None`: not a rank, or not known): both sides of the
    /// encoding must be given the same.
    pub fn set_rank(&mut self, rank: Option<i64>) {
        self.rank = rank.filter(|rank| *rank >= 0);
    }

    pub fn rank(&self) -> Option<i64> {
        self.rank
    }

    /// Remembers the peer a point-to-point call at `site` ended with (exactly, or drawn
    /// from a histogram), as the next call there will see it.
    fn remember_peer(&mut self, site: (u16, u32), peer: i64, exact: bool, form: u32) {
        if let Some(rank) = self.rank {
            let mask = if exact && peer >= 0 { peer ^ rank } else { -1 };
            let form = match form {
                PEER_DOUBLED => 1,
                PEER_HALVED => 2,
                _ => 0,
            };
            self.site_masks.insert(site, (mask, form));
        }
    }

    /// Continues encoding at `precision` (a stream over its budget): only which values
    /// become histograms changes, which the keys say, so readers need not know.
    pub(super) fn degrade(&mut self, precision: u8) {
        self.blur = Blur::new(precision);
    }

    /// The tag kept for `tag` at `context`, and whether it is kept as a step; `tag` is
    /// remembered. After a wildcard (negative) tag, the tag is kept as itself.
    /// The third value: whether the context has seen enough distinct tags for its steps to
    /// count (before, a tag that changes may still be one of a stencil's directions).
    fn relative_tag(&mut self, context: u32, tag: u32) -> (u32, bool, bool) {
        let history = self.context_tag.entry(context).or_default();
        let counting = history.recent.is_full() && history.last as i32 >= 0;
        let stepping = !history.recent.remember(tag) && counting;
        let kept = if stepping {
            tag.wrapping_sub(history.last)
        } else {
            tag
        };
        history.last = tag;
        (kept, stepping, counting)
    }

    /// The tag a kept one stands for (the inverse of [`Relative::relative_tag`]).
    fn absolute_tag(&mut self, context: u32, kept: u32, stepping: bool) -> u32 {
        let history = self.context_tag.entry(context).or_default();
        history.last = if stepping {
            history.last.wrapping_add(kept)
        } else {
            kept
        };
        history.last
    }

    fn advance(
        &mut self,
        key: &EventKey,
        file_plus_one: u64,
        offset: i64,
        class: Option<CallClass>,
    ) {
        if file_plus_one != 0 {
            self.files_touched = self.files_touched.max(file_plus_one);
            self.last_file = file_plus_one;
            self.context_file.insert(key.context, file_plus_one);
            self.bound.insert(key.handle, file_plus_one);
            if class == Some(CallClass::Dup) && !key.failed() {
                self.bound.insert(key.result() as u64, file_plus_one);
            }
            if offset >= 0 {
                let moved = if matches!(class, Some(CallClass::Read | CallClass::Write)) {
                    key.bytes() as i64
                } else {
                    0
                };
                self.file_end
                    .insert(file_plus_one, offset.wrapping_add(moved));
                if matches!(class, Some(CallClass::Read | CallClass::Write))
                    && exact_size(key.flags)
                {
                    let own = (file_plus_one, key.call, key.context, key.request);
                    self.own_end.entry(own).or_default().end = offset.wrapping_add(moved);
                }
            }
        }
    }

    /// [`irregular_step`] at `context`: its recent steps, and its periods at the access's
    /// size where the key keeps the size (lossless, the context's sizes not wandering).
    fn irregular_step(
        &mut self,
        context: u32,
        class: Option<CallClass>,
        request: u64,
        blurring: bool,
        step: i64,
        apart: bool,
    ) -> bool {
        let sized = !blurring
            && !self
                .context_sizes
                .get(&context)
                .is_some_and(WanderingSizes::is_wandering);
        irregular_step(
            self.context_deltas.entry(context).or_default(),
            self.site_periods
                .entry(periods_site(context, class, request, sized))
                .or_default(),
            step,
            apart,
        )
    }

    /// The file (index + 1) a [`FileRef::Delta`] at `context` is taken after: the last
    /// there, or at the call site's first use the thread's last file.
    fn site_file(&self, context: u32) -> u64 {
        self.context_file
            .get(&context)
            .copied()
            .unwrap_or(self.last_file)
    }

    /// The key of `event`, its offset never put into a column.
    pub fn encode(&mut self, event: &Event, class: Option<CallClass>) -> EventKey {
        self.encode_with(event, class, None, false).0
    }

    /// As [`Relative::encode`], judging the event's sizes, offset and peer at the precision
    /// level as an event pushed one by one is (a repetition of a block the tracer folded:
    /// its call sites must get the keys its single occurrences get, or they cannot fold
    /// together).
    pub(super) fn encode_blurring(&mut self, event: &Event, class: Option<CallClass>) -> EventKey {
        let blurring = !self.blur.is_lossless();
        self.encode_with(event, class, None, blurring).0
    }

    /// The key of `event`; the offset of an access at an irregular calling context (see
    /// [`IrregularSteps`]: random accesses) goes into `column` instead, with the access
    /// order: the key is then the same every time and the events fold. Returns the key and
    /// the order of this event.
    pub fn encode_into_column(
        &mut self,
        event: &Event,
        class: Option<CallClass>,
        column: &mut Column,
    ) -> (EventKey, u8) {
        let blurring = !self.blur.is_lossless();
        self.encode_with(event, class, Some(column), blurring)
    }

    /// Takes `times` more repetitions of `event` (a block's, beyond the three its keys
    /// were encoded from) into its site's sizes rule, so a loop the tracer folded counts
    /// its repetitions there as one pushed event by event would: a size that changes once
    /// in a thousand steps is not a size that keeps being new.
    pub(super) fn repeat_sizes(&mut self, event: &Event, class: Option<CallClass>, times: u64) {
        if matches!(class, Some(CallClass::Read | CallClass::Write))
            && event.flags & event_flags::FAILED == 0
            && (event.request as i64) >= 0
        {
            if let Some(sizes) = self.context_sizes.get_mut(&event.context) {
                sizes.repeat(times);
            }
        }
    }

    /// The column entry (site, entry) the event just encoded without a column would have
    /// taken because its offset jitters ([`JitterSteps`]), if so: a block's position then
    /// keeps its offsets in the column too, so the steps of a dataset per step fold
    /// whether the tracer folded some of them or not.
    pub(super) fn take_jitter(&mut self) -> Option<(u64, i64)> {
        self.jittered.take()
    }

    /// Takes `times` more repetitions of a jump by `delta` at `context` into its jitter
    /// rule (a block's, beyond the three its keys were encoded from), as
    /// [`Relative::repeat_sizes`] does for sizes.
    pub(super) fn repeat_jitter(&mut self, context: u32, delta: i64, times: u64) {
        if let Some(jitter) = self.context_jitter.get_mut(&context) {
            jitter.repeat(delta, times);
        }
    }

    /// `blurring`: the precision level judges this event's values (events pushed one by one
    /// and repetitions of blocks; not a block's probe for whether its keys repeat).
    fn encode_with(
        &mut self,
        event: &Event,
        class: Option<CallClass>,
        mut column: Option<&mut Column>,
        blurring: bool,
    ) -> (EventKey, u8) {
        let file_plus_one = event.file.map_or(0, |file| file as u64 + 1);
        let file = if file_plus_one == 0 {
            FileRef::None
        } else if self.bound.get(&event.handle) == Some(&file_plus_one) {
            FileRef::Bound
        } else if file_plus_one == self.files_touched.wrapping_add(1) {
            FileRef::New
        } else {
            FileRef::Delta(file_plus_one.wrapping_sub(self.site_file(event.context)) as i64)
        };
        let mut offset = if event.offset < 0 {
            OffsetRef::Unknown
        } else {
            // A file's first access is taken from offset 0, where it was opened: a loop
            // whose first iteration makes it (a log opened before the steps) is then
            // iterations alike, not the first one apart and a loop of the others.
            let end = self.file_end.get(&file_plus_one).copied().unwrap_or(0);
            OffsetRef::Delta(event.offset.wrapping_sub(end))
        };
        let mut order = 0;
        if let (Some(CallClass::Read | CallClass::Write), true, false) = (
            class,
            event.offset >= 0,
            event.flags & event_flags::FAILED != 0,
        ) {
            let direction = (file_plus_one, class == Some(CallClass::Read));
            if let Some(end) = self.direction_end.get(&direction) {
                if event.offset == *end {
                    order |= CONSECUTIVE;
                }
                if event.offset >= *end {
                    order |= SEQUENTIAL;
                }
            }
            self.direction_end
                .insert(direction, event.offset.saturating_add(event.result.max(0)));
        }
        let (request, result) =
            positional::relative(event.flags, event.offset, event.request, event.result);
        let mut key_order = order;
        // Every step counts (those of repetitions the tracer folded too); only events
        // pushed one by one may go to the column.
        let after_irregular_seek = self.sought_irregularly.remove(&file_plus_one).is_some();
        if let (OffsetRef::Delta(delta), true) = (offset, blurring) {
            if self.blur.offset(event.call, event.context, delta) {
                offset = OffsetRef::Blurred;
                key_order = 0;
                if class == Some(CallClass::Seek) {
                    self.sought_blurred.insert(file_plus_one, ());
                }
            }
        }
        let order_in_leaf = blurring
            && offset != OffsetRef::Blurred
            && matches!(class, Some(CallClass::Read | CallClass::Write))
            && self.sought_blurred.remove(&file_plus_one).is_some();
        if order_in_leaf {
            key_order = 0;
        }
        if blurring {
            // After an access at a drawn offset, a reader's idea of where the file's last
            // access ended is drawn too: the next offset kept exactly is kept whole, so it
            // and what follows it come back exact.
            if (offset == OffsetRef::Blurred && class != Some(CallClass::Seek)) || order_in_leaf {
                self.after_drawn.insert(file_plus_one, ());
            } else if let OffsetRef::Delta(_) = offset {
                if self.after_drawn.remove(&file_plus_one).is_some() {
                    offset = OffsetRef::First(event.offset);
                }
            }
        }
        self.jittered = None;
        // A read or write that keeps missing the file's previous access by a new distance
        // but its own last access by the same one: one of several streams the site
        // interleaves, each of its own stride — taken from its own last (lossless only;
        // back to the file's if its size goes to the column, where a reader would not know
        // it before the offset).
        let file_delta = match offset {
            OffsetRef::Delta(delta) => Some(delta),
            _ => None,
        };
        let mut own_delta_now = None;
        if let (Some(file_delta), false, Some(CallClass::Read | CallClass::Write), true) =
            (file_delta, blurring, class, file_plus_one != 0)
        {
            let own = (file_plus_one, event.call, event.context, request);
            if let Some(last) = self.own_end.get_mut(&own) {
                let own_delta = event.offset.wrapping_sub(last.end);
                own_delta_now = Some(own_delta);
                if last.own_delta == Some(own_delta) && last.file_delta != file_delta {
                    offset = OffsetRef::OwnDelta(own_delta);
                }
                last.file_delta = file_delta;
                last.own_delta = Some(own_delta);
            } else {
                self.own_end.insert(
                    own,
                    OwnEnd {
                        end: 0,
                        file_delta,
                        own_delta: None,
                    },
                );
            }
        }
        if let (OffsetRef::Delta(delta) | OffsetRef::OwnDelta(delta), Some(file_delta)) =
            (offset, file_delta)
        {
            let apart = file_delta != 0 || own_delta_now.is_some_and(|own| own != 0);
            let irregular =
                self.irregular_step(event.context, class, request, blurring, delta, apart)
                    || after_irregular_seek;
            // Jumps that jitter (HDF5's metadata blocks among a dataset per step's data)
            // go to the column as irregular ones do; a block's too (`take_jitter`).
            let jitters = !irregular
                && delta != 0
                && self
                    .context_jitter
                    .entry(event.context)
                    .or_default()
                    .step(delta);
            if let Some(entry) = column_entry(file_delta, order) {
                match column.as_deref_mut() {
                    Some(column) if irregular || jitters => {
                        column.push_offset(site(event.call, event.context), entry);
                        offset = OffsetRef::Column;
                        key_order = 0;
                        if irregular && class == Some(CallClass::Seek) {
                            self.sought_irregularly.insert(file_plus_one, ());
                        }
                    }
                    None if jitters => {
                        self.jittered = Some((site(event.call, event.context), entry));
                    }
                    _ => {}
                }
            }
        }
        let mut flags = event.flags & !TAG_STEP;
        let aux = if class == Some(CallClass::PointToPoint) {
            let (mut tag, stepping, counting) = self.relative_tag(event.context, tag_of(event.aux));
            if stepping {
                flags |= TAG_STEP;
            }
            // A tag as the key keeps it (a step when tags count, so `tag = step` repeats
            // and stays exact) blurs once the context's tags are known to wander.
            let kept = tag as i64 | (stepping as i64) << 32;
            if blurring && counting && self.blur.tag(event.call, event.context, kept) {
                // The tag is the leaf's histogram's (absolute), not a step.
                flags = flags & !TAG_STEP | BLURRED_TAG;
                tag = 0;
            }
            let peer = event.aux as u32 as i32 as i64;
            let site = (event.call, event.context);
            let form = match self.rank {
                Some(rank) if peer >= 0 => peer_form(
                    peer ^ rank,
                    self.site_masks.get(&site).copied().unwrap_or((-1, 0)),
                ),
                _ => 0,
            };
            if form != 0 {
                // The partner of a doubling (or halving) round: the key holds no peer.
                flags |= form;
                self.remember_peer(site, peer, true, form);
                with_tag(0, tag)
            } else if blurring && peer >= 0 && self.blur.peer(event.call, event.context, peer) {
                // The peer is the leaf's histogram's.
                flags |= BLURRED_PEER;
                self.remember_peer(site, peer, false, 0);
                with_tag(0, tag)
            } else {
                self.remember_peer(site, peer, true, 0);
                with_tag(event.aux, tag)
            }
        } else if blurring
            && class == Some(CallClass::Completion)
            && event.flags & event_flags::COMPLETED_FROM != 0
        {
            // Below 100 a completion keeps its request count only, as its receive's peer
            // may blur: the sources of irregular exchanges would not fold.
            flags &= !event_flags::COMPLETED_FROM;
            event.aux >> 32
        } else if event.flags & event_flags::OFFSET_IN_AUX != 0 {
            let base = self.context_aux.insert(event.context, event.aux);
            let delta = event.aux.wrapping_sub(base.unwrap_or(0));
            // Explicit offsets whose steps are irregular by the file offsets' rules (judged
            // from where the context's last access ended) go to the column as file offsets
            // do: an HDF5 reader's headers through MPI-IO, as their POSIX sub-calls.
            let end = self
                .aux_end
                .insert(event.context, (event.aux.wrapping_add(request), request));
            let irregular = match (base, end, offset) {
                (Some(_), Some((end, size)), OffsetRef::Unknown) if !blurring => {
                    let step = event.aux.wrapping_sub(end) as i64;
                    self.irregular_step(
                        event.context,
                        class,
                        request,
                        blurring,
                        step,
                        size != request,
                    )
                }
                _ => false,
            };
            if let (true, Some(entry), Some(column)) = (
                irregular,
                column_entry(delta as i64, 0),
                column.as_deref_mut(),
            ) {
                column.push_offset(site(event.call, event.context), entry);
                offset = OffsetRef::Column;
            }
            // An explicit offset's jumps may jitter as a file offset's do (HDF5's MPI-IO
            // driver writes each dataset at the address HDF5 allocated): then the column
            // keeps them, the key none. The file offset is unknown, so the column entry
            // at this site is the explicit offset's.
            let jitters = base.is_some()
                && delta != 0
                && offset == OffsetRef::Unknown
                && self
                    .context_jitter
                    .entry(event.context)
                    .or_default()
                    .step(delta as i64);
            match (jitters, column_entry(delta as i64, 0)) {
                _ if offset == OffsetRef::Column => 0,
                (true, Some(entry)) => {
                    let site = site(event.call, event.context);
                    match column.as_deref_mut() {
                        Some(column) => {
                            column.push_offset(site, entry);
                            offset = OffsetRef::Column;
                        }
                        None => self.jittered = Some((site, entry)),
                    }
                    0
                }
                _ => delta,
            }
        } else if event.flags & event_flags::AUX_IS_FILE != 0 {
            event.aux.wrapping_sub(file_plus_one)
        } else {
            event.aux
        };
        // Sizes blur where a call asks for them; where it reports them — a completion's
        // (MPI_Wait*) and a receive's that got less than it posted for — in its result;
        // where a receive got nothing (a posting, an empty message), in its capacity.
        let capacity = blurring
            && class == Some(CallClass::PointToPoint)
            && result == 0
            && (request != 0
                || self
                    .capacity_sites
                    .contains_key(&(event.call, event.context)));
        if capacity && request != 0 {
            self.capacity_sites.insert((event.call, event.context), ());
        }
        // A read that got other than it asked for (a line `fgets` or `getline` read, a
        // short read at the end of a file) varies in its result, not its request.
        let by_result = match class {
            Some(CallClass::Completion) => true,
            Some(CallClass::PointToPoint) => result != request as i64 && !capacity,
            Some(CallClass::Read) => {
                result != request as i64 && result >= 0 && event.flags & event_flags::FAILED == 0
            }
            _ => false,
        };
        let blur_size = blurring
            && match class {
                Some(CallClass::Completion | CallClass::PointToPoint) if by_result => self
                    .blur
                    .message_size(event.call, event.context, event.result),
                Some(CallClass::PointToPoint) => {
                    self.blur
                        .message_size(event.call, event.context, request as i64)
                }
                Some(CallClass::Read) if by_result => {
                    self.blur.size(event.call, event.context, result)
                }
                Some(CallClass::Read | CallClass::Write | CallClass::Collective) => {
                    self.blur.size(event.call, event.context, request as i64)
                }
                _ => false,
            };
        let blur_result = blur_size && by_result;
        if blur_size {
            flags |= BLURRED_SIZE;
        }
        // Sizes that keep being new (checked for every read and write, in and out of the
        // column, so the decision is the same whichever way an event came).
        let size_in_column = !blur_size
            && matches!(class, Some(CallClass::Read | CallClass::Write))
            && event.flags & event_flags::FAILED == 0
            && (request as i64) >= 0
            && {
                let sizes = self.context_sizes.entry(event.context).or_default();
                if self.record_sizes {
                    sizes.step(request)
                } else {
                    sizes.step_sampled(request)
                }
            }
            && column.is_some();
        if let (true, Some(column)) = (size_in_column, column) {
            column.push_size(site(event.call, event.context), request as i64);
            flags |= SIZE_IN_COLUMN;
        }
        if blur_result {
            flags |= BLURRED_RESULT;
        }
        if blur_size && capacity {
            flags |= BLURRED_CAPACITY;
        }
        if order_in_leaf {
            flags |= ORDER_IN_LEAF;
        }
        if size_in_column {
            // Its own last access is found by its size, which the column now holds.
            if let (OffsetRef::OwnDelta(_), Some(file_delta)) = (offset, file_delta) {
                offset = OffsetRef::Delta(file_delta);
            }
        }
        let mut key = EventKey {
            order: key_order,
            call: event.call,
            context: event.context,
            handle: event.handle,
            file,
            offset,
            request,
            result: result.wrapping_sub(request as i64),
            errno: event.errno,
            aux,
            flags,
            parameters: 0,
        };
        self.advance(&key, file_plus_one, event.offset, class);
        if blur_result {
            // The result is the leaf's histogram's (the key's says 0).
            key.result = (key.request as i64).wrapping_neg();
        } else if blur_size && capacity {
            // The capacity is the leaf's histogram's; the result, 0, is kept as it is.
            key.request = 0;
            key.result = 0;
        } else if blur_size || size_in_column {
            // The size is the leaf's histogram's or the column's; the result stays
            // relative to it.
            key.request = 0;
        }
        (key, order)
    }

    /// The key of the occurrences of `first` at each of `offsets` (the same event at other
    /// offsets, as an offsets record stages them) if every one goes to `column` with the
    /// same key (their order counted in `order_counts`); `None` otherwise, with this state
    /// then part-way (the caller encodes on a copy). Reads and writes at explicit offsets
    /// after the first are encoded in closed form — the steps, the column entries and the
    /// ends the maps would hold — which is what `encode_with` does for each of them.
    pub(super) fn encode_column_run(
        &mut self,
        at: &dyn Fn(i64) -> Event,
        class: Option<CallClass>,
        offsets: &[i64],
        column: &mut Column,
        order_counts: &mut [u64; 2],
    ) -> Option<EventKey> {
        let (&head, rest) = offsets.split_first()?;
        let first = at(head);
        let mut count = |order: u8| {
            order_counts[0] += (order & CONSECUTIVE != 0) as u64;
            order_counts[1] += (order & SEQUENTIAL != 0) as u64;
        };
        let blurring = !self.blur.is_lossless();
        let (key, order) = self.encode_with(&first, class, Some(column), blurring);
        // Sizes in the column are taken event by event (the record's are all one size,
        // so its site soon keeps it in the key again).
        if key.offset != OffsetRef::Column || key.flags & SIZE_IN_COLUMN != 0 {
            return None;
        }
        count(order);
        let positional = event_flags::REQUEST_AT_POSITION
            | event_flags::RESULT_AT_POSITION
            | event_flags::OFFSET_IN_AUX
            | event_flags::FAILED;
        let closed_form = matches!(class, Some(CallClass::Read | CallClass::Write))
            && key.file == FileRef::Bound
            && first.flags & positional == 0
            && self.blur.is_lossless();
        if !closed_form {
            for offset in rest {
                let (this, order) = self.encode_with(&at(*offset), class, Some(column), blurring);
                if this != key {
                    return None;
                }
                count(order);
            }
            return Some(key);
        }
        let file_plus_one = first.file.map_or(0, |file| file as u64 + 1);
        let moved = first.result.max(0);
        let steps = self.context_deltas.entry(first.context).or_default();
        let mut previous = head;
        for offset in rest {
            // Where the previous occurrence ended: the file's end and, as the same call,
            // the end of the last access in its direction.
            let end = previous.wrapping_add(moved);
            let delta = offset.wrapping_sub(end);
            let mut order = 0;
            if *offset == end {
                order |= CONSECUTIVE;
            }
            if *offset >= end {
                order |= SEQUENTIAL;
            }
            if !steps.step(delta) {
                return None;
            }
            column.push_offset(site(first.call, first.context), column_entry(delta, order)?);
            count(order);
            previous = *offset;
        }
        self.file_end
            .insert(file_plus_one, previous.wrapping_add(moved));
        if exact_size(key.flags) {
            // Its own last access too, as `advance` keeps it for each (closed form: reads
            // and writes only, `key.bytes()` being `moved`).
            let own = (file_plus_one, key.call, key.context, key.request);
            self.own_end.entry(own).or_default().end = previous.wrapping_add(moved);
        }
        self.direction_end.insert(
            (file_plus_one, class == Some(CallClass::Read)),
            previous.saturating_add(moved),
        );
        Some(key)
    }

    /// The file (index + 1, 0 = none), offset and aux of the next occurrence of `key`; the
    /// offset of a [`OffsetRef::Column`] key is unknown here (see
    /// [`Relative::decode_from_column`]).
    pub fn decode(&mut self, key: &EventKey, class: Option<CallClass>) -> (u64, i64, u64) {
        self.decode_with(key, class, None, None)
    }

    /// As [`Relative::decode`], for a key whose blurred parameters were drawn: `key`'s
    /// request holds the drawn size (if [`BLURRED_SIZE`]), `offset` the drawn offset (if
    /// [`OffsetRef::Blurred`]); what follows is relative to them.
    pub fn decode_drawn(
        &mut self,
        key: &EventKey,
        class: Option<CallClass>,
        offset: Option<i64>,
    ) -> (u64, i64, u64) {
        self.decode_with(key, class, None, offset)
    }

    /// As [`Relative::decode`], with the column entry of a [`OffsetRef::Column`] key.
    pub fn decode_from_column(
        &mut self,
        key: &EventKey,
        class: Option<CallClass>,
        entry: Option<i64>,
    ) -> (u64, i64, u64) {
        self.decode_with(key, class, entry, None)
    }

    fn decode_with(
        &mut self,
        key: &EventKey,
        class: Option<CallClass>,
        entry: Option<i64>,
        drawn_offset: Option<i64>,
    ) -> (u64, i64, u64) {
        let file_plus_one = match key.file {
            FileRef::None => 0,
            FileRef::Bound => self.bound.get(&key.handle).copied().unwrap_or(0),
            FileRef::New => self.files_touched.wrapping_add(1),
            FileRef::Delta(delta) => self.site_file(key.context).wrapping_add(delta as u64),
        };
        let end = self.file_end.get(&file_plus_one).copied().unwrap_or(0);
        // An MPI-IO explicit offset whose jumps jitter is in the column (its file offset
        // is unknown, as ever).
        let aux_in_column = key.flags & event_flags::OFFSET_IN_AUX != 0;
        let offset = match (key.offset, entry) {
            (OffsetRef::Column, _) if aux_in_column => UNKNOWN,
            (OffsetRef::Unknown, _) | (OffsetRef::Column, None) => UNKNOWN,
            (OffsetRef::First(offset), _) => offset,
            (OffsetRef::Delta(delta), _) => end.wrapping_add(delta),
            (OffsetRef::OwnDelta(delta), _) => self
                .own_end
                .get(&(file_plus_one, key.call, key.context, key.request))
                .map_or(UNKNOWN, |own| own.end.wrapping_add(delta)),
            (OffsetRef::Column, Some(entry)) => end.wrapping_add(column_parts(entry).0),
            (OffsetRef::Blurred, _) => drawn_offset.unwrap_or(UNKNOWN),
        };
        self.advance(key, file_plus_one, offset, class);
        let aux = if class == Some(CallClass::PointToPoint) {
            // A blurred tag was drawn into the key as itself: never a step.
            let stepping = key.flags & TAG_STEP != 0 && key.flags & BLURRED_TAG == 0;
            let mut aux = with_tag(
                key.aux,
                self.absolute_tag(key.context, tag_of(key.aux), stepping),
            );
            let site = (key.call, key.context);
            let form = key.flags & (PEER_DOUBLED | PEER_HALVED);
            if let (Some(rank), true) = (self.rank, form != 0) {
                let (last, _) = self.site_masks.get(&site).copied().unwrap_or((-1, 0));
                let mask = if form == PEER_DOUBLED {
                    last.wrapping_mul(2)
                } else {
                    last / 2
                };
                aux = (aux & !0xffff_ffff) | (mask ^ rank) as u32 as u64;
            }
            let exact = key.flags & BLURRED_PEER == 0;
            self.remember_peer(site, aux as u32 as i32 as i64, exact, form);
            aux
        } else if key.flags & event_flags::OFFSET_IN_AUX != 0 {
            let base = self.context_aux.get(&key.context).copied().unwrap_or(0);
            let delta = match (key.offset, entry) {
                (OffsetRef::Column, Some(entry)) => column_parts(entry).0 as u64,
                _ => key.aux,
            };
            let aux = base.wrapping_add(delta);
            self.context_aux.insert(key.context, aux);
            aux
        } else if key.flags & event_flags::AUX_IS_FILE != 0 {
            key.aux.wrapping_add(file_plus_one)
        } else {
            key.aux
        };
        (file_plus_one, offset, aux)
    }
}

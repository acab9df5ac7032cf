//! Walking a trace without expanding it: the visitor API every analysis uses.
//!
//! The walk visits each leaf of each folded stream with the number of occurrences it stands
//! for, so a loop of 10^9 identical iterations costs what two iterations cost. A loop whose
//! iterations touch different files (`open("ckpt-%d")` in a loop) is walked iteration by
//! iteration, because its figures belong to different files; as soon as two iterations in a
//! row resolve the same files, the rest are taken in bulk. In a stream where some calls'
//! sizes are in its column (sizes that keep being new), the loops around those calls are
//! walked iteration by iteration and each such call is visited with its own size: that
//! stream is as long as its column anyway.
//!
//! Writing an analysis is implementing [`Visitor`]: one method per call class, each
//! defaulting to [`Visitor::event`], and calling [`walk`].

use std::sync::Arc;

use cairn_compress::fold::Leaf;
use cairn_compress::hash::FastMap;
use cairn_compress::histogram::{Blurred, Histogram};
use cairn_compress::stats::Stats;
use cairn_compress::stream::column_site;
use cairn_compress::stream::{
    with_column_entry, Body, DecodedBodies, EventKey, Item, OffsetRef, RankSet, Relative,
    BLURRED_CAPACITY, BLURRED_RESULT, BLURRED_SIZE, MEMBER_SIZES, SIZE_IN_COLUMN,
};
use cairn_model::{Call, CallClass, Layer};

use crate::{CallInfo, Process, Stream, Trace};

/// One leaf of a folded stream, standing for `count` events.
pub struct Occurrence<'a> {
    pub trace: &'a Trace,
    pub process: &'a Process,
    pub stream: &'a Stream,
    pub call: &'a CallInfo,
    pub layer: Layer,
    pub class: CallClass,
    /// The exactly-kept fields (sizes, result, errno, handle, flags, offset encoding).
    /// The call's key, with its own request and result where the column held one of them.
    pub key: EventKey,
    /// The file these `count` events touched.
    pub file: Option<u32>,
    /// How many events this visit stands for.
    pub count: u64,
    /// Their total duration in ns: exact when the leaf stands for exactly these events,
    /// otherwise this visit's share of the leaf's total. An AIO completion's is its
    /// latency from submission ([`Call::latency_in_aux`]).
    pub time: f64,
    /// Statistics of the leaf's durations over all its occurrences in the stream (in a
    /// stream several ranks share: over all of those ranks' occurrences).
    pub duration: &'a Stats,
    /// Statistics of the compute time before each occurrence.
    pub gap: &'a Stats,
    /// Lowest offset and highest offset + size over all the leaf's occurrences (-1: none).
    pub offset_low: i64,
    pub offset_high: i64,
    /// The rank whose single occurrence took longest (`duration.max`): this process's rank,
    /// or in a stream several ranks share the one that was slowest. `None` without ranks.
    pub slowest_rank: Option<u32>,
    /// Of a leaf of irregular accesses (offsets in the stream's column): how many of all
    /// its occurrences were consecutive and sequential (in a stream ranks share, of the
    /// walked member's).
    pub order_counts: [u64; 2],
    /// Of how many occurrences `order_counts` are (0: all the leaf's, `duration.count`).
    pub order_of: u64,
    /// Parameters a precision level below 100 kept as histograms (over all the leaf's
    /// occurrences), if any.
    pub blurred: Option<&'a Blurred>,
    /// Bytes moved by these `count` events: exact, and for a leaf whose sizes are a
    /// histogram this visit's share of its exact sum (the shares of all visits of all
    /// ranks sharing the leaf add up to it).
    bytes: u64,
    /// How many occurrences of the call site whose sizes are a histogram the walk met
    /// before these: where these fall in the leaf's histogram.
    size_position: u64,
    /// The bytes this one event moved, of a leaf whose sizes are in the column.
    column_size: Option<u64>,
    /// Which leaf this is, the same at every visit (and for every member of a shared
    /// stream): its body's place in the stream's bytes and its place in that body. (The
    /// leaf's figures are decoded afresh at each visit, so their address names nothing.)
    pub leaf: (usize, usize),
}

impl<'a> Occurrence<'a> {
    /// How many of these `count` events were consecutive and how many sequential
    /// (Darshan's access order): from the key, or for a leaf of irregular accesses this
    /// visit's share of the leaf's counts (the shares of all its visits add up to them).
    pub fn access_order(&self) -> [f64; 2] {
        if self.key.order_in_leaf() {
            let of = match self.order_of {
                0 => self.duration.count,
                own => own,
            };
            let share = self.count as f64 / of.max(1) as f64;
            return self.order_counts.map(|count| count as f64 * share);
        }
        let count = self.count as f64;
        [
            if self.key.is_consecutive() {
                count
            } else {
                0.0
            },
            if self.key.is_sequential() { count } else { 0.0 },
        ]
    }

    pub fn failed(&self) -> bool {
        self.key.failed()
    }

    /// Bytes moved by all `count` events (exact at every precision level).
    pub fn bytes(&self) -> u64 {
        if self.key.flags & BLURRED_CAPACITY != 0 {
            // Receives that got nothing; `bytes` holds their capacities' share.
            0
        } else {
            self.bytes
        }
    }

    /// The bytes the call tables count for these events: what reads, writes, messages
    /// and collectives moved, and what an MPI completion's receives got (`MPI_Wait` of a
    /// receive) — 0 for every other call. One rule for every table that adds bytes by
    /// call, so a call's sites add up to its row (the sites of `MPI_Wait` once said 0).
    pub fn counted_bytes(&self) -> u64 {
        let completion = self.layer == Layer::Mpi && self.class == CallClass::Completion;
        if self.class.moves_data() || completion {
            self.bytes()
        } else {
            0
        }
    }

    /// The capacity the `count` receives posted, of a leaf whose capacities are a
    /// histogram ([`BLURRED_CAPACITY`]: receives that got nothing yet): this visit's share
    /// of its exact sum. `None` for other leaves (their key holds their capacity).
    pub fn blurred_capacity(&self) -> Option<u64> {
        (self.key.flags & BLURRED_CAPACITY != 0).then_some(self.bytes)
    }

    /// The size one of these events moved: exact, or for blurred sizes their mean.
    pub fn size(&self) -> u64 {
        if let Some(moved) = self.column_size {
            return moved;
        }
        match self.size_histogram() {
            Some((sizes, shift)) => sizes.mean().round() as i64 + shift,
            None if self.blurred_capacity().is_some() => 0,
            None => return self.key.bytes(),
        }
        .max(0) as u64
    }

    /// The histogram of the sizes these events moved, and what to add to its values (a
    /// read's or write's result relative to its request): `None` when the size is exact,
    /// or the call failed or got nothing. It spans every occurrence of the leaf (every rank
    /// sharing it), so its min, max and moments describe these events' sizes as a whole.
    pub fn size_histogram(&self) -> Option<(&'a Histogram, i64)> {
        if self.column_size.is_some()
            || self.failed()
            || self.key.flags & (BLURRED_SIZE | BLURRED_CAPACITY) != BLURRED_SIZE
        {
            return None;
        }
        let sizes = self.blurred?.size.as_ref()?;
        // A histogram of results holds the bytes themselves; one of requests, the request,
        // from which the result is kept relative.
        let shift = if self.key.flags & BLURRED_RESULT != 0 {
            0
        } else {
            self.key.result
        };
        Some((sizes, shift))
    }

    /// Calls `each(size, count)` for the sizes of these `count` events, the counts adding
    /// up to `count`: one size when it is exact; for a blurred size, bins of its histogram
    /// at their means. The histogram's values are taken in bin order as the walk meets the
    /// call site's occurrences (these are the next `count` of them), so over a whole walk
    /// each bin is counted as often as it holds values — what an analysis binning sizes
    /// (Darshan's bins, common sizes) counts.
    pub fn for_each_size(&self, mut each: impl FnMut(u64, u64)) {
        let binned = |sizes: &Histogram| sizes.bins().iter().map(|bin| bin.count).sum::<u64>();
        let Some((sizes, shift)) = self.size_histogram().filter(|(sizes, _)| binned(sizes) > 0)
        else {
            each(self.size(), self.count);
            return;
        };
        let mut left = self.count;
        let mut at = self.size_position % binned(sizes);
        while left > 0 {
            // The bins from `at` on, wrapping round (a site met more often than its
            // histogram counts — a damaged trace — starts again).
            let mut start = 0;
            for bin in sizes.bins() {
                let end = start + bin.count;
                if at < end && left > 0 {
                    let share = (end - at).min(left);
                    each((bin.mean.round() as i64 + shift).max(0) as u64, share);
                    left -= share;
                    at += share;
                }
                start = end;
            }
            at = 0;
        }
    }

    /// A POSIX call the MPI library made inside an MPI-IO call of the program.
    pub fn inside_mpiio(&self) -> bool {
        self.key.flags & cairn_model::event_flags::INSIDE_MPIIO != 0
    }

    /// A call a library (HDF5...) made inside a library call of the program: an MPI-IO,
    /// MPI or POSIX call below it.
    pub fn inside_library(&self) -> bool {
        self.key.flags & cairn_model::event_flags::INSIDE_LIBRARY != 0
    }

    /// The runtime's I/O (before `main`, inside `MPI_Init`/`MPI_Finalize`).
    pub fn is_runtime(&self) -> bool {
        self.key.flags & cairn_model::event_flags::RUNTIME != 0
    }
}

/// An analysis: one handler per call class. Each defaults to [`Visitor::event`].
#[allow(unused_variables)]
pub trait Visitor {
    fn event(&mut self, occurrence: &Occurrence) {}
    fn open(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn close(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn read(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn write(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn seek(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn sync(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn flush(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn stat(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn meta(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn dup(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn mmap(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn point_to_point(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn collective(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    fn completion(&mut self, occurrence: &Occurrence) {
        self.event(occurrence)
    }
    /// A call this build does not know (from a newer cairn): no class, no layer.
    fn unknown(&mut self, stream: &Stream, call: &CallInfo, count: u64) {}
}

fn dispatch(visitor: &mut impl Visitor, occurrence: &Occurrence) {
    match occurrence.class {
        CallClass::Open => visitor.open(occurrence),
        CallClass::Close => visitor.close(occurrence),
        CallClass::Read => visitor.read(occurrence),
        CallClass::Write => visitor.write(occurrence),
        CallClass::Seek => visitor.seek(occurrence),
        CallClass::Sync => visitor.sync(occurrence),
        CallClass::Flush => visitor.flush(occurrence),
        CallClass::Stat => visitor.stat(occurrence),
        CallClass::Meta => visitor.meta(occurrence),
        CallClass::Dup => visitor.dup(occurrence),
        CallClass::Mmap => visitor.mmap(occurrence),
        CallClass::Lifecycle => visitor.event(occurrence),
        CallClass::PointToPoint => visitor.point_to_point(occurrence),
        CallClass::Collective => visitor.collective(occurrence),
        CallClass::Completion => visitor.completion(occurrence),
    }
}

struct StreamWalk<'a, V> {
    trace: &'a Trace,
    stream: &'a Stream,
    process: &'a Process,
    relative: Relative,
    visitor: &'a mut V,
    /// Per call site of blurred sizes: their exact total over the walked streams and the
    /// occurrences this walk visited so far (see [`StreamWalk::blurred_bytes`]).
    blurred_pools: &'a mut BlurredPools,
    /// Per loop whose counts are a histogram (by where its body is stored, the same for
    /// every member of a shared stream): its exact iteration total over all the members
    /// and the occurrences walked so far, so the members' shares add up to it.
    loop_pools: &'a mut LoopPools,
    /// The stream's column, read in event order, when some sizes are in it.
    column: Option<cairn_compress::stream::ColumnCursor<'a>>,
    /// Per loop body (by where it is stored): whether it holds a leaf that reads the column.
    reads_column: FastMap<usize, bool>,
    /// Per leaf (by where it is stored) whose column entry stands for several occurrences
    /// in a row: occurrences met, and the entry last taken.
    repeats: FastMap<(usize, usize), (u64, i64)>,
    /// The bodies that read the column, decoded once per walk: such a body is walked at
    /// every iteration of its loops.
    decoded: DecodedBodies<'a>,
}

impl<'a, V: Visitor> StreamWalk<'a, V> {
    fn visit_leaf(
        &mut self,
        (leaf, place): (&Leaf<EventKey>, (usize, usize)),
        multiplier: u64,
        share: f64,
        files: &mut Vec<u64>,
    ) {
        let key = &leaf.key;
        let (file_plus_one, _, _) = self.relative.decode(key, self.trace.class_of(key.call));
        // Out-of-range files (only in a damaged trace) compare as "none", so a loop whose
        // file steps past the stream's table settles instead of being walked forever.
        let in_range = file_plus_one <= self.stream.files.len() as u64;
        files.push(if in_range { file_plus_one } else { 0 });
        let call = &self.trace.calls[key.call as usize];
        let (Some(layer), Some(class)) = (call.layer(), call.class()) else {
            self.visitor.unknown(self.stream, call, multiplier);
            return;
        };
        let file = self.stream.file(file_plus_one);
        // A leaf whose sizes are in the column is only in a stream walked with its column
        // (one event a visit: the loops around it go iteration by iteration).
        let column_size = self.column.as_mut().and_then(|column| {
            let site = column_site(key.call, key.context);
            if key.offset == OffsetRef::Column {
                column.offset(site);
            }
            (key.flags & SIZE_IN_COLUMN != 0).then(|| {
                let repeat = leaf.column_sizes.as_ref().map_or(1, |sizes| sizes.repeat);
                let met = self.repeats.entry(place).or_default();
                let entry = column.repeated_size(site, repeat, met);
                with_column_entry(key, entry)
            })
        });
        // The call's own request and result, where the column held one of them.
        let key = column_size.unwrap_or(*key);
        let key = &key;
        let column_size = column_size.map(|own| own.result().max(0) as u64);
        let (bytes, size_position) = if key.flags & BLURRED_SIZE != 0 && !key.failed() {
            self.blurred_bytes(key, multiplier)
        } else if key.flags & SIZE_IN_COLUMN != 0 && !key.failed() {
            (column_size.unwrap_or(0).saturating_mul(multiplier), 0)
        } else {
            (key.bytes().saturating_mul(multiplier), 0)
        };
        let occurrence = Occurrence {
            trace: self.trace,
            process: self.process,
            stream: self.stream,
            call,
            layer,
            class,
            key: *key,
            file,
            count: multiplier,
            time: if call.call.is_some_and(Call::latency_in_aux) {
                key.aux as f64 * multiplier as f64
            } else {
                leaf.duration.total() * share
            },
            duration: &leaf.duration,
            gap: &leaf.gap,
            offset_low: leaf.offset_low,
            offset_high: leaf.offset_high,
            slowest_rank: self
                .process
                .rank
                .and_then(|rank| u32::try_from((rank as i64).wrapping_add(leaf.slowest)).ok()),
            order_counts: leaf.order_counts,
            order_of: leaf.order_of,
            blurred: leaf.blurred.as_deref(),
            bytes,
            size_position,
            column_size,
            leaf: place,
        };
        dispatch(self.visitor, &occurrence);
    }

    /// The bytes of `count` more occurrences of a leaf whose sizes are a histogram: the
    /// exact total of its call site's blurred leaves in the walked streams (sum of sizes
    /// plus each result's difference) apportioned by occurrence in the order the walk
    /// meets them. Over a whole walk every occurrence is met once, so the shares add up to
    /// the exact total, even where the rank merge kept one rank's values in the histogram
    /// of a part (or a stream) of other ranks; each rank's own share is an estimate.
    /// Also how many of the site's occurrences the walk met before these.
    fn blurred_bytes(&mut self, key: &EventKey, count: u64) -> (u64, u64) {
        let Some(pool) = self.blurred_pools.get_mut(&pool_key(key, self.stream)) else {
            return (0, 0);
        };
        pool.take(count)
    }

    /// Visits `nodes` once, each leaf standing for `multiplier` events and `share` of its
    /// leaf's time; appends the files it resolved to `files`.
    ///
    /// A loop is walked iteration by iteration until one iteration resolves exactly the
    /// files of the one before: the relative state then repeats (each leaf writes back what
    /// it resolved), so every remaining iteration is the same and they are visited at once.
    fn walk(&mut self, nodes: Body<'a>, multiplier: u64, share: f64, files: &mut Vec<u64>) {
        if self.reads_column(nodes) {
            // Walked once per iteration: decoded once.
            let items = self.decoded.get(nodes);
            for (index, item) in items.iter().enumerate() {
                self.visit_item(item, (nodes.id(), index), multiplier, share, files);
            }
        } else {
            for (index, item) in nodes.iter().enumerate() {
                self.visit_item(&item, (nodes.id(), index), multiplier, share, files);
            }
        }
    }

    /// Visits one node of a body (a leaf, or a loop with its iterations); `place`: its
    /// body's id and its index there.
    fn visit_item(
        &mut self,
        item: &Item<'a>,
        place: (usize, usize),
        multiplier: u64,
        share: f64,
        files: &mut Vec<u64>,
    ) {
        match item {
            Item::Leaf(leaf) => self.visit_leaf((leaf, place), multiplier, share, files),
            Item::Loop {
                count,
                body,
                ranks,
                counts,
                own,
            } => {
                let share = self.part_share(share, *ranks);
                let counts = counts.as_deref();
                self.visit_loop(*count, (counts, *own), *body, multiplier, share, files)
            }
        }
    }

    /// Visits a loop standing for `multiplier` of its occurrences. A loop whose counts
    /// differ (a histogram) runs its body the visit's share of their exact sum — of the
    /// walked member's own exact iterations where the loop keeps each member's (`own`:
    /// occurrences and iterations) — so over a whole walk every occurrence is met once and
    /// the iterations add up exactly.
    fn visit_loop(
        &mut self,
        count: u64,
        (counts, own): (Option<&Histogram>, Option<(u64, u64)>),
        body: Body<'a>,
        multiplier: u64,
        share: f64,
        files: &mut Vec<u64>,
    ) {
        let Some(counts) = counts.filter(|_| count > 0) else {
            return self.walk_loop(count, body, multiplier, share, files);
        };
        let (pool_key, occurrences, total) = match own {
            Some((occurrences, iterations)) => (
                (body.id(), self.stream.member),
                occurrences,
                iterations as i128,
            ),
            None => ((body.id(), u32::MAX), counts.count, counts.sum),
        };
        let pool = self.loop_pools.entry(pool_key).or_insert_with(|| Pool {
            occurrences: occurrences as u128,
            total: total.max(0) as u128,
            seen: 0,
        });
        let (iterations, _) = pool.take(multiplier);
        let expected = counts.mean() * multiplier as f64;
        let share = if expected > 0.0 {
            share * iterations as f64 / expected
        } else {
            share
        };
        self.walk_loop(iterations, body, 1, share, files)
    }

    /// Whether walking `body` reads the column (some leaf's size is there): then its
    /// iterations are walked one by one, each such call visited with its own size.
    fn reads_column(&mut self, body: Body<'a>) -> bool {
        if self.column.is_none() {
            return false;
        }
        if let Some(reads) = self.reads_column.get(&body.id()) {
            return *reads;
        }
        let reads = body.iter().any(|item| match item {
            Item::Leaf(leaf) => {
                leaf.key.offset == OffsetRef::Column || leaf.key.flags & SIZE_IN_COLUMN != 0
            }
            Item::Loop { body, .. } => self.reads_column(body),
        });
        self.reads_column.insert(body.id(), reads);
        reads
    }

    /// The walked rank's share of a part's statistics: the part's ranks share them, not
    /// all the stream's.
    fn part_share(&self, share: f64, ranks: Option<&RankSet>) -> f64 {
        match ranks {
            Some(set) => share * self.stream.members.max(1) as f64 / set.len().max(1) as f64,
            None => share,
        }
    }

    fn walk_loop(
        &mut self,
        count: u64,
        body: Body<'a>,
        multiplier: u64,
        share: f64,
        files: &mut Vec<u64>,
    ) {
        let mut remaining = count;
        let mut previous: Option<Vec<u64>> = None;
        let bulk = !self.reads_column(body);
        while remaining > 0 {
            let mut current = Vec::new();
            self.walk(body, multiplier, share / count as f64, &mut current);
            remaining -= 1;
            let settled = bulk && previous.as_ref() == Some(&current);
            files.extend_from_slice(&current);
            if settled && remaining > 0 {
                let mut bulk = Vec::new();
                self.walk(
                    body,
                    multiplier.saturating_mul(remaining),
                    share * remaining as f64 / count as f64,
                    &mut bulk,
                );
                files.push(u64::MAX);
                files.push(remaining);
                break;
            }
            previous = Some(current);
        }
    }
}

/// A call site's blurred sizes in one stored stream (keyed by call, context and the
/// result's difference, which the key keeps exactly).
#[derive(Default)]
struct Pool {
    occurrences: u128,
    total: u128,
    seen: u64,
}

impl Pool {
    /// The share of the exact total that `count` more occurrences stand for (rounded so
    /// that the shares of all occurrences add up to the total).
    /// Also how many occurrences were taken before these.
    fn take(&mut self, count: u64) -> (u64, u64) {
        let occurrences = self.occurrences.max(1);
        let seen = self.seen;
        let before = (seen as u128).min(occurrences);
        self.seen = self.seen.saturating_add(count);
        let after = (self.seen as u128).min(occurrences);
        let share = (self.total * after / occurrences - self.total * before / occurrences) as u64;
        (share, seen)
    }
}

/// By call site (call, context, the result's difference) and, for leaves that keep each
/// member's sizes ([`MEMBER_SIZES`]: writes to each rank's own file), the stream and the
/// member (else 0 and `u32::MAX`: the site's over all streams).
type BlurredPools = FastMap<PoolKey, Pool>;

fn pool_key(key: &EventKey, stream: &Stream) -> PoolKey {
    let (events, member) = if key.flags & MEMBER_SIZES != 0 {
        (Arc::as_ptr(&stream.events) as usize, stream.member)
    } else {
        (0, u32::MAX)
    };
    (key.call, key.context, result_kind(key), events, member)
}

/// A blurred leaf's pool: its call site, how its result is kept (capacities' leaves, whose
/// sums are not bytes, pool apart from sizes' leaves of the same result), and for a leaf
/// that keeps each member's sizes, the stored stream and member.
type PoolKey = (u16, u32, (i64, bool), usize, u32);

fn result_kind(key: &EventKey) -> (i64, bool) {
    (key.result, key.flags & BLURRED_CAPACITY != 0)
}

/// Per loop whose counts are a histogram (by where its body is stored) and the member
/// whose own totals it keeps (`u32::MAX`: the members share its sum).
type LoopPools = FastMap<(usize, u32), Pool>;

/// The blurred call sites of `streams`, over all their leaves and members (each stored
/// stream once).
fn site_pools<'s>(streams: impl Iterator<Item = &'s Stream>) -> BlurredPools {
    /// `member`: gather only the leaves that keep each member's sizes (read as its own),
    /// else only the others.
    fn gather(body: Body, member: Option<&Stream>, pools: &mut BlurredPools) {
        for item in body.iter() {
            match item {
                Item::Leaf(leaf) => {
                    let Some(sizes) = leaf.blurred.as_deref().and_then(|b| b.size.as_ref()) else {
                        continue;
                    };
                    let key = &leaf.key;
                    let own = key.flags & MEMBER_SIZES != 0;
                    if own != member.is_some() {
                        continue;
                    }
                    let total = if key.flags & BLURRED_RESULT != 0 {
                        sizes.sum
                    } else {
                        sizes.sum + key.result as i128 * sizes.count as i128
                    };
                    let pool = pools
                        .entry(match member {
                            Some(stream) => pool_key(key, stream),
                            None => (key.call, key.context, result_kind(key), 0, u32::MAX),
                        })
                        .or_default();
                    pool.occurrences += sizes.count as u128;
                    pool.total += total.max(0) as u128;
                }
                Item::Loop { body, .. } => gather(body, member, pools),
            }
        }
    }
    let mut pools = FastMap::default();
    let mut gathered = std::collections::HashSet::new();
    for stream in streams {
        if !stream.events.has_blurred_sizes() {
            continue;
        }
        if gathered.insert(Arc::as_ptr(&stream.events)) {
            gather(stream.events.nodes(), None, &mut pools);
        }
        if stream.events.has_member_sizes() {
            gather(stream.nodes(), Some(stream), &mut pools);
        }
    }
    pools
}

/// Walks every stream of the trace.
pub fn walk(trace: &Trace, visitor: &mut impl Visitor) {
    let mut blurred_pools = site_pools(trace.streams.iter());
    let mut loop_pools = LoopPools::default();
    for stream in &trace.streams {
        walk_stream_counting(trace, stream, visitor, &mut blurred_pools, &mut loop_pools);
    }
}

/// Walks one stream. Of a blurred leaf several ranks share, the bytes this walk gives are
/// a share of the leaf's exact total ([`walk`] gives the exact total over all members).
pub fn walk_stream(trace: &Trace, stream: &Stream, visitor: &mut impl Visitor) {
    let mut blurred_pools = site_pools(std::iter::once(stream));
    walk_stream_counting(
        trace,
        stream,
        visitor,
        &mut blurred_pools,
        &mut LoopPools::default(),
    );
}

fn walk_stream_counting(
    trace: &Trace,
    stream: &Stream,
    visitor: &mut impl Visitor,
    blurred_pools: &mut BlurredPools,
    loop_pools: &mut LoopPools,
) {
    let mut relative = Relative::default();
    relative.set_rank(stream.events.rank_for(stream.view().delta));
    let mut walker = StreamWalk {
        trace,
        stream,
        process: &trace.processes[stream.process as usize],
        relative,
        visitor,
        blurred_pools,
        loop_pools,
        column: stream
            .events
            .has_column_sizes()
            .then(|| stream.column().cursor()),
        reads_column: FastMap::default(),
        repeats: FastMap::default(),
        decoded: DecodedBodies::default(),
    };
    // The top level is not compared with anything: resolve it item by item.
    let mut files = Vec::new();
    let share = stream.share();
    let top = stream.nodes();
    for (index, item) in top.iter().enumerate() {
        walker.visit_item(&item, (top.id(), index), 1, share, &mut files);
        files.clear();
    }
}

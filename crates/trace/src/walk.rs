//! Walking a trace without expanding it: the visitor API every analysis uses.
//!
//! The walk visits each leaf of each folded stream with the number of occurrences it stands
//! for, so a loop of 10^9 identical iterations costs what two iterations cost. A loop whose
//! iterations touch different files (`open("ckpt-%d")` in a loop) is walked iteration by
//! iteration, because its figures belong to different files; as soon as two iterations in a
//! row resolve the same files, the rest are taken in bulk.
//!
//! Writing an analysis is implementing [`Visitor`]: one method per call class, each
//! defaulting to [`Visitor::event`], and calling [`walk`].

use cairn_compress::fold::Leaf;
use cairn_compress::stats::Stats;
use cairn_compress::stream::{Body, EventKey, Item, RankSet, Relative};
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
    pub key: &'a EventKey,
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
    /// its occurrences were consecutive and sequential.
    pub order_counts: [u64; 2],
}

impl Occurrence<'_> {
    /// How many of these `count` events were consecutive and how many sequential
    /// (Darshan's access order): from the key, or for a leaf of irregular accesses this
    /// visit's share of the leaf's counts (the shares of all its visits add up to them).
    pub fn access_order(&self) -> [f64; 2] {
        if self.key.offset == cairn_compress::stream::OffsetRef::Column {
            let share = self.count as f64 / self.duration.count.max(1) as f64;
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

    /// Bytes moved by all `count` events.
    pub fn bytes(&self) -> u64 {
        self.key.bytes().saturating_mul(self.count)
    }

    /// A POSIX call the MPI library made inside an MPI-IO call of the program.
    pub fn inside_mpiio(&self) -> bool {
        self.key.flags & cairn_model::event_flags::INSIDE_MPIIO != 0
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
}

impl<V: Visitor> StreamWalk<'_, V> {
    fn visit_leaf(
        &mut self,
        leaf: &Leaf<EventKey>,
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
        let occurrence = Occurrence {
            trace: self.trace,
            process: self.process,
            stream: self.stream,
            call,
            layer,
            class,
            key,
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
        };
        dispatch(self.visitor, &occurrence);
    }

    /// Visits `nodes` once, each leaf standing for `multiplier` events and `share` of its
    /// leaf's time; appends the files it resolved to `files`.
    ///
    /// A loop is walked iteration by iteration until one iteration resolves exactly the
    /// files of the one before: the relative state then repeats (each leaf writes back what
    /// it resolved), so every remaining iteration is the same and they are visited at once.
    fn walk(&mut self, nodes: Body, multiplier: u64, share: f64, files: &mut Vec<u64>) {
        for item in nodes.iter() {
            match item {
                Item::Leaf(leaf) => self.visit_leaf(&leaf, multiplier, share, files),
                Item::Loop { count, body, ranks } => {
                    let share = self.part_share(share, ranks);
                    self.walk_loop(count, body, multiplier, share, files)
                }
            }
        }
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
        body: Body,
        multiplier: u64,
        share: f64,
        files: &mut Vec<u64>,
    ) {
        let mut remaining = count;
        let mut previous: Option<Vec<u64>> = None;
        while remaining > 0 {
            let mut current = Vec::new();
            self.walk(body, multiplier, share / count as f64, &mut current);
            remaining -= 1;
            let settled = previous.as_ref() == Some(&current);
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

/// Walks every stream of the trace.
pub fn walk(trace: &Trace, visitor: &mut impl Visitor) {
    for stream in &trace.streams {
        walk_stream(trace, stream, visitor);
    }
}

pub fn walk_stream(trace: &Trace, stream: &Stream, visitor: &mut impl Visitor) {
    let mut walker = StreamWalk {
        trace,
        stream,
        process: &trace.processes[stream.process as usize],
        relative: Relative::default(),
        visitor,
    };
    // The top level is not compared with anything: resolve it item by item.
    let mut files = Vec::new();
    let share = stream.share();
    for item in stream.nodes().iter() {
        match item {
            Item::Leaf(leaf) => walker.visit_leaf(&leaf, 1, share, &mut files),
            Item::Loop { count, body, ranks } => {
                let share = walker.part_share(share, ranks);
                walker.walk_loop(count, body, 1, share, &mut files)
            }
        }
        files.clear();
    }
}

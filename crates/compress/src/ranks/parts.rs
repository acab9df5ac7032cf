//! A group's merged tree while ranks join it: every node (leaf or loop, at any depth) knows
//! which ranks have it, its values as its first rank has them and how they change with the
//! rank; a rank's tree is aligned with it level by level (a loop of the rank matches a loop
//! of the group whose count fits, and their bodies are aligned in turn), so a rank with
//! fewer neighbours than another shares the loop and lacks a few of its leaves.

use std::cell::Cell;
use std::sync::Arc;

use super::align::{align, Step};
use cairn_model::{event_flags, CallClass};

use crate::fold::{body_runs, Leaf, Node};
use crate::hash::FastMap;
use crate::histogram::{Blurred, Histogram};
use crate::stats::Stats;
use crate::stream::{
    pair_sums, EventKey, FileRef, MemberTotals, OffsetRef, RankSet, RankSlopes, Sharing,
    BLURRED_SIZE, MEMBER_EXTENTS, MEMBER_SIZES,
};

const FIELDS: usize = RankSlopes::FIELDS;
const HANDLE: usize = 0;
const REQUEST: usize = 3;
const RESULT: usize = 4;
const AUX: usize = 5;
const OFFSET_LOW: usize = 6;
const OFFSET_HIGH: usize = 7;

/// Largest alignment (a body's parts times a rank's nodes there) tried: beyond it a rank
/// whose structure differs starts a group of its own. An iteration of a multigrid solver
/// on a 3-D grid (HPCG: eleven halo exchanges of up to 26 neighbours each) is a body of
/// several hundred nodes; at 2^16 cells its boundary ranks made a group each kind. At 2^20
/// real HPCG on 64 ranks (4 × 4 × 4, the first grid with interior ranks) split in two
/// streams, 360 KB: an interior rank's reference CG iteration (946 nodes) against the
/// merged boundary ranks' (1,477 parts) is 1.4 M cells. At 2^22 it is one stream of 207
/// KB, the merge as long (5.8–7.5 s both ways, alternating runs on a noisy VM); the table
/// is 8 bytes a cell, so at most 32 MiB a while.
pub const ALIGNMENT_CELLS: usize = 1 << 22;

/// What is merged of a leaf: its duration and gap statistics, and which rank had the
/// longest single duration (a distance from the member's rank in a member's tree, an
/// absolute rank once merged).
#[derive(Clone, Default)]
struct Merged {
    duration: Stats,
    gap: Stats,
    slowest: i64,
    /// Histograms of blurred parameters, over every rank's values.
    blurred: Option<Box<Blurred>>,
}

impl Merged {
    fn of(leaf: &Leaf<EventKey>) -> Merged {
        Merged {
            duration: leaf.duration,
            gap: leaf.gap,
            slowest: leaf.slowest,
            blurred: leaf.blurred.clone(),
        }
    }

    /// Adds the statistics of `rank`'s leaf (of a job of `job_size` ranks, 0 if not known).
    fn add(&mut self, rank: i64, leaf: &Merged, job_size: i64) {
        if leaf.duration.count > 0
            && (self.duration.count == 0 || leaf.duration.max > self.duration.max)
        {
            self.slowest = rank.wrapping_add(leaf.slowest);
        }
        self.duration.merge(&leaf.duration);
        self.gap.merge(&leaf.gap);
        if let Some(blurred) = &leaf.blurred {
            self.blurred
                .get_or_insert_with(Default::default)
                .merge(blurred, rank, job_size);
        }
    }
}

/// Which ranks have a part: all those of the node around it (most parts: nothing to
/// store per rank), or some of them, increasing.
enum Ranks {
    Enclosing,
    Own(Vec<i64>),
}

impl Ranks {
    fn resolve<'a>(&'a self, enclosing: &'a [i64]) -> &'a [i64] {
        match self {
            Ranks::Enclosing => enclosing,
            Ranks::Own(ranks) => ranks,
        }
    }

    fn admit(&mut self, rank: i64) {
        if let Ranks::Own(ranks) = self {
            ranks.push(rank);
        }
    }
}

/// A node of the merged tree.
pub(super) enum Part {
    // Leaves carry their statistics (histograms): boxed, a loop's body stays compact.
    Leaf(Box<LeafPart>),
    Loop(LoopPart),
}

pub(super) struct LeafPart {
    ranks: Ranks,
    /// What must be equal: call, context, errno, flags, access order and reference kinds.
    shape: [u64; 5],
    leaf: Leaf<EventKey>,
    /// Of the first rank.
    values: [i64; FIELDS],
    /// Decided by the second rank.
    slopes: Option<[i64; FIELDS]>,
    /// The job size modulo which the peer wraps (0: it does not).
    modulus: i64,
    /// The peer's form beyond affine in the rank.
    peer: PeerForm,
    /// Each admitted rank's (rank, lowest offset, highest offset + size), once one rank's
    /// did not follow the slopes (a leaf inside a loop whose counts differ between ranks):
    /// stored per member so every file's extent stays exact.
    extents: Option<Vec<(i64, i64, i64)>>,
    /// Each admitted rank's (rank, count, sum) of its blurred sizes, for a leaf that
    /// accesses a file: stored per member once several ranks share the leaf, so every
    /// file keeps its exact bytes.
    sizes: Option<Vec<(i64, u64, u64)>>,
    /// Each admitted rank's (rank, consecutive, sequential) accesses, for a leaf that
    /// counts its access order ([`EventKey::order_in_leaf`]: accesses at irregular or
    /// blurred offsets): stored per member once several ranks share the leaf, so every
    /// file keeps Darshan's exact order counts.
    orders: Option<Vec<(i64, u64, u64)>>,
    /// Every rank so far has a peer that is the rank XOR the first rank's constant: the
    /// leaf may turn to [`PeerForm::Xor`] when a rank's peer is not affine (recursive
    /// doubling: ranks 0 and 1 exchange with 1 and 0, affine until rank 2's 3).
    xor_possible: bool,
    statistics: Merged,
}

/// What a point-to-point leaf's peer is, beyond the rank's affine function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PeerForm {
    Affine,
    /// The rank XOR a constant (the peer's slope unused).
    Xor,
    /// Affine in the rank, plus `slope` per row of a grid `width` ranks wide: a partner
    /// at the mirrored position of a q × q grid is `q · rank + (1 − q²) · row`. Taken when
    /// the ranks so far are all in the first rank's row and the next one is not.
    Rows {
        width: i64,
        slope: i64,
    },
}

/// How a rank's leaf fits a leaf part: the slopes, the ring size modulo which its peer
/// starts to wrap (0: it does not, or it wrapped already), the weight in an alignment, and
/// the peer's form.
struct LeafFit {
    slopes: [i64; FIELDS],
    wraps: i64,
    weight: u64,
    peer: PeerForm,
    xor_possible: bool,
}

pub(super) struct LoopPart {
    ranks: Ranks,
    /// The first rank's.
    count: i64,
    /// Decided by the second rank.
    slope: Option<i64>,
    body: Vec<Part>,
    /// Below precision 100: the first rank's iteration counts when its occurrences'
    /// differ (a rank fits it exactly only with the same figures).
    counts: Option<Box<Histogram>>,
    /// Every admitted rank's iteration counts, over all their occurrences: what the merged
    /// loop stores when some rank's counts differ (a shared stream's count histogram is
    /// over all its members, so its count and sum stay exact whatever merges it).
    all_counts: Histogram,
    /// Some ranks' counts differ and were let in by the precision level (the loop has no
    /// count slope, its counts are `all_counts`).
    blurred: bool,
    /// Each admitted rank's (rank, occurrences, iterations), in order of admission: a
    /// blurred loop that accesses files stores them per member, so each rank walks its
    /// own exact iterations and every file keeps its exact totals.
    totals: Vec<(i64, u64, u64)>,
}

/// How a rank's nodes must fit a group's.
#[derive(Clone, Copy)]
pub(super) struct Rules<'a> {
    /// Only what SPMD ranks differ by may vary with the rank when a slope is decided (files,
    /// offsets, a peer `rank + c`, an MPI-IO offset): not a loop's count, a handle, a size,
    /// a result, a request count, a root nor an MPI tag (else a rank's loop of 100 steps would match rank 0's
    /// loop of 9 between two log lines, and the next rank would fit neither).
    pub natural: bool,
    /// Every node must match (a rank that cannot be told apart from another by its rank).
    pub complete: bool,
    /// MPI peers may wrap round it (0: unknown).
    pub job_size: i64,
    pub class_of: &'a dyn Fn(u16) -> Option<CallClass>,
    /// The precision level (0–100): below 100, loops whose bodies match but whose
    /// iteration counts differ by at most (100 − precision)% (their means) merge into one
    /// with a histogram of all the ranks' counts.
    pub precision: u8,
    /// Whether loops may start blurring their counts (a loop part that already has goes
    /// on taking counts within the margin).
    pub blur: bool,
    /// Inside a loop whose counts differ between ranks (or with `blur`): a leaf's offset
    /// range need not follow a slope (each rank's is kept, [`LeafPart::extents`]).
    pub extents_free: bool,
}

/// How a rank's node fits a part.
enum Fit {
    Leaf(LeafFit),
    /// `blurred`: the counts differ and the precision level (given) lets them share a
    /// histogram.
    Loop {
        slope: i64,
        plan: Plan,
        blurred: Option<u8>,
    },
}

impl Fit {
    /// What the match is worth in an alignment: a leaf's weight, a loop's matched body's
    /// and one for the loop.
    fn weight(&self) -> u64 {
        match self {
            Fit::Leaf(fit) => fit.weight,
            Fit::Loop { plan, .. } => plan.weight + 1,
        }
    }
}

enum PlanStep {
    Both(usize, usize, Fit),
    Part(usize),
    Item(usize),
}

/// How a rank's nodes go into a body: which match which parts, how they fit.
pub(super) struct Plan {
    steps: Vec<PlanStep>,
    weight: u64,
    /// Leaves of the rank that matched.
    pub(super) matched: u64,
    /// Of those, collective calls.
    pub(super) collectives: u64,
    /// Whether every part and every node matched, at every depth.
    pub(super) complete: bool,
}

impl Plan {
    /// Whether the alignment met every collective call of both sides, and at least one:
    /// ranks with different roles (halves of a job exchanging different messages, the
    /// thesis' table 5.1) then share a loop whose collectives all of them call, each
    /// half's own calls in parts of its ranks, however few leaves they have in common
    /// (thesis 5.1.3: collectives merge even where the loops around them do not).
    pub(super) fn meets_at_every_collective(
        &self,
        parts: &[Part],
        nodes: &[Node<EventKey>],
        rules: Rules<'_>,
    ) -> bool {
        self.collectives > 0
            && collectives_of_parts(parts, rules.class_of) == self.collectives
            && collectives_of_nodes(nodes, rules.class_of) == self.collectives
    }
}

fn collectives_of_nodes(
    nodes: &[Node<EventKey>],
    class_of: &dyn Fn(u16) -> Option<CallClass>,
) -> u64 {
    nodes
        .iter()
        .map(|node| match node {
            Node::Leaf(leaf) => (class_of(leaf.key.call) == Some(CallClass::Collective)) as u64,
            Node::Loop { body, .. } => collectives_of_nodes(body, class_of),
        })
        .sum()
}

fn collectives_of_parts(parts: &[Part], class_of: &dyn Fn(u16) -> Option<CallClass>) -> u64 {
    parts
        .iter()
        .map(|part| match part {
            Part::Leaf(part) => {
                (class_of(part.leaf.key.call) == Some(CallClass::Collective)) as u64
            }
            Part::Loop(part) => collectives_of_parts(&part.body, class_of),
        })
        .sum()
}

/// The slope of a value that moved by `difference` over `distance` ranks: the part's
/// `known` slope once its second rank decided it, else the one this rank implies (`None`
/// if no whole slope does).
fn slope_through(known: Option<i64>, difference: i128, distance: i128) -> Option<i128> {
    match known {
        Some(slope) => Some(slope as i128),
        None if distance == 0 => Some(0),
        None if difference % distance == 0 => Some(difference / distance),
        None => None,
    }
}

/// The grid width and per-row slope with which a peer `residual` away from its affine
/// value fits `rank`, when all of `ranks` (increasing) are in the first one's row and
/// `rank` is not: the narrowest width that divides the job (grids fill it) and leaves a
/// whole slope. Widths up to twice the square root of the job (a grid's rows are about
/// that long, and the search stays short).
fn rows_through(ranks: &[i64], rank: i64, residual: i64, job_size: i64) -> Option<(i64, i64)> {
    let (first, last) = (ranks[0], *ranks.last()?);
    let mut width = (last - first + 1).max(2);
    while width * width <= 4 * job_size && width < job_size {
        let row = |r: i64| r.div_euclid(width);
        let rows = row(rank) - row(first);
        if job_size % width == 0 && row(last) == row(first) && rows != 0 && residual % rows == 0 {
            return Some((width, residual / rows));
        }
        width += 1;
    }
    None
}

/// The size of a ring smaller than the job that a peer `short` below its slope's value
/// wrapped round, `span` ranks from the part's first: one of equal rings the job divides
/// into (a ring per half, per sub-communicator of a split), holding every rank from the
/// first to this one, of 3 ranks or more; 0 if none. (A transpose partner that falls
/// short of `rank + c` by less than the ranks it spans is no ring; two ranks swapping
/// are a pair, which XOR keeps.)
fn ring_of(short: i128, span: i64, job_size: i64) -> i64 {
    i64::try_from(short)
        .ok()
        .filter(|ring| (3..job_size).contains(ring) && job_size % ring == 0 && *ring > span)
        .unwrap_or(0)
}

/// The peer (low 32 bits of an MPI call's aux) and the rest (tag).
fn peer_and_rest(aux: i64) -> (i64, i64) {
    (aux as u64 as u32 as i64, (aux as u64 >> 32) as i64)
}

fn shape_of(key: &EventKey) -> [u64; 5] {
    let file_kind = match key.file {
        FileRef::None => 0,
        FileRef::Bound => 1,
        FileRef::Delta(_) => 2,
        FileRef::New => 3,
    };
    let offset_kind = match key.offset {
        OffsetRef::Unknown => 0,
        OffsetRef::First(_) => 1,
        OffsetRef::Delta(_) => 2,
        OffsetRef::Column => 3,
        OffsetRef::OwnDelta(_) => 5,
        OffsetRef::Blurred => 4,
    };
    [
        key.call as u64,
        key.context as u64,
        key.errno as u32 as u64,
        key.flags as u64,
        key.order as u64 | file_kind << 8 | offset_kind << 16,
    ]
}

/// Field by field, the call and context first: an array's `==` is a call to `memcmp`,
/// and comparing shapes is most of what aligning long bodies does.
fn same_shape(a: &[u64; 5], b: &[u64; 5]) -> bool {
    a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4]
}

/// What a leaf must share with another to match it under natural rules, where no slope
/// moves its request or result: its shape, request and result.
type Matchable = ([u64; 5], i64, i64);

fn matchable(leaf: &Leaf<EventKey>) -> Matchable {
    (
        shape_of(&leaf.key),
        leaf.key.request as i64,
        leaf.key.result,
    )
}

/// How many leaves of `nodes` have a counterpart among the leaves of `parts` with the
/// same key (each taken once): a bound on what an alignment can match. `None` if some
/// part gives no key (anything may match it).
fn leaves_in_common<K: std::hash::Hash + Eq>(
    parts: &[Part],
    nodes: &[Node<EventKey>],
    of_part: &dyn Fn(&LeafPart) -> Option<K>,
    of_leaf: &dyn Fn(&Leaf<EventKey>) -> K,
) -> Option<u64> {
    fn count<K: std::hash::Hash + Eq>(
        parts: &[Part],
        of_part: &dyn Fn(&LeafPart) -> Option<K>,
        into: &mut FastMap<K, u64>,
    ) -> Option<()> {
        for part in parts {
            match part {
                Part::Leaf(part) => *into.entry(of_part(part)?).or_default() += 1,
                Part::Loop(part) => count(&part.body, of_part, into)?,
            }
        }
        Some(())
    }
    fn take<K: std::hash::Hash + Eq>(
        nodes: &[Node<EventKey>],
        of_leaf: &dyn Fn(&Leaf<EventKey>) -> K,
        left: &mut FastMap<K, u64>,
    ) -> u64 {
        let mut found = 0;
        for node in nodes {
            match node {
                Node::Leaf(leaf) => {
                    if let Some(left) = left.get_mut(&of_leaf(leaf)).filter(|left| **left > 0) {
                        *left -= 1;
                        found += 1;
                    }
                }
                Node::Loop { body, .. } => found += take(body, of_leaf, left),
            }
        }
        found
    }
    let mut keys = FastMap::default();
    count(parts, of_part, &mut keys)?;
    Some(take(nodes, of_leaf, &mut keys))
}

/// How many leaves of `nodes` could match one of `parts` under any rules (one of its
/// shape, each taken once): a bound on what an alignment matches.
pub(super) fn shapes_in_common(parts: &[Part], nodes: &[Node<EventKey>]) -> u64 {
    leaves_in_common(parts, nodes, &|part| Some(part.shape), &|leaf| {
        shape_of(&leaf.key)
    })
    .unwrap_or(0)
}

/// Whether a loop body of the group's may match a rank's loop body under natural rules,
/// before aligning them: a third of the fewer leaves must match (or every collective
/// meet), and under natural rules a leaf matches only one of its shape with the same
/// request and result (no slope moves those). The four levels of a multigrid V-cycle are
/// loops of one shape with other sizes: aligning each level's exchange with every other's
/// was most of the merge's time once bodies of hundreds of nodes could be aligned.
fn could_match_a_third(parts: &[Part], nodes: &[Node<EventKey>], rules: Rules<'_>) -> bool {
    if collectives_of_parts(parts, rules.class_of) > 0
        && collectives_of_nodes(nodes, rules.class_of) > 0
    {
        return true;
    }
    // A loop of one call against another (most loops of a load-imbalanced rank): whether
    // the two may pair, without a map.
    if let ([part @ Part::Leaf(_)], [node @ Node::Leaf(_)]) = (parts, nodes) {
        return may_pair(part, node, rules);
    }
    let of_part = |part: &LeafPart| {
        (!part.sizes_move()).then_some((part.shape, part.values[REQUEST], part.values[RESULT]))
    };
    leaves_in_common(parts, nodes, &of_part, &matchable)
        .is_none_or(|found| 3 * found >= leaves_of_parts(parts).min(leaves_of_nodes(nodes)))
}

/// Whether a part and a node may fit, before trying: a leaf only a leaf of its shape
/// (under natural rules also of its request and result unless a slope moves them: most
/// leaves of one call site differ in size), a loop only a loop.
fn may_pair(part: &Part, node: &Node<EventKey>, rules: Rules<'_>) -> bool {
    match (part, node) {
        (Part::Leaf(part), Node::Leaf(leaf)) => {
            let (shape, request, result) = matchable(leaf);
            same_shape(&part.shape, &shape)
                && (!rules.natural
                    || part.sizes_move()
                    || (part.values[REQUEST] == request && part.values[RESULT] == result))
        }
        (Part::Loop(_), Node::Loop { .. }) => true,
        _ => false,
    }
}

/// The nodes of a long body by what a part must share with them to fit, so that an
/// alignment tries only the pairs that may fit, a list a part: most pairs of two long
/// bodies differ, and trying (and remembering) every pair was most of a merge's time.
#[derive(Default)]
struct Candidates {
    /// Leaves by shape, request and result, and by shape ([`may_pair`]).
    by_matchable: FastMap<Matchable, Vec<usize>>,
    by_shape: FastMap<[u64; 5], Vec<usize>>,
    /// A loop fits only a loop with a leaf that matches one of its own at some depth
    /// (a fit matches at least one leaf): loops by their leaves' keys and shapes. Most
    /// nodes of a load-imbalanced rank are loops of a message or two; aligning each with
    /// every loop of the group was most of the merge of such ranks.
    loops_by_matchable: FastMap<Matchable, Vec<usize>>,
    loops_by_shape: FastMap<[u64; 5], Vec<usize>>,
}

impl Candidates {
    fn of(nodes: &[Node<EventKey>]) -> Candidates {
        let mut index = Candidates::default();
        for (at, node) in nodes.iter().enumerate() {
            match node {
                Node::Leaf(leaf) => {
                    let key = matchable(leaf);
                    index.by_shape.entry(key.0).or_default().push(at);
                    index.by_matchable.entry(key).or_default().push(at);
                }
                Node::Loop { body, .. } => for_each_leaf(body, &mut |leaf| {
                    let key = matchable(leaf);
                    for list in [
                        index.loops_by_shape.entry(key.0).or_default(),
                        index.loops_by_matchable.entry(key).or_default(),
                    ] {
                        if list.last() != Some(&at) {
                            list.push(at);
                        }
                    }
                }),
            }
        }
        index
    }

    /// The nodes `part` may fit, ascending.
    fn of_part(&self, part: &Part, rules: Rules<'_>) -> Vec<usize> {
        let (by_matchable, by_shape) = match part {
            Part::Leaf(_) => (&self.by_matchable, &self.by_shape),
            Part::Loop(_) => (&self.loops_by_matchable, &self.loops_by_shape),
        };
        let list = |leaf: &LeafPart| {
            if rules.natural && !leaf.sizes_move() {
                by_matchable.get(&(leaf.shape, leaf.values[REQUEST], leaf.values[RESULT]))
            } else {
                by_shape.get(&leaf.shape)
            }
        };
        match part {
            Part::Leaf(leaf) => list(leaf).cloned().unwrap_or_default(),
            Part::Loop(part) => {
                let mut found = Vec::new();
                for_each_leaf_part(&part.body, &mut |leaf| {
                    found.extend(list(leaf).into_iter().flatten())
                });
                found.sort_unstable();
                found.dedup();
                found
            }
        }
    }
}

/// Calls `each` with every leaf of `nodes`, at every depth, in order.
fn for_each_leaf(nodes: &[Node<EventKey>], each: &mut dyn FnMut(&Leaf<EventKey>)) {
    for node in nodes {
        match node {
            Node::Leaf(leaf) => each(leaf),
            Node::Loop { body, .. } => for_each_leaf(body, each),
        }
    }
}

/// Calls `each` with every leaf part of `parts`, at every depth, in order.
fn for_each_leaf_part(parts: &[Part], each: &mut dyn FnMut(&LeafPart)) {
    for part in parts {
        match part {
            Part::Leaf(leaf) => each(leaf),
            Part::Loop(part) => for_each_leaf_part(&part.body, each),
        }
    }
}

/// Where a rank's node goes among parts and nodes not aligned: its first call site, then
/// for a point-to-point call its peer's distance from the rank. A halo exchange at one call
/// site in rank order (HPCG's, up to 26 neighbours) then keeps every rank's neighbours in
/// that order whichever ones a rank lacks, so a later rank with more of them finds them all
/// in its own order: on a 4 × 4 × 4 grid 26 leaves, one a direction, instead of 34.
fn first_place(node: &Node<EventKey>, rank: i64, rules: Rules<'_>) -> (u32, i64) {
    match node {
        Node::Leaf(leaf) => (
            leaf.key.context,
            peer_distance(&leaf.key, leaf.key.aux as i64, rank, rules),
        ),
        Node::Loop { body, .. } => body
            .first()
            .map_or((0, 0), |node| first_place(node, rank, rules)),
    }
}

/// Whether the key's aux holds a peer in its low 32 bits: a point-to-point call's, or the
/// source a completion of one receive kept (`COMPLETED_FROM`), which ranks merge alike.
fn has_peer(key: &EventKey, rules: Rules<'_>) -> bool {
    match (rules.class_of)(key.call) {
        Some(CallClass::PointToPoint) => true,
        Some(CallClass::Completion) => key.flags & event_flags::COMPLETED_FROM != 0,
        _ => false,
    }
}

/// A point-to-point call's peer minus `rank` (0 for other calls).
fn peer_distance(key: &EventKey, aux: i64, rank: i64, rules: Rules<'_>) -> i64 {
    if has_peer(key, rules) {
        peer_and_rest(aux).0 - rank
    } else {
        0
    }
}

pub(super) fn leaves_of_nodes(nodes: &[Node<EventKey>]) -> u64 {
    nodes
        .iter()
        .map(|node| match node {
            Node::Leaf(_) => 1,
            Node::Loop { body, .. } => leaves_of_nodes(body),
        })
        .sum()
}

pub(super) fn leaves_of_parts(parts: &[Part]) -> u64 {
    parts
        .iter()
        .map(|part| match part {
            Part::Leaf(_) => 1,
            Part::Loop(part) => leaves_of_parts(&part.body),
        })
        .sum()
}

/// A rank's loop as a histogram of its occurrences' counts: its own histogram when they
/// differ (counted as the `runs` occurrences the rank walks, [`Histogram::with_count`]),
/// else `count` that many times. Occurrences are counted from the structure, not the
/// leaves' statistics: a member of an already merged stream has an even share of those.
fn rank_counts(count: u64, counts: &Option<Box<Histogram>>, runs: u64) -> Histogram {
    match counts {
        Some(counts) => (**counts).clone().with_count(runs),
        None => {
            let mut histogram = Histogram::new(crate::histogram::DEFAULT_BINS);
            histogram.add_many(count as i64, runs.max(1), -1);
            histogram
        }
    }
}

/// A leaf's (consecutive, sequential) accesses, if it counts them itself.
fn own_orders(leaf: &Leaf<EventKey>) -> Option<[u64; 2]> {
    leaf.key.order_in_leaf().then_some(leaf.order_counts)
}

/// A leaf's blurred sizes as (count, sum), if it has them and accesses a file (whose bytes
/// they are: kept per rank when ranks share the leaf).
fn own_sizes(leaf: &Leaf<EventKey>) -> Option<(u64, u64)> {
    let touches = leaf.key.file != FileRef::None || leaf.offset_low >= 0;
    let sizes = leaf.blurred.as_ref()?.size.as_ref()?;
    (touches && leaf.key.flags & BLURRED_SIZE != 0).then(|| (sizes.count, sizes.sum.max(0) as u64))
}

/// Whether a leaf of `parts` (at any depth) accesses a file. A loop whose counts differ
/// between ranks is walked by each rank for an even share of their total unless it keeps
/// each member's own: one that accesses files does ([`Finisher`]), so per-file bytes and
/// counts stay exact, and so does one with parts only some ranks have
/// ([`parts_split_by_rank`]); one of messages, collectives and computation alike for all
/// its ranks need not.
fn parts_touch_files(parts: &[Part]) -> bool {
    parts.iter().any(|part| match part {
        Part::Leaf(part) => part.leaf.key.file != FileRef::None || part.leaf.offset_low >= 0,
        Part::Loop(part) => parts_touch_files(&part.body),
    })
}

/// Whether some of `parts` (at any depth) are only some ranks' — a posting one rank makes
/// empty and another not (LAMMPS's migrations): a member walking an even share of the
/// loop around them would visit the wrong ranks' parts, so the loop keeps each member's
/// own iterations too.
fn parts_split_by_rank(parts: &[Part]) -> bool {
    parts.iter().any(|part| {
        matches!(part.ranks(), Ranks::Own(_))
            || matches!(part, Part::Loop(part) if parts_split_by_rank(&part.body))
    })
}

/// Whether two ranks' leaves may share their blurred values' histograms: at the lower of
/// their precision levels, their means are within its margin of each other (any at 0) —
/// the rule a call site applies to two values in a row, applied to the ranks' values (a
/// rank's histogram may already span more: from its trigger on it takes every value).
fn histograms_fit(a: &Option<Box<Blurred>>, b: &Option<Box<Blurred>>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return true;
    };
    [(&a.size, &b.size), (&a.offset, &b.offset), (&a.tag, &b.tag)]
        .into_iter()
        .all(|pair| match pair {
            (Some(a), Some(b)) if a.count > 0 && b.count > 0 => Histogram::within(
                a.precision.min(b.precision),
                a.mean().round() as i64,
                b.mean().round() as i64,
            ),
            _ => true,
        })
}

impl Part {
    /// The node `node` of `rank` (of a job of `job_size` ranks, 0 if not known), which
    /// the ranks `ranks` have; the rank runs the body around it `runs` times.
    fn new(rank: i64, node: Node<EventKey>, ranks: Ranks, (job_size, runs): (i64, u64)) -> Part {
        match node {
            Node::Leaf(leaf) => {
                let mut statistics = Merged::default();
                statistics.add(rank, &Merged::of(&leaf), job_size);
                let sizes = own_sizes(&leaf).map(|own| vec![(rank, own.0, own.1)]);
                let orders = own_orders(&leaf)
                    .map(|[consecutive, sequential]| vec![(rank, consecutive, sequential)]);
                Part::Leaf(Box::new(LeafPart {
                    ranks,
                    shape: shape_of(&leaf.key),
                    values: RankSlopes::values(&leaf),
                    leaf,
                    slopes: None,
                    modulus: 0,
                    peer: PeerForm::Affine,
                    xor_possible: true,
                    extents: None,
                    sizes,
                    orders,
                    statistics,
                }))
            }
            Node::Loop {
                count,
                body,
                counts,
            } => {
                let all_counts = rank_counts(count, &counts, runs);
                let inner = body_runs(count, counts.as_deref(), runs);
                Part::Loop(LoopPart {
                    ranks,
                    count: count as i64,
                    totals: vec![(rank, all_counts.count, all_counts.sum.max(0) as u64)],
                    all_counts,
                    counts,
                    blurred: false,
                    slope: None,
                    body: body
                        .into_iter()
                        .map(|node| Part::new(rank, node, Ranks::Enclosing, (job_size, inner)))
                        .collect(),
                })
            }
        }
    }

    /// A body of the first rank's nodes.
    pub(super) fn body_of(rank: i64, nodes: Vec<Node<EventKey>>, job_size: i64) -> Vec<Part> {
        nodes
            .into_iter()
            .map(|node| Part::new(rank, node, Ranks::Enclosing, (job_size, 1)))
            .collect()
    }

    /// As [`first_place`], for the part's first rank (of `enclosing`, its enclosing
    /// node's ranks).
    fn first_place(&self, enclosing: &[i64], rules: Rules<'_>) -> (u32, i64) {
        match self {
            Part::Leaf(part) => {
                let first = part.ranks.resolve(enclosing).first().copied().unwrap_or(0);
                let distance = peer_distance(&part.leaf.key, part.values[AUX], first, rules);
                (part.leaf.key.context, distance)
            }
            Part::Loop(part) => part.body.first().map_or((0, 0), |inner| {
                inner.first_place(part.ranks.resolve(enclosing), rules)
            }),
        }
    }

    fn ranks(&self) -> &Ranks {
        match self {
            Part::Leaf(part) => &part.ranks,
            Part::Loop(part) => &part.ranks,
        }
    }

    fn ranks_mut(&mut self) -> &mut Ranks {
        match self {
            Part::Leaf(part) => &mut part.ranks,
            Part::Loop(part) => &mut part.ranks,
        }
    }

    /// How `node` of `rank` fits this part (whose enclosing node has the ranks
    /// `enclosing`).
    fn fit(
        &self,
        enclosing: &[i64],
        rank: i64,
        node: &Node<EventKey>,
        rules: Rules<'_>,
        budget: &Cell<usize>,
    ) -> Option<Fit> {
        let ranks = self.ranks().resolve(enclosing);
        match (self, node) {
            (Part::Leaf(part), Node::Leaf(leaf)) => {
                if !same_shape(&part.shape, &shape_of(&leaf.key))
                    || !histograms_fit(&part.statistics.blurred, &leaf.blurred)
                {
                    return None;
                }
                Some(Fit::Leaf(part.fit(
                    ranks,
                    rank,
                    &RankSlopes::values(leaf),
                    rules,
                )?))
            }
            (
                Part::Loop(part),
                Node::Loop {
                    count,
                    body,
                    counts,
                },
            ) => {
                // Exactly: the same count histogram (every rank runs the loop the same
                // number of times in all) and a count affine in the rank. Else, below
                // precision 100, counts whose means are within the margin share a
                // histogram (a load-imbalanced rank's loop of 117 writes merges with
                // another's 103), as long as no count slope was decided.
                let figures = |counts: &Option<Box<Histogram>>| {
                    counts.as_ref().map(|c| (c.count, c.sum, c.min, c.max))
                };
                let exact = (!part.blurred && figures(&part.counts) == figures(counts))
                    .then(|| part.fit_count(ranks, rank, *count, rules))
                    .flatten();
                let (slope, blurred) = match exact {
                    Some(slope) => (slope, None),
                    None if (rules.blur || part.blurred)
                        && part.blurs(*count, counts, rules.precision) =>
                    {
                        (0, Some(rules.precision))
                    }
                    None => return None,
                };
                let inside = Rules {
                    extents_free: rules.extents_free || part.blurred || blurred.is_some(),
                    ..rules
                };
                if rules.natural && !could_match_a_third(&part.body, body, rules) {
                    return None;
                }
                let plan = plan_body(&part.body, ranks, body, rank, inside, budget)?;
                let enough = plan.matched > 0
                    && (3 * plan.matched >= leaves_of_parts(&part.body).min(leaves_of_nodes(body))
                        || plan.meets_at_every_collective(&part.body, body, rules));
                if !enough || (rules.complete && !plan.complete) {
                    return None;
                }
                Some(Fit::Loop {
                    slope,
                    plan,
                    blurred,
                })
            }
            _ => None,
        }
    }

    /// Takes in `node` of `rank`, which fitted as `fit`; `enclosing`: the ranks of the
    /// enclosing node before `rank` joined.
    fn admit(
        &mut self,
        enclosing: &[i64],
        rank: i64,
        node: Node<EventKey>,
        fit: Fit,
        (job_size, runs): (i64, u64),
    ) {
        match (self, node, fit) {
            (Part::Leaf(part), Node::Leaf(leaf), Fit::Leaf(fit)) => {
                let base = part.ranks.resolve(enclosing)[0];
                if fit.wraps > 0 {
                    part.modulus = fit.wraps;
                }
                if part.slopes.is_none() && base != rank {
                    part.slopes = Some(fit.slopes);
                }
                if fit.peer != part.peer {
                    part.peer = fit.peer;
                    part.modulus = 0;
                    if let Some(slopes) = &mut part.slopes {
                        slopes[AUX] = fit.slopes[AUX];
                    }
                }
                part.xor_possible = fit.xor_possible;
                // An offset range no slope gives (only let in inside a loop whose counts
                // differ between ranks): every rank's is kept from now on.
                let (values, slopes) = (part.values, part.slopes);
                let expected = |rank: i64| {
                    let at = |field: usize| {
                        let slope = slopes.map_or(0, |slopes| slopes[field]);
                        values[field].wrapping_add(slope.wrapping_mul(rank - base))
                    };
                    (rank, at(OFFSET_LOW), at(OFFSET_HIGH))
                };
                let own = (rank, leaf.offset_low, leaf.offset_high);
                if part.extents.is_some() || own != expected(rank) {
                    let earlier = part.ranks.resolve(enclosing);
                    let extents = part
                        .extents
                        .get_or_insert_with(|| earlier.iter().map(|r| expected(*r)).collect());
                    extents.push(own);
                }
                if let (Some(sizes), Some(own)) = (&mut part.sizes, own_sizes(&leaf)) {
                    sizes.push((rank, own.0, own.1));
                }
                if let (Some(orders), Some([consecutive, sequential])) =
                    (&mut part.orders, own_orders(&leaf))
                {
                    orders.push((rank, consecutive, sequential));
                }
                part.statistics.add(rank, &Merged::of(&leaf), job_size);
                part.ranks.admit(rank);
            }
            (
                Part::Loop(part),
                Node::Loop {
                    count,
                    body,
                    counts,
                },
                Fit::Loop {
                    slope,
                    plan,
                    blurred,
                },
            ) => {
                let before = part.ranks.resolve(enclosing).to_vec();
                if part.slope.is_none() && before[0] != rank {
                    part.slope = Some(slope);
                }
                let own = rank_counts(count, &counts, runs);
                part.totals.push((rank, own.count, own.sum.max(0) as u64));
                part.all_counts.merge(&own);
                let inner = body_runs(count, counts.as_deref(), runs);
                if let Some(precision) = blurred {
                    part.blurred = true;
                    part.all_counts.precision = part.all_counts.precision.min(precision);
                }
                let parts = std::mem::take(&mut part.body);
                part.body = apply_body(parts, &before, body, plan, rank, (job_size, inner));
                part.ranks.admit(rank);
            }
            _ => unreachable!("a fit is of the kind of its part and node"),
        }
    }
}

impl LeafPart {
    /// Whether a slope moves this leaf's request or result with the rank.
    fn sizes_move(&self) -> bool {
        self.slopes
            .is_some_and(|slopes| slopes[REQUEST] != 0 || slopes[RESULT] != 0)
    }

    /// The slopes with which `values` (of `rank`) fits this leaf, which `ranks` have,
    /// whether its peer fits only modulo the job size (ring neighbours wrapping round), and
    /// the weight of the match: lower for each slope it decides that SPMD ranks rarely
    /// differ by (a handle, a size, a result, a peer other than `rank + c`), so that of two
    /// alignments the natural one wins.
    fn fit(
        &self,
        ranks: &[i64],
        rank: i64,
        values: &[i64; FIELDS],
        rules: Rules<'_>,
    ) -> Option<LeafFit> {
        let distance = rank - ranks[0];
        let deciding = self.slopes.is_none() && distance != 0;
        let differs = |field: usize| values[field] != self.values[field];
        // An aux that changes is a point-to-point peer (its tag stays), an MPI-IO offset or
        // a new communicator's ranks; a request count or a root does not change with the
        // rank.
        let key = &self.leaf.key;
        let point_to_point = has_peer(key, rules);
        let ((base_peer, base_tag), (peer, tag)) =
            (peer_and_rest(self.values[AUX]), peer_and_rest(values[AUX]));
        let aux_moves = if point_to_point {
            tag == base_tag
        } else {
            key.flags & (event_flags::OFFSET_IN_AUX | event_flags::AUX_IS_RANKS) != 0
        };
        if deciding
            && rules.natural
            && (differs(HANDLE)
                || differs(REQUEST)
                || differs(RESULT)
                || (differs(AUX) && !aux_moves))
        {
            return None;
        }
        // A peer and a tag that both change are another message (a grid rank's west
        // neighbour against another's east), under any rules.
        if deciding && point_to_point && base_peer != peer && base_tag != tag {
            return None;
        }
        // The peer may be the rank XOR a constant, as for every rank before.
        let xor_fits = point_to_point
            && tag == base_tag
            && peer ^ rank as u32 as i64 == base_peer ^ ranks[0] as u32 as i64;
        let others = || {
            self.affine(ranks, rank, values, rules, false)
                .map(|fit| fit.0)
        };
        // The peer's slope in the rank, once decided.
        let peer_slope = self.slopes.map_or(0, |slopes| slopes[AUX]);
        let (slopes, wraps, form) = match self.peer {
            PeerForm::Xor if xor_fits => (others()?, 0, PeerForm::Xor),
            PeerForm::Rows { width, slope } if tag == base_tag => {
                let rows = rank.div_euclid(width) - ranks[0].div_euclid(width);
                let expected = base_peer + peer_slope * distance + slope * rows;
                if peer != expected {
                    return None;
                }
                let mut slopes = others()?;
                slopes[AUX] = peer_slope;
                (slopes, 0, self.peer)
            }
            PeerForm::Xor | PeerForm::Rows { .. } => return None,
            PeerForm::Affine => match self.affine(ranks, rank, values, rules, true) {
                Some((slopes, wraps)) => (slopes, wraps, PeerForm::Affine),
                None if self.xor_possible && xor_fits => (others()?, 0, PeerForm::Xor),
                // Not for a neighbour at a constant distance (peer `rank + c`): a rank
                // whose peer is not there is another direction's — on a 4 × 2 grid rank
                // 4's south neighbour is not ranks 1–3's west one a row further.
                None if point_to_point
                    && tag == base_tag
                    && self.slopes.is_some()
                    && peer_slope != 1 =>
                {
                    let (width, slope) = rows_through(
                        ranks,
                        rank,
                        peer - base_peer - peer_slope * distance,
                        rules.job_size,
                    )?;
                    let mut slopes = others()?;
                    slopes[AUX] = peer_slope;
                    (slopes, 0, PeerForm::Rows { width, slope })
                }
                None => return None,
            },
        };
        let mut weight = 4u64;
        if deciding {
            for field in [HANDLE, REQUEST, RESULT] {
                weight -= (slopes[field] != 0) as u64;
            }
            if form == PeerForm::Affine && !matches!(slopes[AUX], 0 | 1) {
                weight = weight.saturating_sub(1).max(1);
            }
            // A wrap the second rank decides is less natural than a neighbour that does
            // not wrap (a grid rank's east neighbour against the next rank's west one).
            if wraps > 0 {
                weight = weight.saturating_sub(1).max(1);
            }
        }
        Some(LeafFit {
            slopes,
            wraps,
            weight,
            peer: form,
            xor_possible: self.xor_possible && xor_fits,
        })
    }

    /// The slopes with which `values` (of `rank`) is affine in the rank, the peer too when
    /// `with_peer` (and the ring size modulo which it starts to wrap, 0 if it does not),
    /// else its slope left 0.
    fn affine(
        &self,
        ranks: &[i64],
        rank: i64,
        values: &[i64; FIELDS],
        rules: Rules<'_>,
        with_peer: bool,
    ) -> Option<([i64; FIELDS], i64)> {
        let distance = rank as i128 - ranks[0] as i128;
        let mut slopes = [0i64; FIELDS];
        let mut wraps = 0;
        // Below precision 100 an offset range need not follow a slope: after (or in) a
        // loop whose counts differ between ranks, a file's extent depends on them (each
        // rank's is kept, [`LeafPart::extents`]).
        let free = |field: usize| {
            (rules.extents_free || rules.blur) && (field == OFFSET_LOW || field == OFFSET_HIGH)
        };
        for field in (0..FIELDS).filter(|field| (with_peer || *field != AUX) && !free(*field)) {
            let difference = values[field] as i128 - self.values[field] as i128;
            let known = self.slopes.map(|known| known[field]);
            if field == AUX && known.is_none() && distance != 0 && has_peer(&self.leaf.key, rules) {
                // A peer that fell short of the rank's step is a neighbour `rank + c`
                // that wrapped between the first rank and this one (a left neighbour
                // round a ring: rank 0's is the last rank of the ring, rank 1's is 0).
                if let Some(modulus) = self.wrapped_step(ranks, values[field], distance, rules) {
                    slopes[field] = 1;
                    wraps = modulus;
                    continue;
                }
            }
            let slope = slope_through(known, difference, distance)?;
            slopes[field] = i64::try_from(slope).ok()?;
            let wrapping_already = field == AUX && self.modulus > 0;
            if !wrapping_already && slope * distance == difference {
                continue;
            }
            // Only a peer may wrap, and only with slopes known (checked lazily: the check
            // of earlier ranks is linear in them): round the job, or round a ring of its
            // own — the first half of the ranks passing round their half (coupled codes,
            // a ring per sub-communicator), whose size is how far the peer fell short of
            // the slope's.
            if field != AUX || self.slopes.is_none() {
                return None;
            }
            let candidates = if wrapping_already {
                [self.modulus, 0]
            } else {
                let expected =
                    peer_and_rest(self.values[field]).0 as i128 + slopes[field] as i128 * distance;
                let short = expected - peer_and_rest(values[field]).0 as i128;
                [
                    rules.job_size,
                    ring_of(short, rank - ranks[0], rules.job_size),
                ]
            };
            let modulus = candidates.into_iter().find(|modulus| {
                self.wraps(
                    ranks,
                    self.values[field],
                    values[field],
                    slopes[field],
                    distance,
                    *modulus,
                )
            })?;
            if !wrapping_already {
                wraps = modulus;
            }
        }
        Some((slopes, wraps))
    }

    /// The ring size (the job's, or a smaller one's) modulo which `value`'s peer is the
    /// first rank's plus one a rank — when its peer fell short of that, and the tag is the
    /// same; `None` otherwise.
    fn wrapped_step(
        &self,
        ranks: &[i64],
        value: i64,
        distance: i128,
        rules: Rules<'_>,
    ) -> Option<i64> {
        let ((base_peer, base_rest), (peer, rest)) =
            (peer_and_rest(self.values[AUX]), peer_and_rest(value));
        let expected = base_peer as i128 + distance;
        if rest != base_rest || peer as i128 >= expected || distance < 0 {
            return None;
        }
        let ring = ring_of(expected - peer as i128, distance as i64, rules.job_size);
        [rules.job_size, ring]
            .into_iter()
            .find(|modulus| self.wraps(ranks, self.values[AUX], value, 1, distance, *modulus))
    }

    /// Whether the peer in `value` is the base's plus `slope · distance`, modulo
    /// `modulus`, with the tag unchanged — and, for a leaf not yet wrapping, whether every
    /// earlier rank's peer stays what it was under the modulus (it is a rank below it).
    fn wraps(
        &self,
        ranks: &[i64],
        base: i64,
        value: i64,
        slope: i64,
        distance: i128,
        modulus: i64,
    ) -> bool {
        if modulus <= 1 {
            return false;
        }
        let ((base_peer, base_rest), (peer, rest)) = (peer_and_rest(base), peer_and_rest(value));
        let modulus = modulus as i128;
        let wrapped = (base_peer as i128 + slope as i128 * distance).rem_euclid(modulus);
        if rest != base_rest || peer as i128 >= modulus || wrapped != peer as i128 {
            return false;
        }
        self.modulus > 0
            || ranks.iter().all(|rank| {
                let earlier = base_peer as i128 + slope as i128 * (*rank - ranks[0]) as i128;
                (0..modulus).contains(&earlier)
            })
    }
}

impl LoopPart {
    /// Whether a rank's loop of `count` iterations (`counts` when its occurrences differ)
    /// may share this part's count histogram at `precision`: below 100, no
    /// count slope decided, and the means of its counts and of the part's within the
    /// margin. (A body that accesses files keeps each rank's exact iterations.)
    fn blurs(&self, count: u64, counts: &Option<Box<Histogram>>, precision: u8) -> bool {
        if precision >= 100 || self.slope.is_some_and(|slope| slope != 0) {
            return false;
        }
        let theirs = counts.as_ref().map_or(count as f64, |counts| counts.mean());
        Histogram::within(
            precision,
            self.all_counts.mean().round() as i64,
            theirs.round() as i64,
        )
    }

    /// The count slope with which a loop of `count` iterations of `rank` fits this one.
    fn fit_count(&self, ranks: &[i64], rank: i64, count: u64, rules: Rules) -> Option<i64> {
        let distance = rank as i128 - ranks[0] as i128;
        let difference = count as i128 - self.count as i128;
        let slope = slope_through(self.slope, difference, distance)?;
        if slope * distance != difference || (rules.natural && self.slope.is_none() && slope != 0) {
            return None;
        }
        i64::try_from(slope).ok()
    }
}

/// How `nodes` of `rank` go into the body `parts`, whose enclosing node has the ranks
/// `enclosing`; `None` if the alignment would cost too much.
pub(super) fn plan_body(
    parts: &[Part],
    enclosing: &[i64],
    nodes: &[Node<EventKey>],
    rank: i64,
    rules: Rules<'_>,
    budget: &Cell<usize>,
) -> Option<Plan> {
    let width = nodes.len();
    let fit =
        |part: usize, node: usize| parts[part].fit(enclosing, rank, &nodes[node], rules, budget);
    // Equal lengths that match pair by pair are taken as they are (the SPMD case: nothing
    // to search, a fit a node).
    let mut diagonal: Vec<Fit> = Vec::new();
    if parts.len() == width {
        for index in 0..width {
            match fit(index, index) {
                Some(fit) => diagonal.push(fit),
                None => break,
            }
        }
    }
    let steps = if diagonal.len() == width {
        diagonal
            .into_iter()
            .enumerate()
            .map(|(index, fit)| (Step::Both(index, index), Some(fit)))
            .collect::<Vec<_>>()
    } else {
        let cells = parts.len().saturating_mul(width);
        if cells > ALIGNMENT_CELLS || cells > budget.get() {
            return None;
        }
        budget.set(budget.get() - cells);
        if cells == 1 {
            // One part and one node that did not fit: each alone, in the order `align`
            // places them ([`first_place`]), without a table.
            if parts[0].first_place(enclosing, rules) <= first_place(&nodes[0], rank, rules) {
                vec![(Step::Part(0), None), (Step::Item(0), None)]
            } else {
                vec![(Step::Item(0), None), (Step::Part(0), None)]
            }
        } else {
            let index = (cells > 64).then(|| Candidates::of(nodes));
            // The diagonal's pairs were tried: those that fitted are taken, the first that
            // did not is not tried again.
            let tried = diagonal.len();
            let mut diagonal = diagonal.into_iter().map(Some).collect::<Vec<_>>();
            let rows: Vec<Vec<(usize, u64, Option<Fit>)>> = (0..parts.len())
                .map(|part| {
                    let listed = match &index {
                        Some(index) => index.of_part(&parts[part], rules),
                        None => (0..width)
                            .filter(|node| may_pair(&parts[part], &nodes[*node], rules))
                            .collect(),
                    };
                    listed
                        .into_iter()
                        .filter_map(|node| {
                            let fit = match diagonal.get_mut(part).filter(|_| node == part) {
                                Some(fitted) => fitted.take(),
                                None if node == part && part == tried && parts.len() == width => {
                                    None
                                }
                                None => fit(part, node),
                            }?;
                            Some((node, fit.weight(), Some(fit)))
                        })
                        .collect()
                })
                .collect();
            let order = (
                |part: usize| parts[part].first_place(enclosing, rules),
                |node: usize| first_place(&nodes[node], rank, rules),
            );
            let steps = align(&rows, width, order);
            let mut rows = rows;
            steps
                .into_iter()
                .map(|step| match step {
                    Step::Both(part, node) => {
                        let row = &mut rows[part];
                        let found = row
                            .binary_search_by_key(&node, |(node, ..)| *node)
                            .expect("a matched pair was listed");
                        (step, row[found].2.take())
                    }
                    _ => (step, None),
                })
                .collect()
        }
    };
    let mut plan = Plan {
        steps: Vec::with_capacity(steps.len()),
        weight: 0,
        matched: 0,
        collectives: 0,
        complete: true,
    };
    for (step, fit) in steps {
        plan.steps.push(match step {
            Step::Both(part, node) => {
                let fit = fit.expect("a matched pair fitted");
                plan.weight += fit.weight();
                match &fit {
                    Fit::Leaf { .. } => {
                        plan.matched += 1;
                        if let Node::Leaf(leaf) = &nodes[node] {
                            if (rules.class_of)(leaf.key.call) == Some(CallClass::Collective) {
                                plan.collectives += 1;
                            }
                        }
                    }
                    Fit::Loop { plan: inner, .. } => {
                        plan.matched += inner.matched;
                        plan.collectives += inner.collectives;
                        plan.complete &= inner.complete;
                    }
                }
                PlanStep::Both(part, node, fit)
            }
            Step::Part(part) => {
                plan.complete = false;
                PlanStep::Part(part)
            }
            Step::Item(node) => {
                plan.complete = false;
                PlanStep::Item(node)
            }
        });
    }
    Some(plan)
}

/// The body `parts` with `nodes` of `rank` taken in as `plan` says; `enclosing`: the ranks
/// of the enclosing node before `rank` joined.
pub(super) fn apply_body(
    parts: Vec<Part>,
    enclosing: &[i64],
    nodes: Vec<Node<EventKey>>,
    plan: Plan,
    rank: i64,
    (job_size, runs): (i64, u64),
) -> Vec<Part> {
    let mut parts: Vec<Option<Part>> = parts.into_iter().map(Some).collect();
    let mut nodes: Vec<Option<Node<EventKey>>> = nodes.into_iter().map(Some).collect();
    let mut body = Vec::with_capacity(plan.steps.len());
    for step in plan.steps {
        match step {
            PlanStep::Both(part, node, fit) => {
                let mut part = parts[part].take().expect("each part is aligned once");
                let node = nodes[node].take().expect("each node is aligned once");
                part.admit(enclosing, rank, node, fit, (job_size, runs));
                body.push(part);
            }
            PlanStep::Part(part) => {
                let mut part = parts[part].take().expect("each part is aligned once");
                // The rank joins the enclosing node, not this part.
                if let Ranks::Enclosing = part.ranks() {
                    *part.ranks_mut() = Ranks::Own(enclosing.to_vec());
                }
                body.push(part);
            }
            PlanStep::Item(node) => {
                let node = nodes[node].take().expect("each node is aligned once");
                body.push(Part::new(
                    rank,
                    node,
                    Ranks::Own(vec![rank]),
                    (job_size, runs),
                ));
            }
        }
    }
    body
}

/// Writes merged parts as nodes, and what the stream shares: slopes, loop count slopes
/// and the rank sets of parts only some ranks have, loops in pre-order.
#[derive(Default)]
pub(super) struct Finisher {
    pub sharing: Sharing,
    /// The group's ranks in order of admission (a member's position in its stream).
    pub members: Vec<i64>,
    /// Leaves written so far (the next one's pre-order index).
    leaves: usize,
    /// Loops being written that keep each member's totals.
    keeping: usize,
    slopes: FastMap<RankSlopes, u32>,
    sets: FastMap<RankSet, u32>,
}

/// Strictly increasing ranks (a rank that joined twice — two processes of one rank — is
/// one member of the sets).
fn distinct(ranks: &[i64]) -> Vec<i64> {
    let mut ranks = ranks.to_vec();
    ranks.dedup();
    ranks
}

impl Finisher {
    /// A loop part's totals per member of the stream, in the members' order.
    fn member_totals(&self, totals: &[(i64, u64, u64)]) -> MemberTotals {
        self.member_values(totals, (0, 0))
    }

    /// Per-rank values (rank first) per member of the stream, in the members' order (the
    /// k-th member of a rank takes that rank's k-th value; `absent` for a member without
    /// one).
    fn member_values<T: Copy>(&self, values: &[(i64, T, T)], absent: (T, T)) -> Arc<[(T, T)]> {
        let mut by_rank: FastMap<i64, std::collections::VecDeque<(T, T)>> = FastMap::default();
        for (rank, first, second) in values {
            by_rank
                .entry(*rank)
                .or_default()
                .push_back((*first, *second));
        }
        self.members
            .iter()
            .map(|rank| {
                by_rank
                    .get_mut(rank)
                    .and_then(|queue| queue.pop_front())
                    .unwrap_or(absent)
            })
            .collect()
    }

    /// The nodes of `parts`, in a body the ranks `enclosing` run: consecutive parts of
    /// the same fewer ranks share one loop run once by them.
    pub(super) fn body(&mut self, parts: Vec<Part>, enclosing: &[i64]) -> Vec<Node<EventKey>> {
        let everyone = distinct(enclosing);
        let base = everyone[0];
        let mut nodes = Vec::with_capacity(parts.len());
        let mut parts = parts.into_iter().peekable();
        while let Some(part) = parts.next() {
            let ranks = distinct(part.ranks().resolve(enclosing));
            if ranks == everyone {
                nodes.push(self.part(part, enclosing));
                continue;
            }
            let deltas: Vec<i64> = ranks.iter().map(|rank| rank - base).collect();
            let members: Vec<i64> = everyone.iter().map(|rank| rank - base).collect();
            // The same ranks among other members may be stored another way (by those left
            // out): sets are shared by what they store.
            let set = RankSet::among(&members, &deltas);
            let sets = &mut self.sharing.rank_sets;
            let set = *self.sets.entry(set).or_insert_with_key(|set| {
                sets.push(set.clone());
                sets.len() as u32
            });
            self.sharing.loop_slopes.push(0);
            self.sharing.loop_ranks.push(set);
            self.sharing.loop_totals.push(None);
            let own = part.ranks().resolve(enclosing).to_vec();
            let mut body = vec![self.part(part, &own)];
            while let Some(next) =
                parts.next_if(|next| distinct(next.ranks().resolve(enclosing)) == ranks)
            {
                body.push(self.part(next, &own));
            }
            nodes.push(Node::exact_loop(1, body));
        }
        nodes
    }

    /// The node of `part`, which the ranks `ranks` have (its values are stored as the
    /// first of them has them).
    fn part(&mut self, part: Part, ranks: &[i64]) -> Node<EventKey> {
        match part {
            Part::Leaf(part) => {
                let mut leaf = part.leaf;
                leaf.duration = part.statistics.duration;
                leaf.gap = part.statistics.gap;
                leaf.blurred = part.statistics.blurred.clone();
                leaf.slowest = part.statistics.slowest.wrapping_sub(ranks[0]);
                // A rank expanded from a shared stream still names that stream's slopes.
                leaf.key.parameters = 0;
                leaf.key.flags &= !(MEMBER_EXTENTS | MEMBER_SIZES);
                let index = self.leaves;
                self.leaves += 1;
                let mut slopes = part.slopes;
                if let Some(extents) = &part.extents {
                    // The members' own ranges, not slopes.
                    leaf.key.flags |= MEMBER_EXTENTS;
                    if let Some(row) = &mut slopes {
                        (row[OFFSET_LOW], row[OFFSET_HIGH]) = (0, 0);
                    }
                    let own = self.member_values(extents, (leaf.offset_low, leaf.offset_high));
                    let table = &mut self.sharing.leaf_extents;
                    table.resize(index + 1, None);
                    table[index] = Some(own);
                }
                if let Some(sizes) = part.sizes.as_ref().filter(|sizes| sizes.len() > 1) {
                    // The members' own blurred bytes (their files' totals).
                    leaf.key.flags |= MEMBER_SIZES;
                    let own = self.member_values(sizes, (0, 0));
                    let table = &mut self.sharing.leaf_sizes;
                    table.resize(index + 1, None);
                    table[index] = Some(own);
                }
                leaf.order_of = 0;
                if let Some(orders) = &part.orders {
                    // Each member's own access order (its file's counts): one pair when
                    // they are all the same (SPMD ranks), else one a member and the leaf
                    // holds their sums.
                    let (_, consecutive, sequential) = orders[0];
                    leaf.order_counts = [consecutive, sequential];
                    if orders
                        .iter()
                        .any(|(_, c, s)| (*c, *s) != (consecutive, sequential))
                    {
                        leaf.order_counts = pair_sums(
                            orders
                                .iter()
                                .map(|(_, consecutive, sequential)| (*consecutive, *sequential)),
                        );
                        let own = self.member_values(orders, (0, 0));
                        let table = &mut self.sharing.leaf_orders;
                        table.resize(index + 1, None);
                        table[index] = Some(own);
                    }
                }
                let plain = part.peer == PeerForm::Affine;
                if let Some(row) = slopes.filter(|row| !plain || *row != [0; FIELDS]) {
                    let mut slope = RankSlopes::from_array(row);
                    slope.peer_modulus = part.modulus;
                    slope.peer_xor = part.peer == PeerForm::Xor;
                    if let PeerForm::Rows { width, slope: row } = part.peer {
                        (slope.peer_row_width, slope.peer_row_slope) = (width, row);
                    }
                    let table = &mut self.sharing.parameters;
                    leaf.key.parameters = *self.slopes.entry(slope).or_insert_with(|| {
                        table.push(slope);
                        table.len() as u32
                    });
                }
                Node::Leaf(leaf)
            }
            Part::Loop(part) => {
                self.sharing.loop_slopes.push(part.slope.unwrap_or(0));
                self.sharing.loop_ranks.push(0);
                let index = self.sharing.loop_totals.len();
                self.sharing.loop_totals.push(None);
                // Each member's own iterations where files' totals depend on them or
                // parts of the body are only some ranks', and inside such a loop (a member
                // walks its own occurrences of what is in it).
                let keeps = part.blurred
                    && (self.keeping > 0
                        || parts_touch_files(&part.body)
                        || parts_split_by_rank(&part.body));
                self.keeping += keeps as usize;
                let body = self.body(part.body, ranks);
                if keeps {
                    self.keeping -= 1;
                    self.sharing.loop_totals[index] = Some(self.member_totals(&part.totals));
                }
                // Counts that differ are stored over all the part's ranks.
                let counts =
                    (part.blurred || part.counts.is_some()).then(|| Box::new(part.all_counts));
                Node::Loop {
                    count: part.count as u64,
                    body,
                    counts,
                }
            }
        }
    }
}

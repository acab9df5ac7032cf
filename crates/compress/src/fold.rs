//! Online loop folding: a stream of leaves becomes a tree of leaves and loops.
//!
//! The folder keeps a window of recent top-level nodes. After each new leaf it tries, in
//! order, until nothing changes:
//! 1. *extend*: the last `k` nodes repeat the body of the loop just before them → that loop
//!    gains an iteration (its leaves merge the new iteration's statistics);
//! 2. *fold*: the last `k` nodes repeat the `k` nodes before them → both become one loop
//!    of two iterations.
//!
//! Smallest `k` first, so inner loops form before outer ones; a closed loop is an ordinary
//! node, so `[loop ×100 {read}, seek]` repeated folds into `loop ×N { loop ×100 {read}, seek }`.
//! This is ScalaTrace's RSD/PRSD construction restricted to a window (see the crate docs for
//! why this rather than a grammar). Nodes carry a structural hash so comparisons are cheap;
//! equal hashes are confirmed by a structural comparison.
//!
//! Cost: amortised O(64) hash comparisons per leaf for bodies up to 64 nodes, and for
//! longer ones (up to `max_body`) a comparison per earlier node with the newest node's
//! hash ([`crate::recurrence`]); memory: at most `max_window` top-level nodes and
//! `max_nodes` nodes in all — older nodes leave the window for the output and can no
//! longer fold.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

use crate::histogram::{Blurred, Histogram, DEFAULT_BINS};
use crate::recurrence::{Recurrences, SCAN};
use crate::stats::Stats;
use crate::stream::ColumnSizes;

/// One event of the folded stream: its exactly-kept key and statistics of what varies.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf<K> {
    pub key: K,
    /// Durations of the occurrences (ns).
    pub duration: Stats,
    /// Compute time before each occurrence: start minus the previous event's end (ns).
    pub gap: Stats,
    /// Lowest offset accessed and highest offset + bytes, over all occurrences; -1 if none.
    pub offset_low: i64,
    pub offset_high: i64,
    /// In a stream several ranks share: which rank's single occurrence took longest
    /// (`duration.max`), as a distance in ranks — from the base rank in the stored stream,
    /// from the walked rank once read for it. 0 in a stream of one rank.
    pub slowest: i64,
    /// Of a leaf whose offsets are kept in the stream's column (irregular accesses, whose
    /// access order differs from one occurrence to the next): how many of its occurrences
    /// were consecutive and sequential (Darshan's order). 0 for other leaves, whose key
    /// holds the order.
    pub order_counts: [u64; 2],
    /// Of how many occurrences `order_counts` are: 0 for all the leaf's
    /// (`duration.count`); in a stream several ranks share, read for one member, that
    /// member's occurrences (its own counts, not the sum of every member's).
    pub order_of: u64,
    /// Parameters a precision level below 100 keeps as histograms (the key marks which).
    pub blurred: Option<Box<Blurred>>,
    /// Of a leaf whose sizes are in the stream's column ([`crate::stream::SIZE_IN_COLUMN`]):
    /// their exact figures over all its occurrences.
    pub column_sizes: Option<Box<ColumnSizes>>,
}

impl<K> Leaf<K> {
    /// A leaf of `key` with no statistics (for comparing shapes).
    pub(crate) fn bare(key: K) -> Leaf<K> {
        Leaf {
            key,
            duration: Stats::default(),
            gap: Stats::default(),
            offset_low: -1,
            offset_high: -1,
            slowest: 0,
            order_counts: [0; 2],
            order_of: 0,
            blurred: None,
            column_sizes: None,
        }
    }

    fn merge_statistics(&mut self, other: &Leaf<K>) {
        if other.duration.max > self.duration.max {
            self.slowest = other.slowest;
        }
        self.duration.merge(&other.duration);
        self.gap.merge(&other.gap);
        if other.offset_low >= 0 && (self.offset_low < 0 || other.offset_low < self.offset_low) {
            self.offset_low = other.offset_low;
        }
        self.offset_high = self.offset_high.max(other.offset_high);
        for (count, other) in self.order_counts.iter_mut().zip(other.order_counts) {
            *count = count.saturating_add(other);
        }
        self.order_of = self.order_of.saturating_add(other.order_of);
        if let Some(other) = &other.blurred {
            self.blurred
                .get_or_insert_with(Default::default)
                .merge(other, -1, 0);
        }
        if let Some(other) = &other.column_sizes {
            match &mut self.column_sizes {
                Some(sizes) => sizes.merge(other),
                None => self.column_sizes = Some(other.clone()),
            }
        }
    }

    /// How many times this leaf occurred in the stream (over all loop iterations).
    pub fn occurrences(&self) -> u64 {
        self.duration.count
    }
}

// Leaves are most nodes: boxing them would cost an allocation per event in the folder.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Node<K> {
    Leaf(Leaf<K>),
    /// `count` iterations of `body`; below precision 100, `counts` holds the iteration
    /// counts of every occurrence of the loop when they differ (`count` is then the
    /// first's): a solver loop that converges after 39, 40 or 42 iterations still folds.
    Loop {
        count: u64,
        body: Vec<Node<K>>,
        counts: Option<Box<Histogram>>,
    },
}

impl<K> Node<K> {
    /// A loop of `count` iterations, all its occurrences alike.
    pub fn exact_loop(count: u64, body: Vec<Node<K>>) -> Node<K> {
        Node::Loop {
            count,
            body,
            counts: None,
        }
    }
}

/// How many times `node` occurred in its stream (over all iterations of the loops around
/// it): a leaf's statistics count them, a loop's count histogram does, otherwise its first
/// node's occurrences over its count.
fn occurrences_of<K>(node: &Node<K>) -> u64 {
    match node {
        Node::Leaf(leaf) => leaf.duration.count,
        Node::Loop {
            counts: Some(counts),
            ..
        } => counts.count,
        Node::Loop { count, body, .. } => body.first().map_or(0, occurrences_of) / (*count).max(1),
    }
}

/// How many times the body of a loop of `count` iterations runs when the loop is reached
/// `runs` times: `runs × count`, or when its occurrences' counts differ (`counts`), the
/// histogram's exact sum, over all of them.
pub fn body_runs(count: u64, counts: Option<&Histogram>, runs: u64) -> u64 {
    match counts {
        Some(counts) => counts.sum.clamp(0, u64::MAX as i128) as u64,
        None => runs.saturating_mul(count),
    }
}

/// The iteration counts of a loop's occurrences as a histogram (at `precision`).
fn counts_of<K>(
    count: u64,
    body: &[Node<K>],
    counts: &Option<Box<Histogram>>,
    precision: u8,
) -> Histogram {
    match counts {
        Some(counts) => (**counts).clone(),
        None => {
            let mut histogram = Histogram::new(DEFAULT_BINS);
            histogram.precision = precision;
            let occurrences = body.first().map_or(0, occurrences_of) / count.max(1);
            histogram.add_many(count as i64, occurrences.max(1), -1);
            histogram
        }
    }
}

/// The range of a loop's iteration counts.
fn count_range<K>(node: &Node<K>) -> (i64, i64) {
    match node {
        Node::Loop {
            counts: Some(counts),
            ..
        } => (counts.min, counts.max),
        Node::Loop { count, .. } => (*count as i64, *count as i64),
        Node::Leaf(_) => (0, 0),
    }
}

/// A node with its structural hash (key for leaves; count and body for loops).
#[derive(Clone, Debug)]
struct Hashed<K> {
    hash: u64,
    size: usize,
    /// For a loop: the hashes of its body's nodes, so extending it compares hashes only.
    body_hashes: Vec<u64>,
    node: Node<K>,
}

fn combine(hash: u64, value: u64) -> u64 {
    (hash.rotate_left(5) ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn key_hash<K: Hash>(key: &K) -> u64 {
    let mut hasher = crate::hash::FastHasher::default();
    key.hash(&mut hasher);
    hasher.finish()
}

/// A loop's hash: its count's too unless `precision` lets counts differ (they are then
/// compared by [`same_shape`]).
fn loop_hash(count: u64, body_hashes: &[u64], precision: u8) -> u64 {
    let count = if precision < 100 { 0 } else { count };
    body_hashes
        .iter()
        .fold(combine(0x6c6f_6f70, count), |hash, child| {
            combine(hash, *child)
        })
}

fn node_hash<K: Hash>(node: &Node<K>, precision: u8) -> u64 {
    match node {
        Node::Leaf(leaf) => key_hash(&leaf.key),
        Node::Loop { count, body, .. } => {
            let hashes: Vec<u64> = body.iter().map(|node| node_hash(node, precision)).collect();
            loop_hash(*count, &hashes, precision)
        }
    }
}

fn node_size<K>(node: &Node<K>) -> usize {
    match node {
        Node::Leaf(_) => 1,
        Node::Loop { body, .. } => 1 + body.iter().map(node_size).sum::<usize>(),
    }
}

/// Same structure and keys (statistics ignored); loop counts equal, or below precision
/// 100 all within (100 − precision)% of one another.
fn same_shape<K: PartialEq>(a: &Node<K>, b: &Node<K>, precision: u8) -> bool {
    match (a, b) {
        (Node::Leaf(a), Node::Leaf(b)) => a.key == b.key,
        (
            Node::Loop {
                count: m, body: x, ..
            },
            Node::Loop {
                count: n, body: y, ..
            },
        ) => {
            let counts_fit = if precision < 100 {
                let ((low_a, high_a), (low_b, high_b)) = (count_range(a), count_range(b));
                Histogram::within(precision, low_a.min(low_b), high_a.max(high_b))
            } else {
                m == n
            };
            counts_fit
                && x.len() == y.len()
                && x.iter().zip(y).all(|(x, y)| same_shape(x, y, precision))
        }
        _ => false,
    }
}

/// Adds `source`'s statistics into `target` (same shape); loop counts that differ join
/// the target's count histogram.
fn merge_into<K>(target: &mut Node<K>, source: &Node<K>, precision: u8) {
    match (target, source) {
        (Node::Leaf(target), Node::Leaf(source)) => target.merge_statistics(source),
        (
            Node::Loop {
                count: target_count,
                body: target,
                counts: target_counts,
            },
            Node::Loop {
                count: source_count,
                body: source,
                counts: source_counts,
            },
        ) => {
            // Before the bodies merge: their statistics say how often each loop ran.
            if target_counts.is_some() || source_counts.is_some() || target_count != source_count {
                let mut counts = counts_of(*target_count, target, target_counts, precision);
                counts.merge(&counts_of(*source_count, source, source_counts, precision));
                *target_counts = Some(Box::new(counts));
            }
            for (target, source) in target.iter_mut().zip(source) {
                merge_into(target, source, precision);
            }
        }
        _ => unreachable!("merge_into is only called on nodes of the same shape"),
    }
}

/// Limits of the folder.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest loop body, in top-level nodes, that can be discovered.
    pub max_body: usize,
    /// Top-level nodes kept for folding.
    pub max_window: usize,
    /// Nodes (all levels) kept for folding.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        // An iteration of a solver that exchanges with 26 neighbours on four grid levels
        // (HPCG) is about 400 top-level nodes; its two first iterations must fit.
        Limits {
            max_body: 1024,
            max_window: 4096,
            max_nodes: 1 << 16,
        }
    }
}

pub struct Folder<K> {
    window: VecDeque<Hashed<K>>,
    /// Parallel to `window`, kept small and contiguous for the scans every push makes:
    /// each node's hash, and its body length if it is a loop (0 for a leaf).
    hashes: VecDeque<u64>,
    loop_bodies: VecDeque<usize>,
    /// Where hashes recur in the window: bodies longer than a scan's.
    recurrences: Recurrences,
    window_nodes: usize,
    output: Vec<Node<K>>,
    limits: Limits,
    /// Below 100, loops whose counts differ by at most (100 − precision)% fold together.
    precision: u8,
    /// Set while the window's newest node, a loop, is known to be complete (a node that
    /// does not continue it came, or the stream ended): only then may it match another.
    newest_closed: bool,
}

impl<K: Clone + PartialEq + Hash> Default for Folder<K> {
    fn default() -> Folder<K> {
        Folder::new(Limits::default())
    }
}

impl<K: Clone + PartialEq + Hash> Folder<K> {
    pub fn new(limits: Limits) -> Folder<K> {
        Folder {
            window: VecDeque::new(),
            hashes: VecDeque::new(),
            loop_bodies: VecDeque::new(),
            recurrences: Recurrences::default(),
            window_nodes: 0,
            output: Vec::new(),
            limits,
            precision: 100,
            newest_closed: false,
        }
    }

    /// Lets loops whose iteration counts differ by at most (100 − `precision`)% of the
    /// larger fold together, their counts kept in a histogram (100: counts exact).
    pub fn set_precision(&mut self, precision: u8) {
        self.precision = precision.min(100);
    }

    pub fn push(&mut self, leaf: Leaf<K>) {
        let node = Node::Leaf(leaf);
        let hash = node_hash(&node, self.precision);
        self.close_unless_continued(hash);
        self.push_node(Hashed {
            hash,
            size: 1,
            body_hashes: Vec::new(),
            node,
        });
        self.window_nodes += 1;
        self.settle();
    }

    /// Adds `count` consecutive repetitions of the leaves of `body`, whose statistics
    /// already cover every repetition (a run or block the tracer folded as the program
    /// ran): as pushing them one by one, they extend a loop over the same keys just before
    /// them, or fold with one repetition of them just before, and then fold with what
    /// precedes like any node.
    pub fn push_repetitions(&mut self, body: Vec<Leaf<K>>, count: u64) {
        if count <= 1 || body.is_empty() {
            if count == 1 {
                body.into_iter().for_each(|leaf| self.push(leaf));
            }
            return;
        }
        // The body folded as its events would fold (a call repeated inside it becomes an
        // inner loop), so repetitions folded in the tracer and events folded here agree.
        let mut inner = Folder::new(self.limits);
        inner.set_precision(self.precision);
        body.into_iter().for_each(|leaf| inner.push(leaf));
        let mut body = inner.finish();
        let period = body.len();
        let precision = self.precision;
        let body_hashes: Vec<u64> = body.iter().map(|node| node_hash(node, precision)).collect();
        self.close_unless_continued(body_hashes[0]);
        let body_size: usize = body.iter().map(node_size).sum();
        let same_nodes = |nodes: &mut dyn Iterator<Item = &Node<K>>| {
            nodes
                .zip(&body)
                .all(|(node, own)| same_shape(node, own, precision))
        };
        let length = self.window.len();
        let last_is_loop = matches!(
            self.window.back().map(|last| &last.node),
            Some(Node::Loop { body: inner, .. }) if inner.len() == period
                && same_nodes(&mut inner.iter())
        );
        let last_is_one_repetition = !last_is_loop
            && length >= period
            && same_nodes(
                &mut self
                    .window
                    .range(length - period..)
                    .map(|hashed| &hashed.node),
            );
        if last_is_loop {
            let last = self.window.back_mut().expect("the window ends with a loop");
            let Node::Loop {
                count: loop_count,
                body: inner,
                ..
            } = &mut last.node
            else {
                unreachable!("checked to be a loop");
            };
            for (node, own) in inner.iter_mut().zip(&body) {
                merge_into(node, own, precision);
            }
            *loop_count += count;
            let hash = loop_hash(*loop_count, &body_hashes, precision);
            last.hash = hash;
            self.rehash_last(hash);
        } else {
            let mut total = count;
            if last_is_one_repetition {
                // One repetition just before: it is the loop's first iteration.
                let removed = self.drain_tail(length - period);
                for (hashed, own) in removed.iter().zip(body.iter_mut()) {
                    merge_into(own, &hashed.node, precision);
                }
                self.window_nodes -= removed.iter().map(|hashed| hashed.size).sum::<usize>();
                total += 1;
            }
            let hash = loop_hash(total, &body_hashes, precision);
            self.push_node(Hashed {
                hash,
                size: body_size + 1,
                body_hashes,
                node: Node::exact_loop(total, body),
            });
            self.window_nodes += body_size + 1;
        }
        self.settle();
    }

    /// Adds `count` repetitions of a body of leaves the tracer folded (a block), as pushing
    /// their events one by one would: `leaves(n)` gives the body's leaves standing for the
    /// next `n` repetitions (their statistics over those; called in order, for one
    /// repetition at a time, and then for all that are left but one, and that one). A
    /// block that extends the loop just before goes in whole; otherwise its repetitions
    /// go in one at a time — the tracer saw exact values repeat from part-way into the
    /// program's own loop, where this folder (below precision 100, or with a shorter loop
    /// already folded) folds from elsewhere — until one changes nothing but one loop's
    /// count: all that are left then go in as two more repetitions (see below), and that
    /// loop's count grows by the rest.
    pub fn push_block(
        &mut self,
        keys: &[K],
        count: u64,
        leaves: &mut dyn FnMut(u64) -> Vec<Leaf<K>>,
    ) {
        /// Repetitions tried one at a time before the rest go in as one loop node.
        const ONE_AT_A_TIME: u64 = 16;
        if count <= 1 {
            leaves(count).into_iter().for_each(|leaf| self.push(leaf));
            return;
        }
        if self.window_ends_with_loop_of(keys) {
            self.push_repetitions(leaves(count), count);
            return;
        }
        let mut done = 0;
        let mut before: Option<Vec<(u64, u64)>> = None;
        let mut steady = None;
        while done < count {
            let rest = count - done;
            if let (Some((position, delta)), true) = (steady, rest >= 2) {
                // A repetition's last leaves wait in the window until the next one's first
                // come (they may yet begin a loop iteration): all but the last repetition go
                // in as one, whose waiting leaves the last one's then join to the loop, so
                // only a repetition's worth waits. The loop then holds `rest` repetitions.
                leaves(rest - 1)
                    .into_iter()
                    .for_each(|leaf| self.push(leaf));
                let middle = self.shape();
                leaves(1).into_iter().for_each(|leaf| self.push(leaf));
                // The same keys from the same state (but for a count no comparison reads)
                // grow the same loop alike.
                debug_assert_eq!(
                    before.as_ref().and_then(|b| one_count_grew(b, &middle)),
                    Some((position, delta))
                );
                debug_assert_eq!(
                    one_count_grew(&middle, &self.shape()),
                    Some((position, delta))
                );
                if let Some(Hashed {
                    node:
                        Node::Loop {
                            count: loop_count, ..
                        },
                    body_hashes,
                    hash,
                    ..
                }) = self.window.get_mut(position)
                {
                    *loop_count = loop_count.saturating_add(delta.saturating_mul(rest - 2));
                    *hash = loop_hash(*loop_count, body_hashes, self.precision);
                    self.recurrences.rehashed(position, self.hashes[position]);
                    self.hashes[position] = *hash;
                }
                return;
            }
            if done >= ONE_AT_A_TIME && rest >= 2 {
                self.push_repetitions(leaves(rest), rest);
                return;
            }
            leaves(1).into_iter().for_each(|leaf| self.push(leaf));
            done += 1;
            let now = self.shape();
            // A loop whose body holds loops of differing counts (their histograms count
            // their own occurrences) cannot gain iterations by its count alone: such a
            // block goes on a repetition at a time.
            steady = before
                .as_ref()
                .and_then(|b| one_count_grew(b, &now))
                .filter(|(position, _)| !holds_count_histograms(&self.window[*position].node));
            before = Some(now);
        }
    }

    /// Whether the window ends with a loop whose body is leaves of `keys`, folded.
    fn window_ends_with_loop_of(&self, keys: &[K]) -> bool {
        let Some(Node::Loop { body, .. }) = self.window.back().map(|last| &last.node) else {
            return false;
        };
        let mut inner = Folder::new(self.limits);
        inner.set_precision(self.precision);
        keys.iter()
            .for_each(|key| inner.push(Leaf::bare(key.clone())));
        let folded = inner.finish();
        body.len() == folded.len()
            && body
                .iter()
                .zip(&folded)
                .all(|(node, own)| same_shape(node, own, self.precision))
    }

    /// Per window node: its hash without a loop's count, and a loop's count (0 for a leaf;
    /// `u64::MAX` for a loop whose occurrences' counts differ).
    fn shape(&self) -> Vec<(u64, u64)> {
        self.window
            .iter()
            .map(|hashed| match &hashed.node {
                Node::Leaf(_) => (hashed.hash, 0),
                Node::Loop { count, counts, .. } => (
                    loop_hash(0, &hashed.body_hashes, 0),
                    if counts.is_some() { u64::MAX } else { *count },
                ),
            })
            .collect()
    }

    /// Before a node whose hash is `next` goes in: if the window ends with a loop that it
    /// does not continue, that loop has all its iterations — fold what it completes now
    /// (the program's `for (i = 0; i < n; i++) write(...)` with n = 214 after a step of
    /// 207 stays one loop of 214, not 207 and then 7).
    fn close_unless_continued(&mut self, next: u64) {
        let Some(last) = self.window.back() else {
            return;
        };
        if matches!(last.node, Node::Loop { .. }) && last.body_hashes.first() != Some(&next) {
            self.newest_closed = true;
            while self.extend_loop() || self.fold_repeat() {}
            self.newest_closed = false;
        }
    }

    /// Folds what the last node allows, then moves what no longer fits out of the window.
    fn settle(&mut self) {
        while self.extend_loop() || self.fold_repeat() {}
        while self.window.len() > self.limits.max_window
            || self.window_nodes > self.limits.max_nodes
        {
            let oldest = self.window.pop_front().expect("window is not empty");
            self.hashes.pop_front();
            self.loop_bodies.pop_front();
            self.recurrences.pop_front(oldest.hash);
            self.window_nodes -= oldest.size;
            self.output.push(oldest.node);
        }
    }

    /// Nodes that left the window so far; they will not change any more.
    pub fn take_finished(&mut self) -> Vec<Node<K>> {
        std::mem::take(&mut self.output)
    }

    /// The whole folded stream.
    pub fn finish(mut self) -> Vec<Node<K>> {
        // The stream ended: a loop at its end has all its iterations.
        self.newest_closed = true;
        while self.extend_loop() || self.fold_repeat() {}
        let mut nodes = std::mem::take(&mut self.output);
        nodes.extend(self.window.drain(..).map(|hashed| hashed.node));
        nodes
    }

    /// Puts a node at the window's end, with its hash and body length beside it.
    fn push_node(&mut self, hashed: Hashed<K>) {
        let body = match &hashed.node {
            Node::Loop { body, .. } => body.len(),
            Node::Leaf(_) => 0,
        };
        self.hashes.push_back(hashed.hash);
        self.loop_bodies.push_back(body);
        self.recurrences.push(hashed.hash, body);
        self.window.push_back(hashed);
    }

    /// Takes the window's nodes from `length` on (the caller accounts for their sizes).
    fn drain_tail(&mut self, length: usize) -> Vec<Hashed<K>> {
        self.recurrences.truncate(length, &self.hashes);
        self.hashes.truncate(length);
        self.loop_bodies.truncate(length);
        self.window.drain(length..).collect()
    }

    /// The window's last node (a loop whose count grew) has a new hash.
    fn rehash_last(&mut self, hash: u64) {
        let last = self.hashes.len() - 1;
        self.recurrences.truncate(last, &self.hashes);
        self.hashes[last] = hash;
        self.recurrences.push(hash, self.loop_bodies[last]);
    }

    fn tail_equals(&self, start: usize, other_start: usize, length: usize) -> bool {
        (0..length).all(|i| {
            let (a, b) = (&self.window[start + i], &self.window[other_start + i]);
            a.hash == b.hash && self.same_in_window(start + i, &a.node, &b.node)
        })
    }

    /// [`same_shape`] of the window's node at `position` with `other`; the newest node, if
    /// a loop, may still gain iterations: it matches nothing until it is closed (a loop of
    /// 2 that will run 22 times never joins a count histogram as a 2, and a loop of 207
    /// that will run 214 is not cut after 207 to repeat the step before).
    fn same_in_window(&self, position: usize, node: &Node<K>, other: &Node<K>) -> bool {
        let growing = position + 1 == self.window.len() && !self.newest_closed;
        match node {
            Node::Loop { .. } if growing => false,
            _ => same_shape(node, other, self.precision),
        }
    }

    /// Whether the `k` nodes after the loop at `candidate` (whose body is `k` long) repeat
    /// its body.
    fn extends(&self, candidate: usize, k: usize) -> bool {
        let Node::Loop { body, .. } = &self.window[candidate].node else {
            return false;
        };
        let body_hashes = &self.window[candidate].body_hashes;
        (0..k).all(|i| {
            let hashed = &self.window[candidate + 1 + i];
            hashed.hash == body_hashes[i]
                && self.same_in_window(candidate + 1 + i, &hashed.node, &body[i])
        })
    }

    fn extend_loop(&mut self) -> bool {
        let length = self.window.len();
        // The scan runs on every push over up to `SCAN` nodes: on a contiguous slice.
        self.loop_bodies.make_contiguous();
        let bodies = self.loop_bodies.as_slices().0;
        let mut found = None;
        for k in 1..=SCAN.min(self.limits.max_body).min(length.saturating_sub(1)) {
            let candidate = length - 1 - k;
            if bodies[candidate] == k && self.extends(candidate, k) {
                found = Some(k);
                break;
            }
        }
        if found.is_none() && length > 0 {
            found = self
                .recurrences
                .long_loops_ending_at(length - 1, &self.loop_bodies)
                .map(|candidate| length - 1 - candidate)
                .find(|&k| k <= self.limits.max_body && self.extends(length - 1 - k, k));
        }
        if let Some(k) = found {
            let candidate = length - 1 - k;
            let iteration = self.drain_tail(candidate + 1);
            let removed: usize = iteration.iter().map(|hashed| hashed.size).sum();
            let target = &mut self.window[candidate];
            if let Node::Loop { count, body, .. } = &mut target.node {
                for (node, hashed) in body.iter_mut().zip(&iteration) {
                    merge_into(node, &hashed.node, self.precision);
                }
                *count += 1;
            }
            if let Node::Loop { count, .. } = &target.node {
                target.hash = loop_hash(*count, &target.body_hashes, self.precision);
            }
            let hash = target.hash;
            self.rehash_last(hash);
            self.window_nodes -= removed;
            return true;
        }
        false
    }

    fn fold_repeat(&mut self) -> bool {
        let length = self.window.len();
        if length < 2 {
            return false;
        }
        self.hashes.make_contiguous();
        let hashes = self.hashes.as_slices().0;
        let last = hashes[length - 1];
        let longest = self.limits.max_body.min(length / 2);
        let mut found = None;
        for k in 1..=SCAN.min(longest) {
            if hashes[length - 1 - k] == last && self.tail_equals(length - k, length - 2 * k, k) {
                found = Some(k);
                break;
            }
        }
        if found.is_none() && longest > SCAN {
            found = self
                .recurrences
                .earlier(length - 1, &self.hashes)
                .map(|position| length - 1 - position)
                .skip_while(|&k| k <= SCAN)
                .take_while(|&k| k <= longest)
                .find(|&k| self.tail_equals(length - k, length - 2 * k, k));
        }
        if let Some(k) = found {
            let second = self.drain_tail(length - k);
            let first = self.drain_tail(length - 2 * k);
            let body_hashes: Vec<u64> = first.iter().map(|hashed| hashed.hash).collect();
            let mut body: Vec<Node<K>> = first.into_iter().map(|hashed| hashed.node).collect();
            for (node, hashed) in body.iter_mut().zip(&second) {
                merge_into(node, &hashed.node, self.precision);
            }
            let removed: usize = second.iter().map(|hashed| hashed.size).sum();
            let node = Node::exact_loop(2, body);
            let size = node_size(&node);
            self.window_nodes = self.window_nodes - 2 * removed + size;
            let hash = loop_hash(2, &body_hashes, self.precision);
            self.push_node(Hashed {
                hash,
                size,
                body_hashes,
                node,
            });
            return true;
        }
        false
    }
}

/// Whether a loop inside `node`'s body keeps a histogram of its counts.
fn holds_count_histograms<K>(node: &Node<K>) -> bool {
    match node {
        Node::Leaf(_) => false,
        Node::Loop { body, .. } => body.iter().any(|inner| {
            matches!(
                inner,
                Node::Loop {
                    counts: Some(_),
                    ..
                }
            ) || holds_count_histograms(inner)
        }),
    }
}

/// Where `after` differs from `before` by one loop's count alone, and by how much it grew.
fn one_count_grew(before: &[(u64, u64)], after: &[(u64, u64)]) -> Option<(usize, u64)> {
    if before.len() != after.len() {
        return None;
    }
    let mut grew = None;
    for (position, (old, new)) in before.iter().zip(after).enumerate() {
        if old == new {
            continue;
        }
        let a_count_grew = old.0 == new.0 && old.1 != 0 && new.1 != u64::MAX && new.1 > old.1;
        if grew.is_some() || !a_count_grew {
            return None;
        }
        grew = Some((position, new.1 - old.1));
    }
    grew
}

/// Calls `visit` for every leaf occurrence in stream order (expands loops).
pub fn for_each_occurrence<K>(nodes: &[Node<K>], visit: &mut impl FnMut(&Leaf<K>)) {
    for node in nodes {
        match node {
            Node::Leaf(leaf) => visit(leaf),
            Node::Loop { count, body, .. } => {
                for _ in 0..*count {
                    for_each_occurrence(body, visit);
                }
            }
        }
    }
}

/// Calls `visit` once for every leaf of the tree (loops not expanded), to change it.
pub fn for_each_leaf_mut<K>(nodes: &mut [Node<K>], visit: &mut impl FnMut(&mut Leaf<K>)) {
    for node in nodes {
        match node {
            Node::Leaf(leaf) => visit(leaf),
            Node::Loop { body, .. } => for_each_leaf_mut(body, visit),
        }
    }
}

/// Number of leaf occurrences the nodes stand for.
pub fn occurrence_count<K>(nodes: &[Node<K>]) -> u64 {
    /// `runs`: how many times the loops around run `nodes`, in all.
    fn total<K>(nodes: &[Node<K>], runs: u64) -> u64 {
        nodes
            .iter()
            .map(|node| match node {
                Node::Leaf(_) => runs,
                Node::Loop {
                    count,
                    body,
                    counts,
                } => total(body, body_runs(*count, counts.as_deref(), runs)),
            })
            .fold(0u64, u64::saturating_add)
    }
    total(nodes, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaf(key: u32) -> Leaf<u32> {
        Leaf {
            duration: Stats::of(10),
            gap: Stats::of(1),
            ..Leaf::bare(key)
        }
    }

    fn fold(keys: &[u32]) -> Vec<Node<u32>> {
        let mut folder = Folder::default();
        for key in keys {
            folder.push(leaf(*key));
        }
        folder.finish()
    }

    fn shape(nodes: &[Node<u32>]) -> String {
        nodes
            .iter()
            .map(|node| match node {
                Node::Leaf(leaf) => leaf.key.to_string(),
                Node::Loop {
                    count,
                    body,
                    counts: None,
                } => format!("{count}x[{}]", shape(body)),
                Node::Loop {
                    body,
                    counts: Some(counts),
                    ..
                } => {
                    format!("{}..{}x[{}]", counts.min, counts.max, shape(body))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn for_each_leaf(nodes: &[Node<u32>], visit: &mut impl FnMut(&Leaf<u32>)) {
        for node in nodes {
            match node {
                Node::Leaf(leaf) => visit(leaf),
                Node::Loop { body, .. } => for_each_leaf(body, visit),
            }
        }
    }

    fn expand(nodes: &[Node<u32>]) -> Vec<u32> {
        let mut keys = Vec::new();
        for_each_occurrence(nodes, &mut |leaf| keys.push(leaf.key));
        keys
    }

    #[test]
    fn simple_and_nested_loops() {
        assert_eq!(shape(&fold(&[1, 1, 1, 1])), "4x[1]");
        assert_eq!(shape(&fold(&[1, 2, 1, 2, 1, 2, 3])), "3x[1 2] 3");
        let mut keys = Vec::new();
        for _ in 0..50 {
            keys.extend(std::iter::repeat_n(7, 100));
            keys.push(8);
        }
        let nodes = fold(&keys);
        assert_eq!(shape(&nodes), "50x[100x[7] 8]");
        let Node::Loop { body, .. } = &nodes[0] else {
            panic!()
        };
        let Node::Loop { body: inner, .. } = &body[0] else {
            panic!()
        };
        let Node::Leaf(seven) = &inner[0] else {
            panic!()
        };
        assert_eq!(
            seven.occurrences(),
            5000,
            "statistics cover every occurrence"
        );
        assert_eq!(occurrence_count(&nodes), 5050);
    }

    #[test]
    fn a_loop_is_not_cut_to_repeat_the_one_before() {
        // A step of 207 writes (key 2) then one of 214, each after an fstat (key 1): the
        // second loop reaches 207 iterations before it ends, but it is one loop of 214
        // (lossless), and below 100 the two steps fold with a count histogram.
        let keys: Vec<u32> = [207, 214, 201]
            .into_iter()
            .flat_map(|count| std::iter::once(1).chain(std::iter::repeat_n(2, count)))
            .collect();
        assert_eq!(shape(&fold(&keys)), "1 207x[2] 1 214x[2] 1 201x[2]");
        let mut folder = Folder::default();
        folder.set_precision(0);
        keys.iter().for_each(|key| folder.push(leaf(*key)));
        assert_eq!(shape(&folder.finish()), "3x[1 201..214x[2]]");
        // Equal steps still fold, the last one too (the stream's end closes its loop).
        let keys: Vec<u32> = (0..3)
            .flat_map(|_| std::iter::once(1).chain(std::iter::repeat_n(2, 50)))
            .collect();
        assert_eq!(shape(&fold(&keys)), "3x[1 50x[2]]");
    }

    #[test]
    fn size_does_not_grow_with_iterations() {
        let run = |outer: usize| {
            let mut folder = Folder::default();
            for _ in 0..outer {
                for key in [1, 2, 2, 2, 3, 4, 4] {
                    folder.push(leaf(key));
                }
            }
            shape(&folder.finish())
        };
        assert_eq!(
            run(1000).replace("1000x", "Nx"),
            run(100_000).replace("100000x", "Nx")
        );
    }

    #[test]
    fn irregular_streams_stay_bounded() {
        let mut folder: Folder<u32> = Folder::new(Limits {
            max_body: 8,
            max_window: 32,
            max_nodes: 64,
        });
        for key in 0..10_000 {
            folder.push(leaf(key % 3_000));
            assert_eq!(folder.hashes.len(), folder.window.len());
            assert_eq!(folder.loop_bodies.len(), folder.window.len());
            assert!(folder.window.len() <= 32 && folder.window_nodes <= 64);
        }
        assert_eq!(folder.finish().len(), 10_000);
    }

    proptest! {
        #[test]
        fn expansion_gives_back_the_stream(keys in proptest::collection::vec(0u32..4, 0..400)) {
            let nodes = fold(&keys);
            prop_assert_eq!(expand(&nodes), keys.clone());
            prop_assert_eq!(occurrence_count(&nodes), keys.len() as u64);
        }

        #[test]
        fn runs_folded_as_they_happen_fold_like_single_pushes(keys in proptest::collection::vec(0u32..3, 0..300), cut in 0usize..4) {
            // What the tracer does: the first of equal consecutive keys is pushed alone, the
            // repetitions after it as one run with their statistics summed; `cut` splits
            // some runs in two (a run ends where the tracer's chunk ends).
            let mut folder = Folder::default();
            let mut index = 0;
            while index < keys.len() {
                let mut end = index + 1;
                while end < keys.len() && keys[end] == keys[index] {
                    end += 1;
                }
                folder.push(leaf(keys[index]));
                let mut rest = end - index - 1;
                while rest > 0 {
                    let part = if cut > 0 && rest > cut { cut } else { rest };
                    let mut summed = leaf(keys[index]);
                    for _ in 1..part {
                        summed.merge_statistics(&leaf(keys[index]));
                    }
                    folder.push_repetitions(vec![summed], part as u64);
                    rest -= part;
                }
                index = end;
            }
            let nodes = folder.finish();
            prop_assert_eq!(expand(&nodes), keys.clone());
            let mut occurrences = 0;
            for_each_leaf(&nodes, &mut |leaf| occurrences += leaf.occurrences());
            prop_assert_eq!(occurrences, keys.len() as u64, "statistics cover every occurrence");
            // About as compact as pushing one by one (the greedy folder may fold a run that
            // arrives whole differently from one that arrives an occurrence at a time).
            let size = |nodes: &[Node<u32>]| nodes.iter().map(node_size).sum::<usize>();
            prop_assert!(size(&nodes) <= 2 * size(&fold(&keys)) + 2);
        }

        #[test]
        fn repeated_blocks_expand_exactly(block in proptest::collection::vec(0u32..5, 1..6), repeats in 1usize..60, tail in proptest::collection::vec(0u32..5, 0..5)) {
            let mut keys = Vec::new();
            for _ in 0..repeats { keys.extend_from_slice(&block); }
            keys.extend_from_slice(&tail);
            let nodes = fold(&keys);
            prop_assert_eq!(expand(&nodes), keys);
        }
    }

    /// Every loop count histogram in `nodes` (and the total number of leaf occurrences
    /// they stand for).
    fn count_histograms(nodes: &[Node<u32>], out: &mut Vec<(i64, i64, u64, i128)>) {
        for node in nodes {
            if let Node::Loop { body, counts, .. } = node {
                if let Some(counts) = counts {
                    out.push((counts.min, counts.max, counts.count, counts.sum));
                }
                count_histograms(body, out);
            }
        }
    }

    proptest! {
        /// Below precision 100, loops whose counts differ fold, but only counts within the
        /// margin of one another share a histogram, and the leaves' statistics still count
        /// every occurrence.
        #[test]
        fn loop_counts_blur_within_the_precision(
            counts in proptest::collection::vec(1u64..40, 1..60),
            precision in prop_oneof![Just(0u8), Just(50), Just(90), Just(95), Just(100)],
        ) {
            let mut folder = Folder::default();
            folder.set_precision(precision);
            let mut events = 0u64;
            for count in &counts {
                folder.push(leaf(1));
                events += 1;
                for _ in 0..*count {
                    folder.push(leaf(2));
                    events += 1;
                }
            }
            let nodes = folder.finish();
            prop_assert_eq!(occurrence_count(&nodes), events);
            let mut total = 0;
            for_each_leaf(&nodes, &mut |leaf| total += leaf.duration.count);
            prop_assert_eq!(total, events);
            let mut histograms = Vec::new();
            count_histograms(&nodes, &mut histograms);
            if precision == 100 {
                prop_assert!(histograms.is_empty());
            }
            for (min, max, _, _) in histograms {
                prop_assert!(Histogram::within(precision, min, max), "{} {} at {}", min, max, precision);
            }
        }
    }
}

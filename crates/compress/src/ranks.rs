//! Merging the folded streams of many ranks into few: ScalaTrace's inter-process merge,
//! restricted to what keeps every rank exact.
//!
//! Two ranks' streams merge when they have the same structure (loops nested alike, leaves
//! with the same call, context, errno, flags, access order and kinds of file and offset
//! reference) and every other kept value — loop count, handle, file delta, offset, request,
//! result, peer/aux, offset range — is the same affine function of the rank in both: the
//! stored value plus `slope · (rank − base rank)` ([`RankSlopes`], and a count slope per
//! loop); an MPI peer may also wrap round the job size (a ring's ends). That covers what SPMD
//! programs do (`rank ± 1` peers, a block per rank in a shared file, one file per rank
//! numbered by rank) and never approximates: expanding the merged stream for any member rank
//! gives back that rank's exact values.
//!
//! What is merged, and so no longer per rank, are the timing statistics: a merged leaf holds
//! the statistics of all its ranks' occurrences (mean, min, max, variance, histogram), and a
//! walk of one member sees its share of them.
//!
//! Ranks with different roles share a stream too (ScalaTrace aligns ranks' sequences the
//! same way): a group is a sequence of parts, one per top-level node, each with the ranks
//! that have it. A rank whose top-level nodes are not those of a group is aligned with the
//! group's parts (longest common subsequence of their structures); the parts it matches and
//! fits take it in, its other nodes become parts of its own, and the group's parts it lacks
//! leave it out. Parts only some ranks have are written as a loop run once by a
//! [`RankSet`] (rank 0 creating the shared file, every eighth rank aggregating Open MPI's
//! collective writes), so such roles cost their own nodes, not a stream each with
//! statistics of its own. A rank joins by alignment only if it matches at least half of
//! the group's parts or of its own nodes, whichever are fewer (otherwise it starts a
//! group): unrelated streams stay apart.
//!
//! Grouping is greedy in input order: a stream joins the first group of its partition
//! whose parts it fits (a part of one rank takes its slopes from the second), otherwise it
//! starts a new group. Cost: one pass over each member's folded tree per group tried, plus
//! an alignment (parts × nodes, at most [`ALIGNMENT_CELLS`], and at most
//! [`ALIGNMENT_BUDGET`] cells in one merge) for a rank whose top-level structure differs,
//! so O(P · folded size · groups) for SPMD programs; ranks of irregular streams that differ
//! from one another stop being aligned once the budget is spent (they keep streams of their
//! own, as before parts existed).

use std::hash::{Hash, Hasher};

use crate::fold::{for_each_leaf_mut, Node};
use crate::hash::{FastHasher, FastMap};
use crate::stats::Stats;
use crate::stream::{EventKey, FileRef, OffsetRef, RankSet, RankSlopes, Sharing};

const FIELDS: usize = RankSlopes::FIELDS;

/// Largest alignment (a group's parts times a rank's top-level nodes) tried: beyond it a
/// rank whose structure differs starts a group of its own.
pub const ALIGNMENT_CELLS: usize = 1 << 16;

/// Alignment cells one merge may spend in all (about a second).
pub const ALIGNMENT_BUDGET: usize = 1 << 28;

/// How many groups of a partition a rank is aligned with before it starts its own.
const ALIGNMENTS_TRIED: usize = 8;

/// One stream to merge, with this rank's own (concrete) keys.
pub struct Member {
    pub rank: i64,
    /// Only members of the same partition merge (e.g. the thread's position in its process).
    pub partition: u64,
    /// The member's own nodes. Its leaves' statistics are added to the group's: a member
    /// of an already merged stream whose statistics another member carries has empty ones
    /// ([`crate::stream::Body::member_nodes`]).
    pub nodes: Vec<Node<EventKey>>,
}

/// Streams that merged: the members' parts with every member's statistics, and the slopes
/// and rank sets that give each member's own values and nodes.
pub struct Group {
    /// Indices of the members (into the input), in input order; the first is the base.
    pub members: Vec<usize>,
    pub base_rank: i64,
    pub nodes: Vec<Node<EventKey>>,
    pub sharing: Sharing,
}

/// How a member fits a group: its slopes, the leaves whose peer wraps round the job, and
/// the loop counts' slopes.
struct Fitted {
    slopes: Vec<[i64; FIELDS]>,
    wrapping: Vec<usize>,
    loop_slopes: Vec<i64>,
}

/// What is merged of a leaf: its duration and gap statistics, and which rank had the
/// longest single duration (a distance from the member's rank in a member's tree, an
/// absolute rank once merged).
#[derive(Clone, Copy, Default)]
struct Merged {
    duration: Stats,
    gap: Stats,
    slowest: i64,
}

/// A tree reduced to what must be equal (`shape`), what may vary with the rank (`values`)
/// and what is merged (`statistics`), one row per leaf in depth-first order.
#[derive(Default)]
struct Flat {
    shape: Vec<u64>,
    values: Vec<[i64; FIELDS]>,
    statistics: Vec<Merged>,
    /// Loop counts in pre-order: they may be affine in the rank too.
    loops: Vec<i64>,
}

fn flatten(nodes: &[Node<EventKey>], flat: &mut Flat) {
    for node in nodes {
        match node {
            Node::Loop { count, body } => {
                flat.shape.extend([1, body.len() as u64]);
                flat.loops.push(*count as i64);
                flatten(body, flat);
            }
            Node::Leaf(leaf) => {
                let key = &leaf.key;
                let file_kind = match key.file {
                    FileRef::None => 0,
                    FileRef::Bound => 1,
                    FileRef::Delta(_) => 2,
                };
                let offset_kind = match key.offset {
                    OffsetRef::Unknown => 0,
                    OffsetRef::First(_) => 1,
                    OffsetRef::Delta(_) => 2,
                    OffsetRef::Column => 3,
                };
                flat.shape.extend([
                    0,
                    key.call as u64,
                    key.context as u64,
                    key.errno as u32 as u64,
                    key.flags as u64,
                    key.order as u64 | file_kind << 8 | offset_kind << 16,
                ]);
                flat.values.push(RankSlopes::values(leaf));
                flat.statistics.push(Merged {
                    duration: leaf.duration,
                    gap: leaf.gap,
                    slowest: leaf.slowest,
                });
            }
        }
    }
}

/// One part of a forming group: a top-level node and the ranks that have it.
struct Forming {
    /// The ranks that have the part, increasing (equal ones only in a group without parts
    /// of some ranks).
    ranks: Vec<i64>,
    base_rank: i64,
    base: Flat,
    /// Of `base.shape`.
    hash: u64,
    node: Node<EventKey>,
    /// Decided by the second rank: of the leaves' values and of the loop counts.
    slopes: Option<Vec<[i64; FIELDS]>>,
    loop_slopes: Vec<i64>,
    /// Per leaf, with absolute slowest ranks.
    statistics: Vec<Merged>,
    /// Per leaf: the job size modulo which the peer wraps (0: it does not).
    moduli: Vec<i64>,
}

/// The peer (low 32 bits of an MPI call's aux) and the rest (tag).
fn peer_and_rest(aux: i64) -> (i64, i64) {
    (aux as u64 as u32 as i64, (aux as u64 >> 32) as i64)
}

const AUX: usize = 5;

/// The slope of a value that moved by `difference` over `distance` ranks: the group's
/// `known` slope once its second member decided it, else the one this member implies
/// (`None` if no whole slope does).
fn slope_through(known: Option<i64>, difference: i128, distance: i128) -> Option<i128> {
    match known {
        Some(slope) => Some(slope as i128),
        None if distance == 0 => Some(0),
        None if difference % distance == 0 => Some(difference / distance),
        None => None,
    }
}

impl Forming {
    /// The slopes with which `values` (of `rank`) fits this group, if it does, and the
    /// leaves whose peer fits only modulo `job_size` (ring neighbours wrapping round).
    fn fit(
        &self,
        rank: i64,
        values: &[[i64; FIELDS]],
        loops: &[i64],
        job_size: i64,
    ) -> Option<Fitted> {
        let distance = rank as i128 - self.base_rank as i128;
        let mut loop_slopes = Vec::with_capacity(loops.len());
        for (index, (count, base)) in loops.iter().zip(&self.base.loops).enumerate() {
            let difference = *count as i128 - *base as i128;
            let known = self.slopes.as_ref().map(|_| self.loop_slopes[index]);
            let slope = slope_through(known, difference, distance)?;
            if slope * distance != difference {
                return None;
            }
            loop_slopes.push(i64::try_from(slope).ok()?);
        }
        let mut slopes = Vec::with_capacity(values.len());
        let mut wrapping = Vec::new();
        for (index, (row, base)) in values.iter().zip(&self.base.values).enumerate() {
            let mut slope_row = [0i64; FIELDS];
            for field in 0..FIELDS {
                let difference = row[field] as i128 - base[field] as i128;
                let known = self.slopes.as_ref().map(|known| known[index][field]);
                let slope = slope_through(known, difference, distance)?;
                slope_row[field] = i64::try_from(slope).ok()?;
                let wrapping_already = field == AUX && self.moduli[index] > 0;
                if !wrapping_already && slope * distance == difference {
                    continue;
                }
                // Only a peer may wrap, and only with slopes known (checked lazily: the
                // check of earlier members is linear in them).
                let modulus = if wrapping_already {
                    self.moduli[index]
                } else {
                    job_size
                };
                let modular = field == AUX
                    && self.slopes.is_some()
                    && self.wraps(
                        index,
                        base[field],
                        row[field],
                        slope_row[field],
                        distance,
                        modulus,
                    );
                if !modular {
                    return None;
                }
                if !wrapping_already {
                    wrapping.push(index);
                }
            }
            slopes.push(slope_row);
        }
        Some(Fitted {
            slopes,
            wrapping,
            loop_slopes,
        })
    }

    /// Whether the peer in `value` is the base's plus `slope · distance`, modulo
    /// `modulus`, with the tag unchanged — and, for a leaf not yet wrapping, whether every
    /// earlier member's peer stays what it was under the modulus (it is a rank below it).
    fn wraps(
        &self,
        leaf: usize,
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
        self.moduli[leaf] > 0
            || self.ranks.iter().all(|rank| {
                let earlier = base_peer as i128 + slope as i128 * (*rank - self.base_rank) as i128;
                (0..modulus).contains(&earlier)
            })
    }

    /// A part of the node `item` of the rank `rank`.
    fn new(rank: i64, mut item: Item) -> Forming {
        let (leaves, loops) = (item.flat.values.len(), item.flat.loops.len());
        let statistics = std::mem::take(&mut item.flat.statistics);
        let mut part = Forming {
            ranks: vec![rank],
            base_rank: rank,
            base: item.flat,
            hash: item.hash,
            node: item.node,
            slopes: None,
            loop_slopes: vec![0; loops],
            statistics: vec![Merged::default(); leaves],
            moduli: vec![0; leaves],
        };
        part.add_statistics(rank, &statistics);
        part
    }

    /// Takes in the rank `rank` whose node fitted as `fitted`.
    fn admit(&mut self, rank: i64, fitted: Fitted, statistics: &[Merged], job_size: i64) {
        for leaf in fitted.wrapping {
            self.moduli[leaf] = job_size;
        }
        self.ranks.push(rank);
        if self.slopes.is_none() && self.base_rank != rank {
            self.slopes = Some(fitted.slopes);
            self.loop_slopes = fitted.loop_slopes;
        }
        self.add_statistics(rank, statistics);
    }

    /// Adds a rank's statistics (its node's, read for `rank`).
    fn add_statistics(&mut self, rank: i64, statistics: &[Merged]) {
        for (merged, leaf) in self.statistics.iter_mut().zip(statistics) {
            if leaf.duration.count > 0
                && (merged.duration.count == 0 || leaf.duration.max > merged.duration.max)
            {
                merged.slowest = rank.wrapping_add(leaf.slowest);
            }
            merged.duration.merge(&leaf.duration);
            merged.gap.merge(&leaf.gap);
        }
    }

    /// The part's node with merged statistics and its slopes (added to `table`), and its
    /// loops' count slopes in pre-order. Values are stored as the part's first rank has
    /// them.
    fn finish(
        mut self,
        table: &mut Vec<RankSlopes>,
        indices: &mut FastMap<RankSlopes, u32>,
    ) -> (Node<EventKey>, Vec<i64>) {
        let slopes = self.slopes.take();
        let mut index = 0;
        let statistics = &self.statistics;
        let base_rank = self.base_rank;
        let moduli = &self.moduli;
        for_each_leaf_mut(std::slice::from_mut(&mut self.node), &mut |leaf| {
            leaf.duration = statistics[index].duration;
            leaf.gap = statistics[index].gap;
            leaf.slowest = statistics[index].slowest.wrapping_sub(base_rank);
            // A member expanded from a shared stream still names that stream's slopes.
            leaf.key.parameters = 0;
            if let Some(row) = slopes.as_ref().map(|slopes| slopes[index]) {
                if row != [0; FIELDS] {
                    let mut slope = RankSlopes::from_array(row);
                    slope.peer_modulus = moduli[index];
                    let parameter = *indices.entry(slope).or_insert_with(|| {
                        table.push(slope);
                        table.len() as u32
                    });
                    leaf.key.parameters = parameter;
                }
            }
            index += 1;
        });
        (self.node, self.loop_slopes)
    }
}

/// One top-level node of a member, reduced for comparison.
struct Item {
    flat: Flat,
    /// Of `flat.shape`: equal shapes, equal hashes.
    hash: u64,
    node: Node<EventKey>,
}

fn items_of(nodes: Vec<Node<EventKey>>) -> Vec<Item> {
    nodes
        .into_iter()
        .map(|node| {
            let mut flat = Flat::default();
            flatten(std::slice::from_ref(&node), &mut flat);
            let mut hasher = FastHasher::default();
            flat.shape.hash(&mut hasher);
            Item {
                flat,
                hash: hasher.finish(),
                node,
            }
        })
        .collect()
}

/// A group being formed: its members and its parts in order.
struct Candidate {
    members: Vec<usize>,
    ranks: Vec<i64>,
    parts: Vec<Forming>,
    /// Top-level nodes of the largest member: a group takes in ranks by alignment while
    /// its parts stay within twice that (plus a few), so ranks that each bring parts of
    /// their own start groups instead of making every member walk all the others' parts.
    largest_member: usize,
}

/// One step of an alignment of a group's parts with a member's items.
#[derive(Clone, Copy)]
enum Step {
    Both(usize, usize),
    Part(usize),
    Item(usize),
}

/// The longest common subsequence of `n` parts and `m` items under `matches`, as steps in
/// order (the group's unmatched parts before the member's between two matches); `None` if
/// it would take more than [`ALIGNMENT_CELLS`] or what is left of `budget`.
fn align(
    n: usize,
    m: usize,
    budget: &mut usize,
    mut matches: impl FnMut(usize, usize) -> bool,
) -> Option<Vec<Step>> {
    if n == m && (0..n).all(|index| matches(index, index)) {
        return Some((0..n).map(|index| Step::Both(index, index)).collect());
    }
    let cells = n.saturating_mul(m);
    if cells > ALIGNMENT_CELLS || cells > *budget {
        return None;
    }
    *budget -= cells;
    // lengths[i][j]: LCS of parts[i..] and items[j..].
    let width = m + 1;
    let mut lengths = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i * width + j] = if matches(i, j) {
                lengths[(i + 1) * width + j + 1] + 1
            } else {
                lengths[(i + 1) * width + j].max(lengths[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut steps = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m && matches(i, j) {
            steps.push(Step::Both(i, j));
            (i, j) = (i + 1, j + 1);
        } else if j == m || (i < n && lengths[(i + 1) * width + j] >= lengths[i * width + j + 1]) {
            steps.push(Step::Part(i));
            i += 1;
        } else {
            steps.push(Step::Item(j));
            j += 1;
        }
    }
    Some(steps)
}

impl Candidate {
    fn restricted(&self) -> bool {
        self.parts
            .iter()
            .any(|part| part.ranks.len() != self.ranks.len())
    }

    /// Tries to take in `items` of the rank `rank`; gives them back if they do not fit.
    /// Alignments spend `budget`.
    fn join(
        &mut self,
        member: usize,
        rank: i64,
        items: Vec<Item>,
        job_size: i64,
        budget: &mut usize,
    ) -> Result<(), Vec<Item>> {
        // Parts of some ranks tell ranks apart by their distance from the base rank: a rank
        // that is not above the others may only join a group of equal parts, fitting all.
        let distinct = self.ranks.last().is_some_and(|last| rank > *last);
        let same_shape = || {
            self.parts.len() == items.len()
                && self
                    .parts
                    .iter()
                    .zip(&items)
                    .all(|(part, item)| part.base.shape == item.flat.shape)
        };
        if !distinct && !same_shape() {
            return Err(items);
        }
        let part_hashes: Vec<u64> = self.parts.iter().map(|part| part.hash).collect();
        // A part and an item match when their structures are equal and the item's values
        // fit the part's ranks (checked once per pair, only for equal structures).
        let mut fits: FastMap<(usize, usize), Option<Fitted>> = FastMap::default();
        let parts = &self.parts;
        let steps = align(parts.len(), items.len(), budget, |part, item| {
            part_hashes[part] == items[item].hash
                && fits
                    .entry((part, item))
                    .or_insert_with(|| {
                        let flat = &items[item].flat;
                        (parts[part].base.shape == flat.shape)
                            .then(|| parts[part].fit(rank, &flat.values, &flat.loops, job_size))
                            .flatten()
                    })
                    .is_some()
        });
        let Some(steps) = steps else {
            return Err(items);
        };
        let matched = steps
            .iter()
            .filter(|step| matches!(step, Step::Both(..)))
            .count();
        let everything = matched == steps.len();
        let enough = distinct
            && matched > 0
            && 2 * matched >= self.parts.len().min(items.len())
            && steps.len() <= 2 * self.largest_member.max(items.len()) + 16;
        if !(everything && (distinct || !self.restricted())) && !enough {
            return Err(items);
        }
        let item_count = items.len();
        let mut items: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        let mut old_parts: Vec<Option<Forming>> = std::mem::take(&mut self.parts)
            .into_iter()
            .map(Some)
            .collect();
        for step in steps {
            match step {
                Step::Both(part, item) => {
                    let fitted = fits
                        .remove(&(part, item))
                        .flatten()
                        .expect("a matched pair fitted");
                    let mut part = old_parts[part].take().expect("each part is aligned once");
                    let item = items[item].take().expect("each item is aligned once");
                    part.admit(rank, fitted, &item.flat.statistics, job_size);
                    self.parts.push(part);
                }
                Step::Part(part) => {
                    self.parts
                        .push(old_parts[part].take().expect("aligned once"));
                }
                Step::Item(item) => {
                    let item = items[item].take().expect("aligned once");
                    self.parts.push(Forming::new(rank, item));
                }
            }
        }
        self.members.push(member);
        self.ranks.push(rank);
        self.largest_member = self.largest_member.max(item_count);
        Ok(())
    }

    fn finish(self) -> Group {
        let base_rank = self.ranks[0];
        let everyone = self.ranks.len();
        let mut sharing = Sharing::default();
        let mut indices: FastMap<RankSlopes, u32> = FastMap::default();
        let finished: Vec<(Vec<i64>, Node<EventKey>, Vec<i64>)> = self
            .parts
            .into_iter()
            .map(|part| {
                let ranks = part.ranks.clone();
                let (node, loop_slopes) = part.finish(&mut sharing.parameters, &mut indices);
                (ranks, node, loop_slopes)
            })
            .collect();
        let mut set_indices: FastMap<Vec<i64>, u32> = FastMap::default();
        let members: Vec<i64> = self.ranks.iter().map(|rank| rank - base_rank).collect();
        let mut nodes = Vec::with_capacity(finished.len());
        // Consecutive parts of the same ranks share one loop run once by them.
        let mut finished = finished.into_iter().peekable();
        while let Some((ranks, node, mut loop_slopes)) = finished.next() {
            let mut body = vec![node];
            while let Some((_, node, slopes)) = finished.next_if(|next| next.0 == ranks) {
                body.push(node);
                loop_slopes.extend(slopes);
            }
            if ranks.len() != everyone {
                let deltas: Vec<i64> = ranks.iter().map(|rank| rank - base_rank).collect();
                let set = *set_indices.entry(deltas).or_insert_with_key(|deltas| {
                    sharing.rank_sets.push(RankSet::among(&members, deltas));
                    sharing.rank_sets.len() as u32
                });
                sharing.loop_slopes.push(0);
                sharing.loop_ranks.push(set);
                body = vec![Node::Loop { count: 1, body }];
            }
            sharing
                .loop_ranks
                .extend(std::iter::repeat_n(0, loop_slopes.len()));
            sharing.loop_slopes.extend(loop_slopes);
            nodes.extend(body);
        }
        Group {
            members: self.members,
            base_rank,
            nodes,
            sharing,
        }
    }
}

/// Groups `members` (each with concrete keys; their `parameters` are ignored) into merged
/// streams. `job_size` (the number of ranks, if known) lets MPI peers wrap round it: a ring's
/// last rank sends to rank 0 and its first receives from the last, and with the peer kept
/// modulo the job size they share the others' stream.
/// Members are taken one at a time: memory is the groups' parts plus one member.
pub fn merge_ranks(members: impl IntoIterator<Item = Member>, job_size: Option<i64>) -> Vec<Group> {
    let job_size = job_size.unwrap_or(0);
    let mut candidates: Vec<Candidate> = Vec::new();
    // partition → indices into `candidates`, in creation order.
    let mut partitions: FastMap<u64, Vec<usize>> = FastMap::default();
    let mut budget = ALIGNMENT_BUDGET;
    for (index, member) in members.into_iter().enumerate() {
        let mut items = items_of(member.nodes);
        let groups = partitions.entry(member.partition).or_default();
        let mut joined = false;
        let mut alignments = 0;
        for &candidate in groups.iter() {
            let group = &mut candidates[candidate];
            // A rank with as many top-level nodes as the group has parts is likely one of
            // its own kind: not counted against the alignments tried.
            if group.parts.len() != items.len() {
                if alignments == ALIGNMENTS_TRIED {
                    continue;
                }
                alignments += 1;
            }
            match group.join(index, member.rank, items, job_size, &mut budget) {
                Ok(()) => {
                    joined = true;
                    items = Vec::new();
                    break;
                }
                Err(returned) => items = returned,
            }
        }
        if !joined {
            let largest_member = items.len();
            let parts = items
                .into_iter()
                .map(|item| Forming::new(member.rank, item))
                .collect();
            groups.push(candidates.len());
            candidates.push(Candidate {
                members: vec![index],
                ranks: vec![member.rank],
                parts,
                largest_member,
            });
        }
    }
    candidates.into_iter().map(Candidate::finish).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{EncodedStream, StreamEncoder};
    use cairn_format::bytes::{ByteReader, ByteWriter};
    use cairn_model::{CallClass, Event};

    fn class_of(call: u16) -> Option<CallClass> {
        [CallClass::Open, CallClass::Write, CallClass::PointToPoint]
            .get(call as usize)
            .copied()
    }

    /// An SPMD rank: opens its own file, writes its block of a shared file, sends to the
    /// next rank; rank 0 also writes a header.
    fn rank_events(rank: i64, ranks: i64, steps: u64) -> Vec<Event> {
        let mut events = Vec::new();
        let mut clock = 1000 * rank as u64;
        let mut push = |call, file: Option<u32>, handle, offset, request: u64, aux, context| {
            clock += 10 + rank as u64;
            events.push(Event {
                call,
                start: clock,
                duration: 5 + rank as u64,
                file,
                handle,
                offset,
                request,
                result: request as i64,
                errno: 0,
                context,
                aux,
                flags: 0,
            });
        };
        push(0, Some(10 + rank as u32), 3, -1, 0, 0, 1);
        if rank == 0 {
            push(1, Some(1), 4, 0, 100, 0, 2);
        }
        for step in 0..steps {
            push(
                1,
                Some(1),
                4,
                (rank * 4096 + step as i64 * 4096 * ranks) + 100,
                4096,
                0,
                3,
            );
            push(2, None, 0x55aa, -1, 8, ((rank + 1) % ranks) as u64, 4);
        }
        events
    }

    fn encode(events: &[Event]) -> EncodedStream {
        let mut encoder = StreamEncoder::default();
        for event in events {
            encoder.push(event, class_of(event.call));
        }
        encoder.finish()
    }

    /// One member per stream, the n-th being rank n.
    fn members_of(streams: &[(Vec<Event>, EncodedStream)]) -> Vec<Member> {
        streams
            .iter()
            .enumerate()
            .map(|(rank, (_, stream))| Member {
                rank: rank as i64,
                partition: 0,
                nodes: stream.nodes().member_nodes(true),
            })
            .collect()
    }

    fn exact(event: &Event) -> (u16, Option<u32>, u64, i64, u64, i64, u64) {
        let Event {
            call,
            file,
            handle,
            offset,
            request,
            result,
            aux,
            ..
        } = *event;
        (call, file, handle, offset, request, result, aux)
    }

    #[test]
    fn spmd_ranks_merge_into_one_group_and_expand_exactly() {
        for ranks in [2i64, 3, 8, 64] {
            let streams: Vec<(Vec<Event>, EncodedStream)> = (0..ranks)
                .map(|rank| {
                    let events = rank_events(rank, ranks, 50);
                    let stream = encode(&events);
                    (events, stream)
                })
                .collect();
            let groups = merge_ranks(members_of(&streams), Some(ranks));
            // Rank 0 writes a header: a part of its own, and its first block write follows
            // the header where the others' is their first access to the file, so that
            // part is all other ranks'. The last rank's peer wraps to 0, which the peer
            // kept modulo the job size covers.
            assert_eq!(groups.len(), 1, "{ranks} ranks");
            let others: Vec<i64> = (1..ranks).collect();
            let everyone: Vec<i64> = (0..ranks).collect();
            assert_eq!(
                groups[0].sharing.rank_sets,
                vec![
                    RankSet::from_sorted(&[0]),
                    RankSet::among(&everyone, &others)
                ]
            );
            // Every rank but 0: one run either way, so listed.
            assert_eq!(groups[0].sharing.rank_sets[1].len(), ranks as u64 - 1);
            let described = groups[0].sharing.rank_sets[1].describe(0);
            let expected = match ranks {
                2 => "only ranks 1".to_string(),
                3 => "only ranks 1,2".to_string(),
                _ => format!("only ranks 1-{}", ranks - 1),
            };
            assert_eq!(described, expected);
            assert_eq!(
                groups[0]
                    .sharing
                    .loop_ranks
                    .iter()
                    .filter(|set| **set > 0)
                    .count(),
                2
            );
            let mut covered = 0;
            for group in &groups {
                let shared = group.members.len() > 1;
                let merged = EncodedStream::from_nodes(&group.nodes, 0, 0, &group.sharing, shared);
                let merged = EncodedStream::from_bytes(merged.bytes().to_vec()).unwrap();
                // Durations grow with the rank: every leaf's slowest is the highest rank that
                // has it (rank 0 alone has the header), read back for any member as its
                // distance from that member.
                let highest = group.members.iter().max().copied().unwrap() as i64;
                for member in &group.members {
                    let delta = *member as i64 - group.base_rank;
                    let mut slowest = Vec::new();
                    crate::fold::for_each_occurrence(
                        &merged.nodes_for_rank(delta).member_nodes(true),
                        &mut |leaf| slowest.push(*member as i64 + leaf.slowest),
                    );
                    // Rank 0's own parts: it is the only rank, so the slowest.
                    let own = slowest.iter().filter(|rank| **rank == 0).count();
                    assert_eq!(own > 0, *member == 0, "{slowest:?}");
                    assert_eq!(
                        slowest.iter().filter(|rank| **rank == highest).count(),
                        slowest.len() - own,
                        "{slowest:?}"
                    );
                }
                let events_in_group: u64 = group
                    .members
                    .iter()
                    .map(|member| streams[*member].0.len() as u64)
                    .sum();
                let mut durations = Stats::default();
                crate::fold::for_each_occurrence(&group.nodes, &mut |leaf| {
                    durations.merge(&leaf.duration)
                });
                // Statistics cover every member's events once.
                assert!(durations.count >= events_in_group / group.members.len() as u64);
                for member in &group.members {
                    let rank = *member as i64;
                    let mut expanded = Vec::new();
                    merged.expand_for_rank(rank - group.base_rank, 0, class_of, |event| {
                        expanded.push(exact(&event))
                    });
                    let original: Vec<_> = streams[*member].0.iter().map(exact).collect();
                    assert_eq!(expanded, original, "rank {rank} of {ranks}");
                    covered += 1;
                }
            }
            assert_eq!(covered, ranks);
        }
    }

    #[test]
    fn loop_counts_affine_in_the_rank_merge_and_expand_exactly() {
        // Rank r makes 5 + 2r steps (the same events otherwise, all as rank 1 would):
        // one group whose loop count grows with the rank.
        let steps = |rank: u64| 5 + 2 * rank;
        let streams: Vec<(Vec<Event>, EncodedStream)> = (0..6u64)
            .map(|rank| {
                let events = rank_events(1, 4, steps(rank));
                let stream = encode(&events);
                (events, stream)
            })
            .collect();
        let groups = merge_ranks(members_of(&streams), Some(6));
        assert_eq!(groups.len(), 1);
        let group = &groups[0];
        assert!(
            group.sharing.loop_slopes.contains(&2),
            "{:?}",
            group.sharing.loop_slopes
        );
        let merged = EncodedStream::from_nodes(&group.nodes, 0, 0, &group.sharing, true);
        let merged = EncodedStream::from_bytes(merged.bytes().to_vec()).unwrap();
        for (rank, (events, _)) in streams.iter().enumerate() {
            let delta = rank as i64 - group.base_rank;
            let mut expanded = Vec::new();
            merged.expand_for_rank(delta, 0, class_of, |event| expanded.push(exact(&event)));
            let original: Vec<_> = events.iter().map(exact).collect();
            assert_eq!(expanded, original, "rank {rank}");
            assert_eq!(merged.count_for_rank(delta), events.len() as u64);
        }
    }

    #[test]
    fn unrelated_streams_do_not_merge() {
        // Rank 1 does something else altogether: a loop of reads of another file.
        let other: Vec<Event> = (0..20)
            .map(|step| Event {
                call: 1,
                start: 10 * step,
                duration: 3,
                file: Some(7),
                handle: 9,
                offset: 512 * step as i64,
                request: 512,
                result: 512,
                errno: 0,
                context: 8,
                aux: 0,
                flags: 0,
            })
            .collect();
        let members = vec![
            Member {
                rank: 0,
                partition: 0,
                nodes: encode(&rank_events(0, 4, 5)).nodes().member_nodes(true),
            },
            Member {
                rank: 1,
                partition: 0,
                nodes: encode(&other).nodes().member_nodes(true),
            },
        ];
        assert_eq!(merge_ranks(members, Some(4)).len(), 2);
    }

    #[test]
    fn ranks_not_above_the_others_do_not_split_parts() {
        // Two streams of rank 1 (say a forked child's): the second cannot be told apart by
        // rank, so it joins only where it fits every part.
        let members: Vec<Member> = [0i64, 1, 1]
            .iter()
            .map(|rank| Member {
                rank: *rank,
                partition: 0,
                nodes: encode(&rank_events(*rank, 4, 5)).nodes().member_nodes(true),
            })
            .collect();
        let groups = merge_ranks(members, Some(4));
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].members, vec![0, 1]);
        assert_eq!(groups[1].members, vec![2]);
    }

    /// One member per event list, the n-th being rank n.
    fn members_of_events(originals: &[Vec<Event>]) -> Vec<Member> {
        originals
            .iter()
            .enumerate()
            .map(|(rank, events)| Member {
                rank: rank as i64,
                partition: 0,
                nodes: encode(events).nodes().member_nodes(true),
            })
            .collect()
    }

    /// Every leaf's statistics count: each event of each member is in exactly one.
    fn statistics_count(nodes: &[Node<EventKey>]) -> u64 {
        let mut total = 0;
        let mut nodes = nodes.to_vec();
        for_each_leaf_mut(&mut nodes, &mut |leaf| total += leaf.duration.count);
        total
    }

    /// Merges `members`, checks that every member expands to `originals[member]` exactly
    /// and that the statistics hold every event once; gives back each member's nodes as
    /// the merged trace has them (for merging again).
    fn merge_and_check(members: Vec<Member>, originals: &[Vec<Event>], ranks: i64) -> Vec<Member> {
        let mut again = Vec::new();
        let groups = merge_ranks(members, Some(ranks));
        let mut statistics = 0;
        for group in &groups {
            let merged = EncodedStream::from_nodes(
                &group.nodes,
                0,
                0,
                &group.sharing,
                group.members.len() > 1,
            );
            let merged = EncodedStream::from_bytes(merged.bytes().to_vec()).unwrap();
            statistics += statistics_count(&merged.nodes().to_nodes());
            for (position, member) in group.members.iter().enumerate() {
                let delta = *member as i64 - group.base_rank;
                let mut expanded = Vec::new();
                merged.expand_for_rank(delta, 0, class_of, |event| expanded.push(exact(&event)));
                let original: Vec<_> = originals[*member].iter().map(exact).collect();
                assert_eq!(expanded, original, "rank {member} of {ranks}");
                assert_eq!(merged.count_for_rank(delta), original.len() as u64);
                again.push(Member {
                    rank: *member as i64,
                    partition: 0,
                    nodes: merged.nodes_for_rank(delta).member_nodes(position == 0),
                });
            }
        }
        let events: usize = originals.iter().map(Vec::len).sum();
        assert_eq!(statistics, events as u64);
        again.sort_by_key(|member| member.rank);
        again
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// SPMD ranks where random subsets of ranks do something more at random places:
        /// merged (and merged again, as a tree of merges does), every rank expands to its
        /// own events exactly and the statistics hold every event once.
        #[test]
        fn ranks_with_parts_of_their_own_expand_exactly(
            ranks in 2i64..12,
            steps in 1u64..5,
            extras in proptest::collection::vec((0usize..20, 1u16..u16::MAX, 0u64..3), 0..4),
        ) {
            let originals: Vec<Vec<Event>> = (0..ranks)
                .map(|rank| {
                    let mut events = rank_events(rank, ranks, steps);
                    for &(position, mask, kind) in extras.iter().rev() {
                        if mask >> (rank % 16) & 1 == 0 {
                            continue;
                        }
                        let at = position.min(events.len());
                        let mut extra = events[at.saturating_sub(1)].clone();
                        extra.call = 1;
                        extra.file = Some(30 + kind as u32);
                        extra.handle = 7;
                        extra.offset = 8192 * kind as i64;
                        extra.request = 64;
                        extra.result = 64;
                        extra.context = 20 + kind as u32;
                        extra.aux = 0;
                        events.insert(at, extra);
                    }
                    events
                })
                .collect();
            let again = merge_and_check(members_of_events(&originals), &originals, ranks);
            merge_and_check(again, &originals, ranks);
        }
    }

    #[test]
    fn a_rank_that_does_not_fit_one_part_keeps_only_that_part_to_itself() {
        // 8 ranks in a ring merged as if the job had 16: the last rank's peer (rank 0)
        // is not the next rank modulo 16, so its loop is a part of its own; the ranks
        // after it in the merge (none here) and before it still share theirs.
        let originals: Vec<Vec<Event>> = (0..8).map(|rank| rank_events(rank, 8, 5)).collect();
        let groups = merge_ranks(members_of_events(&originals), Some(16));
        assert_eq!(groups.len(), 1);
        let described: Vec<String> = groups[0]
            .sharing
            .rank_sets
            .iter()
            .map(|set| set.describe(0))
            .collect();
        // Rank 0's header, the others' first block write, the loop of all but the last, its own.
        assert_eq!(
            described,
            [
                "only ranks 0",
                "only ranks 1-7",
                "only ranks 0-6",
                "only ranks 7"
            ]
        );
        merge_and_check(members_of_events(&originals), &originals, 16);
    }

    #[test]
    fn rank_sets_hold_their_ranks() {
        for deltas in [
            vec![0],
            vec![0, 8, 16, 24],
            vec![1, 2, 3, 7, 9, 20],
            vec![5, 6],
        ] {
            let set = RankSet::from_sorted(&deltas);
            for delta in -2..30 {
                assert_eq!(
                    set.contains(delta),
                    deltas.contains(&delta),
                    "{deltas:?} {delta}"
                );
            }
            assert_eq!(set.len(), deltas.len() as u64);
            assert_eq!(set.first(), deltas[0]);
        }
        assert_eq!(
            RankSet::from_sorted(&[0, 8, 16, 24]).describe(0),
            "only ranks 0-24/8"
        );
        assert_eq!(
            RankSet::from_sorted(&[1, 2, 3, 7]).describe(1),
            "only ranks 2-4,8"
        );
        // Every rank of 64 but the aggregators 0, 8, ..., 56: one run left out.
        let members: Vec<i64> = (0..64).collect();
        let others: Vec<i64> = members
            .iter()
            .copied()
            .filter(|rank| rank % 8 != 0)
            .collect();
        let set = RankSet::among(&members, &others);
        assert_eq!(set.describe(0), "all ranks but 0-56/8");
        assert_eq!((set.first(), set.len()), (1, 56));
        for member in &members {
            assert_eq!(set.contains(*member), member % 8 != 0, "{member}");
        }
        let mut bytes = ByteWriter::new();
        set.encode(&mut bytes);
        let bytes = bytes.into_inner();
        let decoded = RankSet::decode(&mut ByteReader::new(&bytes, "test")).unwrap();
        assert_eq!(decoded, set);
    }
}

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
//! Grouping is greedy in input order: a stream joins the first group of its structure whose
//! slopes it fits (a group of one takes its slopes from the second member), otherwise it
//! starts a new group. Cost: one pass over each member's folded tree per group tried, so
//! O(P · folded size · groups of the same structure).

use std::hash::{Hash, Hasher};

use crate::fold::{for_each_leaf_mut, Node};
use crate::hash::{FastHasher, FastMap};
use crate::stats::Stats;
use crate::stream::{EventKey, FileRef, OffsetRef, RankSlopes};

const FIELDS: usize = RankSlopes::FIELDS;

/// One stream to merge, with this rank's own (concrete) keys.
pub struct Member {
    pub rank: i64,
    /// Only members of the same partition merge (e.g. the thread's position in its process).
    pub partition: u64,
    pub nodes: Vec<Node<EventKey>>,
    /// Whether this member's timing statistics are counted. Members that came from one
    /// already merged stream share its statistics: only the first of them carries them.
    pub carries_statistics: bool,
}

/// Streams that merged: the base member's tree with every member's statistics, and the
/// slopes that give each member's values.
pub struct Group {
    /// Indices of the members (into the input), in input order; the first is the base.
    pub members: Vec<usize>,
    pub base_rank: i64,
    pub nodes: Vec<Node<EventKey>>,
    pub parameters: Vec<RankSlopes>,
    /// How each loop's count changes with the rank, in pre-order.
    pub loop_slopes: Vec<i64>,
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

struct Forming {
    members: Vec<usize>,
    /// The members' ranks, in the same order.
    ranks: Vec<i64>,
    base_rank: i64,
    base: Flat,
    nodes: Vec<Node<EventKey>>,
    /// Decided by the second member: of the leaves' values and of the loop counts.
    slopes: Option<Vec<[i64; FIELDS]>>,
    loop_slopes: Vec<i64>,
    /// Per leaf, with absolute slowest ranks.
    statistics: Vec<Merged>,
    carried: bool,
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

    /// Adds a member's statistics (its tree's, read for `rank`).
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
        self.carried = true;
    }

    fn finish(mut self) -> Group {
        let mut table: Vec<RankSlopes> = Vec::new();
        let mut indices: FastMap<RankSlopes, u32> = FastMap::default();
        let slopes = self.slopes.take();
        let mut index = 0;
        let statistics = &self.statistics;
        let carried = self.carried;
        let base_rank = self.base_rank;
        let moduli = &self.moduli;
        for_each_leaf_mut(&mut self.nodes, &mut |leaf| {
            if carried {
                leaf.duration = statistics[index].duration;
                leaf.gap = statistics[index].gap;
                leaf.slowest = statistics[index].slowest.wrapping_sub(base_rank);
            }
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
        Group {
            members: self.members,
            base_rank: self.base_rank,
            nodes: self.nodes,
            parameters: table,
            loop_slopes: self.loop_slopes,
        }
    }
}

/// Groups `members` (each with concrete keys; their `parameters` are ignored) into merged
/// streams. `job_size` (the number of ranks, if known) lets MPI peers wrap round it: a ring's
/// last rank sends to rank 0 and its first receives from the last, and with the peer kept
/// modulo the job size they share the others' stream.
/// Members are taken one at a time: memory is the groups' base trees plus one member.
pub fn merge_ranks(members: impl IntoIterator<Item = Member>, job_size: Option<i64>) -> Vec<Group> {
    let job_size = job_size.unwrap_or(0);
    // (partition, shape hash) → indices into `forming`.
    let mut buckets: FastMap<(u64, u64), Vec<usize>> = FastMap::default();
    let mut forming: Vec<Forming> = Vec::new();
    for (index, member) in members.into_iter().enumerate() {
        let mut flat = Flat::default();
        flatten(&member.nodes, &mut flat);
        let mut hasher = FastHasher::default();
        flat.shape.hash(&mut hasher);
        let bucket = buckets
            .entry((member.partition, hasher.finish()))
            .or_default();
        let joined = bucket.iter().copied().find_map(|candidate| {
            let group = &forming[candidate];
            if group.base.shape != flat.shape {
                return None;
            }
            group
                .fit(member.rank, &flat.values, &flat.loops, job_size)
                .map(|fitted| (candidate, fitted))
        });
        match joined {
            Some((candidate, fitted)) => {
                let group = &mut forming[candidate];
                for leaf in fitted.wrapping {
                    group.moduli[leaf] = job_size;
                }
                group.members.push(index);
                group.ranks.push(member.rank);
                if group.slopes.is_none() && group.base_rank != member.rank {
                    group.slopes = Some(fitted.slopes);
                    group.loop_slopes = fitted.loop_slopes;
                }
                if member.carries_statistics {
                    group.add_statistics(member.rank, &flat.statistics);
                }
            }
            None => {
                let (leaves, loops) = (flat.values.len(), flat.loops.len());
                let mut group = Forming {
                    members: vec![index],
                    ranks: vec![member.rank],
                    base_rank: member.rank,
                    base: flat,
                    nodes: Vec::new(),
                    slopes: None,
                    loop_slopes: vec![0; loops],
                    statistics: vec![Merged::default(); leaves],
                    carried: false,
                    moduli: vec![0; leaves],
                };
                if member.carries_statistics {
                    let statistics = std::mem::take(&mut group.base.statistics);
                    group.add_statistics(member.rank, &statistics);
                }
                group.nodes = member.nodes;
                bucket.push(forming.len());
                forming.push(group);
            }
        }
    }
    forming.into_iter().map(Forming::finish).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{EncodedStream, StreamEncoder};
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
                nodes: stream.nodes().to_nodes(),
                carries_statistics: true,
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
    fn spmd_ranks_merge_into_a_constant_number_of_groups_and_expand_exactly() {
        for ranks in [2i64, 3, 8, 64] {
            let streams: Vec<(Vec<Event>, EncodedStream)> = (0..ranks)
                .map(|rank| {
                    let events = rank_events(rank, ranks, 50);
                    let stream = encode(&events);
                    (events, stream)
                })
                .collect();
            let groups = merge_ranks(members_of(&streams), Some(ranks));
            // Rank 0 (it writes a header) and all the others: the last rank's peer wraps
            // to 0, which the peer kept modulo the job size covers.
            assert_eq!(groups.len(), 2, "{ranks} ranks");
            let mut covered = 0;
            for group in &groups {
                let shared = group.members.len() > 1;
                let merged = EncodedStream::from_nodes(
                    &group.nodes,
                    0,
                    0,
                    &group.parameters,
                    &group.loop_slopes,
                    shared,
                );
                let merged = EncodedStream::from_bytes(merged.bytes().to_vec()).unwrap();
                // Durations grow with the rank: every leaf's slowest is the group's highest
                // rank, read back for any member as its distance from that member.
                let highest = group.members.iter().max().copied().unwrap() as i64;
                for member in &group.members {
                    let delta = *member as i64 - group.base_rank;
                    let mut slowest = Vec::new();
                    crate::fold::for_each_occurrence(
                        &merged.nodes_for_rank(delta).to_nodes(),
                        &mut |leaf| slowest.push(*member as i64 + leaf.slowest),
                    );
                    assert!(slowest.iter().all(|rank| *rank == highest), "{slowest:?}");
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
        assert!(group.loop_slopes.contains(&2), "{:?}", group.loop_slopes);
        let merged = EncodedStream::from_nodes(
            &group.nodes,
            0,
            0,
            &group.parameters,
            &group.loop_slopes,
            true,
        );
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
    fn different_structures_do_not_merge() {
        // Rank 0 writes a header the others do not.
        let members: Vec<Member> = [0i64, 1]
            .iter()
            .map(|rank| Member {
                rank: *rank,
                partition: 0,
                nodes: encode(&rank_events(*rank, 4, 5)).nodes().to_nodes(),
                carries_statistics: true,
            })
            .collect();
        assert_eq!(merge_ranks(members, Some(4)).len(), 2);
    }
}

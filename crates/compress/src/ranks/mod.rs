//! Merging the folded streams of many ranks into few: ScalaTrace's inter-process merge,
//! restricted to what keeps every rank exact.
//!
//! Two ranks' nodes merge when they have the same structure (leaves with the same call,
//! context, errno, flags, access order and kinds of file and offset reference; loops) and
//! every other kept value — loop count, handle, file delta, offset, request, result,
//! peer/aux, offset range — is the same affine function of the rank in both: the stored
//! value plus `slope · (rank − first rank)` ([`crate::stream::RankSlopes`], and a count slope per loop);
//! an MPI peer may also wrap round the job size (a ring's ends). That covers what SPMD
//! programs do (`rank ± 1` peers, a block per rank in a shared file, one file per rank
//! numbered by rank) and never approximates: expanding the merged stream for any member
//! rank gives back that rank's exact values.
//!
//! Below precision 100 one thing more merges (the thesis' cross-rank histograms): loops
//! whose bodies match but whose iteration counts differ between ranks, no count slope
//! fitting them, share a loop whose count histogram holds every rank's occurrences, when
//! the means are within the precision's margin (any at 0). A loop of messages,
//! collectives or computation is walked by each rank for an even share of the histogram's
//! exact sum, so job totals stay exact and a rank's own counts are estimates. A loop that
//! accesses files (and any such loop inside it) keeps each member's exact occurrences and
//! iterations beside the histogram, and its leaves each member's offset range where no
//! slope gives it and each member's count and sum of blurred sizes
//! ([`crate::stream::Sharing::loop_totals`], `leaf_extents`, `leaf_sizes`): a
//! load-imbalanced rank's writes to its own file share one loop with every other rank's,
//! and every file's counts, bytes and extent stay exact — a few bytes a rank instead of a
//! part a rank.
//!
//! What is merged, and so no longer per rank, are the timing statistics: a merged leaf holds
//! the statistics of all its ranks' occurrences (mean, min, max, variance, histogram), and a
//! walk of one member sees its share of them.
//!
//! Ranks with different roles share a stream too, at any depth (`parts.rs`): a rank's nodes
//! are aligned with the group's (heaviest common subsequence of structures that fit, loop
//! bodies aligned in turn inside loops whose counts fit), and every node of the merged tree
//! knows the ranks that have it. Nodes only some ranks have are written as a loop run once
//! by a [`crate::stream::RankSet`]: rank 0 creating the shared file, every eighth rank aggregating Open
//! MPI's collective writes, and on a process grid the ranks that have a west neighbour —
//! the grid's boundary ranks share the interior ranks' loop, each lacking a few of its
//! leaves, and the sets of a grid's rows, columns and planes are nested runs whose size
//! does not grow with the grid. So roles cost their own nodes, not a stream each. The
//! `MPI_Waitall` after such an exchange names as many requests as the rank has neighbours;
//! it comes here kept against what its body posted ([`crate::stream::pending`], marked by
//! the caller on each member's nodes), so it is one leaf of every rank, not a part per
//! kind of rank.
//!
//! Which slopes a part takes is decided by its second rank, so the first rank that joins
//! must not teach it a wrong one. A rank is aligned with a group under natural rules (a
//! new slope may only change files, offsets, peers `rank + c` and MPI-IO offsets, not a
//! loop's count, a handle, a size, a result, a request count, a root nor an MPI tag) and
//! joins if everything, or nine tenths of its leaves, matched;
//! else under any slopes, joining if nine tenths of the leaves matched (ranks whose loop
//! counts grow with the rank); else with the natural alignment if it matched at least a
//! third of the group's leaves or of its own, whichever are fewer (the corners of a 2 × 2
//! grid share a third of their messages). A loop's body is aligned likewise: loops match
//! when their counts fit and a third of the fewer leaves in their bodies match. A peer
//! and a tag that both change with the rank never match (another direction's message). Otherwise it tries the next
//! group, or starts one: unrelated streams stay apart.
//!
//! Grouping is greedy in input order. Cost: one pass over each member's folded tree per
//! group tried for SPMD programs (equal structures align pair by pair), plus an alignment
//! (parts × nodes per body, at most [`ALIGNMENT_CELLS`], and at most [`ALIGNMENT_BUDGET`]
//! cells in one merge) where structures differ; ranks of irregular streams that differ
//! from one another stop being aligned once the budget is spent (they keep streams of
//! their own), and a group that refused a rank for its size alone is not tried again. An
//! alignment tries only the pairs that may fit (a leaf of the same shape, request and
//! result; a loop with such a leaf), not every cell.

use std::cell::Cell;

use cairn_model::CallClass;

use crate::fold::Node;
use crate::hash::FastMap;
use crate::stream::{EventKey, Sharing};

mod align;
mod parts;

pub use parts::ALIGNMENT_CELLS;
use parts::{
    apply_body, leaves_of_nodes, leaves_of_parts, plan_body, shapes_in_common, Finisher, Part,
    Rules,
};

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

/// A group being formed: its members and its merged tree.
struct Candidate {
    members: Vec<usize>,
    ranks: Vec<i64>,
    parts: Vec<Part>,
    /// Leaves of the merged tree, and of the largest member: a group takes in ranks that
    /// only partly match while its leaves stay within four times that (plus a few), so
    /// ranks that each bring nodes of their own start groups instead of making every
    /// member walk all the others' nodes. Four, not two: on a 3-D grid of 2 × 2 × 2 ranks
    /// each rank has 7 of the 26 directions all ranks have between them (11 on 4 × 2 × 2).
    leaves: u64,
    largest_member: u64,
    /// Some node lacks some member.
    restricted: bool,
    /// The group refused a rank that matched enough of it only because the merged tree
    /// would have grown past four times its largest member: no later rank is aligned with
    /// it. Load-imbalanced ranks each bring leaves of their own; every later rank was
    /// aligned with every full group and refused (32 such ranks: 0.9 of the merge's 1.2 s).
    full: bool,
}

impl Candidate {
    fn new(member: usize, rank: i64, nodes: Vec<Node<EventKey>>, job_size: i64) -> Candidate {
        let leaves = leaves_of_nodes(&nodes);
        Candidate {
            members: vec![member],
            ranks: vec![rank],
            parts: Part::body_of(rank, nodes, job_size),
            leaves,
            largest_member: leaves,
            restricted: false,
            full: false,
        }
    }

    /// Tries to take in `nodes` of the rank `rank`; gives them back if they do not fit.
    /// Under natural rules first: a complete fit joins, or one that matched nine tenths of
    /// the rank's leaves (a grid's interior rank where the group has edge ranks); then
    /// under any: nine tenths of the leaves matching join (loop counts that grow with the
    /// rank); then the natural partial fit, if it matches a third of the fewer leaves.
    /// Alignments spend `budget`.
    fn join(
        &mut self,
        member: usize,
        rank: i64,
        nodes: Vec<Node<EventKey>>,
        (job_size, class_of, precision): (i64, &dyn Fn(u16) -> Option<CallClass>, u8),
        budget: &Cell<usize>,
    ) -> Result<(), Vec<Node<EventKey>>> {
        // Nodes of some ranks tell ranks apart by their distance from the first rank: a
        // rank that is not above the others may only join a group whose nodes all ranks
        // have, fitting all of them.
        let distinct = self.ranks.last().is_some_and(|last| rank > *last);
        if !distinct && self.restricted {
            return Err(nodes);
        }
        let own = leaves_of_nodes(&nodes);
        let rules = |natural, blur| Rules {
            natural,
            complete: !distinct,
            job_size,
            class_of,
            precision,
            blur,
            extents_free: false,
        };
        let plan = |natural, blur| {
            plan_body(
                &self.parts,
                &self.ranks,
                &nodes,
                rank,
                rules(natural, blur),
                budget,
            )
        };
        let Some(natural) = plan(true, false) else {
            return Err(nodes);
        };
        // The most leaves the group may hold with this rank in it.
        let most_leaves = 4 * self.largest_member.max(own) + 16;
        let partial_enough = |plan: &parts::Plan| {
            let leaves = self.leaves + own - plan.matched;
            plan.matched > 0
                && (3 * plan.matched >= self.leaves.min(own)
                    || plan.meets_at_every_collective(&self.parts, &nodes, rules(true, false)))
                && leaves <= most_leaves
        };
        // Below precision 100, loops whose counts differ from the group's within the
        // margin (a load-imbalanced rank's) may share a count histogram: that plan
        // matches whatever the exact one does and more, so it stands in for it.
        let natural = match (precision < 100 && !natural.complete)
            .then(|| plan(true, true))
            .flatten()
        {
            Some(blurred) if blurred.matched > natural.matched || blurred.complete => blurred,
            _ => natural,
        };
        let chosen = if natural.complete
            || (distinct && 10 * natural.matched >= 9 * own && partial_enough(&natural))
        {
            natural
        } else {
            // Under any rules a leaf still matches only one of its shape: when too few
            // share a shape for the plan to be taken, it is not aligned.
            let any_may_do = self.leaves == own
                || (distinct
                    && 10 * shapes_in_common(&self.parts, &nodes) >= 9 * self.leaves.max(own));
            match any_may_do.then(|| plan(false, false)).flatten() {
                Some(any)
                    if any.complete
                        || (distinct && 10 * any.matched >= 9 * self.leaves.max(own)) =>
                {
                    any
                }
                _ if distinct && partial_enough(&natural) => natural,
                _ => {
                    // Enough of the rank matched, but the group would grow past its size:
                    // it is full, and later ranks are not aligned with it.
                    let leaves = self.leaves + own - natural.matched;
                    self.full |= distinct
                        && natural.matched > 0
                        && 3 * natural.matched >= self.leaves.min(own)
                        && leaves > most_leaves;
                    return Err(nodes);
                }
            }
        };
        self.restricted |= !chosen.complete;
        let parts = std::mem::take(&mut self.parts);
        self.parts = apply_body(parts, &self.ranks, nodes, chosen, rank, (job_size, 1));
        self.members.push(member);
        self.ranks.push(rank);
        self.leaves = leaves_of_parts(&self.parts);
        self.largest_member = self.largest_member.max(own);
        Ok(())
    }

    fn finish(self) -> Group {
        let mut finisher = Finisher::default();
        finisher.sharing.base_rank = self.ranks[0];
        finisher.members = self.ranks.clone();
        let nodes = finisher.body(self.parts, &self.ranks);
        Group {
            members: self.members,
            base_rank: self.ranks[0],
            nodes,
            sharing: finisher.sharing,
        }
    }
}

/// Groups `members` (each with concrete keys; their `parameters` are ignored) into merged
/// streams. `job_size` (the number of ranks, if known) lets MPI peers wrap round it: a ring's
/// last rank sends to rank 0 and its first receives from the last, and with the peer kept
/// modulo the job size they share the others' stream. `class_of` gives a call's class: a
/// point-to-point call's peer may change with the rank under natural rules.
/// Members are taken one at a time: memory is the groups' trees plus one member.
pub fn merge_ranks(
    members: impl IntoIterator<Item = Member>,
    job_size: Option<i64>,
    class_of: &dyn Fn(u16) -> Option<CallClass>,
    precision: u8,
) -> Vec<Group> {
    let job_size = job_size.unwrap_or(0);
    let mut candidates: Vec<Candidate> = Vec::new();
    // partition → indices into `candidates`, in creation order.
    let mut partitions: FastMap<u64, Vec<usize>> = FastMap::default();
    let budget = Cell::new(ALIGNMENT_BUDGET);
    for (index, member) in members.into_iter().enumerate() {
        let mut nodes = member.nodes;
        let groups = partitions.entry(member.partition).or_default();
        let mut joined = false;
        let mut alignments = 0;
        for &candidate in groups.iter() {
            let group = &mut candidates[candidate];
            if group.full {
                continue;
            }
            // A rank with as many top-level nodes as the group has parts is likely one of
            // its own kind: not counted against the alignments tried.
            if group.parts.len() != nodes.len() {
                if alignments == ALIGNMENTS_TRIED {
                    continue;
                }
                alignments += 1;
            }
            match group.join(
                index,
                member.rank,
                nodes,
                (job_size, class_of, precision),
                &budget,
            ) {
                Ok(()) => {
                    joined = true;
                    nodes = Vec::new();
                    break;
                }
                Err(returned) => nodes = returned,
            }
        }
        if !joined {
            groups.push(candidates.len());
            candidates.push(Candidate::new(index, member.rank, nodes, job_size));
        }
    }
    candidates.into_iter().map(Candidate::finish).collect()
}

#[cfg(test)]
mod tests;

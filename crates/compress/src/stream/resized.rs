//! Loops that differ only in some calls' sizes, merged into one (lossless), and an
//! iteration left beside its loop taken in. A program
//! that logs a line every few steps writes `step 99 …` and then `step 100 …`: from then on
//! each step's body repeats with a write one byte longer, and the folder, whose keys hold
//! the sizes, makes a second loop — a copy of the whole step, its timing statistics and
//! all — at every new number of digits (halo2d.c: 20 → 200 steps +11%). Adjacent sibling
//! loops whose bodies are the same calls with the same keys but for some reads' or
//! writes' requested sizes become one loop; those calls keep their sizes in the stream's
//! column ([`SIZE_IN_COLUMN`]), one entry an occurrence (a run of equal bytes, which the
//! section's compression takes to almost nothing), and each keeps its exact figures
//! ([`ColumnSizes`]).
//!
//! MPI messages whose sizes change every few steps are the same case (a molecular-dynamics
//! code posts each ghost exchange for exactly the atoms its neighbour sends, a new count
//! at every neighbour-list rebuild: LAMMPS's `CommBrick`): a send's size, a posted
//! receive's capacity and a completion's received bytes go to the column like a write's
//! size ([`ColumnRole`]; the key's request then says which it is). And a run of nodes
//! that repeats but for such values — every rebuild period of a time-step loop, itself
//! not a loop because its steps' sizes differ — is found by comparing the nodes' hashes
//! without those values, each repetition made an iteration, and the iterations merged
//! like loops.
//!
//! Iterations are joined as each rank's streams are built, before ranks merge (the joined
//! leaf counts its access order, each member's own once ranks share it: IOR's first
//! `lseek` + `write` of a file, then the 32,767 others, become one loop on every rank).
//! Loops are merged for their sizes once, when the trace is written, on streams of one
//! thread of one rank without a column: a stream with a column is not shared by ranks, so
//! merging them earlier would keep ranks that log alike from sharing one. A stream whose merges would take more than
//! [`MOST_ENTRIES`] column entries keeps its loops as they were (a size that changed inside
//! a long inner loop is better as two loops than as a million entries).

use std::hash::{Hash, Hasher};

use super::column::site;
use super::sizes::{ColumnRole, COLUMN_HOLDS_CAPACITY, COLUMN_HOLDS_RESULT};
use super::{
    Column, ColumnSizes, EventKey, CONSECUTIVE, ORDER_IN_LEAF, SEQUENTIAL, SIZE_IN_COLUMN,
};
use crate::fold::{Leaf, Node};

/// What a call's column entry would hold if its value differed: `None` for calls whose
/// values never go to the column.
pub type Roles<'a> = &'a dyn Fn(u16) -> Option<ColumnRole>;

/// Most column entries the merged loops of one stream may take.
const MOST_ENTRIES: u64 = 1 << 16;

/// The longest run of nodes compared with the next as two iterations of one loop.
const PAIRED_WIDTH: usize = 16;

/// The longest run of nodes taken as one iteration of a repeating run whose values differ
/// (a time-step loop's rebuild period, thermodynamic output and all: LAMMPS's `in.lj`
/// repeats every 100 steps, about 240 nodes).
const PERIOD_WIDTH: usize = 512;

/// How many of the nearest later places of a node's hash are tried as the width of a run.
const NEAREST_PLACES: usize = 32;

/// A column leaf's values over one walk of the loop whose merge made them: (value,
/// occurrences) in order. The loop itself may run several times (inside an outer loop):
/// each walk repeats the list.
type Sizes = Vec<(u64, u64)>;

/// The tree being merged: a leaf with its sizes once they differ (and the merge they
/// belong to), a loop with the merge it is (0: none).
enum Draft {
    Leaf(Box<Leaf<EventKey>>, Option<(u32, Sizes)>),
    Loop {
        count: u64,
        body: Vec<Draft>,
        merge: u32,
    },
}

/// `nodes` with adjacent loops that differ only in reads' and writes' sizes (and MPI
/// messages') merged (and iterations beside them, differing only in access order, joined),
/// and the column their values take, in event order; `None` if nothing merged (or the
/// nodes do not qualify: a loop whose counts differ, a blurred leaf, sizes already in a
/// column). `io`: what a call's column entry would hold ([`ColumnRole`]; `None`: its values
/// stay in its key). `resize`: whether loops may merge for their values too (else only
/// iterations that differ in access order join, and no column is made: what a stream
/// several ranks will share may take).
pub fn merge_resized_loops(
    nodes: &[Node<EventKey>],
    io: Roles<'_>,
    resize: bool,
) -> Option<(Vec<Node<EventKey>>, Column)> {
    let mut drafts = drafts_of(nodes)?;
    let mut merges = 0;
    merge_siblings(&mut drafts, (io, resize), &mut merges);
    if merges == 0 {
        return None;
    }
    let mut entries = 0u64;
    count_entries(&drafts, &mut entries);
    if entries > MOST_ENTRIES {
        return None;
    }
    let mut column = Column::default();
    let mut cursors = Vec::new();
    walk_sizes(&drafts, &mut cursors, &mut 0, &mut column);
    Some((nodes_of(drafts, io), column))
}

/// The drafts of `nodes`; `None` if some loop's counts differ or some leaf is blurred or
/// keeps its sizes in a column.
fn drafts_of(nodes: &[Node<EventKey>]) -> Option<Vec<Draft>> {
    nodes
        .iter()
        .map(|node| match node {
            Node::Leaf(leaf) => (leaf.blurred.is_none()
                && leaf.column_sizes.is_none()
                && leaf.key.flags & SIZE_IN_COLUMN == 0)
                .then(|| Draft::Leaf(Box::new(leaf.clone()), None)),
            Node::Loop {
                count,
                body,
                counts: None,
            } => Some(Draft::Loop {
                count: *count,
                body: drafts_of(body)?,
                merge: 0,
            }),
            Node::Loop { .. } => None,
        })
        .collect()
}

/// Merges, inside loops first, each loop with the next while their bodies are alike.
fn merge_siblings(body: &mut Vec<Draft>, (io, resize): (Roles<'_>, bool), merges: &mut u32) {
    for draft in body.iter_mut() {
        if let Draft::Loop { body, .. } = draft {
            merge_siblings(body, (io, resize), merges);
        }
    }
    // Two iterations in a row that the folder kept apart (a file's first access is
    // neither consecutive nor sequential, the next one's is): a loop of one each.
    let mut at = 0;
    while at < body.len() {
        let width = (1..=PAIRED_WIDTH.min((body.len() - at) / 2)).find(|width| {
            let (first, next) = body[at..at + 2 * width].split_at(*width);
            starts_alike(&first[0], &next[0]) && bodies_alike(first, next, 0, (io, false))
        });
        if let Some(width) = width {
            wrap_iteration(body, at + width, width);
            wrap_iteration(body, at, width);
            at += 2;
        } else {
            at += 1;
        }
    }
    // An iteration the folder left beside its loop (the tracer's block began with the
    // second; the last one differed): a loop of one, merged with it below.
    let mut at = 0;
    while at < body.len() {
        let (width, before, after) = match &body[at] {
            Draft::Loop {
                body: inner,
                merge: 0,
                ..
            } if !inner.is_empty() => {
                let width = inner.len();
                (
                    width,
                    at >= width && bodies_alike(&body[at - width..at], inner, 0, (io, false)),
                    body.len() > at + width
                        && bodies_alike(inner, &body[at + 1..=at + width], 0, (io, false)),
                )
            }
            _ => (0, false, false),
        };
        if after {
            wrap_iteration(body, at + 1, width);
        }
        if before {
            wrap_iteration(body, at - width, width);
            at -= width - 1;
        }
        at += 1;
    }
    merge_adjacent(body, (io, resize), merges);
    // Then runs that repeat but for their values, each repetition made a loop of one to
    // merge likewise (after the loops beside each other merged: a run whose loops merged
    // keeps them so).
    if resize && wrap_repeating_runs(body, io) {
        merge_adjacent(body, (io, resize), merges);
    }
}

/// Each loop merged into the one before it while they are alike (the body rebuilt in one
/// pass: a farm's stream merges thousands).
fn merge_adjacent(body: &mut Vec<Draft>, (io, resize): (Roles<'_>, bool), merges: &mut u32) {
    let mut merged: Vec<Draft> = Vec::with_capacity(body.len());
    for draft in std::mem::take(body) {
        let alike = match (merged.last(), &draft) {
            (
                Some(Draft::Loop {
                    body: first, merge, ..
                }),
                Draft::Loop { body: next, .. },
            ) => bodies_alike(first, next, *merge, (io, resize)),
            _ => false,
        };
        if !alike {
            merged.push(draft);
            continue;
        }
        let Draft::Loop {
            count: next_count,
            body: next,
            ..
        } = draft
        else {
            unreachable!("checked to be a loop")
        };
        let Some(Draft::Loop { count, body, merge }) = merged.last_mut() else {
            unreachable!("checked to be a loop")
        };
        if *merge == 0 {
            *merges += 1;
            *merge = *merges;
        }
        let first = std::mem::take(body);
        *body = merge_bodies(first, next, (*count, next_count), (*merge, io));
        *count += next_count;
    }
    *body = merged;
}

/// The `width` nodes of `body` from `start` as one loop of one iteration, to be merged
/// with the loop beside it.
fn wrap_iteration(body: &mut Vec<Draft>, start: usize, width: usize) {
    let iteration: Vec<Draft> = body.drain(start..start + width).collect();
    body.insert(
        start,
        Draft::Loop {
            count: 1,
            body: iteration,
            merge: 0,
        },
    );
}

/// Whether two nodes may begin alike bodies (the same kind; a leaf's call and context).
fn starts_alike(first: &Draft, next: &Draft) -> bool {
    match (first, next) {
        (Draft::Leaf(a, _), Draft::Leaf(b, _)) => {
            a.key.call == b.key.call && a.key.context == b.key.context
        }
        (Draft::Loop { count: a, .. }, Draft::Loop { count: b, .. }) => a == b,
        _ => false,
    }
}

/// Whether `next`'s nodes are `first`'s but for the access order of reads and writes (a
/// file's first access is neither consecutive nor sequential) and, if `sizes`, their
/// sizes; `merge`: the merge `first`'s loop is (its leaves' sizes of that merge may grow, no
/// other's); `io`: whether a call is a read or a write.
fn bodies_alike(
    first: &[Draft],
    next: &[Draft],
    merge: u32,
    (io, sizes): (Roles<'_>, bool),
) -> bool {
    first.len() == next.len()
        && first.iter().zip(next).all(|pair| match pair {
            (Draft::Leaf(a, kept), Draft::Leaf(b, None)) => {
                let own = match kept {
                    None => true,
                    Some((of, _)) => merge != 0 && *of == merge,
                };
                own && (a.key == b.key
                    || io(a.key.call).is_some_and(|role| {
                        let (first, next) = (value_of(&a.key, role), value_of(&b.key, role));
                        first.is_some()
                            && next.is_some()
                            && (sizes || first == next)
                            && loose(&a.key, role) == loose(&b.key, role)
                    }))
            }
            (
                Draft::Loop {
                    count: a,
                    body: first,
                    merge: 0,
                },
                Draft::Loop {
                    count: b,
                    body: next,
                    merge: 0,
                },
            ) => a == b && bodies_alike(first, next, merge, (io, sizes)),
            _ => false,
        })
}

/// `first` (run `times.0` times a walk of the merged loop) and then `next` (`times.1`
/// times), as one body.
fn merge_bodies(
    first: Vec<Draft>,
    next: Vec<Draft>,
    times: (u64, u64),
    (merge, io): (u32, Roles<'_>),
) -> Vec<Draft> {
    first
        .into_iter()
        .zip(next)
        .map(|pair| match pair {
            (Draft::Leaf(mut a, sizes), Draft::Leaf(b, _)) => {
                // Leaves that differ were checked to have values of their role.
                let value = |key: &EventKey| {
                    io(key.call)
                        .and_then(|role| value_of(key, role))
                        .unwrap_or(key.request)
                };
                let (a_value, b_value) = (value(&a.key), value(&b.key));
                let sizes = match sizes {
                    // Alike leaves of one value differ at most in access order.
                    None if a_value == b_value => None,
                    None => Some(vec![(a_value, times.0)]),
                    Some((_, sizes)) => Some(sizes),
                }
                .map(|mut sizes| {
                    match sizes.last_mut() {
                        Some((size, count)) if *size == b_value => *count += times.1,
                        _ => sizes.push((b_value, times.1)),
                    }
                    (merge, sizes)
                });
                a.duration.merge(&b.duration);
                a.gap.merge(&b.gap);
                a.offset_low = match (a.offset_low, b.offset_low) {
                    (-1, low) | (low, -1) => low,
                    (x, y) => x.min(y),
                };
                a.offset_high = a.offset_high.max(b.offset_high);
                if a.key.order != b.key.order || a.key.order_in_leaf() || b.key.order_in_leaf() {
                    // A file's first access is neither consecutive nor sequential, the
                    // loop's others are: the leaf counts its occurrences of each.
                    let (first, next) = (order_counts(&a), order_counts(&b));
                    a.order_counts = [first[0] + next[0], first[1] + next[1]];
                    a.key.order = 0;
                    a.key.flags |= ORDER_IN_LEAF;
                }
                Draft::Leaf(a, sizes)
            }
            (
                Draft::Loop { count, body, .. },
                Draft::Loop {
                    body: other_body, ..
                },
            ) => Draft::Loop {
                count,
                body: merge_bodies(
                    body,
                    other_body,
                    (times.0 * count, times.1 * count),
                    (merge, io),
                ),
                merge: 0,
            },
            _ => unreachable!("bodies were alike"),
        })
        .collect()
}

/// A key without what a merge lets differ: its value of `role` and its access order. A
/// posted receive's result (0) is compared as it is, not against its capacity.
fn loose(key: &EventKey, role: ColumnRole) -> EventKey {
    let (request, result) = match role {
        ColumnRole::Request => (0, key.result),
        ColumnRole::Capacity => (0, key.result()),
        ColumnRole::Result => (key.request, 0),
    };
    EventKey {
        request,
        result,
        order: 0,
        flags: key.flags & !ORDER_IN_LEAF,
        ..*key
    }
}

/// The value of `key` a column entry of `role` would hold; `None` for one it cannot (a
/// negative result: a failed call's).
fn value_of(key: &EventKey, role: ColumnRole) -> Option<u64> {
    match role {
        ColumnRole::Request | ColumnRole::Capacity => Some(key.request),
        ColumnRole::Result => u64::try_from(key.result()).ok(),
    }
}

/// A node's hash without what a merge lets differ (as [`loose`] keys); equal for nodes
/// [`bodies_alike`] may take as alike, and for some others (it is checked after).
fn loose_hash(draft: &Draft, io: Roles<'_>) -> u64 {
    let mut hasher = crate::hash::FastHasher::default();
    match draft {
        Draft::Leaf(leaf, _) => {
            0u8.hash(&mut hasher);
            match io(leaf.key.call) {
                Some(role) => loose(&leaf.key, role).hash(&mut hasher),
                None => leaf.key.hash(&mut hasher),
            }
        }
        Draft::Loop { count, body, merge } => {
            (1u8, *count, *merge).hash(&mut hasher);
            for draft in body {
                loose_hash(draft, io).hash(&mut hasher);
            }
        }
    }
    hasher.finish()
}

/// Makes each repetition of a run of nodes that repeats but for values a merge lets differ
/// an iteration (a loop of one), for the loops to merge; whether it made any. A time-step
/// loop whose every rebuild period has messages of other sizes (a run holding a loop). At
/// each place, the width whose repetitions cover the most nodes (the shortest of those),
/// found from the nodes' loose hashes in O(nodes × [`NEAREST_PLACES`]).
fn wrap_repeating_runs(body: &mut Vec<Draft>, io: Roles<'_>) -> bool {
    let hashes: Vec<u64> = body.iter().map(|draft| loose_hash(draft, io)).collect();
    let length = hashes.len();
    let widest = PERIOD_WIDTH.min(length / 2);
    if widest == 0 {
        return false;
    }
    // Only runs that hold a loop are taken (a period of steps): calls that repeat in a
    // fixed cycle of sizes (a record's three fields) stay leaves with their sizes in their
    // keys, as the folder left them. loops[i]: the loops among the first i nodes.
    let mut loops = vec![0u32; length + 1];
    for (index, draft) in body.iter().enumerate() {
        loops[index + 1] = loops[index] + matches!(draft, Draft::Loop { .. }) as u32;
    }
    // Per width w: the place last found equal to the one w later, and the first place from
    // there on that is not (so the run of equal places from `at` is that place − `at`).
    // Only widths to a later place of the same hash are looked at (the places of each hash
    // within the widest width kept, nearest last): an irregular stream has few.
    let mut chains = vec![(usize::MAX, 0usize); widest + 1];
    let mut places: crate::hash::FastMap<u64, std::collections::VecDeque<usize>> =
        crate::hash::FastMap::default();
    // best[at]: (width, repetitions) covering the most nodes from `at`.
    let mut best = vec![(0usize, 0u64); length];
    for at in (0..length).rev() {
        let mut chosen = (0usize, 0u64);
        let later = places.entry(hashes[at]).or_default();
        while later.front().is_some_and(|place| *place > at + widest) {
            later.pop_front();
        }
        // The nearest places of a hash only: a farm's receive from any worker repeats
        // every few nodes, and its hundreds of places in a window would cost as many
        // steps at every node.
        for place in later.iter().rev().take(NEAREST_PLACES) {
            let width = place - at;
            let (last, end) = &mut chains[width];
            if *last != at + 1 {
                *end = at + 1;
            }
            *last = at;
            let repetitions = 1 + ((*end - at) / width) as u64;
            if repetitions >= 2
                && repetitions * width as u64 > chosen.1 * chosen.0 as u64
                && loops[at + width] > loops[at]
            {
                chosen = (width, repetitions);
            }
        }
        later.push_back(at);
        best[at] = chosen;
    }
    // The repetitions to wrap (first place, width, how many), confirmed against the first
    // (hashes may collide); then the body rebuilt once.
    let mut wraps = Vec::new();
    let mut at = 0;
    while at < length {
        let (width, repetitions) = best[at];
        let mut taken = 1;
        while taken < repetitions {
            let next = at + taken as usize * width;
            if !starts_alike(&body[at], &body[next])
                || !bodies_alike(
                    &body[at..at + width],
                    &body[next..next + width],
                    0,
                    (io, true),
                )
            {
                break;
            }
            taken += 1;
        }
        if taken < 2 {
            at += 1;
            continue;
        }
        wraps.push((at, width, taken as usize));
        at += taken as usize * width;
    }
    if wraps.is_empty() {
        return false;
    }
    let mut drafts = std::mem::take(body).into_iter();
    let mut place = 0;
    for (start, width, taken) in wraps {
        body.extend(drafts.by_ref().take(start - place));
        for _ in 0..taken {
            body.push(Draft::Loop {
                count: 1,
                body: drafts.by_ref().take(width).collect(),
                merge: 0,
            });
        }
        place = start + width * taken;
    }
    body.extend(drafts);
    true
}

/// How many of a leaf's occurrences were consecutive and sequential accesses.
fn order_counts(leaf: &Leaf<EventKey>) -> [u64; 2] {
    if leaf.key.order_in_leaf() {
        return leaf.order_counts;
    }
    let occurrences = leaf.duration.count;
    [
        occurrences * u64::from(leaf.key.order & CONSECUTIVE != 0),
        occurrences * u64::from(leaf.key.order & SEQUENTIAL != 0),
    ]
}

/// Column entries the drafts take: every occurrence of a leaf whose sizes differ.
fn count_entries(drafts: &[Draft], entries: &mut u64) {
    for draft in drafts {
        match draft {
            Draft::Leaf(leaf, Some((_, sizes))) => {
                *entries = entries.saturating_add(leaf.duration.count / repeat_of(sizes))
            }
            Draft::Leaf(_, None) => {}
            Draft::Loop { body, .. } => count_entries(body, entries),
        }
    }
}

/// Whether some leaf of the drafts keeps its sizes in the column.
fn has_sizes(drafts: &[Draft]) -> bool {
    drafts.iter().any(|draft| match draft {
        Draft::Leaf(_, sizes) => sizes.is_some(),
        Draft::Loop { body, .. } => has_sizes(body),
    })
}

/// Appends to `column` each occurrence's size of the leaves that keep theirs there, in
/// event order. `cursors`: each such leaf's place in its sizes (run, taken from it), by
/// the order leaves are met (`next`).
fn walk_sizes(
    drafts: &[Draft],
    cursors: &mut Vec<(usize, u64)>,
    next: &mut usize,
    column: &mut Column,
) {
    for draft in drafts {
        match draft {
            Draft::Leaf(_, None) => {}
            Draft::Leaf(leaf, Some((_, sizes))) => {
                if cursors.len() <= *next {
                    cursors.resize(*next + 1, (0, 0));
                }
                let (run, taken) = &mut cursors[*next];
                // An entry stands for `repeat` occurrences in a row (every run is a
                // multiple of it).
                if taken.is_multiple_of(repeat_of(sizes)) {
                    column.push_size(site(leaf.key.call, leaf.key.context), sizes[*run].0 as i64);
                }
                *taken += 1;
                if *taken == sizes[*run].1 {
                    // A walk of the merged loop ends with the last run: the next starts over.
                    (*run, *taken) = ((*run + 1) % sizes.len(), 0);
                }
                *next += 1;
            }
            Draft::Loop { count, body, .. } => {
                if !has_sizes(body) {
                    continue;
                }
                let first = *next;
                for _ in 0..*count {
                    *next = first;
                    walk_sizes(body, cursors, next, column);
                }
            }
        }
    }
}

/// How many occurrences in a row one column entry of these sizes stands for: the greatest
/// divisor of their runs (the iterations of the loops between the merged loop and the
/// leaf, when each merged iteration had its own value).
fn repeat_of(sizes: &Sizes) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    sizes
        .iter()
        .fold(0, |divisor, (_, count)| gcd(divisor, *count))
        .max(1)
}

/// The nodes the drafts stand for: a leaf whose values differ keeps them in the column,
/// its key's request saying which value it is ([`ColumnRole`]).
fn nodes_of(drafts: Vec<Draft>, io: Roles<'_>) -> Vec<Node<EventKey>> {
    drafts
        .into_iter()
        .map(|draft| match draft {
            Draft::Leaf(leaf, None) => Node::Leaf(*leaf),
            Draft::Leaf(mut leaf, Some((_, sizes))) => {
                let repeat = repeat_of(&sizes);
                let walk: u64 = sizes.iter().map(|(_, count)| count).sum();
                let walks = leaf.duration.count / walk.max(1);
                let mut figures: Option<ColumnSizes> = None;
                for (size, count) in sizes {
                    let run = ColumnSizes::repeated(size, count * walks);
                    match &mut figures {
                        Some(figures) => figures.merge(&run),
                        None => figures = Some(run),
                    }
                }
                (leaf.key.request, leaf.key.result) = match io(leaf.key.call) {
                    Some(ColumnRole::Capacity) => (COLUMN_HOLDS_CAPACITY, leaf.key.result()),
                    Some(ColumnRole::Result) => (COLUMN_HOLDS_RESULT, 0),
                    _ => (0, leaf.key.result),
                };
                leaf.key.flags |= SIZE_IN_COLUMN;
                leaf.column_sizes = figures.map(|mut figures| {
                    figures.repeat = repeat;
                    Box::new(figures)
                });
                Node::Leaf(*leaf)
            }
            Draft::Loop { count, body, .. } => Node::exact_loop(count, nodes_of(body, io)),
        })
        .collect()
}

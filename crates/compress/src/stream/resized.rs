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
//! Iterations are joined as each rank's streams are built, before ranks merge (the joined
//! leaf counts its access order, each member's own once ranks share it: IOR's first
//! `lseek` + `write` of a file, then the 32,767 others, become one loop on every rank).
//! Loops are merged for their sizes once, when the trace is written, on streams of one
//! thread of one rank without a column: a stream with a column is not shared by ranks, so
//! merging them earlier would keep ranks that log alike from sharing one. A stream whose merges would take more than
//! [`MOST_ENTRIES`] column entries keeps its loops as they were (a size that changed inside
//! a long inner loop is better as two loops than as a million entries).

use super::column::site;
use super::{
    Column, ColumnSizes, EventKey, CONSECUTIVE, ORDER_IN_LEAF, SEQUENTIAL, SIZE_IN_COLUMN,
};
use crate::fold::{Leaf, Node};

/// Most column entries the merged loops of one stream may take.
const MOST_ENTRIES: u64 = 1 << 16;

/// The longest run of nodes compared with the next as two iterations of one loop.
const PAIRED_WIDTH: usize = 16;

/// A column leaf's sizes over one walk of the loop whose merge made them: (size,
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

/// `nodes` with adjacent loops that differ only in reads' and writes' sizes merged (and
/// iterations beside them, differing only in access order, joined), and the column their
/// sizes take, in event order; `None` if nothing merged (or the nodes do not
/// qualify: a loop whose counts differ, a blurred leaf, sizes already in a column).
/// `io`: whether a call's size may go to the column (a read or a write).
/// `resize`: whether loops may merge for their sizes too (else only iterations that differ
/// in access order join, and no column is made: what a stream several ranks will share may
/// take).
pub fn merge_resized_loops(
    nodes: &[Node<EventKey>],
    io: &dyn Fn(u16) -> bool,
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
    Some((nodes_of(drafts), column))
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
fn merge_siblings(
    body: &mut Vec<Draft>,
    (io, resize): (&dyn Fn(u16) -> bool, bool),
    merges: &mut u32,
) {
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
    let mut at = 0;
    while at + 1 < body.len() {
        let alike = match (&body[at], &body[at + 1]) {
            (
                Draft::Loop {
                    body: first, merge, ..
                },
                Draft::Loop { body: next, .. },
            ) => bodies_alike(first, next, *merge, (io, resize)),
            _ => false,
        };
        if !alike {
            at += 1;
            continue;
        }
        let Draft::Loop {
            count: next_count,
            body: next,
            ..
        } = body.remove(at + 1)
        else {
            unreachable!("checked to be a loop")
        };
        let Draft::Loop { count, body, merge } = &mut body[at] else {
            unreachable!("checked to be a loop")
        };
        if *merge == 0 {
            *merges += 1;
            *merge = *merges;
        }
        let first = std::mem::take(body);
        *body = merge_bodies(first, next, (*count, next_count), *merge);
        *count += next_count;
    }
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
    (io, sizes): (&dyn Fn(u16) -> bool, bool),
) -> bool {
    first.len() == next.len()
        && first.iter().zip(next).all(|pair| match pair {
            (Draft::Leaf(a, kept), Draft::Leaf(b, None)) => {
                let own = match kept {
                    None => true,
                    Some((of, _)) => merge != 0 && *of == merge,
                };
                own && (a.key == b.key
                    || (io(a.key.call)
                        && (sizes || a.key.request == b.key.request)
                        && loose(&a.key) == loose(&b.key)))
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
fn merge_bodies(first: Vec<Draft>, next: Vec<Draft>, times: (u64, u64), merge: u32) -> Vec<Draft> {
    first
        .into_iter()
        .zip(next)
        .map(|pair| match pair {
            (Draft::Leaf(mut a, sizes), Draft::Leaf(b, _)) => {
                let sizes = match sizes {
                    None if a.key.request == b.key.request => None,
                    None => Some(vec![(a.key.request, times.0)]),
                    Some((_, sizes)) => Some(sizes),
                }
                .map(|mut sizes| {
                    match sizes.last_mut() {
                        Some((size, count)) if *size == b.key.request => *count += times.1,
                        _ => sizes.push((b.key.request, times.1)),
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
                body: merge_bodies(body, other_body, (times.0 * count, times.1 * count), merge),
                merge: 0,
            },
            _ => unreachable!("bodies were alike"),
        })
        .collect()
}

/// A read's or write's key without what a merge lets differ: its size and access order.
fn loose(key: &EventKey) -> EventKey {
    EventKey {
        request: 0,
        order: 0,
        flags: key.flags & !ORDER_IN_LEAF,
        ..*key
    }
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
            Draft::Leaf(leaf, Some(_)) => *entries = entries.saturating_add(leaf.duration.count),
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
                column.push_size(site(leaf.key.call, leaf.key.context), sizes[*run].0 as i64);
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

/// The nodes the drafts stand for: a leaf whose sizes differ keeps them in the column.
fn nodes_of(drafts: Vec<Draft>) -> Vec<Node<EventKey>> {
    drafts
        .into_iter()
        .map(|draft| match draft {
            Draft::Leaf(leaf, None) => Node::Leaf(*leaf),
            Draft::Leaf(mut leaf, Some((_, sizes))) => {
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
                leaf.key.request = 0;
                leaf.key.flags |= SIZE_IN_COLUMN;
                leaf.column_sizes = figures.map(Box::new);
                Node::Leaf(*leaf)
            }
            Draft::Loop { count, body, .. } => Node::exact_loop(count, nodes_of(body)),
        })
        .collect()
}

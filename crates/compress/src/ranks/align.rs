//! The alignment of two sequences of nodes (a group's parts, a rank's nodes): the
//! heaviest common subsequence under a weight per pair (0: they do not match).

use std::cell::Cell;

/// One step of an alignment of a group's parts with a member's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Both(usize, usize),
    Part(usize),
    Item(usize),
}

/// The heaviest common subsequence of `n` parts and `m` items under `weight`, as steps in
/// order (unmatched ones between two matches by `order` of the parts and of the items, the
/// parts first when equal); `None` if
/// it would take more than `largest` cells or what is left of `budget`. Equal lengths that
/// match pair by pair are taken as they are (the SPMD case: nothing to search).
pub(super) fn align(
    n: usize,
    m: usize,
    largest: usize,
    budget: &Cell<usize>,
    mut weight: impl FnMut(usize, usize) -> u64,
    order: (impl Fn(usize) -> u32, impl Fn(usize) -> u32),
) -> Option<Vec<Step>> {
    if n == m && (0..n).all(|index| weight(index, index) > 0) {
        return Some((0..n).map(|index| Step::Both(index, index)).collect());
    }
    let cells = n.saturating_mul(m);
    if cells > largest || cells > budget.get() {
        return None;
    }
    budget.set(budget.get() - cells);
    // best[i][j]: the heaviest common subsequence of parts[i..] and items[j..].
    let width = m + 1;
    let mut best = vec![0u64; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = best[(i + 1) * width + j].max(best[i * width + j + 1]);
            let pair = match weight(i, j) {
                0 => 0,
                pair => best[(i + 1) * width + j + 1] + pair,
            };
            best[i * width + j] = skip.max(pair);
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut steps = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m {
            let pair = weight(i, j);
            if pair > 0 && best[i * width + j] == best[(i + 1) * width + j + 1] + pair {
                steps.push(Step::Both(i, j));
                (i, j) = (i + 1, j + 1);
                continue;
            }
        }
        // Between two matches, the group's parts and the rank's nodes are placed in the
        // order of their call sites' first use (contexts are numbered so), the group's
        // first when equal: a loop body's calls then keep one order whichever of them a
        // rank lacks (a grid's face ranks each lacking another direction).
        let part_first = match (i < n, j < m) {
            (true, true) => {
                let (skip_part, skip_item) = (best[(i + 1) * width + j], best[i * width + j + 1]);
                skip_part > skip_item || (skip_part == skip_item && order.0(i) <= order.1(j))
            }
            (part_left, _) => part_left,
        };
        if part_first {
            steps.push(Step::Part(i));
            i += 1;
        } else {
            steps.push(Step::Item(j));
            j += 1;
        }
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heaviest_pairs_are_aligned_in_order() {
        // Parts a b c, items b' c' a': a matches a' (weight 1), b b' and c c' (2 each).
        let weights = [[0, 0, 1], [2, 0, 0], [0, 2, 0]];
        let budget = Cell::new(100);
        let steps = align(3, 3, 100, &budget, |i, j| weights[i][j], (|_| 0, |_| 0)).unwrap();
        assert_eq!(
            steps,
            [
                Step::Part(0),
                Step::Both(1, 0),
                Step::Both(2, 1),
                Step::Item(2)
            ]
        );
        assert_eq!(budget.get(), 91);
        // Too many cells: no alignment.
        assert_eq!(
            align(3, 3, 8, &budget, |i, j| weights[i][j], (|_| 0, |_| 0)),
            None
        );
        // Unmatched ones in the order given: item 0 (order 1) before part 1 (order 2).
        let weights = [[1, 0, 0], [0, 0, 0], [0, 0, 1]];
        let steps = align(
            3,
            3,
            100,
            &budget,
            |i, j| weights[i][j],
            (|i| i as u32 * 2, |j| j as u32),
        );
        assert_eq!(
            steps.unwrap(),
            [
                Step::Both(0, 0),
                Step::Item(1),
                Step::Part(1),
                Step::Both(2, 2)
            ]
        );
    }
}

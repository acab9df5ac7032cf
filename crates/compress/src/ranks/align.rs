//! The alignment of two sequences of nodes (a group's parts, a rank's nodes): the
//! heaviest common subsequence under a weight per pair (0: they do not match).

/// One step of an alignment of a group's parts with a member's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Both(usize, usize),
    Part(usize),
    Item(usize),
}

/// The heaviest common subsequence of `rows.len()` parts and `m` items, where `rows[i]`
/// lists the items part `i` may be paired with, ascending, each with the pair's weight (>
/// 0; pairs not listed weigh 0), as steps in order (unmatched ones between two matches by
/// `order` of the parts and of the items, the parts first when equal).
///
/// Most pairs of two bodies differ in call or context and are never listed: a cell the
/// caller did not list costs the table's maximum, not a call of the weight.
pub(super) fn align<T, K: Ord>(
    rows: &[Vec<(usize, u64, T)>],
    m: usize,
    order: (impl Fn(usize) -> K, impl Fn(usize) -> K),
) -> Vec<Step> {
    let n = rows.len();
    // best[i][j]: the heaviest common subsequence of parts[i..] and items[j..].
    let width = m + 1;
    let mut best = vec![0u64; (n + 1) * width];
    for (i, row) in rows.iter().enumerate().rev() {
        let (here, below) = best[i * width..].split_at_mut(width);
        let mut listed = row.iter().rev().peekable();
        for j in (0..m).rev() {
            let skip = below[j].max(here[j + 1]);
            let pair = match listed.next_if(|(item, ..)| *item == j) {
                Some((_, weight, _)) => below[j + 1] + weight,
                None => 0,
            };
            here[j] = skip.max(pair);
        }
    }
    let weight = |i: usize, j: usize| {
        rows[i]
            .binary_search_by_key(&j, |(item, ..)| *item)
            .map_or(0, |found| rows[i][found].1)
    };
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
        // order `order` gives (call sites in order of first use, contexts are numbered
        // so, then a point-to-point peer's distance from the rank), the group's first
        // when equal: a loop body's calls then keep one order whichever of them a rank
        // lacks (a grid's face ranks each lacking another direction).
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
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of listed pairs from a table of weights (0: not listed).
    fn rows(weights: &[[u64; 3]]) -> Vec<Vec<(usize, u64, ())>> {
        weights
            .iter()
            .map(|row| {
                (0..3)
                    .filter(|j| row[*j] > 0)
                    .map(|j| (j, row[j], ()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_heaviest_pairs_are_aligned_in_order() {
        // Parts a b c, items b' c' a': a matches a' (weight 1), b b' and c c' (2 each).
        let steps = align(&rows(&[[0, 0, 1], [2, 0, 0], [0, 2, 0]]), 3, (|_| 0, |_| 0));
        assert_eq!(
            steps,
            [
                Step::Part(0),
                Step::Both(1, 0),
                Step::Both(2, 1),
                Step::Item(2)
            ]
        );
        // Unmatched ones in the order given: item 0 (order 1) before part 1 (order 2).
        let steps = align(
            &rows(&[[1, 0, 0], [0, 0, 0], [0, 0, 1]]),
            3,
            (|i| i as u32 * 2, |j| j as u32),
        );
        assert_eq!(
            steps,
            [
                Step::Both(0, 0),
                Step::Item(1),
                Step::Part(1),
                Step::Both(2, 2)
            ]
        );
    }
}

//! Where a folder's window nodes recur, so loops with long bodies are found without
//! scanning the window on every push.
//!
//! The folder compares the newest node with every node up to `k` back for each body length
//! `k` it tries; that scan is what every push pays, so it stays short ([`SCAN`]). A body
//! longer than that (an iteration of a solver exchanging with 26 neighbours on four grid
//! levels: about 400 nodes) can only repeat where the newest node's hash occurred before,
//! so those places are kept: per node, the position of the previous node with the same
//! hash when it came, and per hash its latest node. Following that chain from the newest
//! node gives the few body lengths worth comparing. A loop with a long body is extended
//! by the nodes after it only when they end where its body would: such loops are few and
//! kept in a list.
//!
//! Positions here are absolute (a node keeps its number while older nodes leave the
//! window); every use checks that the node found still has the hash followed, so a node
//! whose hash changed in place (a loop's count grew) ends a chain instead of misleading it.

use std::collections::VecDeque;

use crate::hash::FastMap;

/// Body lengths up to this are found by scanning the window on every push; longer ones
/// through the recurrences.
pub const SCAN: usize = 64;

/// At most this many earlier occurrences are followed per push.
const MAX_FOLLOWED: usize = 512;

const NONE: usize = usize::MAX;

#[derive(Debug, Default)]
pub struct Recurrences {
    /// Absolute position of the window's oldest node.
    base: usize,
    /// Per window node: the absolute position of the previous node with its hash when it
    /// came, or [`NONE`].
    previous: VecDeque<usize>,
    /// Per hash: the absolute position of its latest node in the window.
    latest: FastMap<u64, usize>,
    /// Loops whose bodies are longer than [`SCAN`]: absolute position and body length.
    long_loops: Vec<(usize, usize)>,
}

impl Recurrences {
    /// A node with `hash` came at the window's end (`body`: its body's length if a loop,
    /// else 0).
    pub fn push(&mut self, hash: u64, body: usize) {
        let at = self.base + self.previous.len();
        let previous = self.latest.insert(hash, at).unwrap_or(NONE);
        self.previous.push_back(previous);
        if body > SCAN {
            self.long_loops.push((at, body));
        }
    }

    /// The window's oldest node, whose hash is `hash`, left it.
    pub fn pop_front(&mut self, hash: u64) {
        if self.latest.get(&hash) == Some(&self.base) {
            self.latest.remove(&hash);
        }
        self.previous.pop_front();
        self.base += 1;
        let base = self.base;
        if self.long_loops.first().is_some_and(|(at, _)| *at < base) {
            self.long_loops.retain(|(at, _)| *at >= base);
        }
    }

    /// The nodes from `length` on left the window's end; `hashes` are the window's hashes
    /// before they did.
    pub fn truncate(&mut self, length: usize, hashes: &VecDeque<u64>) {
        // Newest first: each leaves its hash's chain as it came into it.
        for position in (length..self.previous.len()).rev() {
            self.rehashed(position, hashes[position]);
        }
        self.previous.truncate(length);
        let end = self.base + length;
        self.long_loops.retain(|(at, _)| *at < end);
    }

    /// The node at window `position`, whose hash was `old`, has another now (a loop's count
    /// grew in place): it leaves its old hash's chain, and no chain finds it any more.
    pub fn rehashed(&mut self, position: usize, old: u64) {
        let at = self.base + position;
        if self.latest.get(&old) == Some(&at) {
            match self.previous[position] {
                previous if previous != NONE && previous >= self.base => {
                    self.latest.insert(old, previous)
                }
                _ => self.latest.remove(&old),
            };
        }
        self.previous[position] = NONE;
    }

    /// Window positions of the nodes before `position` with its hash, newest first (at
    /// most [`MAX_FOLLOWED`]).
    pub fn earlier<'a>(
        &'a self,
        position: usize,
        hashes: &'a VecDeque<u64>,
    ) -> impl Iterator<Item = usize> + 'a {
        let hash = hashes[position];
        let mut next = self.previous[position];
        std::iter::from_fn(move || {
            if next == NONE || next < self.base {
                return None;
            }
            let position = next - self.base;
            if position >= hashes.len() || hashes[position] != hash {
                return None;
            }
            next = self.previous[position];
            Some(position)
        })
        .take(MAX_FOLLOWED)
    }

    /// Window positions of loops with long bodies that end at `last` (`loop_bodies`: each
    /// window node's body length), nearest first.
    pub fn long_loops_ending_at<'a>(
        &'a self,
        last: usize,
        loop_bodies: &'a VecDeque<usize>,
    ) -> impl Iterator<Item = usize> + 'a {
        self.long_loops.iter().rev().filter_map(move |(at, body)| {
            let position = at.checked_sub(self.base)?;
            (position + body == last && loop_bodies.get(position) == Some(body)).then_some(position)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window of `hashes` as the folder would keep it, with its recurrences.
    fn window(hashes: &[u64]) -> (VecDeque<u64>, Recurrences) {
        let mut recurrences = Recurrences::default();
        for hash in hashes {
            recurrences.push(*hash, 0);
        }
        (hashes.iter().copied().collect(), recurrences)
    }

    #[test]
    fn earlier_occurrences_come_newest_first_and_survive_the_window_moving() {
        let (mut hashes, mut recurrences) = window(&[7, 1, 7, 2, 7, 3]);
        assert_eq!(recurrences.earlier(4, &hashes).collect::<Vec<_>>(), [2, 0]);
        // The oldest node leaves: positions move down by one, the oldest 7 is gone.
        recurrences.pop_front(hashes.pop_front().unwrap());
        assert_eq!(recurrences.earlier(3, &hashes).collect::<Vec<_>>(), [1]);
        // The last three nodes are folded away and a node of hash 7 comes: it follows the
        // 7 that is left, not the one that went.
        recurrences.truncate(2, &hashes);
        hashes.truncate(2);
        hashes.push_back(7);
        recurrences.push(7, 0);
        assert_eq!(recurrences.earlier(2, &hashes).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn a_node_rehashed_in_place_leaves_its_chain_and_nothing_stale_stays() {
        let (mut hashes, mut recurrences) = window(&[5, 8, 5]);
        recurrences.rehashed(2, 5);
        hashes[2] = 6;
        // The latest 5 is the first node again; the rehashed node is in no chain.
        hashes.push_back(5);
        recurrences.push(5, 0);
        assert_eq!(recurrences.earlier(3, &hashes).collect::<Vec<_>>(), [0]);
        assert_eq!(recurrences.earlier(2, &hashes).count(), 0);
        // When every node has left, no hash is remembered.
        for _ in 0..4 {
            recurrences.pop_front(hashes.pop_front().unwrap());
        }
        assert!(recurrences.latest.is_empty());
    }

    #[test]
    fn a_node_whose_hash_changed_ends_the_chain() {
        let (mut hashes, recurrences) = window(&[5, 5, 9, 5]);
        hashes[1] = 6;
        assert_eq!(
            recurrences.earlier(3, &hashes).collect::<Vec<_>>(),
            [] as [usize; 0]
        );
    }

    #[test]
    fn long_loops_are_found_where_their_bodies_end() {
        let mut recurrences = Recurrences::default();
        let mut bodies = VecDeque::new();
        for (hash, body) in [(1, 0), (2, 100), (3, 0)] {
            recurrences.push(hash, body);
            bodies.push_back(body);
        }
        assert_eq!(
            recurrences
                .long_loops_ending_at(101, &bodies)
                .collect::<Vec<_>>(),
            [1]
        );
        assert_eq!(recurrences.long_loops_ending_at(100, &bodies).count(), 0);
        let hashes: VecDeque<u64> = [1, 2, 3].into_iter().collect();
        recurrences.truncate(1, &hashes);
        bodies.truncate(1);
        assert_eq!(recurrences.long_loops_ending_at(101, &bodies).count(), 0);
    }
}

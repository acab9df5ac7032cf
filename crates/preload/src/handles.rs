//! A bounded table of MPI request handles (as numbers) and what the tracer knows of each:
//! the receives posted and not completed yet, the persistent requests set up. Open
//! addressing with linear probing and backward-shift deletion, so a look-up is a few
//! probes however many requests are pending — a list scanned per request made an
//! `MPI_Waitall` of n receives cost n² comparisons (70,000 pending: billions) — and no
//! deleted marks pile up however many requests come and go.
//!
//! Why bounded, and why lazily allocated: the tracer's memory must not grow with the
//! program's requests, and a program that never posts a receive pays nothing. A handle
//! the table cannot take is the caller's to count (the summary reports it).

/// A handle value no request has: MPI handles are pointers (Open MPI) or nonzero integers
/// (MPICH's request handles carry their kind in the high bits).
const EMPTY: u64 = 0;

pub struct HandleTable<V: Copy, const LIMIT: usize> {
    /// `2 × LIMIT` slots (a power of two), allocated at the first insertion.
    slots: Vec<(u64, V)>,
    len: usize,
}

impl<V: Copy, const LIMIT: usize> HandleTable<V, LIMIT> {
    pub const fn new() -> Self {
        HandleTable {
            slots: Vec::new(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot where a probe for `key` starts: handles are aligned pointers or integers
    /// counting up, so their bits are mixed first.
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.mask()
    }

    /// The slot holding `key`, if any.
    fn slot_of(&self, key: u64) -> Option<usize> {
        if self.slots.is_empty() || key == EMPTY {
            return None;
        }
        let mut slot = self.home(key);
        loop {
            match self.slots[slot].0 {
                EMPTY => return None,
                known if known == key => return Some(slot),
                _ => slot = (slot + 1) & self.mask(),
            }
        }
    }

    pub fn get(&self, key: u64) -> Option<V> {
        self.slot_of(key).map(|slot| self.slots[slot].1)
    }

    pub fn contains(&self, key: u64) -> bool {
        self.slot_of(key).is_some()
    }

    /// Keeps `value` for `key` (replacing what `key` had); false when the table is full
    /// and `key` was not in it (or `key` is no handle).
    pub fn insert(&mut self, key: u64, value: V) -> bool {
        if key == EMPTY {
            return false;
        }
        if let Some(slot) = self.slot_of(key) {
            self.slots[slot].1 = value;
            return true;
        }
        if self.len >= LIMIT {
            return false;
        }
        if self.slots.is_empty() {
            // At most half full: probes stay short.
            self.slots = vec![(EMPTY, value); (2 * LIMIT).next_power_of_two()];
        }
        let mut slot = self.home(key);
        while self.slots[slot].0 != EMPTY {
            slot = (slot + 1) & self.mask();
        }
        self.slots[slot] = (key, value);
        self.len += 1;
        true
    }

    /// Forgets `key`; its value if it was there. The entries after it in its run move back
    /// into the gap when their probe would have passed it, so every entry stays reachable
    /// from its home slot without deleted marks.
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let mut gap = self.slot_of(key)?;
        let value = self.slots[gap].1;
        let mask = self.mask();
        let mut next = (gap + 1) & mask;
        loop {
            let (known, _) = self.slots[next];
            if known == EMPTY {
                break;
            }
            // How far `known` is from its home; it may fill the gap if the gap is no
            // further from that home than it is.
            let home = self.home(known);
            if (next.wrapping_sub(home) & mask) >= (next.wrapping_sub(gap) & mask) {
                self.slots[gap] = self.slots[next];
                gap = next;
            }
            next = (next + 1) & mask;
        }
        self.slots[gap].0 = EMPTY;
        self.len -= 1;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_a_list_keeps_through_insertions_and_removals() {
        // Against a plain list, with handles that collide on purpose (multiples of the
        // table's size) and pointers' alignment, through a full table.
        let mut table: HandleTable<u32, 64> = HandleTable::new();
        let mut list: Vec<(u64, u32)> = Vec::new();
        let mut state = 12345u64;
        for step in 0..20_000u32 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = match state >> 62 {
                0 => (state >> 40) % 50 * 128 + 1,
                1 => (state >> 40) % 90 * 16 + 0x7f00_0000_0000,
                _ => (state >> 40) % 200 + 1,
            };
            if state >> 20 & 1 == 0 {
                let kept = table.insert(key, step);
                let full = list.len() == 64;
                match list.iter_mut().find(|(known, _)| *known == key) {
                    Some(entry) => {
                        assert!(kept);
                        entry.1 = step;
                    }
                    None if !full => {
                        assert!(kept);
                        list.push((key, step));
                    }
                    None => assert!(!kept, "a full table took {key}"),
                }
            } else {
                let position = list.iter().position(|(known, _)| *known == key);
                let expected = position.map(|position| list.swap_remove(position).1);
                assert_eq!(table.remove(key), expected);
            }
            assert_eq!(table.len(), list.len());
            for (known, value) in &list {
                assert_eq!(table.get(*known), Some(*value));
            }
        }
        assert!(!table.insert(EMPTY, 0));
        assert!(!table.contains(EMPTY));
    }
}

//! Steps records: a time step's calls, folded in the tracer although their values change.
//!
//! A program's step loop — a message whose size jitters, a solver whose iteration count
//! changes every step, a rank's particles written one record each — repeats the same
//! calls with a size or a loop count that differs from one step to the next: no block
//! forms, so the tracer staged each step as event and run records, some 600 bytes a step.
//! At a precision level below 100 (where the trace builder blurs such values into
//! histograms anyway) the tracer stages the step's body once, as items — a call, or a
//! call repeated with the same values (an inner loop) — and then only what changes: one
//! word per changing item and step, the item's size or its inner count. Per item the
//! record keeps duration and gap statistics over all its calls; the calls' own times are
//! not kept (the trace builder gives each its item's means).
//!
//! The record grows in place. Its head counts the item occurrences complete (each item in
//! turn, the body's first after its last); the occurrence in progress is in the head too
//! (which occurrence, how many calls so far, its size), written before the count that
//! would cover it, so a process killed mid-item loses no call.

use super::{raw_event_at, raw_run_at, RawEvent, RawRun, RAW_EVENT_BYTES, RAW_RUN_BYTES};
use crate::{FormatError, Result};

/// The longest body (in items) a steps record repeats.
pub const MAX_STEPS_PERIOD: usize = 16;

/// The head of a steps record; `period` [`RawStepsItem`]s follow it, then one `u64` word
/// per complete occurrence of a changing item (room for as many as the body length
/// leaves).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawStepsHead {
    /// Item occurrences complete; occurrence `k` is of item `k % period`.
    pub count: u64,
    pub period: u64,
    /// The occurrence in progress: which (valid only if equal to `count`), its calls so
    /// far, and its value (an item whose value changes).
    pub open_occurrence: u64,
    pub open_calls: u64,
    pub open_value: u64,
    pub reserved: u64,
}

/// One item of a steps body: its call, what changes ([`changing`]), its calls per
/// occurrence (if that does not change), its first call, and its statistics over every
/// call of every occurrence (the run's `count` = its calls, `last_end` the last one's end;
/// its stride is not used).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RawStepsItem {
    pub call: u32,
    pub changing: u32,
    pub calls: u64,
    pub event: RawEvent,
    pub run: RawRun,
}

/// What changes from one occurrence of an item to the next, and so what its word holds.
pub mod changing {
    /// Nothing: no word.
    pub const NOTHING: u32 = 0;
    /// How many times the call repeats (an inner loop's count): the word.
    pub const CALLS: u32 = 1;
    /// The size of a read or write moving all it asked for (request = result): the word.
    pub const SIZE: u32 = 2;
    /// The request size alone: the word.
    pub const REQUEST: u32 = 3;
    /// The result alone (the bytes a completion says arrived): the word, as the `i64`'s
    /// bits.
    pub const RESULT: u32 = 4;

    /// Whether the item is one call whose word is a value of it.
    pub const fn is_value(changing: u32) -> bool {
        matches!(changing, SIZE | REQUEST | RESULT)
    }
}

pub const RAW_STEPS_HEAD_BYTES: usize = std::mem::size_of::<RawStepsHead>();
pub const RAW_STEPS_ITEM_BYTES: usize = std::mem::size_of::<RawStepsItem>();
const _: () = assert!(RAW_STEPS_ITEM_BYTES == 16 + RAW_EVENT_BYTES + RAW_RUN_BYTES);

/// Bytes of a steps record's body of `period` items with room for `room` words.
pub const fn steps_record_bytes(period: usize, room: usize) -> usize {
    RAW_STEPS_HEAD_BYTES + period * RAW_STEPS_ITEM_BYTES + 8 * room
}

/// A decoded steps record.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    pub items: Vec<RawStepsItem>,
    /// Complete occurrences.
    pub count: u64,
    /// The words of the complete occurrences of changing items, in order.
    pub words: Vec<u64>,
    /// The occurrence in progress when the record was read: its calls and its value.
    pub open: Option<(u64, u64)>,
}

/// Where a walk through a steps record's occurrences is: the next occurrence and the next
/// word of the changing items.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    next: u64,
    word: usize,
}

impl Steps {
    /// The occurrence at `cursor`, which moves on — the complete ones in order, then the
    /// open one: (item, calls, value if it changes).
    pub fn next_occurrence(&self, cursor: &mut Cursor) -> Option<(usize, u64, Option<u64>)> {
        let period = self.items.len() as u64;
        let index = (cursor.next % period) as usize;
        let item = &self.items[index];
        let valued = changing::is_value(item.changing);
        let occurrence = if cursor.next < self.count {
            let word = if item.changing == changing::NOTHING {
                None
            } else {
                cursor.word += 1;
                self.words.get(cursor.word - 1).copied()
            };
            match item.changing {
                changing::CALLS => (index, word.unwrap_or(1), None),
                _ if valued => (index, 1, word),
                _ => (index, item.calls, None),
            }
        } else if cursor.next == self.count {
            let (calls, value) = self.open?;
            (index, calls, valued.then_some(value))
        } else {
            return None;
        };
        cursor.next += 1;
        Some(occurrence)
    }

    /// Every occurrence in order, the open one last: (item, calls, value if it changes).
    pub fn occurrences(&self) -> impl Iterator<Item = (usize, u64, Option<u64>)> + '_ {
        let mut cursor = Cursor::default();
        std::iter::from_fn(move || self.next_occurrence(&mut cursor))
    }
}

/// Decodes a steps record's body (`period` = the record's extra).
pub(super) fn decode(period: usize, body: &[u8]) -> Result<Steps> {
    let damaged = |what: &str| FormatError::Corrupt(format!("steps record {what}"));
    let (u32_at, u64_at) = super::word_readers(body);
    let head = steps_record_bytes(period, 0);
    if !(1..=MAX_STEPS_PERIOD).contains(&period)
        || body.len() < head
        || !(body.len() - head).is_multiple_of(8)
        || u64_at(8)? != period as u64
    {
        return Err(damaged("of the wrong size"));
    }
    let items = (0..period)
        .map(|index| {
            let at = RAW_STEPS_HEAD_BYTES + index * RAW_STEPS_ITEM_BYTES;
            Ok(RawStepsItem {
                call: u32_at(at)?,
                changing: u32_at(at + 4)?,
                calls: u64_at(at + 8)?,
                event: raw_event_at(&u32_at, &u64_at, at + 16)?,
                run: raw_run_at(&u32_at, &u64_at, at + 16 + RAW_EVENT_BYTES)?,
            })
        })
        .collect::<Result<Vec<RawStepsItem>>>()?;
    let mut changing_items = 0;
    for item in &items {
        let fits = match item.changing {
            changing::NOTHING => (1..=u32::MAX as u64).contains(&item.calls),
            changing::CALLS => true,
            kind if changing::is_value(kind) => item.calls == 1,
            _ => false,
        };
        if !fits {
            return Err(damaged("of an unknown kind"));
        }
        changing_items += (item.changing != changing::NOTHING) as u64;
    }
    // Without a changing item the tracer writes a block: and the words bound the count.
    if changing_items == 0 {
        return Err(damaged("in which nothing changes"));
    }
    let count = u64_at(0)?;
    let room = ((body.len() - head) / 8) as u64;
    let whole = count / period as u64;
    let rest = (count % period as u64) as usize;
    let needed = whole.saturating_mul(changing_items).saturating_add(
        items[..rest]
            .iter()
            .filter(|item| item.changing != changing::NOTHING)
            .count() as u64,
    );
    if needed > room {
        return Err(damaged("counting more occurrences than it holds"));
    }
    let words = (0..needed as usize)
        .map(|index| u64_at(head + 8 * index))
        .collect::<Result<Vec<u64>>>()?;
    // An inner loop's count is at least one call and, as a run's, below u32::MAX.
    let mut word = words.iter();
    for occurrence in 0..count {
        let item = &items[(occurrence % period as u64) as usize];
        if item.changing == changing::NOTHING {
            continue;
        }
        let value = *word.next().expect("counted above");
        if item.changing == changing::CALLS && !(1..u32::MAX as u64).contains(&value) {
            return Err(damaged("with an inner loop of no calls"));
        }
    }
    let (open_occurrence, open_calls, open_value) = (u64_at(16)?, u64_at(24)?, u64_at(32)?);
    let open = (open_occurrence == count && open_calls > 0).then_some((open_calls, open_value));
    if let Some((calls, _)) = open {
        let item = &items[(count % period as u64) as usize];
        let fits = match item.changing {
            changing::CALLS => calls < u32::MAX as u64,
            changing::NOTHING => calls < item.calls,
            _ => calls == 1,
        };
        if !fits {
            return Err(damaged(
                "with an occurrence in progress longer than its item",
            ));
        }
    }
    Ok(Steps {
        items,
        count,
        words,
        open,
    })
}

/// The body of a steps record, as the tracer lays it out (for tests and tools).
pub fn encode(
    items: &[RawStepsItem],
    count: u64,
    words: &[u64],
    open: Option<(u64, u64)>,
) -> Vec<u8> {
    let mut body = Vec::with_capacity(steps_record_bytes(items.len(), words.len()));
    let (open_calls, open_value) = open.unwrap_or((0, 0));
    for word in [count, items.len() as u64, count, open_calls, open_value, 0] {
        body.extend_from_slice(&word.to_le_bytes());
    }
    for item in items {
        body.extend_from_slice(&item.call.to_le_bytes());
        body.extend_from_slice(&item.changing.to_le_bytes());
        body.extend_from_slice(&item.calls.to_le_bytes());
        body.extend_from_slice(&super::encode_raw_event(&item.event));
        body.extend_from_slice(&super::encode_raw_run(&item.run));
    }
    for word in words {
        body.extend_from_slice(&word.to_le_bytes());
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{
        kind, record_word, records, Record, CHUNK_HEADER_BYTES, RECORD_HEADER_BYTES,
    };

    fn chunk_of(period: u32, body: &[u8]) -> Vec<u8> {
        let mut chunk = vec![0u8; CHUNK_HEADER_BYTES + RECORD_HEADER_BYTES + body.len() + 8];
        let at = CHUNK_HEADER_BYTES;
        chunk[at..at + 4].copy_from_slice(&record_word(kind::STEPS, body.len()).to_le_bytes());
        chunk[at + 4..at + 8].copy_from_slice(&period.to_le_bytes());
        chunk[at + 8..at + 8 + body.len()].copy_from_slice(body);
        chunk
    }

    fn item(call: u32, changing: u32, calls: u64, request: u64) -> RawStepsItem {
        RawStepsItem {
            call,
            changing,
            calls,
            event: RawEvent {
                start: 100,
                duration: 5,
                handle: 3,
                offset: -1,
                request,
                result: request as i64,
                ..RawEvent::default()
            },
            run: RawRun {
                count: 7,
                last_end: 900,
                ..RawRun::default()
            },
        }
    }

    fn read(period: u32, body: &[u8]) -> Result<Steps> {
        let chunk = chunk_of(period, body);
        let mut list = records(&chunk)?;
        assert_eq!(list.len(), 1);
        match list.remove(0) {
            Record::Steps(steps) => Ok(*steps),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_steps_record_reads_back_each_occurrence_and_the_open_one() {
        // A step of particles sent (an inner loop of changing count), a size that jitters
        // and a fixed pair of calls: two steps and a half, the third step's loop open.
        let items = [
            item(4, changing::CALLS, 0, 48),
            item(5, changing::SIZE, 1, 4096),
            item(6, changing::NOTHING, 2, 8),
        ];
        let words = [41, 4100, 44, 4113];
        let body = encode(&items, 6, &words, Some((17, 0)));
        assert_eq!(body.len(), steps_record_bytes(3, 4));
        let steps = read(3, &body).unwrap();
        assert_eq!(steps.items, items);
        assert_eq!(
            steps.occurrences().collect::<Vec<_>>(),
            [
                (0, 41, None),
                (1, 1, Some(4100)),
                (2, 2, None),
                (0, 44, None),
                (1, 1, Some(4113)),
                (2, 2, None),
                (0, 17, None),
            ]
        );
        // The open occurrence counts only where the head says it is the next one.
        let mut stale = body.clone();
        stale[16..24].copy_from_slice(&5u64.to_le_bytes());
        assert_eq!(read(3, &stale).unwrap().open, None);
    }

    #[test]
    fn damaged_steps_records_are_errors() {
        let items = [
            item(4, changing::CALLS, 0, 48),
            item(6, changing::NOTHING, 2, 8),
        ];
        let good = encode(&items, 4, &[3, 5], None);
        assert!(read(2, &good).is_ok());
        // More occurrences than words, an inner loop of no calls, a period the head does
        // not repeat, an open occurrence longer than its fixed item, nothing changing, an
        // unknown kind: damage.
        assert!(read(2, &encode(&items, 6, &[3, 5], None)).is_err());
        assert!(read(2, &encode(&items, 4, &[3, 0], None)).is_err());
        assert!(read(3, &good).is_err());
        assert!(read(2, &encode(&items, 3, &[3, 5], Some((2, 0)))).is_err());
        assert!(read(2, &encode(&items, 3, &[3, 5], Some((1, 0)))).is_ok());
        let fixed = [
            item(4, changing::NOTHING, 1, 48),
            item(6, changing::NOTHING, 2, 8),
        ];
        assert!(read(2, &encode(&fixed, 4, &[], None)).is_err());
        let unknown = [item(4, 9, 1, 48), item(6, changing::CALLS, 0, 8)];
        assert!(read(2, &encode(&unknown, 2, &[3], None)).is_err());
    }

    proptest::proptest! {
        #[test]
        fn damaged_steps_records_never_panic(
            count in 0u64..40,
            open in proptest::option::of((0u64..5, 0u64..9000)),
            kinds in proptest::collection::vec((0u32..6, 0u64..4), 0..6),
            words in proptest::collection::vec(0u64..6, 0..40),
            period in 0u32..8,
            cut in 0usize..12,
        ) {
            // Heads, kinds, periods and lengths that disagree: an error, or a record whose
            // occurrences are as many as it counts (and the open one), never a panic.
            let items: Vec<RawStepsItem> = kinds
                .iter()
                .map(|(changing, calls)| item(1, *changing, *calls, 64))
                .collect();
            let mut body = encode(&items, count, &words, open);
            body.truncate(body.len().saturating_sub(cut * 4));
            let chunk = chunk_of(period, &body);
            if let Ok(mut list) = records(&chunk) {
                if let Some(Record::Steps(steps)) = list.pop() {
                    let occurrences = steps.occurrences().count() as u64;
                    proptest::prop_assert_eq!(
                        occurrences,
                        count + steps.open.is_some() as u64
                    );
                    for (_, calls, _) in steps.occurrences() {
                        proptest::prop_assert!(calls >= 1);
                    }
                }
            }
        }
    }
}

//! Repetitions of a short body whose first position moves at irregular offsets, as the
//! tracer stages them (an offsets record: random `pread`s; a seek to a shuffled block and
//! the transfer after it; a call whose sizes keep being new, with or without offsets of
//! its own): each occurrence is encoded by the same rules as an event pushed alone
//! ([`Relative`]), and when every repetition gives each position the same key — the
//! irregular offsets (and sizes) going to the stream's column, the usual case, since the
//! tracer stages them so by the same rule (`cairn_model::IrregularSteps`) — the body enters
//! the folder as one leaf per position repeated `count` times, with the record's exact
//! timing statistics, instead of one push per call.

use cairn_model::{positional, Event};

use super::sizes::ColumnSizes;
use super::Column;
use super::{
    BlockPosition, EventKey, Relative, StreamEncoder, CONSECUTIVE, SEQUENTIAL, SIZE_IN_COLUMN,
};
use crate::fold::Leaf;

impl StreamEncoder {
    /// Adds `count` repetitions of `body`, each position's offset in each repetition the
    /// next of `offsets` (repetition by repetition; the first repetition's are the body's
    /// own) and, if `sizes` is not empty, the first position's size (request and result)
    /// in each repetition the next of `sizes`. Each position's statistics cover every
    /// repetition; strides are not used.
    pub fn push_offsets(
        &mut self,
        body: &[BlockPosition],
        offsets: &[i64],
        sizes: &[u64],
        count: u64,
    ) {
        let period = body.len();
        if period == 0
            || count == 0
            || offsets.len() as u64 != count * period as u64
            || !(sizes.is_empty() || sizes.len() as u64 == count)
        {
            return;
        }
        // The occurrence at `index` of `offsets`.
        let at = |index: usize| -> Event {
            let position = index % period;
            let size = sizes.get(index / period).filter(|_| position == 0);
            occurrence(&body[position].event, offsets[index], size.copied())
        };
        if self.precision == 100 {
            if let Some(mut folded) = self.encode_whole(&at, body, offsets, sizes) {
                self.relative = folded.state;
                self.column.extend(&folded.entries);
                if self.first_start.is_none() {
                    self.first_start = Some(body[0].event.start);
                }
                let leaves = body
                    .iter()
                    .zip(std::mem::take(&mut folded.keys))
                    .zip(std::mem::take(&mut folded.order_counts))
                    .enumerate()
                    .map(|(index, ((position, key), order_counts))| {
                        self.last_end = self.last_end.max(position.last_end);
                        let (low, high) = folded.extents[index];
                        Leaf {
                            key,
                            duration: position.duration,
                            gap: position.gap,
                            offset_low: if low >= 0 { low } else { -1 },
                            offset_high: if low >= 0 { high } else { -1 },
                            slowest: 0,
                            order_counts,
                            order_of: 0,
                            blurred: None,
                            column_sizes: folded.column_sizes[index].take().map(Box::new),
                        }
                    })
                    .collect();
                self.folder.push_repetitions(leaves, count);
                self.count += count * period as u64;
                self.write_finished();
                return;
            }
        }
        // One by one (blurred values, or a site the encoder does not find irregular yet):
        // each occurrence's duration and gap its position's means.
        let mut clock = body[0].event.start;
        for index in 0..offsets.len() {
            let position = &body[index % period];
            let (duration, gap) = (
                position.duration.mean.round() as u64,
                position.gap.mean.round() as u64,
            );
            let start = if index == 0 {
                clock
            } else {
                clock.saturating_add(gap)
            };
            let event = Event {
                start,
                duration,
                ..at(index)
            };
            clock = start.saturating_add(duration);
            self.push(&event, position.class);
        }
        for position in body {
            self.last_end = self.last_end.max(position.last_end);
        }
    }

    /// The encoder's state after every repetition, if each gave every position the same
    /// key (else `None`, and the state is untouched).
    fn encode_whole(
        &self,
        at: &dyn Fn(usize) -> Event,
        body: &[BlockPosition],
        offsets: &[i64],
        sizes: &[u64],
    ) -> Option<Folded> {
        let mut state = self.relative.clone();
        state.record_sizes = !sizes.is_empty();
        let mut entries = Column::draft();
        let period = body.len();
        if period == 1 && sizes.is_empty() {
            let mut order_counts = [0u64; 2];
            let key = state.encode_column_run(
                &|offset| occurrence(&body[0].event, offset, None),
                body[0].class,
                offsets,
                &mut entries,
                &mut order_counts,
            )?;
            let (low, high) = offsets
                .iter()
                .fold((i64::MAX, i64::MIN), |(low, high), offset| {
                    (low.min(*offset), high.max(*offset))
                });
            let moved = if body[0].moves_bytes() {
                key.bytes() as i64
            } else {
                0
            };
            return Some(Folded {
                state,
                entries,
                keys: vec![key],
                order_counts: vec![order_counts],
                extents: vec![(low, high.saturating_add(moved))],
                column_sizes: vec![None],
            });
        }
        let mut keys: Vec<EventKey> = Vec::with_capacity(period);
        let mut order_counts = vec![[0u64; 2]; period];
        let mut extents = vec![(i64::MAX, i64::MIN); period];
        let mut column_sizes: Vec<Option<ColumnSizes>> = vec![None; period];
        for index in 0..offsets.len() {
            let position = index % period;
            let event = at(index);
            let (key, order) = state.encode_into_column(&event, body[position].class, &mut entries);
            if index < period {
                keys.push(key);
            } else if keys[position] != key {
                return None;
            }
            if key.order_in_leaf() {
                order_counts[position][0] += (order & CONSECUTIVE != 0) as u64;
                order_counts[position][1] += (order & SEQUENTIAL != 0) as u64;
            }
            let moved = if body[position].moves_bytes() {
                event.bytes() as i64
            } else {
                0
            };
            let (low, high) = &mut extents[position];
            *low = (*low).min(event.offset);
            *high = (*high).max(event.offset.saturating_add(moved));
            if key.flags & SIZE_IN_COLUMN != 0 {
                let size = ColumnSizes::of(event.request);
                match &mut column_sizes[position] {
                    Some(sizes) => sizes.merge(&size),
                    none => *none = Some(size),
                }
            }
        }
        state.record_sizes = false;
        Some(Folded {
            state,
            entries,
            keys,
            order_counts,
            extents,
            column_sizes,
        })
    }
}

/// `event` at `offset` and, if given, of `size` (request and result); a seek's positions
/// move with its offset.
fn occurrence(event: &Event, offset: i64, size: Option<u64>) -> Event {
    let (request, result) = match size {
        Some(size) => (size, size as i64),
        None => positional::moved(
            event.flags,
            offset.wrapping_sub(event.offset),
            event.request,
            event.result,
        ),
    };
    Event {
        offset,
        request,
        result,
        ..event.clone()
    }
}

impl BlockPosition {
    /// Whether each occurrence moves its bytes (reads and writes).
    fn moves_bytes(&self) -> bool {
        matches!(
            self.class,
            Some(cairn_model::CallClass::Read | cairn_model::CallClass::Write)
        )
    }
}

/// What [`StreamEncoder::encode_whole`] found: per position also the lowest offset and
/// the furthest end of its accesses, and its sizes' figures when they are in the column.
struct Folded {
    state: Relative,
    entries: Column,
    keys: Vec<EventKey>,
    order_counts: Vec<[u64; 2]>,
    extents: Vec<(i64, i64)>,
    column_sizes: Vec<Option<ColumnSizes>>,
}

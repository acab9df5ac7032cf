//! Repetitions of a short body whose first position moves at irregular offsets, as the
//! tracer stages them (an offsets record: random `pread`s; a seek to a shuffled block and
//! the transfer after it): each occurrence is encoded by the same rules as an event pushed
//! alone ([`Relative`]), and when every repetition gives each position the same key — the
//! irregular offsets going to the stream's column, the usual case, since the tracer stages
//! them so by the same rule (`cairn_model::IrregularSteps`) — the body enters the folder as
//! one leaf per position repeated `count` times, with the record's exact timing statistics,
//! instead of one push per call.

use cairn_model::{positional, Event};

use super::{
    BlockPosition, EventKey, Relative, StreamEncoder, CONSECUTIVE, SEQUENTIAL, SIZE_IN_COLUMN,
};
use crate::fold::Leaf;

impl StreamEncoder {
    /// Adds `count` repetitions of `body`, each position's offset in each repetition the
    /// next of `offsets` (repetition by repetition; the first repetition's are the body's
    /// own). Each position's statistics cover every repetition; strides are not used.
    pub fn push_offsets(&mut self, body: &[BlockPosition], offsets: &[i64], count: u64) {
        let period = body.len();
        if period == 0 || count == 0 || offsets.len() as u64 != count * period as u64 {
            return;
        }
        let at = |position: usize, offset: i64| -> Event {
            let event = &body[position].event;
            // A seek's positions move with its offset.
            let (request, result) = positional::moved(
                event.flags,
                offset.wrapping_sub(event.offset),
                event.request,
                event.result,
            );
            Event {
                offset,
                request,
                result,
                ..event.clone()
            }
        };
        if self.precision == 100 {
            if let Some(folded) = self.encode_whole(&at, body, offsets) {
                self.relative = folded.state;
                self.column.extend_from_slice(&folded.entries);
                if self.first_start.is_none() {
                    self.first_start = Some(body[0].event.start);
                }
                let leaves = body
                    .iter()
                    .zip(folded.keys)
                    .zip(folded.order_counts)
                    .enumerate()
                    .map(|(index, ((position, key), order_counts))| {
                        self.last_end = self.last_end.max(position.last_end);
                        let moved = if position.moves_bytes() {
                            key.bytes() as i64
                        } else {
                            0
                        };
                        let (low, high) = offsets
                            .iter()
                            .skip(index)
                            .step_by(period)
                            .fold((i64::MAX, i64::MIN), |(low, high), offset| {
                                (low.min(*offset), high.max(*offset))
                            });
                        Leaf {
                            key,
                            duration: position.duration,
                            gap: position.gap,
                            offset_low: if low >= 0 { low } else { -1 },
                            offset_high: if low >= 0 {
                                high.saturating_add(moved)
                            } else {
                                -1
                            },
                            slowest: 0,
                            order_counts,
                            blurred: None,
                            column_sizes: None,
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
        for (index, offset) in offsets.iter().enumerate() {
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
                ..at(index % period, *offset)
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
        at: &dyn Fn(usize, i64) -> Event,
        body: &[BlockPosition],
        offsets: &[i64],
    ) -> Option<Folded> {
        let mut state = self.relative.clone();
        let mut entries = Vec::with_capacity(offsets.len());
        let period = body.len();
        if period == 1 {
            let mut order_counts = [0u64; 2];
            let key = state.encode_column_run(
                &|offset| at(0, offset),
                body[0].class,
                offsets,
                &mut entries,
                &mut order_counts,
            )?;
            return Some(Folded {
                state,
                entries,
                keys: vec![key],
                order_counts: vec![order_counts],
            });
        }
        let mut keys: Vec<EventKey> = Vec::with_capacity(period);
        let mut order_counts = vec![[0u64; 2]; period];
        for (index, offset) in offsets.iter().enumerate() {
            let position = index % period;
            let (key, order) = state.encode_into_column(
                &at(position, *offset),
                body[position].class,
                &mut entries,
            );
            // Sizes in the column are taken event by event (`push` keeps their figures).
            if key.flags & SIZE_IN_COLUMN != 0 {
                return None;
            }
            if index < period {
                keys.push(key);
            } else if keys[position] != key {
                return None;
            }
            if key.order_in_leaf() {
                order_counts[position][0] += (order & CONSECUTIVE != 0) as u64;
                order_counts[position][1] += (order & SEQUENTIAL != 0) as u64;
            }
        }
        Some(Folded {
            state,
            entries,
            keys,
            order_counts,
        })
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

/// What [`StreamEncoder::encode_whole`] found.
struct Folded {
    state: Relative,
    entries: Vec<i64>,
    keys: Vec<EventKey>,
    order_counts: Vec<[u64; 2]>,
}

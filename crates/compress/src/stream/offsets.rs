//! Repetitions of one event at irregular offsets, as the tracer stages them (an offsets
//! record: random `pread`s, seeks to shuffled blocks): each occurrence is encoded by the
//! same rules as an event pushed alone ([`Relative`]), and when every one of them goes to
//! the stream's column with the same key — the usual case, since the tracer stages them so
//! by the same rule (`cairn_model::IrregularSteps`) — they enter the folder as one leaf
//! of `n` occurrences with the record's exact timing statistics, instead of `n` pushes.

use cairn_model::{positional, CallClass, Event};

use super::{Relative, StreamEncoder};
use crate::fold::Leaf;
use crate::stats::Stats;

impl StreamEncoder {
    /// Adds the occurrences of `first` at each of `offsets` (the first is its own), whose
    /// timing statistics over all of them are `duration` and `gap` and whose last ended at
    /// `last_end`.
    pub fn push_offsets(
        &mut self,
        first: &Event,
        class: Option<CallClass>,
        offsets: &[i64],
        last_end: u64,
        duration: Stats,
        gap: Stats,
    ) {
        if offsets.is_empty() {
            return;
        }
        let at = |offset: i64| -> Event {
            // A seek's positions move with its offset.
            let (request, result) = positional::moved(
                first.flags,
                offset.wrapping_sub(first.offset),
                first.request,
                first.result,
            );
            Event {
                offset,
                request,
                result,
                ..first.clone()
            }
        };
        if self.precision == 100 {
            if let Some(relative) = self.all_in_column(&at, class, offsets) {
                self.relative = relative.state;
                self.column.extend_from_slice(&relative.entries);
                if self.first_start.is_none() {
                    self.first_start = Some(first.start);
                }
                self.last_end = self.last_end.max(last_end);
                let moved = if matches!(class, Some(CallClass::Read | CallClass::Write)) {
                    relative.key.bytes() as i64
                } else {
                    0
                };
                let (low, high) = offsets
                    .iter()
                    .fold((i64::MAX, i64::MIN), |(low, high), offset| {
                        (low.min(*offset), high.max(*offset))
                    });
                let leaf = Leaf {
                    key: relative.key,
                    duration,
                    gap,
                    offset_low: low,
                    offset_high: high.saturating_add(moved),
                    slowest: 0,
                    order_counts: relative.order_counts,
                    blurred: None,
                };
                self.folder
                    .push_repetitions(vec![leaf], offsets.len() as u64);
                self.count += offsets.len() as u64;
                for node in self.folder.take_finished() {
                    self.write(&node);
                }
                return;
            }
        }
        // One by one (blurred values, or a site the encoder does not yet find irregular):
        // each occurrence's duration and gap the record's means.
        let (mean_duration, mean_gap) = (duration.mean.round() as u64, gap.mean.round() as u64);
        let mut clock = first.start;
        for (index, offset) in offsets.iter().enumerate() {
            let start = if index == 0 {
                first.start
            } else {
                clock.saturating_add(mean_gap)
            };
            let event = Event {
                start,
                duration: mean_duration,
                ..at(*offset)
            };
            clock = start.saturating_add(mean_duration);
            self.push(&event, class);
        }
        self.last_end = self.last_end.max(last_end);
    }

    /// The encoder's state after every occurrence, if each went to the column with the same
    /// key (else `None`, and the state is untouched).
    fn all_in_column(
        &self,
        at: &dyn Fn(i64) -> Event,
        class: Option<CallClass>,
        offsets: &[i64],
    ) -> Option<InColumn> {
        let mut state = self.relative.clone();
        let mut entries = Vec::with_capacity(offsets.len());
        let mut order_counts = [0u64; 2];
        let key = state.encode_column_run(at, class, offsets, &mut entries, &mut order_counts)?;
        (entries.len() == offsets.len()).then_some(InColumn {
            state,
            entries,
            key,
            order_counts,
        })
    }
}

/// What [`StreamEncoder::all_in_column`] found.
struct InColumn {
    state: Relative,
    entries: Vec<i64>,
    key: super::EventKey,
    order_counts: [u64; 2],
}

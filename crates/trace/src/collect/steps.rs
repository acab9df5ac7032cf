//! Steps records (`cairn_format::segment::steps`) read back as the event and run records
//! the tracer would have staged for them, one occurrence at a time: the rest of the build
//! (offsets, positions, folding, precision) sees the calls as if staged one by one, and a
//! long stretch is never expanded at once. The record keeps each item's statistics over
//! all its calls, not each call's times: each call gets its item's mean duration and gap
//! (the trace builder blurs them at the precision level that makes the tracer write
//! these records), and an inner loop's duration histogram is handed out from its item's
//! until none is left, so the item's bins add up as the tracer counted them.

use std::collections::VecDeque;

use cairn_format::segment::{changing, RawEvent, RawRun, RawSpread, Steps, StepsCursor};

use super::Staged;

pub(super) struct StepsExpansion {
    steps: Box<Steps>,
    cursor: StepsCursor,
    /// When the call before the next one ended (clock units; none before the first).
    time: Option<u64>,
    /// Per item: its mean duration and gap, and what is left of its duration histogram.
    means: Vec<(u64, u64)>,
    left: Vec<[u32; 8]>,
}

/// The same value `count` times.
fn constant(value: u64) -> RawSpread {
    RawSpread {
        min: value,
        max: value,
        shift: value,
        sum: 0.0,
        squares: 0.0,
    }
}

impl StepsExpansion {
    pub(super) fn new(steps: Box<Steps>) -> StepsExpansion {
        let means = steps
            .items
            .iter()
            .map(|item| {
                let calls = item.run.count.max(1);
                let mean = |spread: &RawSpread| spread.mean_and_m2(calls).0.max(0.0).round() as u64;
                (mean(&item.run.duration), mean(&item.run.gap))
            })
            .collect();
        let left = steps.items.iter().map(|item| item.run.histogram).collect();
        StepsExpansion {
            steps,
            cursor: StepsCursor::default(),
            time: None,
            means,
            left,
        }
    }

    /// Takes `count` calls' bins from what is left of the item's histogram, fullest first.
    fn histogram(&mut self, index: usize, count: u64) -> [u32; 8] {
        let mut taken = [0u32; 8];
        let mut wanted = count;
        while wanted > 0 {
            let left = &mut self.left[index];
            let Some(fullest) = (0..8)
                .filter(|bin| left[*bin] > 0)
                .max_by_key(|bin| left[*bin])
            else {
                break;
            };
            let take = (left[fullest] as u64).min(wanted) as u32;
            left[fullest] -= take;
            taken[fullest] += take;
            wanted -= take as u64;
        }
        taken
    }

    /// Appends the next occurrence's staged records to `out` (an event record, and a run
    /// record of its repetitions if it has more than one call); false when none is left.
    pub(super) fn next(&mut self, out: &mut VecDeque<(u32, Staged)>) -> bool {
        let Some((index, calls, size)) = self.steps.next_occurrence(&mut self.cursor) else {
            return false;
        };
        let item = self.steps.items[index];
        let (duration, gap) = self.means[index];
        let mut event = item.event;
        match (item.changing, size) {
            (changing::SIZE, Some(size)) => (event.request, event.result) = (size, size as i64),
            (changing::REQUEST, Some(size)) => event.request = size,
            (changing::RESULT, Some(result)) => event.result = result as i64,
            _ => {}
        }
        // The first call keeps its own start: it orders the stretch among other threads.
        event.start = self
            .time
            .map_or(item.event.start, |end| end.saturating_add(gap));
        event.duration = duration;
        let end = event.start.saturating_add(duration);
        out.push_back((item.call, Staged::Event(event)));
        self.time = Some(end);
        if calls > 1 {
            let repetitions = calls - 1;
            let each = duration.saturating_add(gap);
            let last_end = end.saturating_add(each.saturating_mul(repetitions));
            let run = RawRun {
                count: repetitions,
                stride: 0,
                last_end,
                duration: constant(duration),
                histogram: self.histogram(index, repetitions),
                gap: constant(gap),
            };
            let first = RawEvent {
                start: end.saturating_add(gap),
                ..event
            };
            out.push_back((item.call, Staged::Run(first, Box::new(run))));
            self.time = Some(last_end);
        }
        true
    }
}

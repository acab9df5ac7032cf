//! Irregular offsets, folded as the program runs: a call repeating with the same values at
//! offsets no stride describes (random `pread`s), or a short body of calls whose first one
//! does (IOR's `-z`: a seek to a shuffled block, then the transfer at the position), is
//! staged in offsets records — the body once, then 8 bytes a repetition — instead of an
//! event record per call. When offsets are irregular is `cairn_model::IrregularSteps`'
//! rule, the one by which the trace builder puts them in its stream's column: the builder
//! then takes a record whole, as one folded leaf per position.
//!
//! A repetition is staged once its last position arrives (up to three calls wait in the
//! thread's state, as a block's do); an event that does not continue the body ends the
//! stretch, and the waiting calls are written as event records before it.
//!
//! A read or write whose sizes keep being new (compressed blocks appended, then read back
//! at random), alone or first in a short body of calls that repeat unchanged (HDF5's
//! `H5Dwrite`, then the deflated chunk's `pwrite`), is staged the same way, its size — and
//! its offset, if explicit — in each repetition's entry (`segment::varying`): once its
//! sizes wander by the rule by which the trace builder puts sizes in its column
//! (`cairn_model::WanderingSizes`), so the builder takes the record whole there too.

use cairn_format::segment::{
    self, offsets_record_bytes, varying, RawEvent, RawOffsetsHead, RawOffsetsPosition, RawRun,
    MAX_OFFSETS_PERIOD, RAW_OFFSETS_HEAD_BYTES, RAW_OFFSETS_POSITION_BYTES,
};

use super::{add_repetition, repeats, resized, signature, ThreadState};
use crate::header_page;
use cairn_model::WanderingSizes;

impl ThreadState {
    /// Takes `event` if it continues the irregular body: the first position at a new
    /// offset, still irregular; another with its values unchanged.
    // Out of line: inlined, it weighed on every call's path through `write_event` (a
    // loop of one `pwrite` folded into a run took 16 ns more per call).
    #[inline(never)]
    pub(super) fn irregular_takes(&mut self, call: u32, event: &RawEvent, gap: u64) -> bool {
        if self.irregular_varying != varying::OFFSET {
            return self.sized_takes(call, event, gap);
        }
        let position = self.irregular_filled;
        let period = self.irregular_period;
        let history = &mut *self.history;
        let (expected_call, expected) = &history.irregular_body[position];
        if call != *expected_call {
            return false;
        }
        match repeats(expected, event) {
            Some(step) if position == 0 && event.offset >= 0 => {
                let steps = if period == 1 {
                    &mut history.steps
                } else {
                    &mut history.body_steps
                };
                if !steps.step(step) {
                    return false;
                }
                history.irregular_body[0].1 = *event;
            }
            Some(0) if position > 0 => {}
            _ => return false,
        }
        history.irregular_pending[position] = (event.start, event.duration, gap);
        self.irregular_filled += 1;
        if self.irregular_filled == period {
            self.irregular_filled = 0;
            self.stage_repetition();
        }
        true
    }

    /// Takes `event` if it continues the body whose first call repeats with a size (and an
    /// explicit offset, if the stretch's has one) of its own: the first position with its
    /// sizes still wandering, another with its values unchanged.
    fn sized_takes(&mut self, call: u32, event: &RawEvent, gap: u64) -> bool {
        let position = self.irregular_filled;
        let period = self.irregular_period;
        let history = &mut *self.history;
        let (expected_call, expected) = &history.irregular_body[position];
        if call != *expected_call {
            return false;
        }
        if position == 0 {
            if !(resized(expected, event) || repeats(expected, event).is_some()) {
                return false;
            }
            let sizes = if period == 1 {
                &mut history.sizes
            } else {
                &mut history.body_sizes
            };
            if !sizes.step_sampled(event.request) {
                return false;
            }
            history.irregular_body[0].1 = *event;
        } else if repeats(expected, event) != Some(0) {
            return false;
        }
        history.irregular_pending[position] = (event.start, event.duration, gap);
        self.irregular_filled += 1;
        if self.irregular_filled == period {
            self.irregular_filled = 0;
            self.stage_repetition();
        }
        true
    }

    /// Whether the last repetition of a body of `period` events repeated the one before
    /// exactly but for its first position (the event about to come is the next first).
    fn others_unchanged(&self, period: usize) -> bool {
        (1..period).all(|position| {
            let (last_call, last) = self.recent_at(period - position);
            let (before_call, before) = self.recent_at(2 * period - position);
            last_call == before_call && repeats(before, last) == Some(0)
        })
    }

    /// The period of a short body (2 to [`MAX_OFFSETS_PERIOD`] events) whose repetitions
    /// `event`, a read or write, continues with a size of its own — the others unchanged
    /// (HDF5's `H5Dwrite` and the deflated chunk's `pwrite` under it) — if its sizes now
    /// wander (each is counted here).
    pub(super) fn sized_body_starts(&mut self, call: u32, event: &RawEvent) -> Option<usize> {
        for period in 2..=MAX_OFFSETS_PERIOD {
            if self.window() < 2 * period - 1 {
                break;
            }
            let (first_call, first) = self.recent_at(period);
            if first_call != call || !resized(first, event) {
                continue;
            }
            if !self.others_unchanged(period) {
                continue;
            }
            let history = &mut *self.history;
            let site = (call, event.context, period as u32);
            let fresh = history.body_sizes_site != site;
            history.body_sizes_site = site;
            return self
                .sizes_wander(period, event.request, fresh)
                .then_some(period);
        }
        None
    }

    /// Takes `size`, a call's (`period` 1: `sizes`) or a short body's first call's
    /// (`body_sizes`), whose repetitions just stopped being equal; whether its sizes
    /// wander now. `fresh`: another site than the last one taken.
    ///
    /// Seen contiguously when only the call's or body's repetitions came since the site's
    /// last size — a few as event records, or a run or block of it that closed at this
    /// event (a progress line whose length changed after some equal ones) — the sizes are
    /// taken as the trace builder takes them, the folded repetitions as repeating, and
    /// once the body has repeated as many times as the rule looks back, by the rule over
    /// its last 64 ([`WanderingSizes::step`]). Seen among other calls (a halo exchange's
    /// reads at each level of a CG iteration, a body of two within the exchange), or in a
    /// body that has not repeated that long, a size is a sample: the site starts afresh
    /// at each sample seen apart, and only 16 new in a row make its sizes wander
    /// ([`WanderingSizes::step_sampled`]).
    pub(super) fn sizes_wander(&mut self, period: usize, size: u64, fresh: bool) -> bool {
        let now = self.events_seen;
        let (closed_period, started, closed) = self.closed_block;
        let history = &mut *self.history;
        let (sizes, at, repeated) = if period == 1 {
            (
                &mut history.sizes,
                &mut history.sizes_at,
                &mut history.sizes_repeated,
            )
        } else {
            (
                &mut history.body_sizes,
                &mut history.body_sizes_at,
                &mut history.body_sizes_repeated,
            )
        };
        let period = period as u64;
        let since = now.wrapping_sub(*at);
        let near = |event: u64| event.wrapping_sub(*at) <= 3 * period;
        let contiguous = !fresh
            && since.is_multiple_of(period)
            && (near(now) || (closed_period as u64 == period && closed == now && near(started)));
        *at = now;
        if contiguous {
            sizes.repeat(since / period - 1);
            *repeated += since / period;
        } else {
            sizes.reset();
            *repeated = 1;
        }
        if *repeated >= WanderingSizes::KEPT as u64 {
            sizes.step(size)
        } else {
            sizes.step_sampled(size)
        }
    }

    /// The period of a short body (2 to [`MAX_OFFSETS_PERIOD`] events) whose repetitions
    /// `event` continues at an irregular offset of its first position, the others
    /// unchanged, if its steps are now irregular (each is counted here).
    pub(super) fn irregular_body_starts(
        &mut self,
        call: u32,
        event: &RawEvent,
        signature: u64,
    ) -> Option<usize> {
        for period in 2..=MAX_OFFSETS_PERIOD {
            // The last two repetitions must be in the window (their signatures, which
            // leave offsets out, already repeat).
            if self.window() < 2 * period - 1
                || (self.streaks[period] as usize) < period - 1
                || self.signature_at(period) != signature
            {
                continue;
            }
            let (first_call, first) = self.recent_at(period);
            if first_call != call || first.offset < 0 {
                continue;
            }
            let Some(step) = repeats(first, event) else {
                continue;
            };
            if !self.others_unchanged(period) {
                continue;
            }
            let history = &mut *self.history;
            let site = (call, event.context, period as u32);
            if history.body_steps_site != site {
                history.body_steps.reset();
                history.body_steps_site = site;
            }
            return history.body_steps.step(step).then_some(period);
        }
        None
    }

    /// Starts an irregular stretch of `period` events with `event` as its first, which
    /// changes what `varying` says each repetition: the positions after it are those of
    /// the last repetition, already staged.
    #[cold]
    pub(super) fn begin_irregular(
        &mut self,
        period: usize,
        varying: u32,
        call: u32,
        event: &RawEvent,
        gap: u64,
    ) {
        self.irregular_varying = varying;
        for position in 1..period {
            let (call, event) = self.recent_at(period - position);
            let event = *event;
            self.history.irregular_body[position] = (call, event);
        }
        self.history.irregular_body[0] = (call, *event);
        self.history.irregular_pending[0] = (event.start, event.duration, gap);
        // Blocks never repeat across another kind of record (the builder's view too).
        self.plain_events = 0;
        self.forget_recent();
        self.irregular_period = period;
        self.irregular_filled = 1;
        if period == 1 {
            self.irregular_filled = 0;
            self.stage_repetition();
        }
    }

    /// Ends the irregular stretch, if any: the waiting calls of the repetition left
    /// incomplete become event records; the next event is one too (a run repeats the event
    /// record before it).
    pub(crate) fn end_irregular(&mut self) {
        if self.irregular_period == 0 {
            return;
        }
        self.end_irregular_stretch();
    }

    #[cold]
    fn end_irregular_stretch(&mut self) {
        let filled = self.irregular_filled;
        self.irregular_period = 0;
        self.irregular_filled = 0;
        self.offsets = std::ptr::null_mut();
        self.offsets_records = 0;
        self.candidate_stride = None;
        self.history.steps.reset();
        self.history.body_steps.reset();
        self.history.sizes.reset();
        self.history.body_sizes.reset();
        self.history.sizes_repeated = 0;
        self.history.body_sizes_repeated = 0;
        self.irregular_varying = varying::OFFSET;
        for position in 0..filled {
            let (call, event) = self.history.irregular_body[position];
            let (start, duration, _) = self.history.irregular_pending[position];
            let event = RawEvent {
                start,
                duration,
                ..event
            };
            self.write_plain(call, &event, signature(call, &event));
        }
    }

    /// Stages the repetition just completed: in the open offsets record, or a new one
    /// (room for 64 repetitions, each next one of the stretch twice as many, up to 4,096
    /// — 2,048 of two words).
    fn stage_repetition(&mut self) {
        let period = self.irregular_period;
        let first = &self.history.irregular_body[0].1;
        let (words, entry) = match self.irregular_varying {
            varying::SIZE => (1, [first.request as i64, 0]),
            varying::OFFSET_AND_SIZE => (2, [first.offset, first.request as i64]),
            _ => (1, [first.offset, 0]),
        };
        let offsets_at = offsets_record_bytes(period, 0);
        if !self.offsets.is_null() {
            // SAFETY: an open offsets record is a record of the current chunk, written by
            // this thread: its head, `period` positions and room for `offsets_room`
            // offsets. The count is stored after the offset and the statistics (a crash
            // leaves at most one repetition's statistics uncounted).
            unsafe {
                let head = &mut *self.offsets.cast::<RawOffsetsHead>();
                let count = head.count;
                if (count as usize) < self.offsets_room {
                    for position in 0..period {
                        let (start, duration, gap) = self.history.irregular_pending[position];
                        let record = &mut *self
                            .offsets
                            .add(RAW_OFFSETS_HEAD_BYTES + position * RAW_OFFSETS_POSITION_BYTES)
                            .cast::<RawOffsetsPosition>();
                        add_repetition(&mut record.run, count, duration, gap);
                        record.run.last_end = start.saturating_add(duration);
                    }
                    let at = self
                        .offsets
                        .add(offsets_at)
                        .cast::<i64>()
                        .add(count as usize * words);
                    for (word, value) in entry[..words].iter().enumerate() {
                        at.add(word).write(*value);
                    }
                    std::ptr::write_volatile(&mut head.count, count + 1);
                    return;
                }
            }
        }
        self.offsets = std::ptr::null_mut();
        let room = (64usize << self.offsets_records.min(6)) / words;
        let length = offsets_record_bytes(period, room * words);
        let Some(body) = self.reserve(length) else {
            for _ in 0..period {
                header_page::count_unrecorded();
            }
            return;
        };
        // SAFETY: `body` has room for the head, `period` positions and `room` entries of
        // `words` words, and is 8-aligned; the chunk's unwritten bytes are zero, so only
        // the first entry needs writing.
        unsafe {
            body.cast::<RawOffsetsHead>().write(RawOffsetsHead {
                count: 1,
                period: period as u64,
            });
            for position in 0..period {
                let (call, event) = self.history.irregular_body[position];
                let (start, duration, gap) = self.history.irregular_pending[position];
                let mut run = RawRun {
                    last_end: start.saturating_add(duration),
                    ..RawRun::default()
                };
                add_repetition(&mut run, 0, duration, gap);
                body.add(RAW_OFFSETS_HEAD_BYTES + position * RAW_OFFSETS_POSITION_BYTES)
                    .cast::<RawOffsetsPosition>()
                    .write(RawOffsetsPosition {
                        call,
                        varying: if position == 0 {
                            self.irregular_varying
                        } else {
                            varying::OFFSET
                        },
                        event: RawEvent {
                            start,
                            duration,
                            ..event
                        },
                        run,
                    });
            }
            for (word, value) in entry[..words].iter().enumerate() {
                body.add(offsets_at).cast::<i64>().add(word).write(*value);
            }
        }
        self.publish(segment::kind::OFFSETS, period as u32, length);
        self.offsets = body;
        self.offsets_room = room;
        self.offsets_records = self.offsets_records.saturating_add(1);
    }
}

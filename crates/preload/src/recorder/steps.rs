//! Steps, folded as the program runs at a precision level below 100: a time step's calls
//! repeating with a message size that jitters or an inner loop whose count changes (a
//! solver's iterations, a rank's particles) — which no block describes — are staged in a
//! steps record (`cairn_format::segment::steps`): the step's items once, then a word per
//! changing item and step, instead of event and run records each step (some 600 bytes a
//! step). The trace builder blurs such values into histograms at those levels anyway; at
//! 100 nothing here runs and the staging keeps every call's times.
//!
//! An item is a call, or a call repeated with the same values (an inner loop). The thread's
//! last items are kept in a ring; when an item starts the fourth repetition of the last
//! `p` items (2 ≤ p ≤ 16, same calls and values but for one-call items' sizes and loops'
//! counts), a stretch begins. Each call then continues its item or starts the next; the
//! occurrence in progress is in the record's head, updated per call, so nothing waits in
//! the thread's state. A call that fits neither ends the stretch, and is staged as usual.

use std::sync::atomic::{AtomicBool, Ordering};

use cairn_format::segment::{
    self, changing, steps_record_bytes, RawEvent, RawRun, RawStepsHead, RawStepsItem,
    MAX_STEPS_PERIOD, RAW_STEPS_HEAD_BYTES, RAW_STEPS_ITEM_BYTES,
};

use super::{add_repetition, repeats, resized, ThreadState, NO_CALL};

/// Whether steps fold (`CAIRN_PRECISION` below 100, which `cairn run --precision` sets).
pub static STEPS: AtomicBool = AtomicBool::new(false);

/// Items kept for finding a repeated body: three bodies of the longest period.
pub(super) const ITEM_RING: usize = 3 * MAX_STEPS_PERIOD;

/// An item: its call, its first call's event, how many calls, and (in a stretch's body)
/// what changes from one occurrence to the next.
#[derive(Clone, Copy, Default)]
pub(super) struct Item {
    call: u32,
    changing: u32,
    calls: u64,
    event: RawEvent,
}

impl Item {
    /// No item (before the thread's first call, after a stretch).
    pub(super) fn none() -> Item {
        Item {
            call: NO_CALL,
            ..Item::default()
        }
    }
}

/// Whether `next` is `previous` with another request size alone, every other value equal.
fn request_changed(previous: &RawEvent, next: &RawEvent) -> bool {
    previous.result == next.result && others_equal(previous, next)
}

/// Whether `next` is `previous` with another result alone (the bytes a completion says
/// arrived), every other value equal.
fn result_changed(previous: &RawEvent, next: &RawEvent) -> bool {
    previous.request == next.request && others_equal(previous, next)
}

/// Whether every value but the request and the result is equal (times aside).
fn others_equal(previous: &RawEvent, next: &RawEvent) -> bool {
    previous.handle == next.handle
        && previous.aux == next.aux
        && previous.file == next.file
        && previous.context == next.context
        && previous.errno == next.errno
        && previous.flags == next.flags
        && previous.offset == next.offset
}

/// What changes between two occurrences of an item, if they are occurrences of one.
fn change(first: &Item, second: &Item) -> Option<u32> {
    if first.call != second.call {
        return None;
    }
    if repeats(&first.event, &second.event) == Some(0) {
        // An inner loop's count is a word each occurrence once a run has formed or the
        // counts differ: counts that agree twice rarely agree for long.
        return Some(if first.calls == second.calls && first.calls < 3 {
            changing::NOTHING
        } else {
            changing::CALLS
        });
    }
    if first.calls != 1 || second.calls != 1 || first.event.offset != second.event.offset {
        return None;
    }
    if resized(&first.event, &second.event) {
        Some(changing::SIZE)
    } else if request_changed(&first.event, &second.event) {
        Some(changing::REQUEST)
    } else if result_changed(&first.event, &second.event) {
        Some(changing::RESULT)
    } else {
        None
    }
}

/// Whether `event` may be the first call of an occurrence of `item`.
fn starts(item: &Item, call: u32, event: &RawEvent) -> bool {
    call == item.call
        && match item.changing {
            changing::SIZE => event.offset == item.event.offset && resized(&item.event, event),
            changing::REQUEST => request_changed(&item.event, event),
            changing::RESULT => result_changed(&item.event, event),
            _ => repeats(&item.event, event) == Some(0),
        }
}

impl ThreadState {
    /// Follows `event` into the thread's items; the period of the body whose third
    /// repetition it starts, if any (0 if none).
    #[inline(never)]
    pub(super) fn track_item(&mut self, call: u32, event: &RawEvent, repeatable: bool) -> usize {
        let history = &mut *self.history;
        if !repeatable {
            self.items_seen = 0;
            history.current_item = Item::none();
            return 0;
        }
        let current = &mut history.current_item;
        if current.call == call && repeats(&current.event, event) == Some(0) {
            current.calls += 1;
            return 0;
        }
        if current.call != NO_CALL {
            history.item_ring[self.items_seen % ITEM_RING] = *current;
            self.items_seen += 1;
        }
        *current = Item {
            call,
            changing: changing::NOTHING,
            calls: 1,
            event: *event,
        };
        let seen = self.items_seen;
        let at = |back: usize| (seen - back) % ITEM_RING;
        // Three whole repetitions, not two: a halo exchange's calls to one neighbour, then
        // to the next (LAMMPS: peers 2, 2, 1, 1, sizes each their own), repeat twice by
        // chance at the period of one exchange, and each false start cost a record.
        for period in 2..=MAX_STEPS_PERIOD.min(seen / 3) {
            if history.item_ring[at(period)].call != call {
                continue;
            }
            let mut changes = 0;
            let mut fits = true;
            for position in 0..period {
                let first = history.item_ring[at(3 * period - position)];
                let second = history.item_ring[at(2 * period - position)];
                let third = history.item_ring[at(period - position)];
                match (change(&first, &second), change(&second, &third)) {
                    (Some(earlier), Some(kind)) => {
                        // Values that agreed once by chance still change.
                        let kind = if kind == changing::NOTHING {
                            earlier
                        } else {
                            kind
                        };
                        changes += (kind != changing::NOTHING) as usize;
                        history.steps_body[position] = Item {
                            changing: kind,
                            ..third
                        };
                    }
                    _ => {
                        fits = false;
                        break;
                    }
                }
            }
            // A body of one call throughout (MPI_Wait after MPI_Wait, results changing)
            // is one call repeated, not a step: real HPCG's waits for a face, an edge, a
            // face, an edge, a corner made a stretch of one call at the end of every halo
            // exchange, each a steps record that also made the thread forget its recent
            // calls, so its CG iteration never folded at precision 0 (5.4 MB staged on two
            // ranks of 8 against 1.4 MB).
            let one_call = history.steps_body[..period]
                .iter()
                .all(|item| item.call == history.steps_body[0].call);
            if fits && changes > 0 && !one_call && starts(&history.steps_body[0], call, event) {
                return period;
            }
        }
        0
    }

    /// Begins a stretch of the body of `period` items found by [`Self::track_item`], with
    /// `event` as its first item's first call; false if the staging has no room.
    #[cold]
    pub(super) fn begin_steps(&mut self, period: usize, event: &RawEvent, gap: u64) -> bool {
        self.steps_period = period;
        self.steps_records = 0;
        if !self.open_steps_record(0, event, gap) {
            self.steps_period = 0;
            return false;
        }
        self.plain_events = 0;
        self.forget_recent();
        true
    }

    /// A new steps record whose first item is the body's `first`, its first occurrence
    /// begun with `event` (room for 64 words, each next record of the stretch twice as
    /// many, up to 4,096).
    fn open_steps_record(&mut self, first: usize, event: &RawEvent, gap: u64) -> bool {
        let period = self.steps_period;
        let room = 64usize << self.steps_records.min(6);
        let length = steps_record_bytes(period, room);
        let Some(body) = self.reserve(length) else {
            return false;
        };
        // SAFETY: `body` has room for the head, `period` items and `room` words, and is
        // 8-aligned; the chunk's unwritten bytes are zero.
        unsafe {
            body.cast::<RawStepsHead>().write(RawStepsHead {
                count: 0,
                period: period as u64,
                open_occurrence: 0,
                open_calls: 0,
                open_value: 0,
                reserved: 0,
            });
            for position in 0..period {
                let item = self.history.steps_body[(first + position) % period];
                body.add(RAW_STEPS_HEAD_BYTES + position * RAW_STEPS_ITEM_BYTES)
                    .cast::<RawStepsItem>()
                    .write(RawStepsItem {
                        call: item.call,
                        changing: item.changing,
                        calls: item.calls,
                        event: item.event,
                        run: RawRun::default(),
                    });
            }
            // The body's event is its first occurrence's: the stretch's first call.
            (*body.add(RAW_STEPS_HEAD_BYTES).cast::<RawStepsItem>()).event = *event;
        }
        self.publish(segment::kind::STEPS, period as u32, length);
        self.steps_record = body;
        self.steps_first = first;
        self.steps_room = room;
        self.steps_used = 0;
        self.steps_records = self.steps_records.saturating_add(1);
        self.steps_item = first;
        self.steps_calls = 0;
        self.add_call(event, gap);
        true
    }

    /// The open record's item of the occurrence in progress (its body turned to start at
    /// `steps_first`).
    fn record_item(&self) -> *mut RawStepsItem {
        let period = self.steps_period;
        let position = (self.steps_item + period - self.steps_first) % period;
        // SAFETY: an open steps record is a record of the current chunk, written by this
        // thread, with `period` items after its head; `position` < `period`.
        unsafe {
            self.steps_record
                .add(RAW_STEPS_HEAD_BYTES + position * RAW_STEPS_ITEM_BYTES)
                .cast::<RawStepsItem>()
        }
    }

    /// Adds a call to the occurrence in progress: its item's statistics, then the head's
    /// count of its calls (and its size).
    fn add_call(&mut self, event: &RawEvent, gap: u64) {
        self.steps_calls += 1;
        // SAFETY: the open record's item and head, written by this thread only.
        unsafe {
            let item = &mut *self.record_item();
            let count = item.run.count;
            add_repetition(&mut item.run, count, event.duration, gap);
            item.run.last_end = event.start.saturating_add(event.duration);
            item.run.count = count + 1;
            let head = &mut *self.steps_record.cast::<RawStepsHead>();
            head.open_value = match self.history.steps_body[self.steps_item].changing {
                changing::RESULT => event.result as u64,
                _ => event.request,
            };
            std::ptr::write_volatile(&mut head.open_calls, self.steps_calls);
            std::ptr::write_volatile(&mut head.open_occurrence, head.count);
        }
    }

    /// Closes the occurrence in progress: its word, if its item changes, then the count.
    fn commit_occurrence(&mut self) {
        let item = self.history.steps_body[self.steps_item];
        // SAFETY: as in `add_call`; the word goes to the room reserved after the items,
        // checked against `steps_room`.
        unsafe {
            let head = &mut *self.steps_record.cast::<RawStepsHead>();
            let word = match item.changing {
                changing::CALLS => Some(self.steps_calls),
                kind if changing::is_value(kind) => Some(head.open_value),
                _ => None,
            };
            if let Some(word) = word {
                let words = self
                    .steps_record
                    .add(steps_record_bytes(self.steps_period, 0))
                    .cast::<u64>();
                words.add(self.steps_used).write(word);
                self.steps_used += 1;
            }
            std::ptr::write_volatile(&mut head.count, head.count + 1);
        }
    }

    /// Takes `event` if it continues the occurrence in progress or starts the next item's.
    #[inline(never)]
    pub(super) fn steps_takes(&mut self, call: u32, event: &RawEvent, gap: u64) -> bool {
        if self.steps_record.is_null() {
            return false;
        }
        let period = self.steps_period;
        let item = self.history.steps_body[self.steps_item];
        // SAFETY: the open record's item, written by this thread only.
        let item_calls = unsafe { (*self.record_item()).run.count };
        // The item's histogram bins and an inner loop's count stay below u32::MAX.
        if item_calls >= u32::MAX as u64 - 1 {
            return false;
        }
        let more = match item.changing {
            changing::CALLS => true,
            changing::NOTHING => self.steps_calls < item.calls,
            _ => false,
        };
        if more && call == item.call && repeats(&item.event, event) == Some(0) {
            self.add_call(event, gap);
            return true;
        }
        let complete = match item.changing {
            changing::NOTHING => self.steps_calls == item.calls,
            _ => true,
        };
        let next_index = (self.steps_item + 1) % period;
        if !complete || !starts(&self.history.steps_body[next_index], call, event) {
            return false;
        }
        let needs_word = item.changing != changing::NOTHING;
        if needs_word && self.steps_used == self.steps_room {
            // Full: the occurrence stays the old record's open one, the next begins a new
            // record (its body turned to start there).
            self.steps_record = std::ptr::null_mut();
            return self.open_steps_record(next_index, event, gap);
        }
        self.commit_occurrence();
        self.steps_item = next_index;
        self.steps_calls = 0;
        self.add_call(event, gap);
        true
    }

    /// Ends the stretch, if any: the occurrence in progress stays in the record's head
    /// (an item of fixed count whose calls are all in is counted as complete).
    pub(crate) fn end_steps(&mut self) {
        if self.steps_period == 0 {
            return;
        }
        self.end_steps_stretch();
    }

    #[cold]
    fn end_steps_stretch(&mut self) {
        if !self.steps_record.is_null() {
            let item = self.history.steps_body[self.steps_item];
            if item.changing == changing::NOTHING && self.steps_calls == item.calls {
                self.commit_occurrence();
            }
        }
        self.steps_period = 0;
        self.steps_record = std::ptr::null_mut();
        self.items_seen = 0;
        self.history.current_item = Item::none();
        // A run after the stretch repeats an event record written after it.
        self.previous_call = NO_CALL;
        self.candidate_stride = None;
        self.plain_events = 0;
        self.forget_recent();
    }
}

/// Turns steps folding on for a precision level below 100 (`CAIRN_PRECISION`).
pub fn enable_for_precision(level: &[u8]) {
    let level = std::str::from_utf8(level)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok());
    if level.is_some_and(|level| level < 100) {
        STEPS.store(true, Ordering::Relaxed);
    }
}

//! Where a process's folded events go: its threads' stream encoders — on a thread of
//! their own for a large process, so that encoding (the column, the folder: most of a
//! build whose events do not fold, a million random reads) runs beside the reading,
//! resolving and numbering of the next events instead of after them. The encoders see
//! the same pushes in the same order either way (one channel, in order), so the trace is
//! the same bytes.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use cairn_compress::stats::Stats;
use cairn_compress::stream::{BlockPosition, StreamEncoder};
use cairn_model::{CallClass, Event};

/// Staging chunks (256 KiB each) from which a process's encoding gets a thread: below,
/// starting one costs more than it saves.
pub const PIPELINE_CHUNKS: usize = 4;

/// Values (events, a record's offsets) handed over at a time: few enough to keep memory
/// small and the encoder busy early, enough that the channel costs nothing per event.
const BATCH: usize = 4096;

/// One push into the encoder of thread slot `slot` (see [`StreamEncoder`]'s methods).
pub enum Push {
    Event(usize, Event, Option<CallClass>),
    Run {
        slot: usize,
        event: Event,
        class: Option<CallClass>,
        count: u64,
        stride: i64,
        last_end: u64,
        /// Its durations and gaps (boxed: an event push is the usual one, and small).
        statistics: Box<(Stats, Stats)>,
    },
    Offsets {
        slot: usize,
        body: Vec<BlockPosition>,
        offsets: Vec<i64>,
        sizes: Vec<u64>,
        count: u64,
    },
    Block {
        slot: usize,
        body: Vec<BlockPosition>,
        count: u64,
    },
}

impl Push {
    /// About how much encoding it asks for.
    fn weight(&self) -> usize {
        match self {
            Push::Offsets { offsets, .. } => offsets.len(),
            Push::Block { body, .. } => body.len(),
            _ => 1,
        }
    }
}

fn apply(encoders: &mut [StreamEncoder], push: Push) {
    match push {
        Push::Event(slot, event, class) => encoders[slot].push(&event, class),
        Push::Run {
            slot,
            event,
            class,
            count,
            stride,
            last_end,
            statistics,
        } => {
            let (duration, gap) = *statistics;
            encoders[slot].push_run(&event, class, count, stride, last_end, duration, gap)
        }
        Push::Offsets {
            slot,
            body,
            offsets,
            sizes,
            count,
        } => encoders[slot].push_offsets(&body, &offsets, &sizes, count),
        Push::Block { slot, body, count } => encoders[slot].push_block(&body, count),
    }
}

/// What goes to the encoding thread: the encoders first, then batches of pushes.
pub enum Handover {
    Encoders(Vec<StreamEncoder>),
    Batch(Vec<Push>),
}

/// The encoders, here or on their thread.
pub enum Sink {
    Here(Vec<StreamEncoder>),
    Piped {
        batch: Vec<Push>,
        weight: usize,
        sender: SyncSender<Handover>,
        encoding: JoinHandle<Vec<StreamEncoder>>,
    },
}

impl Sink {
    /// `piped`: the encoders go to a thread of their own (which owns all it uses: a panic
    /// on this side drops the sender, and it ends).
    pub fn new(encoders: Vec<StreamEncoder>, piped: bool) -> Sink {
        if !piped {
            return Sink::Here(encoders);
        }
        // Two batches in flight: the reader is at most that far ahead.
        let (sender, receiver) = sync_channel::<Handover>(2);
        let spawned = std::thread::Builder::new()
            .name("cairn-encode".into())
            .spawn(move || {
                let mut encoders = Vec::new();
                for handover in receiver {
                    match handover {
                        Handover::Encoders(given) => encoders = given,
                        Handover::Batch(batch) => {
                            for push in batch {
                                apply(&mut encoders, push);
                            }
                        }
                    }
                }
                encoders
            });
        // No thread (a process limit reached): encoded here, as a small process is.
        let Ok(encoding) = spawned else {
            return Sink::Here(encoders);
        };
        let _ = sender.send(Handover::Encoders(encoders));
        Sink::Piped {
            batch: Vec::new(),
            weight: 0,
            sender,
            encoding,
        }
    }

    pub fn push(&mut self, push: Push) {
        match self {
            Sink::Here(encoders) => apply(encoders, push),
            Sink::Piped {
                batch,
                weight,
                sender,
                ..
            } => {
                *weight += push.weight();
                batch.push(push);
                if *weight >= BATCH {
                    *weight = 0;
                    let full = std::mem::take(batch);
                    // The encoding thread only stops by a panic, which `finish` passes on.
                    let _ = sender.send(Handover::Batch(full));
                }
            }
        }
    }

    /// The encoders, every push applied. A panic of the encoding thread is this thread's.
    pub fn finish(self) -> Vec<StreamEncoder> {
        match self {
            Sink::Here(encoders) => encoders,
            Sink::Piped {
                batch,
                sender,
                encoding,
                ..
            } => {
                let _ = sender.send(Handover::Batch(batch));
                drop(sender);
                encoding
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads at shuffled offsets on two threads' streams, then a run, as a process's pushes.
    fn pushes() -> Vec<Push> {
        let mut pushes = Vec::new();
        let mut state = 12345u64;
        for index in 0..20_000u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let event = Event {
                call: 1,
                start: index * 1000,
                duration: 400 + state % 100,
                file: Some(0),
                handle: 3,
                offset: ((state >> 33) % 4096) as i64 * 4096,
                request: 4096,
                result: 4096,
                errno: 0,
                context: 1,
                aux: 0,
                flags: 0,
            };
            pushes.push(Push::Event(
                (index % 2) as usize,
                event,
                Some(CallClass::Read),
            ));
        }
        pushes
    }

    fn encoded(piped: bool) -> Vec<Vec<u8>> {
        let encoders = vec![StreamEncoder::default(), StreamEncoder::default()];
        let mut sink = Sink::new(encoders, piped);
        assert_eq!(matches!(sink, Sink::Piped { .. }), piped);
        for push in pushes() {
            sink.push(push);
        }
        sink.finish()
            .into_iter()
            .map(|encoder| encoder.finish().bytes().to_vec())
            .collect()
    }

    #[test]
    fn an_encoding_thread_makes_the_same_streams() {
        let here = encoded(false);
        assert_eq!(here.len(), 2);
        assert!(here.iter().all(|stream| stream.len() > 1000));
        assert_eq!(encoded(true), here);
    }
}

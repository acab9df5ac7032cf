//! Replaying a trace with histograms (a precision below 100): every rank expands every
//! rank's stream with the same seeded draws, so a receiver knows which messages the senders
//! will send it without talking to them (thesis 5.1.3).
//!
//! - The recorded receives are not re-issued (they were drawn apart from the sends they
//!   matched); instead each rank posts, at the start of each epoch (the stretch between two
//!   synchronisation points), a receive for every message sent to it in that epoch, and
//!   completes them all before the next synchronisation point.
//! - The synchronisation points are rank 0's collectives on the world (or a copy of it):
//!   every rank's k-th collective issues rank 0's k-th (its call, bytes and root), a rank
//!   with more skips the rest, a rank with fewer issues the rest at its end; so every rank
//!   makes the same collectives, with matching sizes, whatever loop counts it drew.
//! - Collective MPI-IO transfers become independent ones (their counts may differ between
//!   ranks).
//!
//! Nothing waits for something no rank does: a sender's messages of epoch e are posted for
//! by their receiver right after its e-th synchronisation point, which every rank reaches.

use std::collections::{HashMap, HashSet};
use std::ffi::c_int;

use cairn_model::{CallClass, Event, Layer};
use cairn_trace::{Stream, Trace};

use super::Thread;

/// A message a rank receives: (source, tag, bytes).
pub(super) type Message = (c_int, c_int, u64);

/// An expansion of one stream, as far as the replay has followed it.
type Expansion<'t> = Box<dyn Iterator<Item = Event> + Send + 't>;

/// What a rank knows of the whole job's drawn communication, found as the replay goes:
/// every rank's stream is expanded side by side, an epoch at a time, so memory is one
/// expansion per stream (a loop nest each), not the job's events.
pub(super) struct Plan<'t> {
    state: std::sync::Mutex<State<'t>>,
}

struct State<'t> {
    trace: &'t Trace,
    me: u32,
    scaling: Option<crate::scale::Scaling>,
    /// Per rank, the communicators (recorded handles) that are the world or a copy of it.
    world_wide: HashMap<u32, HashSet<u64>>,
    /// Rank 0's synchronisation points not issued yet, and the next one.
    points: Expansion<'t>,
    upcoming: Option<Event>,
    /// Every rank's streams, each followed up to the epoch the replay is in.
    senders: Vec<(u32, &'t Stream, Expansion<'t>)>,
}

/// Calls that send one message (the send half of a `Sendrecv` included).
pub(crate) fn sends(name: &str) -> bool {
    matches!(
        name,
        "MPI_Send"
            | "MPI_Ssend"
            | "MPI_Rsend"
            | "MPI_Bsend"
            | "MPI_Isend"
            | "MPI_Issend"
            | "MPI_Irsend"
            | "MPI_Ibsend"
            | "MPI_Start_send"
            | "MPI_Sendrecv"
            | "MPI_Sendrecv_replace"
    )
}

/// Calls that receive or look for a message: replaced by the derived receives.
pub(super) fn receives(name: &str) -> bool {
    matches!(
        name,
        "MPI_Recv"
            | "MPI_Irecv"
            | "MPI_Start_recv"
            | "MPI_Probe"
            | "MPI_Iprobe"
            | "MPI_Mprobe"
            | "MPI_Improbe"
            | "MPI_Mrecv"
            | "MPI_Imrecv"
            | "MPI_Sendrecv_received"
            | "MPI_Sendrecv_replace_received"
    )
}

/// Whether a call is a synchronisation point: a collective that does not make or free a
/// communicator (those are not re-issued).
pub(super) fn synchronises(trace: &Trace, event: &Event) -> bool {
    let info = &trace.calls[event.call as usize];
    info.class() == Some(CallClass::Collective)
        && !info.name.starts_with("MPI_Comm_")
        && !info.name.starts_with("MPI_Cart_")
}

impl<'t> Plan<'t> {
    /// `world_wide[rank]`: the rank's recorded communicators that are the world or a copy
    /// of it (the world, 0, always is); `scaling`: the trace is one made for another rank
    /// count (its events adjusted as each rank's replay adjusts them).
    pub(super) fn make(
        trace: &'t Trace,
        me: u32,
        scaling: Option<crate::scale::Scaling>,
        world_wide: HashMap<u32, HashSet<u64>>,
        seed: u64,
    ) -> Plan<'t> {
        let rank_of = |stream: &Stream| trace.processes[stream.process as usize].rank;
        let rank_zero: Vec<&'t Stream> = trace
            .streams
            .iter()
            .filter(|stream| rank_of(stream) == Some(0))
            .collect();
        let mut points: Expansion<'t> = Box::new(
            rank_zero
                .into_iter()
                .flat_map(move |stream| trace.events_seeded(stream, seed)),
        );
        let mut state = State {
            trace,
            me,
            scaling,
            world_wide,
            upcoming: None,
            points: Box::new(std::iter::empty()),
            senders: trace
                .streams
                .iter()
                .filter_map(|stream| {
                    let rank = rank_of(stream)?;
                    Some((
                        rank,
                        stream,
                        Box::new(trace.events_seeded(stream, seed)) as Expansion<'t>,
                    ))
                })
                .collect(),
        };
        state.upcoming = state.next_point(&mut points);
        state.points = points;
        Plan {
            state: std::sync::Mutex::new(state),
        }
    }
}

impl<'t> State<'t> {
    fn mpi_on_world(&self, rank: u32, event: &Event) -> bool {
        matches!(
            self.trace.calls[event.call as usize].layer(),
            Some(Layer::Mpi)
        ) && (event.handle == 0
            || self
                .world_wide
                .get(&rank)
                .is_some_and(|set| set.contains(&event.handle)))
    }

    /// Rank 0's next synchronisation point from `points`.
    fn next_point(&self, points: &mut Expansion<'t>) -> Option<Event> {
        points.find(|event| self.mpi_on_world(0, event) && synchronises(self.trace, event))
    }

    /// The messages sent to this rank in the epoch the replay enters: each rank's sends up
    /// to its next synchronisation point, or all it has left in the last epoch (a rank
    /// with more points than rank 0 sends the rest then).
    fn incoming(&mut self) -> Vec<Message> {
        let last = self.upcoming.is_none();
        let mut senders = std::mem::take(&mut self.senders);
        let mut messages = Vec::new();
        for (rank, stream, events) in &mut senders {
            for mut event in events.by_ref() {
                if let Some(scaling) = self.scaling {
                    scaling.adjust(self.trace, stream, &mut event);
                }
                if !self.mpi_on_world(*rank, &event) {
                    continue;
                }
                let name = self.trace.calls[event.call as usize].name.as_str();
                if synchronises(self.trace, &event) {
                    if !last {
                        break;
                    }
                } else if sends(name) && event.aux as u32 == self.me {
                    messages.push((
                        *rank as c_int,
                        (event.aux >> 32) as u32 as c_int,
                        event.request,
                    ));
                }
            }
        }
        self.senders = senders;
        messages
    }

    /// Rank 0's next synchronisation point, taken.
    fn take_point(&mut self) -> Option<Event> {
        let point = self.upcoming.take()?;
        let mut points = std::mem::replace(&mut self.points, Box::new(std::iter::empty()));
        self.upcoming = self.next_point(&mut points);
        self.points = points;
        Some(point)
    }
}

impl Thread<'_, '_> {
    /// Posts the receives of the epoch this thread is in (derived mode).
    pub(super) fn post_epoch(&mut self) {
        let Some(plan) = self.job.derived.as_ref() else {
            return;
        };
        let incoming = plan.state.lock().expect("not poisoned").incoming();
        let world = self.job.mpi.constants.world;
        let posted: Vec<_> = incoming
            .iter()
            .map(|(source, tag, bytes)| self.start_receive(*source, *tag, *bytes, world))
            .collect();
        self.derived.extend(posted);
    }

    /// Completes the epoch's receives, then issues rank 0's next synchronisation point and
    /// posts the next epoch's receives. `false` when rank 0's points are all issued.
    pub(super) fn synchronise(&mut self) -> bool {
        let Some(point) = self
            .job
            .derived
            .as_ref()
            .and_then(|plan| plan.state.lock().expect("not poisoned").take_point())
        else {
            return false;
        };
        self.complete_receives();
        let name = self.job.trace.calls[point.call as usize].name.clone();
        let bytes = super::count(point.request);
        let world = self.job.communicator(0).expect("the world");
        self.collective(
            &name,
            &point,
            bytes,
            (point.aux as u32 as i32).max(0),
            world,
        );
        self.synchronised += 1;
        self.post_epoch();
        true
    }

    /// The end of the rank's replay: the synchronisation points it did not reach, then the
    /// last epoch's receives.
    pub(super) fn finish_epochs(&mut self) {
        while self.synchronise() {}
        self.complete_receives();
    }
}

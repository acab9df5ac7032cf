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

use std::ffi::c_int;

use cairn_model::{CallClass, Event, Layer};
use cairn_trace::Trace;

use super::Thread;

/// A message a rank receives: (source, tag, bytes).
pub(super) type Message = (c_int, c_int, u64);

/// What a rank knows of the whole job's drawn communication.
#[derive(Default)]
pub(super) struct Plan {
    /// Rank 0's synchronisation points: the recorded events, in order.
    pub(super) points: Vec<Event>,
    /// This rank's incoming messages, per epoch (`points.len() + 1` of them).
    pub(super) incoming: Vec<Vec<Message>>,
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

impl Plan {
    /// `world_wide(rank, handle)`: whether rank's recorded communicator is the world or a
    /// copy of it.
    /// `scaling`: the trace is one made for another rank count (its events adjusted as
    /// each rank's replay adjusts them).
    pub(super) fn make(
        trace: &Trace,
        me: u32,
        scaling: Option<crate::scale::Scaling>,
        world_wide: impl Fn(u32, u64) -> bool,
    ) -> Plan {
        let mut plan = Plan::default();
        let mpi_call =
            |event: &Event| matches!(trace.calls[event.call as usize].layer(), Some(Layer::Mpi));
        for stream in &trace.streams {
            if trace.processes[stream.process as usize].rank == Some(0) {
                trace.expand(stream, |event| {
                    if mpi_call(&event)
                        && world_wide(0, event.handle)
                        && synchronises(trace, &event)
                    {
                        plan.points.push(event);
                    }
                });
            }
        }
        let last = plan.points.len();
        plan.incoming = vec![Vec::new(); last + 1];
        for stream in &trace.streams {
            let Some(rank) = trace.processes[stream.process as usize].rank else {
                continue;
            };
            let mut epoch = 0;
            trace.expand(stream, |mut event| {
                if let Some(scaling) = scaling {
                    scaling.adjust(trace, stream, &mut event);
                }
                if !mpi_call(&event) || !world_wide(rank, event.handle) {
                    return;
                }
                let name = trace.calls[event.call as usize].name.as_str();
                if synchronises(trace, &event) {
                    epoch = (epoch + 1).min(last);
                } else if sends(name) && event.aux as u32 == me {
                    plan.incoming[epoch].push((
                        rank as c_int,
                        (event.aux >> 32) as u32 as c_int,
                        event.request,
                    ));
                }
            });
        }
        plan
    }
}

impl Thread<'_> {
    /// Posts the receives of the epoch this thread is in (derived mode).
    pub(super) fn post_epoch(&mut self) {
        let Some(plan) = self.job.derived.as_ref() else {
            return;
        };
        let epoch = self.synchronised.min(plan.points.len());
        let world = self.job.mpi.constants.world;
        let posted: Vec<_> = plan.incoming[epoch]
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
            .and_then(|plan| plan.points.get(self.synchronised))
            .cloned()
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

//! Collectives on the world or a communicator made again, blocking and non-blocking, all
//! in bytes. The v- and
//! w-forms' counts: each rank's own from its trace, the others' exchanged through PMPI;
//! where the trace keeps a total over the peers (all-to-all, reduce-scatter), spread
//! evenly.

use std::ffi::c_int;

use cairn_model::Event;

use super::thread::packed_ints;
use super::{displacements, rank_of, Pending, Thread, H};
use crate::posix::Moved;

impl Thread<'_, '_> {
    pub(super) fn collective(
        &mut self,
        name: &str,
        event: &Event,
        bytes: c_int,
        root: c_int,
        world: H,
    ) -> Option<Moved> {
        let mpi = self.job.mpi;
        let (f, c) = (&mpi.functions, &mpi.constants);
        // The communicator's, a sub-communicator's being smaller than the world.
        let size = self.comm_size(world);
        let each = bytes as usize;
        let all = each * size as usize;
        let byte = c.byte;
        // SAFETY (every block below): send and receive buffers of at least the byte counts
        // the call is given (per rank times the world's size where it gathers or scatters),
        // count arrays of one int per rank, the library's own handles.
        match name {
            "MPI_Barrier" => unsafe {
                (f.barrier)(world);
            },
            "MPI_Bcast" => {
                let buffer = self.landing(each);
                unsafe { (f.bcast)(buffer, bytes, byte, root, world) };
            }
            "MPI_Reduce" => {
                let (out, into) = (self.payload(each), self.landing(each));
                unsafe { (f.reduce)(out, into, bytes, byte, c.bor, root, world) };
            }
            "MPI_Allreduce" | "MPI_Scan" | "MPI_Exscan" => {
                let (out, into) = (self.payload(each), self.landing(each));
                let call = match name {
                    "MPI_Allreduce" => f.allreduce,
                    "MPI_Scan" => f.scan,
                    _ => f.exscan,
                };
                unsafe { call(out, into, bytes, byte, c.bor, world) };
            }
            "MPI_Reduce_scatter_block" => {
                let (out, into) = (self.payload(all), self.landing(each));
                unsafe { (f.reduce_scatter_block)(out, into, bytes, byte, c.bor, world) };
            }
            "MPI_Gather" => {
                let (out, into) = (self.payload(each), self.landing(all));
                unsafe { (f.gather)(out, bytes, byte, into, bytes, byte, root, world) };
            }
            "MPI_Scatter" => {
                let (out, into) = (self.payload(all), self.landing(each));
                unsafe { (f.scatter)(out, bytes, byte, into, bytes, byte, root, world) };
            }
            "MPI_Allgather" => {
                let (out, into) = (self.payload(each), self.landing(all));
                unsafe { (f.allgather)(out, bytes, byte, into, bytes, byte, world) };
            }
            "MPI_Alltoall" => {
                let (out, into) = (self.payload(all), self.landing(all));
                unsafe { (f.alltoall)(out, bytes, byte, into, bytes, byte, world) };
            }
            "MPI_Gatherv" | "MPI_Allgatherv" | "MPI_Scatterv" => {
                // Each rank's own count is in its trace; the root (or everyone) learns the
                // others' through PMPI, unseen.
                let mut counts = self.counts_of(bytes, root, name == "MPI_Allgatherv", world);
                let (displacements, total) = displacements(&counts);
                let counts_pointer: H = counts.as_mut_ptr().cast();
                let displacements_pointer: H = displacements.as_ptr().cast_mut().cast();
                match name {
                    "MPI_Gatherv" => {
                        let (out, into) = (self.payload(each), self.landing(total));
                        unsafe {
                            (f.gatherv)(
                                out,
                                bytes,
                                byte,
                                into,
                                counts_pointer,
                                displacements_pointer,
                                byte,
                                root,
                                world,
                            )
                        };
                    }
                    "MPI_Allgatherv" => {
                        let (out, into) = (self.payload(each), self.landing(total));
                        unsafe {
                            (f.allgatherv)(
                                out,
                                bytes,
                                byte,
                                into,
                                counts_pointer,
                                displacements_pointer,
                                byte,
                                world,
                            )
                        };
                    }
                    _ => {
                        let (out, into) = (self.payload(total), self.landing(each));
                        unsafe {
                            (f.scatterv)(
                                out,
                                counts_pointer,
                                displacements_pointer,
                                byte,
                                into,
                                bytes,
                                byte,
                                root,
                                world,
                            )
                        };
                    }
                }
            }
            "MPI_Alltoallv" | "MPI_Reduce_scatter" => {
                // The trace keeps the total over the peers: spread evenly.
                let mut send_counts = spread(event.request, size as usize);
                if name == "MPI_Reduce_scatter" {
                    let mine = send_counts[rank_of(mpi, world) as usize] as usize;
                    let (out, into) = (self.payload(event.request as usize), self.landing(mine));
                    unsafe {
                        (f.reduce_scatter)(
                            out,
                            into,
                            send_counts.as_mut_ptr().cast(),
                            byte,
                            c.bor,
                            world,
                        )
                    };
                } else {
                    let mut receive_counts = self.received_counts(&send_counts, world);
                    let (send_at, send_total) = displacements(&send_counts);
                    let (receive_at, receive_total) = displacements(&receive_counts);
                    let (out, into) = (self.payload(send_total), self.landing(receive_total));
                    unsafe {
                        (f.alltoallv)(
                            out,
                            send_counts.as_mut_ptr().cast(),
                            send_at.as_ptr().cast_mut().cast(),
                            byte,
                            into,
                            receive_counts.as_mut_ptr().cast(),
                            receive_at.as_ptr().cast_mut().cast(),
                            byte,
                            world,
                        )
                    };
                }
            }
            "MPI_Alltoallw" => {
                // The trace keeps the total over the peers, in bytes: spread evenly, every
                // type MPI_BYTE (displacements in bytes, which they are then).
                let sends = spread(event.request, size as usize);
                let receives = self.received_counts(&sends, world);
                let (send_at, send_total) = displacements(&sends);
                let (receive_at, receive_total) = displacements(&receives);
                let mut types = self.request_array(&vec![byte as usize as u64; size as usize]);
                let (out, into) = (self.payload(send_total), self.landing(receive_total));
                unsafe {
                    (f.alltoallw)(
                        out,
                        sends.as_ptr().cast_mut().cast(),
                        send_at.as_ptr().cast_mut().cast(),
                        types.as_mut_ptr().cast(),
                        into,
                        receives.as_ptr().cast_mut().cast(),
                        receive_at.as_ptr().cast_mut().cast(),
                        types.as_mut_ptr().cast(),
                        world,
                    )
                };
            }
            _ if name.starts_with("MPI_I") => {
                return self.non_blocking_collective(name, event, bytes, root, world)
            }
            _ => return None,
        }
        Some(Moved::Written(event.request))
    }

    /// A non-blocking collective: its send and receive areas live in one buffer that the
    /// pending request owns (sending area first).
    fn non_blocking_collective(
        &mut self,
        name: &str,
        event: &Event,
        bytes: c_int,
        root: c_int,
        world: H,
    ) -> Option<Moved> {
        let mpi = self.job.mpi;
        let (f, c) = (&mpi.functions, &mpi.constants);
        let byte = c.byte;
        let each = bytes as usize;
        let all = each * self.comm_size(world) as usize;
        let (send, receive) = match name {
            "MPI_Ibarrier" => (0, 0),
            "MPI_Ibcast" => (0, each),
            "MPI_Iallreduce" | "MPI_Ireduce" => (each, each),
            "MPI_Iallgather" | "MPI_Igather" => (each, all),
            "MPI_Ialltoall" => (all, all),
            "MPI_Iscatter" => (all, each),
            "MPI_Iscan" | "MPI_Iexscan" => (each, each),
            "MPI_Ireduce_scatter_block" => (all, each),
            _ => return self.non_blocking_v_form(name, event, bytes, root, world),
        };
        let mut pending = Pending {
            request: 0,
            buffer: vec![b'c'; send + receive],
            receive: false,
            file: None,
            arrays: Vec::new(),
        };
        let out: H = pending.buffer.as_mut_ptr().cast();
        // SAFETY: `into` is within the buffer (at its end when nothing is received).
        let into: H = unsafe { pending.buffer.as_mut_ptr().add(send) }.cast();
        let request: H = (&raw mut pending.request).cast();
        // SAFETY: areas of the stated sizes in a buffer the pending request owns until it
        // completes, the library's own handles, a request slot of ours.
        unsafe {
            match name {
                "MPI_Ibarrier" => (f.ibarrier)(world, request),
                "MPI_Ibcast" => (f.ibcast)(into, bytes, byte, root, world, request),
                "MPI_Iallreduce" => (f.iallreduce)(out, into, bytes, byte, c.bor, world, request),
                "MPI_Ireduce" => (f.ireduce)(out, into, bytes, byte, c.bor, root, world, request),
                "MPI_Iallgather" => {
                    (f.iallgather)(out, bytes, byte, into, bytes, byte, world, request)
                }
                "MPI_Igather" => {
                    (f.igather)(out, bytes, byte, into, bytes, byte, root, world, request)
                }
                "MPI_Ialltoall" => {
                    (f.ialltoall)(out, bytes, byte, into, bytes, byte, world, request)
                }
                "MPI_Iscan" => (f.iscan)(out, into, bytes, byte, c.bor, world, request),
                "MPI_Iexscan" => (f.iexscan)(out, into, bytes, byte, c.bor, world, request),
                "MPI_Ireduce_scatter_block" => {
                    (f.ireduce_scatter_block)(out, into, bytes, byte, c.bor, world, request)
                }
                _ => (f.iscatter)(out, bytes, byte, into, bytes, byte, root, world, request),
            }
        };
        self.pending.push_back(pending);
        Some(Moved::Written(event.request))
    }

    /// Each rank's count of a v-form, its own being `bytes`: gathered at `root`, or at
    /// every rank when `everyone`, through PMPI (unseen by a tracer).
    fn counts_of(&self, bytes: c_int, root: c_int, everyone: bool, world: H) -> Vec<c_int> {
        let (f, c) = (&self.job.mpi.functions, &self.job.mpi.constants);
        let mut counts = vec![0 as c_int; self.comm_size(world) as usize];
        let mine: H = (&raw const bytes).cast_mut().cast();
        let into: H = counts.as_mut_ptr().cast();
        // SAFETY: one int sent, one per rank received, the library's handles.
        unsafe {
            if everyone {
                (f.pmpi_allgather)(mine, 1, c.int, into, 1, c.int, world);
            } else {
                (f.pmpi_gather)(mine, 1, c.int, into, 1, c.int, root, world);
            }
        }
        counts
    }

    /// What each rank receives of an all-to-all whose sends are `sends`, through PMPI.
    fn received_counts(&self, sends: &[c_int], world: H) -> Vec<c_int> {
        let (f, c) = (&self.job.mpi.functions, &self.job.mpi.constants);
        let mut receives = vec![0 as c_int; self.comm_size(world) as usize];
        // SAFETY: one int per rank each way, the library's handles.
        unsafe {
            (f.pmpi_alltoall)(
                sends.as_ptr().cast_mut().cast(),
                1,
                c.int,
                receives.as_mut_ptr().cast(),
                1,
                c.int,
                world,
            )
        };
        receives
    }

    /// The non-blocking v- and w-forms: counts exchanged when posted (every rank posts its
    /// collectives in the same order), the data areas and the count, displacement and
    /// datatype arrays owned by the pending request until it completes.
    fn non_blocking_v_form(
        &mut self,
        name: &str,
        event: &Event,
        bytes: c_int,
        root: c_int,
        world: H,
    ) -> Option<Moved> {
        let mpi = self.job.mpi;
        let (f, c) = (&mpi.functions, &mpi.constants);
        let byte = c.byte;
        let each = bytes as usize;
        let size = self.comm_size(world) as usize;
        // (send counts, receive counts) per rank, where the form has them.
        let (sends, receives): (Vec<c_int>, Vec<c_int>) = match name {
            "MPI_Igatherv" | "MPI_Iscatterv" => {
                let counts = self.counts_of(bytes, root, false, world);
                if name == "MPI_Igatherv" {
                    (Vec::new(), counts)
                } else {
                    (counts, Vec::new())
                }
            }
            "MPI_Iallgatherv" => (Vec::new(), self.counts_of(bytes, root, true, world)),
            "MPI_Ialltoallv" | "MPI_Ialltoallw" => {
                let sends = spread(event.request, size);
                let receives = self.received_counts(&sends, world);
                (sends, receives)
            }
            "MPI_Ireduce_scatter" => (spread(event.request, size), Vec::new()),
            _ => return None,
        };
        let total = |counts: &[c_int]| counts.iter().map(|n| *n as usize).sum::<usize>();
        let (send, receive) = match name {
            "MPI_Igatherv" | "MPI_Iallgatherv" => (each, total(&receives)),
            "MPI_Iscatterv" => (total(&sends), each),
            "MPI_Ireduce_scatter" => (total(&sends), sends[rank_of(mpi, world) as usize] as usize),
            _ => (total(&sends), total(&receives)),
        };
        let mut pending = Pending {
            request: 0,
            buffer: vec![b'c'; send + receive],
            receive: false,
            file: None,
            arrays: Vec::new(),
        };
        // Arrays laid out as the library reads them: ints, or datatype handles.
        let ints = |values: &[c_int]| packed_ints(values.iter().map(|value| *value as u32));
        let (send_at, _) = displacements(&sends);
        let (receive_at, _) = displacements(&receives);
        let types = self.request_array(&vec![byte as usize as u64; size]);
        pending.arrays = vec![
            ints(&sends),
            ints(&send_at),
            ints(&receives),
            ints(&receive_at),
            types,
        ];
        let array = |pending: &mut Pending, index: usize| -> H {
            pending.arrays[index].as_mut_ptr().cast()
        };
        let (send_counts, send_displacements) = (array(&mut pending, 0), array(&mut pending, 1));
        let (receive_counts, receive_displacements) =
            (array(&mut pending, 2), array(&mut pending, 3));
        let types = array(&mut pending, 4);
        let out: H = pending.buffer.as_mut_ptr().cast();
        // SAFETY: `into` is within the buffer (at its end when nothing is received).
        let into: H = unsafe { pending.buffer.as_mut_ptr().add(send) }.cast();
        let request: H = (&raw mut pending.request).cast();
        // SAFETY: areas and arrays of the stated sizes, owned by the pending request until
        // it completes; the library's own handles; a request slot of ours.
        unsafe {
            match name {
                "MPI_Igatherv" => (f.igatherv)(
                    out,
                    bytes,
                    byte,
                    into,
                    receive_counts,
                    receive_displacements,
                    byte,
                    root,
                    world,
                    request,
                ),
                "MPI_Iscatterv" => (f.iscatterv)(
                    out,
                    send_counts,
                    send_displacements,
                    byte,
                    into,
                    bytes,
                    byte,
                    root,
                    world,
                    request,
                ),
                "MPI_Iallgatherv" => (f.iallgatherv)(
                    out,
                    bytes,
                    byte,
                    into,
                    receive_counts,
                    receive_displacements,
                    byte,
                    world,
                    request,
                ),
                "MPI_Ialltoallv" => (f.ialltoallv)(
                    out,
                    send_counts,
                    send_displacements,
                    byte,
                    into,
                    receive_counts,
                    receive_displacements,
                    byte,
                    world,
                    request,
                ),
                // Displacements in bytes, which they are here (every type is MPI_BYTE).
                "MPI_Ialltoallw" => (f.ialltoallw)(
                    out,
                    send_counts,
                    send_displacements,
                    types,
                    into,
                    receive_counts,
                    receive_displacements,
                    types,
                    world,
                    request,
                ),
                _ => (f.ireduce_scatter)(out, into, send_counts, byte, c.bor, world, request),
            }
        };
        self.pending.push_back(pending);
        Some(Moved::Written(event.request))
    }
}

/// `total` spread over `ranks` as evenly as ints allow.
fn spread(total: u64, ranks: usize) -> Vec<c_int> {
    let ranks = ranks.max(1) as u64;
    (0..ranks)
        .map(|peer| (total / ranks + u64::from(peer < total % ranks)) as c_int)
        .collect()
}

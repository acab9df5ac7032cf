//! Collectives on `MPI_COMM_WORLD`, blocking and non-blocking, all in bytes.

use std::ffi::c_int;

use cairn_model::Event;

use super::{displacements, rank_of, Pending, Thread, H};
use crate::posix::Moved;

impl Thread<'_> {
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
        let size = self.job.size;
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
                let mut counts = vec![0 as c_int; size as usize];
                let mine = bytes;
                unsafe {
                    if name == "MPI_Allgatherv" {
                        (f.pmpi_allgather)(
                            (&raw const mine).cast_mut().cast(),
                            1,
                            c.int,
                            counts.as_mut_ptr().cast(),
                            1,
                            c.int,
                            world,
                        );
                    } else {
                        (f.pmpi_gather)(
                            (&raw const mine).cast_mut().cast(),
                            1,
                            c.int,
                            counts.as_mut_ptr().cast(),
                            1,
                            c.int,
                            root,
                            world,
                        );
                    }
                }
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
                let even = |total: u64| -> Vec<c_int> {
                    (0..size as u64)
                        .map(|peer| {
                            (total / size as u64 + u64::from(peer < total % size as u64)) as c_int
                        })
                        .collect()
                };
                let mut send_counts = even(event.request);
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
                    let mut receive_counts = vec![0 as c_int; size as usize];
                    unsafe {
                        (f.pmpi_alltoall)(
                            send_counts.as_mut_ptr().cast(),
                            1,
                            c.int,
                            receive_counts.as_mut_ptr().cast(),
                            1,
                            c.int,
                            world,
                        );
                    }
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
        let all = each * self.job.size as usize;
        let (send, receive) = match name {
            "MPI_Ibarrier" => (0, 0),
            "MPI_Ibcast" => (0, each),
            "MPI_Iallreduce" | "MPI_Ireduce" => (each, each),
            "MPI_Iallgather" | "MPI_Igather" => (each, all),
            "MPI_Ialltoall" => (all, all),
            "MPI_Iscatter" => (all, each),
            _ => return None,
        };
        let mut pending = Pending {
            request: 0,
            buffer: vec![b'c'; send + receive],
            receive: false,
            file: false,
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
                _ => (f.iscatter)(out, bytes, byte, into, bytes, byte, root, world, request),
            }
        };
        self.pending.push_back(pending);
        Some(Moved::Written(event.request))
    }
}

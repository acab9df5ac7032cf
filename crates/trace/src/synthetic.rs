//! Generated per-rank traces of an SPMD program, to measure the merge at scales this machine
//! cannot run (`bench/merge_scaling.sh`, the merge tests).
//!
//! Each rank's trace is what `cairn run` builds for one rank of an IOR-like program with a
//! halo exchange: a shared file written in one block per rank per segment (`pwrite64` at
//! `(segment · ranks + rank) · block + transfer · t`), a file of its own (`part-<rank>.dat`,
//! sequential `write`s), and per segment an `MPI_Isend` to `rank + 1`, an `MPI_Irecv` from
//! `rank − 1` (both wrapping), an `MPI_Waitall` and an `MPI_Allreduce`. As on a real
//! machine, ranks are launched up to 3 ms apart, then keep step: each segment follows a
//! compute phase and ends in the `MPI_Allreduce`, which returns on every rank at the same
//! moment (a rank that arrives early waits in it). Durations and gaps vary pseudo-randomly
//! per rank (seeded by the rank); everything the trace keeps exactly follows from the
//! parameters.

use cairn_compress::stream::StreamEncoder;
use cairn_model::{event_flags, Call, Event};

use crate::{CallInfo, Context, Ending, FileInfo, Meta, Process, Stream, Trace};

/// The generated program's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Spmd {
    pub ranks: u32,
    pub segments: u32,
    pub transfers: u32,
    pub transfer_size: u64,
    /// Bytes per halo message.
    pub message_size: u64,
}

impl Spmd {
    /// The program the merge benchmark and the example generator use: 8 segments of 16
    /// transfers of 4 KiB, halo messages of 8 KiB.
    pub fn benchmark(ranks: u32) -> Spmd {
        Spmd {
            ranks,
            segments: 8,
            transfers: 16,
            transfer_size: 4096,
            message_size: 8192,
        }
    }

    pub fn block_size(&self) -> u64 {
        self.transfer_size * self.transfers as u64
    }

    /// Events each rank makes: two opens, two closes, and per segment the transfers to
    /// both files and the four MPI calls.
    pub fn events_per_rank(&self) -> u64 {
        4 + self.segments as u64 * (2 * self.transfers as u64 + 4)
    }
}

const CALLS: [Call; 8] = [
    Call::openat,
    Call::pwrite64,
    Call::write,
    Call::close,
    Call::MPI_Isend,
    Call::MPI_Irecv,
    Call::MPI_Waitall,
    Call::MPI_Allreduce,
];

/// The comm handle as a trace numbers it (see `collect::NUMBERED_HANDLE`).
const WORLD: u64 = crate::collect::NUMBERED_HANDLE | 1;

/// When `MPI_Init` returns on every rank, ns after the first rank's launch.
const INITIALISED: u64 = 5_000_000;
/// Each segment starts this long after the previous one (a compute phase, then I/O).
const SEGMENT_PERIOD: u64 = 100_000_000;
/// The `MPI_Allreduce` that ends a segment returns this long after the segment started
/// (every rank's I/O and halo exchange take well under 1 ms).
const SEGMENT_IO: u64 = 2_000_000;

/// A small deterministic generator (xorshift), so traces are the same on every run.
struct Jitter(u64);

impl Jitter {
    fn next(&mut self, range: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % range.max(1)
    }
}

/// The trace `cairn run` would build for `rank` alone.
pub fn rank_trace(program: &Spmd, rank: u32) -> Trace {
    let ranks = program.ranks.max(1);
    let mut jitter = Jitter(0x9e37_79b9_7f4a_7c15 ^ (rank as u64 + 1).wrapping_mul(0x2545_f491));
    // This rank's launch, after the first rank's: its clock reads the job's times minus it.
    let launch = jitter.next(3_000_000);
    let local = |job_time: u64| job_time - launch;
    let mut encoder = StreamEncoder::default();
    let mut time = local(INITIALISED) + jitter.next(50_000);
    let call_index = |call: Call| CALLS.iter().position(|c| *c == call).unwrap() as u16;
    // `not_before`: the end of a compute phase; `returns_at`: when a collective returns.
    let mut push = |call: Call,
                    context: u32,
                    file: Option<u32>,
                    fields: (u64, i64, u64, u64),
                    (not_before, returns_at): (u64, Option<u64>)| {
        let (handle, offset, request, aux) = fields;
        if not_before > time {
            time = not_before + jitter.next(50_000);
        }
        time += 2_000 + jitter.next(1_000);
        let duration = match returns_at {
            Some(end) => end - time,
            None => 5_000 + jitter.next(4_000),
        };
        let explicit = if call == Call::pwrite64 {
            event_flags::EXPLICIT_OFFSET
        } else {
            0
        };
        let event = Event {
            call: call_index(call),
            start: time,
            duration,
            file,
            handle,
            offset,
            request,
            result: request as i64,
            errno: 0,
            context,
            aux,
            flags: explicit,
        };
        time += duration;
        encoder.push(&event, Some(call.class()));
    };
    let (shared, own) = (Some(0), Some(1));
    let (shared_fd, own_fd) = (3u64, 4u64);
    let create = 0o1101; // O_WRONLY | O_CREAT | O_TRUNC
    push(Call::openat, 1, shared, (shared_fd, -1, 0, 0o1), (0, None));
    push(Call::openat, 2, own, (own_fd, -1, 0, create), (0, None));
    let peer = |peer: u32, tag: u64| (tag << 32) | peer as u64;
    let mut own_position = 0i64;
    for segment in 0..program.segments as u64 {
        let segment_start = INITIALISED + (segment + 1) * SEGMENT_PERIOD;
        let computed = (local(segment_start), None);
        let block_start = (segment * ranks as u64 + rank as u64) * program.block_size();
        for transfer in 0..program.transfers as u64 {
            let offset = block_start + transfer * program.transfer_size;
            let fields = (shared_fd, offset as i64, program.transfer_size, 0);
            let timing = if transfer == 0 { computed } else { (0, None) };
            push(Call::pwrite64, 3, shared, fields, timing);
        }
        for _ in 0..program.transfers {
            let fields = (own_fd, own_position, program.transfer_size, 0);
            push(Call::write, 4, own, fields, (0, None));
            own_position += program.transfer_size as i64;
        }
        let right = (rank + 1) % ranks;
        let left = (rank + ranks - 1) % ranks;
        push(
            Call::MPI_Isend,
            5,
            None,
            (WORLD, -1, program.message_size, peer(right, 7)),
            (0, None),
        );
        push(
            Call::MPI_Irecv,
            6,
            None,
            (WORLD, -1, program.message_size, peer(left, 7)),
            (0, None),
        );
        push(Call::MPI_Waitall, 7, None, (0, -1, 0, 2), (0, None));
        let all = peer(u32::MAX, 0);
        let returns_at = local(segment_start + SEGMENT_IO);
        let fields = (WORLD, -1, 8, all);
        push(Call::MPI_Allreduce, 8, None, fields, (0, Some(returns_at)));
    }
    push(Call::close, 9, shared, (shared_fd, -1, 0, 0), (0, None));
    push(Call::close, 9, own, (own_fd, -1, 0, 0), (0, None));
    let events = encoder.finish();
    let end = events.last_end + 10_000;
    let stream = Stream::new(0, 50_000 + rank, events, vec![0, 1]);
    Trace {
        meta: Meta {
            writer: "cairn (generated)".into(),
            command: vec![b"spmd".to_vec()],
            exit_status: Some(0),
            start_realtime: 1_800_000_000_000_000_000 + launch,
            duration: end,
            process_time_step: 1,
        },
        calls: CALLS
            .iter()
            .map(|call| CallInfo::new(call.name()))
            .collect(),
        processes: vec![Process {
            pid: 50_000 + rank,
            parent_pid: 40_000,
            parent: None,
            exec_of: None,
            forked: false,
            executable: b"/usr/bin/spmd".to_vec(),
            arguments: vec![b"spmd".to_vec()],
            working_directory: b"/scratch".to_vec(),
            hostname: format!("node{:04}", rank / 64).into_bytes(),
            start: 0,
            end,
            main_start: Some(500_000),
            ending: Ending::Exited,
            threads: 1,
            untraced_calls: 0,
            rank: Some(rank),
            runtime_events_dropped: 0,
            runtime_bytes_dropped: [0; 2],
            kernel_io: None,
            unrecorded: None,
            group_times: false,
            group_counters: false,
        }],
        files: vec![
            FileInfo {
                path: b"/scratch/shared.dat".to_vec(),
                noise: None,
            },
            FileInfo {
                path: format!("/scratch/part-{rank}.dat").into_bytes(),
                noise: None,
            },
        ],
        modules: vec![b"/usr/bin/spmd".to_vec()],
        contexts: (0..9u64)
            .map(|site| Context {
                frames: vec![(Some(0), 0x1100 + 0x40 * site), (Some(0), 0x2000)],
            })
            .collect(),
        streams: vec![stream],
        diagnostics: Vec::new(),
    }
}

//! What the kernel counted against what the trace holds: every process image's read- and
//! write-like system calls (`/proc/self/io`, read by the tracer when the image starts,
//! as it takes each chunk and at its end) compared with the bytes of its traced POSIX and
//! stdio reads and writes — runtime noise included, MPI-IO's own POSIX sub-calls counted
//! once. What the kernel saw and the trace did not went through calls cairn does not hook
//! (`copy_file_range`, `sendfile`, raw `syscall()`, `io_uring`'s read and write
//! syscalls, statically linked code): no peer reports it.
//!
//! Tolerances are the reader's: the kernel also counts the tracer's own small reads of
//! `/proc` (about 4 KiB a process), the dynamic loader's reads of the libraries a program
//! opens with `dlopen` (an Open MPI rank's plugins: about 80 KiB), and stdio's read-ahead
//! beyond what the program consumed. The MPI runtime's calls counted but not kept count as
//! seen.

use cairn_model::{CallClass, Layer};
use cairn_trace::walk::{self, Occurrence, Visitor};
use cairn_trace::Trace;
use serde::Serialize;

/// A process image's kernel counters and how much of them the trace accounts for.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct KernelIoSummary {
    /// Bytes and calls of every read- and write-like system call, as the kernel counted.
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub read_calls: u64,
    pub write_calls: u64,
    /// Bytes of the traced POSIX and stdio reads and writes (those of the MPI runtime's
    /// calls counted but not kept included).
    pub traced_read_bytes: u64,
    pub traced_written_bytes: u64,
    /// What the kernel counted beyond the traced bytes.
    pub unseen_read_bytes: u64,
    pub unseen_written_bytes: u64,
}

impl KernelIoSummary {
    pub fn add(&mut self, other: &KernelIoSummary) {
        self.read_bytes += other.read_bytes;
        self.written_bytes += other.written_bytes;
        self.read_calls += other.read_calls;
        self.write_calls += other.write_calls;
        self.traced_read_bytes += other.traced_read_bytes;
        self.traced_written_bytes += other.traced_written_bytes;
        self.unseen_read_bytes += other.unseen_read_bytes;
        self.unseen_written_bytes += other.unseen_written_bytes;
    }

    /// Bytes the kernel counted beyond the traced ones that are worth a warning: more than
    /// 256 KiB (an MPI rank's dynamic loader reads about 80 KiB of plugin headers in
    /// `MPI_Init`, which no hook sees) and more than 1% of what the kernel counted.
    pub fn notable_unseen(&self) -> bool {
        let unseen = self.unseen_read_bytes + self.unseen_written_bytes;
        unseen > 256 * 1024 && unseen * 100 > self.read_bytes + self.written_bytes
    }

    /// The share of the kernel's bytes the trace accounts for, in percent.
    pub fn seen_percent(&self) -> f64 {
        let kernel = self.read_bytes + self.written_bytes;
        let unseen = self.unseen_read_bytes + self.unseen_written_bytes;
        match kernel {
            0 => 100.0,
            _ => 100.0 * (kernel - unseen.min(kernel)) as f64 / kernel as f64,
        }
    }
}

/// Per process image of `trace`: the comparison, if the tracer could read the counters.
pub fn compare(trace: &Trace) -> Vec<Option<KernelIoSummary>> {
    let mut traced = Traced {
        bytes: vec![(0, 0); trace.processes.len()],
    };
    walk::walk(trace, &mut traced);
    trace
        .processes
        .iter()
        .zip(traced.bytes)
        .map(|(process, (read, written))| {
            let kernel = process.kernel_io?;
            // The MPI runtime's calls counted but not kept were seen too.
            let [dropped_read, dropped_written] = process.runtime_bytes_dropped;
            let (read, written) = (read + dropped_read, written + dropped_written);
            Some(KernelIoSummary {
                read_bytes: kernel.read_bytes,
                written_bytes: kernel.written_bytes,
                read_calls: kernel.read_calls,
                write_calls: kernel.write_calls,
                traced_read_bytes: read,
                traced_written_bytes: written,
                unseen_read_bytes: kernel.read_bytes.saturating_sub(read),
                unseen_written_bytes: kernel.written_bytes.saturating_sub(written),
            })
        })
        .collect()
}

/// Bytes read and written per process by traced calls that reach the kernel.
struct Traced {
    bytes: Vec<(u64, u64)>,
}

impl Visitor for Traced {
    fn event(&mut self, occurrence: &Occurrence) {
        if !matches!(occurrence.layer, Layer::Posix | Layer::Stdio) || occurrence.failed() {
            return;
        }
        let Some(bytes) = self.bytes.get_mut(occurrence.stream.process as usize) else {
            return;
        };
        match occurrence.class {
            CallClass::Read => bytes.0 += occurrence.bytes(),
            CallClass::Write => bytes.1 += occurrence.bytes(),
            _ => {}
        }
    }
}

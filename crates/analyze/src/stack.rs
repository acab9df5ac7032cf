//! The I/O stack, call by call: what each MPI-IO call became at the POSIX layer, and what
//! each library call (HDF5, NetCDF, a generated layer) became at the MPI-IO, MPI and POSIX
//! layers below it — IOPin's and the thesis' fragmentation at each step.
//!
//! A call is recorded when it returns, after the calls it made, so the sub-calls a stream
//! shows since its last call of a layer belong to its next one: per stream, the sub-calls
//! wait in a pending record until their parent arrives. Sub-calls are marked by the tracer
//! (`event_flags::INSIDE_MPIIO`, `INSIDE_LIBRARY`), never guessed from timing.

use std::collections::BTreeMap;

use cairn_model::Layer;
use cairn_trace::walk::Occurrence;
use serde::Serialize;

/// One MPI-IO call (over all ranks) and the POSIX calls the MPI library made inside it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MpiIoCallSummary {
    pub count: u64,
    pub bytes: u64,
    /// Mean latency of the MPI-IO call, seconds.
    pub mean_latency: f64,
    /// POSIX sub-calls made inside these calls, their bytes and total time.
    pub posix_subcalls: u64,
    pub posix_bytes: u64,
    pub posix_time: f64,
    /// Sub-calls per MPI-IO call.
    pub fragmentation: f64,
    /// The longest single POSIX sub-call, seconds.
    pub max_posix_latency: f64,
    /// The longest single call, seconds, and the rank that made it (the critical path of a
    /// collective; exact also when ranks share a stream, whose times are otherwise merged).
    pub max_latency: f64,
    pub slowest_rank: Option<u32>,
    #[serde(skip)]
    time: f64,
}

/// One library call (over all ranks: `H5Dwrite`) and the calls the library made inside it,
/// layer by layer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LibraryCallSummary {
    /// The library's layer (`hdf5`...).
    pub layer: String,
    pub count: u64,
    /// Bytes the program asked the library to move (an `H5Dwrite`'s selection).
    pub bytes: u64,
    pub mean_latency: f64,
    /// MPI-IO calls made inside these calls and the bytes they moved (the library's own
    /// metadata included).
    pub mpiio_subcalls: u64,
    pub mpiio_bytes: u64,
    /// POSIX (and stdio) calls made inside them, directly or through MPI-IO, and their bytes.
    pub posix_subcalls: u64,
    pub posix_bytes: u64,
    /// MPI communication and datatype calls made inside them (metadata broadcasts,
    /// communicator copies).
    pub mpi_subcalls: u64,
    /// Calls of another library layer made inside them (NetCDF-4's `H5Dwrite`); the
    /// calls below those are theirs.
    pub library_subcalls: u64,
    /// MPI-IO sub-calls per call, and POSIX sub-calls per call.
    pub mpiio_fragmentation: f64,
    pub posix_fragmentation: f64,
    /// The longest single call, seconds, and the rank that made it.
    pub max_latency: f64,
    pub slowest_rank: Option<u32>,
    #[serde(skip)]
    time: f64,
}

/// Sub-calls seen in a stream since its last parent call.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    count: u64,
    bytes: u64,
    time: f64,
    max_latency: f64,
}

impl Pending {
    fn add(&mut self, occurrence: &Occurrence) {
        self.count += occurrence.count;
        self.bytes += occurrence.counted_bytes();
        self.time += occurrence.time / 1e9;
        self.max_latency = self.max_latency.max(occurrence.duration.max as f64 / 1e9);
    }
}

/// What a library call's sub-calls were, per layer below it.
#[derive(Clone, Copy, Debug, Default)]
struct PendingLibrary {
    mpiio: Pending,
    posix: Pending,
    mpi: Pending,
    library: Pending,
}

/// The longest call so far and its rank: a later call replaces it if longer (or as long,
/// when no rank was known yet).
fn keep_slowest(max: &mut f64, slowest: &mut Option<u32>, occurrence: &Occurrence) {
    let longest = occurrence.duration.max as f64 / 1e9;
    if slowest.is_none() && longest >= *max || longest > *max {
        *max = longest;
        *slowest = occurrence.slowest_rank;
    }
}

/// Builds both tables from the summary's walk (every occurrence the summary counts).
#[derive(Default)]
pub struct Stack {
    pub mpiio_calls: BTreeMap<String, MpiIoCallSummary>,
    pub library_calls: BTreeMap<String, LibraryCallSummary>,
    /// Per stream (by address): POSIX calls waiting for their MPI-IO call, and calls
    /// waiting for their library call.
    pending_mpiio: BTreeMap<usize, Pending>,
    pending_library: BTreeMap<usize, PendingLibrary>,
}

impl Stack {
    pub fn add(&mut self, occurrence: &Occurrence) {
        let stream = occurrence.stream as *const _ as usize;
        if occurrence.inside_library() && !occurrence.layer.is_library() {
            let pending = self.pending_library.entry(stream).or_default();
            match occurrence.layer {
                Layer::MpiIo => pending.mpiio.add(occurrence),
                Layer::Posix | Layer::Stdio => pending.posix.add(occurrence),
                Layer::Mpi => pending.mpi.add(occurrence),
                _ => {}
            }
        } else if occurrence.layer.is_library() {
            let pending = self.pending_library.remove(&stream).unwrap_or_default();
            let entry = self
                .library_calls
                .entry(occurrence.call.name.clone())
                .or_default();
            entry.layer = occurrence.layer.name().to_string();
            entry.count += occurrence.count;
            entry.bytes += occurrence.counted_bytes();
            entry.time += occurrence.time / 1e9;
            entry.mpiio_subcalls += pending.mpiio.count;
            entry.mpiio_bytes += pending.mpiio.bytes;
            entry.posix_subcalls += pending.posix.count;
            entry.posix_bytes += pending.posix.bytes;
            entry.mpi_subcalls += pending.mpi.count;
            entry.library_subcalls += pending.library.count;
            keep_slowest(&mut entry.max_latency, &mut entry.slowest_rank, occurrence);
            // A library another library called (NetCDF-4's `H5Dwrite`): a call of its own
            // above, and a sub-call of the call it was made in.
            if occurrence.inside_library() {
                self.pending_library
                    .entry(stream)
                    .or_default()
                    .library
                    .add(occurrence);
            }
        }
        if occurrence.inside_mpiio() {
            self.pending_mpiio
                .entry(stream)
                .or_default()
                .add(occurrence);
        } else if occurrence.layer == Layer::MpiIo {
            let pending = self.pending_mpiio.remove(&stream).unwrap_or_default();
            let entry = self
                .mpiio_calls
                .entry(occurrence.call.name.clone())
                .or_default();
            entry.count += occurrence.count;
            entry.bytes += occurrence.counted_bytes();
            entry.time += occurrence.time / 1e9;
            entry.posix_subcalls += pending.count;
            entry.posix_bytes += pending.bytes;
            entry.posix_time += pending.time;
            entry.max_posix_latency = entry.max_posix_latency.max(pending.max_latency);
            keep_slowest(&mut entry.max_latency, &mut entry.slowest_rank, occurrence);
        }
    }

    /// The tables, with their means and ratios.
    pub fn finish(
        mut self,
    ) -> (
        BTreeMap<String, MpiIoCallSummary>,
        BTreeMap<String, LibraryCallSummary>,
    ) {
        for call in self.mpiio_calls.values_mut() {
            if call.count > 0 {
                call.mean_latency = call.time / call.count as f64;
                call.fragmentation = call.posix_subcalls as f64 / call.count as f64;
            }
        }
        for call in self.library_calls.values_mut() {
            if call.count > 0 {
                call.mean_latency = call.time / call.count as f64;
                call.mpiio_fragmentation = call.mpiio_subcalls as f64 / call.count as f64;
                call.posix_fragmentation = call.posix_subcalls as f64 / call.count as f64;
            }
        }
        (self.mpiio_calls, self.library_calls)
    }
}

//! MPI communication and MPI-IO re-issued by each rank of `mpirun -np N cairn replay`.
//!
//! Design decisions:
//! - MPI is resolved at run time, as the tracer does it: the library the launcher belongs to
//!   is loaded with `RTLD_GLOBAL` (`libmpi.so.40` under Open MPI's `mpirun`, `libmpich.so.12`
//!   under Hydra; `--mpi-library` names another), and every function is then looked up by
//!   name in the whole process — so when the replay itself runs under `cairn run`, the
//!   tracer's hooks come first and the replay's calls are traced like a program's. The
//!   replayer's own bookkeeping (request polling, counts for the v-forms, the fidelity
//!   report) goes through `PMPI_*`, which no hook sees.
//! - Every message and transfer is `MPI_BYTE`s: the trace keeps bytes, not datatypes, and
//!   reductions use `MPI_BOR`, which is defined on bytes.
//! - Completions: the trace keeps how many requests a `MPI_Wait*`/`MPI_Test*` named, not
//!   which. A wait for n requests completes n of the pending ones that are done (polled
//!   with `PMPI_Request_get_status`, oldest first): any n that the original run could finish
//!   there can finish in the replay, so the replay cannot block where the run did not (a
//!   request the program had set to `MPI_REQUEST_NULL` in the array counts too: after two
//!   seconds without a new completion the wait takes the ones that are done).
//! - Receives from `MPI_ANY_SOURCE` are posted to the source that matched in the run, so
//!   the replay's matching is the run's.
//! - A communicator other than `MPI_COMM_WORLD` that every rank used (a benchmark's copy of
//!   the world, as IOR's `testComm`) is replayed on one copy of the world. Other
//!   communicators (their members are not kept), the calls that make and free
//!   communicators, the file view, seeks on a file handle and the split collectives are
//!   counted as not replayed (the members of a communicator all skip its calls alike, so no
//!   rank waits for another).
//! - An `MPI_File_open` is collective over `MPI_COMM_WORLD` when the run opened it over as
//!   many ranks as the world has (the tracer keeps the communicator's size), else over
//!   `MPI_COMM_SELF` (file per process, rank 0 alone, or unknown).

use std::collections::{HashMap, HashSet};
use std::ffi::{c_int, c_void, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use cairn_compress::stream::Body;
use cairn_model::{Event, Layer};
use cairn_mpi_abi::{Constants, Family};
use cairn_trace::Trace;

use crate::posix::Moved;
use crate::ReplayError;

mod collectives;
mod derived;
mod files;
mod thread;

pub(crate) use derived::sends;
use thread::Pending;
pub(crate) use thread::Thread;

/// A handle passed by value (a pointer in Open MPI, an `int` in a 64-bit register in the
/// MPICH family), or a buffer, or a pointer the call writes through.
type H = *mut c_void;

macro_rules! functions {
    ($($field:ident = $name:literal ($($argument:ty),*);)*) => {
        /// The MPI functions the replay calls, looked up by name in the whole process.
        struct Functions {
            $($field: unsafe extern "C" fn($($argument),*) -> c_int,)*
        }

        impl Functions {
            fn resolve() -> Result<Functions, String> {
                Ok(Functions {
                    $($field: {
                        let name = concat!($name, "\0");
                        // SAFETY: looking up a symbol by its NUL-terminated name.
                        let address =
                            unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr().cast()) };
                        if address.is_null() {
                            return Err(format!("the MPI library has no {}", $name));
                        }
                        // SAFETY: the symbol is the named MPI function, whose C signature
                        // is the one declared here (MPI standard).
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($argument),*) -> c_int>(address)
                        }
                    },)*
                })
            }
        }
    };
}

functions! {
    init = "MPI_Init" (H, H);
    init_thread = "MPI_Init_thread" (H, H, c_int, H);
    finalize = "MPI_Finalize" ();
    comm_rank = "PMPI_Comm_rank" (H, H);
    comm_size = "PMPI_Comm_size" (H, H);
    comm_dup = "PMPI_Comm_dup" (H, H);
    comm_dup_traced = "MPI_Comm_dup" (H, H);
    comm_split = "MPI_Comm_split" (H, c_int, c_int, H);
    comm_free = "MPI_Comm_free" (H);
    abort = "PMPI_Abort" (H, c_int);
    send = "MPI_Send" (H, c_int, H, c_int, c_int, H);
    ssend = "MPI_Ssend" (H, c_int, H, c_int, c_int, H);
    isend = "MPI_Isend" (H, c_int, H, c_int, c_int, H, H);
    issend = "MPI_Issend" (H, c_int, H, c_int, c_int, H, H);
    recv = "MPI_Recv" (H, c_int, H, c_int, c_int, H, H);
    irecv = "MPI_Irecv" (H, c_int, H, c_int, c_int, H, H);
    probe = "MPI_Probe" (c_int, c_int, H, H);
    iprobe = "MPI_Iprobe" (c_int, c_int, H, H, H);
    mprobe = "MPI_Mprobe" (c_int, c_int, H, H, H);
    improbe = "MPI_Improbe" (c_int, c_int, H, H, H, H);
    mrecv = "MPI_Mrecv" (H, c_int, H, H, H);
    imrecv = "MPI_Imrecv" (H, c_int, H, H, H);
    sendrecv = "MPI_Sendrecv" (H, c_int, H, c_int, c_int, H, c_int, H, c_int, c_int, H, H);
    sendrecv_replace = "MPI_Sendrecv_replace" (H, c_int, H, c_int, c_int, c_int, c_int, H, H);
    wait = "MPI_Wait" (H, H);
    waitall = "MPI_Waitall" (c_int, H, H);
    waitany = "MPI_Waitany" (c_int, H, H, H);
    waitsome = "MPI_Waitsome" (c_int, H, H, H, H);
    test = "MPI_Test" (H, H, H);
    testall = "MPI_Testall" (c_int, H, H, H);
    testany = "MPI_Testany" (c_int, H, H, H, H);
    testsome = "MPI_Testsome" (c_int, H, H, H, H);
    request_free = "MPI_Request_free" (H);
    request_status = "PMPI_Request_get_status" (H, H, H);
    pmpi_test = "PMPI_Test" (H, H, H);
    drain = "PMPI_Waitall" (c_int, H, H);
    barrier = "MPI_Barrier" (H);
    bcast = "MPI_Bcast" (H, c_int, H, c_int, H);
    reduce = "MPI_Reduce" (H, H, c_int, H, H, c_int, H);
    allreduce = "MPI_Allreduce" (H, H, c_int, H, H, H);
    scan = "MPI_Scan" (H, H, c_int, H, H, H);
    exscan = "MPI_Exscan" (H, H, c_int, H, H, H);
    reduce_scatter_block = "MPI_Reduce_scatter_block" (H, H, c_int, H, H, H);
    reduce_scatter = "MPI_Reduce_scatter" (H, H, H, H, H, H);
    gather = "MPI_Gather" (H, c_int, H, H, c_int, H, c_int, H);
    scatter = "MPI_Scatter" (H, c_int, H, H, c_int, H, c_int, H);
    allgather = "MPI_Allgather" (H, c_int, H, H, c_int, H, H);
    alltoall = "MPI_Alltoall" (H, c_int, H, H, c_int, H, H);
    gatherv = "MPI_Gatherv" (H, c_int, H, H, H, H, H, c_int, H);
    scatterv = "MPI_Scatterv" (H, H, H, H, H, c_int, H, c_int, H);
    allgatherv = "MPI_Allgatherv" (H, c_int, H, H, H, H, H, H);
    alltoallv = "MPI_Alltoallv" (H, H, H, H, H, H, H, H, H);
    ibarrier = "MPI_Ibarrier" (H, H);
    ibcast = "MPI_Ibcast" (H, c_int, H, c_int, H, H);
    iallreduce = "MPI_Iallreduce" (H, H, c_int, H, H, H, H);
    ireduce = "MPI_Ireduce" (H, H, c_int, H, H, c_int, H, H);
    iallgather = "MPI_Iallgather" (H, c_int, H, H, c_int, H, H, H);
    ialltoall = "MPI_Ialltoall" (H, c_int, H, H, c_int, H, H, H);
    igather = "MPI_Igather" (H, c_int, H, H, c_int, H, c_int, H, H);
    iscatter = "MPI_Iscatter" (H, c_int, H, H, c_int, H, c_int, H, H);
    igatherv = "MPI_Igatherv" (H, c_int, H, H, H, H, H, c_int, H, H);
    iscatterv = "MPI_Iscatterv" (H, H, H, H, H, c_int, H, c_int, H, H);
    iallgatherv = "MPI_Iallgatherv" (H, c_int, H, H, H, H, H, H, H);
    ialltoallv = "MPI_Ialltoallv" (H, H, H, H, H, H, H, H, H, H);
    ireduce_scatter = "MPI_Ireduce_scatter" (H, H, H, H, H, H, H);
    ireduce_scatter_block = "MPI_Ireduce_scatter_block" (H, H, c_int, H, H, H, H);
    iscan = "MPI_Iscan" (H, H, c_int, H, H, H, H);
    iexscan = "MPI_Iexscan" (H, H, c_int, H, H, H, H);
    alltoallw = "MPI_Alltoallw" (H, H, H, H, H, H, H, H, H);
    ialltoallw = "MPI_Ialltoallw" (H, H, H, H, H, H, H, H, H, H);
    pmpi_gather = "PMPI_Gather" (H, c_int, H, H, c_int, H, c_int, H);
    pmpi_gatherv = "PMPI_Gatherv" (H, c_int, H, H, H, H, H, c_int, H);
    pmpi_allgather = "PMPI_Allgather" (H, c_int, H, H, c_int, H, H);
    pmpi_alltoall = "PMPI_Alltoall" (H, c_int, H, H, c_int, H, H);
    file_open = "MPI_File_open" (H, H, c_int, H, H);
    file_close = "MPI_File_close" (H);
    file_delete = "MPI_File_delete" (H, H);
    file_sync = "MPI_File_sync" (H);
    file_get_size = "MPI_File_get_size" (H, H);
    file_set_size = "MPI_File_set_size" (H, i64);
    file_preallocate = "MPI_File_preallocate" (H, i64);
    write_at = "MPI_File_write_at" (H, i64, H, c_int, H, H);
    write_at_all = "MPI_File_write_at_all" (H, i64, H, c_int, H, H);
    read_at = "MPI_File_read_at" (H, i64, H, c_int, H, H);
    read_at_all = "MPI_File_read_at_all" (H, i64, H, c_int, H, H);
    iwrite_at = "MPI_File_iwrite_at" (H, i64, H, c_int, H, H);
    iread_at = "MPI_File_iread_at" (H, i64, H, c_int, H, H);
    write = "MPI_File_write" (H, H, c_int, H, H);
    read = "MPI_File_read" (H, H, c_int, H, H);
    write_all = "MPI_File_write_all" (H, H, c_int, H, H);
    read_all = "MPI_File_read_all" (H, H, c_int, H, H);
    write_shared = "MPI_File_write_shared" (H, H, c_int, H, H);
    read_shared = "MPI_File_read_shared" (H, H, c_int, H, H);
    write_ordered = "MPI_File_write_ordered" (H, H, c_int, H, H);
    read_ordered = "MPI_File_read_ordered" (H, H, c_int, H, H);
    iwrite = "MPI_File_iwrite" (H, H, c_int, H, H);
    iread = "MPI_File_iread" (H, H, c_int, H, H);
    iwrite_at_all = "MPI_File_iwrite_at_all" (H, i64, H, c_int, H, H);
    iread_at_all = "MPI_File_iread_at_all" (H, i64, H, c_int, H, H);
    iwrite_all = "MPI_File_iwrite_all" (H, H, c_int, H, H);
    iread_all = "MPI_File_iread_all" (H, H, c_int, H, H);
    iwrite_shared = "MPI_File_iwrite_shared" (H, H, c_int, H, H);
    iread_shared = "MPI_File_iread_shared" (H, H, c_int, H, H);
    file_seek = "MPI_File_seek" (H, i64, c_int);
    file_seek_shared = "MPI_File_seek_shared" (H, i64, c_int);
    write_at_all_begin = "MPI_File_write_at_all_begin" (H, i64, H, c_int, H);
    read_at_all_begin = "MPI_File_read_at_all_begin" (H, i64, H, c_int, H);
    write_all_begin = "MPI_File_write_all_begin" (H, H, c_int, H);
    read_all_begin = "MPI_File_read_all_begin" (H, H, c_int, H);
    write_ordered_begin = "MPI_File_write_ordered_begin" (H, H, c_int, H);
    read_ordered_begin = "MPI_File_read_ordered_begin" (H, H, c_int, H);
    write_at_all_end = "MPI_File_write_at_all_end" (H, H, H);
    read_at_all_end = "MPI_File_read_at_all_end" (H, H, H);
    write_all_end = "MPI_File_write_all_end" (H, H, H);
    read_all_end = "MPI_File_read_all_end" (H, H, H);
    write_ordered_end = "MPI_File_write_ordered_end" (H, H, H);
    read_ordered_end = "MPI_File_read_ordered_end" (H, H, H);
}

/// `MPI_ANY_TAG` (the same in both families) and `MPI_THREAD_MULTIPLE`.
const ANY_TAG: c_int = -1;
const THREAD_MULTIPLE: c_int = 3;

/// The loaded MPI library: its functions, constants and family.
pub(crate) struct Mpi {
    functions: Functions,
    constants: Constants,
    family: Family,
    /// Bytes of one `MPI_Status`.
    status_size: usize,
}

// SAFETY: the constants are the library's predefined handles, valid in every thread.
unsafe impl Sync for Mpi {}
// SAFETY: as above.
unsafe impl Send for Mpi {}

/// The launcher's world size, if this process was started by `mpirun` (Open MPI's or
/// Hydra's environment).
pub(crate) fn launched() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
}

impl Mpi {
    /// Loads the MPI library (`library`, or the launcher's) and looks up its functions.
    pub(crate) fn load(library: Option<&Path>) -> Result<Mpi, ReplayError> {
        let candidates: Vec<CString> = match library {
            Some(path) => vec![CString::new(path.as_os_str().as_bytes())
                .map_err(|_| ReplayError::Mpi("a library path with a NUL byte".into()))?],
            None => {
                let open_mpi = std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some();
                let names: &[&str] = if open_mpi {
                    &["libmpi.so.40", "libmpi.so"]
                } else {
                    &[
                        "libmpich.so.12",
                        "libmpi.so.12",
                        "libmpich.so",
                        "libmpi.so.40",
                    ]
                };
                names
                    .iter()
                    .map(|name| CString::new(*name).unwrap())
                    .collect()
            }
        };
        // SAFETY: NUL-terminated names; RTLD_GLOBAL so that the library's plugins, and the
        // lookups below, see its symbols.
        let loaded = candidates.iter().any(|name| unsafe {
            !libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL).is_null()
        });
        if !loaded {
            return Err(ReplayError::Mpi(format!(
                "no MPI library could be loaded (tried {}; --mpi-library names one)",
                candidates
                    .iter()
                    .map(|name| name.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let functions = Functions::resolve().map_err(ReplayError::Mpi)?;
        let unknown = || {
            ReplayError::Mpi("the MPI library is neither Open MPI nor of the MPICH family".into())
        };
        let family = cairn_mpi_abi::family().ok_or_else(unknown)?;
        Ok(Mpi {
            functions,
            constants: cairn_mpi_abi::constants().ok_or_else(unknown)?,
            family,
            status_size: cairn_mpi_abi::status_size().ok_or_else(unknown)?,
        })
    }

    /// `MPI_Init`, or `MPI_Init_thread(MPI_THREAD_MULTIPLE)` when `threads` replay MPI
    /// calls from more than one thread or the program asked for a thread level; (rank, size).
    pub(crate) fn init(&self, thread_level: bool) -> (c_int, c_int) {
        let f = &self.functions;
        let (mut rank, mut size, mut provided) = (0, 0, 0);
        // SAFETY: null argc/argv are allowed; out-pointers to ints of ours.
        unsafe {
            if thread_level {
                (f.init_thread)(
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    THREAD_MULTIPLE,
                    (&raw mut provided).cast(),
                );
            } else {
                (f.init)(std::ptr::null_mut(), std::ptr::null_mut());
            }
            (f.comm_rank)(self.constants.world, (&raw mut rank).cast());
            (f.comm_size)(self.constants.world, (&raw mut size).cast());
        }
        (rank, size)
    }

    pub(crate) fn finalize(&self) {
        // SAFETY: MPI was initialised; every request was completed.
        unsafe { (self.functions.finalize)() };
    }

    /// Ends the job: a rank that cannot replay must not leave the others waiting.
    pub(crate) fn abort(&self, code: c_int) -> ! {
        // SAFETY: MPI was initialised.
        unsafe { (self.functions.abort)(self.constants.world, code) };
        std::process::exit(code)
    }

    /// Every rank's `text`, in rank order, on rank 0 (`None` elsewhere): the fidelity report.
    pub(crate) fn gather_text(&self, text: &str, rank: c_int, size: c_int) -> Option<Vec<String>> {
        let f = &self.functions;
        let c = &self.constants;
        let length = text.len() as c_int;
        let mut lengths = vec![0 as c_int; size as usize];
        // SAFETY: buffers of the stated counts of ints, then of bytes.
        unsafe {
            (f.pmpi_gather)(
                (&raw const length).cast_mut().cast(),
                1,
                c.int,
                lengths.as_mut_ptr().cast(),
                1,
                c.int,
                0,
                c.world,
            );
        }
        let displacements: Vec<c_int> = lengths
            .iter()
            .scan(0, |offset, length| {
                let at = *offset;
                *offset += length;
                Some(at)
            })
            .collect();
        let mut all = vec![0u8; lengths.iter().map(|l| *l as usize).sum::<usize>().max(1)];
        // SAFETY: as above; the receive arguments matter on rank 0 only.
        unsafe {
            (f.pmpi_gatherv)(
                text.as_ptr().cast_mut().cast(),
                length,
                c.byte,
                all.as_mut_ptr().cast(),
                lengths.as_mut_ptr().cast(),
                displacements.as_ptr().cast_mut().cast(),
                c.byte,
                0,
                c.world,
            );
        }
        (rank == 0).then(|| {
            lengths
                .iter()
                .zip(&displacements)
                .map(|(length, at)| {
                    String::from_utf8_lossy(&all[*at as usize..(*at + *length) as usize])
                        .into_owned()
                })
                .collect()
        })
    }
}

/// What every thread of a rank needs to know about the job.
pub(crate) struct Job<'a> {
    pub(crate) mpi: &'a Mpi,
    pub(crate) size: c_int,
    /// Communicators (this rank's recorded handles) other than the world's that every rank
    /// used, as a benchmark's copy of the world is (IOR's `testComm`): replayed on `copy`.
    world_wide: HashSet<u64>,
    /// A copy of `MPI_COMM_WORLD` made for them (through PMPI, unseen), if there are any.
    copy: H,
    pub(crate) trace: &'a Trace,
    /// For a trace with histograms: the job's drawn communication as this rank sees it.
    derived: Option<derived::Plan<'a>>,
    /// Whether a thread already posts the derived receives.
    epochs_claimed: std::sync::atomic::AtomicBool,
}

// SAFETY: `copy` is a communicator handle, usable from any thread MPI lets call.
unsafe impl Sync for Job<'_> {}

impl<'a> Job<'a> {
    /// Collective over the world: every rank plans once, at the same point.
    /// `scaling`: the trace is one made for another rank count than recorded.
    pub(crate) fn plan(
        mpi: &'a Mpi,
        rank: c_int,
        size: c_int,
        trace: &'a Trace,
        scaling: Option<crate::scale::Scaling>,
        seed: u64,
    ) -> Job<'a> {
        // Each rank's communicators other than the world's, in order of first use.
        let mut communicators: HashMap<u32, Vec<u64>> = HashMap::new();
        for stream in &trace.streams {
            let Some(rank) = trace.processes[stream.process as usize].rank else {
                continue;
            };
            // Handles are numbered per process in order of first use, all kinds together (a
            // stream rank 0 alone prints to shifts its numbers): a communicator is known by
            // its place among the rank's communicators.
            // One walk of the folded structure, not of the events (a loop's body once: the
            // order of first use is the same), so a billion-iteration loop costs nothing.
            let used = communicators.entry(rank).or_default();
            first_uses(trace, stream.nodes(), used);
        }
        // The first k communicators of every rank, k the fewest any rank used: copies of
        // the world each rank made alike.
        let common = (0..size as u32)
            .map(|rank| communicators.get(&rank).map_or(0, Vec::len))
            .min()
            .unwrap_or(0);
        let world_wide_of = |rank: u32| -> HashSet<u64> {
            communicators
                .get(&rank)
                .map(|theirs| theirs[..common].iter().copied().collect())
                .unwrap_or_default()
        };
        let world_wide = world_wide_of(rank as u32);
        let derived = trace.is_lossy().then(|| {
            let every: HashMap<u32, HashSet<u64>> =
                (0..size as u32).map(|r| (r, world_wide_of(r))).collect();
            derived::Plan::make(trace, rank as u32, scaling, every, seed)
        });
        let mut copy = 0u64;
        if !world_wide.is_empty() {
            // SAFETY: a collective every rank makes here; the new handle lands in the low
            // half of a zeroed 64-bit slot in either family.
            unsafe { (mpi.functions.comm_dup)(mpi.constants.world, (&raw mut copy).cast()) };
        }
        Job {
            mpi,
            size,
            world_wide,
            copy: copy as usize as H,
            trace,
            derived,
            epochs_claimed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether this trace is replayed in derived mode (it has histograms).
    pub(crate) fn derived_mode(&self) -> bool {
        self.derived.is_some()
    }

    /// The first thread to ask posts the derived receives.
    fn claim_epochs(&self) -> bool {
        !self
            .epochs_claimed
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    }

    /// The replay's communicator for a recorded one: the world (recorded as 0), the copy
    /// for a world-wide one, `None` for one the trace cannot rebuild.
    pub(crate) fn communicator(&self, recorded: u64) -> Option<H> {
        if recorded == 0 {
            Some(self.mpi.constants.world)
        } else if self.world_wide.contains(&recorded) {
            Some(self.copy)
        } else {
            None
        }
    }
}

/// A non-blocking operation in flight: its request, and the buffer it owns until done.
/// A byte count as an MPI count (transfers of 2 GiB and more are cut to the largest).
fn count(bytes: u64) -> c_int {
    bytes.min(c_int::MAX as u64) as c_int
}

/// Prefix sums of `counts`, and their total.
fn displacements(counts: &[c_int]) -> (Vec<c_int>, usize) {
    let mut at = 0;
    let displacements = counts
        .iter()
        .map(|count| {
            let here = at;
            at += count;
            here
        })
        .collect();
    (displacements, at.max(0) as usize)
}

/// This rank's rank in `comm`.
fn rank_of(mpi: &Mpi, comm: H) -> c_int {
    let mut rank = 0;
    // SAFETY: a communicator of the replay's, an out-pointer to an int of ours.
    unsafe { (mpi.functions.comm_rank)(comm, (&raw mut rank).cast()) };
    rank
}

/// Adds to `used` the MPI handles (communicators) the leaves of `body` name, in order of
/// first use; loops are walked once (a loop run no times by this rank — another rank's
/// part — not at all).
fn first_uses(trace: &Trace, body: Body, used: &mut Vec<u64>) {
    let _ = crate::each_leaf_run::<()>(body, &mut |leaf| {
        let handle = leaf.key.handle;
        if let Some(info) = trace.calls.get(leaf.key.call as usize) {
            if handle != 0
                && info.layer() == Some(Layer::Mpi)
                && !is_completion(&info.name)
                && !used.contains(&handle)
            {
                used.push(handle);
            }
        }
        std::ops::ControlFlow::Continue(())
    });
}

fn is_completion(name: &str) -> bool {
    name.starts_with("MPI_Wait") || name.starts_with("MPI_Test") || name == "MPI_Request_free"
}

/// The bytes a recorded MPI call moved, as the fidelity report counts them: sent (and
/// contributed to a collective) as written, received as read.
pub(crate) fn recorded(name: &str, event: &Event) -> Moved {
    if is_completion(name) || name.ends_with("_received") || name == "MPI_Recv" {
        Moved::Read(event.result.max(0) as u64)
    } else if name.starts_with("MPI_Irecv")
        || name == "MPI_Start_recv"
        // A persistent request's init moves nothing (its starts do).
        || name.ends_with("_init")
        || name.contains("probe")
        || name.contains("Probe")
        || name.starts_with("MPI_Init")
        || name == "MPI_Finalize"
    {
        Moved::Nothing
    } else {
        Moved::Written(event.request)
    }
}

//! The merge at `MPI_Finalize`, for runs launched without `cairn run`:
//! `mpirun -x LD_PRELOAD=$(cairn lib) -x CAIRN_DIR=… -x CAIRN_OUTPUT=job.cairn ./app`.
//!
//! Before the real `MPI_Finalize`, every rank builds its own trace from the segment it has
//! staged so far, and the ranks' traces merge up a tree of `CAIRN_MERGE_FANIN` children per
//! node (default 4, depth log P) over PMPI point-to-point calls on a private duplicate of
//! `MPI_COMM_WORLD`; rank 0 writes `CAIRN_OUTPUT`. This library only captures and moves
//! bytes: building and merging traces is the `cairn` binary's job (`cairn merge`, the same
//! code `cairn run` and offline merges use), run beside this library with a clean
//! environment (so it is not traced itself).
//!
//! Never breaking the program comes first: every rank takes part in the tree once it is
//! enabled (a rank that could not build its trace sends an empty one, so no rank waits
//! for a message that never comes), nothing here unwinds, and the program's own
//! `MPI_Finalize` runs afterwards whatever happened. What the trace lacks: I/O after
//! `MPI_Finalize` (it stays in the staging segments; `cairn merge CAIRN_DIR` has it all);
//! each rank counts the program's calls after its merge and says at exit how many there
//! were, so the gap is never silent.
//!
//! Open MPI and the MPICH family: the handles it passes itself come from [`mpi_abi`]; with
//! another MPI the merge is skipped (on every rank alike).

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::mpi_abi;
use crate::sys::{self, environment, PathBuffer};

type Handle = *mut c_void;

type Flag = unsafe extern "C" fn(*mut c_int) -> c_int;
type CommDup = unsafe extern "C" fn(Handle, *mut Handle) -> c_int;
type CommFree = unsafe extern "C" fn(*mut Handle) -> c_int;
type CommQuery = unsafe extern "C" fn(Handle, *mut c_int) -> c_int;
type PmpiSend = unsafe extern "C" fn(*const c_void, c_int, Handle, c_int, c_int, Handle) -> c_int;
type PmpiRecv =
    unsafe extern "C" fn(*mut c_void, c_int, Handle, c_int, c_int, Handle, Handle) -> c_int;

/// The PMPI functions and Open MPI objects the tree needs.
struct Pmpi {
    initialized: Flag,
    finalized: Flag,
    comm_dup: CommDup,
    comm_free: CommFree,
    comm_rank: CommQuery,
    comm_size: CommQuery,
    send: PmpiSend,
    recv: PmpiRecv,
    world: Handle,
    byte: Handle,
    status_ignore: Handle,
}

const TAG: c_int = 0x6361;
/// Bytes per message: MPI counts are ints.
const PIECE: usize = 1 << 30;

fn symbol(name: &CStr) -> Option<usize> {
    // SAFETY: looking up a symbol by its NUL-terminated name.
    let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) } as usize;
    (address != 0).then_some(address)
}

impl Pmpi {
    fn resolve() -> Option<Pmpi> {
        let constants = mpi_abi::constants()?;
        // SAFETY: each address is the named PMPI function, whose C signature is the one
        // the field declares (MPI standard; a handle passed by value travels in a 64-bit
        // register in both families, and one written through a pointer lands in the low
        // half of a zeroed 64-bit slot).
        unsafe {
            Some(Pmpi {
                initialized: std::mem::transmute::<usize, Flag>(symbol(c"PMPI_Initialized")?),
                finalized: std::mem::transmute::<usize, Flag>(symbol(c"PMPI_Finalized")?),
                comm_dup: std::mem::transmute::<usize, CommDup>(symbol(c"PMPI_Comm_dup")?),
                comm_free: std::mem::transmute::<usize, CommFree>(symbol(c"PMPI_Comm_free")?),
                comm_rank: std::mem::transmute::<usize, CommQuery>(symbol(c"PMPI_Comm_rank")?),
                comm_size: std::mem::transmute::<usize, CommQuery>(symbol(c"PMPI_Comm_size")?),
                send: std::mem::transmute::<usize, PmpiSend>(symbol(c"PMPI_Send")?),
                recv: std::mem::transmute::<usize, PmpiRecv>(symbol(c"PMPI_Recv")?),
                world: constants.world,
                byte: constants.byte,
                status_ignore: constants.status_ignore,
            })
        }
    }

    /// Sends a length-prefixed message (an empty one says "nothing from this subtree").
    fn send_bytes(&self, comm: Handle, to: c_int, bytes: &[u8]) -> bool {
        let length = (bytes.len() as u64).to_le_bytes();
        // SAFETY: valid buffers of the stated sizes, a communicator we own.
        unsafe {
            if (self.send)(length.as_ptr().cast(), 8, self.byte, to, TAG, comm) != 0 {
                return false;
            }
            for piece in bytes.chunks(PIECE) {
                let count = piece.len() as c_int;
                if (self.send)(piece.as_ptr().cast(), count, self.byte, to, TAG, comm) != 0 {
                    return false;
                }
            }
        }
        true
    }

    fn receive_bytes(&self, comm: Handle, from: c_int) -> Option<Vec<u8>> {
        let mut length = [0u8; 8];
        let ignore = self.status_ignore;
        // SAFETY: valid buffers of the stated sizes, a communicator we own, the library's
        // own MPI_STATUS_IGNORE.
        unsafe {
            let status = (self.recv)(
                length.as_mut_ptr().cast(),
                8,
                self.byte,
                from,
                TAG,
                comm,
                ignore,
            );
            if status != 0 {
                return None;
            }
            let mut bytes = vec![0u8; u64::from_le_bytes(length) as usize];
            for piece in bytes.chunks_mut(PIECE) {
                let count = piece.len() as c_int;
                let status = (self.recv)(
                    piece.as_mut_ptr().cast(),
                    count,
                    self.byte,
                    from,
                    TAG,
                    comm,
                    ignore,
                );
                if status != 0 {
                    return None;
                }
            }
            Some(bytes)
        }
    }
}

fn path(parts: &[&[u8]]) -> Option<PathBuffer> {
    let mut buffer = PathBuffer::new();
    parts.iter().all(|part| buffer.push(part)).then_some(buffer)
}

fn exists(path: &PathBuffer) -> bool {
    // SAFETY: a NUL-terminated path; faccessat as a raw system call (`access` is hooked).
    unsafe {
        libc::syscall(
            libc::SYS_faccessat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::X_OK,
            0,
        ) == 0
    }
}

/// `$CAIRN_BIN`, or `cairn` beside this library (or in `../../bin/`, an installed layout).
fn cairn_binary() -> Option<PathBuffer> {
    if let Some(binary) = environment(c"CAIRN_BIN") {
        return path(&[&binary]).filter(exists);
    }
    // SAFETY: Dl_info is plain data (pointers and integers); all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr of a function of this library fills `info` with its file name.
    let found = unsafe { libc::dladdr(cairn_binary as *const c_void, &mut info) } != 0;
    if !found || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
    let library = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
    let directory = &library[..library.iter().rposition(|byte| *byte == b'/')? + 1];
    [&b"cairn"[..], b"../../bin/cairn"]
        .iter()
        .filter_map(|name| path(&[directory, name]))
        .find(exists)
}

/// Runs `cairn` with `arguments` and an environment without the tracer's variables; true
/// if it exited with status 0.
fn run_cairn(binary: &PathBuffer, arguments: &[&[u8]]) -> bool {
    let owned: Vec<Vec<u8>> = std::iter::once(binary.as_bytes())
        .chain(arguments.iter().copied())
        .map(|argument| argument.iter().copied().chain([0]).collect())
        .collect();
    let mut argv: Vec<*mut c_char> = owned.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    argv.push(std::ptr::null_mut());
    let mut environment: Vec<*mut c_char> = Vec::new();
    // SAFETY: `environ` is the process's NUL-terminated array of NUL-terminated strings.
    unsafe {
        extern "C" {
            static environ: *const *mut c_char;
        }
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let text = CStr::from_ptr(*entry).to_bytes();
            if !text.starts_with(b"LD_PRELOAD=") && !text.starts_with(b"CAIRN_") {
                environment.push(*entry);
            }
            entry = entry.add(1);
        }
    }
    environment.push(std::ptr::null_mut());
    let mut pid: libc::pid_t = 0;
    // SAFETY: argv and envp are NULL-terminated arrays of C strings that outlive the call;
    // posix_spawn runs the child without fork handlers (vfork-like), safe in an MPI process.
    let spawned = unsafe {
        libc::posix_spawn(
            &mut pid,
            binary.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            argv.as_ptr(),
            environment.as_ptr(),
        )
    };
    if spawned != 0 {
        return false;
    }
    let mut status: c_int = 0;
    loop {
        // SAFETY: waiting for the child we just started.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            break;
        }
        if waited < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn read_file(path: &PathBuffer) -> Option<Vec<u8>> {
    let fd = sys::open(path, libc::O_RDONLY | libc::O_CLOEXEC, 0).ok()?;
    let size = sys::fstat_size(fd);
    let bytes = size.and_then(|size| {
        let mut bytes = vec![0u8; size as usize];
        sys::pread_exact(fd, &mut bytes, 0).then_some(bytes)
    });
    sys::close(fd);
    bytes
}

fn write_file(path: &PathBuffer, bytes: &[u8], mode: libc::mode_t) -> bool {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC;
    let Ok(fd) = sys::open(path, flags, mode) else {
        return false;
    };
    let written = sys::pwrite(fd, bytes, 0);
    sys::close(fd);
    written
}

/// The trace file, written beside its final name and renamed: a failure leaves any
/// previous trace intact.
fn write_atomically(target: &PathBuffer, bytes: &[u8]) -> bool {
    let Some(temporary) = path(&[target.as_bytes(), b".cairn-writing"]) else {
        return false;
    };
    if write_file(&temporary, bytes, 0o644) && sys::rename(&temporary, target) {
        return true;
    }
    sys::unlink(&temporary);
    false
}

fn decimal(value: u64) -> Vec<u8> {
    value.to_string().into_bytes()
}

/// Whether this rank's trace was merged at `MPI_Finalize`; the program's calls after it
/// (the MPI runtime's own are not counted) are in the staging only.
static MERGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static CALLS_AFTER_MERGE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts a traced call of the program's own (not the MPI runtime's).
#[inline(always)]
pub fn count_program_call() {
    if MERGED.load(std::sync::atomic::Ordering::Relaxed) {
        CALLS_AFTER_MERGE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// At exit: says on standard error how many of the program's calls came after the merge at
/// `MPI_Finalize`, and so are not in its trace (unless `CAIRN_QUIET` is set).
pub fn report_calls_after_merge(rank: Option<u32>) {
    let calls = CALLS_AFTER_MERGE.swap(0, std::sync::atomic::Ordering::Relaxed);
    if calls == 0 || environment(c"CAIRN_QUIET").is_some() {
        return;
    }
    let output = environment(c"CAIRN_OUTPUT").unwrap_or_default();
    let staging = environment(c"CAIRN_DIR").unwrap_or_default();
    let message = format!(
        "cairn: rank {} made {calls} calls after MPI_Finalize, when {} was already merged: they are only in the staging directory (`cairn merge {} -o TRACE` builds a trace with them)\n",
        rank.map_or_else(|| "?".to_string(), |rank| rank.to_string()),
        String::from_utf8_lossy(&output),
        String::from_utf8_lossy(&staging),
    );
    // SAFETY: writing our own message to standard error as a raw system call.
    unsafe { libc::syscall(libc::SYS_write, 2, message.as_ptr(), message.len()) };
}

/// What this rank needs to build and merge traces.
struct Local {
    binary: Option<PathBuffer>,
    /// Temporary files are this (the trace's path) plus a suffix: one job's files never
    /// meet another's in a shared directory.
    prefix: Vec<u8>,
    runtime_io: Vec<u8>,
    /// `CAIRN_PRECISION`, applied by the merge that makes the job's trace.
    precision: Vec<u8>,
}

impl Local {
    fn partial(&self, rank: c_int) -> Option<PathBuffer> {
        path(&[&self.prefix, b".part-", &decimal(rank as u64)])
    }

    /// This rank's trace, built from its own staging segment (`last`: it is the job's).
    fn own_trace(&self, rank: c_int, segment: &[u8], last: bool) -> Option<Vec<u8>> {
        let binary = self.binary.as_ref()?;
        let output = self.partial(rank)?;
        let precision: &[u8] = if last { &self.precision } else { b"100" };
        let built = run_cairn(
            binary,
            &[
                b"merge",
                b"-q",
                b"--first-rank",
                b"0",
                b"--runtime-io",
                &self.runtime_io,
                b"--precision",
                precision,
                segment,
                b"-o",
                output.as_bytes(),
            ],
        );
        let bytes = if built { read_file(&output) } else { None };
        sys::unlink(&output);
        bytes
    }

    /// Merges traces (the non-empty ones) into one (`last`: the job's).
    fn merge(
        &self,
        rank: c_int,
        parts: &[(c_int, Vec<u8>)],
        output: &PathBuffer,
        last: bool,
    ) -> bool {
        let Some(binary) = self.binary.as_ref() else {
            return false;
        };
        let mut inputs = Vec::new();
        for (from, bytes) in parts.iter().filter(|(_, bytes)| !bytes.is_empty()) {
            let Some(input) = path(&[
                &self.prefix,
                b".part-",
                &decimal(rank as u64),
                b"-",
                &decimal(*from as u64),
            ]) else {
                continue;
            };
            if write_file(&input, bytes, 0o600) {
                inputs.push(input);
            }
        }
        if inputs.is_empty() {
            return false;
        }
        let precision: &[u8] = if last { &self.precision } else { b"100" };
        let mut arguments: Vec<&[u8]> = vec![b"merge", b"-q", b"--precision", precision];
        arguments.extend(inputs.iter().map(PathBuffer::as_bytes));
        arguments.extend([&b"-o"[..], output.as_bytes()]);
        let merged = run_cairn(binary, &arguments);
        for input in &inputs {
            sys::unlink(input);
        }
        merged
    }
}

/// Merges every rank's trace into `CAIRN_OUTPUT` before the real `MPI_Finalize`, if that
/// variable is set; see the module documentation. `segment` is this image's staging file.
pub fn merge_at_finalize(segment: Option<Vec<u8>>) {
    let Some(output) = environment(c"CAIRN_OUTPUT").filter(|output| !output.is_empty()) else {
        return;
    };
    // Once per process, on every rank alike: MPICH's Fortran `mpi_finalize_` calls the C
    // `MPI_Finalize`, and both are hooked.
    static ATTEMPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if ATTEMPTED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return;
    }
    let Some(pmpi) = Pmpi::resolve() else {
        return;
    };
    // This thread's events a block or an irregular body holds back go to the staging
    // segment the merge reads (another thread's, at most 255 per thread, stay in that
    // thread until it writes again).
    crate::recorder::with_current_state(|state| {
        state.close_block();
        state.end_irregular();
    });
    let started = crate::sys::clock(libc::CLOCK_MONOTONIC);
    let mut comm: Handle = std::ptr::null_mut();
    let (mut rank, mut size) = (0, 0);
    let (mut initialized, mut finalized) = (0, 0);
    // SAFETY: PMPI calls on MPI_COMM_WORLD before MPI_Finalize, with valid out-pointers;
    // MPI_Initialized and MPI_Finalized may be called at any time, and the others only
    // run in an initialised, not yet finalised MPI (an erroneous second MPI_Finalize, or
    // one without MPI_Init, is left to the real call).
    let ready = unsafe {
        (pmpi.initialized)(&mut initialized) == 0
            && (pmpi.finalized)(&mut finalized) == 0
            && initialized != 0
            && finalized == 0
            && (pmpi.comm_dup)(pmpi.world, &mut comm) == 0
            && (pmpi.comm_rank)(comm, &mut rank) == 0
            && (pmpi.comm_size)(comm, &mut size) == 0
    };
    if !ready {
        return;
    }
    MERGED.store(true, std::sync::atomic::Ordering::Relaxed);
    let given = environment(c"CAIRN_MERGE_FANIN")
        .and_then(|value| std::str::from_utf8(&value).ok()?.parse::<u32>().ok());
    let fan_in = cairn_format::segment::merge_fan_in(given, size.max(1) as u32)
        .min(c_int::MAX as u32) as c_int;
    let output_path = path(&[&output]);
    let local = Local {
        binary: cairn_binary(),
        prefix: output.clone(),
        runtime_io: environment(c"CAIRN_RUNTIME_IO").unwrap_or_else(|| b"none".to_vec()),
        precision: environment(c"CAIRN_PRECISION").unwrap_or_else(|| b"100".to_vec()),
    };
    let mut partial = segment
        .and_then(|segment| local.own_trace(rank, &segment, size == 1))
        .unwrap_or_default();
    let mut stride: c_int = 1;
    let mut notes = 0;
    let mut complete = true;
    while stride < size {
        if rank % (stride * fan_in) != 0 {
            let parent = rank - rank % (stride * fan_in);
            complete &= pmpi.send_bytes(comm, parent, &partial);
            partial.clear();
            break;
        }
        let mut parts = vec![(rank, std::mem::take(&mut partial))];
        for step in 1..fan_in {
            let child = rank + step * stride;
            if child >= size {
                break;
            }
            match pmpi.receive_bytes(comm, child) {
                Some(bytes) => parts.push((child, bytes)),
                None => complete = false,
            }
        }
        notes += parts.iter().filter(|(_, bytes)| bytes.is_empty()).count();
        let merged = local.partial(rank).filter(|merged| {
            let last = stride.saturating_mul(fan_in) >= size;
            local.merge(rank, &parts, merged, last)
        });
        partial = merged
            .as_ref()
            .and_then(|merged| {
                let bytes = read_file(merged);
                sys::unlink(merged);
                bytes
            })
            .unwrap_or_default();
        stride = stride.saturating_mul(fan_in);
    }
    // SAFETY: freeing the communicator this function duplicated.
    unsafe { (pmpi.comm_free)(&mut comm) };
    if rank != 0 {
        return;
    }
    let written = output_path
        .is_some_and(|output| !partial.is_empty() && write_atomically(&output, &partial));
    if environment(c"CAIRN_QUIET").is_none() {
        let elapsed = crate::sys::clock(libc::CLOCK_MONOTONIC).saturating_sub(started);
        let message = if written {
            format!(
                "cairn: merged {size} ranks at MPI_Finalize in {:.1} ms -> {} ({} bytes){}\n",
                elapsed as f64 / 1e6,
                String::from_utf8_lossy(&output),
                partial.len(),
                if notes > 0 || !complete {
                    "; some ranks' traces were missing: `cairn merge` of the staging directory has them all"
                } else {
                    ""
                }
            )
        } else {
            "cairn: no trace written at MPI_Finalize (no cairn binary beside libcairn.so, or CAIRN_BIN?); `cairn merge` of the staging directory builds it\n".to_string()
        };
        // SAFETY: writing our own message to standard error as a raw system call.
        unsafe { libc::syscall(libc::SYS_write, 2, message.as_ptr(), message.len()) };
    }
}

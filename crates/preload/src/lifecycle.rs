//! Start, fork, thread exit, `main`, and the end of a process image.
//!
//! Initialisation is lazy and may be triggered by any hook: another preload library's
//! constructor can call `open` before ours has run. While one thread initialises, hooks on
//! other threads forward untraced instead of waiting (no lock is ever held across the
//! program's code).

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use cairn_format::segment::{mark, ProcessHeader};
use cairn_model::{Call, CallClass, Layer};
use libc::{c_char, c_int, c_void};

use crate::recorder::{self, Segment, ThreadState, GENERATION, SEGMENT};
use crate::sys::{self, PathBuffer};

const UNINITIALISED: u8 = 0;
const INITIALISING: u8 = 1;
const READY: u8 = 2;
const DISABLED: u8 = 3;

static STATUS: AtomicU8 = AtomicU8::new(UNINITIALISED);
static MAIN_STARTED: AtomicBool = AtomicBool::new(false);
static ONCE_PER_PROCESS_TREE: AtomicBool = AtomicBool::new(false);
static THREAD_KEY: AtomicUsize = AtomicUsize::new(0);
/// Directory of the staging segments, kept for forked children.
static DIRECTORY: crate::spin::SpinLock<Option<Vec<u8>>> = crate::spin::SpinLock::new(None);

#[inline(always)]
pub fn is_ready() -> bool {
    match STATUS.load(Ordering::Acquire) {
        READY => true,
        UNINITIALISED => {
            initialise(false);
            STATUS.load(Ordering::Acquire) == READY
        }
        _ => false,
    }
}

pub fn main_started() -> bool {
    MAIN_STARTED.load(Ordering::Relaxed)
}

/// How many threads are inside `MPI_Init`/`MPI_Finalize` right now: while any is, all of
/// the process's I/O is the MPI runtime's.
static IN_RUNTIME: AtomicUsize = AtomicUsize::new(0);

pub fn in_runtime() -> bool {
    IN_RUNTIME.load(Ordering::Relaxed) != 0
}

/// Runs an MPI start-up or shut-down call with its I/O marked as the runtime's.
fn runtime_call<R>(call: impl FnOnce() -> R) -> R {
    IN_RUNTIME.fetch_add(1, Ordering::AcqRel);
    let result = call();
    IN_RUNTIME.fetch_sub(1, Ordering::AcqRel);
    result
}

/// # Safety
/// Called by an MPI program with `MPI_Init`'s arguments.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Init")]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    type Real = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char) -> c_int;
    let Some(real) = crate::real::get(Call::MPI_Init) else {
        return -1;
    };
    // SAFETY: the next definition of MPI_Init, with the caller's arguments.
    runtime_call(|| unsafe { std::mem::transmute::<usize, Real>(real)(argc, argv) })
}

/// # Safety
/// Called by an MPI program with `MPI_Init_thread`'s arguments.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Init_thread")]
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    type Real = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int;
    let Some(real) = crate::real::get(Call::MPI_Init_thread) else {
        return -1;
    };
    // SAFETY: the next definition of MPI_Init_thread, with the caller's arguments.
    runtime_call(|| unsafe {
        std::mem::transmute::<usize, Real>(real)(argc, argv, required, provided)
    })
}

/// Fortran `MPI_INIT` and `MPI_FINALIZE` entry points (all take `ierror` by reference):
/// gfortran's names for `use mpi` and `mpif.h` (Open MPI's Fortran layer calls `PMPI_Init`
/// directly, so the C hooks never see them), Open MPI's functions behind `use mpi_f08`
/// (`ompi_init_f`), and the `mpi_f08` names themselves (MPICH's call `PMPI_Init`). A
/// start-up wrapped in several of them marks the runtime's I/O the same way, and the merge
/// at `MPI_Finalize` runs once.
macro_rules! fortran_lifecycle {
    ($($init:ident),* ; $($finalize:ident),*) => {
        $(
            /// # Safety
            /// Called by a Fortran MPI program with its `ierror` argument.
            #[cfg_attr(not(cairn_wrap), no_mangle)]
            #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($init)))]
            pub unsafe extern "C" fn $init(ierror: *mut c_int) {
                type Real = unsafe extern "C" fn(*mut c_int);
                let Some(real) = crate::real::get(Call::$init) else {
                    return;
                };
                // SAFETY: the next definition of this symbol, with the caller's argument.
                runtime_call(|| unsafe { std::mem::transmute::<usize, Real>(real)(ierror) })
            }
        )*
        $(
            /// # Safety
            /// Called by a Fortran MPI program with its `ierror` argument.
            #[cfg_attr(not(cairn_wrap), no_mangle)]
            #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($finalize)))]
            pub unsafe extern "C" fn $finalize(ierror: *mut c_int) {
                type Real = unsafe extern "C" fn(*mut c_int);
                let Some(real) = crate::real::get(Call::$finalize) else {
                    return;
                };
                runtime_call(|| {
                    crate::finalize::merge_at_finalize(staging_segment());
                    // SAFETY: the next definition of this symbol, with the caller's argument.
                    unsafe { std::mem::transmute::<usize, Real>(real)(ierror) }
                })
            }
        )*
    };
}

fortran_lifecycle!(mpi_init_, ompi_init_f, mpi_init_f08_; mpi_finalize_, ompi_finalize_f, mpi_finalize_f08_);

/// This image's staging segment, for the merge at `MPI_Finalize`.
fn staging_segment() -> Option<Vec<u8>> {
    SEGMENT.with(|segment| {
        segment
            .as_ref()
            .map(|segment| segment.path.as_bytes().to_vec())
    })
}

/// # Safety
/// Called by an MPI program.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Finalize")]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    type Real = unsafe extern "C" fn() -> c_int;
    let Some(real) = crate::real::get(Call::MPI_Finalize) else {
        return -1;
    };
    runtime_call(|| {
        crate::finalize::merge_at_finalize(staging_segment());
        // SAFETY: the next definition of MPI_Finalize.
        unsafe { std::mem::transmute::<usize, Real>(real)() }
    })
}

/// Switches tracing off for the rest of this process image (internal failure); the
/// program carries on untraced.
pub fn disable() {
    STATUS.store(DISABLED, Ordering::Release);
}

fn initialise(from_constructor: bool) {
    if STATUS
        .compare_exchange(
            UNINITIALISED,
            INITIALISING,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_err()
    {
        return;
    }
    if sys::environment(c"CAIRN_DISABLE").is_some_and(|value| !value.is_empty() && value != b"0") {
        STATUS.store(DISABLED, Ordering::Release);
        return;
    }
    if sys::environment(c"CAIRN_RUNS").is_some_and(|value| value == b"0") {
        crate::recorder::RUNS.store(false, Ordering::Relaxed);
    }
    // Below precision 100 a step's changing calls fold as the program runs (`CAIRN_STEPS=0`
    // stages them call by call, to compare).
    if let Some(level) = sys::environment(c"CAIRN_PRECISION") {
        if sys::environment(c"CAIRN_STEPS").is_none_or(|value| value != b"0") {
            crate::recorder::steps::enable_for_precision(&level);
        }
    }
    // Our panics must never print on the program's stderr; a panic disables tracing.
    std::panic::set_hook(Box::new(|_| disable()));
    crate::real::resolve_all();
    let directory = match sys::environment(c"CAIRN_DIR") {
        Some(directory) if !directory.is_empty() => directory,
        // Linked into a static program, the tracer is there on every run: it traces only
        // when asked (`cairn run` sets CAIRN_DIR), never leaving staging in a user's
        // working directory otherwise.
        _ if cfg!(cairn_wrap) => {
            STATUS.store(DISABLED, Ordering::Release);
            return;
        }
        _ => {
            let mut cwd = PathBuffer::new();
            if !sys::getcwd(&mut cwd) || !cwd.push(b"/cairn-trace.d") {
                STATUS.store(DISABLED, Ordering::Release);
                return;
            }
            // Children must share the directory; setenv is only safe before threads exist.
            if from_constructor {
                // SAFETY: NUL-terminated strings; the constructor runs before other threads.
                unsafe { libc::setenv(c"CAIRN_DIR".as_ptr(), cwd.as_ptr(), 0) };
            }
            cwd.as_bytes().to_vec()
        }
    };
    DIRECTORY.with(|slot| *slot = Some(directory));
    if !start_segment(false) {
        STATUS.store(DISABLED, Ordering::Release);
        return;
    }
    if !ONCE_PER_PROCESS_TREE.swap(true, Ordering::AcqRel) {
        // SAFETY: registering plain extern "C" callbacks.
        unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(after_fork_in_parent),
                Some(after_fork_in_child),
            );
            let mut key: libc::pthread_key_t = 0;
            if libc::pthread_key_create(&mut key, Some(thread_exit)) == 0 {
                THREAD_KEY.store(key as usize + 1, Ordering::Release);
            }
        }
    }
    STATUS.store(READY, Ordering::Release);
}

/// Creates this process image's staging segment and writes its header.
fn start_segment(forked: bool) -> bool {
    let Some(directory) = DIRECTORY.with(|slot| slot.clone()) else {
        return false;
    };
    let pid = sys::getpid();
    let nonce = sys::random_u64();
    let mut path = PathBuffer::new();
    if !path.push(&directory) {
        return false;
    }
    sys::mkdir(&path);
    let name = format!("/{pid}-{nonce:016x}.seg");
    if !path.push(name.as_bytes()) {
        return false;
    }
    let mut working_directory = PathBuffer::new();
    sys::getcwd(&mut working_directory);
    let (clock, calibration) = crate::clock::initialise();
    let header = ProcessHeader {
        pid,
        parent_pid: sys::getppid(),
        nonce,
        start_monotonic: sys::clock(libc::CLOCK_MONOTONIC),
        start_realtime: sys::clock(libc::CLOCK_REALTIME),
        executable: {
            let mut link = PathBuffer::new();
            link.push(b"/proc/self/exe");
            let mut target = PathBuffer::new();
            if sys::readlink(&link, &mut target) {
                target.as_bytes().to_vec()
            } else {
                Vec::new()
            }
        },
        command_line: sys::read_small_file(b"/proc/self/cmdline", 32 * 1024),
        working_directory: working_directory.as_bytes().to_vec(),
        hostname: sys::hostname(),
        call_names: Call::ALL
            .iter()
            .map(|call| call.name().to_string())
            .collect(),
        call_kinds: Call::ALL
            .iter()
            .map(|call| {
                let index = |found: Option<usize>| found.unwrap_or(0) as u8;
                (
                    index(Layer::ALL.iter().position(|layer| *layer == call.layer())),
                    index(
                        CallClass::ALL
                            .iter()
                            .position(|class| *class == call.class()),
                    ),
                )
            })
            .collect(),
        forked,
        clock,
        calibration,
        rank: launcher_rank(),
    }
    .encode();
    match Segment::create(path, &header) {
        Some(segment) => {
            SEGMENT.with(|slot| *slot = Some(segment));
            true
        }
        None => false,
    }
}

/// The rank an MPI launcher gave this process, from the environment it sets (Open MPI,
/// PMIx, MPICH/Hydra, MVAPICH, Slurm).
fn launcher_rank() -> Option<u32> {
    const NAMES: [&std::ffi::CStr; 5] = [
        c"OMPI_COMM_WORLD_RANK",
        c"PMIX_RANK",
        c"PMI_RANK",
        c"MV2_COMM_WORLD_RANK",
        c"SLURM_PROCID",
    ];
    NAMES.iter().find_map(|name| {
        sys::environment(name).and_then(|value| std::str::from_utf8(&value).ok()?.parse().ok())
    })
}

extern "C" fn before_fork() {
    // Take every lock so the child gets consistent tables (same order everywhere).
    crate::files::lock_tables();
    crate::context::lock_tables();
    SEGMENT.lock();
    // Last: the critical sections above may allocate.
    crate::allocator::ALLOCATOR.lock();
}

extern "C" fn after_fork_in_parent() {
    crate::allocator::ALLOCATOR.unlock();
    SEGMENT.unlock();
    crate::context::unlock_tables();
    crate::files::unlock_tables();
}

extern "C" fn after_fork_in_child() {
    crate::allocator::ALLOCATOR.unlock();
    SEGMENT.unlock();
    crate::context::unlock_tables();
    crate::files::unlock_tables();
    if STATUS.load(Ordering::Acquire) != READY {
        return;
    }
    GENERATION.fetch_add(1, Ordering::AcqRel);
    recorder::counts_after_fork_in_child();
    if !start_segment(true) {
        disable();
        return;
    }
    // The child's file ids and contexts continue the parent's numbering, so its segment
    // repeats the definitions it inherited.
    recorder::with_current_state(|state| {
        crate::files::replay_definitions(state);
        crate::context::forget_after_fork();
    });
}

/// Arranges for `state` to be released when the calling thread exits.
pub fn register_thread_exit(state: *mut c_void) {
    let key = THREAD_KEY.load(Ordering::Acquire);
    if key != 0 {
        // SAFETY: the key was created by pthread_key_create.
        unsafe { libc::pthread_setspecific((key - 1) as libc::pthread_key_t, state) };
    }
}

unsafe extern "C" fn thread_exit(state: *mut c_void) {
    let state = state.cast::<ThreadState>();
    if state.is_null() {
        return;
    }
    recorder::forget_current_state(state);
    // SAFETY: the pointer was made by Box::into_raw in ThreadState::create for this thread.
    let mut state = unsafe { Box::from_raw(state) };
    state.release();
}

// ---- main and exit ----------------------------------------------------------------------

type MainFunction = unsafe extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;
type StartMain = unsafe extern "C" fn(
    MainFunction,
    c_int,
    *mut *mut c_char,
    Option<unsafe extern "C" fn()>,
    Option<unsafe extern "C" fn()>,
    Option<unsafe extern "C" fn()>,
    *mut c_void,
) -> c_int;

static REAL_MAIN: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn traced_main(
    argc: c_int,
    argv: *mut *mut c_char,
    environment: *mut *mut c_char,
) -> c_int {
    MAIN_STARTED.store(true, Ordering::Release);
    recorder::with_current_state(|state| state.write_mark(mark::MAIN_START, 0));
    // SAFETY: REAL_MAIN holds the program's main, stored just before libc calls us.
    let main: MainFunction =
        unsafe { std::mem::transmute::<usize, MainFunction>(REAL_MAIN.load(Ordering::Acquire)) };
    // SAFETY: calling the program's main with its own arguments.
    unsafe { main(argc, argv, environment) }
}

/// Wraps the program's `main` so the trace knows which I/O happened before it (the
/// dynamic loader's and the C runtime's, not the program's).
///
/// # Safety
/// Called by the C runtime's start code, with its arguments.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap___libc_start_main")]
pub unsafe extern "C" fn __libc_start_main(
    main: MainFunction,
    argc: c_int,
    argv: *mut *mut c_char,
    init: Option<unsafe extern "C" fn()>,
    fini: Option<unsafe extern "C" fn()>,
    rtld_fini: Option<unsafe extern "C" fn()>,
    stack_end: *mut c_void,
) -> c_int {
    let Some(real) = crate::real::get(Call::__libc_start_main) else {
        // SAFETY: without the real start code nothing can run; exit as the kernel would.
        unsafe { libc::syscall(libc::SYS_exit_group, 127) };
        unreachable!("exit_group returned");
    };
    // SAFETY: the pointer is libc's __libc_start_main.
    let real: StartMain = unsafe { std::mem::transmute::<usize, StartMain>(real) };
    REAL_MAIN.store(main as usize, Ordering::Release);
    // SAFETY: forwarding the start code's own arguments, with main wrapped.
    unsafe { real(traced_main, argc, argv, init, fini, rtld_fini, stack_end) }
}

pub fn record_exit_call(status: c_int) {
    record_end(mark::EXIT_CALL, status as u32 as u64);
}

/// The end of the process image (`mark`: exit or `_exit`): first what the trace would
/// otherwise miss — calls of threads beyond the budget, calls after the merge at
/// `MPI_Finalize` — then the mark.
fn record_end(end: u32, value: u64) {
    crate::header_page::sample_kernel_io(false);
    crate::header_page::keep_ending(end, value);
    recorder::with_current_state(|state| {
        recorder::note_refused_calls(state);
        state.write_mark(end, value);
    });
    crate::finalize::report_calls_after_merge(launcher_rank());
}

extern "C" fn at_load() {
    initialise(true);
}

extern "C" fn at_unload() {
    record_end(mark::EXIT, 0);
}

#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: extern "C" fn() = at_load;

/// Linked into a static program, the tracer is pulled from its archive by this symbol
/// (`cairn link-flags` asks the linker for it), which keeps the constructor above with it.
#[cfg(cairn_wrap)]
#[no_mangle]
pub extern "C" fn cairn_static_anchor() {}

/// What `cairn run` looks for in a statically linked program to know it carries the tracer.
#[cfg(cairn_wrap)]
#[used]
#[link_section = ".rodata.cairn_static"]
static STATIC_MARKER: [u8; 24] = *b"cairn-static-tracer-v1\0\0";

#[used]
#[link_section = ".fini_array"]
static DESTRUCTOR: extern "C" fn() = at_unload;

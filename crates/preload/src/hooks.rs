//! The exported hooks. `generated` rows of the call table become hooks here through
//! [`generate_hooks!`]; `custom` rows (C variadics and calls needing state before the call)
//! are written out below, and the variadic stdio ones live in `shim.c`.
//!
//! Every hook follows the same order: forward untraced unless a [`Scope`] can be entered;
//! time the real call; save `errno`; capture the context; let the adapter fill the event;
//! write it; restore `errno`; return the real result.

#![allow(clippy::missing_safety_doc)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use cairn_format::segment::RawEvent;
use cairn_model::event_flags::{
    BEFORE_MAIN, FAILED, INSIDE_LIBRARY, INSIDE_MPIIO, IN_RUNTIME, RUNTIME,
};
use cairn_model::{for_each_call, Call};
#[allow(unused_imports)]
use libc::{
    c_char, c_int, c_long, c_uint, c_ulong, c_void, iovec, mode_t, off64_t, off_t, size_t, ssize_t,
    AT_FDCWD, FILE, O_CREAT, O_EXCL, O_RDWR, O_TRUNC, O_WRONLY,
};

use crate::adapters;
use crate::recorder::{Scope, ThreadState};
use crate::{clock, context, files, lifecycle};

/// An MPI handle in Open MPI's ABI (a pointer to an opaque object).
pub type MpiHandle = *mut c_void;
/// `MPI_Offset` (long long).
pub type MpiOffset = i64;

/// What a hook returns when the real function cannot be found (with errno = ENOSYS).
pub trait FailureValue {
    fn failure() -> Self;
}

macro_rules! failure_values {
    ($($type:ty => $value:expr),*) => { $( impl FailureValue for $type { fn failure() -> Self { $value } } )* };
}
failure_values!(i32 => -1, i64 => -1, isize => -1, usize => 0, () => ());
// Types only generated rows return (`cairn wrapgen`): unsigned and other values have no
// failure value of their own; 0 with ENOSYS.
failure_values!(
    i8 => -1, i16 => -1, u8 => 0, u16 => 0, u32 => 0, u64 => 0, f32 => 0.0, f64 => 0.0,
    bool => false
);

impl<T> FailureValue for *mut T {
    fn failure() -> Self {
        std::ptr::null_mut()
    }
}

impl<T> FailureValue for *const T {
    fn failure() -> Self {
        std::ptr::null()
    }
}

pub(crate) fn missing<R: FailureValue>() -> R {
    errno_set(libc::ENOSYS);
    R::failure()
}

#[inline(always)]
pub(crate) fn errno_get() -> c_int {
    // SAFETY: __errno_location is this thread's errno.
    unsafe { *libc::__errno_location() }
}

#[inline(always)]
fn errno_set(value: c_int) {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = value };
}

/// Flags every event of this thread gets from where it happened.
#[inline(always)]
fn event_context_flags(state: &ThreadState) -> u32 {
    let mut flags = 0;
    if !lifecycle::main_started() {
        flags |= BEFORE_MAIN;
    }
    if lifecycle::in_runtime() {
        flags |= IN_RUNTIME;
    }
    if state.mpiio_depth > 0 {
        flags |= INSIDE_MPIIO;
    }
    if state.library_depth > 0 {
        flags |= INSIDE_LIBRARY;
    }
    flags
}

/// Calls whose repetitions may fold into a run or block record as they happen: those the
/// trace builder tracks nothing of per occurrence beyond the file position (see
/// `recorder::ThreadState::write_event`), opening and closing files by name in POSIX and
/// stdio — a descriptor or stream opened in a block's body starts each repetition where
/// the first did, which the trace builder knows — and every call of a library layer.
/// Duplicating, `fdopen`, `freopen` and MPI-IO opens never fold: what they start depends
/// on more than their values.
#[inline(always)]
const fn fold_kind(call: Call) -> u8 {
    use crate::recorder::fold;
    use cairn_model::CallClass::*;
    use cairn_model::Layer;
    match (call.layer(), call.class()) {
        (_, Read | Write) => fold::TRANSFER,
        (_, Seek | Sync | Flush | Stat | PointToPoint | Collective | Completion) => {
            fold::REPEATABLE
        }
        // The trace builder tracks nothing of a library layer's calls (their ids are the
        // adapters' business, done before recording): any of them may repeat.
        (layer, _) if layer.is_library() => fold::REPEATABLE,
        (Layer::Posix, Open | Close) => fold::REPEATABLE,
        (Layer::Stdio, Open | Close) => match call {
            Call::fopen | Call::fopen64 | Call::fclose => fold::REPEATABLE,
            _ => fold::NEVER,
        },
        _ => fold::NEVER,
    }
}

/// Fills and writes one event. Never unwinds into C: a panic disables tracing.
#[inline(always)]
pub(crate) fn record(
    scope: &Scope,
    call: Call,
    times: Times,
    fill: impl FnOnce(&mut RawEvent, &mut ThreadState) -> bool,
) {
    let state = scope.state();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut event = RawEvent {
            start: times.start,
            duration: times.end.saturating_sub(times.start),
            offset: -1,
            context: times.context,
            flags: event_context_flags(state),
            ..RawEvent::default()
        };
        // A library's public call made by the library itself (HDF5 calling its own API) is
        // part of the program's call recorded around it.
        let nested = call.layer().is_library()
            && event.flags & INSIDE_LIBRARY != 0
            && state.library_layer == call.layer() as u8;
        if !nested && fill(&mut event, state) {
            // A call that returns its error (`posix_fallocate`) has it set by its adapter.
            if event.flags & FAILED != 0 && event.errno == 0 {
                event.errno = times.errno;
            }
            if event.flags & RUNTIME == 0 && !call.is_share() {
                crate::finalize::count_program_call();
            }
            state.write_event(call as u32, &event, fold_kind(call));
        }
    }));
    if outcome.is_err() {
        lifecycle::disable();
    }
}

/// The body every traced hook shares: time the real call, keep its `errno`, capture the
/// context, let `fill` describe the event, restore `errno`, return the real result.
/// Inlined into the hook so the context walk starts at the hook's own frame.
#[inline(always)]
fn traced<R: Copy>(
    scope: &Scope,
    call: Call,
    invoke: impl FnOnce() -> R,
    fill: impl FnOnce(&mut RawEvent, &mut ThreadState, R) -> bool,
) -> R {
    traced_with(scope, call, invoke, |scope, times, ret| {
        record(scope, call, times, |event, state| fill(event, state, ret))
    })
}

/// When and how a traced call ended, for [`record`]: start and end clock readings, its
/// `errno` and its context.
#[derive(Clone, Copy)]
pub(crate) struct Times {
    pub start: u64,
    pub end: u64,
    pub errno: c_int,
    pub context: u32,
}

/// [`traced`] for hooks that write their own events (`write` gets the call's times and
/// result and records as many events as the call stands for).
#[inline(always)]
pub(crate) fn traced_with<R: Copy>(
    scope: &Scope,
    call: Call,
    invoke: impl FnOnce() -> R,
    write: impl FnOnce(&Scope, Times, R),
) -> R {
    let start = clock::now();
    let mpiio = call.layer() == cairn_model::Layer::MpiIo;
    let library = call.layer().is_library();
    if mpiio {
        scope.state().mpiio_depth += 1;
    }
    if library {
        let state = scope.state();
        if state.library_depth == 0 {
            state.library_layer = call.layer() as u8;
        }
        state.library_depth += 1;
    }
    scope.pause();
    let ret = invoke();
    let errno = errno_get();
    scope.resume();
    if mpiio {
        scope.state().mpiio_depth -= 1;
    }
    if library {
        scope.state().library_depth -= 1;
    }
    let end = clock::now();
    let context = context::capture(scope.state(), 0);
    let times = Times {
        start,
        end,
        errno,
        context,
    };
    write(scope, times, ret);
    errno_set(errno);
    ret
}

macro_rules! generate_hooks {
    ($( $name:ident $layer:ident $class:ident $kind:ident
        $( ( $($arg:ident : $ty:ty),* ) -> $ret:ty => $adapter:ident ( $($adapter_arg:expr),* ) )? ; )*) => {
        $( generate_hooks!(@row $name $( ( $($arg : $ty),* ) -> $ret => $adapter ( $($adapter_arg),* ) )? ); )*
    };
    (@row $name:ident) => {};
    (@row $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty => $adapter:ident ( $($adapter_arg:expr),* )) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            type Real = unsafe extern "C" fn($($ty),*) -> $ret;
            let Some(real) = crate::real::get(Call::$name) else { return missing() };
            // SAFETY: `real` is the next definition of this very symbol.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            // Each Fortran call is traced by exactly one hook, which depends on the MPI.
            const BINDING: cairn_model::FortranBinding = Call::$name.fortran_binding();
            let traced_elsewhere = crate::mpi_abi::traced_elsewhere(BINDING);
            let Some(scope) = Scope::enter().filter(|_| !traced_elsewhere) else {
                // SAFETY: forwarding the caller's own arguments.
                return unsafe { real($($arg),*) };
            };
            traced(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's own arguments.
                || unsafe { real($($arg),*) },
                #[allow(clippy::unit_arg)]
                |event, state, ret| adapters::$adapter(event, state, $($adapter_arg,)* ret),
            )
        }
    };
}

for_each_call!(generate_hooks);

// ---- custom rows ---------------------------------------------------------------------------

/// `open`-style calls are C-variadic: defined with `mode` as a fixed third argument (sound
/// on the Linux ABIs we build for: the optional argument is in the third register) and
/// forwarded through a variadic pointer so the callee sees a proper variadic call.
macro_rules! open_hook {
    ($name:ident, at) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(
            dirfd: c_int,
            path: *const c_char,
            flags: c_int,
            mode: c_uint,
        ) -> c_int {
            type Real = unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;
            let Some(real) = crate::real::get(Call::$name) else {
                return missing();
            };
            // SAFETY: the next definition of this symbol, which is variadic.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            let Some(scope) = Scope::enter() else {
                // SAFETY: forwarding the caller's arguments.
                return unsafe { real(dirfd, path, flags, mode) };
            };
            traced(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's arguments.
                || unsafe { real(dirfd, path, flags, mode) },
                |event, state, ret| {
                    adapters::path_open(event, state, dirfd, path, flags, mode, ret)
                },
            )
        }
    };
    ($name:ident) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
            type Real = unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int;
            let Some(real) = crate::real::get(Call::$name) else {
                return missing();
            };
            // SAFETY: the next definition of this symbol, which is variadic.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            let Some(scope) = Scope::enter() else {
                // SAFETY: forwarding the caller's arguments.
                return unsafe { real(path, flags, mode) };
            };
            traced(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's arguments.
                || unsafe { real(path, flags, mode) },
                |event, state, ret| {
                    adapters::path_open(event, state, AT_FDCWD, path, flags, mode, ret)
                },
            )
        }
    };
}

open_hook!(open);
open_hook!(open64);
open_hook!(openat, at);
open_hook!(openat64, at);

macro_rules! fcntl_hook {
    ($name:ident) => {
        /// Only descriptor duplication is recorded; every other command is forwarded as is.
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(fd: c_int, command: c_int, argument: c_ulong) -> c_int {
            type Real = unsafe extern "C" fn(c_int, c_int, ...) -> c_int;
            let Some(real) = crate::real::get(Call::$name) else {
                return missing();
            };
            // SAFETY: the next definition of this symbol, which is variadic.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            let duplicates = command == libc::F_DUPFD || command == libc::F_DUPFD_CLOEXEC;
            let scope = if duplicates { Scope::enter() } else { None };
            let Some(scope) = scope else {
                // SAFETY: forwarding the caller's arguments.
                return unsafe { real(fd, command, argument) };
            };
            traced(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's arguments.
                || unsafe { real(fd, command, argument) },
                |event, state, ret| adapters::fd_dup(event, state, fd, ret),
            )
        }
    };
}

fcntl_hook!(fcntl);
fcntl_hook!(fcntl64);

/// Recorded only for mappings of files that `mmap` recorded.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_munmap")]
pub unsafe extern "C" fn munmap(address: *mut c_void, length: size_t) -> c_int {
    type Real = unsafe extern "C" fn(*mut c_void, size_t) -> c_int;
    let Some(real) = crate::real::get(Call::munmap) else {
        return missing();
    };
    // SAFETY: the next definition of munmap.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    let Some(scope) = Scope::enter() else {
        // SAFETY: forwarding the caller's arguments.
        return unsafe { real(address, length) };
    };
    traced(
        &scope,
        Call::munmap,
        // SAFETY: forwarding the caller's arguments.
        || unsafe { real(address, length) },
        |event, _, ret| {
            files::take_mapping(address as usize)
                .is_some_and(|mapping| adapters::unmap(event, &mapping, ret))
        },
    )
}

/// Needs the stream's descriptor and file before the stream is gone.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_fclose")]
pub unsafe extern "C" fn fclose(stream: *mut FILE) -> c_int {
    type Real = unsafe extern "C" fn(*mut FILE) -> c_int;
    let Some(real) = crate::real::get(Call::fclose) else {
        return missing();
    };
    // SAFETY: the next definition of fclose.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    let Some(scope) = Scope::enter() else {
        // SAFETY: forwarding the caller's argument.
        return unsafe { real(stream) };
    };
    let (file, fd) = files::file_for_stream(scope.state(), stream);
    traced(
        &scope,
        Call::fclose,
        // SAFETY: forwarding the caller's argument.
        || unsafe { real(stream) },
        |event, _, ret| adapters::stream_close(event, file, fd, stream, ret),
    )
}

/// Needs the file handle before the call sets it to MPI_FILE_NULL.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_File_close")]
pub unsafe extern "C" fn MPI_File_close(file: *mut MpiHandle) -> c_int {
    type Real = unsafe extern "C" fn(*mut MpiHandle) -> c_int;
    let Some(real) = crate::real::get(Call::MPI_File_close) else {
        return missing();
    };
    // SAFETY: the next definition of MPI_File_close.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    let Some(scope) = Scope::enter() else {
        // SAFETY: forwarding the caller's argument.
        return unsafe { real(file) };
    };
    // SAFETY: the program passes a valid MPI_File pointer.
    let handle = if file.is_null() {
        std::ptr::null_mut()
    } else {
        unsafe { *file }
    };
    traced(
        &scope,
        Call::MPI_File_close,
        // SAFETY: forwarding the caller's argument.
        || unsafe { real(file) },
        |event, _, ret| adapters::mpi_file_close(event, handle, ret),
    )
}

/// Fortran `MPI_FILE_CLOSE` (gfortran's name, Open MPI's function behind `use mpi_f08`, and
/// the `mpi_f08` name MPICH sends to PMPI): the handle is read before the real call sets it
/// to `MPI_FILE_NULL`.
macro_rules! fortran_file_close_hook {
    ($($name:ident),*) => {
        $(
            /// # Safety
            /// Called by a Fortran MPI program with its arguments (all by reference).
            #[cfg_attr(not(cairn_wrap), no_mangle)]
            #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
            pub unsafe extern "C" fn $name(file: *mut c_int, ierror: *mut c_int) {
                type Real = unsafe extern "C" fn(*mut c_int, *mut c_int);
                let Some(real) = crate::real::get(Call::$name) else {
                    return;
                };
                // SAFETY: the next definition of this symbol.
                let real = unsafe { std::mem::transmute::<usize, Real>(real) };
                const BINDING: cairn_model::FortranBinding = Call::$name.fortran_binding();
                let traced_elsewhere = crate::mpi_abi::traced_elsewhere(BINDING);
                let Some(scope) = Scope::enter().filter(|_| !traced_elsewhere) else {
                    // SAFETY: forwarding the caller's arguments.
                    return unsafe { real(file, ierror) };
                };
                // SAFETY: Fortran passes the handle by reference.
                let handle = if file.is_null() { 0 } else { unsafe { *file } };
                let c_handle = crate::mpi_abi::c_file_of_fortran(handle);
                traced(
                    &scope,
                    Call::$name,
                    // SAFETY: forwarding the caller's arguments.
                    || unsafe { real(file, ierror) },
                    |event, _, ()| adapters::fortran_file_close(event, handle, c_handle, ierror),
                )
            }
        )*
    };
}

fortran_file_close_hook!(mpi_file_close_, ompi_file_close_f, mpi_file_close_f08_);

/// Takes the descriptor's file out of the table before the real close: once the number is
/// free, another thread's `open` may get it and bind its own file.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_close")]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    type Real = unsafe extern "C" fn(c_int) -> c_int;
    let Some(real) = crate::real::get(Call::close) else {
        return missing();
    };
    // SAFETY: the next definition of close.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    let Some(scope) = Scope::enter() else {
        // Untraced (inside the tracer): the binding still goes, or a reused number would
        // name the old file.
        crate::files::unbind_descriptor(fd);
        // SAFETY: forwarding the caller's argument.
        return unsafe { real(fd) };
    };
    let file = crate::files::take_descriptor(fd);
    traced(
        &scope,
        Call::close,
        // SAFETY: forwarding the caller's argument.
        || unsafe { real(fd) },
        |event, _, ret| adapters::fd_close(event, fd, file, ret),
    )
}

macro_rules! exit_hook {
    ($name:ident) => {
        /// Marks the end of the process image; everything recorded is already in the
        /// segment file, so nothing needs flushing.
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(status: c_int) -> ! {
            type Real = unsafe extern "C" fn(c_int) -> !;
            lifecycle::record_exit_call(status);
            if let Some(real) = crate::real::get(Call::$name) {
                // SAFETY: the next definition of this symbol.
                unsafe { std::mem::transmute::<usize, Real>(real)(status) }
            }
            loop {
                // SAFETY: ends the process as _exit would.
                unsafe { libc::syscall(libc::SYS_exit_group, status) };
            }
        }
    };
}

exit_hook!(_exit);
exit_hook!(_Exit);

// ---- entry points for the C shim (shim.c) --------------------------------------------------

/// The shim's call codes (`SHIM_*` in shim.c), in order.
const SHIM_CALLS: [Call; 8] = [
    Call::fprintf,
    Call::vfprintf,
    Call::__fprintf_chk,
    Call::__vfprintf_chk,
    Call::fscanf,
    Call::__isoc99_fscanf,
    Call::vfscanf,
    Call::__isoc99_vfscanf,
];

fn shim_call(code: c_int) -> Option<Call> {
    SHIM_CALLS.get(usize::try_from(code).ok()?).copied()
}

/// State kept by the shim between begin and end (`struct cairn_pending`).
#[repr(C)]
pub struct Pending {
    slot: usize,
    state: usize,
    start: u64,
    context: u64,
}

#[no_mangle]
pub unsafe extern "C" fn cairn_real_function(code: c_int) -> *mut c_void {
    shim_call(code)
        .and_then(crate::real::get)
        .map_or(std::ptr::null_mut(), |address| address as *mut c_void)
}

/// Starts tracing a shim call; returns 0 if it must go untraced.
#[no_mangle]
pub unsafe extern "C" fn cairn_stdio_begin(pending: *mut Pending) -> c_int {
    let Some(scope) = Scope::enter() else {
        return 0;
    };
    // Frames between the program and here: cairn_stdio_begin, traced_*, the shim hook.
    let context = context::capture(scope.state(), 2);
    // SAFETY: the shim passes a pointer to its own stack struct.
    let pending = unsafe { &mut *pending };
    pending.context = context as u64;
    scope.pause();
    (pending.slot, pending.state) = scope.into_parts();
    pending.start = clock::now();
    1
}

#[no_mangle]
pub unsafe extern "C" fn cairn_stdio_end(
    pending: *mut Pending,
    code: c_int,
    stream: *mut FILE,
    result: i64,
) {
    let errno = errno_get();
    let end = clock::now();
    // SAFETY: the shim passes the struct that begin filled.
    let pending = unsafe { &mut *pending };
    // SAFETY: begin returned 1, so the parts come from Scope::into_parts on this thread.
    let scope = unsafe { Scope::from_parts(pending.slot, pending.state) };
    scope.resume();
    if let Some(call) = shim_call(code) {
        let is_write = call.class() == cairn_model::CallClass::Write;
        let times = Times {
            start: pending.start,
            end,
            errno,
            context: pending.context as u32,
        };
        record(&scope, call, times, |event, state| {
            adapters::stream_formatted(event, state, stream, result, is_write)
        });
    }
    drop(scope);
    errno_set(errno);
}

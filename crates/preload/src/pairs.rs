//! Hooks of calls that write more than one event: a call moving bytes between two
//! descriptors (`copy_file_range`, `sendfile`, `splice`, `tee`) is a read on the source,
//! with the call's time, and right after it its `_into` share, a write of the same bytes on
//! the destination with no time of its own, so every analysis counts both files without
//! knowing these calls; `aio_return` writes the bytes it collected as the `_done` share of
//! the submission's direction; `closedir` forgets the stream's descriptor, which it closes
//! without our `close`. Also here, as custom hooks with work around the real call:
//! `chdir` and `fchdir`, not recorded, which drop the threads' copies of the working
//! directory after the real call.

#![allow(clippy::missing_safety_doc)]

use cairn_model::Call;
use libc::{c_char, c_int, c_uint, c_void, off64_t, size_t, ssize_t};

use crate::adapters;
use crate::files;
use crate::hooks::{missing, record, traced_with, Times};
use crate::recorder::Scope;

/// The offset a pointer argument held before the call, or -1 (the descriptor's position).
fn offset_before(pointer: *const off64_t) -> i64 {
    // SAFETY: the program passed this pointer (or null) to the call about to be made.
    unsafe { pointer.as_ref() }.map_or(-1, |offset| *offset)
}

/// Records a two-descriptor call: the source's event, then the destination's share.
#[inline(always)]
fn write_pair(
    scope: &Scope,
    (call, into): (Call, Call),
    times: Times,
    (source, source_offset): (c_int, i64),
    (destination, destination_offset): (c_int, i64),
    requested: size_t,
    ret: ssize_t,
) {
    record(scope, call, times, |event, state| {
        adapters::fd_transfer(event, state, source, requested, source_offset, ret)
    });
    let share = Times {
        start: times.end,
        ..times
    };
    record(scope, into, share, |event, state| {
        adapters::fd_transfer(
            event,
            state,
            destination,
            requested,
            destination_offset,
            ret,
        )
    });
}

/// `copy_file_range` and `splice`: (in, offset in, out, offset out, length, flags).
macro_rules! two_offsets_hook {
    ($name:ident, $into:ident) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(
            fd_in: c_int,
            offset_in: *mut off64_t,
            fd_out: c_int,
            offset_out: *mut off64_t,
            length: size_t,
            flags: c_uint,
        ) -> ssize_t {
            type Real = unsafe extern "C" fn(
                c_int,
                *mut off64_t,
                c_int,
                *mut off64_t,
                size_t,
                c_uint,
            ) -> ssize_t;
            let Some(real) = crate::real::get(Call::$name) else {
                return missing();
            };
            // SAFETY: the next definition of this symbol.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            let Some(scope) = Scope::enter() else {
                // SAFETY: forwarding the caller's arguments.
                return unsafe { real(fd_in, offset_in, fd_out, offset_out, length, flags) };
            };
            let source = (fd_in, offset_before(offset_in));
            let destination = (fd_out, offset_before(offset_out));
            traced_with(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's arguments.
                || unsafe { real(fd_in, offset_in, fd_out, offset_out, length, flags) },
                |scope, times, ret| {
                    let calls = (Call::$name, Call::$into);
                    write_pair(scope, calls, times, source, destination, length, ret)
                },
            )
        }
    };
}

two_offsets_hook!(copy_file_range, copy_file_range_into);
two_offsets_hook!(splice, splice_into);

/// `sendfile`: (out, in, offset in, count); the destination writes at its position.
macro_rules! sendfile_hook {
    ($name:ident, $into:ident) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(
            fd_out: c_int,
            fd_in: c_int,
            offset: *mut off64_t,
            count: size_t,
        ) -> ssize_t {
            type Real = unsafe extern "C" fn(c_int, c_int, *mut off64_t, size_t) -> ssize_t;
            let Some(real) = crate::real::get(Call::$name) else {
                return missing();
            };
            // SAFETY: the next definition of this symbol.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            let Some(scope) = Scope::enter() else {
                // SAFETY: forwarding the caller's arguments.
                return unsafe { real(fd_out, fd_in, offset, count) };
            };
            let source = (fd_in, offset_before(offset));
            traced_with(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's arguments.
                || unsafe { real(fd_out, fd_in, offset, count) },
                |scope, times, ret| {
                    let calls = (Call::$name, Call::$into);
                    write_pair(scope, calls, times, source, (fd_out, -1), count, ret)
                },
            )
        }
    };
}

sendfile_hook!(sendfile, sendfile_into);
sendfile_hook!(sendfile64, sendfile64_into);

/// `tee`: copies a pipe's contents into another pipe, both at their positions.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_tee")]
pub unsafe extern "C" fn tee(
    fd_in: c_int,
    fd_out: c_int,
    length: size_t,
    flags: c_uint,
) -> ssize_t {
    type Real = unsafe extern "C" fn(c_int, c_int, size_t, c_uint) -> ssize_t;
    let Some(real) = crate::real::get(Call::tee) else {
        return missing();
    };
    // SAFETY: the next definition of tee.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    let Some(scope) = Scope::enter() else {
        // SAFETY: forwarding the caller's arguments.
        return unsafe { real(fd_in, fd_out, length, flags) };
    };
    traced_with(
        &scope,
        Call::tee,
        // SAFETY: forwarding the caller's arguments.
        || unsafe { real(fd_in, fd_out, length, flags) },
        |scope, times, ret| {
            let calls = (Call::tee, Call::tee_into);
            write_pair(scope, calls, times, (fd_in, -1), (fd_out, -1), length, ret)
        },
    )
}

/// `aio_return`: the bytes of a submission seen by `aio_read`/`aio_write`/`lio_listio`
/// are written as that direction's `_done` share; a request never seen submitted is
/// recorded as `aio_return` itself (its bytes kept as the result, counted as no direction).
macro_rules! aio_return_hook {
    ($name:ident) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(request: *mut c_void) -> ssize_t {
            type Real = unsafe extern "C" fn(*mut c_void) -> ssize_t;
            let Some(real) = crate::real::get(Call::$name) else {
                return missing();
            };
            // SAFETY: the next definition of this symbol.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            let Some(scope) = Scope::enter() else {
                // SAFETY: forwarding the caller's argument.
                return unsafe { real(request) };
            };
            let submission = files::take_submission(request as usize);
            let call = match submission.map(|submission| submission.direction) {
                Some(0) => Call::aio_read_done,
                Some(_) => Call::aio_write_done,
                None => Call::$name,
            };
            traced_with(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's argument.
                || unsafe { real(request) },
                |scope, times, ret| {
                    record(scope, call, times, |event, state| {
                        adapters::aio_collected(event, state, request, submission, ret)
                    })
                },
            )
        }
    };
}

aio_return_hook!(aio_return);
aio_return_hook!(aio_return64);

/// `closedir` closes the stream's descriptor inside the C library, past our `close`: its
/// binding goes before the real call, as `close`'s does.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_closedir")]
pub unsafe extern "C" fn closedir(directory: *mut c_void) -> c_int {
    type Real = unsafe extern "C" fn(*mut c_void) -> c_int;
    let Some(real) = crate::real::get(Call::closedir) else {
        return missing();
    };
    // SAFETY: the next definition of closedir.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    let fd = if directory.is_null() {
        -1
    } else {
        // SAFETY: the program's open directory stream; dirfd only reads a field.
        unsafe { libc::dirfd(directory.cast()) }
    };
    let Some(scope) = Scope::enter() else {
        files::unbind_descriptor(fd);
        // SAFETY: forwarding the caller's argument.
        return unsafe { real(directory) };
    };
    let file = files::file_for_descriptor(scope.state(), fd);
    files::unbind_descriptor(fd);
    traced_with(
        &scope,
        Call::closedir,
        // SAFETY: forwarding the caller's argument.
        || unsafe { real(directory) },
        |scope, times, ret| {
            record(scope, Call::closedir, times, |event, _| {
                adapters::fd_close(event, fd, file, ret)
            })
        },
    )
}

/// `chdir` and `fchdir`: forwarded, then every thread's copy of the working directory is
/// dropped (`files::working_directory_changed`). Not recorded: the directory a program
/// works in is not one of its files, and every name it opens is made absolute against it
/// (Darshan does not count them either).
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_chdir")]
pub unsafe extern "C" fn chdir(path: *const c_char) -> c_int {
    type Real = unsafe extern "C" fn(*const c_char) -> c_int;
    let Some(real) = crate::real::get(Call::chdir) else {
        return missing();
    };
    // SAFETY: the next definition of chdir.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    // SAFETY: forwarding the caller's argument.
    let ret = unsafe { real(path) };
    files::working_directory_changed();
    ret
}

#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_fchdir")]
pub unsafe extern "C" fn fchdir(fd: c_int) -> c_int {
    type Real = unsafe extern "C" fn(c_int) -> c_int;
    let Some(real) = crate::real::get(Call::fchdir) else {
        return missing();
    };
    // SAFETY: the next definition of fchdir.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    // SAFETY: forwarding the caller's argument.
    let ret = unsafe { real(fd) };
    files::working_directory_changed();
    ret
}

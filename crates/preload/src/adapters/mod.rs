//! Adapters: how one call's arguments and result become an event's fields.
//!
//! Each call-table row names one adapter. An adapter gets the event (start, duration and
//! context already set), the thread state, the arguments the row lists, and the call's
//! return value last. It returns `false` when the call is not file I/O and must not be
//! recorded (an anonymous `mmap`).

// An adapter takes the event, the thread state, the arguments its call-table row lists and
// the return value: as many parameters as the row needs.
#![allow(clippy::too_many_arguments)]

use cairn_format::segment::{path_origin, RawEvent};
use cairn_model::event_flags::{EXPLICIT_OFFSET, FAILED, REQUEST_AT_POSITION, RESULT_AT_POSITION};
use cairn_model::positional;
use libc::{c_char, c_int, c_long, c_void, iovec, mode_t, size_t, ssize_t, FILE};

use crate::files::{self, Mapping};
use crate::recorder::ThreadState;

fn fail_if(event: &mut RawEvent, failed: bool) {
    if failed {
        event.flags |= FAILED;
    }
}

fn explicit_offset(event: &mut RawEvent, offset: i64) {
    if offset >= 0 {
        event.offset = offset;
        event.flags |= EXPLICIT_OFFSET;
    }
}

/// A seek that reached `event.offset` (already set): its result, and its request when it
/// asked for that very position (`SEEK_SET`), are stored as differences from it
/// (`cairn_model::positional`), so that a loop seeking to `i * size` repeats its values.
fn at_position(event: &mut RawEvent, result_is_position: bool) {
    if event.offset < 0 {
        return;
    }
    if event.aux == libc::SEEK_SET as u64 {
        event.flags |= REQUEST_AT_POSITION;
    }
    if result_is_position {
        event.flags |= RESULT_AT_POSITION;
    }
    (event.request, event.result) =
        positional::relative(event.flags, event.offset, event.request, event.result);
}

fn descriptor(event: &mut RawEvent, state: &mut ThreadState, fd: c_int) {
    event.file = files::file_for_descriptor(state, fd);
    event.handle = fd as i64 as u64;
}

/// Open flags of an fopen mode string, so the reader treats both layers alike.
fn mode_flags(mode: *const c_char) -> c_int {
    if mode.is_null() {
        return 0;
    }
    // SAFETY: the program passed a NUL-terminated mode string.
    let mode = unsafe { std::ffi::CStr::from_ptr(mode) }.to_bytes();
    let plus = mode.contains(&b'+');
    match mode.first() {
        Some(b'r') if plus => libc::O_RDWR,
        Some(b'r') => libc::O_RDONLY,
        Some(b'w') if plus => libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC,
        Some(b'w') => libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
        Some(b'a') if plus => libc::O_RDWR | libc::O_CREAT | libc::O_APPEND,
        Some(b'a') => libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
        _ => 0,
    }
}

pub fn path_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
    ret: c_int,
) -> bool {
    event.file = files::file_for_path(state, dirfd, path, path_origin::OPENED);
    event.handle = ret as i64 as u64;
    event.aux = flags as u32 as u64;
    // The mode argument is only passed (and only meaningful) when the call may create.
    let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    event.request = if creates { mode as u64 } else { 0 };
    event.result = ret as i64;
    fail_if(event, ret < 0);
    if ret >= 0 {
        files::bind_descriptor(ret, event.file);
    }
    true
}

/// `file` was taken from the descriptor table before the real close (see the hook).
pub fn fd_close(event: &mut RawEvent, fd: c_int, file: u32, ret: c_int) -> bool {
    event.file = file;
    event.handle = fd as i64 as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

pub fn fd_transfer(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    count: size_t,
    offset: i64,
    ret: ssize_t,
) -> bool {
    descriptor(event, state, fd);
    event.request = count as u64;
    event.result = ret as i64;
    explicit_offset(event, offset);
    fail_if(event, ret < 0);
    true
}

pub fn fd_vector(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    vector: *const iovec,
    count: c_int,
    offset: i64,
    ret: ssize_t,
) -> bool {
    descriptor(event, state, fd);
    let mut requested = 0u64;
    if !vector.is_null() && count > 0 {
        // SAFETY: the kernel accepted (or rejected) this vector; it has `count` entries,
        // capped at IOV_MAX as the kernel does.
        let entries = unsafe { std::slice::from_raw_parts(vector, count.min(1024) as usize) };
        requested = entries.iter().fold(0u64, |total, entry| {
            total.saturating_add(entry.iov_len as u64)
        });
    }
    event.request = requested;
    event.aux = count as u32 as u64;
    event.result = ret as i64;
    explicit_offset(event, offset);
    fail_if(event, ret < 0);
    true
}

pub fn fd_seek(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    offset: i64,
    whence: c_int,
    ret: i64,
) -> bool {
    descriptor(event, state, fd);
    event.request = offset as u64;
    event.aux = whence as u32 as u64;
    event.result = ret;
    if ret >= 0 {
        event.offset = ret;
        at_position(event, true);
    }
    fail_if(event, ret < 0);
    true
}

pub fn fd_status(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    value: i64,
    ret: c_int,
) -> bool {
    descriptor(event, state, fd);
    event.aux = value as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

/// A call on a descriptor that returns its error number instead of setting `errno`
/// (`posix_fallocate`, `posix_fadvise`): kept as the event's errno.
pub fn fd_status_returned(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    value: i64,
    ret: c_int,
) -> bool {
    fd_status(event, state, fd, value, ret);
    if ret > 0 {
        event.errno = ret;
        fail_if(event, true);
    }
    true
}

pub fn fd_dup(event: &mut RawEvent, state: &mut ThreadState, old: c_int, ret: c_int) -> bool {
    descriptor(event, state, old);
    event.result = ret as i64;
    fail_if(event, ret < 0);
    if ret >= 0 {
        files::bind_descriptor(ret, event.file);
    }
    true
}

pub fn fd_map(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    length: size_t,
    flags: c_int,
    offset: i64,
    ret: *mut c_void,
) -> bool {
    if fd < 0 || flags & libc::MAP_ANONYMOUS != 0 {
        return false;
    }
    descriptor(event, state, fd);
    event.request = length as u64;
    event.aux = ret as u64;
    explicit_offset(event, offset);
    let failed = ret == libc::MAP_FAILED;
    event.result = if failed { -1 } else { 0 };
    fail_if(event, failed);
    if !failed {
        files::remember_mapping(Mapping {
            address: ret as usize,
            length,
            file: event.file,
            fd,
        });
    }
    true
}

pub fn unmap(event: &mut RawEvent, mapping: &Mapping, ret: c_int) -> bool {
    event.file = mapping.file;
    event.handle = mapping.fd as i64 as u64;
    event.request = mapping.length as u64;
    event.aux = mapping.address as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

pub fn path_status(
    event: &mut RawEvent,
    state: &mut ThreadState,
    dirfd: c_int,
    path: *const c_char,
    value: impl TryInto<i64>,
    ret: c_int,
) -> bool {
    event.file = files::file_for_path(state, dirfd, path, path_origin::NAMED);
    event.handle = dirfd as i64 as u64;
    event.aux = value.try_into().unwrap_or(0) as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

pub fn path_rename(
    event: &mut RawEvent,
    state: &mut ThreadState,
    old: *const c_char,
    new: *const c_char,
    ret: c_int,
) -> bool {
    path_rename_at(event, state, libc::AT_FDCWD, old, libc::AT_FDCWD, new, ret)
}

/// A rename: the old name is the event's file, the new one's file id is in `aux`.
pub fn path_rename_at(
    event: &mut RawEvent,
    state: &mut ThreadState,
    old_dirfd: c_int,
    old: *const c_char,
    new_dirfd: c_int,
    new: *const c_char,
    ret: c_int,
) -> bool {
    event.file = files::file_for_path(state, old_dirfd, old, path_origin::NAMED);
    event.aux = files::file_for_path(state, new_dirfd, new, path_origin::NAMED) as u64;
    event.handle = old_dirfd as i64 as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

/// `utimensat`: by name, or on the descriptor itself when the name is null.
pub fn path_or_fd_status(
    event: &mut RawEvent,
    state: &mut ThreadState,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    ret: c_int,
) -> bool {
    if path.is_null() {
        fd_status(event, state, dirfd, flags as i64, ret)
    } else {
        path_status(event, state, dirfd, path, flags, ret)
    }
}

/// `readahead`: the range asked for.
pub fn fd_advice(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    offset: i64,
    count: size_t,
    ret: ssize_t,
) -> bool {
    descriptor(event, state, fd);
    event.offset = offset;
    event.request = count as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

/// The descriptor of a directory stream (-1 for none).
fn directory_descriptor(directory: *mut c_void) -> c_int {
    if directory.is_null() {
        return -1;
    }
    // SAFETY: the program's directory stream, still open; dirfd only reads a field.
    unsafe { libc::dirfd(directory.cast()) }
}

/// `opendir`: the directory by name; the stream's descriptor is the handle, bound to the
/// name so later reads of the stream find it.
pub fn dir_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    path: *const c_char,
    ret: *mut c_void,
) -> bool {
    event.file = files::file_for_path(state, libc::AT_FDCWD, path, path_origin::NAMED);
    let fd = directory_descriptor(ret);
    event.handle = fd as i64 as u64;
    event.result = if ret.is_null() { -1 } else { 0 };
    fail_if(event, ret.is_null());
    if fd >= 0 {
        files::bind_descriptor(fd, event.file);
    }
    true
}

/// `fdopendir`: the directory a descriptor already names.
pub fn dir_from_fd(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    ret: *mut c_void,
) -> bool {
    descriptor(event, state, fd);
    event.result = if ret.is_null() { -1 } else { 0 };
    fail_if(event, ret.is_null());
    true
}

/// `readdir`: 1 when it returned an entry, 0 at the end (or on an error, which `readdir`
/// does not tell apart from the end without the caller's `errno`).
pub fn dir_read(
    event: &mut RawEvent,
    state: &mut ThreadState,
    directory: *mut c_void,
    ret: *mut c_void,
) -> bool {
    descriptor(event, state, directory_descriptor(directory));
    event.result = (!ret.is_null()) as i64;
    true
}

fn stream(event: &mut RawEvent, state: &mut ThreadState, stream: *mut FILE) {
    let (file, fd) = files::file_for_stream(state, stream);
    event.file = file;
    event.handle = stream as u64;
    event.aux = fd as i64 as u64;
}

/// True when a stdio call's failure is a real error rather than end of file.
fn stream_error(stream: *mut FILE) -> bool {
    // SAFETY: the program used this stream in the call just made.
    !stream.is_null() && unsafe { libc::ferror(stream) } != 0
}

pub fn stream_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    path: *const c_char,
    mode: *const c_char,
    ret: *mut FILE,
) -> bool {
    event.file = files::file_for_path(state, libc::AT_FDCWD, path, path_origin::OPENED);
    event.handle = ret as u64;
    event.request = mode_flags(mode) as u32 as u64;
    if ret.is_null() {
        event.result = -1;
        event.aux = u64::MAX;
        fail_if(event, true);
    } else {
        // SAFETY: fopen returned a valid stream.
        let fd = unsafe { libc::fileno(ret) };
        event.aux = fd as i64 as u64;
        files::bind_descriptor(fd, event.file);
    }
    true
}

pub fn stream_fdopen(
    event: &mut RawEvent,
    state: &mut ThreadState,
    fd: c_int,
    mode: *const c_char,
    ret: *mut FILE,
) -> bool {
    event.file = files::file_for_descriptor(state, fd);
    event.handle = ret as u64;
    event.aux = fd as i64 as u64;
    event.request = mode_flags(mode) as u32 as u64;
    event.result = if ret.is_null() { -1 } else { 0 };
    fail_if(event, ret.is_null());
    true
}

pub fn stream_close(
    event: &mut RawEvent,
    file: u32,
    fd: c_int,
    handle: *mut FILE,
    ret: c_int,
) -> bool {
    event.file = file;
    event.handle = handle as u64;
    event.aux = fd as i64 as u64;
    event.result = ret as i64;
    fail_if(event, ret != 0);
    if fd >= 0 {
        files::unbind_descriptor(fd);
    }
    true
}

pub fn stream_items(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    size: size_t,
    items: size_t,
    ret: size_t,
) -> bool {
    stream(event, state, handle);
    event.request = (size as u64).saturating_mul(items as u64);
    event.result = (size as u64).saturating_mul(ret as u64) as i64;
    fail_if(event, ret < items && stream_error(handle));
    true
}

pub fn stream_line(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    size: c_int,
    buffer: *mut c_char,
    ret: *mut c_char,
) -> bool {
    stream(event, state, handle);
    event.request = size.max(0) as u64;
    event.result = if ret.is_null() {
        0
    } else {
        // SAFETY: fgets returned the buffer, NUL-terminated.
        unsafe { std::ffi::CStr::from_ptr(buffer) }.to_bytes().len() as i64
    };
    fail_if(event, ret.is_null() && stream_error(handle));
    true
}

pub fn stream_count(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    ret: ssize_t,
) -> bool {
    stream(event, state, handle);
    event.result = ret.max(0) as i64;
    fail_if(event, ret < 0 && stream_error(handle));
    true
}

/// fprintf / fscanf family (from the C shim): the result counts bytes written for the
/// printf family and items matched for the scanf family.
pub fn stream_formatted(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    ret: i64,
    is_write: bool,
) -> bool {
    stream(event, state, handle);
    if is_write {
        event.request = ret.max(0) as u64;
        event.result = ret.max(0);
    } else {
        // scanf returns items matched, not bytes: keep it in aux, count no bytes.
        event.aux = ret as u64;
    }
    fail_if(event, ret < 0 && stream_error(handle));
    true
}

pub fn stream_text(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    text: *const c_char,
    ret: c_int,
) -> bool {
    stream(event, state, handle);
    if !text.is_null() {
        // SAFETY: fputs was given a NUL-terminated string.
        event.request = unsafe { std::ffi::CStr::from_ptr(text) }.to_bytes().len() as u64;
    }
    event.result = if ret == libc::EOF {
        -1
    } else {
        event.request as i64
    };
    fail_if(event, ret == libc::EOF);
    true
}

pub fn stream_char(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    ret: c_int,
) -> bool {
    stream(event, state, handle);
    event.request = 1;
    event.result = if ret == libc::EOF { -1 } else { 1 };
    fail_if(event, ret == libc::EOF);
    true
}

/// A stream's position through the real `ftello`, not our hook (a call into our own hook
/// would count as untraced); -1 when unknown.
fn stream_position(handle: *mut FILE) -> i64 {
    let Some(real) = crate::real::get(cairn_model::Call::ftello) else {
        return -1;
    };
    type Ftello = unsafe extern "C" fn(*mut FILE) -> i64;
    // SAFETY: the next definition of ftello, on a stream the program just used.
    unsafe { std::mem::transmute::<usize, Ftello>(real)(handle) }
}

pub fn stream_seek(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    offset: impl Into<i64>,
    whence: c_int,
    ret: c_int,
) -> bool {
    stream(event, state, handle);
    event.request = offset.into() as u64;
    event.aux = whence as u32 as u64;
    event.result = ret as i64;
    if ret == 0 {
        event.offset = stream_position(handle);
        at_position(event, false);
    }
    fail_if(event, ret != 0);
    true
}

/// `fsetpos`: a seek to the position reached (the `fpos_t` is opaque), from the start.
pub fn stream_set_position(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    ret: c_int,
) -> bool {
    let reached = if ret == 0 { stream_position(handle) } else { 0 };
    stream_seek(event, state, handle, reached, libc::SEEK_SET, ret)
}

/// `fgetpos`: a tell (a seek by 0 from the current position) that returns 0, not the
/// position.
pub fn stream_get_position(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    ret: c_int,
) -> bool {
    stream(event, state, handle);
    event.aux = libc::SEEK_CUR as u64;
    event.result = ret as i64;
    if ret == 0 {
        event.offset = stream_position(handle);
        at_position(event, false);
    }
    fail_if(event, ret != 0);
    true
}

/// `tmpfile`: opened as `w+`; its file is named as its descriptor shows it (an unnamed
/// or already removed file in the temporary directory).
pub fn stream_temporary(event: &mut RawEvent, state: &mut ThreadState, ret: *mut FILE) -> bool {
    event.handle = ret as u64;
    event.request = (libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u64;
    if ret.is_null() {
        event.result = -1;
        event.aux = u64::MAX;
        fail_if(event, true);
    } else {
        let (file, fd) = files::file_for_stream(state, ret);
        event.file = file;
        event.aux = fd as i64 as u64;
    }
    true
}

pub fn stream_tell(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    ret: impl Into<i64>,
) -> bool {
    stream(event, state, handle);
    let ret = ret.into();
    // A tell is a seek by 0 from the current position.
    event.aux = libc::SEEK_CUR as u64;
    event.result = ret;
    event.offset = ret;
    at_position(event, true);
    fail_if(event, ret < 0);
    true
}

pub fn stream_rewind(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    _ret: (),
) -> bool {
    stream(event, state, handle);
    event.offset = 0;
    true
}

pub fn stream_flush(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: *mut FILE,
    ret: c_int,
) -> bool {
    stream(event, state, handle);
    event.result = ret as i64;
    fail_if(event, ret != 0);
    true
}

/// Makes sure `c_long` and `off_t` are the same 64-bit type on the targets we build for,
/// so adapters may take either as i64.
const _: () = assert!(std::mem::size_of::<c_long>() == 8);

mod aio;
mod library;
mod mpi;

pub use aio::*;
pub use library::*;
pub use mpi::*;

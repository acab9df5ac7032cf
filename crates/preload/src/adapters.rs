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
use cairn_model::event_flags::{
    self, EXPLICIT_OFFSET, FAILED, REQUEST_AT_POSITION, RESULT_AT_POSITION,
};
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
    event.file = files::file_for_path(state, libc::AT_FDCWD, old, path_origin::NAMED);
    event.aux = files::file_for_path(state, libc::AT_FDCWD, new, path_origin::NAMED) as u64;
    event.handle = libc::AT_FDCWD as i64 as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
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
        // The real ftello, not our hook: a call into our own hook would count as untraced.
        if let Some(real) = crate::real::get(cairn_model::Call::ftello) {
            type Ftello = unsafe extern "C" fn(*mut FILE) -> i64;
            // SAFETY: the next definition of ftello, on the stream that was just sought.
            event.offset = unsafe { std::mem::transmute::<usize, Ftello>(real)(handle) };
            at_position(event, false);
        }
    }
    fail_if(event, ret != 0);
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

// ---- MPI -----------------------------------------------------------------------------------

use std::sync::atomic::AtomicUsize;

use crate::hooks::{MpiHandle, MpiOffset};
use crate::mpi_abi;

static TYPE_SIZE: AtomicUsize = AtomicUsize::new(0);
static COMM_SIZE: AtomicUsize = AtomicUsize::new(0);

/// `PMPI_Type_size` or `PMPI_Comm_size`: a handle in, an int out (`None` on failure).
fn pmpi_size(cache: &AtomicUsize, name: &std::ffi::CStr, handle: MpiHandle) -> Option<c_int> {
    let function = mpi_abi::cached_symbol(cache, name);
    if function == 0 || handle.is_null() {
        return None;
    }
    type SizeOf = unsafe extern "C" fn(MpiHandle, *mut c_int) -> c_int;
    let mut size: c_int = 0;
    // SAFETY: both functions take the program's own handle and write one int.
    let status = unsafe { std::mem::transmute::<usize, SizeOf>(function)(handle, &mut size) };
    (status == 0 && size >= 0).then_some(size)
}

/// Bytes of `count` elements of `datatype`, through `PMPI_Type_size`.
fn mpi_bytes(count: c_int, datatype: MpiHandle) -> u64 {
    if count <= 0 {
        return 0;
    }
    pmpi_size(&TYPE_SIZE, c"PMPI_Type_size", datatype)
        .map_or(0, |size| (count as u64).saturating_mul(size as u64))
}

/// Ranks in `comm`, through `PMPI_Comm_size` (0 if unknown).
fn mpi_comm_size(comm: MpiHandle) -> usize {
    pmpi_size(&COMM_SIZE, c"PMPI_Comm_size", comm).map_or(0, |size| size as usize)
}

/// MPI calls return an error code: the result is the bytes moved, or minus the code.
fn mpi_result(event: &mut RawEvent, bytes: u64, ret: c_int) {
    event.request = bytes;
    event.result = if ret == 0 {
        bytes as i64
    } else {
        -(ret as i64).abs().max(1)
    };
    fail_if(event, ret != 0);
}

fn peer_and_tag(peer: c_int, tag: c_int) -> u64 {
    ((tag as u32 as u64) << 32) | peer as u32 as u64
}

pub fn mpi_message(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    peer: c_int,
    tag: c_int,
    comm: MpiHandle,
    ret: c_int,
) -> bool {
    event.handle = mpi_abi::handle_value(comm);
    event.aux = peer_and_tag(peer, tag);
    mpi_result(event, mpi_bytes(count, datatype), ret);
    true
}

/// The peer and tag kept when the call itself does not know them (Open MPI's wildcards;
/// never a rank or a tag a program can send with).
const UNKNOWN_PEER: c_int = -1;
const UNKNOWN_TAG: c_int = -1;

/// Receives and probes: as [`mpi_message`], and when the call named a wildcard source or
/// tag and filled a status (a test-probe fills it only when `found` is set), the source and
/// tag that matched, flagged as such; kept as the wildcard when the MPI family, and so the
/// status layout, is unknown.
#[allow(clippy::too_many_arguments)]
pub fn mpi_receive(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    source: c_int,
    tag: c_int,
    comm: MpiHandle,
    found: *const c_int,
    status: MpiHandle,
    ret: c_int,
) -> bool {
    let (mut peer, mut matched_tag) = (source, tag);
    // A status below the first page is a sentinel, not a status (`MPI_STATUS_IGNORE` is
    // null in Open MPI and 1 in MPICH): never read through it.
    let status_given = status as usize >= 4096;
    // SAFETY: `found`, when given, is the program's flag the call just wrote.
    let filled = ret == 0 && status_given && (found.is_null() || unsafe { *found } != 0);
    let any_source = mpi_abi::any_source();
    let wildcard = filled && (source == any_source || tag == mpi_abi::ANY_TAG);
    // SAFETY: the call succeeded and filled the status.
    let matched = wildcard
        .then(|| unsafe { mpi_abi::status_source_and_tag(status) })
        .flatten();
    if let Some((matched_source, actual_tag)) = matched {
        if source == any_source {
            peer = matched_source;
            event.flags |= event_flags::ANY_SOURCE;
        }
        if tag == mpi_abi::ANY_TAG {
            matched_tag = actual_tag;
            event.flags |= event_flags::ANY_TAG;
        }
    }
    mpi_message(event, state, count, datatype, peer, matched_tag, comm, ret)
}

/// `MPI_Mrecv` / `MPI_Imrecv`: the message was matched by a probe, which named the peer.
pub fn mpi_matched_receive(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    ret: c_int,
) -> bool {
    // The probe that matched the message has the peer; this call does not know it.
    event.aux = peer_and_tag(UNKNOWN_PEER, UNKNOWN_TAG);
    mpi_result(event, mpi_bytes(count, datatype), ret);
    true
}

/// Calls that only change local state (datatypes, freeing a communicator): the result.
pub fn mpi_local(event: &mut RawEvent, _state: &mut ThreadState, ret: c_int) -> bool {
    mpi_result(event, 0, ret);
    true
}

/// V- and W-form collectives: `counts[i]` elements for each rank `i` of `comm`, of
/// `datatype`, or of `datatypes[i]` when `datatype` is null (W-forms).
pub fn mpi_collective_per_peer(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    counts: *const c_int,
    datatype: MpiHandle,
    datatypes: *const c_void,
    comm: MpiHandle,
    ret: c_int,
) -> bool {
    event.handle = mpi_abi::handle_value(comm);
    event.aux = peer_and_tag(UNKNOWN_PEER, 0);
    let peers = mpi_comm_size(comm);
    let mut bytes = 0u64;
    if !counts.is_null() && ret == 0 {
        for peer in 0..peers {
            // SAFETY: MPI requires `counts` (and `datatypes` for the W-forms) to hold one
            // entry per rank of `comm`, and the call succeeded with them.
            let (count, each) = unsafe {
                let count = *counts.add(peer);
                let each = if datatypes.is_null() {
                    datatype
                } else {
                    // An unknown family: the size of each entry is unknown, so no bytes.
                    mpi_abi::handle_at(datatypes, peer).unwrap_or(std::ptr::null_mut())
                };
                (count, each)
            };
            bytes = bytes.saturating_add(mpi_bytes(count, each));
        }
    }
    mpi_result(event, bytes, ret);
    true
}

pub fn mpi_completion(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    count: c_int,
    ret: c_int,
) -> bool {
    event.aux = count.max(0) as u64;
    mpi_result(event, 0, ret);
    true
}

pub fn mpi_collective(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    root: c_int,
    comm: MpiHandle,
    ret: c_int,
) -> bool {
    event.handle = mpi_abi::handle_value(comm);
    event.aux = peer_and_tag(root, 0);
    mpi_result(event, mpi_bytes(count, datatype), ret);
    true
}

pub fn mpi_file_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    filename: *const c_char,
    mode: c_int,
    file: *mut MpiHandle,
    ret: c_int,
) -> bool {
    event.file = files::file_for_path(state, libc::AT_FDCWD, filename, path_origin::OPENED);
    event.aux = mode as u32 as u64;
    mpi_result(event, 0, ret);
    if ret == 0 && !file.is_null() {
        // SAFETY: MPI_File_open succeeded and wrote the handle.
        let handle = unsafe { *file };
        event.handle = handle as u64;
        files::bind_mpi_file(handle as usize, event.file);
    }
    true
}

pub fn mpi_file_close(event: &mut RawEvent, handle: MpiHandle, ret: c_int) -> bool {
    event.handle = handle as u64;
    event.file = files::mpi_file(handle as usize);
    mpi_result(event, 0, ret);
    if ret == 0 {
        files::unbind_mpi_file(handle as usize);
    }
    true
}

pub fn mpi_file_transfer(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    file: MpiHandle,
    offset: MpiOffset,
    count: c_int,
    datatype: MpiHandle,
    ret: c_int,
) -> bool {
    event.handle = file as u64;
    event.file = files::mpi_file(file as usize);
    // MPI offsets count etypes of the file view, not bytes: kept as given.
    event.aux = offset as u64;
    if offset >= 0 {
        event.flags |= event_flags::OFFSET_IN_AUX;
    }
    mpi_result(event, mpi_bytes(count, datatype), ret);
    true
}

pub fn mpi_file_status(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    file: MpiHandle,
    ret: c_int,
) -> bool {
    event.handle = file as u64;
    event.file = files::mpi_file(file as usize);
    mpi_result(event, 0, ret);
    true
}

pub fn mpi_file_delete(
    event: &mut RawEvent,
    state: &mut ThreadState,
    filename: *const c_char,
    ret: c_int,
) -> bool {
    event.file = files::file_for_path(state, libc::AT_FDCWD, filename, path_origin::NAMED);
    mpi_result(event, 0, ret);
    true
}

// ---- MPI from Fortran ---------------------------------------------------------------------
// Every Fortran entry point (`use mpi`, Open MPI's `ompi_x_f`/`pmpi_x_` behind `use mpi_f08`,
// MPICH's `mpi_x_f08_`) fills its event here when its hook is the one that traces the call
// with the loaded MPI (`cairn_model::FortranBinding`, `mpi_abi::traced_elsewhere`); the
// others only forward.

static TYPE_F2C: AtomicUsize = AtomicUsize::new(0);
static COMM_F2C: AtomicUsize = AtomicUsize::new(0);

/// The C handle of a Fortran one: the same integer in the MPICH family, the named
/// `PMPI_*_f2c` function (resolved at run time) in Open MPI; null if there is none.
fn c_handle(fortran: c_int, cache: &AtomicUsize, f2c: &std::ffi::CStr) -> MpiHandle {
    if mpi_abi::family() == Some(mpi_abi::Family::Mpich) {
        return fortran as u32 as usize as MpiHandle;
    }
    let function = mpi_abi::cached_symbol(cache, f2c);
    if function == 0 {
        return std::ptr::null_mut();
    }
    type F2c = unsafe extern "C" fn(c_int) -> MpiHandle;
    // SAFETY: converting the program's own Fortran handle.
    unsafe { std::mem::transmute::<usize, F2c>(function)(fortran) }
}

/// The C datatype of a Fortran datatype handle (null if none is given).
fn c_datatype(fortran: *const c_int) -> MpiHandle {
    if fortran.is_null() {
        return std::ptr::null_mut();
    }
    c_handle(read_int(fortran), &TYPE_F2C, c"PMPI_Type_f2c")
}

/// The C communicator of a Fortran one.
fn c_communicator(fortran: c_int) -> MpiHandle {
    c_handle(fortran, &COMM_F2C, c"PMPI_Comm_f2c")
}

fn read_int(value: *const c_int) -> c_int {
    if value.is_null() {
        0
    } else {
        // SAFETY: Fortran passes every argument by reference.
        unsafe { *value }
    }
}

pub fn fortran_message(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: *const c_int,
    datatype: *const c_int,
    peer: *const c_int,
    tag: *const c_int,
    comm: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let ret = read_int(ierror);
    mpi_message(
        event,
        state,
        read_int(count),
        c_datatype(datatype),
        read_int(peer),
        read_int(tag),
        read_int(comm) as usize as MpiHandle,
        ret,
    )
}

/// The file a Fortran string names: `length` bytes padded with blanks, not NUL-terminated.
fn fortran_path(
    state: &mut ThreadState,
    name: *const c_char,
    length: size_t,
    origin: u32,
) -> Option<u32> {
    if name.is_null() {
        return None;
    }
    // SAFETY: Fortran passes the string's length; the bytes are the program's.
    let bytes = unsafe { std::slice::from_raw_parts(name.cast::<u8>(), length) };
    let end = bytes
        .iter()
        .rposition(|byte| *byte != b' ')
        .map_or(0, |at| at + 1);
    let mut terminated = [0u8; 4096];
    if end >= terminated.len() {
        return None;
    }
    terminated[..end].copy_from_slice(&bytes[..end]);
    Some(files::file_for_path(
        state,
        libc::AT_FDCWD,
        terminated.as_ptr().cast(),
        origin,
    ))
}

/// Fortran `MPI_FILE_OPEN`: the file is bound under the Fortran handle number (and, where
/// C hooks will see it, under its C handle).
#[allow(clippy::too_many_arguments)]
pub fn fortran_file_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    name: *const c_char,
    length: size_t,
    mode: *const c_int,
    file: *mut c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let ret = read_int(ierror);
    if let Some(path) = fortran_path(state, name, length, path_origin::OPENED) {
        event.file = path;
    }
    event.aux = read_int(mode) as u32 as u64;
    mpi_result(event, 0, ret);
    if ret == 0 && !file.is_null() {
        let handle = read_int(file);
        event.handle = handle as u32 as u64;
        files::bind_mpi_file(handle as u32 as usize, event.file);
        if let Some(c_handle) = mpi_abi::c_file_of_fortran(handle) {
            files::bind_mpi_file(c_handle, event.file);
        }
    }
    true
}

/// Fortran `MPI_FILE_CLOSE`, with the handle number read before the call cleared it.
/// Fortran `MPI_FILE_CLOSE`; `c_handle` is the file's C handle where C hooks used it
/// (taken before the call freed it).
pub fn fortran_file_close(
    event: &mut RawEvent,
    handle: c_int,
    c_handle: Option<usize>,
    ierror: *mut c_int,
) -> bool {
    let ret = read_int(ierror);
    if let (Some(c_handle), 0) = (c_handle, ret) {
        files::unbind_mpi_file(c_handle);
    }
    mpi_file_close(event, handle as u32 as usize as MpiHandle, ret)
}

/// Fortran reads and writes (`offset` null: at the individual file pointer).
pub fn fortran_file_transfer(
    event: &mut RawEvent,
    state: &mut ThreadState,
    file: *const c_int,
    offset: *const MpiOffset,
    count: *const c_int,
    datatype: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let offset = if offset.is_null() {
        -1
    } else {
        // SAFETY: Fortran passes every argument by reference.
        unsafe { *offset }
    };
    mpi_file_transfer(
        event,
        state,
        read_int(file) as u32 as usize as MpiHandle,
        offset,
        read_int(count),
        c_datatype(datatype),
        read_int(ierror),
    )
}

pub fn fortran_file_status(
    event: &mut RawEvent,
    state: &mut ThreadState,
    file: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let handle = read_int(file) as u32 as usize as MpiHandle;
    mpi_file_status(event, state, handle, read_int(ierror))
}

/// Fortran `MPI_WAIT` (`count` null: one request) and `MPI_WAITALL`.
pub fn fortran_completion(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let count = if count.is_null() { 1 } else { read_int(count) };
    mpi_completion(event, state, count, read_int(ierror))
}

pub fn fortran_collective(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: *const c_int,
    datatype: *const c_int,
    comm: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let ret = read_int(ierror);
    mpi_collective(
        event,
        state,
        read_int(count),
        c_datatype(datatype),
        -1,
        read_int(comm) as usize as MpiHandle,
        ret,
    )
}

/// Fortran `MPI_ALLTOALLV` and `MPI_REDUCE_SCATTER`: `counts[i]` elements for each rank `i`
/// of the communicator.
pub fn fortran_collective_per_peer(
    event: &mut RawEvent,
    state: &mut ThreadState,
    counts: *const c_int,
    datatype: *const c_int,
    comm: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let fortran_comm = read_int(comm);
    mpi_collective_per_peer(
        event,
        state,
        counts,
        c_datatype(datatype),
        std::ptr::null(),
        c_communicator(fortran_comm),
        read_int(ierror),
    );
    // Named like every other Fortran call's communicator: by its Fortran number.
    event.handle = fortran_comm as u32 as u64;
    true
}

/// Fortran `MPI_FILE_DELETE`: the name is a blank-padded Fortran string.
pub fn fortran_file_delete(
    event: &mut RawEvent,
    state: &mut ThreadState,
    name: *const c_char,
    length: size_t,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    if let Some(path) = fortran_path(state, name, length, path_origin::NAMED) {
        event.file = path;
    }
    mpi_result(event, 0, read_int(ierror));
    true
}

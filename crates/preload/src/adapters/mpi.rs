//! MPI adapters (C and Fortran bindings): messages, collectives, completions and MPI-IO.
//! Sizes come from the MPI library itself (`PMPI_Type_size`, `PMPI_Comm_size`), looked up
//! once; a Fortran handle is converted to the C one before anything is asked of it.

use cairn_format::segment::{path_origin, RawEvent};
use libc::{c_char, c_int, c_void, size_t};

use cairn_model::event_flags;

use super::fail_if;
use crate::files;
use crate::recorder::ThreadState;

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
    event.handle = mpi_abi::communicator(comm);
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

/// The bytes a receive got, from the status the library filled (the hook passes a status
/// of its own when the program ignored it); the capacity when the status cannot be read.
fn received_bytes(status: MpiHandle, capacity: u64, ret: c_int) -> u64 {
    if ret != 0 || mpi_abi::status_ignored(status) {
        return capacity;
    }
    // SAFETY: the call succeeded and filled this status.
    unsafe { mpi_abi::status_bytes(status) }.unwrap_or(capacity)
}

/// A blocking receive (`MPI_Recv`, the receiving half of `MPI_Sendrecv`): the capacity
/// posted is the request, the bytes the status says arrived the result; the peer and tag
/// as [`mpi_receive`] finds them.
#[allow(clippy::too_many_arguments)]
pub fn mpi_received(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    source: c_int,
    tag: c_int,
    comm: MpiHandle,
    status: MpiHandle,
    ret: c_int,
) -> bool {
    mpi_receive(
        event,
        state,
        count,
        datatype,
        source,
        tag,
        comm,
        std::ptr::null(),
        status,
        ret,
    );
    if ret == 0 {
        event.result = received_bytes(status, event.request, ret) as i64;
    }
    true
}

/// `MPI_Irecv`: posts a receive; nothing has arrived yet (result 0, the capacity is the
/// request). The request is remembered so that its completion counts what arrived.
#[allow(clippy::too_many_arguments)]
pub fn mpi_post_receive(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    source: c_int,
    tag: c_int,
    comm: MpiHandle,
    request: *mut MpiHandle,
    ret: c_int,
) -> bool {
    mpi_message(event, state, count, datatype, source, tag, comm, ret);
    posted(event, request, ret);
    true
}

fn posted(event: &mut RawEvent, request: *mut MpiHandle, ret: c_int) {
    if ret != 0 {
        return;
    }
    event.result = 0;
    if !request.is_null() {
        // SAFETY: the call succeeded and wrote the request handle.
        if let Some(handle) = unsafe { mpi_abi::handle_at(request.cast(), 0) } {
            files::remember_receive(mpi_abi::handle_value(handle));
        }
    }
}

/// `MPI_Send_init` and its kin: the message each start of the request will send (its
/// bytes, peer and tag in the key, nothing moved now), remembered for `MPI_Start`.
#[allow(clippy::too_many_arguments)]
pub fn mpi_send_init(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    dest: c_int,
    tag: c_int,
    comm: MpiHandle,
    request: *mut MpiHandle,
    ret: c_int,
) -> bool {
    persistent_init(
        event,
        state,
        (count, datatype, dest, tag, comm),
        request,
        false,
        ret,
    )
}

/// `MPI_Recv_init`: as [`mpi_send_init`], the receive each start will post.
#[allow(clippy::too_many_arguments)]
pub fn mpi_recv_init(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    source: c_int,
    tag: c_int,
    comm: MpiHandle,
    request: *mut MpiHandle,
    ret: c_int,
) -> bool {
    persistent_init(
        event,
        state,
        (count, datatype, source, tag, comm),
        request,
        true,
        ret,
    )
}

fn persistent_init(
    event: &mut RawEvent,
    state: &mut ThreadState,
    (count, datatype, peer, tag, comm): (c_int, MpiHandle, c_int, c_int, MpiHandle),
    request: *mut MpiHandle,
    receive: bool,
    ret: c_int,
) -> bool {
    mpi_message(event, state, count, datatype, peer, tag, comm, ret);
    if ret != 0 {
        return true;
    }
    event.result = 0;
    if !request.is_null() {
        // SAFETY: the call succeeded and wrote the request handle.
        if let Some(handle) = unsafe { mpi_abi::handle_at(request.cast(), 0) } {
            crate::persistent::remember(crate::persistent::Persistent {
                request: mpi_abi::handle_value(handle),
                receive,
                bytes: event.request,
                handle: event.handle,
                aux: event.aux,
            });
        }
    }
    true
}

/// `MPI_Mrecv`: the message was matched by a probe, which named the peer; the bytes are
/// the status's (the capacity when the program ignored the status).
pub fn mpi_matched_receive(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    status: MpiHandle,
    ret: c_int,
) -> bool {
    // The probe that matched the message has the peer; this call does not know it.
    event.aux = peer_and_tag(UNKNOWN_PEER, UNKNOWN_TAG);
    let capacity = mpi_bytes(count, datatype);
    mpi_result(event, capacity, ret);
    if ret == 0 {
        event.result = received_bytes(status, capacity, ret) as i64;
    }
    true
}

/// `MPI_Imrecv`: as [`mpi_post_receive`], for a message a probe matched.
pub fn mpi_matched_post(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    count: c_int,
    datatype: MpiHandle,
    request: *mut MpiHandle,
    ret: c_int,
) -> bool {
    event.aux = peer_and_tag(UNKNOWN_PEER, UNKNOWN_TAG);
    mpi_result(event, mpi_bytes(count, datatype), ret);
    posted(event, request, ret);
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
    event.handle = mpi_abi::communicator(comm);
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

/// A completion that finished receives posted by `MPI_Irecv`: the bytes they got are the
/// result (the request count stays in `aux`); a completion of one request, a receive, keeps
/// the source that matched beside it (`COMPLETED_FROM`).
pub fn mpi_completion_received(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: c_int,
    (received, source): (u64, Option<c_int>),
    ret: c_int,
) -> bool {
    mpi_completion(event, state, count, ret);
    if ret == 0 {
        event.result = received as i64;
        if let Some(source) = source.filter(|source| *source >= 0) {
            event.aux = peer_and_tag(source, count);
            event.flags |= event_flags::COMPLETED_FROM;
        }
    }
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
    event.handle = mpi_abi::communicator(comm);
    event.aux = peer_and_tag(root, 0);
    mpi_result(event, mpi_bytes(count, datatype), ret);
    true
}

/// The access mode in the low half of `aux`, the number of ranks that open the file
/// together (the communicator's size, 0 if unknown) in the high half: a replay opens it
/// over as many.
fn open_mode_and_ranks(mode: c_int, comm: MpiHandle) -> u64 {
    mode as u32 as u64 | (mpi_comm_size(comm) as u32 as u64) << 32
}

pub fn mpi_file_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    comm: MpiHandle,
    filename: *const c_char,
    mode: c_int,
    file: *mut MpiHandle,
    ret: c_int,
) -> bool {
    event.file = files::file_for_path(state, libc::AT_FDCWD, filename, path_origin::OPENED);
    event.aux = open_mode_and_ranks(mode, comm);
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

/// `MPI_File_seek`: the offset (in etypes of the view, as given) in `aux`, the whence in
/// `request`.
pub fn mpi_file_seek(
    event: &mut RawEvent,
    state: &mut ThreadState,
    file: MpiHandle,
    offset: MpiOffset,
    whence: c_int,
    ret: c_int,
) -> bool {
    mpi_file_status(event, state, file, ret);
    event.aux = offset as u64;
    event.flags |= event_flags::OFFSET_IN_AUX;
    event.request = whence as u32 as u64;
    true
}

/// `MPI_File_set_size` and `MPI_File_preallocate`: the file, and the length in `aux`.
pub fn mpi_file_length(
    event: &mut RawEvent,
    state: &mut ThreadState,
    file: MpiHandle,
    size: MpiOffset,
    ret: c_int,
) -> bool {
    event.aux = size as u64;
    mpi_file_status(event, state, file, ret)
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
pub(crate) fn c_communicator(fortran: c_int) -> MpiHandle {
    c_handle(fortran, &COMM_F2C, c"PMPI_Comm_f2c")
}

static REQUEST_F2C: AtomicUsize = AtomicUsize::new(0);

/// The C request of a Fortran one (null for a finished or unknown one): how a Fortran
/// completion finds the receives its requests stand for.
pub(crate) fn c_request(fortran: c_int) -> MpiHandle {
    c_handle(fortran, &REQUEST_F2C, c"PMPI_Request_f2c")
}

fn read_int(value: *const c_int) -> c_int {
    if value.is_null() {
        0
    } else {
        // SAFETY: Fortran passes every argument by reference.
        unsafe { *value }
    }
}

/// A Fortran `INTEGER(KIND=MPI_OFFSET_KIND)` argument, `missing` when absent.
fn read_offset(value: *const MpiOffset, missing: MpiOffset) -> MpiOffset {
    if value.is_null() {
        missing
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

/// Fortran `MPI_RECV` (and `MPI_SENDRECV`'s receiving half) where its own hook traces it:
/// as C's [`mpi_received`], the bytes from the status the hook made the call fill.
#[allow(clippy::too_many_arguments)]
pub fn fortran_received(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: *const c_int,
    datatype: *const c_int,
    source: *const c_int,
    tag: *const c_int,
    comm: *const c_int,
    status: *mut c_int,
    ierror: *const c_int,
) -> bool {
    mpi_received(
        event,
        state,
        read_int(count),
        c_datatype(datatype),
        read_int(source),
        read_int(tag),
        read_int(comm) as usize as MpiHandle,
        status.cast(),
        read_int(ierror),
    )
}

/// Fortran `MPI_IRECV` where its own hook traces it (Open MPI's bindings call `PMPI_Irecv`,
/// which no hook sees): as C's [`mpi_post_receive`] — nothing has arrived yet, and the
/// request is remembered under its C handle, so the completion that finishes it (a
/// Fortran one, which converts its requests alike) counts the bytes its status says
/// arrived rather than the capacity posted.
#[allow(clippy::too_many_arguments)]
pub fn fortran_post_receive(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: *const c_int,
    datatype: *const c_int,
    source: *const c_int,
    tag: *const c_int,
    comm: *const c_int,
    request: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    fortran_request(
        event,
        state,
        (count, datatype, source, tag, comm),
        request,
        ierror,
        |_, handle| files::remember_receive(handle),
    )
}

/// Fortran `MPI_SEND_INIT` and its kin where their own hook traces them: as C's
/// [`mpi_send_init`], the request remembered under its C handle.
#[allow(clippy::too_many_arguments)]
pub fn fortran_send_init(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: *const c_int,
    datatype: *const c_int,
    dest: *const c_int,
    tag: *const c_int,
    comm: *const c_int,
    request: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    fortran_persistent_init(
        event,
        state,
        (count, datatype, dest, tag, comm),
        request,
        false,
        ierror,
    )
}

/// Fortran `MPI_RECV_INIT`, as [`fortran_send_init`].
#[allow(clippy::too_many_arguments)]
pub fn fortran_recv_init(
    event: &mut RawEvent,
    state: &mut ThreadState,
    count: *const c_int,
    datatype: *const c_int,
    source: *const c_int,
    tag: *const c_int,
    comm: *const c_int,
    request: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    fortran_persistent_init(
        event,
        state,
        (count, datatype, source, tag, comm),
        request,
        true,
        ierror,
    )
}

type FortranMessage = (
    *const c_int,
    *const c_int,
    *const c_int,
    *const c_int,
    *const c_int,
);

fn fortran_persistent_init(
    event: &mut RawEvent,
    state: &mut ThreadState,
    message: FortranMessage,
    request: *const c_int,
    receive: bool,
    ierror: *mut c_int,
) -> bool {
    fortran_request(event, state, message, request, ierror, |event, handle| {
        crate::persistent::remember(crate::persistent::Persistent {
            request: handle,
            receive,
            bytes: event.request,
            handle: event.handle,
            aux: event.aux,
        })
    })
}

/// A Fortran call that makes a request from a message (a receive's posting, a persistent
/// request's init): the message is the event, nothing moved, and if the call succeeded
/// `remember` gets the event and the request's C handle (as a number).
fn fortran_request(
    event: &mut RawEvent,
    state: &mut ThreadState,
    (count, datatype, peer, tag, comm): FortranMessage,
    request: *const c_int,
    ierror: *mut c_int,
    remember: impl FnOnce(&RawEvent, u64),
) -> bool {
    let ret = read_int(ierror);
    fortran_message(event, state, count, datatype, peer, tag, comm, ierror, ());
    if ret != 0 || request.is_null() {
        return true;
    }
    event.result = 0;
    let handle = c_request(read_int(request));
    if !handle.is_null() {
        remember(event, mpi_abi::handle_value(handle));
    }
    true
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
    comm: *const c_int,
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
    event.aux = open_mode_and_ranks(read_int(mode), c_communicator(read_int(comm)));
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
    let offset = read_offset(offset, -1);
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

/// Fortran `MPI_FILE_SEEK`.
pub fn fortran_file_seek(
    event: &mut RawEvent,
    state: &mut ThreadState,
    file: *const c_int,
    offset: *const MpiOffset,
    whence: *const c_int,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let handle = read_int(file) as u32 as usize as MpiHandle;
    let offset = read_offset(offset, 0);
    mpi_file_seek(
        event,
        state,
        handle,
        offset,
        read_int(whence),
        read_int(ierror),
    )
}

/// Fortran `MPI_FILE_SET_SIZE` and `MPI_FILE_PREALLOCATE`.
pub fn fortran_file_length(
    event: &mut RawEvent,
    state: &mut ThreadState,
    file: *const c_int,
    size: *const MpiOffset,
    ierror: *mut c_int,
    _ret: (),
) -> bool {
    let handle = read_int(file) as u32 as usize as MpiHandle;
    let size = read_offset(size, 0);
    mpi_file_length(event, state, handle, size, read_int(ierror))
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

//! POSIX asynchronous I/O: a submission is recorded when made (its file, offset and size,
//! no bytes yet) and remembered by control block; `aio_return` collects the bytes (see the
//! hook), with the submission's clock reading so the trace builder can give the latency
//! from submission to completion.

use cairn_format::segment::RawEvent;
use cairn_model::event_flags::INSIDE_MPIIO;
use libc::{c_int, c_void};

use super::{descriptor, explicit_offset, fail_if};
use crate::files::{self, Submission};
use crate::recorder::ThreadState;

/// Submissions a list may hold that are looked at (the kernel's own limit is far lower).
const MAX_LIST: usize = 4096;

fn control_block<'a>(request: *const c_void) -> Option<&'a libc::aiocb> {
    // SAFETY: the program passed this control block to an AIO call, which reads it the
    // same way; `aiocb64` has the same layout on the 64-bit targets cairn builds for.
    unsafe { request.cast::<libc::aiocb>().as_ref() }
}

/// The request's file, descriptor, offset and size.
fn describe(event: &mut RawEvent, state: &mut ThreadState, block: &libc::aiocb) {
    descriptor(event, state, block.aio_fildes);
    event.request = block.aio_nbytes as u64;
    explicit_offset(event, block.aio_offset);
}

/// `aio_read`, `aio_write`: `direction` 0 reads, 1 writes (kept in `aux`).
pub fn aio_submit(
    event: &mut RawEvent,
    state: &mut ThreadState,
    request: *mut c_void,
    direction: u8,
    ret: c_int,
) -> bool {
    if let Some(block) = control_block(request) {
        describe(event, state, block);
    }
    event.aux = direction as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    if ret == 0 {
        files::remember_submission(Submission {
            request: request as usize,
            start: event.start,
            direction,
            inside_mpiio: event.flags & INSIDE_MPIIO,
        });
    }
    true
}

/// `lio_listio`: each read and write of the list is remembered as submitted; the event
/// names the file when the whole list is on one descriptor, and sums the sizes.
pub fn aio_submit_list(
    event: &mut RawEvent,
    state: &mut ThreadState,
    list: *const *mut c_void,
    count: c_int,
    ret: c_int,
) -> bool {
    let entries = if list.is_null() || count <= 0 {
        &[][..]
    } else {
        // SAFETY: the program passed a list of `count` control-block pointers.
        unsafe { std::slice::from_raw_parts(list, (count as usize).min(MAX_LIST)) }
    };
    // A list that failed as a whole (EAGAIN, EINVAL) queued nothing; with EIO some were
    // queued, and aio_return tells which.
    let queued = ret == 0 || crate::hooks::errno_get() == libc::EIO;
    let mut descriptors = None;
    let mut requested = 0u64;
    for request in entries {
        let Some(block) = control_block(*request) else {
            continue;
        };
        let direction = match block.aio_lio_opcode {
            libc::LIO_READ => 0,
            libc::LIO_WRITE => 1,
            _ => continue,
        };
        requested = requested.saturating_add(block.aio_nbytes as u64);
        descriptors = match descriptors {
            None => Some(block.aio_fildes),
            Some(fd) if fd == block.aio_fildes => Some(fd),
            Some(_) => Some(-1),
        };
        if queued {
            files::remember_submission(Submission {
                request: *request as usize,
                start: event.start,
                direction,
                inside_mpiio: event.flags & INSIDE_MPIIO,
            });
        }
    }
    if let Some(fd) = descriptors.filter(|fd| *fd >= 0) {
        descriptor(event, state, fd);
    }
    event.request = requested;
    event.aux = count.max(0) as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

/// `aio_error`: the request's status (0 done, `EINPROGRESS`, or its error number).
pub fn aio_status(
    event: &mut RawEvent,
    state: &mut ThreadState,
    request: *const c_void,
    ret: c_int,
) -> bool {
    if let Some(block) = control_block(request) {
        describe(event, state, block);
    }
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

/// `aio_suspend`: how many requests it waited on, like an MPI completion.
pub fn aio_wait(event: &mut RawEvent, _state: &mut ThreadState, count: c_int, ret: c_int) -> bool {
    event.aux = count.max(0) as u64;
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

/// `aio_return`: the bytes a request moved, on its file and at its offset; `aux` holds the
/// submission's clock reading (0 when the submission was not seen), which the trace
/// builder turns into the latency. A request an MPI-IO call submitted (ROMIO's
/// `MPI_File_iwrite`) is collected inside `MPI_Wait`: still that MPI-IO call's sub-call.
pub fn aio_collected(
    event: &mut RawEvent,
    state: &mut ThreadState,
    request: *mut c_void,
    submission: Option<Submission>,
    ret: isize,
) -> bool {
    if let Some(block) = control_block(request) {
        describe(event, state, block);
    }
    event.aux = submission.map_or(0, |submission| submission.start);
    event.flags |= submission.map_or(0, |submission| submission.inside_mpiio);
    event.result = ret as i64;
    fail_if(event, ret < 0);
    true
}

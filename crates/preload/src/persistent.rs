//! Persistent requests (`MPI_Send_init`, `MPI_Recv_init` and the like, then `MPI_Start` /
//! `MPI_Startall` each time, as PETSc's scatters and many stencil codes do): the init call
//! says what the request sends or receives, once; each start is when it happens. So the
//! init is kept as a point-to-point call that moves nothing (the message it describes in
//! its key, its peer merging across ranks as a send's; `MessageBytes::Described`), and
//! each start records, after the `MPI_Start(all)` event, one share per request it started:
//! `MPI_Start_send` with the bytes sent, or `MPI_Start_recv` posting the receive (0 bytes,
//! the request remembered like an `MPI_Irecv`'s), so that the completion that finishes it
//! counts what arrived and every byte sent or received is counted as for `MPI_Isend` and
//! `MPI_Irecv`. The table of persistent requests is bounded; a start of a request beyond
//! it (or of one whose init no hook saw: a persistent collective) is counted among the
//! calls let through untraced, which the summary reports.

#![allow(clippy::missing_safety_doc)]

use cairn_model::Call;
use libc::c_int;

use crate::adapters;
use crate::files;
use crate::handles::HandleTable;
use crate::hooks::{record, traced_with, MpiHandle, Times};
use crate::mpi_abi;
use crate::receives::real_or_forward;
use crate::recorder::Scope;
use crate::spin::SpinLock;

/// What a persistent request does each time it starts.
#[derive(Clone, Copy)]
pub struct Persistent {
    pub request: u64,
    pub receive: bool,
    /// Bytes sent, or the capacity of the receive.
    pub bytes: u64,
    /// The event's communicator and peer and tag, as the init's event keeps them.
    pub handle: u64,
    pub aux: u64,
}

const MAX_PERSISTENT: usize = 1 << 12;
static PERSISTENT: SpinLock<HandleTable<Persistent, MAX_PERSISTENT>> =
    SpinLock::new(HandleTable::new());

/// Remembers a persistent request an init call made (its handle as a number); beyond the
/// table's bound its starts are counted untraced ([`starting`]).
pub fn remember(persistent: Persistent) {
    PERSISTENT.with(|table| table.insert(persistent.request, persistent));
}

fn find(request: u64) -> Option<Persistent> {
    PERSISTENT.with(|table| table.get(request))
}

/// Forgets a request `MPI_Request_free` freed (its handle may be reused by another).
pub fn forget(request: u64) {
    PERSISTENT.with(|table| table.remove(request));
}

pub fn lock_table() {
    PERSISTENT.lock();
}

pub fn unlock_table() {
    PERSISTENT.unlock();
}

/// The persistent requests among a start's request handles (as numbers; `None` ends the
/// list: the family, and so the layout, is unknown), read before the call. A request the
/// table does not hold (beyond its bound, or a persistent collective, whose init is not
/// hooked) starts a message the trace cannot show: counted as a call let through untraced.
pub(crate) fn starting(handles: impl Iterator<Item = Option<u64>>) -> Vec<Persistent> {
    let mut found = Vec::new();
    for handle in handles {
        let Some(handle) = handle else {
            break;
        };
        match find(handle) {
            Some(persistent) => found.push(persistent),
            None => crate::header_page::count_untraced(),
        }
    }
    found
}

/// The persistent requests among `count` C handles.
fn started(count: c_int, requests: *const MpiHandle) -> Vec<Persistent> {
    if requests.is_null() {
        return Vec::new();
    }
    starting((0..count.max(0) as usize).map(|index| {
        // SAFETY: the program passes `count` request handles.
        unsafe { mpi_abi::handle_at(requests.cast(), index) }.map(mpi_abi::handle_value)
    }))
}

/// `MPI_Start` or `MPI_Startall` (from C or Fortran, `invoke` giving the error code): the
/// call, then a share per request it started. Inlined into the hooks, so that the call's
/// context starts at the program's call site.
#[inline(always)]
pub(crate) fn start(
    scope: &Scope,
    call: Call,
    count: c_int,
    starting: Vec<Persistent>,
    invoke: impl FnOnce() -> c_int,
) -> c_int {
    traced_with(scope, call, invoke, |scope, times, ret| {
        record(scope, call, times, |event, state| {
            adapters::mpi_completion(event, state, count, ret)
        });
        if ret != 0 {
            return;
        }
        let share = Times {
            start: times.end,
            ..times
        };
        for persistent in &starting {
            let share_call = if persistent.receive {
                files::remember_receive(persistent.request);
                Call::MPI_Start_recv
            } else {
                Call::MPI_Start_send
            };
            record(scope, share_call, share, |event, _| {
                event.handle = persistent.handle;
                event.aux = persistent.aux;
                event.request = persistent.bytes;
                event.result = if persistent.receive {
                    0
                } else {
                    persistent.bytes as i64
                };
                true
            });
        }
    })
}

#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Start")]
pub unsafe extern "C" fn MPI_Start(request: *mut MpiHandle) -> c_int {
    let (real, scope) = real_or_forward!(MPI_Start, (*mut MpiHandle), (request));
    let starting = started(1, request);
    // SAFETY: forwarding the caller's argument.
    start(&scope, Call::MPI_Start, 1, starting, || unsafe {
        real(request)
    })
}

#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Startall")]
pub unsafe extern "C" fn MPI_Startall(count: c_int, requests: *mut MpiHandle) -> c_int {
    let (real, scope) = real_or_forward!(MPI_Startall, (c_int, *mut MpiHandle), (count, requests));
    let starting = started(count, requests);
    // SAFETY: forwarding the caller's arguments.
    start(&scope, Call::MPI_Startall, count, starting, || unsafe {
        real(count, requests)
    })
}

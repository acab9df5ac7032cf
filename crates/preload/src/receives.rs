//! Hooks that learn how many bytes MPI receives got, from the status the library fills:
//! `MPI_Recv`, both halves of `MPI_Sendrecv` (and `_replace`), and the completions
//! (`MPI_Wait*`, `MPI_Test*`) of receives posted by `MPI_Irecv`. A program that passes
//! `MPI_STATUS(ES)_IGNORE` gets it passed on only when no count is needed; otherwise the
//! library fills a status of the hook's own, which the program never sees. A completion
//! reads its requests' handles before the call (it sets finished ones to
//! `MPI_REQUEST_NULL`) and looks at statuses only when a posted receive is among them.
//! The Fortran completions that reach PMPI without a C hook (Open MPI's `use mpi` and
//! `use mpi_f08`, MPICH's `use mpi_f08`) are hooked here too, their requests converted to C
//! handles, so a Fortran halo exchange's receives count what arrived, as C's do.

#![allow(clippy::missing_safety_doc)]

use cairn_model::Call;
use libc::{c_int, c_void};

use crate::adapters;
use crate::files;
use crate::hooks::{record, traced_with, MpiHandle};
use crate::mpi_abi;
use crate::recorder::Scope;

/// Statuses a call fills: the program's own, or the hook's when the program ignored them
/// and a count is needed.
struct Statuses {
    own: Vec<u64>,
    pointer: MpiHandle,
    size: usize,
}

impl Statuses {
    fn for_call(given: MpiHandle, count: usize, needed: bool) -> Statuses {
        let size = mpi_abi::status_size().unwrap_or(0);
        let mut statuses = Statuses {
            own: Vec::new(),
            pointer: given,
            size,
        };
        let ignored = mpi_abi::status_ignored(given)
            || mpi_abi::f08_status_ignored(given)
            || mpi_abi::fortran_status_ignored(given);
        if needed && size > 0 && ignored {
            statuses.own = vec![0u64; (count.max(1) * size).div_ceil(8)];
            statuses.pointer = statuses.own.as_mut_ptr().cast();
        }
        statuses
    }

    /// The source that matched the receive status `index` describes (`None`: ignored or
    /// layout unknown).
    fn source(&self, index: usize) -> Option<c_int> {
        if self.size == 0 || mpi_abi::status_ignored(self.pointer) {
            return None;
        }
        // SAFETY: as in `bytes`.
        unsafe {
            mpi_abi::status_source_and_tag(self.pointer.cast::<u8>().add(index * self.size).cast())
        }
        .map(|(source, _)| source)
    }

    /// The bytes status `index` says arrived (`None`: ignored or layout unknown).
    fn bytes(&self, index: usize) -> Option<u64> {
        if self.size == 0 || mpi_abi::status_ignored(self.pointer) {
            return None;
        }
        // SAFETY: the call filled `index` (a completed request's status) in this array of
        // statuses of the library's own size.
        unsafe { mpi_abi::status_bytes(self.pointer.cast::<u8>().add(index * self.size).cast()) }
    }
}

/// Which requests a completion finished, as (request index, status index) pairs.
/// `Listed` and `One` indices from Fortran are 1-based (`first` says which).
enum Finished {
    None,
    All,
    One(usize, usize),
    /// `Waitsome`/`Testsome`: `outcount` indices, statuses in the same order, the first
    /// request's index (0 in C, 1 in Fortran).
    Listed(usize, *const c_int, c_int),
}

/// The requests a completion names: C handles, or Fortran integers (Open MPI's are
/// indices of its own, converted with `PMPI_Request_f2c`; MPICH's are its C handles).
#[derive(Clone, Copy)]
enum Requests {
    C(*mut MpiHandle),
    Fortran(*const c_int),
}

impl Requests {
    /// Request `index`'s C handle as a number (`None`: the family, and so the layout, is
    /// unknown).
    ///
    /// # Safety
    /// The array must hold more than `index` requests.
    unsafe fn handle(self, index: usize) -> Option<u64> {
        match self {
            // SAFETY: the caller vouches for the array.
            Requests::C(array) => {
                unsafe { mpi_abi::handle_at(array.cast(), index) }.map(mpi_abi::handle_value)
            }
            Requests::Fortran(array) => {
                mpi_abi::family()?;
                // SAFETY: as above; a Fortran request is a default integer.
                let fortran = unsafe { *array.add(index) };
                Some(mpi_abi::handle_value(adapters::c_request(fortran)))
            }
        }
    }

    fn is_null(self) -> bool {
        match self {
            Requests::C(array) => array.is_null(),
            Requests::Fortran(array) => array.is_null(),
        }
    }
}

/// A completion call on `count` requests: finds which are posted receives, lets `invoke`
/// make the call with the statuses to fill, asks `finished` which requests it finished,
/// and records the bytes those receives got.
#[inline(always)]
fn completion(
    scope: &Scope,
    call: Call,
    (count, requests): (c_int, Requests),
    given: MpiHandle,
    invoke: impl FnOnce(MpiHandle) -> c_int,
    finished: impl FnOnce(c_int) -> Finished,
) -> c_int {
    let total = count.max(0) as usize;
    let mut receives: Vec<(usize, u64)> = Vec::new();
    if files::receives_pending() && !requests.is_null() {
        for index in 0..total {
            // SAFETY: the program passes `count` request handles.
            let Some(handle) = (unsafe { requests.handle(index) }) else {
                break;
            };
            receives.push((index, handle));
        }
        // One look at the posted receives for all the requests.
        files::keep_receives(&mut receives);
    }
    let statuses = Statuses::for_call(given, total, !receives.is_empty());
    let pointer = statuses.pointer;
    traced_with(
        scope,
        call,
        || invoke(pointer),
        |scope, times, ret| {
            let mut received = 0u64;
            // A completion of one request, a receive, keeps the source that matched (which
            // request a call of several finished first is not the program's choice).
            let mut source = None;
            if ret == 0 && !receives.is_empty() {
                let mut collect = |request: usize, status: usize| {
                    // `receives` is in index order (a few probes, not a scan, per request:
                    // a wait for 70,000 took seconds).
                    if let Ok(position) =
                        receives.binary_search_by_key(&request, |(index, _)| *index)
                    {
                        let handle = receives[position].1;
                        files::take_receive(handle);
                        received = received.saturating_add(statuses.bytes(status).unwrap_or(0));
                        if total == 1 {
                            source = statuses.source(status);
                        }
                    }
                };
                match finished(ret) {
                    Finished::None => {}
                    Finished::All => (0..total).for_each(|index| collect(index, index)),
                    Finished::One(request, status) => collect(request, status),
                    Finished::Listed(outcount, indices, first) => {
                        for position in 0..outcount.min(total) {
                            // SAFETY: the call wrote `outcount` indices.
                            let request = unsafe { *indices.add(position) } - first;
                            if request >= 0 {
                                collect(request as usize, position);
                            }
                        }
                    }
                }
            }
            record(scope, call, times, |event, state| {
                adapters::mpi_completion_received(event, state, count, (received, source), ret)
            })
        },
    )
}

/// Reads an int the call wrote (0 when the pointer is null).
fn written(value: *const c_int) -> c_int {
    // SAFETY: the program passed this output argument to the call just made.
    unsafe { value.as_ref() }.copied().unwrap_or(0)
}

/// A C MPI hook's front: the real function and the scope, or the call forwarded untraced
/// (no real function: the failure value; re-entered: straight through).
macro_rules! real_or_forward {
    ($call:ident, ($($ty:ty),*) , ($($arg:expr),*)) => {{
        type Real = unsafe extern "C" fn($($ty),*) -> ::libc::c_int;
        let Some(real) = crate::real::get(::cairn_model::Call::$call) else {
            return crate::hooks::missing();
        };
        // SAFETY: the next definition of this symbol.
        let real = unsafe { std::mem::transmute::<usize, Real>(real) };
        let Some(scope) = crate::recorder::Scope::enter() else {
            // SAFETY: forwarding the caller's arguments.
            return unsafe { real($($arg),*) };
        };
        (real, scope)
    }};
}
pub(crate) use real_or_forward;

/// `MPI_UNDEFINED` in both families: no request was active.
const UNDEFINED: c_int = -32766;

/// A C completion hook: its arguments, how many requests it takes and where, the statuses
/// argument (shadowed, in the call, by the statuses to fill) and which requests it
/// finished, read after the call.
macro_rules! c_completion {
    ($name:ident ($($arg:ident: $ty:ty),*), $count:expr, $requests:expr, $statuses:ident,
     $finished:expr) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            let (real, scope) = real_or_forward!($name, ($($ty),*), ($($arg),*));
            completion(
                &scope,
                Call::$name,
                ($count, Requests::C($requests)),
                $statuses,
                // SAFETY: the caller's arguments, with statuses that can be filled.
                |$statuses| unsafe { real($($arg),*) },
                $finished,
            )
        }
    };
}

c_completion!(MPI_Wait(request: *mut MpiHandle, status: MpiHandle), 1, request, status, |_| {
    Finished::One(0, 0)
});
c_completion!(
    MPI_Test(request: *mut MpiHandle, flag: *mut c_int, status: MpiHandle),
    1,
    request,
    status,
    |_| match written(flag) {
        0 => Finished::None,
        _ => Finished::One(0, 0),
    }
);
c_completion!(
    MPI_Waitall(count: c_int, requests: *mut MpiHandle, statuses: MpiHandle),
    count,
    requests,
    statuses,
    |_| Finished::All
);
c_completion!(
    MPI_Testall(count: c_int, requests: *mut MpiHandle, flag: *mut c_int, statuses: MpiHandle),
    count,
    requests,
    statuses,
    |_| match written(flag) {
        0 => Finished::None,
        _ => Finished::All,
    }
);
c_completion!(
    MPI_Waitany(count: c_int, requests: *mut MpiHandle, index: *mut c_int, status: MpiHandle),
    count,
    requests,
    status,
    |_| match written(index) {
        UNDEFINED => Finished::None,
        done if done >= 0 => Finished::One(done as usize, 0),
        _ => Finished::None,
    }
);
c_completion!(
    MPI_Testany(
        count: c_int,
        requests: *mut MpiHandle,
        index: *mut c_int,
        flag: *mut c_int,
        status: MpiHandle
    ),
    count,
    requests,
    status,
    |_| match (written(flag), written(index)) {
        (0, _) | (_, UNDEFINED) => Finished::None,
        (_, done) if done >= 0 => Finished::One(done as usize, 0),
        _ => Finished::None,
    }
);
c_completion!(
    MPI_Waitsome(
        incount: c_int,
        requests: *mut MpiHandle,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: MpiHandle
    ),
    incount,
    requests,
    statuses,
    |_| listed(outcount, indices, 0)
);
c_completion!(
    MPI_Testsome(
        incount: c_int,
        requests: *mut MpiHandle,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: MpiHandle
    ),
    incount,
    requests,
    statuses,
    |_| listed(outcount, indices, 0)
);

/// What `Waitsome`/`Testsome` finished: `outcount` requests, listed in `indices`.
fn listed(outcount: *const c_int, indices: *const c_int, first: c_int) -> Finished {
    match written(outcount) {
        done if done > 0 && !indices.is_null() => Finished::Listed(done as usize, indices, first),
        _ => Finished::None,
    }
}

/// `MPI_Request_free` of a receive no completion call finished: what arrived, read before
/// the request goes; nothing when it has not arrived yet (its bytes then go unseen). A
/// persistent request freed is forgotten (its handle may come back for another).
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Request_free")]
pub unsafe extern "C" fn MPI_Request_free(request: *mut MpiHandle) -> c_int {
    let (real, scope) = real_or_forward!(MPI_Request_free, (*mut MpiHandle), (request));
    let received = if request.is_null() {
        0
    } else {
        // SAFETY: the program passes its request handle.
        freeing(unsafe { mpi_abi::handle_at(request.cast(), 0) })
    };
    traced_with(
        &scope,
        Call::MPI_Request_free,
        // SAFETY: forwarding the caller's argument.
        || unsafe { real(request) },
        |scope, times, ret| {
            record(scope, Call::MPI_Request_free, times, |event, state| {
                adapters::mpi_completion_received(event, state, 1, (received, None), ret)
            })
        },
    )
}

/// What freeing a request (C or Fortran, its C handle) does to the tables: a persistent
/// request is forgotten (its handle may come back for another), a posted receive taken,
/// with the bytes that had arrived by then.
fn freeing(handle: Option<MpiHandle>) -> u64 {
    let Some(handle) = handle.filter(|handle| !handle.is_null()) else {
        return 0;
    };
    let value = mpi_abi::handle_value(handle);
    crate::persistent::forget(value);
    if files::receives_pending() && files::take_receive(value) {
        arrived_bytes(handle).unwrap_or(0)
    } else {
        0
    }
}

/// The bytes a receive request's message brought, if it has arrived, without completing or
/// freeing the request (`PMPI_Request_get_status`).
fn arrived_bytes(request: MpiHandle) -> Option<u64> {
    static GET_STATUS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let function = mpi_abi::cached_symbol(&GET_STATUS, c"PMPI_Request_get_status");
    if function == 0 {
        return None;
    }
    type GetStatus = unsafe extern "C" fn(MpiHandle, *mut c_int, MpiHandle) -> c_int;
    let mut flag: c_int = 0;
    let mut own = [0u64; 4];
    // SAFETY: the program's own request, still valid; the status is ours, large enough for
    // both families' layouts.
    let status = unsafe {
        std::mem::transmute::<usize, GetStatus>(function)(
            request,
            &mut flag,
            own.as_mut_ptr().cast(),
        )
    };
    if status != 0 || flag == 0 {
        return None;
    }
    // SAFETY: the call filled the status.
    unsafe { mpi_abi::status_bytes(own.as_ptr().cast()) }
}

/// A status to pass: the program's, or ours (`own`) when it ignores it.
fn status_to_fill(given: MpiHandle, own: &mut [u64; 4]) -> MpiHandle {
    if mpi_abi::status_ignored(given) && mpi_abi::status_size().is_some() {
        own.as_mut_ptr().cast()
    } else {
        given
    }
}

#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Recv")]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MpiHandle,
    source: c_int,
    tag: c_int,
    comm: MpiHandle,
    status: MpiHandle,
) -> c_int {
    let (real, scope) = real_or_forward!(
        MPI_Recv,
        (
            *mut c_void,
            c_int,
            MpiHandle,
            c_int,
            c_int,
            MpiHandle,
            MpiHandle
        ),
        (buf, count, datatype, source, tag, comm, status)
    );
    let mut own = [0u64; 4];
    let status = status_to_fill(status, &mut own);
    traced_with(
        &scope,
        Call::MPI_Recv,
        // SAFETY: the caller's arguments, with a status that can be filled.
        || unsafe { real(buf, count, datatype, source, tag, comm, status) },
        |scope, times, ret| {
            record(scope, Call::MPI_Recv, times, |event, state| {
                adapters::mpi_received(
                    event, state, count, datatype, source, tag, comm, status, ret,
                )
            })
        },
    )
}

#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Sendrecv")]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MpiHandle,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MpiHandle,
    source: c_int,
    recvtag: c_int,
    comm: MpiHandle,
    status: MpiHandle,
) -> c_int {
    let (real, scope) = real_or_forward!(
        MPI_Sendrecv,
        (
            *const c_void,
            c_int,
            MpiHandle,
            c_int,
            c_int,
            *mut c_void,
            c_int,
            MpiHandle,
            c_int,
            c_int,
            MpiHandle,
            MpiHandle
        ),
        (
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, status
        )
    );
    let mut own = [0u64; 4];
    let status = status_to_fill(status, &mut own);
    traced_with(
        &scope,
        Call::MPI_Sendrecv,
        // SAFETY: the caller's arguments, with a status that can be filled.
        || unsafe {
            real(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, status,
            )
        },
        |scope, times, ret| {
            record(scope, Call::MPI_Sendrecv, times, |event, state| {
                adapters::mpi_message(event, state, sendcount, sendtype, dest, sendtag, comm, ret)
            });
            let share = crate::hooks::Times {
                start: times.end,
                ..times
            };
            record(scope, Call::MPI_Sendrecv_received, share, |event, state| {
                let (count, datatype) = (recvcount, recvtype);
                adapters::mpi_received(
                    event, state, count, datatype, source, recvtag, comm, status, ret,
                )
            })
        },
    )
}

#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Sendrecv_replace")]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MpiHandle,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MpiHandle,
    status: MpiHandle,
) -> c_int {
    let (real, scope) = real_or_forward!(
        MPI_Sendrecv_replace,
        (
            *mut c_void,
            c_int,
            MpiHandle,
            c_int,
            c_int,
            c_int,
            c_int,
            MpiHandle,
            MpiHandle
        ),
        (buf, count, datatype, dest, sendtag, source, recvtag, comm, status)
    );
    let mut own = [0u64; 4];
    let status = status_to_fill(status, &mut own);
    traced_with(
        &scope,
        Call::MPI_Sendrecv_replace,
        // SAFETY: the caller's arguments, with a status that can be filled.
        || unsafe {
            real(
                buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
            )
        },
        |scope, times, ret| {
            record(scope, Call::MPI_Sendrecv_replace, times, |event, state| {
                adapters::mpi_message(event, state, count, datatype, dest, sendtag, comm, ret)
            });
            let share = crate::hooks::Times {
                start: times.end,
                ..times
            };
            record(
                scope,
                Call::MPI_Sendrecv_replace_received,
                share,
                |event, state| {
                    adapters::mpi_received(
                        event, state, count, datatype, source, recvtag, comm, status, ret,
                    )
                },
            )
        },
    )
}

mod fortran;

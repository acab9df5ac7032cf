//! Fortran receives and completions (see the parent module): Open MPI's `use mpi` names
//! (`mpi_x_`, aliases of its `ompi_x_f` functions, which its `use mpi_f08` module calls, or
//! `pmpi_x_` for calls with a LOGICAL argument) convert their requests and call PMPI, so no
//! C hook sees them: these hooks find the posted receives among the requests (converted
//! with `PMPI_Request_f2c`) and read the Fortran statuses, which Open MPI fills with a C
//! status's bytes as integers (the hook's own when the program passed
//! `MPI_STATUSES_IGNORE`). MPICH's `use mpi` names reach the C hooks (these forward); its
//! `use mpi_f08` completions reach PMPI through `mpi_x_f08_`, whose request handles are its
//! C handles and whose status is its C status.

#![allow(clippy::missing_safety_doc)]

use cairn_model::Call;
use libc::{c_int, c_void};

use super::{completion, freeing, listed, written, Finished, Requests};
use crate::adapters;
use crate::hooks::{record, traced_with};
use crate::mpi_abi;
use crate::recorder::Scope;

/// A Fortran completion hook's front: the real function, or forwarding when another hook
/// traces this call with the loaded MPI (Open MPI's module reaches `ompi_x_f`).
macro_rules! fortran_real_or_forward {
    ($call:ident, ($($ty:ty),*) , ($($arg:expr),*)) => {{
        type Real = unsafe extern "C" fn($($ty),*);
        let Some(real) = crate::real::get(Call::$call) else {
            return;
        };
        // SAFETY: the next definition of this symbol.
        let real = unsafe { std::mem::transmute::<usize, Real>(real) };
        const BINDING: cairn_model::FortranBinding = Call::$call.fortran_binding();
        let traced_elsewhere = mpi_abi::traced_elsewhere(BINDING);
        let Some(scope) = Scope::enter().filter(|_| !traced_elsewhere) else {
            // SAFETY: forwarding the caller's arguments.
            return unsafe { real($($arg),*) };
        };
        (real, scope)
    }};
}

/// The error a Fortran call wrote (0 when not asked for).
fn fortran_error(ierror: *const c_int) -> c_int {
    written(ierror)
}

/// A Fortran completion through [`completion`]: the count by reference, the statuses as
/// given, the error from `ierror`.
#[inline(always)]
fn fortran_completion(
    scope: &Scope,
    call: Call,
    (count, requests): (c_int, *mut c_int),
    given: *mut c_int,
    ierror: *mut c_int,
    invoke: impl FnOnce(*mut c_int),
    finished: impl FnOnce(c_int) -> Finished,
) {
    completion(
        scope,
        call,
        (count, Requests::Fortran(requests)),
        given.cast(),
        |statuses| {
            invoke(statuses.cast());
            fortran_error(ierror)
        },
        finished,
    );
}

/// Fortran completion hooks, one per name, as [`c_completion`]: every argument by
/// reference, the error in `ierror`; `FIRST`, in `$finished`, the index of the first
/// request ([`first_index`]).
macro_rules! fortran_completion {
    ([$($name:ident),+] $arguments:tt, $count:expr, $requests:expr, $statuses:ident,
     $ierror:ident, $finished:expr) => {$(
        fortran_completion!(@one $name $arguments, $count, $requests, $statuses, $ierror, $finished);
    )+};
    (@one $name:ident ($($arg:ident: $ty:ty),*), $count:expr, $requests:expr, $statuses:ident,
     $ierror:ident, $finished:expr) => {
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name($($arg: $ty),*) {
            #[allow(dead_code)]
            const FIRST: c_int = first_index(Call::$name);
            let (real, scope) = fortran_real_or_forward!($name, ($($ty),*), ($($arg),*));
            fortran_completion(
                &scope,
                Call::$name,
                ($count, $requests),
                $statuses,
                $ierror,
                // SAFETY: the caller's arguments, with statuses that can be filled.
                |$statuses| unsafe { real($($arg),*) },
                $finished,
            )
        }
    };
}

fortran_completion!(
    [mpi_wait_, ompi_wait_f, mpi_wait_f08_](
        request: *mut c_int,
        status: *mut c_int,
        ierror: *mut c_int
    ),
    1,
    request,
    status,
    ierror,
    |_| Finished::One(0, 0)
);
fortran_completion!(
    [mpi_test_, pmpi_test_, ompi_test_f, mpi_test_f08_](
        request: *mut c_int,
        flag: *mut c_int,
        status: *mut c_int,
        ierror: *mut c_int
    ),
    1,
    request,
    status,
    ierror,
    |_| match written(flag) {
        0 => Finished::None,
        _ => Finished::One(0, 0),
    }
);
fortran_completion!(
    [mpi_waitall_, ompi_waitall_f, mpi_waitall_f08_](
        count: *const c_int,
        requests: *mut c_int,
        statuses: *mut c_int,
        ierror: *mut c_int
    ),
    written(count),
    requests,
    statuses,
    ierror,
    |_| Finished::All
);
fortran_completion!(
    [mpi_testall_, pmpi_testall_, ompi_testall_f, mpi_testall_f08_](
        count: *const c_int,
        requests: *mut c_int,
        flag: *mut c_int,
        statuses: *mut c_int,
        ierror: *mut c_int
    ),
    written(count),
    requests,
    statuses,
    ierror,
    |_| match written(flag) {
        0 => Finished::None,
        _ => Finished::All,
    }
);
fortran_completion!(
    [mpi_waitany_, ompi_waitany_f, mpi_waitany_f08_](
        count: *const c_int,
        requests: *mut c_int,
        index: *mut c_int,
        status: *mut c_int,
        ierror: *mut c_int
    ),
    written(count),
    requests,
    status,
    ierror,
    |_| one_of(index, FIRST)
);
fortran_completion!(
    [mpi_testany_, pmpi_testany_, ompi_testany_f, mpi_testany_f08_](
        count: *const c_int,
        requests: *mut c_int,
        index: *mut c_int,
        flag: *mut c_int,
        status: *mut c_int,
        ierror: *mut c_int
    ),
    written(count),
    requests,
    status,
    ierror,
    |_| match written(flag) {
        0 => Finished::None,
        _ => one_of(index, FIRST),
    }
);
fortran_completion!(
    [
        mpi_waitsome_,
        ompi_waitsome_f,
        mpi_testsome_,
        pmpi_testsome_,
        ompi_testsome_f,
        mpi_waitsome_f08_,
        mpi_testsome_f08_
    ](
        incount: *const c_int,
        requests: *mut c_int,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut c_int,
        ierror: *mut c_int
    ),
    written(incount),
    requests,
    statuses,
    ierror,
    |_| listed(outcount, indices, FIRST)
);

/// The index a Fortran completion gives its first request: 1 where the hooked function is
/// Fortran's own (Open MPI's, which adds 1 to the C index), 0 in MPICH's `mpi_x_f08_` glue
/// (C's index, to which its Fortran wrapper adds 1 afterwards).
const fn first_index(call: Call) -> c_int {
    match call.fortran_binding() {
        cairn_model::FortranBinding::F08 => 0,
        _ => 1,
    }
}

/// What `Waitany`/`Testany` (having finished one) finished: request `index` − `first`;
/// nothing when no request was active (`MPI_UNDEFINED`).
fn one_of(index: *const c_int, first: c_int) -> Finished {
    match written(index) {
        done if done >= first => Finished::One((done - first) as usize, 0),
        _ => Finished::None,
    }
}

/// The status a Fortran receive fills: the program's, or the hook's own (`own`) when the
/// program passed `MPI_STATUS_IGNORE`, so that the bytes that arrived can be read.
fn fortran_status_to_fill(given: *mut c_int, own: &mut [u64; 4]) -> *mut c_int {
    let ignored = given.is_null()
        || mpi_abi::fortran_status_ignored(given.cast())
        || mpi_abi::f08_status_ignored(given.cast());
    if ignored && mpi_abi::status_size().is_some() {
        own.as_mut_ptr().cast()
    } else {
        given
    }
}

/// Fortran `MPI_RECV` hooks (Open MPI's `mpi_recv_` and the `ompi_recv_f` its `use
/// mpi_f08` module calls), as C's `MPI_Recv`: the bytes its status says arrived.
macro_rules! fortran_recv {
    ($($name:ident),+) => {$(
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: *const c_int,
            datatype: *const c_int,
            source: *const c_int,
            tag: *const c_int,
            comm: *const c_int,
            status: *mut c_int,
            ierror: *mut c_int,
        ) {
            let (real, scope) = fortran_real_or_forward!(
                $name,
                (
                    *mut c_void,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *mut c_int,
                    *mut c_int
                ),
                (buf, count, datatype, source, tag, comm, status, ierror)
            );
            let mut own = [0u64; 4];
            let status = fortran_status_to_fill(status, &mut own);
            traced_with(
                &scope,
                Call::$name,
                || {
                    // SAFETY: the caller's arguments, with a status that can be filled.
                    unsafe { real(buf, count, datatype, source, tag, comm, status, ierror) };
                    fortran_error(ierror)
                },
                |scope, times, _| {
                    record(scope, Call::$name, times, |event, state| {
                        adapters::fortran_received(
                            event, state, count, datatype, source, tag, comm, status, ierror,
                        )
                    })
                },
            );
        }
    )+};
}

fortran_recv!(mpi_recv_, ompi_recv_f);

/// Fortran `MPI_SENDRECV` hooks, as C's `MPI_Sendrecv`: the send, then its receiving half
/// (`MPI_Sendrecv_received`) with the bytes its status says arrived.
macro_rules! fortran_sendrecv {
    ($($name:ident),+) => {$(
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(
            sendbuf: *const c_void,
            sendcount: *const c_int,
            sendtype: *const c_int,
            dest: *const c_int,
            sendtag: *const c_int,
            recvbuf: *mut c_void,
            recvcount: *const c_int,
            recvtype: *const c_int,
            source: *const c_int,
            recvtag: *const c_int,
            comm: *const c_int,
            status: *mut c_int,
            ierror: *mut c_int,
        ) {
            let (real, scope) = fortran_real_or_forward!(
                $name,
                (
                    *const c_void,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *mut c_void,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *const c_int,
                    *mut c_int,
                    *mut c_int
                ),
                (
                    sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                    source, recvtag, comm, status, ierror
                )
            );
            let mut own = [0u64; 4];
            let status = fortran_status_to_fill(status, &mut own);
            traced_with(
                &scope,
                Call::$name,
                || {
                    // SAFETY: the caller's arguments, with a status that can be filled.
                    unsafe {
                        real(
                            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, status, ierror,
                        )
                    };
                    fortran_error(ierror)
                },
                |scope, times, _| {
                    record(scope, Call::$name, times, |event, state| {
                        adapters::fortran_message(
                            event, state, sendcount, sendtype, dest, sendtag, comm, ierror, (),
                        )
                    });
                    let share = crate::hooks::Times {
                        start: times.end,
                        ..times
                    };
                    record(scope, Call::MPI_Sendrecv_received, share, |event, state| {
                        adapters::fortran_received(
                            event, state, recvcount, recvtype, source, recvtag, comm, status,
                            ierror,
                        )
                    })
                },
            );
        }
    )+};
}

fortran_sendrecv!(mpi_sendrecv_, ompi_sendrecv_f);

/// Fortran `MPI_START` and `MPI_STARTALL` (Open MPI's `mpi_x_` and `ompi_x_f`, MPICH's
/// `use mpi_f08` glue, which calls PMPI): as C's (`crate::persistent`), the requests
/// converted to C handles.
macro_rules! fortran_start {
    ($($name:ident),+) => {$(
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(request: *mut c_int, ierror: *mut c_int) {
            let (real, scope) =
                fortran_real_or_forward!($name, (*mut c_int, *mut c_int), (request, ierror));
            let starting = fortran_starting(1, request);
            crate::persistent::start(&scope, Call::$name, 1, starting, || {
                // SAFETY: forwarding the caller's arguments.
                unsafe { real(request, ierror) };
                fortran_error(ierror)
            });
        }
    )+};
}

macro_rules! fortran_startall {
    ($($name:ident),+) => {$(
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(
            count: *const c_int,
            requests: *mut c_int,
            ierror: *mut c_int,
        ) {
            let (real, scope) = fortran_real_or_forward!(
                $name,
                (*const c_int, *mut c_int, *mut c_int),
                (count, requests, ierror)
            );
            let starting = fortran_starting(written(count), requests);
            crate::persistent::start(&scope, Call::$name, written(count), starting, || {
                // SAFETY: forwarding the caller's arguments.
                unsafe { real(count, requests, ierror) };
                fortran_error(ierror)
            });
        }
    )+};
}

fortran_start!(mpi_start_, ompi_start_f, mpi_start_f08_);
fortran_startall!(mpi_startall_, ompi_startall_f, mpi_startall_f08_);

/// The persistent requests among `count` Fortran requests.
fn fortran_starting(count: c_int, requests: *mut c_int) -> Vec<crate::persistent::Persistent> {
    if requests.is_null() {
        return Vec::new();
    }
    let requests = Requests::Fortran(requests);
    crate::persistent::starting((0..count.max(0) as usize).map(|index| {
        // SAFETY: the program passes `count` requests.
        unsafe { requests.handle(index) }
    }))
}

/// Fortran `MPI_REQUEST_FREE`, as C's: the request converted to its C handle first.
macro_rules! fortran_request_free {
    ($($name:ident),+) => {$(
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name(request: *mut c_int, ierror: *mut c_int) {
            let (real, scope) =
                fortran_real_or_forward!($name, (*mut c_int, *mut c_int), (request, ierror));
            let received = if request.is_null() || mpi_abi::family().is_none() {
                0
            } else {
                // SAFETY: the program passes its request.
                freeing(Some(adapters::c_request(unsafe { *request })))
            };
            traced_with(
                &scope,
                Call::$name,
                || {
                    // SAFETY: forwarding the caller's arguments.
                    unsafe { real(request, ierror) };
                    fortran_error(ierror)
                },
                |scope, times, ret| {
                    record(scope, Call::$name, times, |event, state| {
                        adapters::mpi_completion_received(event, state, 1, (received, None), ret)
                    })
                },
            );
        }
    )+};
}

fortran_request_free!(
    mpi_request_free_,
    ompi_request_free_f,
    mpi_request_free_f08_
);

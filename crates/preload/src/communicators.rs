//! Communicator creation (`MPI_Comm_split`, `MPI_Comm_split_type`, `MPI_Comm_dup`,
//! `MPI_Comm_create`, `MPI_Cart_create`): the call's event (a collective over the old communicator), then its
//! `MPI_Comm_made` share with the new communicator as its handle and, in `aux` as a peer
//! and a tag, the world rank of the new communicator's rank 0 and this rank's rank in it
//! (`MPI_UNDEFINED` and 0 for a rank left out). That is a split's color and key, so a
//! replay makes every communicator again, its members in the same order. `MPI_Comm_free`
//! keeps the communicator it frees as its handle (the call sets the program's to
//! `MPI_COMM_NULL`), so the replay frees the same one.

use std::ffi::c_int;
use std::sync::atomic::AtomicUsize;

use cairn_format::segment::RawEvent;
use cairn_model::Call;

use crate::adapters;
use crate::hooks::{missing, record, traced_with, MpiHandle, Times};
use crate::mpi_abi;
use crate::recorder::{Scope, ThreadState};

static COMM_RANK: AtomicUsize = AtomicUsize::new(0);
static COMM_GROUP: AtomicUsize = AtomicUsize::new(0);
static TRANSLATE: AtomicUsize = AtomicUsize::new(0);
static GROUP_FREE: AtomicUsize = AtomicUsize::new(0);

/// The new communicator's share: see the module note. Nothing is written when the call
/// failed.
fn made(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    newcomm: *mut MpiHandle,
    ret: c_int,
) -> bool {
    if ret != 0 || newcomm.is_null() {
        return false;
    }
    // SAFETY: the call succeeded and wrote one handle of its family there.
    let Some(new) = (unsafe { mpi_abi::handle_at(newcomm.cast(), 0) }) else {
        return false;
    };
    let Some(constants) = mpi_abi::constants() else {
        return false;
    };
    event.handle = mpi_abi::communicator(new);
    let (leader, rank) = if new == constants.comm_null {
        (mpi_abi::UNDEFINED, 0)
    } else {
        leader_and_rank(new, constants.world).unwrap_or((mpi_abi::UNDEFINED, 0))
    };
    event.aux = (rank as u32 as u64) << 32 | leader as u32 as u64;
    true
}

/// The world rank of `comm`'s rank 0, and this rank's rank in `comm`, through PMPI (group
/// translation is local: no message).
fn leader_and_rank(comm: MpiHandle, world: MpiHandle) -> Option<(c_int, c_int)> {
    let function = |cache: &AtomicUsize, name: &std::ffi::CStr| {
        Some(mpi_abi::cached_symbol(cache, name)).filter(|address| *address != 0)
    };
    type Rank = unsafe extern "C" fn(MpiHandle, *mut c_int) -> c_int;
    type Group = unsafe extern "C" fn(MpiHandle, *mut u64) -> c_int;
    type Translate = unsafe extern "C" fn(u64, c_int, *const c_int, u64, *mut c_int) -> c_int;
    type Free = unsafe extern "C" fn(*mut u64) -> c_int;
    let rank_of = function(&COMM_RANK, c"PMPI_Comm_rank")?;
    let group_of = function(&COMM_GROUP, c"PMPI_Comm_group")?;
    let translate = function(&TRANSLATE, c"PMPI_Group_translate_ranks")?;
    let free = function(&GROUP_FREE, c"PMPI_Group_free")?;
    let (mut rank, mut leader) = (0 as c_int, 0 as c_int);
    // Group handles: a pointer, or an int in the low half (zeroed slots either way).
    let (mut group, mut world_group) = (0u64, 0u64);
    // SAFETY: the library's own functions with their C signatures, its handles, and
    // out-pointers to slots of ours large enough for either family's handles.
    unsafe {
        std::mem::transmute::<usize, Rank>(rank_of)(comm, &mut rank);
        std::mem::transmute::<usize, Group>(group_of)(comm, &mut group);
        std::mem::transmute::<usize, Group>(group_of)(world, &mut world_group);
        let first: c_int = 0;
        std::mem::transmute::<usize, Translate>(translate)(
            group,
            1,
            &first,
            world_group,
            &mut leader,
        );
        std::mem::transmute::<usize, Free>(free)(&mut group);
        std::mem::transmute::<usize, Free>(free)(&mut world_group);
    }
    Some((leader, rank))
}

macro_rules! communicator_hook {
    ($name:ident ( $($arg:ident : $ty:ty),* ), $comm:ident, $newcomm:ident) => {
        /// Traced as its call's event and its `MPI_Comm_made` share (see the module note).
        ///
        /// # Safety
        /// The MPI function's own contract.
        #[cfg_attr(not(cairn_wrap), no_mangle)]
        #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            type Real = unsafe extern "C" fn($($ty),*) -> c_int;
            let Some(real) = crate::real::get(Call::$name) else { return missing() };
            // SAFETY: `real` is the next definition of this very symbol.
            let real = unsafe { std::mem::transmute::<usize, Real>(real) };
            let Some(scope) = Scope::enter() else {
                // SAFETY: forwarding the caller's own arguments.
                return unsafe { real($($arg),*) };
            };
            traced_with(
                &scope,
                Call::$name,
                // SAFETY: forwarding the caller's own arguments.
                || unsafe { real($($arg),*) },
                |scope, times, ret| {
                    record(scope, Call::$name, times, |event, state| {
                        adapters::mpi_collective(event, state, 0, std::ptr::null_mut(), -1, $comm, ret)
                    });
                    let share = Times { start: times.end, ..times };
                    record(scope, Call::MPI_Comm_made, share, |event, state| {
                        made(event, state, $newcomm, ret)
                    });
                },
            )
        }
    };
}

communicator_hook!(MPI_Comm_split(comm: MpiHandle, color: c_int, key: c_int, newcomm: *mut MpiHandle), comm, newcomm);
communicator_hook!(
    MPI_Comm_split_type(
        comm: MpiHandle,
        split_type: c_int,
        key: c_int,
        info: MpiHandle,
        newcomm: *mut MpiHandle
    ),
    comm,
    newcomm
);
communicator_hook!(MPI_Comm_dup(comm: MpiHandle, newcomm: *mut MpiHandle), comm, newcomm);
communicator_hook!(MPI_Comm_create(comm: MpiHandle, group: MpiHandle, newcomm: *mut MpiHandle), comm, newcomm);
communicator_hook!(
    MPI_Cart_create(
        comm: MpiHandle,
        ndims: c_int,
        dims: *const c_int,
        periods: *const c_int,
        reorder: c_int,
        newcomm: *mut MpiHandle
    ),
    comm,
    newcomm
);

/// Traced with the communicator it frees as its handle.
///
/// # Safety
/// The MPI function's own contract.
#[cfg_attr(not(cairn_wrap), no_mangle)]
#[cfg_attr(cairn_wrap, export_name = "__wrap_MPI_Comm_free")]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut MpiHandle) -> c_int {
    type Real = unsafe extern "C" fn(*mut MpiHandle) -> c_int;
    let Some(real) = crate::real::get(Call::MPI_Comm_free) else {
        return missing();
    };
    // SAFETY: `real` is the next definition of this very symbol.
    let real = unsafe { std::mem::transmute::<usize, Real>(real) };
    let Some(scope) = Scope::enter() else {
        // SAFETY: forwarding the caller's own argument.
        return unsafe { real(comm) };
    };
    // Before the call, which replaces it with MPI_COMM_NULL.
    let freed = if comm.is_null() {
        None
    } else {
        // SAFETY: MPI requires `comm` to point to a valid communicator handle.
        unsafe { mpi_abi::handle_at(comm.cast(), 0) }
    };
    traced_with(
        &scope,
        Call::MPI_Comm_free,
        // SAFETY: forwarding the caller's own argument.
        || unsafe { real(comm) },
        |scope, times, ret| {
            record(scope, Call::MPI_Comm_free, times, |event, state| {
                adapters::mpi_local(event, state, ret);
                event.handle = freed.map_or(0, mpi_abi::communicator);
                true
            })
        },
    )
}

/// A Fortran argument passed by reference (0 when absent).
fn fortran_int(value: *const c_int) -> c_int {
    if value.is_null() {
        0
    } else {
        // SAFETY: Fortran passes every argument by reference.
        unsafe { *value }
    }
}

/// The new communicator's share, from Fortran: named by its Fortran number, as every
/// Fortran call names its communicator; the leader and rank asked of its C handle.
fn fortran_made(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    newcomm: *const c_int,
    ierror: *const c_int,
) -> bool {
    if fortran_int(ierror) != 0 || newcomm.is_null() {
        return false;
    }
    let Some(constants) = mpi_abi::constants() else {
        return false;
    };
    let new = fortran_int(newcomm);
    let c_new = adapters::c_communicator(new);
    event.handle = new as u32 as u64;
    let (leader, rank) = if c_new == constants.comm_null {
        (mpi_abi::UNDEFINED, 0)
    } else {
        leader_and_rank(c_new, constants.world).unwrap_or((mpi_abi::UNDEFINED, 0))
    };
    event.aux = (rank as u32 as u64) << 32 | leader as u32 as u64;
    true
}

/// Fortran communicator creation: the call's event (a collective over the old
/// communicator, by its Fortran number) and its `MPI_Comm_made` share, as from C. Open
/// MPI's Fortran layer calls `PMPI_*`, so the C hooks never see these; under MPICH the
/// legacy names call the C entry points and are traced there.
macro_rules! fortran_communicator_hook {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $comm:ident, $newcomm:ident, $ierror:ident;)*) => {
        $(
            /// # Safety
            /// Called by a Fortran MPI program with its arguments (all by reference).
            #[cfg_attr(not(cairn_wrap), no_mangle)]
            #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
            pub unsafe extern "C" fn $name($($arg: $ty),*) {
                type Real = unsafe extern "C" fn($($ty),*);
                let Some(real) = crate::real::get(Call::$name) else {
                    return;
                };
                // SAFETY: the next definition of this symbol.
                let real = unsafe { std::mem::transmute::<usize, Real>(real) };
                const BINDING: cairn_model::FortranBinding = Call::$name.fortran_binding();
                let traced_elsewhere = mpi_abi::traced_elsewhere(BINDING);
                let Some(scope) = Scope::enter().filter(|_| !traced_elsewhere) else {
                    // SAFETY: forwarding the caller's arguments.
                    return unsafe { real($($arg),*) };
                };
                traced_with(
                    &scope,
                    Call::$name,
                    // SAFETY: forwarding the caller's arguments.
                    || unsafe { real($($arg),*) },
                    |scope, times, ()| {
                        record(scope, Call::$name, times, |event, state| {
                            adapters::fortran_collective(
                                event,
                                state,
                                std::ptr::null(),
                                std::ptr::null(),
                                $comm,
                                $ierror,
                                (),
                            )
                        });
                        let share = Times { start: times.end, ..times };
                        record(scope, Call::MPI_Comm_made, share, |event, state| {
                            fortran_made(event, state, $newcomm, $ierror)
                        });
                    },
                )
            }
        )*
    };
}

fortran_communicator_hook! {
    mpi_comm_split_(comm: *const c_int, color: *const c_int, key: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    ompi_comm_split_f(comm: *const c_int, color: *const c_int, key: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    mpi_comm_split_f08_(comm: *const c_int, color: *const c_int, key: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    mpi_comm_dup_(comm: *const c_int, newcomm: *mut c_int, ierror: *mut c_int) => comm, newcomm, ierror;
    ompi_comm_dup_f(comm: *const c_int, newcomm: *mut c_int, ierror: *mut c_int) => comm, newcomm, ierror;
    mpi_comm_dup_f08_(comm: *const c_int, newcomm: *mut c_int, ierror: *mut c_int) => comm, newcomm, ierror;
    mpi_comm_create_(comm: *const c_int, group: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    ompi_comm_create_f(comm: *const c_int, group: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    mpi_comm_create_f08_(comm: *const c_int, group: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    mpi_cart_create_(comm: *const c_int, ndims: *const c_int, dims: *const c_int, periods: *const c_int, reorder: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    ompi_cart_create_f(comm: *const c_int, ndims: *const c_int, dims: *const c_int, periods: *const c_int, reorder: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
    mpi_cart_create_f08_(comm: *const c_int, ndims: *const c_int, dims: *const c_int, periods: *const c_int, reorder: *const c_int, newcomm: *mut c_int, ierror: *mut c_int)
        => comm, newcomm, ierror;
}

/// Fortran `MPI_COMM_FREE`: traced with the Fortran number of the communicator it frees
/// (read before the call sets it to `MPI_COMM_NULL`).
macro_rules! fortran_comm_free_hook {
    ($($name:ident),*) => {
        $(
            /// # Safety
            /// Called by a Fortran MPI program with its arguments (all by reference).
            #[cfg_attr(not(cairn_wrap), no_mangle)]
            #[cfg_attr(cairn_wrap, export_name = concat!("__wrap_", stringify!($name)))]
            pub unsafe extern "C" fn $name(comm: *mut c_int, ierror: *mut c_int) {
                type Real = unsafe extern "C" fn(*mut c_int, *mut c_int);
                let Some(real) = crate::real::get(Call::$name) else {
                    return;
                };
                // SAFETY: the next definition of this symbol.
                let real = unsafe { std::mem::transmute::<usize, Real>(real) };
                const BINDING: cairn_model::FortranBinding = Call::$name.fortran_binding();
                let traced_elsewhere = mpi_abi::traced_elsewhere(BINDING);
                let Some(scope) = Scope::enter().filter(|_| !traced_elsewhere) else {
                    // SAFETY: forwarding the caller's arguments.
                    return unsafe { real(comm, ierror) };
                };
                let freed = fortran_int(comm);
                traced_with(
                    &scope,
                    Call::$name,
                    // SAFETY: forwarding the caller's arguments.
                    || unsafe { real(comm, ierror) },
                    |scope, times, ()| {
                        record(scope, Call::$name, times, |event, state| {
                            adapters::mpi_local(event, state, fortran_int(ierror));
                            event.handle = freed as u32 as u64;
                            true
                        })
                    },
                )
            }
        )*
    };
}

fortran_comm_free_hook!(mpi_comm_free_, ompi_comm_free_f, mpi_comm_free_f08_);

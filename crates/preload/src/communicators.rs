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

//! Which MPI library a process runs with, and the few places where the binary interfaces
//! of the two families differ: shared by the tracer (`libcairn.so`, whose hooks forward the
//! program's calls) and the replayer (`cairn replay`, which makes calls of its own), neither
//! of which links libmpi — everything is looked up with `dlsym` once the library is loaded. The hooks are the same for both (C arguments that are
//! handles arrive in a 64-bit register either way and are forwarded untouched); only what
//! the library reads *through* pointers, and the constants it passes itself, depend on it:
//!
//! | | Open MPI | MPICH family (MPICH, MVAPICH, Intel MPI) |
//! |---|---|---|
//! | `MPI_Comm`, `MPI_Datatype`, … | pointer (8 bytes) | `int` (4 bytes) |
//! | `MPI_Status` source, tag | ints 0, 1 | ints 2, 3 |
//! | `MPI_ANY_SOURCE` | −1 | −2 |
//! | `MPI_STATUS_IGNORE` | null | 1 |
//! | `MPI_COMM_WORLD`, `MPI_BYTE` | `&ompi_mpi_comm_world`, `&ompi_mpi_byte` | `0x44000000`, `0x4c00010d` |
//! | `use mpi` Fortran names call | `PMPI_*` | `MPI_*` (so the C hooks see Fortran calls) |
//! | `use mpi_f08` names call | `ompi_x_f` (hooked) | `PMPI_*` or C glue reaching `MPI_*` |
//!
//! The family is found from symbols only one of them exports, at the first MPI call; for
//! another MPI nothing is read through a pointer whose layout depends on it.

use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// The two ABI families cairn knows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    OpenMpi,
    Mpich,
}

const NOT_LOOKED: u8 = 0;
const OPEN_MPI: u8 = 1;
const MPICH: u8 = 2;
const OTHER: u8 = 3;

/// Looked up at the first MPI call (libmpi is loaded by then), then remembered: an MPI
/// found in neither family (or loaded where `dlsym` cannot see it) stays unknown.
static FAMILY: AtomicU8 = AtomicU8::new(NOT_LOOKED);

/// A function's address (0 if absent), looked up once into `cache`: resolved at run time,
/// so the library never links libmpi.
pub fn cached_symbol(cache: &AtomicUsize, name: &CStr) -> usize {
    let mut function = cache.load(Ordering::Relaxed);
    if function == 0 {
        // SAFETY: looking up a symbol by its NUL-terminated name.
        function = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) } as usize;
        cache.store(function, Ordering::Relaxed);
    }
    function
}

fn exported(name: &CStr) -> bool {
    // SAFETY: looking up a symbol by its NUL-terminated name.
    !unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }.is_null()
}

/// The MPI family of the loaded library, if it is one of the two and its symbols can be
/// found. Only called from MPI hooks and the MPI_Finalize merge, once libmpi is loaded.
pub fn family() -> Option<Family> {
    let mut code = FAMILY.load(Ordering::Relaxed);
    if code == NOT_LOOKED {
        code = if exported(c"ompi_mpi_comm_world") {
            OPEN_MPI
        } else if exported(c"MPIR_F08_MPI_IN_PLACE") || exported(c"MPIR_Process") {
            MPICH
        } else {
            OTHER
        };
        FAMILY.store(code, Ordering::Relaxed);
    }
    match code {
        OPEN_MPI => Some(Family::OpenMpi),
        MPICH => Some(Family::Mpich),
        _ => None,
    }
}

/// A communicator, datatype or request handle as a number that identifies it: MPICH's are
/// 32-bit ints, whose register's upper half the C ABI leaves undefined.
pub fn handle_value(handle: *mut c_void) -> u64 {
    match family() {
        Some(Family::Mpich) => handle as usize as u32 as u64,
        _ => handle as u64,
    }
}

/// A communicator as events keep it: 0 for `MPI_COMM_WORLD`, whose handle differs from
/// process to process in Open MPI (an address), so that readers can tell world ranks in
/// peers on every rank alike; else its handle value (numbered per process when the trace
/// is built). Fortran's world communicator under Open MPI is already 0.
pub fn communicator(comm: *mut c_void) -> u64 {
    static WORLD: AtomicUsize = AtomicUsize::new(0);
    let value = handle_value(comm);
    let world = match family() {
        Some(Family::Mpich) => 0x4400_0000,
        Some(Family::OpenMpi) => cached_symbol(&WORLD, c"ompi_mpi_comm_world") as u64,
        None => return value,
    };
    if value == world {
        0
    } else {
        value
    }
}

/// Element `index` of an array of handles (`MPI_Datatype types[]`), `None` when the
/// family, and so the element size, is unknown.
///
/// # Safety
/// `array` must hold more than `index` handles of the program's MPI library.
pub unsafe fn handle_at(array: *const c_void, index: usize) -> Option<*mut c_void> {
    // SAFETY: the caller vouches for the array; the element size is the family's.
    unsafe {
        match family()? {
            Family::OpenMpi => Some(*array.cast::<*mut c_void>().add(index)),
            Family::Mpich => Some(*array.cast::<c_int>().add(index) as u32 as usize as *mut c_void),
        }
    }
}

/// The source and tag an `MPI_Status` holds, `None` when its layout is unknown.
///
/// # Safety
/// `status` must point to a status the library filled.
pub unsafe fn status_source_and_tag(status: *const c_void) -> Option<(c_int, c_int)> {
    let first = match family()? {
        Family::OpenMpi => 0,
        Family::Mpich => 2,
    };
    let fields = status.cast::<c_int>();
    // SAFETY: both layouts have at least `first + 2` leading ints.
    unsafe { Some((*fields.add(first), *fields.add(first + 1))) }
}

/// Bytes an `MPI_Status` says a receive got (both families keep bytes, whatever the
/// datatype), `None` when its layout is unknown.
///
/// # Safety
/// `status` must point to a status the library filled.
pub unsafe fn status_bytes(status: *const c_void) -> Option<u64> {
    match family()? {
        // source, tag, error, cancelled, then `size_t _ucount`.
        // SAFETY: an Open MPI status is 24 bytes; read unaligned, since a Fortran status
        // (the same bytes as integers) may sit at any 4-byte boundary.
        Family::OpenMpi => unsafe {
            Some(status.cast::<u8>().add(16).cast::<u64>().read_unaligned())
        },
        Family::Mpich => {
            let fields = status.cast::<c_int>();
            // SAFETY: `count_lo`, then `count_hi_and_cancelled` (the cancelled bit lowest).
            let (low, high) =
                unsafe { (*fields as u32 as u64, (*fields.add(1) as u32 >> 1) as u64) };
            Some(low | high << 32)
        }
    }
}

/// Bytes of one `MPI_Status` of the loaded library, `None` when unknown.
pub fn status_size() -> Option<usize> {
    match family()? {
        Family::OpenMpi => Some(24),
        Family::Mpich => Some(20),
    }
}

/// Whether a status argument is a sentinel (`MPI_STATUS_IGNORE`, `MPI_STATUSES_IGNORE`:
/// null in Open MPI, 1 in MPICH) rather than the program's status: never read through it.
pub fn status_ignored(status: *const c_void) -> bool {
    (status as usize) < 4096
}

/// Whether a status argument of MPICH's `use mpi_f08` glue is its `MPI_STATUS_IGNORE` or
/// `MPI_STATUSES_IGNORE` (objects of their own, which the glue turns into C's sentinels).
pub fn f08_status_ignored(status: *const c_void) -> bool {
    static IGNORE: AtomicUsize = AtomicUsize::new(0);
    static IGNORES: AtomicUsize = AtomicUsize::new(0);
    let address = status as usize;
    address != 0
        && (address == cached_symbol(&IGNORE, c"MPIR_F08_MPI_STATUS_IGNORE_OBJ")
            || address == cached_symbol(&IGNORES, c"MPIR_F08_MPI_STATUSES_IGNORE_OBJ"))
}

/// Whether a status argument of Open MPI's Fortran bindings (`use mpi`, `mpif.h`, and the
/// `ompi_x_f` functions behind `use mpi_f08`) is its `MPI_STATUS_IGNORE` or
/// `MPI_STATUSES_IGNORE`: the address of a common block, under one of the four names a
/// Fortran compiler may give it (Open MPI compares with all four too).
pub fn fortran_status_ignored(status: *const c_void) -> bool {
    static NAMES: [&CStr; 8] = [
        c"mpi_fortran_status_ignore_",
        c"mpi_fortran_statuses_ignore_",
        c"mpi_fortran_status_ignore",
        c"mpi_fortran_statuses_ignore",
        c"mpi_fortran_status_ignore__",
        c"mpi_fortran_statuses_ignore__",
        c"MPI_FORTRAN_STATUS_IGNORE",
        c"MPI_FORTRAN_STATUSES_IGNORE",
    ];
    // Looked up once each: a name that is absent is kept as 1 (never a status's address),
    // so a completion does not ask `dlsym` again.
    static ADDRESSES: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];
    let address = status as usize;
    if address < 4096 || family() != Some(Family::OpenMpi) {
        return false;
    }
    NAMES.iter().zip(&ADDRESSES).any(|(name, cache)| {
        let mut known = cache.load(Ordering::Relaxed);
        if known == 0 {
            // SAFETY: looking up a symbol by its NUL-terminated name.
            known = (unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) } as usize).max(1);
            cache.store(known, Ordering::Relaxed);
        }
        known == address
    })
}

/// `MPI_ANY_SOURCE` of the loaded library (−1 when unknown: Open MPI's, and never a rank).
pub fn any_source() -> c_int {
    match family() {
        Some(Family::Mpich) => -2,
        _ => -1,
    }
}

/// `MPI_ANY_TAG`: the same in both families.
pub const ANY_TAG: c_int = -1;

/// Whether a Fortran entry point of `binding` is traced by another hook with this MPI, so
/// its own hook only forwards (each call must count once): MPICH's `use mpi` names call the
/// C `MPI_*` entry points; Open MPI's `use mpi_f08` names call its `ompi_x_f` functions.
/// With an unknown MPI the `mpi_f08` names forward too (what they call is unknown).
pub fn traced_elsewhere(binding: cairn_model::FortranBinding) -> bool {
    use cairn_model::FortranBinding;
    match binding {
        FortranBinding::None | FortranBinding::OpenMpiInner => false,
        FortranBinding::Legacy => family() == Some(Family::Mpich),
        FortranBinding::F08 => family() != Some(Family::Mpich),
    }
}

/// The predefined handles a caller passes itself: the merge at `MPI_Finalize`, and the
/// replayer's calls.
/// `MPI_UNDEFINED` (the color of a rank that joins no communicator), the same in both
/// families.
pub const UNDEFINED: i32 = -32766;

pub struct Constants {
    pub world: *mut c_void,
    pub comm_self: *mut c_void,
    /// `MPI_COMM_NULL`: what a rank outside a new communicator gets.
    pub comm_null: *mut c_void,
    pub byte: *mut c_void,
    pub int: *mut c_void,
    /// `MPI_BOR`: the reduction the replayer uses (bitwise operations are defined on
    /// `MPI_BYTE`, so any byte count reduces).
    pub bor: *mut c_void,
    pub info_null: *mut c_void,
    pub request_null: *mut c_void,
    /// `MPI_STATUS_IGNORE`, which is also `MPI_STATUSES_IGNORE` in both families.
    pub status_ignore: *mut c_void,
}

pub fn constants() -> Option<Constants> {
    match family()? {
        Family::OpenMpi => {
            let address = |name: &CStr| {
                // SAFETY: looking up a symbol by its NUL-terminated name.
                let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
                (!found.is_null()).then_some(found)
            };
            Some(Constants {
                world: address(c"ompi_mpi_comm_world")?,
                comm_self: address(c"ompi_mpi_comm_self")?,
                comm_null: address(c"ompi_mpi_comm_null")?,
                byte: address(c"ompi_mpi_byte")?,
                int: address(c"ompi_mpi_int")?,
                bor: address(c"ompi_mpi_op_bor")?,
                info_null: address(c"ompi_mpi_info_null")?,
                request_null: address(c"ompi_request_null")?,
                status_ignore: std::ptr::null_mut(),
            })
        }
        Family::Mpich => {
            let handle = |value: usize| std::ptr::without_provenance_mut(value);
            Some(Constants {
                world: handle(0x4400_0000),
                comm_self: handle(0x4400_0001),
                comm_null: handle(0x0400_0000),
                byte: handle(0x4c00_010d),
                int: handle(0x4c00_0405),
                bor: handle(0x5800_0008),
                info_null: handle(0x1c00_0000),
                request_null: handle(0x2c00_0000),
                status_ignore: handle(1),
            })
        }
    }
}

/// The C handle of a Fortran file handle, where C hooks will see the file under it: with
/// MPICH, whose `use mpi_f08` module opens files through PMPI (traced by the Fortran hook)
/// and reads and writes them through the C entry points (traced by the C hooks).
pub fn c_file_of_fortran(handle: c_int) -> Option<usize> {
    if family()? != Family::Mpich {
        return None;
    }
    static FILE_F2C: AtomicUsize = AtomicUsize::new(0);
    let function = cached_symbol(&FILE_F2C, c"MPI_File_f2c");
    if function == 0 {
        return None;
    }
    type FileF2c = unsafe extern "C" fn(c_int) -> *mut c_void;
    // SAFETY: MPI_File_f2c converts any integer (an unknown one gives MPI_FILE_NULL).
    let file = unsafe { std::mem::transmute::<usize, FileF2c>(function)(handle) };
    (!file.is_null()).then_some(file as usize)
}

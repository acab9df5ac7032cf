//! Adapters of the rows wrapgen generated from libraries' headers (HDF5, and any library's
//! generic `library_call`).
//!
//! HDF5 identifies everything by `hid_t`: a file's id comes from `H5Fcreate`/`H5Fopen`
//! (which name the file), an object's from a call at a location (`H5Dcreate2(file, …)`),
//! so a small table maps each live id to its file. An id the table does not know (an
//! object opened through a call not hooked) is asked of HDF5 itself (`H5Fget_name`), but
//! only after `H5Iis_valid` and `H5Iget_type` say it is a file or object: HDF5 prints its
//! error stack for a bad id, and the program's output must not change. A transfer's bytes
//! are the selection's points times the memory type's size, asked of HDF5 after the call.

use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_format::segment::{path_origin, RawEvent};
use libc::{c_char, c_int};

use super::fail_if;
use crate::files;
use crate::recorder::ThreadState;
use crate::spin::SpinLock;

/// A generated call's return value: what the event keeps, and whether it says failure
/// (a negative number or a null pointer, as C libraries report errors).
pub trait CallResult: Copy {
    fn value(self) -> i64;
    fn failed(self) -> bool;
}

macro_rules! integer_results {
    ($($type:ty),*) => { $(
        impl CallResult for $type {
            #[allow(unused_comparisons)]
            fn value(self) -> i64 { self as i64 }
            #[allow(unused_comparisons)]
            fn failed(self) -> bool { self < 0 }
        }
    )* };
}
integer_results!(i8, u8, i16, u16, i32, u32, i64, u64);

impl CallResult for () {
    fn value(self) -> i64 {
        0
    }
    fn failed(self) -> bool {
        false
    }
}

impl CallResult for bool {
    fn value(self) -> i64 {
        self as i64
    }
    fn failed(self) -> bool {
        false
    }
}

impl CallResult for f64 {
    fn value(self) -> i64 {
        self as i64
    }
    fn failed(self) -> bool {
        false
    }
}

impl CallResult for f32 {
    fn value(self) -> i64 {
        self as i64
    }
    fn failed(self) -> bool {
        false
    }
}

impl<T> CallResult for *mut T {
    fn value(self) -> i64 {
        self as usize as i64
    }
    fn failed(self) -> bool {
        self.is_null()
    }
}

impl<T> CallResult for *const T {
    fn value(self) -> i64 {
        self as usize as i64
    }
    fn failed(self) -> bool {
        self.is_null()
    }
}

fn result(event: &mut RawEvent, ret: impl CallResult) {
    event.result = ret.value();
    fail_if(event, ret.failed());
}

// Rows of the generic `library` layer name it: a user's (`CAIRN_USER_CALLS`), none of the
// checked-in ones.
#[allow(dead_code)]
/// Any generated call: its first integer argument as the handle (0 for an open, whose
/// handle is its result), its size, and the file its name argument names (null: none) or
/// its handle was opened on.
pub fn library_call(
    event: &mut RawEvent,
    state: &mut ThreadState,
    handle: i64,
    size: u64,
    name: *const c_char,
    ret: impl CallResult,
) -> bool {
    event.handle = handle as u64;
    event.request = size;
    result(event, ret);
    if !name.is_null() {
        // A call that names a file and returns a number (an open): later calls on that
        // number are on the file.
        event.file = files::file_for_path(state, libc::AT_FDCWD, name, path_origin::NAMED);
        if handle == 0 && !ret.failed() && ret.value() != 0 {
            LIBRARY_IDS.bind(ret.value(), event.file);
        }
    } else if handle != 0 {
        event.file = LIBRARY_IDS.bound(handle).unwrap_or(0);
    }
    true
}

// ---- HDF5 ------------------------------------------------------------------------------

/// Live ids of a library and their files: a bounded table per library (past it, HDF5's
/// ids are asked of HDF5; NetCDF's go without a file).
struct Ids(SpinLock<Vec<(i64, u32)>>);

const MAX_IDS: usize = 4096;
static HDF5_IDS: Ids = Ids(SpinLock::new(Vec::new()));
static NETCDF_IDS: Ids = Ids(SpinLock::new(Vec::new()));
static LIBRARY_IDS: Ids = Ids(SpinLock::new(Vec::new()));

impl Ids {
    fn bind(&self, id: i64, file: u32) {
        if id < 0 || file == 0 {
            return;
        }
        self.0.with(|ids| {
            ids.retain(|(known, _)| *known != id);
            if ids.len() < MAX_IDS {
                ids.push((id, file));
            }
        });
    }

    fn unbind(&self, id: i64) -> u32 {
        self.0
            .with(|ids| {
                let index = ids.iter().position(|(known, _)| *known == id)?;
                Some(ids.swap_remove(index).1)
            })
            .unwrap_or(0)
    }

    /// The file of an id a close call was given: no longer bound if the close succeeded.
    fn closed(&self, id: i64, succeeded: bool) -> u32 {
        if succeeded {
            self.unbind(id)
        } else {
            self.bound(id).unwrap_or(0)
        }
    }

    fn bound(&self, id: i64) -> Option<u32> {
        self.0.with(|ids| {
            ids.iter()
                .find(|(known, _)| *known == id)
                .map(|(_, file)| *file)
        })
    }
}

/// A library's own functions the adapters ask, found once (in the global scope or in a library
/// loaded with `RTLD_LOCAL`, as h5py loads it).
struct LibraryFunction {
    name: &'static str,
    address: AtomicUsize,
}

impl LibraryFunction {
    const fn new(name: &'static str) -> LibraryFunction {
        LibraryFunction {
            name,
            address: AtomicUsize::new(0),
        }
    }

    fn get(&self) -> Option<usize> {
        let address = self.address.load(Ordering::Relaxed);
        if address != 0 {
            return Some(address);
        }
        let address = crate::real::find_symbol(self.name);
        self.address.store(address, Ordering::Relaxed);
        (address != 0).then_some(address)
    }
}

static H5I_IS_VALID: LibraryFunction = LibraryFunction::new("H5Iis_valid\0");
static H5I_GET_TYPE: LibraryFunction = LibraryFunction::new("H5Iget_type\0");
static H5F_GET_NAME: LibraryFunction = LibraryFunction::new("H5Fget_name\0");
static H5T_GET_SIZE: LibraryFunction = LibraryFunction::new("H5Tget_size\0");
static H5S_GET_SELECT_NPOINTS: LibraryFunction = LibraryFunction::new("H5Sget_select_npoints\0");
static H5D_GET_SPACE: LibraryFunction = LibraryFunction::new("H5Dget_space\0");
static H5A_GET_SPACE: LibraryFunction = LibraryFunction::new("H5Aget_space\0");
static H5S_CLOSE: LibraryFunction = LibraryFunction::new("H5Sclose\0");

/// `H5I_type_t` values of ids that live in a file and keep their number in every HDF5
/// since 1.8: file, group, datatype, dataset (attributes moved from 6 to 7 in 1.12; the
/// table knows them from `H5Acreate2`/`H5Aopen`).
const IN_A_FILE: [c_int; 4] = [1, 2, 3, 5];
/// `H5S_ALL`: the whole extent.
const H5S_ALL: i64 = 0;

/// The file of an HDF5 id: from the table, or asked of HDF5 for a valid object id.
fn object_file(state: &mut ThreadState, id: i64) -> u32 {
    if id <= 0 {
        return 0;
    }
    if let Some(file) = HDF5_IDS.bound(id) {
        return file;
    }
    let (Some(is_valid), Some(get_type), Some(get_name)) =
        (H5I_IS_VALID.get(), H5I_GET_TYPE.get(), H5F_GET_NAME.get())
    else {
        return 0;
    };
    // SAFETY: HDF5's own functions, with the signatures of H5Ipublic.h and H5Fpublic.h;
    // H5Iis_valid and H5Iget_type accept any id without pushing an error.
    unsafe {
        let is_valid: unsafe extern "C" fn(i64) -> c_int = std::mem::transmute(is_valid);
        let get_type: unsafe extern "C" fn(i64) -> c_int = std::mem::transmute(get_type);
        let get_name: unsafe extern "C" fn(i64, *mut c_char, usize) -> isize =
            std::mem::transmute(get_name);
        if is_valid(id) <= 0 || !IN_A_FILE.contains(&get_type(id)) {
            return 0;
        }
        let mut name = [0 as c_char; 4096];
        let length = get_name(id, name.as_mut_ptr(), name.len());
        if length <= 0 || length as usize >= name.len() {
            return 0;
        }
        let file = files::file_for_path(state, libc::AT_FDCWD, name.as_ptr(), path_origin::OPENED);
        HDF5_IDS.bind(id, file);
        file
    }
}

/// `H5Fcreate`, `H5Fopen`: the file by name; its id is bound to it.
pub fn hdf5_file_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    name: *const c_char,
    ret: i64,
) -> bool {
    event.file = files::file_for_path(state, libc::AT_FDCWD, name, path_origin::OPENED);
    event.handle = ret as u64;
    result(event, ret);
    HDF5_IDS.bind(ret, event.file);
    true
}

/// A call that makes or opens an object at a location: the new id is in its file.
pub fn hdf5_create(event: &mut RawEvent, state: &mut ThreadState, location: i64, ret: i64) -> bool {
    event.file = object_file(state, location);
    event.handle = ret as u64;
    event.aux = location as u64;
    result(event, ret);
    HDF5_IDS.bind(ret, event.file);
    true
}

/// A call on an object (`H5Fflush`).
pub fn hdf5_object(
    event: &mut RawEvent,
    state: &mut ThreadState,
    id: i64,
    ret: impl CallResult,
) -> bool {
    event.file = object_file(state, id);
    event.handle = id as u64;
    result(event, ret);
    true
}

/// `H5?close`: the id is gone after the call, so only the table knows its file.
pub fn hdf5_close(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    id: i64,
    ret: impl CallResult,
) -> bool {
    event.file = HDF5_IDS.closed(id, !ret.failed());
    event.handle = id as u64;
    result(event, ret);
    true
}

/// A property-list setting: the list and the value (`H5Pset_dxpl_mpio`'s transfer mode,
/// 1 = collective).
pub fn hdf5_property(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    list: i64,
    value: i64,
    ret: impl CallResult,
) -> bool {
    event.handle = list as u64;
    event.aux = value as u64;
    result(event, ret);
    true
}

/// Points selected in `space` (`H5S_ALL`: the whole of `whole`'s extent, through `get_space`).
///
/// # Safety
/// The ids are the program's, valid after its successful transfer.
unsafe fn points(space: i64, whole: i64, get_space: &LibraryFunction) -> Option<u64> {
    let npoints: unsafe extern "C" fn(i64) -> i64 =
        std::mem::transmute(H5S_GET_SELECT_NPOINTS.get()?);
    if space != H5S_ALL {
        return u64::try_from(npoints(space)).ok();
    }
    let get_space: unsafe extern "C" fn(i64) -> i64 = std::mem::transmute(get_space.get()?);
    let close: unsafe extern "C" fn(i64) -> c_int = std::mem::transmute(H5S_CLOSE.get()?);
    let space = get_space(whole);
    if space < 0 {
        return None;
    }
    let count = npoints(space);
    close(space);
    u64::try_from(count).ok()
}

/// Bytes of `points` elements of `datatype` in memory.
///
/// # Safety
/// As [`points`].
unsafe fn type_bytes(datatype: i64, points: Option<u64>) -> u64 {
    let Some(size) = H5T_GET_SIZE.get() else {
        return 0;
    };
    let size: unsafe extern "C" fn(i64) -> usize = std::mem::transmute(size);
    points.map_or(0, |points| points.saturating_mul(size(datatype) as u64))
}

/// `H5Dwrite`, `H5Dread`: the memory selection (or the file's, or the whole dataset)
/// times the memory type's size.
pub fn hdf5_transfer(
    event: &mut RawEvent,
    state: &mut ThreadState,
    dataset: i64,
    memory_type: i64,
    memory_space: i64,
    file_space: i64,
    ret: c_int,
) -> bool {
    event.file = object_file(state, dataset);
    event.handle = dataset as u64;
    if ret < 0 {
        result(event, ret);
        return true;
    }
    let space = if memory_space != H5S_ALL {
        memory_space
    } else {
        file_space
    };
    // SAFETY: the transfer succeeded, so its ids are valid.
    let bytes = unsafe { type_bytes(memory_type, points(space, dataset, &H5D_GET_SPACE)) };
    event.request = bytes;
    event.result = bytes as i64;
    true
}

/// `H5Awrite`, `H5Aread`: the whole attribute, in the memory type.
pub fn hdf5_attribute_transfer(
    event: &mut RawEvent,
    state: &mut ThreadState,
    attribute: i64,
    memory_type: i64,
    ret: c_int,
) -> bool {
    event.file = object_file(state, attribute);
    event.handle = attribute as u64;
    if ret < 0 {
        result(event, ret);
        return true;
    }
    // SAFETY: the transfer succeeded, so its ids are valid.
    let bytes = unsafe { type_bytes(memory_type, points(H5S_ALL, attribute, &H5A_GET_SPACE)) };
    event.request = bytes;
    event.result = bytes as i64;
    true
}

// ---- NetCDF, PnetCDF ----------------------------------------------------------------------

static NCMPI_INQ_VARNDIMS: LibraryFunction = LibraryFunction::new("ncmpi_inq_varndims\0");
static NC_INQ_VARNDIMS: LibraryFunction = LibraryFunction::new("nc_inq_varndims\0");

/// `ncmpi_create`, `ncmpi_open`: the dataset by path; its id (written through `id`) is
/// bound to it.
pub fn netcdf_open(
    event: &mut RawEvent,
    state: &mut ThreadState,
    path: *const c_char,
    id: *const c_int,
    ret: impl CallResult,
) -> bool {
    event.file = files::file_for_path(state, libc::AT_FDCWD, path, path_origin::OPENED);
    result(event, ret);
    if ret.value() == 0 && !id.is_null() {
        // SAFETY: the call succeeded and wrote the new id there.
        let id = unsafe { *id } as i64;
        event.handle = id as u64;
        NETCDF_IDS.bind(id, event.file);
    }
    true
}

pub fn netcdf_close(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    id: i64,
    ret: impl CallResult,
) -> bool {
    event.file = NETCDF_IDS.closed(id, ret.value() == 0);
    event.handle = id as u64;
    result(event, ret);
    true
}

/// Any call on a dataset (`ncmpi_enddef`, `ncmpi_def_var`...).
pub fn netcdf_call(
    event: &mut RawEvent,
    _state: &mut ThreadState,
    id: i64,
    ret: impl CallResult,
) -> bool {
    event.file = NETCDF_IDS.bound(id).unwrap_or(0);
    event.handle = id as u64;
    result(event, ret);
    true
}

/// A typed array access of NetCDF (`nc_put_vara_double`): see [`vara`].
pub fn netcdf_vara(
    event: &mut RawEvent,
    state: &mut ThreadState,
    id: i64,
    variable: i64,
    count: *const i64,
    element: u64,
    ret: impl CallResult,
) -> bool {
    vara(
        event,
        state,
        (id, variable),
        (count, element),
        &NC_INQ_VARNDIMS,
        ret,
    )
}

/// A typed array access of PnetCDF (`ncmpi_put_vara_double_all`): see [`vara`].
pub fn pnetcdf_vara(
    event: &mut RawEvent,
    state: &mut ThreadState,
    id: i64,
    variable: i64,
    count: *const i64,
    element: u64,
    ret: impl CallResult,
) -> bool {
    vara(
        event,
        state,
        (id, variable),
        (count, element),
        &NCMPI_INQ_VARNDIMS,
        ret,
    )
}

/// The product of the variable's `count` entries (as many as it has dimensions, asked of
/// the library with `inquire`, its `*_inq_varndims`) times the element size the call's
/// type gives.
fn vara(
    event: &mut RawEvent,
    state: &mut ThreadState,
    (id, variable): (i64, i64),
    (count, element): (*const i64, u64),
    inquire: &LibraryFunction,
    ret: impl CallResult,
) -> bool {
    netcdf_call(event, state, id, ret);
    event.aux = variable as u64;
    if ret.value() != 0 || count.is_null() {
        return true;
    }
    let Some(inquire) = inquire.get() else {
        return true;
    };
    let mut dimensions: c_int = 0;
    // SAFETY: `int nc_inq_varndims(int ncid, int varid, int *ndimsp)` (PnetCDF's alike),
    // on the dataset and variable the successful call just used.
    let known = unsafe {
        let inquire: unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int =
            std::mem::transmute(inquire);
        inquire(id as c_int, variable as c_int, &mut dimensions) == 0
    };
    if !known || !(0..=64).contains(&dimensions) {
        return true;
    }
    // SAFETY: the program passed `count` with one `MPI_Offset` (`size_t`) per dimension.
    let counts = unsafe { std::slice::from_raw_parts(count, dimensions as usize) };
    let elements = counts.iter().try_fold(1u64, |product, count| {
        product.checked_mul(u64::try_from(*count).ok()?)
    });
    let bytes = elements.map_or(0, |elements| elements.saturating_mul(element));
    event.request = bytes;
    event.result = bytes as i64;
    true
}

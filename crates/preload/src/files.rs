//! Which file an event touched: a per-process table of paths (each distinct path gets an
//! id and one PATH record), and a lock-free descriptor → file id table for the hot path.
//!
//! Descriptors this process did not open itself (inherited across `exec`, opened by a raw
//! system call, or before the tracer loaded) are looked up once in `/proc/self/fd`.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, Ordering};

use cairn_format::segment::{kind, path_origin};
use libc::{c_char, c_int};

use crate::recorder::ThreadState;
use crate::spin::SpinLock;
use crate::sys::{self, PathBuffer};

const DESCRIPTOR_TABLE_SIZE: usize = 1 << 16;
/// Distinct paths remembered per process; past this, new files are recorded without a
/// path (file id 0) and the trace says so once.
const MAX_PATHS: usize = 1 << 20;

static DESCRIPTOR_FILES: [AtomicU32; DESCRIPTOR_TABLE_SIZE] =
    [const { AtomicU32::new(0) }; DESCRIPTOR_TABLE_SIZE];

type FixedHasher = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

struct PathTable {
    ids: HashMap<Box<[u8]>, u32, FixedHasher>,
    /// Index = id - 1.
    paths: Vec<(Box<[u8]>, u32)>,
    overflow_reported: bool,
}

static PATHS: SpinLock<Option<PathTable>> = SpinLock::new(None);

pub fn lock_tables() {
    PATHS.lock();
    MAPPINGS.lock();
    MPI_FILES.lock();
}

pub fn unlock_tables() {
    MPI_FILES.unlock();
    MAPPINGS.unlock();
    PATHS.unlock();
}

fn write_path_record(state: &mut ThreadState, id: u32, origin: u32, path: &[u8]) {
    state.write_record(
        kind::PATH,
        id,
        &[
            &origin.to_le_bytes(),
            &(path.len() as u32).to_le_bytes(),
            path,
        ],
    );
}

/// The id of `path`, creating it (and its PATH record) on first sight.
pub fn intern(state: &mut ThreadState, path: &[u8], origin: u32) -> u32 {
    let (id, is_new, overflow) = PATHS.with(|table| {
        let table = table.get_or_insert_with(|| PathTable {
            ids: HashMap::default(),
            paths: Vec::new(),
            overflow_reported: false,
        });
        if let Some(id) = table.ids.get(path) {
            return (*id, false, false);
        }
        if table.paths.len() >= MAX_PATHS {
            let first = !table.overflow_reported;
            table.overflow_reported = true;
            return (0, false, first);
        }
        let id = table.paths.len() as u32 + 1;
        table.paths.push((path.into(), origin));
        table.ids.insert(path.into(), id);
        (id, true, false)
    });
    if is_new {
        write_path_record(state, id, origin, path);
    }
    if overflow {
        state.write_record(
            kind::MESSAGE,
            0,
            &[b"path table full: later files are recorded without a path"],
        );
    }
    id
}

/// Writes every known path again into a forked child's new segment.
pub fn replay_definitions(state: &mut ThreadState) {
    let paths: Vec<(u32, Box<[u8]>, u32)> = PATHS.with(|table| {
        table.as_ref().map_or_else(Vec::new, |table| {
            table
                .paths
                .iter()
                .enumerate()
                .map(|(index, (path, origin))| (index as u32 + 1, path.clone(), *origin))
                .collect()
        })
    });
    for (id, path, _origin) in paths {
        write_path_record(state, id, path_origin::INHERITED, &path);
    }
}

pub fn bind_descriptor(fd: c_int, file: u32) {
    if fd >= 0 && (fd as usize) < DESCRIPTOR_TABLE_SIZE {
        DESCRIPTOR_FILES[fd as usize].store(file, Ordering::Relaxed);
    }
}

pub fn unbind_descriptor(fd: c_int) {
    bind_descriptor(fd, 0);
}

/// Unbinds `fd` and returns the file id it was bound to — before a `close`, so that another
/// thread's `open` reusing the number right after cannot be confused with it.
pub fn take_descriptor(fd: c_int) -> u32 {
    if fd >= 0 && (fd as usize) < DESCRIPTOR_TABLE_SIZE {
        DESCRIPTOR_FILES[fd as usize].swap(0, Ordering::Relaxed)
    } else {
        0
    }
}

/// The file id bound to `fd`, without any lookup.
pub fn known_file(fd: c_int) -> u32 {
    if fd >= 0 && (fd as usize) < DESCRIPTOR_TABLE_SIZE {
        DESCRIPTOR_FILES[fd as usize].load(Ordering::Relaxed)
    } else {
        0
    }
}

/// The file id of `fd`, asking `/proc/self/fd` the first time an unknown descriptor is seen.
#[inline(always)]
pub fn file_for_descriptor(state: &mut ThreadState, fd: c_int) -> u32 {
    let known = known_file(fd);
    if known != 0 || fd < 0 {
        return known;
    }
    resolve_descriptor(state, fd)
}

#[cold]
fn resolve_descriptor(state: &mut ThreadState, fd: c_int) -> u32 {
    let mut link = PathBuffer::new();
    let mut target = PathBuffer::new();
    if !link.push(format!("/proc/self/fd/{fd}").as_bytes()) || !sys::readlink(&link, &mut target) {
        return 0;
    }
    let id = intern(state, target.as_bytes(), path_origin::FROM_DESCRIPTOR);
    bind_descriptor(fd, id);
    id
}

/// The file of a stdio stream (through its descriptor) and that descriptor.
pub fn file_for_stream(state: &mut ThreadState, stream: *mut libc::FILE) -> (u32, c_int) {
    if stream.is_null() {
        return (0, -1);
    }
    // SAFETY: the program passed this stream to a stdio call; fileno only reads a field.
    let fd = unsafe { libc::fileno(stream) };
    (file_for_descriptor(state, fd), fd)
}

/// Makes `path` absolute, relative to `dirfd` (or the working directory), keeping the
/// program's own bytes (no symlink resolution, only a leading `./` is dropped).
pub fn absolute(dirfd: c_int, path: *const c_char, out: &mut PathBuffer) -> bool {
    if path.is_null() {
        return false;
    }
    // SAFETY: the program passed a NUL-terminated path to a libc call.
    let bytes = unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes();
    if bytes.first() == Some(&b'/') {
        return out.push(bytes);
    }
    let base_ok = if dirfd == libc::AT_FDCWD {
        sys::getcwd(out)
    } else {
        let mut link = PathBuffer::new();
        link.push(format!("/proc/self/fd/{dirfd}").as_bytes()) && sys::readlink(&link, out)
    };
    if !base_ok {
        return false;
    }
    let mut relative = bytes;
    while let Some(rest) = relative.strip_prefix(b"./") {
        relative = rest;
    }
    if relative.is_empty() || relative == b"." {
        return true;
    }
    if out.as_bytes().last() != Some(&b'/') && !out.push(b"/") {
        return false;
    }
    out.push(relative)
}

/// The file a path-based call names (`stat`, `unlink`, `fstatat(fd, "", AT_EMPTY_PATH)`).
pub fn file_for_path(
    state: &mut ThreadState,
    dirfd: c_int,
    path: *const c_char,
    origin: u32,
) -> u32 {
    if !path.is_null() && dirfd != libc::AT_FDCWD {
        // SAFETY: NUL-terminated path from the program.
        if unsafe { *path } == 0 {
            return file_for_descriptor(state, dirfd);
        }
    }
    let mut buffer = PathBuffer::new();
    if absolute(dirfd, path, &mut buffer) {
        intern(state, buffer.as_bytes(), origin)
    } else {
        0
    }
}

/// File mappings made through `mmap`, so `munmap` of a file mapping can be recorded.
pub struct Mapping {
    pub address: usize,
    pub length: usize,
    pub file: u32,
    pub fd: c_int,
}

const MAX_MAPPINGS: usize = 1024;
static MAPPINGS: SpinLock<Vec<Mapping>> = SpinLock::new(Vec::new());
static MAPPING_COUNT: AtomicU32 = AtomicU32::new(0);

pub fn remember_mapping(mapping: Mapping) {
    MAPPINGS.with(|mappings| {
        if mappings.len() < MAX_MAPPINGS {
            mappings.push(mapping);
            MAPPING_COUNT.store(mappings.len() as u32, Ordering::Relaxed);
        }
    });
}

/// Removes and returns the file mapping at `address`, if one was recorded.
pub fn take_mapping(address: usize) -> Option<Mapping> {
    if MAPPING_COUNT.load(Ordering::Relaxed) == 0 {
        return None;
    }
    MAPPINGS.with(|mappings| {
        let index = mappings
            .iter()
            .position(|mapping| mapping.address == address)?;
        let mapping = mappings.swap_remove(index);
        MAPPING_COUNT.store(mappings.len() as u32, Ordering::Relaxed);
        Some(mapping)
    })
}

/// Open MPI-IO files: handle → file id (few are open at once).
static MPI_FILES: SpinLock<Vec<(usize, u32)>> = SpinLock::new(Vec::new());

pub fn bind_mpi_file(handle: usize, file: u32) {
    MPI_FILES.with(|files| {
        files.retain(|(known, _)| *known != handle);
        files.push((handle, file));
    });
}

pub fn unbind_mpi_file(handle: usize) {
    MPI_FILES.with(|files| files.retain(|(known, _)| *known != handle));
}

pub fn mpi_file(handle: usize) -> u32 {
    MPI_FILES.with(|files| {
        files
            .iter()
            .find(|(known, _)| *known == handle)
            .map_or(0, |(_, file)| *file)
    })
}

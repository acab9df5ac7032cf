//! Which file an event touched: a per-process table of paths (each distinct path gets an
//! id and one PATH record), and a lock-free descriptor → file id table for the hot path.
//!
//! The path table's memory is bounded ([`PATH_TABLE_BYTES`]): a program naming millions of
//! files (mdtest, `tar x`) fills it, after which each new path still gets an id and a PATH
//! record every time it is named, without being remembered — nothing is lost (the trace
//! builder joins ids of one path), only those calls no longer fold in the tracer.
//!
//! Descriptors this process did not open itself (inherited across `exec`, opened by a raw
//! system call, or before the tracer loaded) are looked up once in `/proc/self/fd`.

use std::hash::{BuildHasher, BuildHasherDefault};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use cairn_format::segment::{kind, path_origin};
use libc::{c_char, c_int};

use crate::handles::HandleTable;
use crate::recorder::ThreadState;
use crate::spin::SpinLock;
use crate::sys::{self, PathBuffer};

const DESCRIPTOR_TABLE_SIZE: usize = 1 << 16;
/// Memory the path table may hold: the paths' allocations, an entry per path and the
/// index. About 90,000 paths of 100 bytes; past it, new paths are recorded each time they
/// are named but not remembered (see the module's doc).
pub const PATH_TABLE_BYTES: usize = 16 << 20;
/// Memory per remembered path besides its bytes: its entry (a boxed slice and the origin),
/// as much again while the list grows by doubling, and, the index being at most half
/// full, two to four slots of it.
const PATH_ENTRY_BYTES: usize = 2 * 24 + 16;

/// What the tracer's allocator takes for `length` bytes (power-of-two size classes, pages
/// past 64 KiB; see `allocator`).
fn allocated(length: usize) -> usize {
    if length <= 1 << 16 {
        length.max(16).next_power_of_two()
    } else {
        length.div_ceil(4096) * 4096
    }
}

static DESCRIPTOR_FILES: [AtomicU32; DESCRIPTOR_TABLE_SIZE] =
    [const { AtomicU32::new(0) }; DESCRIPTOR_TABLE_SIZE];

type FixedHasher = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

#[derive(Default)]
struct PathTable {
    /// Index = id - 1: each remembered path, stored once, and how it became known.
    paths: Vec<(Box<[u8]>, u32)>,
    /// Open addressing by the path's hash: the id of the path there (0 = empty). A power
    /// of two in length, at most half full.
    slots: Vec<u32>,
    /// Memory held, counted as [`PATH_TABLE_BYTES`] counts it.
    bytes: usize,
    /// The next id for a path named after the table filled (0 until then): ids past the
    /// remembered ones, one per naming.
    next_unremembered: u32,
}

impl PathTable {
    fn hash(path: &[u8]) -> u64 {
        FixedHasher::default().hash_one(path)
    }

    /// The slot of `path` (its id is there) or of the empty slot where it would go.
    fn slot(&self, path: &[u8], hash: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return slot,
                id if &*self.paths[id as usize - 1].0 == path => return slot,
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    fn find(&self, path: &[u8], hash: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        Some(self.slots[self.slot(path, hash)]).filter(|id| *id != 0)
    }

    /// Remembers `path` under the next id, if the table has room for it.
    fn insert(&mut self, path: &[u8], hash: u64, origin: u32) -> Option<u32> {
        let cost = allocated(path.len()) + PATH_ENTRY_BYTES;
        if self.next_unremembered != 0 || self.bytes + cost > PATH_TABLE_BYTES {
            return None;
        }
        if 2 * (self.paths.len() + 1) > self.slots.len() {
            self.grow();
        }
        self.paths.push((path.into(), origin));
        let id = self.paths.len() as u32;
        let slot = self.slot(path, hash);
        self.slots[slot] = id;
        self.bytes += cost;
        Some(id)
    }

    fn grow(&mut self) {
        let length = (self.slots.len() * 2).max(1024);
        self.slots = vec![0; length];
        for (index, (path, _)) in self.paths.iter().enumerate() {
            let slot = self.slot(path, Self::hash(path));
            self.slots[slot] = index as u32 + 1;
        }
    }
}

static PATHS: SpinLock<Option<PathTable>> = SpinLock::new(None);

pub fn lock_tables() {
    PATHS.lock();
    MAPPINGS.lock();
    MPI_FILES.lock();
    SUBMISSIONS.lock();
    RECEIVES.lock();
    crate::persistent::lock_table();
}

pub fn unlock_tables() {
    crate::persistent::unlock_table();
    RECEIVES.unlock();
    SUBMISSIONS.unlock();
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

/// The id of `path`, creating it (and its PATH record) on first sight — or, once the table
/// is full, a new id and PATH record each time a path it does not hold is named.
pub fn intern(state: &mut ThreadState, path: &[u8], origin: u32) -> u32 {
    let hash = PathTable::hash(path);
    let (id, is_new, first_unremembered) = PATHS.with(|table| {
        let table = table.get_or_insert_with(PathTable::default);
        if let Some(id) = table.find(path, hash) {
            return (id, false, false);
        }
        if let Some(id) = table.insert(path, hash, origin) {
            return (id, true, false);
        }
        let first = table.next_unremembered == 0;
        if first {
            table.next_unremembered = table.paths.len() as u32 + 1;
        }
        // Ids run out after 4 billion namings: later files have none.
        let id = table.next_unremembered;
        table.next_unremembered = id.saturating_add(1);
        (if id == u32::MAX { 0 } else { id }, id != u32::MAX, first)
    });
    if first_unremembered {
        state.write_record(
            kind::MESSAGE,
            0,
            &[b"path table full (16 MiB): later new paths are recorded each time they are named, not remembered; nothing is lost, but their calls fold only when the trace is built"],
        );
    }
    if is_new {
        write_path_record(state, id, origin, path);
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
    // Descriptors, mappings and MPI files bound to paths the table did not remember: their
    // PATH records are in the parent's segment only, so the child finds them again.
    let remembered = PATHS.with(|table| {
        table
            .as_ref()
            .filter(|table| table.next_unremembered != 0)
            .map_or(u32::MAX, |table| table.paths.len() as u32)
    });
    let remembers = |id: u32| id <= remembered;
    for binding in &DESCRIPTOR_FILES {
        let id = binding.load(Ordering::Relaxed);
        if id != 0 && !remembers(id) {
            binding.store(0, Ordering::Relaxed);
        }
    }
    MAPPINGS.with(|mappings| {
        for mapping in mappings.iter_mut() {
            if !remembers(mapping.file) {
                mapping.file = 0;
            }
        }
    });
    MPI_FILES.with(|files| files.retain(|(_, file)| remembers(*file)));
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

/// Changes of the working directory so far (`chdir`, `fchdir`): a thread's copy of the
/// working directory is good while it was taken at the current count.
static WORKING_DIRECTORY_CHANGES: AtomicU64 = AtomicU64::new(1);

/// The working directory changed (or may have: called whether or not the call succeeded,
/// and whether or not the call is traced).
pub fn working_directory_changed() {
    WORKING_DIRECTORY_CHANGES.fetch_add(1, Ordering::Release);
}

/// The working directory into `out`: the thread's copy while no `chdir` or `fchdir` came
/// since it was taken (a `getcwd` system call for each relative path took a tenth of a
/// run making files by relative names). A program changing it by a raw system call would
/// see relative names made from the old one.
fn working_directory(state: &mut ThreadState, out: &mut PathBuffer) -> bool {
    let changes = WORKING_DIRECTORY_CHANGES.load(Ordering::Acquire);
    let cache = &mut state.working_directory;
    if cache.0 != changes {
        if !sys::getcwd(&mut cache.1) {
            cache.0 = 0;
            return false;
        }
        cache.0 = changes;
    }
    out.push(cache.1.as_bytes())
}

/// Makes `path` absolute, relative to `dirfd` (or the working directory), keeping the
/// program's own bytes (no symlink resolution, only a leading `./` is dropped).
pub fn absolute(
    state: &mut ThreadState,
    dirfd: c_int,
    path: *const c_char,
    out: &mut PathBuffer,
) -> bool {
    if path.is_null() {
        return false;
    }
    // SAFETY: the program passed a NUL-terminated path to a libc call.
    let bytes = unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes();
    if bytes.first() == Some(&b'/') {
        return out.push(bytes);
    }
    let base_ok = if dirfd == libc::AT_FDCWD {
        working_directory(state, out)
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
    if absolute(state, dirfd, path, &mut buffer) {
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

/// An AIO request submitted and not yet collected: its control block's address, the
/// submission's clock reading, direction (0 read, 1 write) and whether it was made inside
/// an MPI-IO call (`event_flags::INSIDE_MPIIO`, or 0).
#[derive(Clone, Copy)]
pub struct Submission {
    pub request: usize,
    pub start: u64,
    pub direction: u8,
    pub inside_mpiio: u32,
}

/// More requests than this in flight at once lose their latency (their bytes are still
/// counted, from the control block, when collected).
const MAX_SUBMISSIONS: usize = 4096;
static SUBMISSIONS: SpinLock<Vec<Submission>> = SpinLock::new(Vec::new());

/// Remembers a submission; a control block submitted again replaces its earlier one.
pub fn remember_submission(submission: Submission) {
    SUBMISSIONS.with(|submissions| {
        submissions.retain(|known| known.request != submission.request);
        if submissions.len() < MAX_SUBMISSIONS {
            submissions.push(submission);
        }
    });
}

/// Removes and returns the submission of the control block at `request`.
pub fn take_submission(request: usize) -> Option<Submission> {
    SUBMISSIONS.with(|submissions| {
        let index = submissions
            .iter()
            .position(|known| known.request == request)?;
        Some(submissions.swap_remove(index))
    })
}

/// Receives posted by `MPI_Irecv`/`MPI_Imrecv` (or a persistent receive's start) and not
/// completed yet, by request handle, so that their completion counts the bytes that
/// arrived. A receive posted while the table is full is counted as a call let through
/// untraced: what it receives is not in the trace, and the summary says so.
const MAX_RECEIVES: usize = 1 << 16;
static RECEIVES: SpinLock<HandleTable<(), MAX_RECEIVES>> = SpinLock::new(HandleTable::new());
static RECEIVE_COUNT: AtomicU32 = AtomicU32::new(0);

pub fn remember_receive(request: u64) {
    let kept = RECEIVES.with(|receives| {
        let kept = receives.insert(request, ());
        RECEIVE_COUNT.store(receives.len() as u32, Ordering::Relaxed);
        kept
    });
    if !kept {
        crate::header_page::count_untraced();
    }
}

/// Whether any posted receive is waiting (a completion without any needs no look-up).
#[inline(always)]
pub fn receives_pending() -> bool {
    RECEIVE_COUNT.load(Ordering::Relaxed) != 0
}

/// Keeps, of (index, request) pairs, those whose request is a posted receive (they stay
/// remembered until [`take_receive`]).
pub fn keep_receives(requests: &mut Vec<(usize, u64)>) {
    RECEIVES.with(|receives| requests.retain(|(_, request)| receives.contains(*request)));
}

/// Forgets a completed receive; true if it was one.
pub fn take_receive(request: u64) -> bool {
    RECEIVES.with(|receives| {
        let taken = receives.remove(request).is_some();
        RECEIVE_COUNT.store(receives.len() as u32, Ordering::Relaxed);
        taken
    })
}

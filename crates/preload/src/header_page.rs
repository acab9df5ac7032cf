//! The staging file's shared header page: counters the tracer keeps through a shared
//! mapping of the last page of the segment's header, allocated when the segment is
//! created, so they survive `SIGKILL` and a full file system alike — the calls let through
//! untraced, the kernel's own I/O counters, the calls that could not be recorded because
//! the staging file could not grow, and the image's end (also written to a chunk, which a
//! full file system may refuse). Offsets and meanings are `cairn_format::segment`'s.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use cairn_format::segment;

use crate::sys;

/// The start of the shared page (`segment::UNTRACED_COUNTER_OFFSET` in the file), or null
/// when the segment could not get one.
static PAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

/// Keeps `page` (null: none) as the current image's header page.
pub fn install(page: *mut u8) {
    PAGE.store(page, Ordering::Release);
}

/// The word at `offset` of the segment file, inside the page.
fn word(offset: u64) -> Option<&'static AtomicU64> {
    let page = PAGE.load(Ordering::Acquire);
    if page.is_null() {
        return None;
    }
    // SAFETY: the page stays mapped for the life of the process image; every offset used
    // is an aligned u64 inside it (checked by the format's tests), written by this
    // process only.
    Some(unsafe {
        &*(page.add((offset - segment::UNTRACED_COUNTER_OFFSET) as usize) as *const AtomicU64)
    })
}

/// Whether the image has a header page to count in.
pub fn available() -> bool {
    !PAGE.load(Ordering::Acquire).is_null()
}

#[cold]
pub fn count_untraced() {
    if let Some(counter) = word(segment::UNTRACED_COUNTER_OFFSET) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Notes that the staging file could not grow (`errno`, at `clock`); the first failure is
/// the one kept.
#[cold]
pub fn note_unrecorded(errno: i32, clock: u64) {
    let at = segment::UNRECORDED_OFFSET;
    let (Some(marker), Some(error), Some(when)) = (word(at), word(at + 16), word(at + 24)) else {
        return;
    };
    if marker.load(Ordering::Acquire) == segment::UNRECORDED_MARKER {
        return;
    }
    error.store(errno as u32 as u64, Ordering::Relaxed);
    when.store(clock, Ordering::Relaxed);
    marker.store(segment::UNRECORDED_MARKER, Ordering::Release);
}

/// Counts one call that could not be recorded.
#[cold]
pub fn count_unrecorded() {
    if let Some(counter) = word(segment::UNRECORDED_OFFSET + 8) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Keeps the image's end (`segment::mark` kind and value) in the page.
pub fn keep_ending(kind: u32, value: u64) {
    let at = segment::ENDING_OFFSET;
    let (Some(marker), Some(stored_kind), Some(stored_value)) =
        (word(at), word(at + 8), word(at + 16))
    else {
        return;
    };
    stored_kind.store(kind as u64, Ordering::Relaxed);
    stored_value.store(value, Ordering::Relaxed);
    marker.store(segment::ENDING_MARKER, Ordering::Release);
}

/// The bytes and read calls of this image's own readings of `/proc/self/io` so far, taken
/// out of the later readings (each reading counts the ones before it).
static OWN_READS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Stores the kernel's own I/O counters for the process (`/proc/self/io`) in the staging
/// header: as the image's first reading with `first`, else as its latest, without the
/// readings' own reads. A few microseconds: done when the image starts, when a chunk is
/// taken and at the end.
pub fn sample_kernel_io(first: bool) {
    if !available() {
        return;
    }
    let mut text = [0u8; 512];
    // Also called outside hooks (at exit): the program's errno stays as it was.
    // SAFETY: __errno_location is this thread's errno.
    let errno = unsafe { *libc::__errno_location() };
    let (length, calls) = sys::read_into(c"/proc/self/io", &mut text);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
    if first {
        // A new image (a forked child starts with its parent's statics).
        OWN_READS[0].store(0, Ordering::Relaxed);
        OWN_READS[1].store(0, Ordering::Relaxed);
    }
    let own = [
        OWN_READS[0].fetch_add(length as u64, Ordering::Relaxed),
        OWN_READS[1].fetch_add(calls, Ordering::Relaxed),
    ];
    let Some(mut values) = segment::parse_proc_io(&text[..length]) else {
        return;
    };
    // rchar and syscr.
    values[0] = values[0].saturating_sub(own[0]);
    values[2] = values[2].saturating_sub(own[1]);
    // The marker, the first reading's four counters, then the latest reading's four.
    let store = |index: u64, value: u64, ordering: Ordering| {
        if let Some(word) = word(segment::KERNEL_IO_OFFSET + 8 * index) {
            word.store(value, ordering);
        }
    };
    for (index, value) in (0..).zip(values) {
        if first {
            store(1 + index, value, Ordering::Relaxed);
        }
        store(5 + index, value, Ordering::Relaxed);
    }
    if first {
        store(0, segment::KERNEL_IO_MARKER, Ordering::Release);
    }
}

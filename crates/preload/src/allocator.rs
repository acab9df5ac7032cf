//! The tracer's own memory, never libc's `malloc`.
//!
//! A hook can run inside a signal handler that interrupted the program in the middle of
//! `malloc` (`write` is async-signal-safe and handlers use it); if the hook then allocated
//! through libc, it would wait forever for the lock the interrupted `malloc` holds. So every
//! Rust allocation in libcairn.so comes from here: power-of-two size classes with free lists
//! over memory mapped with raw system calls, and direct mappings for large blocks. The lock
//! (a [`SpinLock`]) is ours alone; a handler cannot re-enter it, because the re-entry flag keeps hooks from
//! tracing (and allocating) while this thread is already inside the tracer. `fork` takes
//! the lock around the fork like the tracer's other locks.

use std::alloc::{GlobalAlloc, Layout};

use crate::spin::SpinLock;

const MIN_CLASS: usize = 4; // 16 bytes
const MAX_CLASS: usize = 16; // 64 KiB; larger blocks are mapped directly
const CLASSES: usize = MAX_CLASS - MIN_CLASS + 1;
const REFILL_BYTES: usize = 1 << 20;
const PAGE: usize = 4096;

struct Pools {
    free: [*mut u8; CLASSES],
    /// Unused tail of the last mapping, carved into blocks on demand.
    cursor: *mut u8,
    end: *mut u8,
}

// SAFETY: the pointers are to our own mappings, used only under the lock.
unsafe impl Send for Pools {}

pub struct TracerAllocator {
    pools: SpinLock<Pools>,
}

fn map(length: usize) -> *mut u8 {
    // SAFETY: anonymous private mapping; failure is checked by the caller.
    let address = unsafe {
        libc::syscall(
            libc::SYS_mmap,
            std::ptr::null_mut::<libc::c_void>(),
            length,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if address < 0 {
        std::ptr::null_mut()
    } else {
        address as *mut u8
    }
}

fn class_of(layout: Layout) -> Option<usize> {
    let size = layout
        .size()
        .max(layout.align())
        .max(1 << MIN_CLASS)
        .next_power_of_two();
    let class = size.trailing_zeros() as usize;
    (class <= MAX_CLASS).then_some(class - MIN_CLASS)
}

impl TracerAllocator {
    pub const fn new() -> TracerAllocator {
        TracerAllocator {
            pools: SpinLock::new(Pools {
                free: [std::ptr::null_mut(); CLASSES],
                cursor: std::ptr::null_mut(),
                end: std::ptr::null_mut(),
            }),
        }
    }

    /// Held across `fork` (see `lifecycle::before_fork`).
    pub fn lock(&self) {
        self.pools.lock();
    }

    pub fn unlock(&self) {
        self.pools.unlock();
    }
}

unsafe impl GlobalAlloc for TracerAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else {
            // Large: a mapping of its own (mmap is page-aligned, enough for any layout
            // alignment up to a page; larger alignments are refused).
            if layout.align() > PAGE {
                return std::ptr::null_mut();
            }
            return map(layout.size().div_ceil(PAGE) * PAGE);
        };
        let size = 1usize << (class + MIN_CLASS);
        self.pools.with(|pools| {
            if !pools.free[class].is_null() {
                let block = pools.free[class];
                // SAFETY: a free block holds the next free block's address in its first word.
                pools.free[class] = unsafe { *(block as *mut *mut u8) };
                return block;
            }
            // Blocks are carved at multiples of their own size from page-aligned mappings,
            // so every block is aligned to its size (and so to the layout's alignment).
            let mut start = (pools.cursor as usize).next_multiple_of(size);
            if pools.cursor.is_null() || start + size > pools.end as usize {
                let mapping = map(REFILL_BYTES);
                if mapping.is_null() {
                    return std::ptr::null_mut();
                }
                pools.cursor = mapping;
                // SAFETY: the mapping is REFILL_BYTES long.
                pools.end = unsafe { mapping.add(REFILL_BYTES) };
                start = mapping as usize;
            }
            pools.cursor = (start + size) as *mut u8;
            start as *mut u8
        })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, passed on.
        let pointer = unsafe { self.alloc(layout) };
        // A large block is a fresh anonymous mapping, zero already: not writing it keeps
        // its pages out of memory until used (a thread's folding state is mostly unused
        // for a while). Small blocks may be reused ones.
        if !pointer.is_null() && class_of(layout).is_some() {
            // SAFETY: the block is at least `layout.size()` bytes.
            unsafe { std::ptr::write_bytes(pointer, 0, layout.size()) };
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        let Some(class) = class_of(layout) else {
            // SAFETY: a large block is exactly one mapping of this rounded length.
            unsafe {
                libc::syscall(
                    libc::SYS_munmap,
                    pointer,
                    layout.size().div_ceil(PAGE) * PAGE,
                )
            };
            return;
        };
        self.pools.with(|pools| {
            // SAFETY: the block is at least 16 bytes, room for the link.
            unsafe { *(pointer as *mut *mut u8) = pools.free[class] };
            pools.free[class] = pointer;
        });
    }
}

#[global_allocator]
pub static ALLOCATOR: TracerAllocator = TracerAllocator::new();

//! The tracer's own memory, never libc's `malloc`.
//!
//! A hook can run inside a signal handler that interrupted the program in the middle of
//! `malloc` (`write` is async-signal-safe and handlers use it); if the hook then allocated
//! through libc, it would wait forever for the lock the interrupted `malloc` holds. So every
//! Rust allocation in libcairn.so comes from here: power-of-two size classes with free lists
//! over memory mapped with raw system calls, and direct mappings for large blocks. The lock
//! is ours alone; a handler cannot re-enter it, because the re-entry flag keeps hooks from
//! tracing (and allocating) while this thread is already inside the tracer. `fork` takes
//! the lock around the fork like the tracer's other locks.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, Ordering};

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

pub struct TracerAllocator {
    locked: AtomicBool,
    pools: std::cell::UnsafeCell<Pools>,
}

// SAFETY: `pools` is only touched with `locked` held.
unsafe impl Sync for TracerAllocator {}

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
            locked: AtomicBool::new(false),
            pools: std::cell::UnsafeCell::new(Pools {
                free: [std::ptr::null_mut(); CLASSES],
                cursor: std::ptr::null_mut(),
                end: std::ptr::null_mut(),
            }),
        }
    }

    pub fn lock(&self) {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }

    pub fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
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
        self.lock();
        // SAFETY: the lock is held.
        let pools = unsafe { &mut *self.pools.get() };
        let block = if !pools.free[class].is_null() {
            let block = pools.free[class];
            // SAFETY: a free block holds the next free block's address in its first word.
            pools.free[class] = unsafe { *(block as *mut *mut u8) };
            block
        } else {
            // Blocks are carved at multiples of their own size from page-aligned mappings,
            // so every block is aligned to its size (and so to the layout's alignment).
            let mut start = (pools.cursor as usize).next_multiple_of(size);
            if pools.cursor.is_null() || start + size > pools.end as usize {
                let mapping = map(REFILL_BYTES);
                if mapping.is_null() {
                    self.unlock();
                    return std::ptr::null_mut();
                }
                pools.cursor = mapping;
                // SAFETY: the mapping is REFILL_BYTES long.
                pools.end = unsafe { mapping.add(REFILL_BYTES) };
                start = mapping as usize;
            }
            pools.cursor = (start + size) as *mut u8;
            start as *mut u8
        };
        self.unlock();
        block
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
        self.lock();
        // SAFETY: the lock is held; the block is at least 16 bytes, room for the link.
        unsafe {
            let pools = &mut *self.pools.get();
            *(pointer as *mut *mut u8) = pools.free[class];
            pools.free[class] = pointer;
        }
        self.unlock();
    }
}

#[global_allocator]
pub static ALLOCATOR: TracerAllocator = TracerAllocator::new();

//! Calling contexts: a cheap signature of the call stack for every event.
//!
//! The hot path walks frame pointers (at most [`MAX_FRAMES`], bounds-checked against the
//! thread's stack) and hashes the return addresses — about 10 ns here. A per-thread
//! direct-mapped cache turns the hash into a context id. Only on first sight of a stack
//! does the slow path run: each frame is located in its module with `dladdr` (outside any
//! lock: `dladdr` takes the loader's lock), and one CONTEXT record stores the frames as
//! (module, offset) so the reader can symbolise them later, once per distinct context.
//!
//! Code built without frame pointers (most `-O2` C) still gives a stable signature for the
//! same code path — the first frame, the call site, is always exact — but its deeper frames
//! may be missing.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use cairn_format::segment::{kind, MAX_FRAMES};

use crate::recorder::ThreadState;
use crate::spin::SpinLock;

pub const CONTEXT_CACHE_SIZE: usize = 256;
/// Distinct contexts per process; past this, events get context 0 ("unknown").
const MAX_CONTEXTS: usize = 1 << 16;

type FixedHasher = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

struct ContextTable {
    /// Stack hashes to context ids: each context's own hash, and the hashes of stacks that
    /// are it with garbage after it (aliases).
    ids: HashMap<u64, u32, FixedHasher>,
    /// Contexts defined (the last id given).
    defined: u32,
    modules: HashMap<usize, u32, FixedHasher>,
}

/// Most stack hashes the table keeps (contexts and their aliases).
const MAX_HASHES: usize = 4 * MAX_CONTEXTS;

/// The hash of a stack's return addresses (as [`capture`] computes it).
fn stack_hash(frames: &[usize]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for address in frames {
        hash = (hash ^ *address as u64).wrapping_mul(0x0100_0000_01b3);
    }
    hash ^ frames.len() as u64
}

static CONTEXTS: SpinLock<Option<ContextTable>> = SpinLock::new(None);

pub fn lock_tables() {
    CONTEXTS.lock();
}

pub fn unlock_tables() {
    CONTEXTS.unlock();
}

/// A forked child starts its own context numbering in its own segment.
pub fn forget_after_fork() {
    CONTEXTS.with(|table| *table = None);
}

fn executable_path() -> crate::sys::PathBuffer {
    let mut link = crate::sys::PathBuffer::new();
    let mut target = crate::sys::PathBuffer::new();
    if link.push(b"/proc/self/exe") {
        crate::sys::readlink(&link, &mut target);
    }
    target
}

/// The calling thread's stack range, for bounds-checking the frame walk.
pub fn stack_bounds() -> (usize, usize) {
    // SAFETY: pthread_getattr_np fills an attribute object that is destroyed after use.
    unsafe {
        let mut attributes: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attributes) != 0 {
            return (0, 0);
        }
        let mut address: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attributes, &mut address, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attributes);
        if ok {
            (address as usize, address as usize + size)
        } else {
            (0, 0)
        }
    }
}

#[inline(always)]
fn frame_pointer() -> usize {
    let frame: usize;
    // SAFETY: reads the frame-pointer register; no memory is touched.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::asm!("mov {}, rbp", out(reg) frame, options(nomem, nostack, preserves_flags))
    };
    // SAFETY: as above, x29 is the frame pointer on aarch64.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!("mov {}, x29", out(reg) frame, options(nomem, nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        frame = 0;
    }
    frame
}

/// The context id of the current call. Must be called directly from the hook function:
/// `skip` counts the tracer's own frames between the hook and the program.
#[inline(never)]
pub fn capture(state: &mut ThreadState, skip: usize) -> u32 {
    let mut frames = [0usize; MAX_FRAMES];
    let mut count = 0;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let (low, high) = (state.stack_low, state.stack_high);
    let own = frame_pointer();
    // A frame is readable if its two words lie inside the stack. Garbage frame pointers
    // (code built without them) can be anywhere, up to usize::MAX: no overflowing arithmetic.
    let readable = |frame: usize| {
        frame >= low
            && frame.checked_add(16).is_some_and(|end| end <= high)
            && frame.is_multiple_of(8)
    };
    if readable(own) {
        // SAFETY: `own` is this function's frame, inside the stack; every later frame is
        // checked to lie inside [low, high) before it is read.
        let mut frame = unsafe { *(own as *const usize) };
        let mut depth = 0;
        while count < MAX_FRAMES && readable(frame) {
            // SAFETY: checked above.
            let (next, return_address) =
                unsafe { (*(frame as *const usize), *((frame + 8) as *const usize)) };
            if return_address == 0 {
                break;
            }
            if depth >= skip {
                frames[count] = return_address;
                count += 1;
                hash = (hash ^ return_address as u64).wrapping_mul(0x0100_0000_01b3);
            }
            depth += 1;
            if next <= frame {
                break;
            }
            frame = next;
        }
    }
    hash ^= count as u64;
    let slot = (hash as usize ^ (hash >> 32) as usize) % CONTEXT_CACHE_SIZE;
    let (cached_hash, cached_id) = state.context_cache[slot];
    if cached_hash == hash && cached_id != 0 {
        return cached_id;
    }
    let id = lookup_or_define(state, hash, &frames[..count]);
    state.context_cache[slot] = (hash, id);
    id
}

/// Marks each return address that lies in an executable segment of a loaded module
/// (`executable[i]` for `addresses[i]`, the address less one: inside the call).
fn mark_code(addresses: &[usize], executable: &mut [bool]) {
    struct Search<'a> {
        addresses: &'a [usize],
        executable: &'a mut [bool],
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid record and the Search we gave it.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        if info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: dlpi_phdr points to the module's dlpi_phnum program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        for header in headers
            .iter()
            .filter(|header| header.p_type == libc::PT_LOAD && header.p_flags & libc::PF_X != 0)
        {
            let start = (info.dlpi_addr as usize).wrapping_add(header.p_vaddr as usize);
            let end = start.wrapping_add(header.p_memsz as usize);
            for (address, executable) in search.addresses.iter().zip(search.executable.iter_mut()) {
                let inside = address.wrapping_sub(1);
                *executable |= inside >= start && inside < end;
            }
        }
        0
    }
    let mut search = Search {
        addresses,
        executable,
    };
    // SAFETY: the callback only reads the loader's records and writes our Search.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut search as *mut Search).cast()) };
}

#[cold]
fn lookup_or_define(state: &mut ThreadState, hash: u64, frames: &[usize]) -> u32 {
    let existing = CONTEXTS.with(|table| {
        table
            .as_ref()
            .and_then(|table| table.ids.get(&hash).copied())
    });
    if let Some(id) = existing {
        return id;
    }
    // Locate frames in their modules without holding our lock (dladdr takes the loader's).
    let mut located: [(usize, usize, *const libc::c_char); MAX_FRAMES] =
        [(0, 0, std::ptr::null()); MAX_FRAMES];
    for (slot, address) in located.iter_mut().zip(frames) {
        // SAFETY: dladdr only reads loader tables; an unknown address returns 0.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr((*address).wrapping_sub(1) as *const libc::c_void, &mut info) != 0 {
                *slot = (*address, info.dli_fbase as usize, info.dli_fname);
            } else {
                *slot = (*address, 0, std::ptr::null());
            }
        }
    }
    // Code built without frame pointers leaves the walk following a register that holds
    // data: past the frames that are the program's, it reads whatever the stack holds there
    // (a buffer's bytes, which change from call to call) as return addresses. The stack
    // ends at the first one outside every module's code — outside every module, or in one's
    // data (`-O2` code's recursion read the address of a static array as its caller) — the
    // call site itself always kept, so one call site is one context however its garbage
    // changes, and the loops around it fold.
    let mut executable = [false; MAX_FRAMES];
    mark_code(frames, &mut executable);
    let kept = (1..frames.len())
        .find(|&frame| located[frame].1 == 0 || !executable[frame])
        .unwrap_or(frames.len());
    let own_hash = stack_hash(&frames[..kept]);
    let mut new_modules: Vec<(u32, usize)> = Vec::new();
    let mut encoded: Vec<(u32, u64)> = Vec::with_capacity(kept);
    let (id, is_new) = CONTEXTS.with(|table| {
        let table = table.get_or_insert_with(|| ContextTable {
            ids: HashMap::default(),
            defined: 0,
            modules: HashMap::default(),
        });
        if let Some(id) = table.ids.get(&hash) {
            return (*id, false);
        }
        if let Some(id) = table.ids.get(&own_hash).copied() {
            if table.ids.len() < MAX_HASHES {
                table.ids.insert(hash, id);
            }
            return (id, false);
        }
        if table.defined as usize >= MAX_CONTEXTS || table.ids.len() + 2 > MAX_HASHES {
            return (0, false);
        }
        for (address, base, name) in located.iter().take(kept) {
            if *base == 0 {
                encoded.push((0, *address as u64));
                continue;
            }
            let next_module = table.modules.len() as u32 + 1;
            let module = *table.modules.entry(*base).or_insert_with(|| {
                new_modules.push((next_module, *name as usize));
                next_module
            });
            encoded.push((module, address.wrapping_sub(*base) as u64));
        }
        table.defined += 1;
        let id = table.defined;
        table.ids.insert(own_hash, id);
        table.ids.insert(hash, id);
        (id, true)
    });
    if is_new {
        for (module, name) in new_modules {
            let name = if name == 0 {
                &b""[..]
            } else {
                // SAFETY: dli_fname points to the loader's NUL-terminated module name.
                unsafe { std::ffi::CStr::from_ptr(name as *const libc::c_char) }.to_bytes()
            };
            // The main program's name is argv[0] as typed (often relative): record the
            // executable's absolute path so the reader can open it from anywhere.
            let executable;
            let name = if name.first() == Some(&b'/') {
                name
            } else {
                executable = executable_path();
                executable.as_bytes()
            };
            state.write_record(kind::MODULE, module, &[name]);
        }
        let mut body = Vec::with_capacity(8 + encoded.len() * 16);
        body.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        for (module, offset) in &encoded {
            body.extend_from_slice(&module.to_le_bytes());
            body.extend_from_slice(&0u32.to_le_bytes());
            body.extend_from_slice(&offset.to_le_bytes());
        }
        state.write_record(kind::CONTEXT, id, &[&body]);
    }
    id
}

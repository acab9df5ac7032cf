//! Calling contexts: a cheap signature of the call stack for every event.
//!
//! The hot path walks frame pointers (at most [`MAX_FRAMES`], bounds-checked against the
//! thread's stack) and hashes the return addresses — about 10 ns here. A per-thread
//! direct-mapped cache turns the hash into a context id. Only on first sight of a stack
//! does the slow path run: each frame is located in its module in one walk of the loader's
//! list (outside any lock: the walk takes the loader's lock), and one CONTEXT record stores the frames as
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
    MODULES.lock();
}

pub fn unlock_tables() {
    MODULES.unlock();
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

/// Where a return address lies: its module's load address and name (as `dladdr` gives them:
/// the start of the module's first mapped page and the loader's name for it), and whether
/// it is in an executable segment.
#[derive(Clone, Copy)]
struct Located {
    base: usize,
    name: *const libc::c_char,
    executable: bool,
}

const NOWHERE: Located = Located {
    base: 0,
    name: std::ptr::null(),
    executable: false,
};

/// One loaded segment of a module, as the loader lists it.
#[derive(Clone, Copy)]
struct Segment {
    start: usize,
    end: usize,
    /// The module's base and name pointer (kept as an integer: the loader's string).
    base: usize,
    name: usize,
    executable: bool,
}

/// Every module's loaded segments sorted by address, and the loader's count of modules
/// added and removed when it was read: a frame is located by a binary search while the
/// counts are the same, and the loader's list walked again only after a `dlopen` or
/// `dlclose`. `dladdr`, which this replaces, also searched each module's symbol table
/// linearly for the nearest symbol, which we never use: on `MPI_Init`'s hundreds of
/// first-seen stacks in Open MPI's large libraries that was milliseconds of every rank's
/// start, and walking the list a stack, half of that.
struct ModuleMap {
    /// `None`: the loader does not count, so the list is read again every time.
    generation: Option<(u64, u64)>,
    segments: Vec<Segment>,
}

static MODULES: SpinLock<Option<ModuleMap>> = SpinLock::new(None);

/// The loader's (modules added, modules removed) counts, if its records hold them.
fn loader_generation() -> Option<(u64, u64)> {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid record of `size` bytes and our tuple; the
        // counts are read only if the record holds them.
        unsafe {
            let generation = &mut *(data as *mut Option<(u64, u64)>);
            let needed = std::mem::offset_of!(libc::dl_phdr_info, dlpi_subs) + 8;
            if size >= needed {
                *generation = Some(((*info).dlpi_adds, (*info).dlpi_subs));
            }
        }
        1
    }
    let mut generation = None;
    // SAFETY: the callback only reads the first record and writes our Option.
    unsafe {
        libc::dl_iterate_phdr(
            Some(first),
            (&mut generation as *mut Option<(u64, u64)>).cast(),
        )
    };
    generation
}

/// Every loaded segment, sorted by address.
fn loaded_segments() -> Vec<Segment> {
    struct Walk {
        segments: Vec<Segment>,
        page: usize,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid record and the Walk we gave it.
        let (info, walk) = unsafe { (&*info, &mut *(data as *mut Walk)) };
        if info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: dlpi_phdr points to the module's dlpi_phnum program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let loads = || {
            headers
                .iter()
                .filter(|header| header.p_type == libc::PT_LOAD)
        };
        let bias = info.dlpi_addr as usize;
        // The loader's `l_map_start`, which `dladdr` reports as the module's base.
        let Some(base) = loads()
            .map(|header| bias.wrapping_add(header.p_vaddr as usize & !(walk.page - 1)))
            .min()
        else {
            return 0;
        };
        for header in loads() {
            let start = bias.wrapping_add(header.p_vaddr as usize);
            walk.segments.push(Segment {
                start,
                end: start.wrapping_add(header.p_memsz as usize),
                base,
                name: info.dlpi_name as usize,
                executable: header.p_flags & libc::PF_X != 0,
            });
        }
        0
    }
    // SAFETY: sysconf only reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
    let mut walk = Walk {
        segments: Vec::with_capacity(512),
        page,
    };
    // SAFETY: the callback only reads the loader's records and writes our Walk.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut walk as *mut Walk).cast()) };
    walk.segments.sort_unstable_by_key(|segment| segment.start);
    walk.segments
}

/// Locates each return address (less one: inside the call) in the loaded modules. Runs
/// outside our other locks: reading the loader's list takes the loader's lock.
fn locate(addresses: &[usize], located: &mut [Located]) {
    let generation = loader_generation();
    let current = MODULES.with(|map| {
        map.as_ref()
            .is_some_and(|map| generation.is_some() && map.generation == generation)
    });
    if !current {
        let segments = loaded_segments();
        MODULES.with(|map| {
            *map = Some(ModuleMap {
                generation,
                segments,
            })
        });
    }
    MODULES.with(|map| {
        let Some(map) = map.as_ref() else { return };
        for (address, located) in addresses.iter().zip(located.iter_mut()) {
            let inside = address.wrapping_sub(1);
            // The last segment starting at or before the address (segments of one module
            // do not overlap another's).
            let next = map
                .segments
                .partition_point(|segment| segment.start <= inside);
            if let Some(segment) = next.checked_sub(1).map(|index| map.segments[index]) {
                if inside < segment.end {
                    *located = Located {
                        base: segment.base,
                        name: segment.name as *const libc::c_char,
                        executable: segment.executable,
                    };
                }
            }
        }
    });
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
    // Locate frames in their modules without holding our lock (the walk takes the loader's).
    let mut located = [NOWHERE; MAX_FRAMES];
    locate(frames, &mut located[..frames.len()]);
    // Code built without frame pointers leaves the walk following a register that holds
    // data: past the frames that are the program's, it reads whatever the stack holds there
    // (a buffer's bytes, which change from call to call) as return addresses. The stack
    // ends at the first one outside every module's code — outside every module, or in one's
    // data (`-O2` code's recursion read the address of a static array as its caller) — the
    // call site itself always kept, so one call site is one context however its garbage
    // changes, and the loops around it fold.
    let kept = (1..frames.len())
        .find(|&frame| located[frame].base == 0 || !located[frame].executable)
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
        for (address, Located { base, name, .. }) in frames.iter().zip(&located).take(kept) {
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

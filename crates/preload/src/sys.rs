//! The tracer's own system calls. They go through `syscall(2)` directly: calling `open` or
//! `mmap` by name from inside this library would land in our own hooks.

use libc::{c_int, c_long, c_void};

/// A NUL-terminated path in a fixed buffer (no allocation on the paths that need it).
pub struct PathBuffer {
    pub bytes: [u8; 4096],
    pub length: usize,
}

impl PathBuffer {
    pub fn new() -> PathBuffer {
        PathBuffer {
            bytes: [0; 4096],
            length: 0,
        }
    }

    pub fn push(&mut self, part: &[u8]) -> bool {
        if self.length + part.len() >= self.bytes.len() {
            return false;
        }
        self.bytes[self.length..self.length + part.len()].copy_from_slice(part);
        self.length += part.len();
        self.bytes[self.length] = 0;
        true
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.length]
    }

    pub fn as_ptr(&self) -> *const libc::c_char {
        self.bytes.as_ptr().cast()
    }
}

fn result(value: c_long) -> Result<usize, c_int> {
    if value < 0 {
        // SAFETY: __errno_location always returns this thread's errno.
        Err(unsafe { *libc::__errno_location() })
    } else {
        Ok(value as usize)
    }
}

/// An environment variable's value, copied at once.
pub fn environment(name: &std::ffi::CStr) -> Option<Vec<u8>> {
    // SAFETY: name is NUL-terminated; getenv's result is copied before anything else runs.
    unsafe {
        let value = libc::getenv(name.as_ptr());
        (!value.is_null()).then(|| std::ffi::CStr::from_ptr(value).to_bytes().to_vec())
    }
}

pub fn open(path: &PathBuffer, flags: c_int, mode: libc::mode_t) -> Result<c_int, c_int> {
    // SAFETY: path is NUL-terminated by PathBuffer.
    result(unsafe { libc::syscall(libc::SYS_openat, libc::AT_FDCWD, path.as_ptr(), flags, mode) })
        .map(|fd| fd as c_int)
}

pub fn close(fd: c_int) {
    // SAFETY: closing a descriptor we opened.
    unsafe { libc::syscall(libc::SYS_close, fd) };
}

/// Repeats a positioned transfer (`step(done)` moves what is left after `done` bytes)
/// until `length` bytes moved: false on an error or end of file.
fn transfer_all(length: usize, mut step: impl FnMut(usize) -> libc::c_long) -> bool {
    let mut done = 0;
    while done < length {
        match result(step(done)) {
            Ok(0) => return false,
            Ok(count) => done += count,
            Err(libc::EINTR) => continue,
            Err(_) => return false,
        }
    }
    true
}

pub fn pwrite(fd: c_int, data: &[u8], offset: u64) -> bool {
    transfer_all(data.len(), |done| {
        // SAFETY: the pointer and length come from a valid slice.
        unsafe {
            libc::syscall(
                libc::SYS_pwrite64,
                fd,
                data[done..].as_ptr(),
                data.len() - done,
                offset + done as u64,
            )
        }
    })
}

/// Fills `out` from `offset`; false on an error or a short file.
pub fn pread_exact(fd: c_int, out: &mut [u8], offset: u64) -> bool {
    let length = out.len();
    transfer_all(length, |done| {
        // SAFETY: the pointer and length come from a valid mutable slice.
        unsafe {
            libc::syscall(
                libc::SYS_pread64,
                fd,
                out[done..].as_mut_ptr(),
                length - done,
                offset + done as u64,
            )
        }
    })
}

pub fn rename(from: &PathBuffer, to: &PathBuffer) -> bool {
    // SAFETY: both paths are NUL-terminated by PathBuffer.
    let value = unsafe {
        libc::syscall(
            libc::SYS_renameat,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
        )
    };
    result(value).is_ok()
}

pub fn unlink(path: &PathBuffer) {
    // SAFETY: a NUL-terminated path.
    unsafe { libc::syscall(libc::SYS_unlinkat, libc::AT_FDCWD, path.as_ptr(), 0) };
}

/// Reads the start of a small file into `out` without allocating: how many bytes, and
/// how many `read` calls that took.
pub fn read_into(path: &std::ffi::CStr, out: &mut [u8]) -> (usize, u64) {
    // SAFETY: a NUL-terminated path.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    let Ok(fd) = result(fd) else {
        return (0, 0);
    };
    let (mut filled, mut calls) = (0, 0);
    while filled < out.len() {
        calls += 1;
        // SAFETY: reading into the rest of `out`.
        let value = unsafe {
            libc::syscall(
                libc::SYS_read,
                fd,
                out[filled..].as_mut_ptr(),
                out.len() - filled,
            )
        };
        match result(value) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(libc::EINTR) => continue,
            Err(_) => break,
        }
    }
    close(fd as c_int);
    (filled, calls)
}

/// Reads a whole small file (e.g. /proc/self/cmdline) into `out`, up to `limit` bytes.
pub fn read_small_file(path: &[u8], limit: usize) -> Vec<u8> {
    let mut buffer = PathBuffer::new();
    let mut out = Vec::new();
    if !buffer.push(path) {
        return out;
    }
    let Ok(fd) = open(&buffer, libc::O_RDONLY | libc::O_CLOEXEC, 0) else {
        return out;
    };
    let mut chunk = [0u8; 4096];
    while out.len() < limit {
        // SAFETY: reading into a stack buffer of the given size.
        let value = unsafe { libc::syscall(libc::SYS_read, fd, chunk.as_mut_ptr(), chunk.len()) };
        match result(value) {
            Ok(0) => break,
            Ok(count) => out.extend_from_slice(&chunk[..count.min(limit - out.len())]),
            Err(libc::EINTR) => continue,
            Err(_) => break,
        }
    }
    close(fd);
    out
}

pub fn readlink(path: &PathBuffer, out: &mut PathBuffer) -> bool {
    // SAFETY: both buffers are valid; the kernel writes at most len bytes.
    let value = unsafe {
        libc::syscall(
            libc::SYS_readlinkat,
            libc::AT_FDCWD,
            path.as_ptr(),
            out.bytes.as_mut_ptr(),
            out.bytes.len() - 1,
        )
    };
    match result(value) {
        Ok(length) => {
            out.length = length;
            out.bytes[length] = 0;
            true
        }
        Err(_) => false,
    }
}

pub fn getcwd(out: &mut PathBuffer) -> bool {
    // SAFETY: the kernel writes at most len bytes, NUL included.
    let value = unsafe { libc::syscall(libc::SYS_getcwd, out.bytes.as_mut_ptr(), out.bytes.len()) };
    match result(value) {
        Ok(length) if length > 0 => {
            out.length = length - 1;
            true
        }
        _ => false,
    }
}

pub fn mkdir(path: &PathBuffer) {
    // SAFETY: NUL-terminated path.
    unsafe { libc::syscall(libc::SYS_mkdirat, libc::AT_FDCWD, path.as_ptr(), 0o755) };
}

/// Reserves blocks for `[offset, offset+length)` so writes through a mapping can never hit
/// a full disk with SIGBUS; grows the file if needed, never shrinks it.
pub fn allocate(fd: c_int, offset: u64, length: u64) -> Result<(), c_int> {
    // SAFETY: plain system call on our own descriptor.
    result(unsafe { libc::syscall(libc::SYS_fallocate, fd, 0, offset, length) }).map(|_| ())
}

pub fn ftruncate(fd: c_int, length: u64) -> Result<(), c_int> {
    // SAFETY: plain system call on our own descriptor.
    result(unsafe { libc::syscall(libc::SYS_ftruncate, fd, length) }).map(|_| ())
}

pub fn fstat_size(fd: c_int) -> Option<u64> {
    // SAFETY: stat buffer is a valid, writable struct.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        result(libc::syscall(libc::SYS_fstat, fd, &mut stat)).ok()?;
        Some(stat.st_size as u64)
    }
}

pub fn map_shared(fd: c_int, offset: u64, length: usize) -> Option<*mut u8> {
    // SAFETY: mapping a range of our own file; failure is checked.
    let value = unsafe {
        libc::syscall(
            libc::SYS_mmap,
            std::ptr::null_mut::<c_void>(),
            length,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            offset,
        )
    };
    result(value).ok().map(|address| address as *mut u8)
}

pub fn unmap(address: *mut u8, length: usize) {
    // SAFETY: unmapping a range this library mapped.
    unsafe { libc::syscall(libc::SYS_munmap, address, length) };
}

/// Asks the kernel not to read ahead around faults in a mapping (`MADV_RANDOM`): a fault
/// on a fresh chunk of the staging file otherwise fills the page cache with the pages
/// after it (32 of them here), which a thread that writes a few records never touches.
pub fn advise_no_readahead(address: *mut u8, length: usize) {
    // SAFETY: advising about a range of a mapping this library made.
    unsafe { libc::syscall(libc::SYS_madvise, address, length, libc::MADV_RANDOM) };
}

/// Drops this process's mapping of pages of a shared file mapping (`MADV_DONTNEED`): the
/// data stays in the file (and the page cache), the process's resident set shrinks, and a
/// later access maps the page again.
pub fn release_pages(address: *mut u8, length: usize) {
    // SAFETY: advising about a range of a mapping this library made.
    unsafe { libc::syscall(libc::SYS_madvise, address, length, libc::MADV_DONTNEED) };
}

/// The size of a memory page.
pub fn page_size() -> usize {
    static PAGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let known = PAGE.load(std::sync::atomic::Ordering::Relaxed);
    if known != 0 {
        return known;
    }
    // SAFETY: sysconf with a valid name.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    PAGE.store(size, std::sync::atomic::Ordering::Relaxed);
    size
}

pub fn gettid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

pub fn getpid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::syscall(libc::SYS_getpid) as u32 }
}

pub fn getppid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::syscall(libc::SYS_getppid) as u32 }
}

pub fn random_u64() -> u64 {
    let mut value = 0u64;
    // SAFETY: writes 8 bytes into `value`.
    let got = unsafe {
        libc::syscall(
            libc::SYS_getrandom,
            &mut value as *mut u64,
            8,
            libc::GRND_NONBLOCK,
        )
    };
    if got != 8 {
        value = crate::clock::monotonic() ^ ((getpid() as u64) << 32);
    }
    value
}

pub fn clock(id: libc::clockid_t) -> u64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec pointer; clock_gettime is not hooked.
    unsafe { libc::clock_gettime(id, &mut time) };
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

pub fn hostname() -> Vec<u8> {
    // SAFETY: uname fills a zeroed struct.
    unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut name) != 0 {
            return Vec::new();
        }
        std::ffi::CStr::from_ptr(name.nodename.as_ptr())
            .to_bytes()
            .to_vec()
    }
}

//! POSIX and stdio calls re-issued with the recorded sizes, offsets and flags.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cairn_model::Event;

use crate::handles::ThreadHandles;

/// `/a/b` recorded becomes `ROOT/a/b`.
pub(crate) fn mapped(root: &Path, path: &[u8]) -> PathBuf {
    let relative = path.strip_prefix(b"/").unwrap_or(path);
    root.join(std::ffi::OsStr::from_bytes(relative))
}

pub(crate) enum Moved {
    Read(u64),
    Written(u64),
    Nothing,
}

/// The stdio mode of recorded open flags.
fn stdio_mode(flags: i32) -> &'static std::ffi::CStr {
    let access = flags & libc::O_ACCMODE;
    match (
        access,
        flags & libc::O_APPEND != 0,
        flags & libc::O_TRUNC != 0,
    ) {
        (libc::O_RDONLY, _, _) => c"r",
        (libc::O_WRONLY, true, _) => c"a",
        (libc::O_WRONLY, _, _) => c"w",
        (_, true, _) => c"a+",
        (_, _, true) => c"w+",
        _ => c"r+",
    }
}

/// Re-issues one call; `None` for a call the replayer does not know.
pub(crate) fn issue(
    name: &str,
    event: &Event,
    path: Option<&Path>,
    target: Option<&Path>,
    handles: &mut ThreadHandles,
    buffer: &mut Vec<u8>,
) -> Option<Moved> {
    let c_path = || path.and_then(|p| CString::new(p.as_os_str().as_bytes()).ok());
    let size = event.request as usize;
    // Only a call that moves data takes `size` bytes of payload: another's request is not
    // a size (a seek's is a position, and growing the payload to it cost a page fault per
    // 4 KiB of the file).
    if buffer.len() < size && moves_data(name) {
        buffer.resize(size, b'c');
    }
    let fd = |handles: &ThreadHandles| handles.fd(event.handle);
    let one = |buffer: &mut Vec<u8>| libc::iovec {
        iov_base: buffer.as_mut_ptr().cast(),
        iov_len: size,
    };
    let moved = |result: isize, read: bool| {
        let bytes = result.max(0) as u64;
        Some(if read {
            Moved::Read(bytes)
        } else {
            Moved::Written(bytes)
        })
    };
    // SAFETY (every block below): libc calls with NUL-terminated paths made here, a buffer
    // at least `size` bytes long, and descriptors and streams this replay opened.
    match name {
        "open" | "open64" | "openat" | "openat64" | "__open_2" | "__open64_2" | "creat"
        | "creat64" => {
            let path = c_path()?;
            if let Some(parent) = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes())).parent() {
                make_directories(parent);
            }
            let flags = if name.starts_with("creat") {
                libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC
            } else {
                event.aux as i32
            };
            let opened = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, 0o644) };
            if opened >= 0 && event.result >= 0 {
                handles.opened(event.result as u64, opened);
            }
            Some(Moved::Nothing)
        }
        "close" => {
            let fd = handles.closed(event.handle);
            unsafe { libc::close(fd) };
            Some(Moved::Nothing)
        }
        // Vectored calls as vectored calls of one part (the parts' sizes are not kept).
        "read" => moved(
            unsafe { libc::read(fd(handles), buffer.as_mut_ptr().cast(), size) },
            true,
        ),
        "readv" => {
            let part = one(buffer);
            moved(unsafe { libc::readv(fd(handles), &part, 1) }, true)
        }
        "pread" | "pread64" => moved(
            unsafe {
                libc::pread(
                    fd(handles),
                    buffer.as_mut_ptr().cast(),
                    size,
                    event.offset.max(0),
                )
            },
            true,
        ),
        "preadv" | "preadv64" | "preadv2" => {
            let part = one(buffer);
            moved(
                unsafe { libc::preadv(fd(handles), &part, 1, event.offset.max(0)) },
                true,
            )
        }
        "write" => moved(
            unsafe { libc::write(fd(handles), buffer.as_ptr().cast(), size) },
            false,
        ),
        "writev" => {
            let part = one(buffer);
            moved(unsafe { libc::writev(fd(handles), &part, 1) }, false)
        }
        "pwrite" | "pwrite64" => moved(
            unsafe {
                libc::pwrite(
                    fd(handles),
                    buffer.as_ptr().cast(),
                    size,
                    event.offset.max(0),
                )
            },
            false,
        ),
        "pwritev" | "pwritev64" | "pwritev2" => {
            let part = one(buffer);
            moved(
                unsafe { libc::pwritev(fd(handles), &part, 1, event.offset.max(0)) },
                false,
            )
        }
        "lseek" | "lseek64" => {
            // To the position the recorded call reached.
            unsafe { libc::lseek(fd(handles), event.result.max(0), libc::SEEK_SET) };
            Some(Moved::Nothing)
        }
        "fsync" => {
            unsafe { libc::fsync(fd(handles)) };
            Some(Moved::Nothing)
        }
        "fdatasync" => {
            unsafe { libc::fdatasync(fd(handles)) };
            Some(Moved::Nothing)
        }
        "ftruncate" | "ftruncate64" => {
            // The length, as the tracer keeps it (in `aux`).
            unsafe { libc::ftruncate(fd(handles), event.aux as i64) };
            Some(Moved::Nothing)
        }
        "fstat" | "fstat64" | "__fxstat" | "__fxstat64" => {
            let mut status: libc::stat = unsafe { std::mem::zeroed() };
            unsafe { libc::fstat(fd(handles), &mut status) };
            Some(Moved::Nothing)
        }
        "stat" | "stat64" | "__xstat" | "__xstat64" | "statx" | "lstat" | "lstat64"
        | "__lxstat" | "__lxstat64" => {
            let path = c_path()?;
            let mut status: libc::stat = unsafe { std::mem::zeroed() };
            if name.contains("lstat") || name.contains("lxstat") {
                unsafe { libc::lstat(path.as_ptr(), &mut status) };
            } else {
                unsafe { libc::stat(path.as_ptr(), &mut status) };
            }
            Some(Moved::Nothing)
        }
        "access" | "faccessat" => {
            let path = c_path()?;
            unsafe { libc::access(path.as_ptr(), libc::F_OK) };
            Some(Moved::Nothing)
        }
        "unlink" | "unlinkat" => {
            let path = c_path()?;
            unsafe { libc::unlink(path.as_ptr()) };
            Some(Moved::Nothing)
        }
        "rmdir" => {
            let path = c_path()?;
            unsafe { libc::rmdir(path.as_ptr()) };
            Some(Moved::Nothing)
        }
        "mkdir" => {
            let path = c_path()?;
            // Under a replay root the program's working directory is not there yet (a
            // program that makes its tree from there, as mdtest does).
            if let Some(parent) = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes())).parent() {
                make_directories(parent);
            }
            unsafe { libc::mkdir(path.as_ptr(), 0o755) };
            Some(Moved::Nothing)
        }
        "rename" | "renameat" | "renameat2" => {
            let (path, target) = (
                c_path()?,
                CString::new(target?.as_os_str().as_bytes()).ok()?,
            );
            unsafe { libc::rename(path.as_ptr(), target.as_ptr()) };
            Some(Moved::Nothing)
        }
        "fopen" | "fopen64" => {
            let path = c_path()?;
            if let Some(parent) = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes())).parent() {
                make_directories(parent);
            }
            let stream =
                unsafe { libc::fopen(path.as_ptr(), stdio_mode(event.request as i32).as_ptr()) };
            if !stream.is_null() {
                handles.opened_stream(event.handle, stream as usize);
            }
            Some(Moved::Nothing)
        }
        // A phase the program marked: marked again when a tracer defines the marks (the
        // replay traced with `cairn run` keeps the phases), else nothing to do.
        "cairn_phase_begin" | "cairn_phase_end" => {
            let symbol = if name == "cairn_phase_begin" {
                c"cairn_phase_begin"
            } else {
                c"cairn_phase_end"
            };
            let phase = path
                .and_then(|path| path.file_name())
                .and_then(|file| file.as_bytes().strip_prefix(b"phase:"))
                .and_then(|phase| CString::new(phase).ok());
            // SAFETY: a lookup by a NUL-terminated name.
            let mark = unsafe { libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr()) };
            if let (false, Some(phase)) = (mark.is_null(), phase) {
                type Mark = unsafe extern "C" fn(*const libc::c_char);
                // SAFETY: the tracer's mark, which takes a NUL-terminated name.
                unsafe { std::mem::transmute::<*mut libc::c_void, Mark>(mark)(phase.as_ptr()) };
            }
            Some(Moved::Nothing)
        }
        _ => issue_stdio(name, event, handles, buffer, size),
    }
}

/// Makes `directory` and the directories above it that are missing, through the system
/// call rather than libc's `mkdir`: the replay's own scaffolding under its root, which a
/// tracer watching the replay must not count among the program's calls (a traced replay
/// then makes the calls the program made, in the phases it marked).
pub(crate) fn make_directories(directory: &Path) {
    let Ok(path) = CString::new(directory.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: a NUL-terminated path; the raw system call changes nothing of ours.
    let made = unsafe { libc::syscall(libc::SYS_mkdirat, libc::AT_FDCWD, path.as_ptr(), 0o755) };
    if made == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT) {
        return;
    }
    if let Some(parent) = directory.parent().filter(|parent| *parent != directory) {
        make_directories(parent);
        // SAFETY: as above.
        unsafe { libc::syscall(libc::SYS_mkdirat, libc::AT_FDCWD, path.as_ptr(), 0o755) };
    }
}

/// Whether the call reads or writes `request` bytes (of a file or a stream).
fn moves_data(name: &str) -> bool {
    matches!(
        name,
        "read"
            | "readv"
            | "pread"
            | "pread64"
            | "preadv"
            | "preadv64"
            | "preadv2"
            | "write"
            | "writev"
            | "pwrite"
            | "pwrite64"
            | "pwritev"
            | "pwritev64"
            | "pwritev2"
            | "fwrite"
            | "fwrite_unlocked"
            | "fputs"
            | "fputs_unlocked"
            | "fprintf"
            | "vfprintf"
            | "__fprintf_chk"
            | "__vfprintf_chk"
            | "fread"
            | "fread_unlocked"
            | "fgets"
            | "fgets_unlocked"
            | "getline"
            | "getdelim"
            | "__getdelim"
            | "fscanf"
            | "__isoc99_fscanf"
            | "vfscanf"
            | "__isoc99_vfscanf"
    )
}

extern "C" {
    /// POSIX getdelim(3), which the libc crate does not declare.
    fn getdelim(
        line: *mut *mut libc::c_char,
        capacity: *mut usize,
        delimiter: libc::c_int,
        stream: *mut libc::FILE,
    ) -> isize;
    /// glibc's name for it, which `getline` calls.
    fn __getdelim(
        line: *mut *mut libc::c_char,
        capacity: *mut usize,
        delimiter: libc::c_int,
        stream: *mut libc::FILE,
    ) -> isize;
}

/// `size` bytes of payload ending with a line break (none when empty).
fn line(buffer: &[u8], size: usize) -> Vec<u8> {
    let mut text: Vec<u8> = buffer[..size.min(buffer.len())]
        .iter()
        .map(|byte| {
            if *byte == 0 || *byte == b'\n' {
                b'c'
            } else {
                *byte
            }
        })
        .collect();
    text.resize(size, b'c');
    if let Some(last) = text.last_mut() {
        *last = b'\n';
    }
    text
}

/// The stdio calls on an open stream.
fn issue_stdio(
    name: &str,
    event: &Event,
    handles: &mut ThreadHandles,
    buffer: &mut [u8],
    request: usize,
) -> Option<Moved> {
    if name == "fclose" {
        let stream = handles.closed_stream(event.handle)? as *mut libc::FILE;
        // SAFETY: a stream this replay opened, closed once.
        unsafe { libc::fclose(stream) };
        return Some(Moved::Nothing);
    }
    if handles.inherited_stream(event.handle) {
        return Some(Moved::Nothing);
    }
    let stream = handles.stream(event.handle)? as *mut libc::FILE;
    // A line or a formatted write moves what it moved, not what it asked room for.
    let size = event.bytes() as usize;
    // SAFETY (every block below): a stream this replay opened, a buffer of at least `size`.
    match name {
        // Text ends with a line break, so that line reads find the lines the program wrote
        // (a program writes whole lines per call far more often than not).
        "fwrite" | "fwrite_unlocked" => {
            let text = line(buffer, size);
            let written = unsafe { libc::fwrite(text.as_ptr().cast(), 1, size, stream) };
            Some(Moved::Written(written as u64))
        }
        "fputs" | "fputs_unlocked" => {
            let text = CString::new(line(buffer, size)).ok()?;
            let ok = unsafe { libc::fputs(text.as_ptr(), stream) } >= 0;
            Some(Moved::Written(if ok { size as u64 } else { 0 }))
        }
        "fprintf" | "vfprintf" | "__fprintf_chk" | "__vfprintf_chk" => {
            let text = CString::new(line(buffer, size)).ok()?;
            let written = unsafe { libc::fprintf(stream, c"%s".as_ptr(), text.as_ptr()) };
            Some(Moved::Written(written.max(0) as u64))
        }
        "fputc" | "putc" | "_IO_putc" | "fputc_unlocked" | "putc_unlocked" => {
            unsafe { libc::fputc(b'\n' as i32, stream) };
            Some(Moved::Written(1))
        }
        "fread" | "fread_unlocked" => {
            let read = unsafe { libc::fread(buffer.as_mut_ptr().cast(), 1, request, stream) };
            Some(Moved::Read(read as u64))
        }
        "fgets" | "fgets_unlocked" => {
            let room = request.clamp(1, buffer.len().max(1)) as i32;
            let got = unsafe { libc::fgets(buffer.as_mut_ptr().cast(), room, stream) };
            let bytes = if got.is_null() {
                0
            } else {
                buffer.iter().position(|b| *b == 0).unwrap_or(0) as u64
            };
            Some(Moved::Read(bytes))
        }
        "getline" | "getdelim" | "__getdelim" => {
            let (mut line, mut capacity): (*mut libc::c_char, usize) = (std::ptr::null_mut(), 0);
            // The same entry point the program used (glibc's getline is __getdelim).
            let got = unsafe {
                if name == "__getdelim" {
                    __getdelim(&mut line, &mut capacity, b'\n' as i32, stream)
                } else {
                    getdelim(&mut line, &mut capacity, b'\n' as i32, stream)
                }
            };
            unsafe { libc::free(line.cast()) };
            Some(Moved::Read(got.max(0) as u64))
        }
        "fscanf" | "__isoc99_fscanf" | "vfscanf" | "__isoc99_vfscanf" => {
            unsafe { libc::fscanf(stream, c"%*s".as_ptr()) };
            Some(Moved::Nothing)
        }
        "fgetc" | "getc" | "_IO_getc" => {
            unsafe { libc::fgetc(stream) };
            Some(Moved::Read(1))
        }
        "rewind" => {
            unsafe { libc::rewind(stream) };
            Some(Moved::Nothing)
        }
        "fseek" => {
            unsafe { libc::fseek(stream, event.offset.max(0), libc::SEEK_SET) };
            Some(Moved::Nothing)
        }
        "fseeko" | "fseeko64" | "fsetpos" | "fsetpos64" => {
            unsafe { libc::fseeko(stream, event.offset.max(0), libc::SEEK_SET) };
            Some(Moved::Nothing)
        }
        "ftell" => {
            unsafe { libc::ftell(stream) };
            Some(Moved::Nothing)
        }
        "ftello" | "ftello64" | "fgetpos" | "fgetpos64" => {
            unsafe { libc::ftello(stream) };
            Some(Moved::Nothing)
        }
        "fflush" | "fflush_unlocked" => {
            unsafe { libc::fflush(stream) };
            Some(Moved::Nothing)
        }
        _ => None,
    }
}

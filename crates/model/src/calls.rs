//! The call table: one row per hooked call.
//!
//! `for_each_call!(callback)` hands every row to `callback!`. This crate turns the rows
//! into the [`Call`] enum and its metadata; the preload library turns the same rows into
//! hooks. A row is
//!
//! ```text
//! name  Layer  Class  generated (arg: Type, ...) -> Ret => adapter(arg, ...);
//! name  Layer  Class  custom;
//! name  Layer  Class  share;
//! ```
//!
//! `generated` rows get their hook written by the macro: time the real call and let the
//! named adapter (a function in the preload crate) fill in file, offset and sizes from the
//! arguments and the return value. `custom` rows are C-variadic or need handling that does
//! not fit one adapter call (`open`, `fcntl`, `fprintf`, `_exit`); their hooks are written
//! by hand in the preload crate, but they are still declared only here. `share` rows are
//! never hooked: another row's hook writes them, for the part of its call that belongs to
//! a second file or a later moment (`copy_file_range_into`, the destination's share of a
//! `copy_file_range`; `aio_write_done`, the bytes `aio_return` collected).
//!
//! The types in the signatures are only tokens to this crate; the preload crate resolves
//! them against `libc`.

/// Calls every row of the call table through `$callback!`.
#[macro_export]
macro_rules! for_each_call {
    ($callback:path) => {
        $callback! {
            // ---- POSIX: open and close ------------------------------------------------
            open       Posix Open  custom;
            open64     Posix Open  custom;
            openat     Posix Open  custom;
            openat64   Posix Open  custom;
            __open_2   Posix Open  generated (path: *const c_char, flags: c_int) -> c_int
                => path_open(AT_FDCWD, path, flags, 0);
            __open64_2 Posix Open  generated (path: *const c_char, flags: c_int) -> c_int
                => path_open(AT_FDCWD, path, flags, 0);
            __openat_2 Posix Open  generated (dirfd: c_int, path: *const c_char, flags: c_int) -> c_int
                => path_open(dirfd, path, flags, 0);
            __openat64_2 Posix Open generated (dirfd: c_int, path: *const c_char, flags: c_int) -> c_int
                => path_open(dirfd, path, flags, 0);
            creat      Posix Open  generated (path: *const c_char, mode: mode_t) -> c_int
                => path_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
            // Temporary files: the name is the template as the call filled it in.
            mkstemp    Posix Open  generated (template: *mut c_char) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL, 0o600);
            mkstemp64  Posix Open  generated (template: *mut c_char) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL, 0o600);
            mkostemp   Posix Open  generated (template: *mut c_char, flags: c_int) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL | flags, 0o600);
            mkostemp64 Posix Open  generated (template: *mut c_char, flags: c_int) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL | flags, 0o600);
            mkstemps   Posix Open  generated (template: *mut c_char, suffix: c_int) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL, 0o600);
            mkstemps64 Posix Open  generated (template: *mut c_char, suffix: c_int) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL, 0o600);
            mkostemps  Posix Open  generated (template: *mut c_char, suffix: c_int, flags: c_int) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL | flags, 0o600);
            mkostemps64 Posix Open generated (template: *mut c_char, suffix: c_int, flags: c_int) -> c_int
                => path_open(AT_FDCWD, template, O_RDWR | O_CREAT | O_EXCL | flags, 0o600);
            creat64    Posix Open  generated (path: *const c_char, mode: mode_t) -> c_int
                => path_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
            close      Posix Close custom;

            // ---- POSIX: data --------------------------------------------------------------
            read       Posix Read  generated (fd: c_int, buf: *mut c_void, count: size_t) -> ssize_t
                => fd_transfer(fd, count, -1);
            __read_chk Posix Read  generated (fd: c_int, buf: *mut c_void, count: size_t, buflen: size_t) -> ssize_t
                => fd_transfer(fd, count, -1);
            write      Posix Write generated (fd: c_int, buf: *const c_void, count: size_t) -> ssize_t
                => fd_transfer(fd, count, -1);
            pread      Posix Read  generated (fd: c_int, buf: *mut c_void, count: size_t, offset: off_t) -> ssize_t
                => fd_transfer(fd, count, offset);
            pread64    Posix Read  generated (fd: c_int, buf: *mut c_void, count: size_t, offset: off64_t) -> ssize_t
                => fd_transfer(fd, count, offset);
            __pread_chk Posix Read generated (fd: c_int, buf: *mut c_void, count: size_t, offset: off_t, buflen: size_t) -> ssize_t
                => fd_transfer(fd, count, offset);
            __pread64_chk Posix Read generated (fd: c_int, buf: *mut c_void, count: size_t, offset: off64_t, buflen: size_t) -> ssize_t
                => fd_transfer(fd, count, offset);
            pwrite     Posix Write generated (fd: c_int, buf: *const c_void, count: size_t, offset: off_t) -> ssize_t
                => fd_transfer(fd, count, offset);
            pwrite64   Posix Write generated (fd: c_int, buf: *const c_void, count: size_t, offset: off64_t) -> ssize_t
                => fd_transfer(fd, count, offset);
            readv      Posix Read  generated (fd: c_int, iov: *const iovec, iovcnt: c_int) -> ssize_t
                => fd_vector(fd, iov, iovcnt, -1);
            writev     Posix Write generated (fd: c_int, iov: *const iovec, iovcnt: c_int) -> ssize_t
                => fd_vector(fd, iov, iovcnt, -1);
            preadv     Posix Read  generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);
            preadv64   Posix Read  generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);
            pwritev    Posix Write generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);
            pwritev64  Posix Write generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);
            preadv2    Posix Read  generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t, flags: c_int) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);
            preadv64v2 Posix Read  generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t, flags: c_int) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);
            pwritev2   Posix Write generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t, flags: c_int) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);
            pwritev64v2 Posix Write generated (fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t, flags: c_int) -> ssize_t
                => fd_vector(fd, iov, iovcnt, offset);

            // ---- POSIX: bytes between two descriptors --------------------------------------
            // The call's own event is the source's share (a read, with the call's time); its
            // hook writes the `_into` row's event right after, the destination's share (a
            // write of the same bytes, no time of its own). Offsets are the ones each side
            // used: the pointed-to value before the call, or the descriptor's position.
            copy_file_range Posix Read custom;
            copy_file_range_into Posix Write share;
            sendfile   Posix Read  custom;
            sendfile_into Posix Write share;
            sendfile64 Posix Read  custom;
            sendfile64_into Posix Write share;
            splice     Posix Read  custom;
            splice_into Posix Write share;
            tee        Posix Read  custom;
            tee_into   Posix Write share;
            vmsplice   Posix Write generated (fd: c_int, iov: *const iovec, segments: size_t, flags: c_uint) -> ssize_t
                => fd_vector(fd, iov, segments as c_int, -1);

            // ---- POSIX asynchronous I/O -----------------------------------------------------
            // A submission moves nothing yet (a metadata call on the request's file, its size
            // the request); `aio_return` collects the bytes, written as the `_done` row of the
            // submission's direction with the submission-to-completion latency in `aux`.
            aio_read   Posix Meta  generated (request: *mut c_void) -> c_int => aio_submit(request, 0);
            aio_read64 Posix Meta  generated (request: *mut c_void) -> c_int => aio_submit(request, 0);
            aio_write  Posix Meta  generated (request: *mut c_void) -> c_int => aio_submit(request, 1);
            aio_write64 Posix Meta generated (request: *mut c_void) -> c_int => aio_submit(request, 1);
            lio_listio Posix Meta  generated (mode: c_int, list: *const *mut c_void, count: c_int, signal: *mut c_void) -> c_int
                => aio_submit_list(list, count);
            lio_listio64 Posix Meta generated (mode: c_int, list: *const *mut c_void, count: c_int, signal: *mut c_void) -> c_int
                => aio_submit_list(list, count);
            aio_return Posix Meta  custom;
            aio_return64 Posix Meta custom;
            aio_read_done Posix Read share;
            aio_write_done Posix Write share;
            aio_error  Posix Completion generated (request: *const c_void) -> c_int => aio_status(request);
            aio_error64 Posix Completion generated (request: *const c_void) -> c_int => aio_status(request);
            aio_suspend Posix Completion generated (list: *const *const c_void, count: c_int, timeout: *const c_void) -> c_int
                => aio_wait(count);
            aio_suspend64 Posix Completion generated (list: *const *const c_void, count: c_int, timeout: *const c_void) -> c_int
                => aio_wait(count);
            aio_cancel Posix Meta  generated (fd: c_int, request: *mut c_void) -> c_int => fd_status(fd, 0);
            aio_cancel64 Posix Meta generated (fd: c_int, request: *mut c_void) -> c_int => fd_status(fd, 0);

            // ---- POSIX: position, sync, size, descriptors, mappings -----------------------
            lseek      Posix Seek  generated (fd: c_int, offset: off_t, whence: c_int) -> off_t
                => fd_seek(fd, offset, whence);
            lseek64    Posix Seek  generated (fd: c_int, offset: off64_t, whence: c_int) -> off64_t
                => fd_seek(fd, offset, whence);
            fsync      Posix Sync  generated (fd: c_int) -> c_int => fd_status(fd, 0);
            fdatasync  Posix Sync  generated (fd: c_int) -> c_int => fd_status(fd, 0);
            sync_file_range Posix Sync generated (fd: c_int, offset: off64_t, length: off64_t, flags: c_uint) -> c_int
                => fd_status(fd, length);
            readahead  Posix Meta  generated (fd: c_int, offset: off64_t, count: size_t) -> ssize_t
                => fd_advice(fd, offset, count);
            ftruncate  Posix Meta  generated (fd: c_int, length: off_t) -> c_int => fd_status(fd, length);
            ftruncate64 Posix Meta generated (fd: c_int, length: off64_t) -> c_int => fd_status(fd, length);
            dup        Posix Dup   generated (oldfd: c_int) -> c_int => fd_dup(oldfd);
            dup2       Posix Dup   generated (oldfd: c_int, newfd: c_int) -> c_int => fd_dup(oldfd);
            dup3       Posix Dup   generated (oldfd: c_int, newfd: c_int, flags: c_int) -> c_int => fd_dup(oldfd);
            fcntl      Posix Dup   custom;
            fcntl64    Posix Dup   custom;
            mmap       Posix Mmap  generated (addr: *mut c_void, length: size_t, prot: c_int, flags: c_int, fd: c_int, offset: off_t) -> *mut c_void
                => fd_map(fd, length, flags, offset);
            mmap64     Posix Mmap  generated (addr: *mut c_void, length: size_t, prot: c_int, flags: c_int, fd: c_int, offset: off64_t) -> *mut c_void
                => fd_map(fd, length, flags, offset);
            munmap     Posix Mmap  custom;

            // ---- POSIX: metadata by name or descriptor ------------------------------------
            stat       Posix Stat  generated (path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            stat64     Posix Stat  generated (path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            lstat      Posix Stat  generated (path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            lstat64    Posix Stat  generated (path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            fstat      Posix Stat  generated (fd: c_int, buf: *mut c_void) -> c_int => fd_status(fd, 0);
            fstat64    Posix Stat  generated (fd: c_int, buf: *mut c_void) -> c_int => fd_status(fd, 0);
            fstatat    Posix Stat  generated (dirfd: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) -> c_int
                => path_status(dirfd, path, flags);
            fstatat64  Posix Stat  generated (dirfd: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) -> c_int
                => path_status(dirfd, path, flags);
            __xstat    Posix Stat  generated (version: c_int, path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            __xstat64  Posix Stat  generated (version: c_int, path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            __lxstat   Posix Stat  generated (version: c_int, path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            __lxstat64 Posix Stat  generated (version: c_int, path: *const c_char, buf: *mut c_void) -> c_int
                => path_status(AT_FDCWD, path, 0);
            __fxstat   Posix Stat  generated (version: c_int, fd: c_int, buf: *mut c_void) -> c_int
                => fd_status(fd, 0);
            __fxstat64 Posix Stat  generated (version: c_int, fd: c_int, buf: *mut c_void) -> c_int
                => fd_status(fd, 0);
            __fxstatat Posix Stat  generated (version: c_int, dirfd: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) -> c_int
                => path_status(dirfd, path, flags);
            __fxstatat64 Posix Stat generated (version: c_int, dirfd: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) -> c_int
                => path_status(dirfd, path, flags);
            statx      Posix Stat  generated (dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut c_void) -> c_int
                => path_status(dirfd, path, flags);
            access     Posix Meta  generated (path: *const c_char, mode: c_int) -> c_int
                => path_status(AT_FDCWD, path, mode);
            faccessat  Posix Meta  generated (dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int
                => path_status(dirfd, path, mode);
            chmod      Posix Meta  generated (path: *const c_char, mode: mode_t) -> c_int
                => path_status(AT_FDCWD, path, mode);
            fchmod     Posix Meta  generated (fd: c_int, mode: mode_t) -> c_int => fd_status(fd, mode as i64);
            truncate   Posix Meta  generated (path: *const c_char, length: off_t) -> c_int
                => path_status(AT_FDCWD, path, length);
            truncate64 Posix Meta  generated (path: *const c_char, length: off64_t) -> c_int
                => path_status(AT_FDCWD, path, length);
            // Space and advice: the length (the advice) kept; the posix_ forms return their error.
            fallocate  Posix Meta  generated (fd: c_int, mode: c_int, offset: off_t, length: off_t) -> c_int
                => fd_status(fd, length);
            fallocate64 Posix Meta generated (fd: c_int, mode: c_int, offset: off64_t, length: off64_t) -> c_int
                => fd_status(fd, length);
            posix_fallocate Posix Meta generated (fd: c_int, offset: off_t, length: off_t) -> c_int
                => fd_status_returned(fd, length);
            posix_fallocate64 Posix Meta generated (fd: c_int, offset: off64_t, length: off64_t) -> c_int
                => fd_status_returned(fd, length);
            posix_fadvise Posix Meta generated (fd: c_int, offset: off_t, length: off_t, advice: c_int) -> c_int
                => fd_status_returned(fd, advice as i64);
            posix_fadvise64 Posix Meta generated (fd: c_int, offset: off64_t, length: off64_t, advice: c_int) -> c_int
                => fd_status_returned(fd, advice as i64);
            unlink     Posix Meta  generated (path: *const c_char) -> c_int => path_status(AT_FDCWD, path, 0);
            unlinkat   Posix Meta  generated (dirfd: c_int, path: *const c_char, flags: c_int) -> c_int
                => path_status(dirfd, path, flags);
            rename     Posix Meta  generated (oldpath: *const c_char, newpath: *const c_char) -> c_int
                => path_rename(oldpath, newpath);
            renameat   Posix Meta  generated (olddirfd: c_int, oldpath: *const c_char, newdirfd: c_int, newpath: *const c_char) -> c_int
                => path_rename_at(olddirfd, oldpath, newdirfd, newpath);
            renameat2  Posix Meta  generated (olddirfd: c_int, oldpath: *const c_char, newdirfd: c_int, newpath: *const c_char, flags: c_uint) -> c_int
                => path_rename_at(olddirfd, oldpath, newdirfd, newpath);
            utimensat  Posix Meta  generated (dirfd: c_int, path: *const c_char, times: *const c_void, flags: c_int) -> c_int
                => path_or_fd_status(dirfd, path, flags);
            futimens   Posix Meta  generated (fd: c_int, times: *const c_void) -> c_int => fd_status(fd, 0);
            fchmodat   Posix Meta  generated (dirfd: c_int, path: *const c_char, mode: mode_t, flags: c_int) -> c_int
                => path_status(dirfd, path, mode);
            // Directories: listed through a stream whose descriptor names the directory.
            opendir    Posix Meta  generated (path: *const c_char) -> *mut c_void => dir_open(path);
            fdopendir  Posix Meta  generated (fd: c_int) -> *mut c_void => dir_from_fd(fd);
            readdir    Posix Meta  generated (dir: *mut c_void) -> *mut c_void => dir_read(dir);
            readdir64  Posix Meta  generated (dir: *mut c_void) -> *mut c_void => dir_read(dir);
            closedir   Posix Meta  custom;
            mkdir      Posix Meta  generated (path: *const c_char, mode: mode_t) -> c_int
                => path_status(AT_FDCWD, path, mode);
            rmdir      Posix Meta  generated (path: *const c_char) -> c_int => path_status(AT_FDCWD, path, 0);

            // ---- stdio ------------------------------------------------------------------
            fopen      Stdio Open  generated (path: *const c_char, mode: *const c_char) -> *mut FILE
                => stream_open(path, mode);
            fopen64    Stdio Open  generated (path: *const c_char, mode: *const c_char) -> *mut FILE
                => stream_open(path, mode);
            fdopen     Stdio Open  generated (fd: c_int, mode: *const c_char) -> *mut FILE
                => stream_fdopen(fd, mode);
            freopen    Stdio Open  generated (path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE
                => stream_open(path, mode);
            freopen64  Stdio Open  generated (path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE
                => stream_open(path, mode);
            // An unnamed temporary file: named as its descriptor shows it.
            tmpfile    Stdio Open  generated () -> *mut FILE => stream_temporary();
            tmpfile64  Stdio Open  generated () -> *mut FILE => stream_temporary();
            fclose     Stdio Close custom;
            fread      Stdio Read  generated (ptr: *mut c_void, size: size_t, nmemb: size_t, stream: *mut FILE) -> size_t
                => stream_items(stream, size, nmemb);
            fread_unlocked Stdio Read generated (ptr: *mut c_void, size: size_t, nmemb: size_t, stream: *mut FILE) -> size_t
                => stream_items(stream, size, nmemb);
            __fread_chk Stdio Read generated (ptr: *mut c_void, ptrlen: size_t, size: size_t, nmemb: size_t, stream: *mut FILE) -> size_t
                => stream_items(stream, size, nmemb);
            fwrite     Stdio Write generated (ptr: *const c_void, size: size_t, nmemb: size_t, stream: *mut FILE) -> size_t
                => stream_items(stream, size, nmemb);
            fwrite_unlocked Stdio Write generated (ptr: *const c_void, size: size_t, nmemb: size_t, stream: *mut FILE) -> size_t
                => stream_items(stream, size, nmemb);
            fgets      Stdio Read  generated (buf: *mut c_char, size: c_int, stream: *mut FILE) -> *mut c_char
                => stream_line(stream, size, buf);
            __fgets_chk Stdio Read generated (buf: *mut c_char, buflen: size_t, size: c_int, stream: *mut FILE) -> *mut c_char
                => stream_line(stream, size, buf);
            getline    Stdio Read  generated (line: *mut *mut c_char, capacity: *mut size_t, stream: *mut FILE) -> ssize_t
                => stream_count(stream);
            __getdelim Stdio Read  generated (line: *mut *mut c_char, capacity: *mut size_t, delimiter: c_int, stream: *mut FILE) -> ssize_t
                => stream_count(stream);
            getdelim   Stdio Read  generated (line: *mut *mut c_char, capacity: *mut size_t, delimiter: c_int, stream: *mut FILE) -> ssize_t
                => stream_count(stream);
            fputs      Stdio Write generated (text: *const c_char, stream: *mut FILE) -> c_int
                => stream_text(stream, text);
            fputc      Stdio Write generated (character: c_int, stream: *mut FILE) -> c_int
                => stream_char(stream);
            putc       Stdio Write generated (character: c_int, stream: *mut FILE) -> c_int
                => stream_char(stream);
            fprintf    Stdio Write custom;
            vfprintf   Stdio Write custom;
            __fprintf_chk  Stdio Write custom;
            __vfprintf_chk Stdio Write custom;
            fscanf     Stdio Read  custom;
            __isoc99_fscanf Stdio Read custom;
            vfscanf    Stdio Read  custom;
            __isoc99_vfscanf Stdio Read custom;
            fseek      Stdio Seek  generated (stream: *mut FILE, offset: c_long, whence: c_int) -> c_int
                => stream_seek(stream, offset, whence);
            fseeko     Stdio Seek  generated (stream: *mut FILE, offset: off_t, whence: c_int) -> c_int
                => stream_seek(stream, offset, whence);
            fseeko64   Stdio Seek  generated (stream: *mut FILE, offset: off64_t, whence: c_int) -> c_int
                => stream_seek(stream, offset, whence);
            ftell      Stdio Seek  generated (stream: *mut FILE) -> c_long => stream_tell(stream);
            ftello     Stdio Seek  generated (stream: *mut FILE) -> off_t => stream_tell(stream);
            ftello64   Stdio Seek  generated (stream: *mut FILE) -> off64_t => stream_tell(stream);
            fgetpos    Stdio Seek  generated (stream: *mut FILE, position: *mut c_void) -> c_int
                => stream_get_position(stream);
            fgetpos64  Stdio Seek  generated (stream: *mut FILE, position: *mut c_void) -> c_int
                => stream_get_position(stream);
            fsetpos    Stdio Seek  generated (stream: *mut FILE, position: *const c_void) -> c_int
                => stream_set_position(stream);
            fsetpos64  Stdio Seek  generated (stream: *mut FILE, position: *const c_void) -> c_int
                => stream_set_position(stream);
            rewind     Stdio Seek  generated (stream: *mut FILE) -> () => stream_rewind(stream);
            fflush     Stdio Flush generated (stream: *mut FILE) -> c_int => stream_flush(stream);

            // ---- MPI communication (Open MPI ABI: handles are pointers) ------------------
            MPI_Send   Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            // The bytes a receive got come from its status (the hook's own when the program
            // ignores it); a posted receive counts them when a completion finishes it.
            MPI_Recv   Mpi PointToPoint custom;
            MPI_Isend  Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            MPI_Irecv  Mpi PointToPoint generated (buf: *mut c_void, count: c_int, datatype: MpiHandle, source: c_int, tag: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_post_receive(count, datatype, source, tag, comm, request);
            MPI_Ssend  Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            MPI_Rsend  Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            MPI_Bsend  Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            MPI_Issend Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            // The send is the call's event; its `_received` share, right after, the receive.
            MPI_Sendrecv Mpi PointToPoint custom;
            MPI_Sendrecv_received Mpi PointToPoint share;
            MPI_Probe  Mpi PointToPoint generated (source: c_int, tag: c_int, comm: MpiHandle, status: MpiHandle) -> c_int
                => mpi_receive(0, std::ptr::null_mut(), source, tag, comm, std::ptr::null(), status);
            MPI_Iprobe Mpi PointToPoint generated (source: c_int, tag: c_int, comm: MpiHandle, flag: *mut c_int, status: MpiHandle) -> c_int
                => mpi_receive(0, std::ptr::null_mut(), source, tag, comm, flag, status);
            MPI_Test Mpi Completion custom;
            MPI_Testall Mpi Completion custom;
            MPI_Waitany Mpi Completion custom;
            MPI_Waitsome Mpi Completion custom;
            MPI_Gather Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, root, comm);
            MPI_Scatter Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle) -> c_int
                => mpi_collective(recvcount, recvtype, root, comm);
            MPI_Allgather Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, -1, comm);
            MPI_Alltoall Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, -1, comm);
            MPI_Scan   Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective(count, datatype, -1, comm);
            MPI_Exscan Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective(count, datatype, -1, comm);
            MPI_Reduce_scatter_block Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective(recvcount, datatype, -1, comm);
            MPI_Ibarrier Mpi Collective generated (comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(0, std::ptr::null_mut(), -1, comm);
            MPI_Ibcast Mpi Collective generated (buffer: *mut c_void, count: c_int, datatype: MpiHandle, root: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(count, datatype, root, comm);
            MPI_Iallreduce Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(count, datatype, -1, comm);
            MPI_Sendrecv_replace Mpi PointToPoint custom;
            MPI_Sendrecv_replace_received Mpi PointToPoint share;
            MPI_Testany Mpi Completion custom;
            MPI_Testsome Mpi Completion custom;
            MPI_Wait Mpi Completion custom;
            // Freeing a posted receive: the bytes that arrived, if they have (its status
            // through PMPI_Request_get_status, which frees nothing), as a completion's.
            MPI_Request_free Mpi Completion custom;
            MPI_Waitall Mpi Completion custom;
            MPI_Barrier Mpi Collective generated (comm: MpiHandle) -> c_int
                => mpi_collective(0, std::ptr::null_mut(), -1, comm);
            MPI_Bcast  Mpi Collective generated (buffer: *mut c_void, count: c_int, datatype: MpiHandle, root: c_int, comm: MpiHandle) -> c_int
                => mpi_collective(count, datatype, root, comm);
            MPI_Reduce Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, root: c_int, comm: MpiHandle) -> c_int
                => mpi_collective(count, datatype, root, comm);
            MPI_Allreduce Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective(count, datatype, -1, comm);

            MPI_Ibsend Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            MPI_Irsend Mpi PointToPoint generated (buf: *const c_void, count: c_int, datatype: MpiHandle, dest: c_int, tag: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_message(count, datatype, dest, tag, comm);
            MPI_Mprobe Mpi PointToPoint generated (source: c_int, tag: c_int, comm: MpiHandle, message: *mut MpiHandle, status: MpiHandle) -> c_int
                => mpi_receive(0, std::ptr::null_mut(), source, tag, comm, std::ptr::null(), status);
            MPI_Improbe Mpi PointToPoint generated (source: c_int, tag: c_int, comm: MpiHandle, flag: *mut c_int, message: *mut MpiHandle, status: MpiHandle) -> c_int
                => mpi_receive(0, std::ptr::null_mut(), source, tag, comm, flag, status);
            MPI_Mrecv  Mpi PointToPoint generated (buf: *mut c_void, count: c_int, datatype: MpiHandle, message: *mut MpiHandle, status: MpiHandle) -> c_int
                => mpi_matched_receive(count, datatype, status);
            MPI_Imrecv Mpi PointToPoint generated (buf: *mut c_void, count: c_int, datatype: MpiHandle, message: *mut MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_matched_post(count, datatype, request);
            MPI_Gatherv Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, root, comm);
            MPI_Scatterv Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle) -> c_int
                => mpi_collective(recvcount, recvtype, root, comm);
            MPI_Allgatherv Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, -1, comm);
            MPI_Alltoallv Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective_per_peer(sendcounts, sendtype, std::ptr::null(), comm);
            MPI_Alltoallw Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective_per_peer(sendcounts, std::ptr::null_mut(), sendtypes.cast(), comm);
            MPI_Reduce_scatter Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle) -> c_int
                => mpi_collective_per_peer(recvcounts, datatype, std::ptr::null(), comm);
            MPI_Ireduce Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, root: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(count, datatype, root, comm);
            MPI_Igather Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, root, comm);
            MPI_Igatherv Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, root, comm);
            MPI_Iscatter Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(recvcount, recvtype, root, comm);
            MPI_Iscatterv Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, root: c_int, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(recvcount, recvtype, root, comm);
            MPI_Iallgather Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, -1, comm);
            MPI_Iallgatherv Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, -1, comm);
            MPI_Ialltoall Mpi Collective generated (sendbuf: *const c_void, sendcount: c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcount: c_int, recvtype: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(sendcount, sendtype, -1, comm);
            MPI_Ialltoallv Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective_per_peer(sendcounts, sendtype, std::ptr::null(), comm);
            MPI_Ialltoallw Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MpiHandle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective_per_peer(sendcounts, std::ptr::null_mut(), sendtypes.cast(), comm);
            MPI_Ireduce_scatter Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective_per_peer(recvcounts, datatype, std::ptr::null(), comm);
            MPI_Ireduce_scatter_block Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(recvcount, datatype, -1, comm);
            MPI_Iscan  Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(count, datatype, -1, comm);
            MPI_Iexscan Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MpiHandle, op: MpiHandle, comm: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_collective(count, datatype, -1, comm);

            // ---- MPI communicators (collective over the old communicator) and datatypes ----
            // Each (`MPI_Comm_split_type` too: the ranks of one node, as IOR counts nodes)
            // is followed by its `MPI_Comm_made` share: the new communicator, the world
            // rank of its rank 0 and this rank's rank in it (hooks in communicators.rs), so a
            // replay makes it again.
            MPI_Comm_split Mpi Collective custom;
            MPI_Comm_split_type Mpi Collective custom;
            MPI_Comm_dup Mpi Collective custom;
            MPI_Comm_create Mpi Collective custom;
            MPI_Cart_create Mpi Collective custom;
            MPI_Comm_made Mpi Meta share;
            // The communicator freed is its handle (read before the call nulls it).
            MPI_Comm_free Mpi Meta custom;
            MPI_Type_contiguous Mpi Meta generated (count: c_int, oldtype: MpiHandle, newtype: *mut MpiHandle) -> c_int
                => mpi_local();
            MPI_Type_vector Mpi Meta generated (count: c_int, blocklength: c_int, stride: c_int, oldtype: MpiHandle, newtype: *mut MpiHandle) -> c_int
                => mpi_local();
            MPI_Type_indexed Mpi Meta generated (count: c_int, blocklengths: *const c_int, displacements: *const c_int, oldtype: MpiHandle, newtype: *mut MpiHandle) -> c_int
                => mpi_local();
            MPI_Type_create_subarray Mpi Meta generated (ndims: c_int, sizes: *const c_int, subsizes: *const c_int, starts: *const c_int, order: c_int, oldtype: MpiHandle, newtype: *mut MpiHandle) -> c_int
                => mpi_local();
            MPI_Type_create_darray Mpi Meta generated (size: c_int, rank: c_int, ndims: c_int, gsizes: *const c_int, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, oldtype: MpiHandle, newtype: *mut MpiHandle) -> c_int
                => mpi_local();
            MPI_Type_create_struct Mpi Meta generated (count: c_int, blocklengths: *const c_int, displacements: *const isize, types: *const MpiHandle, newtype: *mut MpiHandle) -> c_int
                => mpi_local();
            MPI_Type_commit Mpi Meta generated (datatype: *mut MpiHandle) -> c_int => mpi_local();
            MPI_Type_free Mpi Meta generated (datatype: *mut MpiHandle) -> c_int => mpi_local();

            // ---- MPI-IO -------------------------------------------------------------------
            MPI_File_open MpiIo Open generated (comm: MpiHandle, filename: *const c_char, amode: c_int, info: MpiHandle, file: *mut MpiHandle) -> c_int
                => mpi_file_open(comm, filename, amode, file);
            MPI_File_close MpiIo Close custom;
            MPI_File_write_at MpiIo Write generated (file: MpiHandle, offset: MpiOffset, buf: *const c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_write_at_all MpiIo Write generated (file: MpiHandle, offset: MpiOffset, buf: *const c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_read_at MpiIo Read generated (file: MpiHandle, offset: MpiOffset, buf: *mut c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_read_at_all MpiIo Read generated (file: MpiHandle, offset: MpiOffset, buf: *mut c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_write MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_read MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_write_all MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_read_all MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_delete MpiIo Meta generated (filename: *const c_char, info: MpiHandle) -> c_int
                => mpi_file_delete(filename);
            // The length in `aux`, so a replay sets it.
            MPI_File_set_size MpiIo Meta generated (file: MpiHandle, size: MpiOffset) -> c_int => mpi_file_length(file, size);
            MPI_File_preallocate MpiIo Meta generated (file: MpiHandle, size: MpiOffset) -> c_int => mpi_file_length(file, size);
            MPI_File_get_size MpiIo Stat generated (file: MpiHandle, size: *mut MpiOffset) -> c_int => mpi_file_status(file);
            // The offset in `aux`, the whence in `request`, so a replay seeks alike.
            MPI_File_seek MpiIo Seek generated (file: MpiHandle, offset: MpiOffset, whence: c_int) -> c_int => mpi_file_seek(file, offset, whence);
            // Collective: every rank moves the shared file pointer together.
            MPI_File_seek_shared MpiIo Seek generated (file: MpiHandle, offset: MpiOffset, whence: c_int) -> c_int => mpi_file_seek(file, offset, whence);
            MPI_File_write_shared MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_read_shared MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_write_ordered MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_read_ordered MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle, status: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_iwrite_at MpiIo Write generated (file: MpiHandle, offset: MpiOffset, buf: *const c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_iread_at MpiIo Read generated (file: MpiHandle, offset: MpiOffset, buf: *mut c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_iwrite MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_iread MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_write_at_all_begin MpiIo Write generated (file: MpiHandle, offset: MpiOffset, buf: *const c_void, count: c_int, datatype: MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_write_at_all_end MpiIo Completion generated (file: MpiHandle, buf: *const c_void, status: MpiHandle) -> c_int
                => mpi_file_status(file);
            MPI_File_write_all_begin MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_write_all_end MpiIo Completion generated (file: MpiHandle, buf: *const c_void, status: MpiHandle) -> c_int
                => mpi_file_status(file);
            MPI_File_read_at_all_begin MpiIo Read generated (file: MpiHandle, offset: MpiOffset, buf: *mut c_void, count: c_int, datatype: MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_read_at_all_end MpiIo Completion generated (file: MpiHandle, buf: *mut c_void, status: MpiHandle) -> c_int
                => mpi_file_status(file);
            MPI_File_read_all_begin MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_read_all_end MpiIo Completion generated (file: MpiHandle, buf: *mut c_void, status: MpiHandle) -> c_int
                => mpi_file_status(file);
            MPI_File_write_ordered_begin MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_write_ordered_end MpiIo Completion generated (file: MpiHandle, buf: *const c_void, status: MpiHandle) -> c_int
                => mpi_file_status(file);
            MPI_File_read_ordered_begin MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_read_ordered_end MpiIo Completion generated (file: MpiHandle, buf: *mut c_void, status: MpiHandle) -> c_int
                => mpi_file_status(file);
            MPI_File_iwrite_all MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_iread_all MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_iwrite_at_all MpiIo Write generated (file: MpiHandle, offset: MpiOffset, buf: *const c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_iread_at_all MpiIo Read generated (file: MpiHandle, offset: MpiOffset, buf: *mut c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, offset, count, datatype);
            MPI_File_iwrite_shared MpiIo Write generated (file: MpiHandle, buf: *const c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_iread_shared MpiIo Read generated (file: MpiHandle, buf: *mut c_void, count: c_int, datatype: MpiHandle, request: *mut MpiHandle) -> c_int
                => mpi_file_transfer(file, -1, count, datatype);
            MPI_File_sync MpiIo Sync generated (file: MpiHandle) -> c_int => mpi_file_status(file);
            MPI_File_set_view MpiIo Meta generated (file: MpiHandle, displacement: MpiOffset, etype: MpiHandle, filetype: MpiHandle, representation: *const c_char, info: MpiHandle) -> c_int
                => mpi_file_status(file);

            // ---- MPI from Fortran (gfortran's names; Open MPI's Fortran layer calls PMPI_*
            // directly, so the C hooks never see these calls). All arguments by reference.
            mpi_init_  Process Lifecycle custom;
            mpi_finalize_ Process Lifecycle custom;
            mpi_send_  Mpi PointToPoint generated (buf: *const c_void, count: *const c_int, datatype: *const c_int, dest: *const c_int, tag: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, dest, tag, comm, ierror);
            mpi_recv_  Mpi PointToPoint generated (buf: *mut c_void, count: *const c_int, datatype: *const c_int, source: *const c_int, tag: *const c_int, comm: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, source, tag, comm, ierror);
            mpi_ssend_ Mpi PointToPoint generated (buf: *const c_void, count: *const c_int, datatype: *const c_int, dest: *const c_int, tag: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, dest, tag, comm, ierror);
            mpi_isend_ Mpi PointToPoint generated (buf: *const c_void, count: *const c_int, datatype: *const c_int, dest: *const c_int, tag: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, dest, tag, comm, ierror);
            mpi_irecv_ Mpi PointToPoint generated (buf: *mut c_void, count: *const c_int, datatype: *const c_int, source: *const c_int, tag: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, source, tag, comm, ierror);
            mpi_sendrecv_ Mpi PointToPoint generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, dest: *const c_int, sendtag: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, source: *const c_int, recvtag: *const c_int, comm: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(sendcount, sendtype, dest, sendtag, comm, ierror);
            mpi_wait_  Mpi Completion generated (request: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(std::ptr::null(), ierror);
            mpi_waitall_ Mpi Completion generated (count: *const c_int, requests: *mut c_int, statuses: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(count, ierror);
            mpi_gather_ Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            mpi_scatter_ Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(recvcount, recvtype, comm, ierror);
            mpi_allgather_ Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            mpi_alltoall_ Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            // Fortran MPI-IO: file handles are Fortran integers (the binding to a file is
            // kept under that number), strings come with their length as a hidden argument.
            mpi_file_open_ MpiIo Open generated (comm: *const c_int, filename: *const c_char, amode: *const c_int, info: *const c_int, file: *mut c_int, ierror: *mut c_int, filename_length: size_t) -> ()
                => fortran_file_open(comm, filename, filename_length, amode, file, ierror);
            mpi_file_close_ MpiIo Close custom;
            mpi_file_write_at_ MpiIo Write generated (file: *const c_int, offset: *const MpiOffset, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            mpi_file_read_at_ MpiIo Read generated (file: *const c_int, offset: *const MpiOffset, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            mpi_file_write_at_all_ MpiIo Write generated (file: *const c_int, offset: *const MpiOffset, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            mpi_file_read_at_all_ MpiIo Read generated (file: *const c_int, offset: *const MpiOffset, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            mpi_file_write_ MpiIo Write generated (file: *const c_int, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            mpi_file_read_ MpiIo Read generated (file: *const c_int, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            mpi_file_write_all_ MpiIo Write generated (file: *const c_int, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            mpi_file_read_all_ MpiIo Read generated (file: *const c_int, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            mpi_file_set_view_ MpiIo Meta generated (file: *const c_int, displacement: *const MpiOffset, etype: *const c_int, filetype: *const c_int, representation: *const c_char, info: *const c_int, ierror: *mut c_int, representation_length: size_t) -> ()
                => fortran_file_status(file, ierror);
            mpi_file_sync_ MpiIo Sync generated (file: *const c_int, ierror: *mut c_int) -> ()
                => fortran_file_status(file, ierror);
            mpi_barrier_ Mpi Collective generated (comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(std::ptr::null(), std::ptr::null(), comm, ierror);
            mpi_bcast_ Mpi Collective generated (buffer: *mut c_void, count: *const c_int, datatype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            mpi_allreduce_ Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            mpi_reduce_ Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);

            mpi_probe_ Mpi PointToPoint generated (source: *const c_int, tag: *const c_int, comm: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(std::ptr::null(), std::ptr::null(), source, tag, comm, ierror);
            mpi_iprobe_ Mpi PointToPoint generated (source: *const c_int, tag: *const c_int, comm: *const c_int, flag: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(std::ptr::null(), std::ptr::null(), source, tag, comm, ierror);
            mpi_test_ Mpi Completion generated (request: *mut c_int, flag: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(std::ptr::null(), ierror);
            mpi_testall_ Mpi Completion generated (count: *const c_int, requests: *mut c_int, flag: *mut c_int, statuses: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(count, ierror);
            mpi_waitany_ Mpi Completion generated (count: *const c_int, requests: *mut c_int, index: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(count, ierror);
            mpi_waitsome_ Mpi Completion generated (incount: *const c_int, requests: *mut c_int, outcount: *mut c_int, indices: *mut c_int, statuses: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(incount, ierror);
            mpi_ibarrier_ Mpi Collective generated (comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_collective(std::ptr::null(), std::ptr::null(), comm, ierror);
            mpi_ibcast_ Mpi Collective generated (buffer: *mut c_void, count: *const c_int, datatype: *const c_int, root: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            mpi_iallreduce_ Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            mpi_scan_ Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            mpi_exscan_ Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            mpi_gatherv_ Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            mpi_scatterv_ Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(recvcount, recvtype, comm, ierror);
            mpi_allgatherv_ Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            mpi_alltoallv_ Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective_per_peer(sendcounts, sendtype, comm, ierror);
            mpi_reduce_scatter_ Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective_per_peer(recvcounts, datatype, comm, ierror);
            mpi_file_write_shared_ MpiIo Write generated (file: *const c_int, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            mpi_file_read_shared_ MpiIo Read generated (file: *const c_int, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            mpi_file_iwrite_at_ MpiIo Write generated (file: *const c_int, offset: *const MpiOffset, buf: *const c_void, count: *const c_int, datatype: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            mpi_file_iread_at_ MpiIo Read generated (file: *const c_int, offset: *const MpiOffset, buf: *mut c_void, count: *const c_int, datatype: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            mpi_file_seek_ MpiIo Seek generated (file: *const c_int, offset: *const MpiOffset, whence: *const c_int, ierror: *mut c_int) -> ()
                => fortran_file_seek(file, offset, whence, ierror);
            mpi_file_get_size_ MpiIo Stat generated (file: *const c_int, size: *mut MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_status(file, ierror);
            mpi_file_set_size_ MpiIo Meta generated (file: *const c_int, size: *const MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_length(file, size, ierror);
            mpi_file_preallocate_ MpiIo Meta generated (file: *const c_int, size: *const MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_length(file, size, ierror);
            mpi_file_delete_ MpiIo Meta generated (filename: *const c_char, info: *const c_int, ierror: *mut c_int, filename_length: size_t) -> ()
                => fortran_file_delete(filename, filename_length, ierror);
            // Open MPI's `mpi_f08` module calls these (`mpi_send_f08_` → `ompi_send_f`), the
            // functions the `mpi_x_` names above alias: the same arguments, by reference.
            // Traces report them under the `mpi_x_` name.
            ompi_init_f Process Lifecycle custom;
            ompi_finalize_f Process Lifecycle custom;
            ompi_file_close_f MpiIo Close custom;
            ompi_send_f Mpi PointToPoint generated (buf: *const c_void, count: *const c_int, datatype: *const c_int, dest: *const c_int, tag: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, dest, tag, comm, ierror);
            ompi_recv_f Mpi PointToPoint generated (buf: *mut c_void, count: *const c_int, datatype: *const c_int, source: *const c_int, tag: *const c_int, comm: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, source, tag, comm, ierror);
            ompi_ssend_f Mpi PointToPoint generated (buf: *const c_void, count: *const c_int, datatype: *const c_int, dest: *const c_int, tag: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, dest, tag, comm, ierror);
            ompi_isend_f Mpi PointToPoint generated (buf: *const c_void, count: *const c_int, datatype: *const c_int, dest: *const c_int, tag: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, dest, tag, comm, ierror);
            ompi_irecv_f Mpi PointToPoint generated (buf: *mut c_void, count: *const c_int, datatype: *const c_int, source: *const c_int, tag: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(count, datatype, source, tag, comm, ierror);
            ompi_sendrecv_f Mpi PointToPoint generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, dest: *const c_int, sendtag: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, source: *const c_int, recvtag: *const c_int, comm: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(sendcount, sendtype, dest, sendtag, comm, ierror);
            ompi_wait_f Mpi Completion generated (request: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(std::ptr::null(), ierror);
            ompi_waitall_f Mpi Completion generated (count: *const c_int, requests: *mut c_int, statuses: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(count, ierror);
            ompi_gather_f Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            ompi_scatter_f Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(recvcount, recvtype, comm, ierror);
            ompi_allgather_f Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            ompi_alltoall_f Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            ompi_file_open_f MpiIo Open generated (comm: *const c_int, filename: *const c_char, amode: *const c_int, info: *const c_int, file: *mut c_int, ierror: *mut c_int, filename_length: size_t) -> ()
                => fortran_file_open(comm, filename, filename_length, amode, file, ierror);
            ompi_file_write_at_f MpiIo Write generated (file: *const c_int, offset: *const MpiOffset, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            ompi_file_read_at_f MpiIo Read generated (file: *const c_int, offset: *const MpiOffset, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            ompi_file_write_at_all_f MpiIo Write generated (file: *const c_int, offset: *const MpiOffset, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            ompi_file_read_at_all_f MpiIo Read generated (file: *const c_int, offset: *const MpiOffset, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            ompi_file_write_f MpiIo Write generated (file: *const c_int, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            ompi_file_read_f MpiIo Read generated (file: *const c_int, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            ompi_file_write_all_f MpiIo Write generated (file: *const c_int, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            ompi_file_read_all_f MpiIo Read generated (file: *const c_int, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            ompi_file_set_view_f MpiIo Meta generated (file: *const c_int, displacement: *const MpiOffset, etype: *const c_int, filetype: *const c_int, representation: *const c_char, info: *const c_int, ierror: *mut c_int, representation_length: size_t) -> ()
                => fortran_file_status(file, ierror);
            ompi_file_sync_f MpiIo Sync generated (file: *const c_int, ierror: *mut c_int) -> ()
                => fortran_file_status(file, ierror);
            ompi_barrier_f Mpi Collective generated (comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(std::ptr::null(), std::ptr::null(), comm, ierror);
            ompi_bcast_f Mpi Collective generated (buffer: *mut c_void, count: *const c_int, datatype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            ompi_allreduce_f Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            ompi_reduce_f Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            ompi_probe_f Mpi PointToPoint generated (source: *const c_int, tag: *const c_int, comm: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(std::ptr::null(), std::ptr::null(), source, tag, comm, ierror);
            ompi_iprobe_f Mpi PointToPoint generated (source: *const c_int, tag: *const c_int, comm: *const c_int, flag: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(std::ptr::null(), std::ptr::null(), source, tag, comm, ierror);
            ompi_test_f Mpi Completion generated (request: *mut c_int, flag: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(std::ptr::null(), ierror);
            ompi_testall_f Mpi Completion generated (count: *const c_int, requests: *mut c_int, flag: *mut c_int, statuses: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(count, ierror);
            ompi_waitany_f Mpi Completion generated (count: *const c_int, requests: *mut c_int, index: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(count, ierror);
            ompi_waitsome_f Mpi Completion generated (incount: *const c_int, requests: *mut c_int, outcount: *mut c_int, indices: *mut c_int, statuses: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(incount, ierror);
            ompi_ibarrier_f Mpi Collective generated (comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_collective(std::ptr::null(), std::ptr::null(), comm, ierror);
            ompi_ibcast_f Mpi Collective generated (buffer: *mut c_void, count: *const c_int, datatype: *const c_int, root: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            ompi_iallreduce_f Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            ompi_scan_f Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            ompi_exscan_f Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, count: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(count, datatype, comm, ierror);
            ompi_gatherv_f Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            ompi_scatterv_f Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcount: *const c_int, recvtype: *const c_int, root: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(recvcount, recvtype, comm, ierror);
            ompi_allgatherv_f Mpi Collective generated (sendbuf: *const c_void, sendcount: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(sendcount, sendtype, comm, ierror);
            ompi_alltoallv_f Mpi Collective generated (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective_per_peer(sendcounts, sendtype, comm, ierror);
            ompi_reduce_scatter_f Mpi Collective generated (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: *const c_int, op: *const c_int, comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective_per_peer(recvcounts, datatype, comm, ierror);
            ompi_file_write_shared_f MpiIo Write generated (file: *const c_int, buf: *const c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            ompi_file_read_shared_f MpiIo Read generated (file: *const c_int, buf: *mut c_void, count: *const c_int, datatype: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, std::ptr::null(), count, datatype, ierror);
            ompi_file_iwrite_at_f MpiIo Write generated (file: *const c_int, offset: *const MpiOffset, buf: *const c_void, count: *const c_int, datatype: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            ompi_file_iread_at_f MpiIo Read generated (file: *const c_int, offset: *const MpiOffset, buf: *mut c_void, count: *const c_int, datatype: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_file_transfer(file, offset, count, datatype, ierror);
            ompi_file_seek_f MpiIo Seek generated (file: *const c_int, offset: *const MpiOffset, whence: *const c_int, ierror: *mut c_int) -> ()
                => fortran_file_seek(file, offset, whence, ierror);
            ompi_file_get_size_f MpiIo Stat generated (file: *const c_int, size: *mut MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_status(file, ierror);
            ompi_file_set_size_f MpiIo Meta generated (file: *const c_int, size: *const MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_length(file, size, ierror);
            ompi_file_preallocate_f MpiIo Meta generated (file: *const c_int, size: *const MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_length(file, size, ierror);
            ompi_file_delete_f MpiIo Meta generated (filename: *const c_char, info: *const c_int, ierror: *mut c_int, filename_length: size_t) -> ()
                => fortran_file_delete(filename, filename_length, ierror);
            // Open MPI's `mpi_f08` module reaches the calls with a LOGICAL argument through
            // the profiling names of the `use mpi` layer instead; reported as `mpi_x_`.
            pmpi_iprobe_ Mpi PointToPoint generated (source: *const c_int, tag: *const c_int, comm: *const c_int, flag: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(std::ptr::null(), std::ptr::null(), source, tag, comm, ierror);
            pmpi_test_ Mpi Completion generated (request: *mut c_int, flag: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(std::ptr::null(), ierror);
            pmpi_testall_ Mpi Completion generated (count: *const c_int, requests: *mut c_int, flag: *mut c_int, statuses: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_completion(count, ierror);
            // `use mpi_f08` start and end (MPICH's reach PMPI_Init/PMPI_Finalize directly).
            mpi_init_f08_ Process Lifecycle custom;
            mpi_finalize_f08_ Process Lifecycle custom;
            // `use mpi_f08` calls that MPICH's module sends straight to PMPI (those with a
            // buffer reach the C entry points); the same arguments, by reference.
            mpi_wait_f08_ Mpi Completion custom;
            mpi_waitall_f08_ Mpi Completion custom;
            mpi_barrier_f08_ Mpi Collective generated (comm: *const c_int, ierror: *mut c_int) -> ()
                => fortran_collective(std::ptr::null(), std::ptr::null(), comm, ierror);
            mpi_file_open_f08_ MpiIo Open generated (comm: *const c_int, filename: *const c_char, amode: *const c_int, info: *const c_int, file: *mut c_int, ierror: *mut c_int, filename_length: size_t) -> ()
                => fortran_file_open(comm, filename, filename_length, amode, file, ierror);
            mpi_file_close_f08_ MpiIo Close custom;
            mpi_probe_f08_ Mpi PointToPoint generated (source: *const c_int, tag: *const c_int, comm: *const c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(std::ptr::null(), std::ptr::null(), source, tag, comm, ierror);
            mpi_iprobe_f08_ Mpi PointToPoint generated (source: *const c_int, tag: *const c_int, comm: *const c_int, flag: *mut c_int, status: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_message(std::ptr::null(), std::ptr::null(), source, tag, comm, ierror);
            mpi_test_f08_ Mpi Completion custom;
            mpi_testall_f08_ Mpi Completion custom;
            mpi_waitany_f08_ Mpi Completion custom;
            mpi_waitsome_f08_ Mpi Completion custom;
            mpi_ibarrier_f08_ Mpi Collective generated (comm: *const c_int, request: *mut c_int, ierror: *mut c_int) -> ()
                => fortran_collective(std::ptr::null(), std::ptr::null(), comm, ierror);
            mpi_file_seek_f08_ MpiIo Seek generated (file: *const c_int, offset: *const MpiOffset, whence: *const c_int, ierror: *mut c_int) -> ()
                => fortran_file_seek(file, offset, whence, ierror);
            mpi_file_get_size_f08_ MpiIo Stat generated (file: *const c_int, size: *mut MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_status(file, ierror);
            mpi_file_set_size_f08_ MpiIo Meta generated (file: *const c_int, size: *const MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_length(file, size, ierror);
            mpi_file_preallocate_f08_ MpiIo Meta generated (file: *const c_int, size: *const MpiOffset, ierror: *mut c_int) -> ()
                => fortran_file_length(file, size, ierror);
            mpi_file_delete_f08_ MpiIo Meta generated (filename: *const c_char, info: *const c_int, ierror: *mut c_int, filename_length: size_t) -> ()
                => fortran_file_delete(filename, filename_length, ierror);
            mpi_file_set_view_f08_ MpiIo Meta generated (file: *const c_int, displacement: *const MpiOffset, etype: *const c_int, filetype: *const c_int, representation: *const c_char, info: *const c_int, ierror: *mut c_int, representation_length: size_t) -> ()
                => fortran_file_status(file, ierror);
            mpi_file_sync_f08_ MpiIo Sync generated (file: *const c_int, ierror: *mut c_int) -> ()
                => fortran_file_status(file, ierror);

            // ---- process lifecycle --------------------------------------------------------
            __libc_start_main Process Lifecycle custom;
            MPI_Init   Process Lifecycle custom;
            MPI_Init_thread Process Lifecycle custom;
            MPI_Finalize Process Lifecycle custom;
            _exit      Process Lifecycle custom;
            _Exit      Process Lifecycle custom;

            // ---- phases the program marks (include/cairn.h; no real function: the
            // tracer defines them, the program references them weakly) --------------------
            cairn_phase_begin Process Lifecycle custom;
            cairn_phase_end   Process Lifecycle custom;
        }
    };
}

/// The layer of the I/O stack a call belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    Posix,
    Stdio,
    Mpi,
    MpiIo,
    Process,
}

impl Layer {
    pub const ALL: [Layer; 5] = [
        Layer::Posix,
        Layer::Stdio,
        Layer::Mpi,
        Layer::MpiIo,
        Layer::Process,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Layer::Posix => "posix",
            Layer::Stdio => "stdio",
            Layer::Mpi => "mpi",
            Layer::MpiIo => "mpiio",
            Layer::Process => "process",
        }
    }

    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|layer| layer.name() == name)
    }
}

/// What an MPI point-to-point event's request and result mean ([`Call::message_bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageBytes {
    /// A send: the bytes sent.
    Sent,
    /// A blocking receive: the capacity posted (request) and the bytes its status says
    /// arrived (result). Calls made through Open MPI's Fortran bindings keep the capacity
    /// as the result (their status is not read): an estimate, flagged `FORTRAN`.
    Received,
    /// A non-blocking receive's posting: the capacity (request); nothing arrived yet
    /// (result 0; the capacity again from Open MPI's Fortran bindings, an estimate).
    Posted,
    /// A completion (`MPI_Wait*`, `MPI_Test*`): the bytes of the posted receives it
    /// finished (result).
    Completed,
    /// A probe: no bytes.
    Probed,
}

/// What a call does, independent of its layer; analyses count by class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallClass {
    Open,
    Close,
    Read,
    Write,
    Seek,
    Sync,
    Flush,
    Stat,
    Meta,
    Dup,
    Mmap,
    Lifecycle,
    /// MPI point-to-point communication (send, receive, blocking or not).
    PointToPoint,
    /// MPI collective communication.
    Collective,
    /// Completion of non-blocking MPI requests (wait, test).
    Completion,
}

impl CallClass {
    pub const ALL: [CallClass; 15] = [
        CallClass::Open,
        CallClass::Close,
        CallClass::Read,
        CallClass::Write,
        CallClass::Seek,
        CallClass::Sync,
        CallClass::Flush,
        CallClass::Stat,
        CallClass::Meta,
        CallClass::Dup,
        CallClass::Mmap,
        CallClass::Lifecycle,
        CallClass::PointToPoint,
        CallClass::Collective,
        CallClass::Completion,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CallClass::Open => "open",
            CallClass::Close => "close",
            CallClass::Read => "read",
            CallClass::Write => "write",
            CallClass::Seek => "seek",
            CallClass::Sync => "sync",
            CallClass::Flush => "flush",
            CallClass::Stat => "stat",
            CallClass::Meta => "meta",
            CallClass::Dup => "dup",
            CallClass::Mmap => "mmap",
            CallClass::Lifecycle => "lifecycle",
            CallClass::PointToPoint => "point-to-point",
            CallClass::Collective => "collective",
            CallClass::Completion => "completion",
        }
    }

    pub fn from_name(name: &str) -> Option<CallClass> {
        CallClass::ALL
            .into_iter()
            .find(|class| class.name() == name)
    }

    /// Calls whose result is a number of bytes moved (file data or messages).
    pub fn moves_data(self) -> bool {
        matches!(
            self,
            CallClass::Read | CallClass::Write | CallClass::PointToPoint | CallClass::Collective
        )
    }

    /// Calls whose time Darshan counts as metadata time (open, close, seek, stat, sync...).
    pub fn is_metadata(self) -> bool {
        !matches!(
            self,
            CallClass::Read | CallClass::Write | CallClass::Lifecycle
        )
    }
}

macro_rules! row_is_share {
    (share) => {
        true
    };
    ($kind:ident) => {
        false
    };
}

macro_rules! define_call_enum {
    ($( $name:ident $layer:ident $class:ident $kind:ident
        $( ( $($arg:ident : $ty:ty),* ) -> $ret:ty => $adapter:ident ( $($adapter_arg:expr),* ) )? ; )*) => {
        /// Every hooked call of this build. The discriminant is only an in-memory id: files
        /// store call names (see the CALLS section in docs/FORMAT.md).
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Call {
            $( $name, )*
        }

        impl Call {
            /// All calls, in table order (`Call::ALL[c as usize] == c`).
            pub const ALL: &'static [Call] = &[ $( Call::$name, )* ];

            /// The symbol name of the call, e.g. `"pwrite64"`.
            pub const fn name(self) -> &'static str {
                match self { $( Call::$name => stringify!($name), )* }
            }

            #[inline(always)]
            pub const fn layer(self) -> Layer {
                match self { $( Call::$name => Layer::$layer, )* }
            }

            #[inline(always)]
            pub const fn class(self) -> CallClass {
                match self { $( Call::$name => CallClass::$class, )* }
            }

            /// A `share` row: part of another call's work (the destination of a
            /// `copy_file_range`, the bytes `aio_return` collected), never a call of its own.
            #[inline(always)]
            pub const fn is_share(self) -> bool {
                match self { $( Call::$name => row_is_share!($kind), )* }
            }
        }
    };
}

for_each_call!(define_call_enum);

const fn ends_with(name: &[u8], suffix: &[u8]) -> bool {
    if suffix.len() > name.len() {
        return false;
    }
    let mut index = 0;
    while index < suffix.len() {
        if name[name.len() - suffix.len() + index] != suffix[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// How a Fortran program's MPI call reaches the library, which decides which hook traces it
/// (each call must be traced exactly once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FortranBinding {
    /// A C call.
    None,
    /// `use mpi` / `mpif.h` (gfortran's `mpi_send_`): Open MPI's call `PMPI_*` (traced
    /// here), MPICH's the C `MPI_*` entry points (traced there).
    Legacy,
    /// Open MPI's functions behind both modules (`ompi_send_f`), which `use mpi_f08`
    /// reaches through the dynamic linker.
    OpenMpiInner,
    /// `use mpi_f08` names without a buffer argument (`mpi_wait_f08_`): Open MPI's call
    /// `ompi_wait_f` (traced there), MPICH's `PMPI_*` (traced here).
    F08,
}

impl Call {
    /// Which Fortran binding this entry point belongs to, if any (see [`FortranBinding`]).
    /// Constant for a known call, so a hook's check of it costs nothing.
    pub const fn fortran_binding(self) -> FortranBinding {
        let name = self.name().as_bytes();
        let length = name.len();
        if ends_with(name, b"_f08_") {
            FortranBinding::F08
        } else if length > 7 && name[0] == b'o' && name[1] == b'm' && ends_with(name, b"_f") {
            FortranBinding::OpenMpiInner
        } else if name[length - 1] == b'_' {
            FortranBinding::Legacy
        } else {
            FortranBinding::None
        }
    }

    /// The name traces report for a call: a Fortran binding's (`mpi_x_`, Open MPI's
    /// `ompi_x_f` and `pmpi_x_`, the `mpi_x_f08_` names behind `use mpi_f08`) is the MPI
    /// call it stands for, `MPI_X` as C spells it — the binding is noted on each event
    /// ([`crate::event_flags::FORTRAN`]) — so a call has one name whatever the language
    /// and the module it came through. Other names are their own.
    pub fn reported_name(name: &str) -> std::borrow::Cow<'_, str> {
        let stem = name
            .strip_prefix("ompi_")
            .and_then(|rest| rest.strip_suffix("_f"))
            .or_else(|| name.strip_prefix("mpi_")?.strip_suffix("_f08_"))
            .or_else(|| name.strip_prefix("pmpi_")?.strip_suffix('_'))
            .or_else(|| name.strip_prefix("mpi_")?.strip_suffix('_'));
        let c_call = stem.and_then(|stem| {
            Call::ALL.iter().find(|call| {
                let c_name = call.name();
                c_name.len() == stem.len() + 4
                    && c_name.starts_with("MPI_")
                    && c_name[4..].eq_ignore_ascii_case(stem)
            })
        });
        match (stem, c_call) {
            (_, Some(call)) => call.name().into(),
            (Some(stem), None) => format!("mpi_{stem}_").into(),
            (None, None) => name.into(),
        }
    }

    /// An AIO completion (`aio_read_done`, `aio_write_done`): its `aux` holds the latency
    /// from submission to collection in nanoseconds (in the segment, the submission's
    /// clock reading), which analyses count as its I/O time, as Darshan does.
    pub const fn latency_in_aux(self) -> bool {
        matches!(self, Call::aio_read_done | Call::aio_write_done)
    }

    /// What the bytes of an MPI message event are (see [`MessageBytes`]); `None` for calls
    /// that are not point-to-point messages or their completions.
    pub fn message_bytes(self) -> Option<MessageBytes> {
        match (self.layer(), self.class()) {
            (Layer::Mpi, CallClass::Completion) => Some(MessageBytes::Completed),
            (Layer::Mpi, CallClass::PointToPoint) => {
                let name = Call::reported_name(self.name());
                Some(match &*name {
                    "MPI_Recv"
                    | "MPI_Mrecv"
                    | "MPI_Sendrecv_received"
                    | "MPI_Sendrecv_replace_received" => MessageBytes::Received,
                    "MPI_Irecv" | "MPI_Imrecv" => MessageBytes::Posted,
                    "MPI_Probe" | "MPI_Iprobe" | "MPI_Mprobe" | "MPI_Improbe" => {
                        MessageBytes::Probed
                    }
                    _ => MessageBytes::Sent,
                })
            }
            _ => None,
        }
    }

    pub fn from_id(id: u16) -> Option<Call> {
        Call::ALL.get(id as usize).copied()
    }

    pub fn from_name(name: &str) -> Option<Call> {
        Call::ALL.iter().copied().find(|call| call.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_table_order() {
        for (index, call) in Call::ALL.iter().enumerate() {
            assert_eq!(*call as usize, index);
            assert_eq!(Call::from_id(index as u16), Some(*call));
            assert_eq!(Call::from_name(call.name()), Some(*call));
        }
    }

    #[test]
    fn fortran_bindings_are_reported_as_the_mpi_call() {
        for (name, reported) in [
            ("mpi_file_write_at_all_", "MPI_File_write_at_all"),
            ("ompi_isend_f", "MPI_Isend"),
            ("pmpi_file_open_", "MPI_File_open"),
            ("mpi_waitall_f08_", "MPI_Waitall"),
            ("MPI_Send", "MPI_Send"),
            ("pwrite64", "pwrite64"),
        ] {
            assert_eq!(Call::reported_name(name), reported, "{name}");
        }
        // Every Fortran row names a C call of the same layer and class.
        for call in Call::ALL {
            if call.fortran_binding() != FortranBinding::None {
                let reported = Call::reported_name(call.name());
                let c_call = Call::from_name(&reported)
                    .unwrap_or_else(|| panic!("{} reported as {reported}", call.name()));
                assert_eq!(
                    (c_call.layer(), c_call.class()),
                    (call.layer(), call.class())
                );
            }
        }
    }

    #[test]
    fn classes_and_layers() {
        assert_eq!(Call::pwrite64.class(), CallClass::Write);
        assert_eq!(Call::fwrite.layer(), Layer::Stdio);
        assert_eq!(Call::__xstat.class(), CallClass::Stat);
        assert_eq!(Call::from_name("no_such_call"), None);
        let names: std::collections::HashSet<_> = Call::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Call::ALL.len(), "call names are unique");
    }
}

//! `cairn replay`: re-issues a trace's POSIX and stdio calls — the same calls, sizes,
//! offsets, whence and file names — from the compressed trace, so a job's I/O can be run
//! again without the application: on a new machine, or against another file-system setting.
//!
//! Design decisions:
//! - Streaming: each thread's events are expanded as they are replayed (`Trace::expand`),
//!   so memory stays flat whatever the loops' iteration counts.
//! - Files live under a scratch root (`--root`): the recorded absolute path `/a/b` becomes
//!   `ROOT/a/b`, directories made as needed, so a replay never touches the original files.
//! - One forked child per recorded process, one thread per recorded thread, descriptors and
//!   streams mapped from the recorded numbers to the replay's own. Processes are replayed
//!   one after the other (v1: not concurrently as recorded).
//! - Each call is issued no earlier than it came in the run, counted from the process's
//!   start (a folded loop's calls at its mean gap): the compute time between calls and the
//!   order of calls across threads are reproduced. `no_compute` issues each thread's calls
//!   as fast as it can: for single-threaded processes (across threads, a descriptor one
//!   thread closes after the others used it may then be closed too early).
//! - Calls the replayer does not know (MPI, memory maps, directory streams...) are counted
//!   and reported, never silently dropped.
//!
//! The one place with `unsafe`: the libc calls that re-issue the I/O (FFI).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_model::Event;
use cairn_trace::{Stream, Trace};

/// How to replay.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Where the recorded paths are recreated.
    pub root: PathBuf,
    /// Skip the compute time between calls.
    pub no_compute: bool,
    /// Print each call instead of issuing it.
    pub dry_run: bool,
}

/// What the replay did, for the fidelity report.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Fidelity {
    pub processes: u64,
    pub threads: u64,
    pub calls_replayed: u64,
    /// Per layer (`posix`, `stdio`), replayed against recorded.
    pub layers: BTreeMap<String, LayerFidelity>,
    /// Per process, in the trace's order.
    pub process_list: Vec<ProcessFidelity>,
    /// Calls of the trace the replayer does not re-issue, by name.
    pub not_replayed: BTreeMap<String, u64>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub recorded_bytes_read: u64,
    pub recorded_bytes_written: u64,
    /// Calls on descriptors the process did not open in the trace (standard streams, a
    /// forked child's copies of its parent's), issued on /dev/null (v1: a forked child is
    /// replayed after its parent, not with its descriptors).
    pub inherited_calls: u64,
    /// Wall time of the replay and of the recorded run (first start to last end), seconds.
    pub replay_seconds: f64,
    pub recorded_seconds: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("replay: {0}")]
    Io(#[from] std::io::Error),
    #[error("replay: a replayed process failed ({0})")]
    Child(String),
}

/// One layer's calls and bytes, replayed against recorded.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct LayerFidelity {
    pub calls: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub recorded_bytes_read: u64,
    pub recorded_bytes_written: u64,
}

impl LayerFidelity {
    fn add(&mut self, other: &LayerFidelity) {
        self.calls += other.calls;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.recorded_bytes_read += other.recorded_bytes_read;
        self.recorded_bytes_written += other.recorded_bytes_written;
    }
}

/// One replayed process: its wall time against the recorded one.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ProcessFidelity {
    pub pid: u32,
    pub calls: u64,
    pub replay_seconds: f64,
    pub recorded_seconds: f64,
}

/// Counters a thread (then a process) adds to; a forked child sends them back as JSON.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Counts {
    layers: BTreeMap<String, LayerFidelity>,
    inherited: u64,
    not_replayed: BTreeMap<String, u64>,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        for (layer, figures) in &other.layers {
            self.layers.entry(layer.clone()).or_default().add(figures);
        }
        self.inherited += other.inherited;
        for (name, count) in &other.not_replayed {
            *self.not_replayed.entry(name.clone()).or_default() += count;
        }
    }
}

/// The replayed process's descriptors and streams, by their recorded numbers: the ones a
/// thread opened itself first (a number another thread reuses after a close must not be
/// taken for it), then those of the whole process (a file the main thread opened and
/// workers write).
#[derive(Default)]
struct Handles {
    fds: HashMap<u64, i32>,
    streams: HashMap<u64, usize>,
}

/// What the threads of a replayed process share, partly known before they start (one
/// walk over the process's events, which costs what the replay's own walk costs).
struct Shared {
    handles: Mutex<Handles>,
    /// Handles (recorded numbers) some thread of the process opens: a thread using one
    /// another thread has not opened yet waits for it. Any other handle was inherited
    /// (standard streams): the replay writes those to /dev/null.
    opened: HashSet<u64>,
    /// Per thread: the handles it uses without having opened them (a worker writing the
    /// file its main thread opened).
    borrowed: Vec<HashSet<u64>>,
    /// Per thread: its replay is over.
    done: Vec<AtomicBool>,
    null: i32,
}

impl Shared {
    fn plan(trace: &Trace, streams: &[&Stream]) -> Shared {
        let mut opened = HashSet::new();
        let mut borrowed = Vec::new();
        for stream in streams {
            let mut own: HashSet<u64> = HashSet::new();
            let mut uses: HashSet<u64> = HashSet::new();
            trace.expand(stream, |event| {
                let name = trace.calls[event.call as usize].name.as_str();
                if opens(name) {
                    let handle = if name.starts_with("fopen") {
                        event.handle
                    } else {
                        event.result as u64
                    };
                    own.insert(handle);
                    opened.insert(handle);
                } else if uses_handle(name) && !own.contains(&event.handle) {
                    uses.insert(event.handle);
                }
            });
            borrowed.push(uses);
        }
        // SAFETY: a NUL-terminated path.
        let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        Shared {
            handles: Mutex::new(Handles::default()),
            opened,
            done: streams.iter().map(|_| AtomicBool::new(false)).collect(),
            borrowed,
            null,
        }
    }
}

fn opens(name: &str) -> bool {
    matches!(
        name,
        "open"
            | "open64"
            | "openat"
            | "openat64"
            | "__open_2"
            | "__open64_2"
            | "creat"
            | "creat64"
            | "fopen"
            | "fopen64"
    )
}

/// Calls that name an open descriptor or stream (the ones [`issue`] looks up).
fn uses_handle(name: &str) -> bool {
    !opens(name)
        && !matches!(
            name,
            "stat"
                | "stat64"
                | "__xstat"
                | "__xstat64"
                | "statx"
                | "lstat"
                | "lstat64"
                | "__lxstat"
                | "__lxstat64"
                | "access"
                | "faccessat"
                | "unlink"
                | "unlinkat"
                | "mkdir"
                | "rename"
                | "renameat"
                | "renameat2"
        )
}

/// A thread's own handles, and the process's.
struct ThreadHandles<'a> {
    own: Handles,
    shared: &'a Shared,
    /// This thread's index among the process's.
    me: usize,
    /// Calls on descriptors the process inherited (standard streams; a forked child's
    /// copies of its parent's), sent to /dev/null.
    inherited: std::cell::Cell<u64>,
}

/// How long a call waits for a descriptor another thread has not opened yet.
const WAIT_FOR_HANDLE: Duration = Duration::from_secs(2);
/// How long a close waits for the other threads that use the handle.
const WAIT_FOR_BORROWERS: Duration = Duration::from_secs(60);

impl ThreadHandles<'_> {
    fn fd(&self, recorded: u64) -> i32 {
        if let Some(fd) = self.own.fds.get(&recorded) {
            return *fd;
        }
        if !self.shared.opened.contains(&recorded) {
            self.inherited.set(self.inherited.get() + 1);
            return self.shared.null;
        }
        let waited = Instant::now();
        loop {
            if let Some(fd) = self
                .shared
                .handles
                .lock()
                .expect("not poisoned")
                .fds
                .get(&recorded)
            {
                return *fd;
            }
            if waited.elapsed() > WAIT_FOR_HANDLE {
                return -1;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn stream(&self, recorded: u64) -> Option<usize> {
        if let Some(stream) = self.own.streams.get(&recorded) {
            return Some(*stream);
        }
        let waited = Instant::now();
        loop {
            if let Some(stream) = self
                .shared
                .handles
                .lock()
                .expect("not poisoned")
                .streams
                .get(&recorded)
            {
                return Some(*stream);
            }
            if waited.elapsed() > WAIT_FOR_HANDLE {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn opened(&mut self, recorded: u64, fd: i32) {
        self.own.fds.insert(recorded, fd);
        self.shared
            .handles
            .lock()
            .expect("not poisoned")
            .fds
            .insert(recorded, fd);
    }

    fn opened_stream(&mut self, recorded: u64, stream: usize) {
        self.own.streams.insert(recorded, stream);
        self.shared
            .handles
            .lock()
            .expect("not poisoned")
            .streams
            .insert(recorded, stream);
    }

    /// Before a handle is closed: until the other threads that use it without having
    /// opened it are done (their uses came before the close in the run).
    fn wait_for_borrowers(&self, recorded: u64) {
        let waited = Instant::now();
        for (index, borrowed) in self.shared.borrowed.iter().enumerate() {
            if index == self.me || !borrowed.contains(&recorded) {
                continue;
            }
            while !self.shared.done[index].load(Ordering::Acquire)
                && waited.elapsed() < WAIT_FOR_BORROWERS
            {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// The descriptor to close, forgotten.
    fn closed(&mut self, recorded: u64) -> i32 {
        self.wait_for_borrowers(recorded);
        let fd = self.fd(recorded);
        self.own.fds.remove(&recorded);
        let mut process = self.shared.handles.lock().expect("not poisoned");
        if process.fds.get(&recorded) == Some(&fd) {
            process.fds.remove(&recorded);
        }
        fd
    }

    fn closed_stream(&mut self, recorded: u64) -> Option<usize> {
        self.wait_for_borrowers(recorded);
        let stream = self.stream(recorded)?;
        self.own.streams.remove(&recorded);
        let mut process = self.shared.handles.lock().expect("not poisoned");
        if process.streams.get(&recorded) == Some(&stream) {
            process.streams.remove(&recorded);
        }
        Some(stream)
    }
}

/// Replays `trace`; the report of what was done.
pub fn replay(trace: &Trace, options: &Options) -> Result<Fidelity, ReplayError> {
    std::fs::create_dir_all(&options.root)?;
    let started = Instant::now();
    let mut fidelity = Fidelity::default();
    let first = trace
        .streams
        .iter()
        .map(|s| s.first_start)
        .min()
        .unwrap_or(0);
    let last = trace.streams.iter().map(|s| s.last_end).max().unwrap_or(0);
    fidelity.recorded_seconds = last.saturating_sub(first) as f64 / 1e9;
    for (index, process) in trace.processes.iter().enumerate() {
        let streams: Vec<&Stream> = trace
            .streams
            .iter()
            .filter(|stream| stream.process as usize == index)
            .collect();
        if streams.is_empty() {
            continue;
        }
        fidelity.processes += 1;
        fidelity.threads += streams.len() as u64;
        let process_started = Instant::now();
        let counts = if options.dry_run {
            replay_process(trace, &streams, options)
        } else {
            in_child(|| replay_process(trace, &streams, options))?
        };
        let mut figures = LayerFidelity::default();
        for layer in counts.layers.values() {
            figures.add(layer);
        }
        let recorded_start = streams.iter().map(|s| s.first_start).min().unwrap_or(0);
        let recorded_end = streams.iter().map(|s| s.last_end).max().unwrap_or(0);
        fidelity.process_list.push(ProcessFidelity {
            pid: process.pid,
            calls: figures.calls,
            replay_seconds: process_started.elapsed().as_secs_f64(),
            recorded_seconds: recorded_end.saturating_sub(recorded_start) as f64 / 1e9,
        });
        fidelity.calls_replayed += figures.calls;
        fidelity.bytes_read += figures.bytes_read;
        fidelity.bytes_written += figures.bytes_written;
        fidelity.recorded_bytes_read += figures.recorded_bytes_read;
        fidelity.recorded_bytes_written += figures.recorded_bytes_written;
        fidelity.inherited_calls += counts.inherited;
        for (name, count) in &counts.not_replayed {
            *fidelity.not_replayed.entry(name.clone()).or_default() += count;
        }
        for (layer, replayed) in &counts.layers {
            fidelity
                .layers
                .entry(layer.clone())
                .or_default()
                .add(replayed);
        }
    }
    fidelity.replay_seconds = started.elapsed().as_secs_f64();
    Ok(fidelity)
}

/// Runs `work` in a forked child (a process of its own, as recorded), its counters sent
/// back through a pipe as JSON.
fn in_child(work: impl FnOnce() -> Counts) -> Result<Counts, ReplayError> {
    let mut pipe = [0i32; 2];
    // SAFETY: a two-element array for pipe(2).
    if unsafe { libc::pipe(pipe.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: the replayer has no other thread here (threads are made in the child), so the
    // child may run Rust code freely.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if pid == 0 {
        let counts = work();
        let message = serde_json::to_string(&counts).expect("counts serialise");
        // SAFETY: the pipe's write end; the child then leaves without running the parent's
        // exit handlers.
        unsafe {
            libc::write(pipe[1], message.as_ptr().cast(), message.len());
            libc::_exit(0);
        }
    }
    // SAFETY: the parent's copy of the write end, closed so the read sees the child's end.
    unsafe { libc::close(pipe[1]) };
    let mut text = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        // SAFETY: reading into a buffer of its own size.
        let read = unsafe { libc::read(pipe[0], buffer.as_mut_ptr().cast(), buffer.len()) };
        if read <= 0 {
            break;
        }
        text.extend_from_slice(&buffer[..read as usize]);
    }
    let mut status = 0;
    // SAFETY: the read end, done; the child just forked.
    unsafe {
        libc::close(pipe[0]);
        libc::waitpid(pid, &mut status, 0);
    }
    serde_json::from_slice(&text).map_err(|_| ReplayError::Child(format!("wait status {status}")))
}

/// One process: a thread per recorded thread, sharing the descriptor maps.
fn replay_process(trace: &Trace, streams: &[&Stream], options: &Options) -> Counts {
    let shared = Shared::plan(trace, streams);
    let total = Mutex::new(Counts::default());
    let first = streams.iter().map(|s| s.first_start).min().unwrap_or(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for (me, stream) in streams.iter().enumerate() {
            let (shared, total) = (&shared, &total);
            scope.spawn(move || {
                let clock = Clock { started, first };
                let handles = ThreadHandles {
                    own: Handles::default(),
                    shared,
                    me,
                    inherited: std::cell::Cell::new(0),
                };
                let counts = replay_thread(trace, stream, options, handles, clock);
                shared.done[me].store(true, Ordering::Release);
                total.lock().expect("not poisoned").add(&counts);
            });
        }
    });
    // SAFETY: the /dev/null descriptor the plan opened, no longer used.
    unsafe { libc::close(shared.null) };
    total.into_inner().expect("not poisoned")
}

/// The process's replay clock: when its replay started, and when its first recorded event
/// did (ns since the run's start).
#[derive(Clone, Copy)]
struct Clock {
    started: Instant,
    first: u64,
}

fn replay_thread(
    trace: &Trace,
    stream: &Stream,
    options: &Options,
    mut handles: ThreadHandles,
    clock: Clock,
) -> Counts {
    let mut counts = Counts::default();
    let mut buffer: Vec<u8> = Vec::new();
    trace.expand(stream, |event| {
        // Each call no earlier than it came in the run, from the process's start: the
        // compute time between calls is reproduced, and so is the order of calls across
        // threads (a file one thread closes after the others wrote it).
        if !options.no_compute && !options.dry_run {
            let due = Duration::from_nanos(event.start.saturating_sub(clock.first));
            if let Some(wait) = due.checked_sub(clock.started.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        let info = &trace.calls[event.call as usize];
        let name = info.name.as_str();
        let layer = counts
            .layers
            .entry(
                info.layer()
                    .map_or("other", |layer| layer.name())
                    .to_string(),
            )
            .or_default();
        let path = event
            .file
            .map(|file| mapped(&options.root, &trace.files[file as usize].path));
        match info.class() {
            Some(cairn_model::CallClass::Read) => layer.recorded_bytes_read += event.bytes(),
            Some(cairn_model::CallClass::Write) => layer.recorded_bytes_written += event.bytes(),
            _ => {}
        }
        if options.dry_run {
            println!(
                "{name} {} request {} offset {} aux {} result {}",
                path.as_deref()
                    .map_or(String::new(), |p| p.display().to_string()),
                event.request,
                event.offset,
                event.aux,
                event.result
            );
            layer.calls += 1;
            return;
        }
        let target = (name == "rename" || name == "renameat" || name == "renameat2")
            .then(|| stream.file(event.aux))
            .flatten()
            .map(|file| mapped(&options.root, &trace.files[file as usize].path));
        match issue(
            name,
            &event,
            path.as_deref(),
            target.as_deref(),
            &mut handles,
            &mut buffer,
        ) {
            Some(Moved::Read(bytes)) => layer.bytes_read += bytes,
            Some(Moved::Written(bytes)) => layer.bytes_written += bytes,
            Some(Moved::Nothing) => {}
            None => {
                *counts.not_replayed.entry(name.to_string()).or_default() += 1;
                return;
            }
        }
        layer.calls += 1;
    });
    counts.inherited = handles.inherited.get();
    counts
}

/// `/a/b` recorded becomes `ROOT/a/b`.
fn mapped(root: &Path, path: &[u8]) -> PathBuf {
    let relative = path.strip_prefix(b"/").unwrap_or(path);
    root.join(std::ffi::OsStr::from_bytes(relative))
}

enum Moved {
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
fn issue(
    name: &str,
    event: &Event,
    path: Option<&Path>,
    target: Option<&Path>,
    handles: &mut ThreadHandles,
    buffer: &mut Vec<u8>,
) -> Option<Moved> {
    let c_path = || path.and_then(|p| CString::new(p.as_os_str().as_bytes()).ok());
    let size = event.request as usize;
    if buffer.len() < size {
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
                let _ = std::fs::create_dir_all(parent);
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
        "mkdir" => {
            let path = c_path()?;
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
                let _ = std::fs::create_dir_all(parent);
            }
            let stream =
                unsafe { libc::fopen(path.as_ptr(), stdio_mode(event.request as i32).as_ptr()) };
            if !stream.is_null() {
                handles.opened_stream(event.handle, stream as usize);
            }
            Some(Moved::Nothing)
        }
        _ => issue_stdio(name, event, handles, buffer, size),
    }
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

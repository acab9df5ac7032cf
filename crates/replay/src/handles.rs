//! The replayed process's descriptors and streams: recorded numbers mapped to the replay's
//! own, shared between the process's threads (a file one thread opens and others write).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use std::ops::ControlFlow;

use cairn_trace::{Stream, Trace};

/// The replayed process's descriptors and streams, by their recorded numbers: the ones a
/// thread opened itself first (a number another thread reuses after a close must not be
/// taken for it), then those of the whole process (a file the main thread opened and
/// workers write).
#[derive(Default)]
pub(crate) struct Handles {
    pub(crate) fds: HashMap<u64, i32>,
    pub(crate) streams: HashMap<u64, usize>,
}

/// What the threads of a replayed process share, partly known before they start (one
/// walk over the process's events, which costs what the replay's own walk costs).
pub(crate) struct Shared {
    pub(crate) handles: Mutex<Handles>,
    /// Handles (recorded numbers) some thread of the process opens: a thread using one
    /// another thread has not opened yet waits for it. Any other handle was inherited
    /// (standard streams): the replay writes those to /dev/null.
    pub(crate) opened: HashSet<u64>,
    /// Per thread: the handles it uses without having opened them (a worker writing the
    /// file its main thread opened).
    pub(crate) borrowed: Vec<HashSet<u64>>,
    /// Per thread: its replay is over.
    pub(crate) done: Vec<AtomicBool>,
    pub(crate) null: i32,
    /// Descriptors the process started with, by file ([`Shared::plan`]).
    pub(crate) inherited: HashMap<u32, i32>,
}

impl Shared {
    /// `inherited`: the descriptors the process starts with (a forked child's copies of
    /// its parent's, an exec successor's), by the file they are open on (handles are
    /// numbered per process in the trace, so a child's number for its parent's descriptor
    /// is not the parent's).
    pub(crate) fn plan(trace: &Trace, streams: &[&Stream], inherited: HashMap<u32, i32>) -> Shared {
        let mut opened = HashSet::new();
        let mut borrowed = Vec::new();
        for stream in streams {
            let mut own: HashSet<u64> = HashSet::new();
            let mut uses: HashSet<u64> = HashSet::new();
            // One walk of the folded structure, not of the events: what is opened and
            // used first is found in the same order.
            let _ = crate::each_leaf_run::<()>(stream.nodes(), &mut |leaf| {
                let key = &leaf.key;
                let info = trace.calls.get(key.call as usize);
                let Some(info) = info.filter(|_| !crate::made_by_libraries(key.flags)) else {
                    return ControlFlow::Continue(());
                };
                let name = info.name.as_str();
                if opens(name) {
                    let handle = if name.starts_with("fopen") {
                        key.handle
                    } else {
                        key.result() as u64
                    };
                    own.insert(handle);
                    opened.insert(handle);
                } else if uses_handle(name) && !own.contains(&key.handle) {
                    uses.insert(key.handle);
                }
                ControlFlow::Continue(())
            });
            borrowed.push(uses);
        }
        // SAFETY: a NUL-terminated path.
        let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        Shared {
            handles: Mutex::new(Handles::default()),
            inherited,
            opened,
            done: streams.iter().map(|_| AtomicBool::new(false)).collect(),
            borrowed,
            null,
        }
    }
}

pub(crate) fn opens(name: &str) -> bool {
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
                | "rmdir"
                | "rename"
                | "renameat"
                | "renameat2"
        )
}

/// A thread's own handles, and the process's.
pub(crate) struct ThreadHandles<'a> {
    pub(crate) own: Handles,
    /// The file each of its descriptors is open on, kept by a thread whose process forks
    /// or execs (the descriptors it passes on are known by file).
    pub(crate) files: Option<HashMap<u64, u32>>,
    pub(crate) shared: &'a Shared,
    /// This thread's index among the process's.
    pub(crate) me: usize,
    /// Calls on descriptors the process inherited (standard streams; a forked child's
    /// copies of its parent's), sent to /dev/null.
    pub(crate) inherited: std::cell::Cell<u64>,
}

/// How long a call waits for a descriptor another thread has not opened yet.
const WAIT_FOR_HANDLE: Duration = Duration::from_secs(2);
/// How long a close waits for the other threads that use the handle.
const WAIT_FOR_BORROWERS: Duration = Duration::from_secs(60);

impl ThreadHandles<'_> {
    /// Before a call on `recorded` naming `file`: a descriptor of this process's it did
    /// not open takes the one it inherited on that file; a thread that passes descriptors
    /// on notes the file of each.
    pub(crate) fn note(&mut self, recorded: u64, file: u32, opened_by_it: bool) {
        if let Some(files) = self.files.as_mut() {
            files.insert(recorded, file);
        }
        // A number the process opens later may be an inherited descriptor's before (an
        // exec successor closes the descriptor it was given, and its next open gets the
        // same number): only a number mapped now is the process's own.
        if opened_by_it || self.shared.inherited.is_empty() || self.own.fds.contains_key(&recorded)
        {
            return;
        }
        if let Some(fd) = self.shared.inherited.get(&file) {
            self.own.fds.insert(recorded, *fd);
        }
    }

    /// Whether [`ThreadHandles::note`] has anything to do for this thread.
    pub(crate) fn passes_on_or_inherits(&self) -> bool {
        self.files.is_some() || !self.shared.inherited.is_empty()
    }

    /// The descriptors open now, by file (for a forked child or an exec successor).
    pub(crate) fn open_files(&self) -> HashMap<u32, i32> {
        let Some(files) = self.files.as_ref() else {
            return HashMap::new();
        };
        let shared = self.shared.handles.lock().expect("not poisoned");
        files
            .iter()
            .filter_map(|(recorded, file)| {
                let fd = self.own.fds.get(recorded).or(shared.fds.get(recorded))?;
                Some((*file, *fd))
            })
            .collect()
    }

    pub(crate) fn fd(&self, recorded: u64) -> i32 {
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
            // No other thread will open it.
            if self.shared.done.len() == 1 || waited.elapsed() > WAIT_FOR_HANDLE {
                return -1;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    pub(crate) fn stream(&self, recorded: u64) -> Option<usize> {
        if let Some(stream) = self.own.streams.get(&recorded) {
            return Some(*stream);
        }
        if !self.shared.opened.contains(&recorded) {
            return None;
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
            if self.shared.done.len() == 1 || waited.elapsed() > WAIT_FOR_HANDLE {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Whether a recorded stream is one the process inherited (`stdout`): counted, and
    /// left alone (the replay's own standard streams are not the program's).
    pub(crate) fn inherited_stream(&self, recorded: u64) -> bool {
        let inherited =
            !self.own.streams.contains_key(&recorded) && !self.shared.opened.contains(&recorded);
        if inherited {
            self.inherited.set(self.inherited.get() + 1);
        }
        inherited
    }

    pub(crate) fn opened(&mut self, recorded: u64, fd: i32) {
        self.own.fds.insert(recorded, fd);
        self.shared
            .handles
            .lock()
            .expect("not poisoned")
            .fds
            .insert(recorded, fd);
    }

    pub(crate) fn opened_stream(&mut self, recorded: u64, stream: usize) {
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
    pub(crate) fn wait_for_borrowers(&self, recorded: u64) {
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
    pub(crate) fn closed(&mut self, recorded: u64) -> i32 {
        self.wait_for_borrowers(recorded);
        let fd = self.fd(recorded);
        self.own.fds.remove(&recorded);
        let mut process = self.shared.handles.lock().expect("not poisoned");
        if process.fds.get(&recorded) == Some(&fd) {
            process.fds.remove(&recorded);
        }
        fd
    }

    pub(crate) fn closed_stream(&mut self, recorded: u64) -> Option<usize> {
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

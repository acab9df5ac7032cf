//! The replay's processes, as the run had them: a forked child starts from its parent's
//! replay at the recorded moment, with the parent's descriptors (the file offsets they
//! share, the file a child writes through its parent's descriptor); an image an `exec`
//! replaced continues in the same replayed process with the descriptors still open.
//!
//! Design decisions:
//! - A child is forked when its parent's replay reaches the first call that came after
//!   the child started (process start times are exact; a folded loop's calls are placed at
//!   their mean gap). Only a parent of one thread that makes no MPI call forks (a fork
//!   after `MPI_Init`, or from one of several threads, is not something to reproduce by
//!   guess): other children are replayed after their parent, as before, and their calls
//!   on inherited descriptors go to /dev/null (counted).
//! - Each replayed process reports its own figures and those of the processes it forked
//!   through a pipe, as JSON, when it ends; the parent collects them at its end.
//! - An `exec` successor that makes MPI calls is not chained (the MPI process is replayed
//!   where MPI was started).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

use std::ops::ControlFlow;

use cairn_model::Layer;
use cairn_trace::{Process, Stream, Trace};

use crate::handles::{Handles, Shared, ThreadHandles};
use crate::{mpi, replay_thread, scale, Clock, Counts, Fidelity, LayerFidelity, Options};
use crate::{ProcessFidelity, ReplayError};

/// Replays the processes `select` picks, one after the other; with an MPI `job`, the one
/// that makes MPI calls is replayed in this process (MPI is started here), the others in
/// forked children. Forked children and exec successors a replayed process takes care of
/// are replayed by it.
pub(crate) fn replay_processes(
    trace: &Trace,
    options: &Options,
    select: impl Fn(&Process) -> bool,
    job: Option<&mpi::Job>,
    scaling: Option<scale::Scaling>,
) -> Result<Fidelity, ReplayError> {
    let started = Instant::now();
    let mut fidelity = Fidelity::default();
    let mut mpi_process_replayed = false;
    // Each process's streams, found once (every question below is about processes).
    let mut streams: Vec<Vec<&Stream>> = vec![Vec::new(); trace.processes.len()];
    for stream in &trace.streams {
        if let Some(mine) = streams.get_mut(stream.process as usize) {
            mine.push(stream);
        }
    }
    let mpi_calls: Vec<bool> = streams
        .iter()
        .map(|streams| makes_mpi_calls(trace, streams))
        .collect();
    let family = Family {
        trace,
        streams: &streams,
        mpi_calls: &mpi_calls,
        dry_run: options.dry_run,
    };
    for (index, process) in trace.processes.iter().enumerate() {
        if !select(process) || family.replayed_by_another(index, &select) {
            continue;
        }
        if streams[index].is_empty() {
            continue;
        }
        let in_mpi = job.is_some() && !mpi_process_replayed && mpi_calls[index];
        let figures = if options.dry_run {
            family.replay_image(index, options, None, scaling, HashMap::new())
        } else if in_mpi {
            mpi_process_replayed = true;
            family.replay_image(index, options, job, scaling, HashMap::new())
        } else {
            in_child(|| family.replay_image(index, options, None, scaling, HashMap::new()))?
        };
        fidelity.absorb(&figures);
    }
    fidelity.replay_seconds = started.elapsed().as_secs_f64();
    Ok(fidelity)
}

/// How the trace's processes are related, for the replay.
#[derive(Clone, Copy)]
struct Family<'a> {
    trace: &'a Trace,
    /// Per process: its threads' streams.
    streams: &'a [Vec<&'a Stream>],
    /// Per process: whether it makes MPI calls.
    mpi_calls: &'a [bool],
    dry_run: bool,
}

impl Family<'_> {
    /// Whether a replayed process forks its children when the run did.
    fn forks_its_children(&self, index: usize) -> bool {
        !self.dry_run && !self.mpi_calls[index] && self.streams[index].len() == 1
    }

    /// Whether another process's replay replays this one (it forks it, or this image
    /// continues it after an exec).
    fn replayed_by_another(&self, index: usize, select: &impl Fn(&Process) -> bool) -> bool {
        let process = &self.trace.processes[index];
        let selected = |other: Option<u32>| {
            other.is_some_and(|other| select(&self.trace.processes[other as usize]))
        };
        if process.forked && selected(process.parent) {
            return process
                .parent
                .is_some_and(|parent| self.forks_its_children(parent as usize));
        }
        // An image without events is not replayed, so it cannot continue into this one.
        let replayed =
            |other: u32| selected(Some(other)) && !self.streams[other as usize].is_empty();
        !self.dry_run && process.exec_of.is_some_and(replayed) && !self.mpi_calls[index]
    }

    /// The children the process `index` forked, by recorded start.
    fn children(&self, index: usize) -> Vec<(u64, usize)> {
        if !self.forks_its_children(index) {
            return Vec::new();
        }
        let mut children: Vec<(u64, usize)> = self
            .trace
            .processes
            .iter()
            .enumerate()
            .filter(|(_, p)| p.forked && p.parent == Some(index as u32))
            .map(|(child, p)| (p.start, child))
            .collect();
        children.sort();
        children
    }

    /// Replays the image `index` (with `inherited` descriptors: recorded number → the
    /// replay's), the children it forked, and the images that continued it after an exec.
    fn replay_image(
        &self,
        index: usize,
        options: &Options,
        job: Option<&mpi::Job>,
        scaling: Option<scale::Scaling>,
        inherited: HashMap<u32, i32>,
    ) -> Fidelity {
        let trace = self.trace;
        let streams = &self.streams[index];
        let started = Instant::now();
        let successor = (!self.dry_run)
            .then(|| {
                trace
                    .processes
                    .iter()
                    .position(|p| p.exec_of == Some(index as u32))
            })
            .flatten()
            .filter(|next| !self.mpi_calls[*next]);
        let due = self.children(index);
        let mut forks = Forks {
            family: *self,
            options,
            scaling,
            passes_on: !due.is_empty() || successor.is_some(),
            due,
            next: 0,
            running: Vec::new(),
        };
        let (counts, open) =
            replay_process(trace, streams, options, job, scaling, inherited, &mut forks);
        let mut fidelity = process_fidelity(trace, index, streams, counts, started);
        for child in forks.collect() {
            fidelity.absorb(&child);
        }
        if let Some(next) = successor {
            fidelity.absorb(&self.replay_image(next, options, None, scaling, open));
        }
        fidelity
    }
}

/// The children a replayed process forks as it goes.
pub(crate) struct Forks<'a> {
    family: Family<'a>,
    options: &'a Options,
    scaling: Option<scale::Scaling>,
    /// (recorded start, process index), in order.
    due: Vec<(u64, usize)>,
    /// Whether the process passes descriptors on (children to fork, an exec successor):
    /// only then do its calls note the file of each descriptor.
    passes_on: bool,
    next: usize,
    /// Forked and not collected yet: (pid, read end of its report's pipe).
    running: Vec<(i32, i32)>,
}

impl Forks<'_> {
    /// Forks the children that started before `at` (ns since the run's start), each with
    /// the descriptors `handles` has open.
    pub(crate) fn before(&mut self, at: u64, handles: &ThreadHandles) {
        while let Some(&(start, child)) = self.due.get(self.next) {
            if start > at {
                return;
            }
            self.next += 1;
            let open = handles.open_files();
            let (family, options, scaling) = (self.family, self.options, self.scaling);
            match spawn(move || family.replay_image(child, options, None, scaling, open)) {
                Ok(running) => self.running.push(running),
                Err(error) => eprintln!("cairn: replay: could not fork a child: {error}"),
            }
        }
    }

    /// Waits for every forked child: their reports.
    fn collect(mut self) -> Vec<Fidelity> {
        std::mem::take(&mut self.running)
            .into_iter()
            .filter_map(|(pid, read)| finish(pid, read).ok())
            .collect()
    }
}

/// One process's figures.
fn process_fidelity(
    trace: &Trace,
    index: usize,
    streams: &[&Stream],
    counts: Counts,
    started: Instant,
) -> Fidelity {
    let process = &trace.processes[index];
    let mut figures = LayerFidelity::default();
    for layer in counts.layers.values() {
        figures.add(layer);
    }
    let recorded_start = streams.iter().map(|s| s.first_start).min().unwrap_or(0);
    let recorded_end = streams.iter().map(|s| s.last_end).max().unwrap_or(0);
    Fidelity {
        processes: 1,
        threads: streams.len() as u64,
        calls_replayed: figures.calls,
        bytes_read: figures.bytes_read,
        bytes_written: figures.bytes_written,
        recorded_bytes_read: figures.recorded_bytes_read,
        recorded_bytes_written: figures.recorded_bytes_written,
        inherited_calls: counts.inherited,
        left_to_libraries: counts.left_to_libraries,
        library_calls: counts.library_calls,
        unfinished_requests: counts.unfinished,
        not_replayed: counts.not_replayed,
        layers: counts.layers,
        process_list: vec![ProcessFidelity {
            pid: process.pid,
            rank: process.rank,
            calls: figures.calls,
            replay_seconds: started.elapsed().as_secs_f64(),
            recorded_seconds: recorded_end.saturating_sub(recorded_start) as f64 / 1e9,
        }],
        ..Fidelity::default()
    }
}

/// Whether any of a process's threads made an MPI call.
pub(crate) fn makes_mpi_calls(trace: &Trace, streams: &[&Stream]) -> bool {
    streams
        .iter()
        .any(|stream| first_mpi_call(trace, stream).is_some())
}

/// The name of a thread's first MPI call, if it made one: one walk of the folded
/// structure (a loop's body once), which stops there.
pub(crate) fn first_mpi_call<'a>(trace: &'a Trace, stream: &Stream) -> Option<&'a str> {
    let found = crate::each_leaf_run(stream.nodes(), &mut |leaf| match trace
        .calls
        .get(leaf.key.call as usize)
    {
        Some(info)
            if matches!(info.layer(), Some(Layer::Mpi | Layer::MpiIo))
                || info.name.starts_with("MPI_Init") =>
        {
            ControlFlow::Break(info.name.as_str())
        }
        _ => ControlFlow::Continue(()),
    });
    found.break_value()
}

/// Runs `work` in a forked child (a process of its own, as recorded) and waits for its
/// report.
fn in_child(work: impl FnOnce() -> Fidelity) -> Result<Fidelity, ReplayError> {
    let (pid, read) = spawn(work)?;
    finish(pid, read)
}

/// Forks a child that runs `work` and sends its report back through a pipe as JSON:
/// (pid, the pipe's read end).
fn spawn(work: impl FnOnce() -> Fidelity) -> Result<(i32, i32), ReplayError> {
    let mut pipe = [0i32; 2];
    // SAFETY: a two-element array for pipe(2).
    if unsafe { libc::pipe(pipe.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: the replayer forks only from a process of one thread (a process of several
    // is replayed with threads made after its forks: see `Family::forks_its_children`),
    // so the child may run Rust code freely.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if pid == 0 {
        // SAFETY: the parent's read end, not the child's to keep.
        unsafe { libc::close(pipe[0]) };
        let report = work();
        let message = serde_json::to_string(&report).expect("reports serialise");
        let mut written = 0;
        while written < message.len() {
            // SAFETY: writing the rest of the message to the pipe's write end.
            let wrote = unsafe {
                libc::write(
                    pipe[1],
                    message[written..].as_ptr().cast(),
                    message.len() - written,
                )
            };
            if wrote <= 0 {
                break;
            }
            written += wrote as usize;
        }
        // SAFETY: the child leaves without running the parent's exit handlers.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent's copy of the write end, closed so the read sees the child's end.
    unsafe { libc::close(pipe[1]) };
    Ok((pid, pipe[0]))
}

/// A forked child's report, once it has ended.
fn finish(pid: i32, read: i32) -> Result<Fidelity, ReplayError> {
    let mut text = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        // SAFETY: reading into a buffer of its own size.
        let got = unsafe { libc::read(read, buffer.as_mut_ptr().cast(), buffer.len()) };
        if got <= 0 {
            break;
        }
        text.extend_from_slice(&buffer[..got as usize]);
    }
    let mut status = 0;
    // SAFETY: the read end, done; the child this process forked.
    unsafe {
        libc::close(read);
        libc::waitpid(pid, &mut status, 0);
    }
    serde_json::from_slice(&text).map_err(|_| ReplayError::Child(format!("wait status {status}")))
}

/// One process: a thread per recorded thread, sharing the descriptor maps (a process of
/// one thread is replayed on the calling thread, which is MPI's main thread), starting
/// with the descriptors it `inherited` open. What it did, and the descriptors it left
/// open (an exec successor's).
fn replay_process(
    trace: &Trace,
    streams: &[&Stream],
    options: &Options,
    job: Option<&mpi::Job>,
    scaling: Option<scale::Scaling>,
    inherited: HashMap<u32, i32>,
    forks: &mut Forks,
) -> (Counts, HashMap<u32, i32>) {
    let shared = Shared::plan(trace, streams, inherited);
    let total = Mutex::new(Counts::default());
    let first = streams.iter().map(|s| s.first_start).min().unwrap_or(0);
    // A process of one thread that has children or an exec successor passes its
    // descriptors on.
    let passes_on = streams.len() == 1 && job.is_none() && forks.passes_on;
    let forks = Mutex::new(forks);
    let left_open = Mutex::new(HashMap::new());
    let run = |me: usize, stream: &Stream| {
        let clock = Clock { first };
        let handles = ThreadHandles {
            own: Handles::default(),
            files: passes_on.then(HashMap::new),
            shared: &shared,
            me,
            inherited: std::cell::Cell::new(0),
        };
        // Only a process of one thread forks (its only thread, here).
        let mut forks = (streams.len() == 1).then(|| forks.lock().expect("not poisoned"));
        let (counts, open) = replay_thread(
            trace,
            stream,
            options,
            handles,
            clock,
            job,
            scaling,
            forks.as_deref_mut().map(|forks| &mut **forks),
        );
        shared.done[me].store(true, Ordering::Release);
        total.lock().expect("not poisoned").add(&counts);
        *left_open.lock().expect("not poisoned") = open;
    };
    if let [stream] = streams {
        run(0, stream);
    } else {
        std::thread::scope(|scope| {
            for (me, stream) in streams.iter().enumerate() {
                let run = &run;
                scope.spawn(move || run(me, stream));
            }
        });
    }
    // SAFETY: the /dev/null descriptor the plan opened, no longer used.
    unsafe { libc::close(shared.null) };
    let open = left_open.into_inner().expect("not poisoned");
    (total.into_inner().expect("not poisoned"), open)
}

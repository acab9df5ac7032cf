//! `cairn replay`: re-issues a trace's POSIX, stdio, MPI and MPI-IO calls — the same calls,
//! sizes, offsets, whence, peers, tags and file names — from the compressed trace, so a job's
//! I/O and communication can be run again without the application: on a new machine, or
//! against another file-system setting.
//!
//! Design decisions:
//! - Streaming: each thread's events are expanded as they are replayed (`Trace::expand`),
//!   so memory stays flat whatever the loops' iteration counts.
//! - Files live under a scratch root (`--root`): the recorded absolute path `/a/b` becomes
//!   `ROOT/a/b`, directories made as needed, so a replay never touches the original files.
//! - One forked child per recorded process, one thread per recorded thread, descriptors and
//!   streams mapped from the recorded numbers to the replay's own. A child is forked from
//!   its parent's replay when the run forked it, with the parent's descriptors; an exec
//!   successor continues in the same process ([`processes`]). Processes the run started
//!   otherwise are replayed one after the other.
//! - Compute time: before each call the thread owes the gap the run had before it (a
//!   folded loop's mean gap), less the tracer's own cost, which recorded gaps hold (the
//!   thread's smallest mean gap); a thread's first call is owed its offset from its
//!   process's start. What is owed is slept once it reaches 200 µs (a sleep costs tens of
//!   microseconds; oversleeping is paid back). The calls' own times are the replay's, so a
//!   faster or slower file system shows in the replay's wall (a schedule of absolute
//!   recorded times would hide a speed-up). Across threads, a thread waits for a
//!   descriptor another opens, and a close for the threads that use the descriptor.
//!   `no_compute` issues each thread's calls as fast as it can.
//! - A trace of an MPI job is replayed by `mpirun -np N cairn replay`: each rank replays its
//!   own rank's processes, the one that made MPI calls in the launched process itself (MPI
//!   started as the program started it), and rank 0 gathers the report ([`mpi`]).
//! - Calls an MPI library made itself (inside MPI-IO calls, `MPI_Init`, `MPI_Finalize`) are
//!   left to the replayed library, which makes its own.
//! - `--scale-ranks M` replays a trace of N ranks on M: a trace made for M ranks from the
//!   recorded one, each rank taking after the recorded rank in the same place ([`scale`]).
//! - Calls the replayer does not know (memory maps, directory streams, sub-communicators...)
//!   are counted and reported, never silently dropped.
//!
//! The places with `unsafe`: the libc and MPI calls that re-issue the I/O (FFI).

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use cairn_model::{event_flags, Layer};
use cairn_trace::{Stream, Trace};

mod handles;
mod mpi;
mod posix;
mod processes;
mod scale;

use handles::ThreadHandles;
use posix::{issue, mapped, Moved};

/// How to replay.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Where the recorded paths are recreated.
    pub root: PathBuf,
    /// Skip the compute time between calls.
    pub no_compute: bool,
    /// Print each call instead of issuing it.
    pub dry_run: bool,
    /// The MPI library to load (default: the one of the launcher that started the rank).
    pub mpi_library: Option<PathBuf>,
    /// Replay an MPI trace on this many ranks instead of the recorded number ([`scale`]).
    pub scale_ranks: Option<u32>,
    /// The seed of the draws from a trace's histograms (every rank must be given the
    /// same); `None`: the one every reader uses, so the replay issues the values `cairn
    /// dump --expand` and the exports show.
    pub seed: Option<u64>,
}

impl Options {
    fn seed(&self) -> u64 {
        self.seed.unwrap_or(cairn_compress::stream::EXPANSION_SEED)
    }
}

/// What the replay did, for the fidelity report.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Fidelity {
    /// MPI ranks replayed (0 for a trace without MPI).
    pub ranks: u64,
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
    /// Calls on descriptors the process did not open in the trace and was not given by a
    /// replayed parent or exec predecessor (standard streams; the copies a child of an MPI
    /// process or of a process of several threads has, such children being replayed
    /// after their parent): issued on /dev/null.
    pub inherited_calls: u64,
    /// Calls an MPI library made itself (inside MPI-IO calls, `MPI_Init`, `MPI_Finalize`):
    /// not re-issued, since the replayed MPI calls make their own.
    pub left_to_libraries: u64,
    /// Library calls (HDF5's `H5Dwrite`...): not re-issued themselves (the replay does not
    /// link the library), but through the MPI-IO, MPI and POSIX calls they made, which the
    /// trace holds and the replay issues.
    pub library_calls: u64,
    /// Non-blocking MPI-IO transfers of the replay still unfinished when their file was
    /// closed (the run's finished: something it did before them was not replayed): left
    /// to the library, never touched again.
    pub unfinished_requests: u64,
    /// The recorded rank count of a trace replayed on another (`--scale-ranks`); the
    /// recorded bytes are then what the scaled ranks' events ask for.
    pub scaled_from: Option<u32>,
    /// Files a scaled rank named as the recorded rank it takes after did (their names
    /// have no per-rank number to follow), so ranks share them.
    pub names_kept: u64,
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
    #[error("replay: {0}")]
    Mpi(String),
    #[error("replay: {0}")]
    Report(#[from] serde_json::Error),
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
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ProcessFidelity {
    pub pid: u32,
    /// The MPI rank the process was, if any.
    pub rank: Option<u32>,
    pub calls: u64,
    pub replay_seconds: f64,
    pub recorded_seconds: f64,
}

/// Counters a thread (then a process) adds to; a forked child sends them back as JSON.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Counts {
    layers: BTreeMap<String, LayerFidelity>,
    inherited: u64,
    left_to_libraries: u64,
    library_calls: u64,
    unfinished: u64,
    not_replayed: BTreeMap<String, u64>,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        for (layer, figures) in &other.layers {
            self.layers.entry(layer.clone()).or_default().add(figures);
        }
        self.inherited += other.inherited;
        self.left_to_libraries += other.left_to_libraries;
        self.library_calls += other.library_calls;
        self.unfinished += other.unfinished;
        for (name, count) in &other.not_replayed {
            *self.not_replayed.entry(name.clone()).or_default() += count;
        }
    }
}

/// Replays `trace`; the report of what was done. A trace of an MPI job is replayed by as
/// many ranks as it has (`mpirun -np N cairn replay`), each its own rank's processes; the
/// report is rank 0's (`None` on the other ranks).
pub fn replay(trace: &Trace, options: &Options) -> Result<Option<Fidelity>, ReplayError> {
    std::fs::create_dir_all(&options.root)?;
    let mut ranks = trace.processes.iter().filter_map(|p| p.rank).max();
    let scaled = match (options.scale_ranks, ranks) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(ReplayError::Mpi(
                "--scale-ranks: the trace is not of an MPI job".into(),
            ))
        }
        (Some(0), _) => return Err(ReplayError::Mpi("--scale-ranks: 0 ranks".into())),
        (Some(wanted), Some(last)) => {
            ranks = Some(wanted - 1);
            Some((
                scale::scaled(trace, last + 1, wanted)?,
                scale::Scaling {
                    recorded: last + 1,
                    ranks: wanted,
                },
            ))
        }
    };
    let (trace, scaling) = match &scaled {
        Some((scaled, scaling)) => (&scaled.trace, Some(*scaling)),
        None => (trace, None),
    };
    let mut fidelity = match ranks {
        Some(last) if !options.dry_run => match replay_ranks(trace, options, last + 1, scaling)? {
            Some(fidelity) => fidelity,
            None => return Ok(None),
        },
        _ => processes::replay_processes(trace, options, |_| true, None, scaling)?,
    };
    if let Some((scaled, scaling)) = &scaled {
        fidelity.scaled_from = Some(scaling.recorded);
        fidelity.names_kept = scaled.names_kept;
    }
    let first = trace
        .streams
        .iter()
        .map(|s| s.first_start)
        .min()
        .unwrap_or(0);
    let last = trace.streams.iter().map(|s| s.last_end).max().unwrap_or(0);
    fidelity.recorded_seconds = last.saturating_sub(first) as f64 / 1e9;
    Ok(Some(fidelity))
}

/// This rank's share of an MPI trace's replay: MPI started as the program started it, the
/// rank's processes replayed, the report gathered on rank 0.
fn replay_ranks(
    trace: &Trace,
    options: &Options,
    ranks: u32,
    scaling: Option<scale::Scaling>,
) -> Result<Option<Fidelity>, ReplayError> {
    match mpi::launched() {
        Some(size) if size == ranks => {}
        Some(size) => {
            return Err(ReplayError::Mpi(format!(
                "the trace has {ranks} MPI ranks, the replay was launched on {size} (--scale-ranks {size} replays it on {size})"
            )))
        }
        None => {
            return Err(ReplayError::Mpi(format!(
                "the trace has {ranks} MPI ranks: run `mpirun -np {ranks} cairn replay …` (or --dry-run)"
            )))
        }
    }
    let library = mpi::Mpi::load(options.mpi_library.as_deref())?;
    // The thread level the program asked for, or one that lets several threads call MPI.
    let mut calling_threads = std::collections::HashMap::<u32, usize>::new();
    let mut asked = false;
    for stream in &trace.streams {
        if trace.processes[stream.process as usize].rank.is_none() {
            continue;
        }
        if let Some(first) = processes::first_mpi_call(trace, stream) {
            asked |= first == "MPI_Init_thread";
            *calling_threads.entry(stream.process).or_default() += 1;
        }
    }
    let threaded = asked || calling_threads.values().any(|threads| *threads > 1);
    let (rank, size) = library.init(threaded);
    if let Some(Err(error)) = scaling
        .filter(|_| rank == 0)
        .map(|scaling| scaling.check_messages(trace, options.seed()))
    {
        eprintln!("cairn: {error}");
        library.abort(1)
    }
    let job = mpi::Job::plan(&library, rank, size, trace, scaling, options.seed());
    let started = Instant::now();
    let result = processes::replay_processes(
        trace,
        options,
        |p| p.rank == Some(rank as u32),
        Some(&job),
        scaling,
    );
    let mut fidelity = match result {
        Ok(fidelity) => fidelity,
        Err(error) => {
            eprintln!("cairn: rank {rank}: {error}");
            library.abort(1)
        }
    };
    fidelity.ranks = 1;
    fidelity.replay_seconds = started.elapsed().as_secs_f64();
    let report = library.gather_text(&serde_json::to_string(&fidelity)?, rank, size);
    library.finalize();
    let Some(reports) = report else {
        return Ok(None);
    };
    let mut total = Fidelity::default();
    for text in reports {
        total.absorb(&serde_json::from_str(&text)?);
    }
    Ok(Some(total))
}

impl Fidelity {
    /// Adds another process's or rank's report (wall time: the slowest one's).
    fn absorb(&mut self, other: &Fidelity) {
        self.ranks += other.ranks;
        self.processes += other.processes;
        self.threads += other.threads;
        self.calls_replayed += other.calls_replayed;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.recorded_bytes_read += other.recorded_bytes_read;
        self.recorded_bytes_written += other.recorded_bytes_written;
        self.inherited_calls += other.inherited_calls;
        self.left_to_libraries += other.left_to_libraries;
        self.library_calls += other.library_calls;
        self.unfinished_requests += other.unfinished_requests;
        for (name, count) in &other.not_replayed {
            *self.not_replayed.entry(name.clone()).or_default() += count;
        }
        for (layer, replayed) in &other.layers {
            self.layers.entry(layer.clone()).or_default().add(replayed);
        }
        self.process_list.extend(other.process_list.iter().cloned());
        self.replay_seconds = self.replay_seconds.max(other.replay_seconds);
    }
}

/// Whether an event is a call an MPI library made itself (inside an MPI-IO call, in
/// `MPI_Init` or `MPI_Finalize`): the replayed MPI calls make their own.
fn left_to_libraries(event: &cairn_model::Event) -> bool {
    made_by_libraries(event.flags)
}

/// [`left_to_libraries`], by an event's or a leaf key's flags.
fn made_by_libraries(flags: u32) -> bool {
    flags & (event_flags::IN_RUNTIME | event_flags::INSIDE_MPIIO) != 0
}

/// Visits in order the leaves of `body` the walked rank runs — a loop's body once, a loop
/// of a part only other ranks have not at all — until `visit` breaks: one walk of the
/// folded structure, which finds first uses in the order the events have them, whatever
/// the loops' counts.
fn each_leaf_run<B>(
    body: cairn_compress::stream::Body,
    visit: &mut impl FnMut(
        &cairn_compress::fold::Leaf<cairn_compress::stream::EventKey>,
    ) -> ControlFlow<B>,
) -> ControlFlow<B> {
    for item in body.iter() {
        match item {
            cairn_compress::stream::Item::Leaf(leaf) => visit(&leaf)?,
            cairn_compress::stream::Item::Loop { count, body, .. } if count > 0 => {
                each_leaf_run(body, visit)?
            }
            cairn_compress::stream::Item::Loop { .. } => {}
        }
    }
    ControlFlow::Continue(())
}

/// The least compute time a replayed thread sleeps at once (see `replay_thread`).
const SLEEP_GRAIN_NS: i64 = 200_000;

/// The smallest mean gap before a call of a thread's in the run (0 if none is known): one
/// walk of its folded structure, the calls MPI libraries made inside others left out.
fn smallest_gap(stream: &Stream) -> u64 {
    let mut smallest: Option<u64> = None;
    let _ = each_leaf_run::<()>(stream.nodes(), &mut |leaf| {
        // A call site's mean gap (a single one can read 0 ns between two clock readings;
        // a thread's first call has none).
        let gap = leaf.gap.mean.round() as u64;
        if leaf.gap.count > 0 && gap > 0 && !made_by_libraries(leaf.key.flags) {
            smallest = Some(smallest.map_or(gap, |s| s.min(gap)));
        }
        ControlFlow::Continue(())
    });
    smallest.unwrap_or(0)
}

/// The process's clock in the run: when its first recorded event started (ns since the
/// run's start), from which a thread's first call is owed its offset.
#[derive(Clone, Copy)]
struct Clock {
    first: u64,
}

// One thread's replay needs the whole context it runs in; a struct of these eight would
// only be unpacked again here.
#[allow(clippy::too_many_arguments)]
fn replay_thread(
    trace: &Trace,
    stream: &Stream,
    options: &Options,
    mut handles: ThreadHandles,
    clock: Clock,
    job: Option<&mpi::Job>,
    scaling: Option<scale::Scaling>,
    mut forks: Option<&mut processes::Forks>,
) -> (Counts, std::collections::HashMap<u32, i32>) {
    let mut counts = Counts::default();
    let mut buffer: Vec<u8> = Vec::new();
    // Made at the thread's first MPI call: only a thread that calls MPI may post the
    // derived receives of a trace with histograms.
    let mut mpi: Option<mpi::Thread> = None;
    // The compute time between calls (see the crate note): the gap the run had before each
    // call, less the tracer's own cost, which every recorded gap holds and the program did
    // not have (the smallest mean gap the thread had stands for it). The gap after a call
    // MPI made inside another, which the replay does not issue, counts from its end.
    let tracer_cost = smallest_gap(stream);
    let mut recorded_end: Option<u64> = None;
    // Compute time owed and not slept yet (ns; below 0 after oversleeping): a sleep costs
    // tens of microseconds, so gaps of a few hundred nanoseconds are slept together.
    let mut owed: i64 = 0;
    let mut paths: std::collections::HashMap<u32, std::path::PathBuf> =
        std::collections::HashMap::new();
    for mut event in trace.events_seeded(stream, options.seed()) {
        let gap = match recorded_end {
            // A thread's first call: as long after its process's start as in the run.
            None => event.start.saturating_sub(clock.first),
            Some(end) => event.start.saturating_sub(end).saturating_sub(tracer_cost),
        };
        recorded_end = Some(event.start.saturating_add(event.duration));
        if let Some(scaling) = scaling {
            scaling.adjust(trace, stream, &mut event);
        }
        // The children that started before this call, forked with the descriptors open.
        if let Some(forks) = forks.as_deref_mut() {
            forks.before(event.start, &handles);
        }
        if let Some(file) = event.file.filter(|_| handles.passes_on_or_inherits()) {
            let opens = handles::opens(&trace.calls[event.call as usize].name);
            let recorded = if opens {
                event.result as u64
            } else {
                event.handle
            };
            handles.note(recorded, file, opens);
        }
        if left_to_libraries(&event) {
            counts.left_to_libraries += 1;
            continue;
        }
        let info = &trace.calls[event.call as usize];
        if info.layer().is_some_and(Layer::is_library) {
            counts.library_calls += 1;
            continue;
        }
        if !options.no_compute && !options.dry_run {
            owed = owed.saturating_add(gap.min(i64::MAX as u64) as i64);
            if owed >= SLEEP_GRAIN_NS {
                let asleep = Instant::now();
                std::thread::sleep(Duration::from_nanos(owed as u64));
                owed -= asleep.elapsed().as_nanos().min(i64::MAX as u128) as i64;
            }
        }
        let name = info.name.as_str();
        let layer_name = info.layer().map_or("other", |layer| layer.name());
        if !counts.layers.contains_key(layer_name) {
            counts
                .layers
                .insert(layer_name.to_string(), LayerFidelity::default());
        }
        let layer = counts.layers.get_mut(layer_name).expect("just made");
        // Each file's path under the root, made once per thread (not at every call).
        let path: Option<&std::path::Path> = event.file.map(|file| {
            paths
                .entry(file)
                .or_insert_with(|| mapped(&options.root, &trace.files[file as usize].path))
                .as_path()
        });
        let is_mpi = matches!(info.layer(), Some(Layer::Mpi))
            || name.starts_with("MPI_Init")
            || name == "MPI_Finalize";
        if is_mpi {
            match mpi::recorded(name, &event) {
                Moved::Read(bytes) => layer.recorded_bytes_read += bytes,
                Moved::Written(bytes) => layer.recorded_bytes_written += bytes,
                Moved::Nothing => {}
            }
        } else {
            match info.class() {
                Some(cairn_model::CallClass::Read) => layer.recorded_bytes_read += event.bytes(),
                Some(cairn_model::CallClass::Write) => {
                    layer.recorded_bytes_written += event.bytes()
                }
                _ => {}
            }
        }
        if options.dry_run {
            println!(
                "{name} {} request {} offset {} aux {} result {}",
                path.map_or(String::new(), |p| p.display().to_string()),
                event.request,
                event.offset,
                event.aux,
                event.result
            );
            layer.calls += 1;
            continue;
        }
        let target = (name == "rename" || name == "renameat" || name == "renameat2")
            .then(|| stream.file(event.aux))
            .flatten()
            .map(|file| mapped(&options.root, &trace.files[file as usize].path));
        let issued = if is_mpi || matches!(info.layer(), Some(Layer::MpiIo)) {
            job.and_then(|job| {
                mpi.get_or_insert_with(|| mpi::Thread::new(job))
                    .issue(name, &event, path)
            })
        } else {
            issue(
                name,
                &event,
                path,
                target.as_deref(),
                &mut handles,
                &mut buffer,
            )
        };
        match issued {
            Some(Moved::Read(bytes)) => layer.bytes_read += bytes,
            Some(Moved::Written(bytes)) => layer.bytes_written += bytes,
            Some(Moved::Nothing) => {}
            None => {
                *counts.not_replayed.entry(name.to_string()).or_default() += 1;
                continue;
            }
        }
        layer.calls += 1;
    }
    if let Some(forks) = forks {
        forks.before(u64::MAX, &handles);
    }
    if let Some(mpi) = mpi.as_mut() {
        mpi.drain();
        counts.unfinished = mpi.unfinished;
        // A trace with histograms: the receives derived from the senders' draws.
        counts.layers.entry("mpi".into()).or_default().bytes_read += mpi.received_from_senders();
    }
    counts.inherited = handles.inherited.get();
    let open = handles.open_files();
    (counts, open)
}

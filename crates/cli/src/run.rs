//! `cairn run`, `cairn lib` and `cairn merge`.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use cairn_trace::collect::{collect, collect_segments, segment_files, RunInfo, RuntimeIo};
use cairn_trace::merge::merge_traces;
use cairn_trace::Trace;

pub struct RunOptions {
    pub output: Option<PathBuf>,
    pub keep_staging: bool,
    /// The directory the staging directory goes in (default: the output's).
    pub staging: Option<PathBuf>,
    pub quiet: bool,
    pub runtime_io: RuntimeIo,
    pub building: Building,
    pub command: Vec<OsString>,
}

/// How the trace is built from what the tracer staged.
#[derive(Clone, Copy, Debug)]
pub struct Building {
    /// Precision level (see `Trace::apply_precision` and `RunInfo::precision`).
    pub precision: u8,
    /// Bins of each histogram a precision level below 100 makes.
    pub histogram_bins: usize,
    /// Bytes each thread's stream may hold as it is built (`RunInfo::stream_budget`; 0:
    /// no bound).
    pub stream_budget: u64,
}

impl Building {
    /// What the trace builder is told.
    fn apply(&self, run: RunInfo) -> RunInfo {
        RunInfo {
            precision: Some(self.precision),
            histogram_bins: self.histogram_bins,
            stream_budget: (self.stream_budget > 0).then_some(self.stream_budget),
            ..run
        }
    }
}

const LIBRARY_NAME: &str = "libcairn.so";

/// Finds the preload library: `$CAIRN_LIB`, beside the binary, or in `../lib/cairn/`.
pub fn library_path() -> Result<PathBuf> {
    installed_file(LIBRARY_NAME, "CAIRN_LIB")
}

/// Finds one of cairn's libraries: the file `$variable` names, or `name` beside the
/// binary or in `../lib/cairn/`.
pub fn installed_file(name: &str, variable: &str) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(variable) {
        let path = PathBuf::from(path);
        if path.is_file() {
            return Ok(path);
        }
        bail!("{variable}={} does not name a file", path.display());
    }
    let executable = std::env::current_exe().context("cannot find the cairn binary's own path")?;
    let directory = executable
        .parent()
        .context("the cairn binary has no directory")?;
    let candidates = [
        directory.join(name),
        directory.join("../lib/cairn").join(name),
    ];
    for candidate in &candidates {
        if candidate.is_file() {
            return Ok(candidate
                .canonicalize()
                .unwrap_or_else(|_| candidate.clone()));
        }
    }
    bail!(
        "{name} not found beside {} (build it with `cargo build --workspace`, or set {variable})",
        executable.display()
    )
}

/// `prog.cairn`, or `prog.1.cairn`, `prog.2.cairn`... whichever does not exist yet.
fn default_output(command: &OsString) -> PathBuf {
    let name = Path::new(command)
        .file_name()
        .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
    let first = PathBuf::from(format!("{name}.cairn"));
    if !first.exists() {
        return first;
    }
    (1..)
        .map(|n| PathBuf::from(format!("{name}.{n}.cairn")))
        .find(|path| !path.exists())
        .expect("unbounded")
}

/// What a rank of a parallel job says when its launcher stops the job (`SIGTERM`, before
/// the `SIGKILL` that follows; `SIGHUP`): where the staging is and the one command that
/// builds the trace of everything up to the failure, which this `cairn run` will not live to
/// build. Formatted before the command starts, written by the handler with one `write`.
static STOPPED_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
static STOPPED_SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The name `cairn run -o DIR/NAME` gives its staging directory in DIR, before the job's
/// (or process's) id.
fn staging_prefix(output_name: &str) -> String {
    format!(".{output_name}.staging-")
}

/// The directory a file path is in (`.` for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// How to build `trace` from the staging a run left: the command, in backquotes.
pub fn merge_hint(staging: &Path, trace: &Path) -> String {
    format!(
        "`cairn merge {} -o {}` builds the trace",
        staging.display(),
        trace.display()
    )
}

/// The newest staging directory `cairn run` left beside `trace` (a job that did not get to
/// build it), if any.
pub fn staging_beside(trace: &Path) -> Option<PathBuf> {
    let prefix = staging_prefix(&trace.file_name()?.to_string_lossy());
    std::fs::read_dir(directory_of(trace))
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .max_by_key(|entry| entry.metadata().and_then(|data| data.modified()).ok())
        .map(|entry| entry.path())
}

extern "C" fn on_signal(signal: libc::c_int) {
    if signal != libc::SIGTERM && signal != libc::SIGHUP {
        return;
    }
    let Some(message) = STOPPED_MESSAGE.get() else {
        return;
    };
    if !STOPPED_SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        // SAFETY: write(2) is async-signal-safe; the message lives for the process.
        unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
    }
}

/// While the command runs, signals meant for it (Ctrl-C reaches the whole foreground
/// group) must not kill cairn before it writes the trace. A handler, not SIG_IGN: the
/// child must not inherit the ignoring (handlers are reset at exec, SIG_IGN is not).
fn shield_from_signals() {
    for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installing a handler that does nothing async-signal-unsafe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// For commands that print (`summary`, `dump`, `lib`): a closed pipe (`cairn dump | head`)
/// ends the process quietly, as for other Unix tools, instead of a write error. Not for
/// `run` and `merge`, which must finish writing their trace whatever happens to their output.
pub fn end_quietly_on_closed_pipe() {
    // SAFETY: restoring the default disposition of SIGPIPE (Rust's runtime ignores it).
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        _ => 1,
    }
}

/// `cairn run` launched as one rank of a parallel job (`mpirun -np N cairn run -- app`):
/// every rank traces into one shared staging directory and rank 0 builds the one trace
/// once every rank has finished.
struct LaunchRank {
    rank: u32,
    size: u32,
    job: String,
}

fn launch_rank() -> Option<LaunchRank> {
    let number = |name: &str| std::env::var(name).ok()?.parse::<u32>().ok();
    let text = |name: &str| std::env::var(name).ok();
    let (rank, size) = [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("SLURM_PROCID", "SLURM_NTASKS"),
    ]
    .iter()
    .find_map(|(rank, size)| Some((number(rank)?, number(size)?)))?;
    let job = text("OMPI_MCA_ess_base_jobid")
        .or_else(|| text("PMIX_NAMESPACE"))
        .or_else(|| {
            Some(format!(
                "{}.{}",
                text("SLURM_JOB_ID")?,
                text("SLURM_STEP_ID").unwrap_or_default()
            ))
        })
        .unwrap_or_else(|| "job".into());
    let job = job
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    (size > 1).then_some(LaunchRank { rank, size, job })
}

/// Seconds rank 0 waits for the other ranks to finish before building the trace anyway.
fn rank_wait_seconds() -> u64 {
    std::env::var("CAIRN_RANK_TIMEOUT")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(600)
}

/// Children per node of the merge tree of a job of `ranks` ranks (`CAIRN_MERGE_FANIN`, or
/// [`cairn_format::segment::merge_fan_in`]'s default).
fn merge_fan_in(ranks: u32) -> u32 {
    let given = std::env::var("CAIRN_MERGE_FANIN")
        .ok()
        .and_then(|value| value.parse().ok());
    cairn_format::segment::merge_fan_in(given, ranks)
}

/// Levels of a tree of `fan_in` children over `ranks` leaves.
fn tree_depth(ranks: u32, fan_in: u32) -> u32 {
    let (mut depth, mut reach) = (0, 1u64);
    while reach < ranks as u64 {
        reach *= fan_in as u64;
        depth += 1;
    }
    depth
}

fn partial_path(staging: &Path, rank: u32) -> PathBuf {
    staging.join(format!("partial-{rank}.cairn"))
}

/// The ranks' traces merge up a tree of `CAIRN_MERGE_FANIN` children per node: at the
/// level of stride `s`, a rank that is a multiple of `s · fan-in` takes the partial traces
/// of ranks `rank + j·s` (j = 1 … fan-in − 1), merges them into its own and goes up; the
/// others hand theirs over (a file in the staging directory, written atomically) and stop.
/// Rank 0 ends with the whole job: `Some((trace, time spent reading and merging))`; every
/// other rank gets `None`.
///
/// A child whose partial has not come by the deadline (its `cairn` was killed, or it is
/// still running) is replaced by the segments its subtree's ranks left, collected here,
/// and a diagnostic says so.
fn merge_up_the_tree(
    launch: &LaunchRank,
    staging: &Path,
    run: &RunInfo,
    own: Trace,
) -> Result<Option<(Trace, std::time::Duration)>> {
    let fan_in = merge_fan_in(launch.size);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(rank_wait_seconds());
    let mut partial = own;
    let mut working = std::time::Duration::ZERO;
    let mut stride = 1u64;
    let size = launch.size as u64;
    while stride < size {
        let rank = launch.rank as u64;
        if !rank.is_multiple_of(stride * fan_in as u64) {
            let path = partial_path(staging, launch.rank);
            partial
                .write_handoff(&path)
                .with_context(|| format!("handing this rank's trace over in {}", path.display()))?;
            return Ok(None);
        }
        let mut parts = vec![partial];
        let mut notes = Vec::new();
        for child in (1..fan_in as u64)
            .map(|step| rank + step * stride)
            .filter(|child| *child < size)
        {
            let path = partial_path(staging, child as u32);
            let mut pause = std::time::Duration::from_millis(1);
            loop {
                if path.is_file() {
                    let started = std::time::Instant::now();
                    parts.push(Trace::open(&path).with_context(|| format!("{}", path.display()))?);
                    working += started.elapsed();
                    let _ = std::fs::remove_file(&path);
                    break;
                }
                if std::time::Instant::now() >= deadline {
                    let count = stride.min(size - child);
                    let subtree = child..child + count;
                    parts.extend(collect_missing_subtree(staging, run, subtree, &mut notes));
                    break;
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(20));
            }
        }
        let started = std::time::Instant::now();
        partial = merge_traces(parts, run.precision.unwrap_or(100));
        working += started.elapsed();
        partial.diagnostics.extend(notes);
        stride *= fan_in as u64;
    }
    Ok(Some((partial, working)))
}

/// The traces of the ranks of a subtree whose merged trace never came, built from the
/// segments they staged (as far as they got).
fn collect_missing_subtree(
    staging: &Path,
    run: &RunInfo,
    ranks: std::ops::Range<u64>,
    notes: &mut Vec<String>,
) -> Vec<Trace> {
    let mut traces = Vec::new();
    let mut missing = Vec::new();
    for rank in ranks {
        let directory = staging.join(format!("rank-{rank}"));
        let run = RunInfo {
            exit_status: None,
            ..run.clone()
        };
        match catch_internal(|| Ok(collect(&directory, run)?)) {
            Ok(mut trace) if !trace.processes.is_empty() => {
                trace.diagnostics.push(format!(
                    "rank {rank}'s trace did not come up the merge tree in time; it was built from the segments it had staged"
                ));
                traces.push(trace);
            }
            _ => missing.push(rank),
        }
    }
    if !missing.is_empty() {
        notes.push(format!("no trace of ranks {missing:?}: nothing was staged"));
    }
    traces
}

pub fn run(options: RunOptions) -> Result<ExitCode> {
    let launch = launch_rank();
    let library = library_path()?;
    let program = &options.command[0];
    let output = match options.output {
        Some(path) => {
            if path.exists()
                && !options.quiet
                && launch.as_ref().is_none_or(|launch| launch.rank == 0)
            {
                eprintln!("cairn: replacing {}", path.display());
            }
            path
        }
        None => default_output(program),
    };
    let output_directory = directory_of(&output);
    let output_directory = output_directory
        .canonicalize()
        .with_context(|| format!("output directory {}", output_directory.display()))?;
    let output_name = output
        .file_name()
        .context("the output path names no file")?
        .to_string_lossy()
        .into_owned();
    let run_id = match &launch {
        Some(launch) => launch.job.clone(),
        None => std::process::id().to_string(),
    };
    // Every rank creates it if missing (`mkdir -p`: ranks racing to make it all succeed),
    // so a job's scratch directory need not be made before the job.
    let staging_parent = match &options.staging {
        Some(directory) => std::fs::create_dir_all(directory)
            .and_then(|()| directory.canonicalize())
            .with_context(|| format!("staging directory {}", directory.display()))?,
        None => output_directory.clone(),
    };
    let staging = staging_parent.join(format!("{}{run_id}", staging_prefix(&output_name)));
    // A rank's segments go to a directory of its own: each rank collects its own.
    let rank_staging = match &launch {
        Some(launch) => staging.join(format!("rank-{}", launch.rank)),
        None => staging.clone(),
    };
    let created = if launch.is_some() {
        std::fs::create_dir_all(&rank_staging)
    } else {
        std::fs::create_dir(&staging)
    };
    created.with_context(|| format!("cannot create {}", rank_staging.display()))?;

    let mut preload = OsString::from(library.as_os_str());
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|value| !value.is_empty()) {
        preload.push(":");
        preload.push(existing);
    }
    if let Some(launch) = &launch {
        let _ = STOPPED_MESSAGE.set(
            format!(
                "cairn: rank {}: the job was stopped; what every rank did until then is in {}: {}\n",
                launch.rank,
                staging.display(),
                merge_hint(&staging, &output_directory.join(&output_name))
            )
            .into_bytes(),
        );
    }
    // A program the dynamic loader does not start never reads LD_PRELOAD: said before it
    // runs (it still runs: the user asked for it), once per job.
    let statically_linked = crate::elf::resolve(Path::new(program)).is_some_and(|path| {
        crate::elf::statically_linked(&path) && !crate::elf::carries_tracer(&path)
    });
    if statically_linked && launch.as_ref().is_none_or(|launch| launch.rank == 0) {
        eprintln!(
            "cairn: {} is statically linked: preloading cannot reach its calls, so they are not traced (only dynamically linked programs it starts are); link it with `$(cairn link-flags)` to trace it",
            program.to_string_lossy()
        );
    }
    shield_from_signals();
    let mut command = std::process::Command::new(program);
    if options.building.precision < 100 {
        // The tracer folds a step's changing sizes and loop counts as the program runs.
        command.env("CAIRN_PRECISION", options.building.precision.to_string());
    }
    let spawned = command
        .args(&options.command[1..])
        .env("LD_PRELOAD", &preload)
        .env("CAIRN_DIR", &rank_staging)
        // `cairn run` builds the trace itself (after the program, so nothing is missed).
        .env_remove("CAIRN_OUTPUT")
        .spawn();
    let status = match spawned {
        Ok(mut child) => child.wait().context("waiting for the command")?,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&staging);
            bail!("cannot run {}: {error}", program.to_string_lossy());
        }
    };
    let code = exit_code(status);
    let run = options.building.apply(RunInfo {
        writer: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        command: options
            .command
            .iter()
            .map(|argument| argument.as_encoded_bytes().to_vec())
            .collect(),
        exit_status: Some(code),
        runtime_io: options.runtime_io,
        // Each rank collects its own segments; the job's first rank is 0.
        first_rank: launch.as_ref().map(|_| 0),
        ..RunInfo::default()
    });
    let kept_in = |directory: &Path| {
        format!(
            "building the trace failed; the raw segments are kept in {}",
            directory.display()
        )
    };
    // A failure of the tracer's own code is its own: the program's exit status stands.
    let collected = catch_internal(|| Ok(collect(&rank_staging, run.clone())?))
        .with_context(|| kept_in(&staging));
    let mut trace = match (collected, &launch) {
        (Ok(trace), _) => trace,
        // A rank that cannot build its trace still takes its place in the tree (its parent
        // would otherwise wait for it until the timeout), with a note saying why.
        (Err(error), Some(launch)) => {
            eprintln!("cairn: rank {}: {error:#}", launch.rank);
            let mut empty = cairn_trace::Trace::default();
            empty.diagnostics.push(format!(
                "rank {}'s trace could not be built ({error:#}); `cairn merge` of the staging directory can retry",
                launch.rank
            ));
            empty
        }
        (Err(error), None) => {
            eprintln!("cairn: error: {}", crate::one_line(&error));
            return Ok(ExitCode::from(code.clamp(0, 255) as u8));
        }
    };
    if let Some(launch) = &launch {
        if code != 0 {
            trace
                .diagnostics
                .push(format!("rank {} exited with status {code}", launch.rank));
        }
        let started = std::time::Instant::now();
        let Some((merged, working)) = merge_up_the_tree(launch, &staging, &run, trace)? else {
            // This rank's part went to its parent in the tree.
            return Ok(ExitCode::from(code.clamp(0, 255) as u8));
        };
        trace = merged;
        if !options.quiet {
            let fan_in = merge_fan_in(launch.size);
            eprintln!(
                "cairn: merged {} ranks in {:.1} ms ({:.1} ms reading and merging here; fan-in {fan_in}, depth {})",
                launch.size,
                started.elapsed().as_secs_f64() * 1e3,
                working.as_secs_f64() * 1e3,
                tree_depth(launch.size, fan_in)
            );
        }
    }
    trace.merge_resized_loops();
    trace.apply_precision(options.building.precision);
    let size = trace.write(&output).with_context(|| {
        format!(
            "writing the trace failed; the raw segments are kept in {}",
            staging.display()
        )
    })?;
    if !options.keep_staging {
        let _ = std::fs::remove_dir_all(&staging);
    }
    warn_incomplete(&trace);
    if !options.quiet {
        eprintln!(
            "cairn: {} -> {} ({size} bytes)",
            describe(&trace),
            output.display()
        );
    }
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// Writes `path` through `write` into a temporary file beside it, renamed over `path` only
/// once complete: a failure leaves any previous file as it was.
pub fn write_replacing<T>(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<T>,
) -> Result<T> {
    let directory = directory_of(path);
    let name = path.file_name().context("the output path names no file")?;
    let temporary = directory.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let file = std::fs::File::create(&temporary)
            .with_context(|| format!("cannot create {}", temporary.display()))?;
        let mut buffered = std::io::BufWriter::new(file);
        let value = write(&mut buffered)?;
        let file = buffered.into_inner().map_err(|error| error.into_error())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(value)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// Writes the directory `path` through `write` (given a path beside it that does not exist
/// yet), swapped in for `path` only once complete: a failure leaves any previous directory
/// as it was.
pub fn write_directory_replacing<T>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<T>,
) -> Result<T> {
    let directory = directory_of(path);
    let name = path
        .file_name()
        .context("the output path names no directory")?;
    let hidden = |what: &str| {
        directory.join(format!(
            ".{}.{what}-{}",
            name.to_string_lossy(),
            std::process::id()
        ))
    };
    let (temporary, previous) = (hidden("tmp"), hidden("old"));
    let _ = std::fs::remove_dir_all(&temporary);
    let result = (|| {
        let value = write(&temporary)?;
        let replaced = path.exists();
        if replaced {
            std::fs::rename(path, &previous)
                .with_context(|| format!("cannot replace {}", path.display()))?;
        }
        if let Err(error) = std::fs::rename(&temporary, path) {
            if replaced {
                let _ = std::fs::rename(&previous, path);
            }
            return Err(error).with_context(|| format!("cannot write {}", path.display()));
        }
        if replaced {
            let _ = std::fs::remove_dir_all(&previous).or_else(|_| std::fs::remove_file(&previous));
        }
        Ok(value)
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&temporary);
    }
    result
}

/// A progress bar on standard error for walking the events of the streams `filter` keeps,
/// when standard error is a terminal (none otherwise: logs stay clean). Cleared when
/// dropped.
pub fn progress_bar(trace: &Trace, filter: &cairn_export::Filter) -> Option<ExpansionBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let total: u64 = trace
        .streams
        .iter()
        .filter(|stream| filter.keeps_process(&trace.processes[stream.process as usize]))
        .map(|stream| stream.count)
        .sum();
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} expanding {human_pos}/{human_len} events, {eta} left {wide_bar}",
        )
        .expect("a valid template"),
    );
    Some(ExpansionBar(bar))
}

/// The bar [`progress_bar`] draws.
pub struct ExpansionBar(indicatif::ProgressBar);

impl ExpansionBar {
    /// What a walk tells of its progress, moving this bar.
    pub fn progress(&self) -> cairn_export::Progress {
        let bar = self.0.clone();
        cairn_export::Progress(std::sync::Arc::new(move |events| bar.inc(events)))
    }
}

impl Drop for ExpansionBar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// Says on standard error, even with `--quiet`, which processes' calls the trace lacks
/// (their staging file could not grow).
pub fn warn_incomplete(trace: &Trace) {
    for process in &trace.processes {
        if let Some(unrecorded) = process.unrecorded {
            eprintln!("cairn: {}", unrecorded.message(process));
        }
    }
}

fn describe(trace: &cairn_trace::Trace) -> String {
    let processes = trace.processes.len();
    let plural = if processes == 1 { "" } else { "es" };
    format!(
        "{} events from {processes} process{plural}",
        trace.event_count()
    )
}

/// One trace per input: a trace file as it is; a staging directory's own segments as one
/// trace, and each of its subdirectories that holds segments (one rank's staging) as one
/// more; a directory without staging, each of its `.cairn` files.
fn load_inputs(
    inputs: &[PathBuf],
    runtime_io: RuntimeIo,
    first_rank: Option<u32>,
    building: Building,
) -> Result<Vec<Trace>> {
    let run = building.apply(RunInfo {
        writer: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        runtime_io,
        first_rank,
        ..RunInfo::default()
    });
    let mut traces = Vec::new();
    // Segment files named one by one make one trace together.
    let (segments, inputs): (Vec<PathBuf>, Vec<PathBuf>) = inputs
        .iter()
        .cloned()
        .partition(|path| path.is_file() && path.extension().is_some_and(|e| e == "seg"));
    if !segments.is_empty() {
        traces.push(collect_segments(&segments, run.clone()).context("staging segments")?);
    }
    for input in &inputs {
        if !input.is_dir() {
            traces.push(Trace::open(input).with_context(|| input.display().to_string())?);
            continue;
        }
        let mut directories = vec![(input.clone(), first_rank)];
        let mut subdirectories: Vec<PathBuf> = std::fs::read_dir(input)
            .with_context(|| input.display().to_string())?
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| path.is_dir())
            .collect();
        subdirectories.sort();
        // A rank's staging is collected apart from the others: the job's first rank is 0.
        directories.extend(
            subdirectories
                .into_iter()
                .map(|path| (path, first_rank.or(Some(0)))),
        );
        let before = traces.len();
        let mut staged = Vec::new();
        for (directory, first_rank) in directories {
            if !segment_files(&directory)?.is_empty() {
                staged.push((directory, first_rank));
            }
        }
        traces.extend(collect_in_parallel(&staged, &run)?);
        if traces.len() == before {
            // No staging: a directory of trace files (per-rank traces) is merged whole.
            let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| input.display().to_string())?
                .filter_map(|entry| Some(entry.ok()?.path()))
                .filter(|path| {
                    path.extension()
                        .is_some_and(|extension| extension == "cairn")
                })
                .collect();
            files.sort();
            for file in files {
                traces.push(Trace::open(&file).with_context(|| file.display().to_string())?);
            }
        }
        if traces.len() == before {
            bail!(
                "{}: no staging segments (.seg files) or traces (.cairn files) found",
                input.display()
            );
        }
    }
    Ok(traces)
}

/// Builds a trace from each staging directory (each rank's, for a job), as many at once as
/// there are processors, in the order given.
fn collect_in_parallel(staged: &[(PathBuf, Option<u32>)], run: &RunInfo) -> Result<Vec<Trace>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(staged.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut built: Vec<Option<Result<Trace>>> = (0..staged.len()).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut built);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((directory, first_rank)) = staged.get(index) else {
                    break;
                };
                let run = RunInfo {
                    first_rank: *first_rank,
                    ..run.clone()
                };
                let trace = catch_internal(|| Ok(collect(directory, run)?))
                    .with_context(|| directory.display().to_string());
                results.lock().expect("no worker panics holding it")[index] = Some(trace);
            });
        }
    });
    built
        .into_iter()
        .map(|trace| trace.expect("every directory was built"))
        .collect()
}

pub fn merge(
    inputs: &[PathBuf],
    output: &Path,
    runtime_io: RuntimeIo,
    first_rank: Option<u32>,
    building: Building,
    quiet: bool,
) -> Result<()> {
    let mut traces = load_inputs(inputs, runtime_io, first_rank, building)?;
    let mut trace = if traces.len() == 1 {
        traces.pop().expect("one trace")
    } else {
        merge_traces(traces, building.precision)
    };
    trace.merge_resized_loops();
    trace.apply_precision(building.precision);
    let size = trace.write(output)?;
    warn_incomplete(&trace);
    if !quiet {
        eprintln!(
            "cairn: {} -> {} ({size} bytes)",
            describe(&trace),
            output.display()
        );
    }
    Ok(())
}

/// Runs `build`, turning a panic in it (a bug of cairn's, never of the traced program's)
/// into an error, so the caller can keep the staging and the program's exit status.
pub fn catch_internal<T>(build: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(build)).unwrap_or_else(|panic| {
        Err(anyhow::anyhow!(
            "internal error: {}",
            panic_message(&*panic)
        ))
    })
}

/// What a panic said (its payload, a `String` or a `&str`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("a panic")
}

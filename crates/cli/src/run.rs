//! `cairn run`, `cairn lib` and `cairn merge`.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use cairn_trace::collect::{collect, RunInfo, RuntimeIo};

pub struct RunOptions {
    pub output: Option<PathBuf>,
    pub keep_staging: bool,
    pub quiet: bool,
    pub runtime_io: RuntimeIo,
    pub command: Vec<OsString>,
}

const LIBRARY_NAME: &str = "libcairn.so";

/// Finds the preload library: `$CAIRN_LIB`, beside the binary, or in `../lib/cairn/`.
pub fn library_path() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("CAIRN_LIB") {
        let path = PathBuf::from(path);
        if path.is_file() {
            return Ok(path);
        }
        bail!("CAIRN_LIB={} does not name a file", path.display());
    }
    let executable = std::env::current_exe().context("cannot find the cairn binary's own path")?;
    let directory = executable
        .parent()
        .context("the cairn binary has no directory")?;
    let candidates = [
        directory.join(LIBRARY_NAME),
        directory.join("../lib/cairn").join(LIBRARY_NAME),
    ];
    for candidate in &candidates {
        if candidate.is_file() {
            return Ok(candidate
                .canonicalize()
                .unwrap_or_else(|_| candidate.clone()));
        }
    }
    bail!(
        "{LIBRARY_NAME} not found beside {} (build it with `cargo build --workspace`, or set CAIRN_LIB)",
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

extern "C" fn ignore_signal(_: libc::c_int) {}

/// While the command runs, signals meant for it (Ctrl-C reaches the whole foreground
/// group) must not kill cairn before it writes the trace. A handler, not SIG_IGN: the
/// child must not inherit the ignoring (handlers are reset at exec, SIG_IGN is not).
fn shield_from_signals() {
    for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installing a handler that does nothing async-signal-unsafe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore_signal as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
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
    let output_directory = match output.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let output_directory = output_directory
        .canonicalize()
        .with_context(|| format!("output directory {}", output_directory.display()))?;
    let output_name = output
        .file_name()
        .context("the output path names no file")?
        .to_string_lossy()
        .into_owned();
    let staging = match &launch {
        Some(launch) => output_directory.join(format!(".{output_name}.staging-{}", launch.job)),
        None => output_directory.join(format!(".{output_name}.staging-{}", std::process::id())),
    };
    let created = if launch.is_some() {
        std::fs::create_dir_all(&staging)
    } else {
        std::fs::create_dir(&staging)
    };
    created.with_context(|| format!("cannot create {}", staging.display()))?;

    let mut preload = OsString::from(library.as_os_str());
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|value| !value.is_empty()) {
        preload.push(":");
        preload.push(existing);
    }
    shield_from_signals();
    let spawned = std::process::Command::new(program)
        .args(&options.command[1..])
        .env("LD_PRELOAD", &preload)
        .env("CAIRN_DIR", &staging)
        .spawn();
    let status = match spawned {
        Ok(mut child) => child.wait().context("waiting for the command")?,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&staging);
            bail!("cannot run {}: {error}", program.to_string_lossy());
        }
    };
    let code = exit_code(status);
    let mut rank_notes = Vec::new();
    if let Some(launch) = &launch {
        let marker = staging.join(format!("rank-{}.done", launch.rank));
        std::fs::write(&marker, code.to_string())
            .with_context(|| format!("cannot write {}", marker.display()))?;
        if launch.rank != 0 {
            return Ok(ExitCode::from(code.clamp(0, 255) as u8));
        }
        let deadline =
            std::time::Instant::now() + std::time::Duration::from_secs(rank_wait_seconds());
        loop {
            let finished: Vec<(u32, i32)> = (0..launch.size)
                .filter_map(|rank| {
                    let text =
                        std::fs::read_to_string(staging.join(format!("rank-{rank}.done"))).ok()?;
                    Some((rank, text.trim().parse().ok()?))
                })
                .collect();
            if finished.len() as u32 == launch.size || std::time::Instant::now() >= deadline {
                for (rank, code) in &finished {
                    if *code != 0 {
                        rank_notes.push(format!("rank {rank} exited with status {code}"));
                    }
                }
                if (finished.len() as u32) < launch.size {
                    rank_notes.push(format!(
                        "only {} of {} ranks had finished when the trace was built",
                        finished.len(),
                        launch.size
                    ));
                }
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    let run = RunInfo {
        writer: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        command: options
            .command
            .iter()
            .map(|argument| argument.as_encoded_bytes().to_vec())
            .collect(),
        exit_status: Some(code),
        runtime_io: options.runtime_io,
    };
    let mut trace = collect(&staging, run).with_context(|| {
        format!(
            "building the trace failed; the raw segments are kept in {}",
            staging.display()
        )
    })?;
    trace.diagnostics.extend(rank_notes);
    let size = trace.write(&output).with_context(|| {
        format!(
            "writing the trace failed; the raw segments are kept in {}",
            staging.display()
        )
    })?;
    if !options.keep_staging {
        let _ = std::fs::remove_dir_all(&staging);
    }
    if !options.quiet {
        eprintln!(
            "cairn: {} -> {} ({size} bytes)",
            describe(&trace),
            output.display()
        );
    }
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

fn describe(trace: &cairn_trace::Trace) -> String {
    let processes = trace.processes.len();
    let plural = if processes == 1 { "" } else { "es" };
    format!(
        "{} events from {processes} process{plural}",
        trace.event_count()
    )
}

pub fn merge(directory: &Path, output: &Path, runtime_io: RuntimeIo) -> Result<()> {
    let run = RunInfo {
        writer: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        runtime_io,
        ..RunInfo::default()
    };
    let trace = collect(directory, run).with_context(|| format!("{}", directory.display()))?;
    if trace.processes.is_empty() {
        bail!(
            "{}: no staging segments (.seg files) found",
            directory.display()
        );
    }
    let size = trace.write(output)?;
    eprintln!(
        "cairn: {} -> {} ({size} bytes)",
        describe(&trace),
        output.display()
    );
    Ok(())
}

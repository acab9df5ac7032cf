//! `cairn run`, `cairn lib` and `cairn merge`.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use cairn_trace::collect::{collect, RunInfo};

pub struct RunOptions {
    pub output: Option<PathBuf>,
    pub keep_staging: bool,
    pub quiet: bool,
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

pub fn run(options: RunOptions) -> Result<ExitCode> {
    let library = library_path()?;
    let program = &options.command[0];
    let output = match options.output {
        Some(path) => {
            if path.exists() && !options.quiet {
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
    let staging = output_directory.join(format!(".{output_name}.staging-{}", std::process::id()));
    std::fs::create_dir(&staging)
        .with_context(|| format!("cannot create {}", staging.display()))?;

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
    let run = RunInfo {
        writer: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        command: options
            .command
            .iter()
            .map(|argument| argument.as_encoded_bytes().to_vec())
            .collect(),
        exit_status: Some(code),
    };
    let trace = collect(&staging, run).with_context(|| {
        format!(
            "building the trace failed; the raw segments are kept in {}",
            staging.display()
        )
    })?;
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

pub fn merge(directory: &Path, output: &Path) -> Result<()> {
    let run = RunInfo {
        writer: format!("cairn {}", env!("CARGO_PKG_VERSION")),
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

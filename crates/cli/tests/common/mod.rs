//! Shared helpers: build the test programs, run them under `cairn run`, read the summary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub mod mpi;

pub fn cairn_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cairn"))
}

/// The preload library must sit beside the binary (`cargo build --workspace` puts it there).
pub fn library() -> PathBuf {
    let path = cairn_binary().with_file_name("libcairn.so");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace` before the tests",
        path.display()
    );
    path
}

pub fn programs_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
}

/// Compiles `tests/programs/<name>.c` (or `.f90`, with gfortran; `name` may name a
/// subdirectory, as `patterns/ior_posix`) into `directory` and returns the executable.
pub fn compile(name: &str, directory: &Path, extra: &[&str]) -> PathBuf {
    let fortran = programs_directory().join(format!("{name}.f90"));
    let (compiler, flags, source) = if fortran.exists() {
        ("gfortran", &["-O1", "-g", "-o"][..], fortran)
    } else {
        (
            "cc",
            &["-O1", "-fno-builtin", "-g", "-o"][..],
            programs_directory().join(format!("{name}.c")),
        )
    };
    let base = Path::new(name).file_name().expect("a program name");
    let output = directory.join(base);
    let status = Command::new(compiler)
        .args(flags)
        .arg(&output)
        .arg(&source)
        .args(extra)
        .status()
        .expect("the compiler runs");
    assert!(status.success(), "compiling {name}");
    output
}

/// Compiles `tests/programs/<name>.c` into a shared library.
pub fn compile_library(name: &str, directory: &Path) -> PathBuf {
    let source = programs_directory().join(format!("{name}.c"));
    let output = directory.join(format!("lib{name}.so"));
    let status = Command::new("cc")
        .args(["-O1", "-shared", "-fPIC", "-o"])
        .arg(&output)
        .arg(&source)
        .arg("-ldl")
        .status()
        .expect("cc runs");
    assert!(status.success(), "compiling {name}");
    output
}

/// The entry of `summary`'s only file whose path ends with `suffix`.
pub fn summary_file<'a>(summary: &'a Value, suffix: &str) -> &'a Value {
    let files = summary["files"].as_array().expect("files array");
    let matches: Vec<&Value> = files
        .iter()
        .filter(|file| {
            file["path"]
                .as_str()
                .is_some_and(|path| path.ends_with(suffix))
        })
        .collect();
    let paths: Vec<&Value> = files.iter().map(|file| &file["path"]).collect();
    assert_eq!(
        matches.len(),
        1,
        "exactly one file ending in {suffix}: {paths:#?}"
    );
    matches[0]
}

/// Flags to build a parallel HDF5 program with Debian's libhdf5-openmpi-dev.
pub const HDF5: [&str; 3] = [
    "-I/usr/include/hdf5/openmpi",
    "-L/usr/lib/x86_64-linux-gnu/hdf5/openmpi",
    "-lhdf5",
];

/// `tests/programs/patterns/hdf5_hyperslab.c` (collective H5Dwrite of a hyperslab per rank)
/// traced on 4 ranks of Open MPI into `directory`: the trace's path.
pub fn traced_hdf5(directory: &Path) -> PathBuf {
    let program = compile_mpi_with("patterns/hdf5_hyperslab", directory, &HDF5);
    let trace = directory.join("hdf5.cairn");
    succeeded(&mut mpirun_traced(4, &trace, &program, directory));
    trace
}

pub struct Traced {
    pub output: Output,
    pub trace: PathBuf,
    pub summary: Value,
}

impl Traced {
    pub fn exit_code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// The summary entry of the file whose path ends with `suffix`.
    pub fn file(&self, suffix: &str) -> &Value {
        summary_file(&self.summary, suffix)
    }

    /// Asserts that no note of the trace says events were lost reading blocks back.
    pub fn assert_no_block_lost(&self) {
        let diagnostics = self.summary["diagnostics"].as_array().unwrap();
        assert!(
            diagnostics
                .iter()
                .all(|note| !note.as_str().unwrap().contains("could not be read back")),
            "{diagnostics:?}"
        );
    }

    /// Asserts that every call's sites add up to its row of the calls table, count and
    /// bytes (a completion's sites once counted none of the bytes its receives got).
    pub fn assert_sites_add_up(&self) {
        let mut sums = std::collections::BTreeMap::<String, (u64, u64)>::new();
        for site in self.summary["call_sites"].as_array().unwrap() {
            let sum = sums
                .entry(site["call"].as_str().unwrap().to_string())
                .or_default();
            sum.0 += site["count"].as_u64().unwrap();
            sum.1 += site["bytes"].as_u64().unwrap();
        }
        let calls = self.summary["calls"].as_object().unwrap();
        let rows: std::collections::BTreeMap<String, (u64, u64)> = calls
            .iter()
            .map(|(call, row)| {
                let figure = |field: &str| row[field].as_u64().unwrap();
                (call.clone(), (figure("count"), figure("bytes")))
            })
            .collect();
        assert_eq!(sums, rows);
    }

    /// Asserts that the summary lists exactly these files (by path suffix, in any order).
    pub fn assert_files(&self, suffixes: &[&str]) {
        let paths = self.paths();
        assert_eq!(paths.len(), suffixes.len(), "files: {paths:#?}");
        for suffix in suffixes {
            assert!(
                paths.iter().any(|path| path.ends_with(suffix)),
                "{suffix} missing from {paths:#?}"
            );
        }
    }

    pub fn paths(&self) -> Vec<String> {
        self.summary["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|file| file["path"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

pub fn summary_json(trace: &Path, extra: &[&str]) -> Value {
    let arguments: Vec<&str> = ["--json"].iter().chain(extra).copied().collect();
    serde_json::from_str(&cairn_text("summary", &arguments, trace)).expect("summary --json is JSON")
}

/// Runs `cairn run -q -o <dir>/trace.cairn -- program args...` and reads the summary.
pub fn trace(directory: &Path, program: &Path, arguments: &[&str]) -> Traced {
    library();
    trace_with(&cairn_binary(), directory, program, arguments)
}

/// The release build of `cairn` (with its `libcairn.so`), when it is at least as new as
/// the build under test (`scripts/test.sh` builds both): what users run, for the tests
/// whose figures depend on the tracer's own speed (a slower tracer sees more timer
/// interrupts inside the calls it times, and timing statistics take more bytes).
pub fn release_cairn_binary() -> Option<PathBuf> {
    let debug = cairn_binary();
    let release = debug.parent()?.parent()?.join("release").join("cairn");
    let modified = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|data| data.modified())
            .ok()
    };
    let fresh = modified(&release)? >= modified(&debug)?
        && modified(&release.with_file_name("libcairn.so"))? >= modified(&library())?;
    fresh.then_some(release)
}

/// [`release_cairn_binary`] when it is fresh, else the build under test (its
/// `libcairn.so` built first): for tests that measure trace sizes.
pub fn measuring_cairn_binary() -> PathBuf {
    release_cairn_binary().unwrap_or_else(|| {
        library();
        cairn_binary()
    })
}

/// [`trace`] with a given `cairn` binary (and the `libcairn.so` beside it).
pub fn trace_with(binary: &Path, directory: &Path, program: &Path, arguments: &[&str]) -> Traced {
    let trace = directory.join("trace.cairn");
    let mut command = Command::new(binary);
    command
        .args(["run", "-q", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(program)
        .args(arguments);
    run_and_summarise(&mut command, trace)
}

/// Runs `command`, which writes the trace `trace`, and reads the trace's summary.
pub fn run_and_summarise(command: &mut Command, trace: PathBuf) -> Traced {
    let output = command.output().expect("the traced command starts");
    let summary = summary_json(&trace, &[]);
    Traced {
        output,
        trace,
        summary,
    }
}

/// Asserts each (call, count, bytes) of the summary's `calls` exactly.
pub fn assert_calls(calls: &Value, expected: &[(&str, u64, u64)]) {
    for (call, count, bytes) in expected {
        assert_eq!(
            calls[call]["count"].as_u64(),
            Some(*count),
            "{call}: {calls}"
        );
        assert_eq!(
            calls[call]["bytes"].as_u64(),
            Some(*bytes),
            "{call}: {calls}"
        );
    }
}

/// Asserts exact integer fields of a summary entry.
pub fn assert_fields(entry: &Value, expected: &[(&str, u64)]) {
    for (field, value) in expected {
        assert_eq!(
            entry[field].as_u64(),
            Some(*value),
            "field {field} of {}",
            entry["path"]
        );
    }
}

/// The real Python interpreter (not a version manager's shell shim), so the test traces
/// Python itself.
pub fn python() -> PathBuf {
    let output = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// Compiles `tests/programs/<name>.c` into a fresh directory and traces it with that
/// directory as its first argument (then `arguments`).
pub fn trace_program(
    name: &str,
    flags: &[&str],
    arguments: &[&str],
) -> (tempfile::TempDir, Traced) {
    let directory = tempfile::tempdir().unwrap();
    let program = compile(name, directory.path(), flags);
    let mut all = vec![directory.path().to_str().unwrap()];
    all.extend_from_slice(arguments);
    let traced = trace(directory.path(), &program, &all);
    (directory, traced)
}

/// Traces `tests/programs/<script>` under the real Python interpreter, with a fresh
/// directory as its argument, and checks that it succeeded.
pub fn trace_python(script: &str) -> (tempfile::TempDir, Traced) {
    let directory = tempfile::tempdir().unwrap();
    let script = programs_directory().join(script);
    let traced = trace(
        directory.path(),
        &python(),
        &[script.to_str().unwrap(), directory.path().to_str().unwrap()],
    );
    assert_eq!(
        traced.exit_code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&traced.output.stderr)
    );
    (directory, traced)
}

/// `cairn merge STAGING -o TRACE`, which must succeed, and the trace's summary.
pub fn merge_staging(staging: &Path, trace: PathBuf) -> Traced {
    let output = succeeded(
        Command::new(cairn_binary())
            .arg("merge")
            .arg(staging)
            .arg("-o")
            .arg(&trace),
    );
    let summary = summary_json(&trace, &[]);
    Traced {
        output,
        trace,
        summary,
    }
}

/// `tests/programs/<name>.c` compiled with Open MPI's `mpicc` into `directory` (`name` may
/// name a subdirectory, as `insights/rank_zero`).
pub fn compile_mpi(name: &str, directory: &Path) -> PathBuf {
    compile_mpi_with(name, directory, &[])
}

/// [`compile_mpi`] with more arguments after the source (include directories, libraries:
/// `-l` must follow the source for the linker to keep it).
pub fn compile_mpi_with(name: &str, directory: &Path, extra: &[&str]) -> PathBuf {
    let program = directory.join(Path::new(name).file_name().expect("a program name"));
    let status = Command::new("mpicc.openmpi")
        .args(["-O1", "-o"])
        .arg(&program)
        .arg(programs_directory().join(format!("{name}.c")))
        .args(extra)
        .status()
        .expect("mpicc.openmpi runs (scripts/install-deps.sh installs Open MPI)");
    assert!(status.success(), "compiling {name}");
    program
}

/// `mpirun.openmpi --oversubscribe -np RANKS cairn run -o TRACE -- PROGRAM DIRECTORY`, run as
/// root if need be.
pub fn mpirun_traced(ranks: u64, trace: &Path, program: &Path, directory: &Path) -> Command {
    let mut command = Command::new("mpirun.openmpi");
    command
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .arg(cairn_binary())
        .args(["run", "-o"])
        .arg(trace)
        .arg("--")
        .arg(program)
        .arg(directory);
    command
}

/// `tests/programs/<name>.c` compiled for Open MPI and run on `ranks` ranks under
/// `cairn run` with `directory` as its argument, which must succeed: the trace's path.
pub fn traced_mpi(name: &str, ranks: u64, directory: &Path) -> PathBuf {
    let program = compile_mpi(name, directory);
    library();
    let trace = program.with_extension("cairn");
    let output = mpirun_traced(ranks, &trace, &program, directory)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    trace
}

/// Runs `command`, which must succeed; its output.
pub fn succeeded(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The summary's count per call, less `MPI_Init` and `MPI_Finalize` (the runtime's, which
/// exports leave out with the runtime's noise).
pub fn program_call_counts(summary: &Value) -> std::collections::BTreeMap<String, u64> {
    summary["calls"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "MPI_Init" | "MPI_Finalize"))
        .map(|(name, call)| (name.clone(), call["count"].as_u64().unwrap()))
        .collect()
}

/// The summary's process ids, in order.
pub fn sorted_pids(summary: &Value) -> Vec<u64> {
    let mut pids: Vec<u64> = summary["process_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|process| process["pid"].as_u64().unwrap())
        .collect();
    pids.sort();
    pids
}

/// The offsets of every `call` (a positioned read or write) in `trace`, in order, as
/// `cairn dump --expand` gives them.
pub fn expanded_offsets(trace: &Path, call: &str) -> Vec<u64> {
    let opening = format!("{call}(");
    cairn_text("dump", &["--expand"], trace)
        .lines()
        .filter(|line| line.contains(&opening))
        .map(|line| {
            let at = line.split(" bytes @ ").nth(1).expect("an offset");
            at.split(')').next().unwrap().parse().unwrap()
        })
        .collect()
}

/// The text `cairn SUBCOMMAND EXTRA… TRACE` prints (`summary`, `dump`), which must succeed.
pub fn cairn_text(subcommand: &str, extra: &[&str], trace: &Path) -> String {
    let output = Command::new(cairn_binary())
        .arg(subcommand)
        .args(extra)
        .arg(trace)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A summary's event count, each call's count and bytes, and `file_fields` of each file.
pub fn summary_figures(summary: &Value, file_fields: &[&str]) -> Value {
    let files: Vec<Value> = summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| {
            file_fields
                .iter()
                .map(|field| (field.to_string(), file[*field].clone()))
                .collect::<serde_json::Map<_, _>>()
                .into()
        })
        .collect();
    let calls: serde_json::Map<String, Value> = summary["calls"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, call)| {
            (
                name.clone(),
                serde_json::json!([call["count"], call["bytes"]]),
            )
        })
        .collect();
    serde_json::json!({ "events": summary["events"], "files": files, "calls": calls })
}

/// Every exactly kept figure of a summary: per file (counts, bytes, offsets, access order,
/// size histograms and size statistics) and per call (count, bytes), and the event count —
/// not times.
pub fn every_exact_figure(summary: &Value) -> Value {
    summary_figures(
        summary,
        &[
            "path",
            "opens",
            "closes",
            "reads",
            "writes",
            "bytes_read",
            "bytes_written",
            "seeks",
            "syncs",
            "stats",
            "metas",
            "max_offset",
            "consecutive_reads",
            "consecutive_writes",
            "sequential_reads",
            "sequential_writes",
            "read_histogram",
            "write_histogram",
            "read_sizes",
            "write_sizes",
        ],
    )
}

/// Bytes of the records the tracer staged under `staging` (its segment files' chunks up
/// to their first empty slot): what the program's calls cost in staging, without the
/// chunks' unused room.
pub fn staged_record_bytes(staging: &Path) -> u64 {
    use cairn_format::segment::{
        decode_chunk_header, padded, CHUNK_BYTES, CHUNK_HEADER_BYTES, HEADER_BYTES,
        RECORD_HEADER_BYTES,
    };
    let mut total = 0;
    for entry in std::fs::read_dir(staging).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            total += staged_record_bytes(&path);
            continue;
        }
        if path.extension().is_none_or(|extension| extension != "seg") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let mut start = HEADER_BYTES as usize;
        while start + CHUNK_BYTES as usize <= bytes.len() {
            let chunk = &bytes[start..start + CHUNK_BYTES as usize];
            start += CHUNK_BYTES as usize;
            if decode_chunk_header(chunk).is_none() {
                continue;
            }
            let mut position = CHUNK_HEADER_BYTES;
            while position + RECORD_HEADER_BYTES <= chunk.len() {
                let word = u32::from_le_bytes(chunk[position..position + 4].try_into().unwrap());
                if word == 0 {
                    break;
                }
                position += RECORD_HEADER_BYTES + padded((word & 0x00ff_ffff) as usize);
            }
            total += (position - CHUNK_HEADER_BYTES) as u64;
        }
    }
    total
}

/// The results of the `fprintf` calls of an expanded dump (or part of one), in order.
pub fn fprintf_results(expanded: &str) -> Vec<u64> {
    expanded
        .lines()
        .filter(|line| line.contains("fprintf("))
        .map(|line| {
            let (_, result) = line.rsplit_once(") = ").unwrap();
            result.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

/// The bytes of the log at `path` and the lengths of its lines (each with its newline).
pub fn line_lengths(path: &Path) -> (Vec<u8>, Vec<u64>) {
    let log = std::fs::read(path).unwrap();
    let lines = log
        .split_inclusive(|byte| *byte == b'\n')
        .map(|line| line.len() as u64)
        .collect();
    (log, lines)
}

/// Asserts the trace's figures for the file whose path ends in `name`, `log` written from
/// its start a line a write: as many writes as `lines`, each right after the last, up to
/// its end.
pub fn assert_written_in_order(traced: &Traced, name: &str, log: &[u8], lines: u64) {
    assert_fields(
        traced.file(name),
        &[
            ("writes", lines),
            ("bytes_written", log.len() as u64),
            ("consecutive_writes", lines - 1),
            ("sequential_writes", lines - 1),
            ("max_offset", log.len() as u64),
        ],
    );
}

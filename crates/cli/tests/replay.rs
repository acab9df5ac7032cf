//! `cairn replay`: a traced program's POSIX and stdio calls re-issued from its trace, the
//! replay itself traced, and both traces' events compared call by call and file by file.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpi::Mpi;
use common::*;

/// (call, file, errno) → (count, bytes) of a trace's events on files under `prefix`, the
/// prefix taken off the paths: from `cairn export --format csv`'s events table.
fn calls_on_files(trace: &Path, prefix: &str) -> BTreeMap<(String, String, String), (u64, i64)> {
    calls_on_files_made(trace, prefix, true)
}

/// [`calls_on_files`], without the calls MPI-IO made below the program's (`with_subcalls`
/// false): how ROMIO/OMPIO aggregate a collective write varies from run to run.
fn calls_on_files_made(
    trace: &Path,
    prefix: &str,
    with_subcalls: bool,
) -> BTreeMap<(String, String, String), (u64, i64)> {
    let tables = trace.with_extension("tables");
    cairn_text(
        "export",
        &["--format", "csv", "-o", tables.to_str().unwrap()],
        trace,
    );
    let text = std::fs::read_to_string(tables.join("events.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (call, file, result, errno, class, subcall) = (
        column("call"),
        column("file"),
        column("result"),
        column("errno"),
        column("class"),
        column("subcall"),
    );
    let mut calls = BTreeMap::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        if !with_subcalls && cells[subcall] == "1" {
            continue;
        }
        let Some(path) = cells[file].strip_prefix(prefix) else {
            continue;
        };
        let entry: &mut (u64, i64) = calls
            .entry((
                cells[call].to_string(),
                path.to_string(),
                cells[errno].to_string(),
            ))
            .or_default();
        entry.0 += 1;
        if matches!(cells[class], "read" | "write") {
            entry.1 += cells[result].parse::<i64>().unwrap().max(0);
        }
    }
    calls
}

/// Traces `tests/programs/<name>.c`, replays its trace under `cairn run` (with
/// `--no-compute` if `fast`), and compares.
/// Traces `name`, replays its trace under `cairn run` and compares both traces' calls on
/// the program's files; gives back the directory, the trace and the replay's trace.
fn replayed_like_the_original(
    name: &str,
    arguments: &[&str],
    fast: bool,
) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (directory, traced) = trace_program(name, &[], arguments);
    assert_eq!(traced.exit_code(), Some(0));
    let root = directory.path().join("replay-root");
    let replay = directory.path().join("replay.cairn");
    let output = succeeded(
        Command::new(cairn_binary())
            .args(["run", "-q", "-o"])
            .arg(&replay)
            .arg("--")
            .arg(cairn_binary())
            .arg("replay")
            .args(if fast { &["--no-compute"][..] } else { &[] })
            .arg("--root")
            .arg(&root)
            .arg(&traced.trace),
    );
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!said.contains("not replayed"), "{said}");
    let prefix = format!("{}/", directory.path().display());
    let original = calls_on_files(&traced.trace, &prefix);
    let replayed = calls_on_files(
        &replay,
        &format!("{}{}/", root.display(), directory.path().display()),
    );
    assert!(!original.is_empty());
    assert_eq!(replayed, original, "{said}");
    (directory, traced.trace, replay)
}

#[test]
fn posix_calls_replay_call_by_call_and_file_by_file() {
    // tests/programs/posix_basic.c: open, 16 writes, a seek, 8 reads, pwrite, pread,
    // writev, fsync, fdatasync, ftruncate, fstat, close, stat, access, rename, unlink.
    replayed_like_the_original("posix_basic", &[], true);
}

#[test]
fn renames_to_a_neighbours_name_replay_with_the_names_recorded() {
    // tests/programs/patterns/metadata.c: 40 directories each renamed to the name the one
    // before left (mdtest's rename phase), their renames one folded loop keeping the new
    // name against the old one. A new name decoded one file off would leave other names
    // for the stats and rmdirs after it: they would fail in the replay. (The replay's own
    // descriptors move its opens' numbers by one here, so those are left out.)
    let (directory, traced) = trace_program("patterns/metadata", &[], &["40"]);
    assert_eq!(traced.exit_code(), Some(0));
    let dump = cairn_text("dump", &[], &traced.trace);
    assert!(
        dump.lines()
            .any(|line| line.trim_start().starts_with("rename(") && line.contains("×38")),
        "{dump}"
    );
    // The dump shows a loop's body once; what follows it names the files it named then
    // (it showed the loop's first iteration's: dir.mdtest.0.3, file.mdtest.0.1). (The
    // files' creation is one loop of 40 since a file touched for the first time is the
    // next of the thread's table; the read phase's last read follows a loop of 39.)
    for after_a_loop in ["rename(", "read("] {
        let line = dump
            .lines()
            .rfind(|line| line.starts_with(&format!("  {after_a_loop}")))
            .unwrap();
        let expected = if after_a_loop == "rename(" {
            "/tree.0/dir.mdtest.0.0-XX,"
        } else {
            "/tree.0/file.mdtest.0.39,"
        };
        assert!(line.contains(expected), "{line}");
    }
    let root = directory.path().join("replay-root");
    let replay = directory.path().join("replay.cairn");
    succeeded(
        Command::new(cairn_binary())
            .args(["run", "-q", "-o"])
            .arg(&replay)
            .arg("--")
            .arg(cairn_binary())
            .args(["replay", "--no-compute", "--root"])
            .arg(&root)
            .arg(&traced.trace),
    );
    let by_path = |trace: &Path, prefix: &str| {
        let mut calls = calls_on_files(trace, prefix);
        calls.retain(|(call, _, _), _| call != "open");
        calls
    };
    let prefix = format!("{}/", directory.path().display());
    let original = by_path(&traced.trace, &prefix);
    let replayed = by_path(&replay, &format!("{}{prefix}", root.display()));
    for call in [
        "mkdir", "stat", "rename", "rmdir", "unlink", "write", "read",
    ] {
        assert!(original.keys().any(|(name, _, _)| name == call), "{call}");
    }
    assert_eq!(replayed, original);
}

#[test]
fn forked_children_and_exec_successors_replay_with_the_descriptors_they_were_given() {
    // tests/programs/forks.c: the child, forked after its parent's 10 writes of 100 B,
    // writes 3 × 10 B through the parent's descriptor (23 writes, 2,030 B on parent.dat,
    // as recorded: the replay's child is forked from the parent's replay at that point).
    // tests/programs/execs.c: the second image writes 2 × 500 B through the descriptor the
    // first gave it, closes it, and its next open gets the same number (first.dat: 6
    // writes, 5,000 B; second.dat: 3 writes). Before, those calls went to /dev/null.
    // The replay's processes: `cairn replay`, the recorded parent (or both images, one
    // after the other) replayed in a child of it, and for forks.c that one's own child.
    for (name, arguments, replay_processes) in [("forks", &[][..], 3), ("execs", &["first"][..], 2)]
    {
        let (_directory, trace, replay) = replayed_like_the_original(name, arguments, true);
        let processes = |trace: &Path| summary_json(trace, &[])["processes"].as_u64();
        assert_eq!(processes(&trace), Some(2), "{name}");
        assert_eq!(processes(&replay), Some(replay_processes), "{name}");
    }
}

#[test]
fn in_place_the_replay_writes_the_recorded_paths_themselves() {
    // tests/programs/posix_basic.c's files, deleted, then made again where they were.
    let (directory, traced) = trace_program("posix_basic", &[], &[]);
    let prefix = format!("{}/", directory.path().display());
    let program_files = |trace: &Path| {
        let mut calls = calls_on_files(trace, &prefix);
        calls.retain(|(_, file, _), _| !file.contains(".cairn"));
        calls
    };
    let original = program_files(&traced.trace);
    for entry in std::fs::read_dir(directory.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && !path.to_string_lossy().contains(".cairn") {
            std::fs::remove_file(&path).unwrap();
        }
    }
    let replay = directory.path().join("replay.cairn");
    let output = succeeded(
        Command::new(cairn_binary())
            .args(["run", "-q", "-o"])
            .arg(&replay)
            .args(["--", cairn_binary().to_str().unwrap()])
            .args(["replay", "--in-place", "--no-compute"])
            .arg(&traced.trace),
    );
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.starts_with("cairn: replaying in place: the recorded files are overwritten\n"),
        "{said}"
    );
    assert!(!original.is_empty());
    assert_eq!(program_files(&replay), original, "{said}");
    // --in-place and --root name two places: refused.
    let output = Command::new(cairn_binary())
        .args(["replay", "--in-place", "--root", "/tmp"])
        .arg(&traced.trace)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn phases_the_program_marked_are_marked_again_by_a_traced_replay() {
    // tests/programs/patterns/phases.c: under `cairn run`, the replay calls the tracer's
    // marks, so the replay's trace attributes its calls to the same phases.
    let (_directory, trace, replay) = replayed_like_the_original("patterns/phases", &[], true);
    let named = |trace: &Path| -> Vec<serde_json::Value> {
        summary_json(trace, &[])["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|phase| phase["name"] != "")
            .map(|phase| {
                serde_json::json!([
                    phase["name"],
                    phase["occurrences"],
                    phase["calls"],
                    phase["bytes_read"],
                    phase["bytes_written"]
                ])
            })
            .collect()
    };
    let original = named(&trace);
    assert_eq!(original.len(), 3);
    assert_eq!(named(&replay), original);
}

#[test]
fn the_fidelity_report_gives_each_layer_and_process() {
    let (directory, traced) = trace_program("posix_basic", &[], &[]);
    let output = succeeded(
        Command::new(cairn_binary())
            .args(["replay", "--json", "--no-compute", "--root"])
            .arg(directory.path().join("root"))
            .arg(&traced.trace),
    );
    let fidelity: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // 38 calls; 8 reads of 4 KiB and a pread of 100 B; 16 writes of 4 KiB, a pwrite of
    // 100 B and a writev of 60 B: all moved again.
    assert_eq!(
        fidelity["layers"]["posix"],
        serde_json::json!({"calls": 38, "bytes_read": 32868, "bytes_written": 65696,
            "recorded_bytes_read": 32868, "recorded_bytes_written": 65696})
    );
    assert_eq!(
        fidelity["layers"].as_object().unwrap().len(),
        1,
        "{fidelity}"
    );
    let processes = fidelity["process_list"].as_array().unwrap();
    assert_eq!(processes.len(), 1);
    assert_eq!(
        processes[0]["pid"],
        traced.summary["process_list"][0]["pid"]
    );
    assert_eq!(processes[0]["calls"], 38);
    assert_eq!(fidelity["not_replayed"], serde_json::json!({}));
}

#[test]
fn stdio_calls_replay_call_by_call_and_file_by_file() {
    replayed_like_the_original("stdio", &[], true);
}

#[test]
fn threads_replay_as_threads_in_the_recorded_order() {
    // tests/programs/threads.c: the main thread opens a shared file, 8 threads each write a
    // file of their own and then 100 pwrites into the shared one, the main thread closes
    // it after joining them: replayed on the recorded timeline, the close comes last.
    replayed_like_the_original("threads", &[], false);
}

#[test]
fn folded_loops_replay_event_by_event() {
    // tests/programs/loops.c, 1,000 outer iterations: nested loops of seeks, reads, writes
    // and log appends, folded in the trace and expanded as they are replayed.
    replayed_like_the_original("loops", &["1000"], true);
}

// ---- MPI: `mpirun -np N cairn replay TRACE` ------------------------------------------------

/// (call → (count, bytes)) of a trace's MPI and MPI-IO calls, from its summary.
fn mpi_calls(trace: &Path) -> BTreeMap<String, (u64, u64)> {
    summary_json(trace, &[])["calls"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, call)| matches!(call["layer"].as_str(), Some("mpi" | "mpiio")))
        .map(|(name, call)| {
            (
                name.clone(),
                (
                    call["count"].as_u64().unwrap(),
                    call["bytes"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// `tests/programs/<name>.c` compiled for `mpi` and run on `ranks` ranks under
/// `mpirun … cairn run -q EXTRA… -o TRACE`, with [`program_arguments`]: the directory
/// (kept alive) and the trace.
fn traced_mpi_program(
    mpi: Mpi,
    name: &str,
    ranks: usize,
    arguments: &[&str],
    extra: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf) {
    traced_mpi_program_built(mpi, name, &[], ranks, arguments, extra)
}

/// [`traced_mpi_program`], compiled with `flags`.
fn traced_mpi_program_built(
    mpi: Mpi,
    name: &str,
    flags: &[&str],
    ranks: usize,
    arguments: &[&str],
    extra: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf) {
    let directory = tempfile::tempdir().unwrap();
    let program = directory.path().join(Path::new(name).file_name().unwrap());
    mpi.compile(name, &program, flags);
    let trace = directory.path().join("original.cairn");
    succeeded(
        mpi.mpirun(ranks)
            .arg(cairn_binary())
            .args(["run", "-q"])
            .args(extra)
            .arg("-o")
            .arg(&trace)
            .arg("--")
            .arg(&program)
            .args(program_arguments(directory.path(), arguments)),
    );
    (directory, trace)
}

/// `mpirun -np RANKS cairn run -q -o REPLAY -- cairn replay --no-compute EXTRA… --root ROOT
/// TRACE` under `mpi`, which must succeed: the replay's own trace (beside TRACE) and output.
fn replayed_traced(
    mpi: Mpi,
    ranks: usize,
    trace: &Path,
    root: &Path,
    extra: &[&str],
) -> (std::path::PathBuf, std::process::Output) {
    let replay = trace.with_file_name("replay.cairn");
    let output = succeeded(
        mpi.mpirun(ranks)
            .arg(cairn_binary())
            .args(["run", "-q", "-o"])
            .arg(&replay)
            .arg("--")
            .arg(cairn_binary())
            .args(["replay", "--no-compute"])
            .args(extra)
            .arg("--root")
            .arg(root)
            .arg(trace),
    );
    (replay, output)
}

/// `tests/programs/<name>.c` traced with `traced_with` on `ranks` ranks (`cairn run` under
/// its `mpirun`, arguments: the directory, then `arguments`; a program that wants another
/// order names the directory as `{dir}` itself), its trace replayed under
/// `cairn run` with `replayed_with`'s `mpirun`, and both traces compared: every MPI and
/// MPI-IO call's count and bytes, and every call on the program's files. The replay's
/// report (stderr).
fn mpi_replayed_like_the_original(
    traced_with: Mpi,
    replayed_with: Mpi,
    name: &str,
    ranks: usize,
    arguments: &[&str],
) -> String {
    let (directory, trace) = traced_mpi_program(traced_with, name, ranks, arguments, &[]);
    let root = directory.path().join("replay-root");
    let (replay, output) = replayed_traced(replayed_with, ranks, &trace, &root, &[]);
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!said.contains("not replayed"), "{said}");
    assert!(
        said.contains(&format!("{ranks} MPI ranks")),
        "one report, rank 0's: {said}"
    );
    let original = mpi_calls(&trace);
    assert!(!original.is_empty());
    assert_eq!(mpi_calls(&replay), original, "{said}");
    // The POSIX calls an MPI-IO call makes below it are the library's: compared only when
    // both runs used the same one.
    let on_files = |trace: &Path, prefix: &str| {
        let mut calls = calls_on_files(trace, prefix);
        // ROMIO polls its own AIO (inside MPI_Wait) as often as timing makes it.
        calls.retain(|(call, _, _), _| call != "aio_error");
        // An aggregator's read before a collective write (data sieving) reads what the file
        // holds at that moment, which depends on when the other ranks' non-blocking writes
        // landed: how many reads is the library's, their bytes are timing's (mpi_io_more:
        // 29,696 in one run, 25,600 in its replay, once under CI's load).
        for ((call, _, _), (_, bytes)) in calls.iter_mut() {
            if call == "pread" {
                *bytes = 0;
            }
        }
        if traced_with != replayed_with {
            calls.retain(|(call, _, _), _| call.starts_with("MPI_"));
        }
        calls
    };
    assert_eq!(
        on_files(
            &replay,
            &format!("{}{}/", root.display(), directory.path().display())
        ),
        on_files(&trace, &format!("{}/", directory.path().display())),
        "{said}"
    );
    said
}

/// The directory, then `arguments`; or `arguments` alone with `{dir}` replaced when one of
/// them names it.
fn program_arguments(directory: &Path, arguments: &[&str]) -> Vec<String> {
    let directory = directory.display().to_string();
    if arguments.iter().any(|argument| argument.contains("{dir}")) {
        arguments
            .iter()
            .map(|argument| argument.replace("{dir}", &directory))
            .collect()
    } else {
        std::iter::once(directory)
            .chain(arguments.iter().map(|argument| argument.to_string()))
            .collect()
    }
}

fn ring_and_mpi_io_replay_call_by_call_under(mpi: Mpi) {
    // tests/programs/mpi_ring_io.c: Isend/Irecv/Waitall round a ring, Allreduce, Barrier,
    // collective and independent MPI-IO on one shared file.
    let said = mpi_replayed_like_the_original(mpi, mpi, "mpi_ring_io", 4, &[]);
    // 4 × (3 × 5 × 3 ring calls + 3 Allreduce + Barrier + 7 MPI-IO calls); the bytes read
    // are the ring's 15 × 4 bytes and the 64 KiB block read back, per rank.
    assert!(said.contains("read 262384 of 262384 bytes"), "{said}");
}

under_both_mpis!(
    ring_and_mpi_io_replay_call_by_call,
    mpich_ring_and_mpi_io_replay_call_by_call,
    ring_and_mpi_io_replay_call_by_call_under
);

fn more_operations_replay_call_by_call_under(mpi: Mpi) {
    // tests/programs/mpi_more.c: Sendrecv, Ssend + Probe + Recv, Iprobe, a Test of a null
    // request, the rooted and all-to-all collectives, Ibarrier/Ibcast/Iallreduce completed
    // by Wait/Waitany/Waitsome.
    mpi_replayed_like_the_original(mpi, mpi, "mpi_more", 4, &[]);
    // tests/programs/mpi_received.c: receives posted larger than what arrives, completed by
    // Waitall, a Test loop (its 20,000-odd Tests replayed one for one), Waitany, Waitsome.
    mpi_replayed_like_the_original(mpi, mpi, "mpi_received", 4, &[]);
}

under_both_mpis!(
    more_operations_replay_call_by_call,
    mpich_more_operations_replay_call_by_call,
    more_operations_replay_call_by_call_under
);

#[test]
fn file_per_process_and_a_halo_grid_replay_call_by_call() {
    // tests/programs/mpi_parts.c: each rank writes its own file (POSIX under MPI).
    mpi_replayed_like_the_original(Mpi::OpenMpi, Mpi::OpenMpi, "mpi_parts", 2, &[]);
    // tests/programs/patterns/halo2d.c on a 3 × 3 grid: corner, edge and interior ranks
    // exchange with 2, 3 or 4 neighbours, 20 steps, an Allreduce each, rank 0's log.
    mpi_replayed_like_the_original(Mpi::OpenMpi, Mpi::OpenMpi, "patterns/halo2d", 9, &["20"]);
}

#[test]
fn requests_completed_out_of_order_replay_without_deadlock() {
    // tests/programs/patterns/wait_order.c: the second of two receives is waited for first,
    // and the first arrives only after an answer to the second. The trace keeps how many
    // requests each wait named, not which: the replay waits for requests that are done.
    let said = mpi_replayed_like_the_original(
        Mpi::OpenMpi,
        Mpi::OpenMpi,
        "patterns/wait_order",
        4,
        &["25"],
    );
    // 2 pairs × 25 rounds × (2 Irecv + 2 Wait + Send) + (2 Send + Recv), 4 Barriers.
    assert!(said.contains("replayed 404 calls"), "{said}");
}

#[test]
fn a_trace_taken_with_open_mpi_replays_under_mpich() {
    // A job's communication and I/O re-run on another machine's MPI: the trace keeps bytes,
    // peers and tags, not one library's handles.
    mpi_replayed_like_the_original(Mpi::OpenMpi, Mpi::Mpich, "mpi_ring_io", 4, &[]);
}

fn fortran_sub_communicators_replay_call_by_call_under(mpi: Mpi) {
    // tests/programs/patterns/subcomms_fortran.f90: a split into rows, a duplicate and a
    // periodic Cartesian ring made from Fortran (under Open MPI its Fortran layer calls
    // PMPI_*, so the Fortran hooks follow them), a collective on each, each freed. Every
    // communicator is made again and every call replays with its count and bytes.
    // Per rank: a split, a cart (made again as a split), a dup, each with its share and
    // freed; Allreduces of one double on the row and the dup, a Barrier on the ring.
    communicators_made_again(
        mpi,
        "patterns/subcomms_fortran",
        &[
            ("MPI_Comm_split", (8, 0)),
            ("MPI_Comm_dup", (4, 0)),
            ("MPI_Comm_made", (12, 0)),
            ("MPI_Comm_free", (12, 0)),
            ("MPI_Allreduce", (8, 64)),
        ],
    );
}

under_both_mpis!(
    fortran_sub_communicators_replay_call_by_call_under_open_mpi,
    fortran_sub_communicators_replay_call_by_call_under_mpich,
    fortran_sub_communicators_replay_call_by_call_under
);

#[test]
fn the_ring_replays_call_by_call_on_sixteen_and_on_two_ranks() {
    // The ends of the range replays are promised for: 16 ranks under Open MPI (a rank per
    // eighth of a core here), 2 under MPICH.
    mpi_replayed_like_the_original(Mpi::OpenMpi, Mpi::OpenMpi, "mpi_ring_io", 16, &[]);
    mpi_replayed_like_the_original(Mpi::Mpich, Mpi::Mpich, "mpi_ring_io", 2, &[]);
}

#[test]
fn an_mpi_trace_outside_mpirun_says_how_to_replay_it() {
    let (directory, trace) = traced_mpi_program(Mpi::OpenMpi, "mpi_parts", 2, &[], &[]);
    let output = Command::new(cairn_binary())
        .args(["replay", "--root"])
        .arg(directory.path().join("root"))
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        said.trim_end(),
        format!(
            "cairn: error: replay: the trace has 2 MPI ranks: run `mpirun -np 2 cairn replay …` (or --dry-run)"
        ),
    );
    // On the wrong rank count, every rank says so and none waits for the others.
    let output = Mpi::OpenMpi
        .mpirun(3)
        .arg(cairn_binary())
        .args(["replay", "--root"])
        .arg(directory.path().join("root"))
        .arg(&trace)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "the trace has 2 MPI ranks, the replay was launched on 3 (--scale-ranks 3 replays it on 3)"
        ),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn a_trace_of_four_ranks_replays_as_the_program_runs_on_eight_and_three_under(mpi: Mpi) {
    // tests/programs/patterns/slabs.c: a 1-D decomposition (halos with both neighbours but
    // past the ends, an Allreduce a step, rank 0's log, a file per rank named as IOR's -F
    // names them, one shared file at rank × 64 KiB). Traced on 4 ranks and replayed with
    // --scale-ranks on 8 and on 3, the replay's own trace must be the program's on 8 and
    // on 3: every MPI call's count and bytes, every call on every file.
    scaled_like_the_program(mpi, &[], 6);
}

fn scaled_like_the_program(mpi: Mpi, flags: &[&str], steps: usize) {
    let steps = steps.to_string();
    let (directory, trace) =
        traced_mpi_program_built(mpi, "patterns/slabs", flags, 4, &[&steps], &[]);
    for ranks in [8, 3] {
        // The program itself on `ranks` ranks, in a directory of its own as fresh as the
        // replay's root (MPI-IO's probes of a file that exists differ).
        let program = directory.path().join("slabs");
        let reference = directory.path().join(format!("program-{ranks}.cairn"));
        let fresh = directory.path().join(format!("program-{ranks}"));
        std::fs::create_dir(&fresh).unwrap();
        succeeded(
            mpi.mpirun(ranks)
                .arg(cairn_binary())
                .args(["run", "-q", "-o"])
                .arg(&reference)
                .arg("--")
                .arg(&program)
                .arg(&fresh)
                .arg(&steps),
        );
        if ranks == 8 {
            // The program's own trace on 8 ranks, as dump shows it: rank 0 (its log) has
            // a part of its own, the halos of ranks 1-7 another, and inside it the ranks
            // with an east neighbour a part named by their own ranks (a nested part's
            // ranks are stored from the enclosing part's first rank; dump showed them as
            // 0-5). The last rank's `MPI_Waitall` of 2 requests is no part of its own
            // (it was `only ranks 7`): kept as every request posted, it is the others'
            // Waitall of 4.
            let text = cairn_text("dump", &[], &reference);
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|line| {
                    line.starts_with("only ranks 1-") || line.starts_with("only ranks 7 ")
                })
                .collect();
            assert!(parts.contains(&"only ranks 1-7 {"), "{text}");
            assert!(parts.contains(&"only ranks 1-6 {"), "{text}");
            assert!(!parts.contains(&"only ranks 7 {"), "{text}");
            assert!(!text.contains("only ranks 0-5 {"), "{text}");
            // A part rank 0 (the rank shown) is not in names files as its own first rank
            // resolved them: ranks 1-7 open and write the shared file too (dump named
            // their opens `?` — rank 0's state had no such new file — and their
            // collective write after rank 0's own testFile.00000001).
            let named = |call: &str| {
                text.lines()
                    .filter(|line| line.trim_start().starts_with(call))
                    .map(|line| line.contains("/shared.dat,"))
                    .collect::<Vec<bool>>()
            };
            for call in [
                "MPI_File_open(",
                "MPI_File_write_at_all(",
                "MPI_File_close(",
            ] {
                let lines = named(call);
                assert!(
                    !lines.is_empty() && lines.iter().all(|named| *named),
                    "{call}: {text}"
                );
            }
        }
        let root = directory.path().join(format!("root-{ranks}"));
        let scale = ranks.to_string();
        let (replay, output) =
            replayed_traced(mpi, ranks, &trace, &root, &["--scale-ranks", &scale]);
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            said.contains(&format!("a trace of 4 ranks replayed on {ranks}")),
            "{said}"
        );
        assert!(!said.contains("kept the name"), "{said}");
        assert!(!said.contains("not replayed"), "{said}");
        assert_eq!(
            mpi_calls(&replay),
            mpi_calls(&reference),
            "{ranks} ranks: {said}"
        );
        let prefix = format!("{}/", directory.path().display());
        let replayed = calls_on_files_made(&replay, &format!("{}{prefix}", root.display()), false);
        let prefix = format!("{}/", fresh.display());
        let mut files: Vec<String> = replayed.keys().map(|(_, file, _)| file.clone()).collect();
        files.dedup();
        let per_rank: Vec<String> = (0..ranks).map(|r| format!("testFile.{r:08}")).collect();
        assert!(
            per_rank.iter().all(|name| files.contains(name)),
            "{files:?}"
        );
        assert_eq!(
            replayed,
            calls_on_files_made(&reference, &prefix, false),
            "{ranks} ranks: {said}"
        );
    }
}

under_both_mpis!(
    a_trace_of_four_ranks_replays_as_the_program_runs_on_eight_and_three_under_open_mpi,
    a_trace_of_four_ranks_replays_as_the_program_runs_on_eight_and_three_under_mpich,
    a_trace_of_four_ranks_replays_as_the_program_runs_on_eight_and_three_under
);

#[test]
fn the_ends_of_a_decomposition_scale_when_they_share_a_stream() {
    // Built with -O2 and run 200 steps, slabs.c's first and last ranks share one stream
    // (each end a part of one rank: no slope says how its partners follow the rank) and
    // the interior ranks another: the last rank's partner is then its left neighbour.
    scaled_like_the_program(Mpi::OpenMpi, &["-O2"], 200);
}

#[test]
fn what_the_trace_cannot_say_at_another_rank_count_is_refused_with_the_reason() {
    // A 2-D halo on a 2 × 2 grid: its parts (the ranks with a west neighbour, 1 and 3,
    // the first in the program's order and the trace's; with an east one, 0 and 2) depend
    // on the grid's shape. Recursive doubling on 4 ranks:
    // its partners double round after round, and 8 ranks run a round more. Every rank
    // stops, nothing waits.
    let cases = [
        ("patterns/halo2d", "only ranks 1,3"),
        (
            "patterns/doubling",
            "partners double (or halve) round after round (rank XOR 1, 2, 4…: recursive doubling), and how many rounds follows the rank count: a trace of 4 ranks does not say how 8 run",
        ),
    ];
    for (name, reason) in cases {
        let (directory, trace) = traced_mpi_program(Mpi::OpenMpi, name, 4, &["5"], &[]);
        let output = Mpi::OpenMpi
            .mpirun(8)
            .arg(cairn_binary())
            .args(["replay", "--no-compute", "--scale-ranks", "8", "--root"])
            .arg(directory.path().join("root"))
            .arg(&trace)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{said}");
        assert!(
            said.contains("--scale-ranks: ") && said.contains(reason),
            "{name}: {said}"
        );
    }
}

fn split_collectives_seeks_and_lengths_replay_call_by_call_under(mpi: Mpi) {
    // tests/programs/mpi_io_more.c: iwrite_at + Wait, shared and ordered writes, a split
    // collective write (begin/end), seek, get_size, preallocate, set_size, delete.
    mpi_replayed_like_the_original(mpi, mpi, "mpi_io_more", 4, &[]);
}

under_both_mpis!(
    split_collectives_seeks_and_lengths_replay_call_by_call,
    mpich_split_collectives_seeks_and_lengths_replay_call_by_call,
    split_collectives_seeks_and_lengths_replay_call_by_call_under
);

#[test]
fn every_collective_and_mpi_io_form_replays_and_nothing_outlives_its_file() {
    // tests/programs/mpi_forms.c: the v-, w- and non-blocking collectives (counts
    // exchanged through PMPI when posted), every split collective, non-blocking collective
    // and shared-pointer MPI-IO form, seeks of the individual and shared pointers, matched
    // probes, sub-communicators. What the replayer does not know is said: datatypes.
    let (directory, trace) = traced_mpi_program(Mpi::OpenMpi, "mpi_forms", 4, &[], &[]);
    let root = directory.path().join("replay-root");
    let (replay, output) = replayed_traced(Mpi::OpenMpi, 4, &trace, &root, &[]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let not_replayed: Vec<&str> = said
        .lines()
        .filter_map(|line| line.strip_prefix("cairn: not replayed: "))
        .filter(|line| !line.contains("MPI_Type_"))
        .collect();
    assert_eq!(not_replayed, [] as [&str; 0], "{said}");
    assert!(!said.contains("had not finished"), "{said}");
    let replayed_calls = |trace: &Path| -> BTreeMap<String, (u64, u64)> {
        mpi_calls(trace)
            .into_iter()
            .filter(|(call, _)| {
                ![
                    "MPI_Cart",
                    "MPI_Comm",
                    "MPI_Type",
                    "MPI_Improbe",
                    "MPI_Imrecv",
                    "MPI_M",
                ]
                .iter()
                .any(|prefix| call.starts_with(prefix))
            })
            .collect()
    };
    let original = replayed_calls(&trace);
    let collectives = [
        "MPI_Alltoallw",
        "MPI_Ialltoallw",
        "MPI_Igatherv",
        "MPI_Iscatterv",
        "MPI_Iallgatherv",
        "MPI_Ialltoallv",
        "MPI_Ireduce_scatter",
        "MPI_Ireduce_scatter_block",
        "MPI_Iscan",
        "MPI_Iexscan",
        "MPI_File_write_all_begin",
        "MPI_File_iread_shared",
    ];
    for call in collectives {
        assert_eq!(original[call].0, 4, "{call}");
    }
    assert_eq!(original["MPI_File_seek_shared"].0, 8);
    // Every other call, its count and bytes, issued again — buffered and ready sends as
    // standard ones (no buffer is attached in the replay, a ready send's receive may not be
    // posted yet); matched probes keep their messages for the receives that follow.
    let normalised = |mut calls: BTreeMap<String, (u64, u64)>| {
        // Communicators made again as splits (see sub_communicators_replay_…).
        for made_as_split in ["MPI_Comm_create", "MPI_Cart_create"] {
            if let Some((count, _)) = calls.remove(made_as_split) {
                calls.entry("MPI_Comm_split".into()).or_default().0 += count;
            }
        }
        for form in ["MPI_Ibsend", "MPI_Irsend"] {
            if let Some((count, bytes)) = calls.remove(form) {
                let standard = calls.entry("MPI_Isend".into()).or_default();
                standard.0 += count;
                standard.1 += bytes;
            }
        }
        calls
    };
    assert_eq!(
        normalised(replayed_calls(&replay)),
        normalised(original),
        "{said}"
    );
}

fn sub_communicators_replay_with_their_members_in_order_under(mpi: Mpi) {
    // tests/programs/patterns/subcomms.c on a 2 × 2 grid: row and column communicators
    // (the columns in reverse order), a dup, the even ranks' communicator (MPI_Comm_create:
    // the odd ranks get MPI_COMM_NULL), a periodic ring (MPI_Cart_create), the node
    // (MPI_Comm_split_type, as IOR counts nodes), and collectives
    // and Sendrecvs on each. The tracer keeps each new communicator's rank 0 (as a world
    // rank) and this rank's rank in it, so the replay makes them again as splits; a free
    // keeps the communicator it freed, so the replay frees the same.
    // Per rank: 2 row/column splits, a dup, the evens' create, the ring's cart and the
    // node's split_type (6 communicators made, each with its share, and freed: 4 × 5 and
    // the 2 evens'); Allreduces of 8 (rows), 4 (evens only) and 4 (node) bytes, a Bcast of
    // 64, Sendrecvs of 16 and 32 bytes.
    communicators_made_again(
        mpi,
        "patterns/subcomms",
        &[
            ("MPI_Comm_split", (20, 0)),
            ("MPI_Comm_made", (24, 0)),
            ("MPI_Comm_free", (22, 0)),
            ("MPI_Allreduce", (10, 56)),
            ("MPI_Bcast", (4, 256)),
            ("MPI_Sendrecv", (8, 192)),
        ],
    );
}

/// `program` traced on 4 ranks under `mpi`, its `expected` (call, (count, bytes)) in the
/// trace (communicators counted as the replay makes them again), and its replay, traced:
/// every communicator made again, every MPI call with its count and bytes.
fn communicators_made_again(mpi: Mpi, program: &str, expected: &[(&str, (u64, u64))]) {
    let (directory, trace) = traced_mpi_program(mpi, program, 4, &[], &[]);
    let root = directory.path().join("replay-root");
    let (replay, output) = replayed_traced(mpi, 4, &trace, &root, &[]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!said.contains("not replayed"), "{said}");
    let original = made_as_splits(mpi_calls(&trace));
    for (call, figures) in expected {
        assert_eq!(original[*call], *figures, "{call}");
    }
    assert_eq!(made_as_splits(mpi_calls(&replay)), original, "{said}");
}

/// A trace's MPI calls as a replay makes its communicators again: a dup as a dup, the
/// others as splits of the same parent.
fn made_as_splits(mut calls: BTreeMap<String, (u64, u64)>) -> BTreeMap<String, (u64, u64)> {
    for made_as_split in ["MPI_Comm_create", "MPI_Cart_create", "MPI_Comm_split_type"] {
        if let Some((count, _)) = calls.remove(made_as_split) {
            calls.entry("MPI_Comm_split".into()).or_default().0 += count;
        }
    }
    calls
}

under_both_mpis!(
    sub_communicators_replay_with_their_members_in_order,
    mpich_sub_communicators_replay_with_their_members_in_order,
    sub_communicators_replay_with_their_members_in_order_under
);

#[test]
fn a_file_length_set_through_mpi_io_replays() {
    // tests/programs/patterns/file_length.c (HDF5's MPI-IO driver sets the file's length at
    // close): 4 ranks write 4 KiB each, preallocate 64 KiB, cut the file to 15,384 bytes.
    let (directory, trace) = traced_mpi_program(Mpi::OpenMpi, "patterns/file_length", 4, &[], &[]);
    let recorded = directory.path().join("sized.h5");
    assert_eq!(std::fs::metadata(&recorded).unwrap().len(), 15_384);
    let root = directory.path().join("replay-root");
    let (replay, output) = replayed_traced(Mpi::OpenMpi, 4, &trace, &root, &[]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!said.contains("not replayed"), "{said}");
    assert_eq!(mpi_calls(&replay), mpi_calls(&trace), "{said}");
    // The length the trace kept, set again (without it the blocks' 16,384 bytes stay).
    let replayed = PathBuf::from(format!("{}{}", root.display(), recorded.display()));
    assert_eq!(std::fs::metadata(&replayed).unwrap().len(), 15_384);
}

#[test]
fn a_benchmarks_copy_of_the_world_and_a_file_rank_0_creates_alone_replay() {
    // tests/programs/patterns/comm_copy.c, IOR's pattern: collectives on a copy of the
    // world every rank made alike (MPI_Comm_create with the world's group: made again as a
    // split, and freed again), rank 0 opening the file alone over MPI_COMM_SELF before all
    // open it over the copy.
    let (directory, trace) = traced_mpi_program(Mpi::OpenMpi, "patterns/comm_copy", 4, &["8"], &[]);
    let root = directory.path().join("replay-root");
    let (replay, output) = replayed_traced(Mpi::OpenMpi, 4, &trace, &root, &["--json"]);
    let fidelity: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(fidelity["not_replayed"], serde_json::json!({}));
    let mut original = mpi_calls(&trace);
    assert_eq!(original.remove("MPI_Comm_create"), Some((4, 0)));
    original.insert("MPI_Comm_split".into(), (4, 0));
    // 4 ranks × 8 blocks of 64 KiB written and read back, rank 0's extra open and close.
    assert_eq!(original["MPI_File_write_at"], (32, 32 * 65536));
    assert_eq!(original["MPI_File_open"], (5, 0));
    assert_eq!(mpi_calls(&replay), original);
    assert_eq!(
        calls_on_files(
            &replay,
            &format!("{}{}/", root.display(), directory.path().display())
        ),
        calls_on_files(&trace, &format!("{}/", directory.path().display()))
    );
}

#[test]
fn the_seed_chooses_the_draws_from_histograms_and_every_rank_agrees() {
    // tests/programs/patterns/irregular.c at precision 0 on 8 ranks. What a replay would
    // issue (--dry-run, every rank's calls) is the same for the same seed and differs
    // between seeds; replayed under mpirun with --seed 7, every rank draws alike: the
    // recorded messages, each received once, bytes within 5%.
    let ranks = 8;
    let (directory, trace) = traced_mpi_program(
        Mpi::OpenMpi,
        "patterns/irregular",
        ranks,
        &["20", "{dir}/irregular.log"],
        &["--precision", "0"],
    );
    let dry = |seed: &[&str]| {
        let output = succeeded(
            Command::new(cairn_binary())
                .args(["replay", "--dry-run"])
                .args(seed)
                .arg("--root")
                .arg(directory.path().join("dry"))
                .arg(&trace),
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let default = dry(&[]);
    assert!(default.contains("MPI_Isend"));
    assert_eq!(dry(&[]), default);
    let seven = dry(&["--seed", "7"]);
    assert_eq!(dry(&["--seed", "7"]), seven);
    assert_ne!(seven, default);
    let root = directory.path().join("replay-root");
    let (replay, _) = replayed_traced(Mpi::OpenMpi, ranks, &trace, &root, &["--seed", "7"]);
    irregular_messages_replayed(&trace, &replay, ranks, 20);
}

/// The irregular program's trace of `steps` steps on `ranks` ranks at precision 0 and its
/// replay: each rank sent a message a step, each received once by a receive derived
/// from its sender's draws, and the bytes sent are the recorded ones within 5%.
fn irregular_messages_replayed(trace: &Path, replay: &Path, ranks: usize, steps: u64) {
    let (recorded, replayed) = (mpi_calls(trace), mpi_calls(replay));
    let messages = ranks as u64 * steps;
    assert_eq!(recorded["MPI_Isend"].0, messages);
    assert_eq!(replayed["MPI_Isend"].0, messages, "{ranks} ranks");
    assert_eq!(replayed["MPI_Irecv"].0, messages, "{ranks} ranks");
    let (sent, was) = (
        replayed["MPI_Isend"].1 as f64,
        recorded["MPI_Isend"].1 as f64,
    );
    assert!(
        (sent - was).abs() <= 0.05 * was,
        "{ranks} ranks: {sent} bytes sent, {was} recorded"
    );
}

#[test]
fn an_irregular_program_replays_exactly_and_from_its_histograms_without_deadlock() {
    // tests/programs/patterns/irregular.c: two rank groups with jittering message sizes and
    // a solver loop whose count changes every step; lossless, it replays call by call.
    mpi_replayed_like_the_original(
        Mpi::OpenMpi,
        Mpi::OpenMpi,
        "patterns/irregular",
        4,
        &["10", "{dir}/irregular.log"],
    );
    // At precision 0 (sizes, peers and loop counts in histograms) on 4, 8 and 16 ranks:
    // every rank draws every rank's sends alike and posts the receives they need;
    // collectives are rank 0's. It ends (no deadlock), sends exactly the recorded number
    // of messages, and moves the recorded bytes within 5% — with two rank groups' sizes
    // (4 and 16 KiB) in some shared histograms, which each rank's share of the merged
    // statistics and well-spread draws keep from drifting.
    for ranks in [4, 8, 16] {
        let (directory, trace) = traced_mpi_program(
            Mpi::OpenMpi,
            "patterns/irregular",
            ranks,
            &["20", "{dir}/irregular.log"],
            &["--precision", "0"],
        );
        let root = directory.path().join("replay-root");
        let (replay, _) = replayed_traced(Mpi::OpenMpi, ranks, &trace, &root, &[]);
        irregular_messages_replayed(&trace, &replay, ranks, 20);
    }
}

//! `cairn replay`: a traced program's POSIX and stdio calls re-issued from its trace, the
//! replay itself traced, and both traces' events compared call by call and file by file.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;

/// (call, file, errno) → (count, bytes) of a trace's events on files under `prefix`, the
/// prefix taken off the paths: from `cairn export --format csv`'s events table.
fn calls_on_files(trace: &Path, prefix: &str) -> BTreeMap<(String, String, String), (u64, i64)> {
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
    let (call, file, result, errno, class) = (
        column("call"),
        column("file"),
        column("result"),
        column("errno"),
        column("class"),
    );
    let mut calls = BTreeMap::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
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
fn replayed_like_the_original(name: &str, arguments: &[&str], fast: bool) {
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
}

#[test]
fn posix_calls_replay_call_by_call_and_file_by_file() {
    // tests/programs/posix_basic.c: open, 16 writes, a seek, 8 reads, pwrite, pread,
    // writev, fsync, fdatasync, ftruncate, fstat, close, stat, access, rename, unlink.
    replayed_like_the_original("posix_basic", &[], true);
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

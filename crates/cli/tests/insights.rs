//! Insights (`cairn summary`, `--json`, the report): each program of
//! tests/programs/insights/ shows one well-known I/O problem and raises exactly its insight;
//! a well-behaved MPI-IO program raises none.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// The insights `cairn summary --json` raises on `trace` (with a thresholds file holding
/// `thresholds`, if any), by id.
fn raised(trace: &Path, thresholds: Option<&str>) -> (Vec<String>, Value) {
    let summary = match thresholds {
        None => summary_json(trace, &[]),
        Some(json) => {
            let file = trace.with_extension("thresholds.json");
            std::fs::write(&file, json).unwrap();
            summary_json(trace, &["--thresholds", file.to_str().unwrap()])
        }
    };
    let insights = summary["insights"].as_array().unwrap().clone();
    let ids = insights
        .iter()
        .map(|insight| insight["id"].as_str().unwrap().to_string())
        .collect();
    (ids, Value::Array(insights))
}

fn traced(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (directory, traced) = trace_program(&format!("insights/{name}"), &[], &[]);
    assert_eq!(traced.exit_code(), Some(0), "{name}");
    (directory, traced.trace)
}

#[test]
fn small_requests_are_named_with_their_file_and_call_site() {
    let (_directory, trace) = traced("small_requests");
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, ["small_requests"], "{insights}");
    assert_eq!(insights[0]["level"], "high");
    assert!(insights[0]["files"][0]
        .as_str()
        .unwrap()
        .ends_with("/records.dat"));
    assert!(
        insights[0]["call_sites"][0]
            .as_str()
            .unwrap()
            .contains("main → write"),
        "{insights}"
    );
    // The text summary says it too, with what to do.
    let text = cairn_text("summary", &[], &trace);
    assert!(
        text.contains("[HIGH] small_requests: 2000 of 2000 reads and writes (100.0%)"),
        "{text}"
    );
    assert!(text.contains("what to do: gather small requests"), "{text}");
}

#[test]
fn requests_off_block_boundaries_are_misaligned() {
    let (_directory, trace) = traced("misaligned");
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, ["misaligned"], "{insights}");
    assert!(
        insights[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("20 of 20 POSIX reads and writes (100.0%) start off a 4096-byte boundary"),
        "{insights}"
    );
    // Aligned at 512 bytes, the same writes are not.
    let (ids, _) = raised(&trace, Some(r#"{"alignment_bytes": 512}"#));
    assert_eq!(ids, Vec::<String>::new());
    // Beyond the events limit, alignment is not judged, and the summary says so.
    let summary = summary_json(&trace, &[]);
    assert_eq!(
        summary["files"][0]["alignment"],
        serde_json::json!({"accesses": 20, "misaligned": 20})
    );
    let file = trace.with_extension("limit.json");
    std::fs::write(&file, r#"{"alignment_check_events": 1}"#).unwrap();
    let limited = summary_json(&trace, &["--thresholds", file.to_str().unwrap()]);
    assert_eq!(limited["insights"], serde_json::json!([]));
    assert!(limited["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|note| note
            .as_str()
            .unwrap()
            .starts_with("misaligned requests not judged")));
}

#[test]
fn random_access_with_large_requests_is_random_access_only() {
    let (_directory, trace) = traced("random_access");
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, ["random_access"], "{insights}");
}

#[test]
fn bulk_data_through_stdio_is_said() {
    let (_directory, trace) = traced("stdio_heavy");
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, ["stdio"], "{insights}");
    assert!(insights[0]["files"][0]
        .as_str()
        .unwrap()
        .ends_with("/output.dat"));
}

#[test]
fn reading_a_file_three_times_is_redundant() {
    let (_directory, trace) = traced("redundant_reads");
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, ["redundant_reads"], "{insights}");
    assert!(insights[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("2097152 bytes were read again"));
}

#[test]
fn metadata_time_is_judged_against_the_thresholds_file() {
    let (_directory, trace) = traced("metadata_heavy");
    // 1,000 small files: well under Drishti's 30 s, and exactly 1,000 small requests (the
    // rule wants more).
    assert_eq!(raised(&trace, None).0, Vec::<String>::new());
    let (ids, insights) = raised(&trace, Some(r#"{"metadata_seconds": 0.000001}"#));
    assert_eq!(ids, ["metadata_time"], "{insights}");
    // A field the thresholds do not have is an error, said in one line.
    let file = trace.with_extension("bad.json");
    std::fs::write(&file, r#"{"metadata_secs": 1}"#).unwrap();
    let output = std::process::Command::new(cairn_binary())
        .args(["summary", "--thresholds", file.to_str().unwrap()])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("not a thresholds file"), "{said}");
}

#[test]
fn rank_zero_doing_all_the_io_is_rank_zero_not_imbalance() {
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("insights/rank_zero", 4, directory.path());
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, ["rank_zero"], "{insights}");
    assert_eq!(insights[0]["ranks"], serde_json::json!([0]));
}

#[test]
fn a_short_log_of_rank_zero_raises_nothing() {
    // small_log.c: rank 0 writes 20 lines (1.2 KB) through stdio; all the job's bytes,
    // but too few to matter. With no volume floor the same trace is "rank_zero" and "stdio".
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("insights/small_log", 4, directory.path());
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, Vec::<String>::new(), "{insights}");
    let (ids, insights) = raised(&trace, Some(r#"{"volume_bytes": 0}"#));
    assert_eq!(ids, ["rank_zero", "stdio"], "{insights}");
}

#[test]
fn one_heavy_rank_is_imbalance() {
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("insights/rank_imbalance", 4, directory.path());
    let (ids, insights) = raised(&trace, None);
    assert_eq!(ids, ["rank_imbalance"], "{insights}");
    // (4 MiB − 1.75 MiB) / 4 MiB = 56% > 30%.
    assert_eq!(insights[0]["level"], "high");
    assert_eq!(insights[0]["ranks"], serde_json::json!([1]));
}

#[test]
fn independent_mpi_io_only_is_no_collective_io() {
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("insights/independent_mpiio", 4, directory.path());
    assert_eq!(raised(&trace, None).0, Vec::<String>::new());
    let lowered = r#"{"independent_mpiio_count": 10, "blocking_mpiio_count": 1000000}"#;
    let (ids, insights) = raised(&trace, Some(lowered));
    assert_eq!(ids, ["no_collective_io"], "{insights}");
}

#[test]
fn blocking_collective_mpi_io_is_no_nonblocking_io() {
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("insights/blocking_mpiio", 4, directory.path());
    let (ids, insights) = raised(&trace, Some(r#"{"blocking_mpiio_count": 10}"#));
    assert_eq!(ids, ["no_nonblocking_io"], "{insights}");
}

#[test]
fn well_behaved_mpi_io_raises_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("insights/well_behaved", 4, directory.path());
    assert_eq!(raised(&trace, None).0, Vec::<String>::new());
    // Even with the MPI-IO counts lowered: its writes are collective and non-blocking.
    let lowered = r#"{"independent_mpiio_count": 0, "blocking_mpiio_count": 0}"#;
    let (ids, insights) = raised(&trace, Some(lowered));
    assert_eq!(ids, Vec::<String>::new(), "{insights}");
}

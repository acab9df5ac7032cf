//! The Python package (`python/`): built into a wheel with maturin, installed with pip in a
//! fresh virtual environment from the wheel and the wheels `scripts/install-deps.sh` keeps
//! (no network), and used on real traces.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// The wheel built from `python/` into `directory`, and the fresh environment's python
/// with it installed.
fn installed_package(directory: &Path) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tools = root.join("target/python-tests/bin");
    assert!(
        tools.join("maturin").is_file(),
        "{} has no maturin: run scripts/install-deps.sh",
        tools.display()
    );
    let wheels = directory.join("wheels");
    succeeded(
        Command::new(tools.join("maturin"))
            .args(["build", "--release", "--quiet", "-m"])
            .arg(root.join("python/Cargo.toml"))
            .arg("-o")
            .arg(&wheels),
    );
    let venv = directory.join("venv");
    succeeded(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    succeeded(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--no-index", "--find-links"])
            .arg(root.join("target/wheelhouse"))
            .arg("--find-links")
            .arg(&wheels)
            .arg("cairn"),
    );
    venv.join("bin/python")
}

#[test]
fn the_python_package_reads_traces_as_dataframes_and_streams_ten_million_events() {
    let directory = tempfile::tempdir().unwrap();
    let python = installed_package(directory.path());
    // A 4-rank MPI-IO run (tests/programs/mpi_ring_io.c) and 10^7 folded one-byte pwrites.
    let ring = traced_mpi("mpi_ring_io", 4, directory.path());
    let many = compile("many_calls", directory.path(), &[]);
    let big = directory.path().join("big.cairn");
    succeeded(
        Command::new(cairn_binary())
            .args(["run", "-q", "-o"])
            .arg(&big)
            .arg("--")
            .arg(&many)
            .arg(directory.path().join("many.dat"))
            .arg("10000000"),
    );
    let output = succeeded(
        Command::new(&python)
            .arg(programs_directory().join("../python/check_package.py"))
            .arg(&ring)
            .arg(&big),
    );
    let read: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();

    let summary = summary_json(&ring, &[]);
    assert_eq!(read["summary_events"], summary["events"]);
    let counts = program_call_counts(&summary);
    let calls: BTreeMap<String, u64> = serde_json::from_value(read["calls"].clone()).unwrap();
    assert_eq!(calls, counts, "{read}");
    for file in summary["files"].as_array().unwrap() {
        assert_eq!(
            read["files"][file["path"].as_str().unwrap()],
            serde_json::json!([file["bytes_read"], file["bytes_written"]])
        );
    }
    assert_eq!(read["files"].as_object().unwrap().len(), 1, "{read}");
    let pids = sorted_pids(&summary);
    assert_eq!(read["pids"], serde_json::json!(pids));
    assert_eq!(read["ranks"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(read["call_site_events"], read["events_with_call_site"]);
    assert_eq!(
        read["call_site_events"].as_u64(),
        Some(counts.values().sum::<u64>())
    );
    // Rank 1's MPI-IO calls: open, the collective write, four writes, the collective read,
    // close.
    assert_eq!(
        read["rank_1_mpiio"],
        serde_json::json!({"MPI_File_open": 1, "MPI_File_write_at_all": 1,
            "MPI_File_write_at": 4, "MPI_File_read_at_all": 1, "MPI_File_close": 1})
    );
    assert_eq!(read["rank_1_mpiio_ranks"], serde_json::json!([1]));
    assert_eq!(read["limited"], 5);
    // Every sub-call names its MPI-IO call: per rank an open and an lstat in the open, a
    // close in the close, a pwrite per independent write; the aggregator's pwritev and
    // preadv (one per rank's block).
    assert_eq!(
        read["subcall_parents"],
        serde_json::json!({"MPI_File_open": 8, "MPI_File_close": 4, "MPI_File_write_at": 16,
            "MPI_File_write_at_all": 4, "MPI_File_read_at_all": 4})
    );
    // The ring's 3 rounds, a loop in the folded structure, read without expanding.
    assert_eq!(read["first_loop"], serde_json::json!([3]));
    assert_eq!(read["missing"], true, "{read}");
    // 10^7 events streamed: every pwrite, every event the summary counts, in bounded
    // memory (the whole table would take over 1 GB; batches of 65,536 rows take a few MB).
    let big_read = &read["big"];
    assert_eq!(big_read["pwrites"], 10_000_000);
    assert_eq!(big_read["rows"], big_read["summary_events"]);
    assert_eq!(
        summary_json(&big, &[])["calls"]["pwrite"]["count"],
        10_000_000
    );
    let growth = big_read["rss_growth_kb"].as_u64().unwrap();
    assert!(growth < 200 * 1024, "resident memory grew by {growth} kB");
}

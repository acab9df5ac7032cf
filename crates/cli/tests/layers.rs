//! Per-layer job-summary figures (`layer_profiles` in `cairn summary --json`): operations,
//! access sizes, access order and I/O time per rank, on programs whose I/O is known.

mod common;

use common::*;
use serde_json::json;

#[test]
fn one_process_writing_twenty_records_in_a_row() {
    // tests/programs/twenty_writes.c: open, 20 writes of 10 bytes, close.
    let (_directory, traced) = trace_program("twenty_writes", &[], &[]);
    let posix = &traced.summary["layer_profiles"]["posix"];
    assert_eq!(
        posix["operations"],
        json!({"open": 1, "write": 20, "close": 1})
    );
    assert_eq!(
        posix["write_histogram"],
        json!([20, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(posix["common_sizes"], json!([{"size": 10, "count": 20}]));
    // Every write but the first starts where the previous one ended.
    assert_eq!(posix["accesses"], 20);
    assert_eq!(posix["sequential"], 19);
    assert_eq!(posix["consecutive"], 19);
    assert_eq!(posix["time_per_rank"]["ranks"], 1);
    assert_eq!(posix["time_per_rank"]["variance"], 0.0);
    assert_eq!(posix["time_per_rank"]["estimated"], false);
    assert_eq!(
        traced.summary["layer_profiles"].as_object().unwrap().len(),
        1
    );
}

#[test]
fn four_ranks_writing_unequal_shares() {
    // tests/programs/insights/rank_imbalance.c: rank 1 writes 4 MiB in 4 writes, the
    // others 1 MiB in one.
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("insights/rank_imbalance", 4, directory.path());
    let summary = summary_json(&trace, &[]);
    let posix = &summary["layer_profiles"]["posix"];
    assert_eq!(posix["operations"]["write"], 7);
    assert_eq!(posix["operations"]["open"], 4);
    assert_eq!(
        posix["common_sizes"],
        json!([{"size": 1048576, "count": 7}])
    );
    assert_eq!(
        posix["write_histogram"],
        json!([0, 0, 0, 0, 7, 0, 0, 0, 0, 0])
    );
    assert_eq!(posix["sequential"], 3);
    assert_eq!(posix["consecutive"], 3);
    let times = &posix["time_per_rank"];
    assert_eq!(times["ranks"], 4);
    assert!(times["max"].as_f64().unwrap() >= times["mean"].as_f64().unwrap());
    assert!(times["slowest"].as_u64().unwrap() < 4);
}

//! Per-layer job-summary figures (`layer_profiles` in `cairn summary --json`): operations,
//! access sizes, access order and I/O time per rank, on programs whose I/O is known; and
//! the phases a program marks (`phases`).

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

/// The phases of a summary by name: (occurrences, calls, bytes read, bytes written, calls
/// per layer).
fn phases(summary: &serde_json::Value) -> Vec<(String, u64, u64, u64, u64, serde_json::Value)> {
    summary["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|phase| {
            let layers: serde_json::Map<String, serde_json::Value> = phase["layers"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(layer, share)| (layer.clone(), share["calls"].clone()))
                .collect();
            (
                phase["name"].as_str().unwrap().to_string(),
                phase["occurrences"].as_u64().unwrap(),
                phase["calls"].as_u64().unwrap(),
                phase["bytes_read"].as_u64().unwrap(),
                phase["bytes_written"].as_u64().unwrap(),
                serde_json::Value::Object(layers),
            )
        })
        .collect()
}

#[test]
fn phases_the_program_marks_get_their_calls_exactly() {
    // tests/programs/patterns/phases.c (include/cairn.h): a checkpoint phase begun and
    // ended in each of 5 steps (a folded loop), nested in a solver phase with a log line
    // per step, then a restart phase.
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/phases", directory.path(), &[]);
    let work = directory.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // Without the tracer the weak marks do nothing: it links, runs and writes its files.
    let untraced = std::process::Command::new(&program)
        .arg(&work)
        .status()
        .unwrap();
    assert_eq!(untraced.code(), Some(0));
    assert_eq!(
        std::fs::metadata(work.join("checkpoint.bin"))
            .unwrap()
            .len(),
        65536
    );
    let traced = trace(directory.path(), &program, &[work.to_str().unwrap()]);
    assert_eq!(traced.exit_code(), Some(0));
    assert_eq!(
        phases(&traced.summary),
        vec![
            // Outside every phase: the log's fopen and fclose.
            ("".into(), 0, 2, 0, 0, json!({"stdio": 2})),
            // 5 × (open, 16 writes of 4 KiB, close).
            ("checkpoint".into(), 5, 90, 0, 327_680, json!({"posix": 90})),
            // open, 4 reads of 4 KiB, close.
            ("restart".into(), 1, 6, 16_384, 0, json!({"posix": 6})),
            // 5 log lines of 7 bytes ("step N\n"), the checkpoint's calls aside.
            ("solver".into(), 1, 5, 0, 35, json!({"stdio": 5})),
        ]
    );
    // The marks are calls of their own, not files.
    assert_eq!(traced.summary["calls"]["cairn_phase_begin"]["count"], 7);
    assert_eq!(traced.summary["calls"]["cairn_phase_end"]["count"], 7);
    let files = traced.summary["files"].as_array().unwrap();
    assert!(files
        .iter()
        .all(|file| !file["path"].as_str().unwrap().starts_with("phase:")));
    let text = cairn_text("summary", &[], &traced.trace);
    assert!(
        text.contains("  checkpoint ×5: 90 calls (posix 90), read 0 B, wrote 320.0 KiB"),
        "{text}"
    );

    // Fortran: include/cairn_fortran.c compiled with the program hands the marks over.
    let fortran = directory.path().join("fortran");
    std::fs::create_dir(&fortran).unwrap();
    let shim = programs_directory().join("../../include/cairn_fortran.c");
    let program = compile(
        "patterns/phases_fortran",
        &fortran,
        &[shim.to_str().unwrap()],
    );
    let traced = run_and_summarise(
        std::process::Command::new(cairn_binary())
            .current_dir(&fortran)
            .args(["run", "-q", "-o"])
            .arg(fortran.join("trace.cairn"))
            .arg("--")
            .arg(&program),
        fortran.join("trace.cairn"),
    );
    assert_eq!(traced.exit_code(), Some(0));
    let output = phases(&traced.summary)
        .into_iter()
        .find(|phase| phase.0 == "output")
        .expect("the output phase");
    // 3 steps, each a 4 KiB record flushed with one write.
    assert_eq!(
        output,
        ("output".into(), 3, 3, 0, 12_288, json!({"posix": 3}))
    );
}

#[test]
fn functions_named_as_phases_get_the_calls_made_inside_them() {
    // tests/programs/patterns/phase_functions.c: write_checkpoint (3 calls, each open, 4
    // writes of 4 KiB, close), read_restart (open, one read, close), and a write outside.
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/phase_functions", directory.path(), &[]);
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap()],
    );
    assert_eq!(traced.exit_code(), Some(0));
    let with = |extra: &[&str], environment: Option<&str>| {
        let mut command = std::process::Command::new(cairn_binary());
        command
            .arg("summary")
            .arg("--json")
            .args(extra)
            .arg(&traced.trace);
        match environment {
            Some(list) => command.env("CAIRN_PHASES", list),
            None => command.env_remove("CAIRN_PHASES"),
        };
        let output = succeeded(&mut command);
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let both = with(&["--phases", "write_checkpoint,read_restart"], None);
    assert_eq!(
        phases(&both),
        vec![
            ("".into(), 0, 3, 0, 10, json!({"posix": 3})),
            ("read_restart".into(), 0, 3, 4096, 0, json!({"posix": 3})),
            (
                "write_checkpoint".into(),
                0,
                18,
                0,
                49_152,
                json!({"posix": 18})
            ),
        ]
    );
    assert_eq!(both["phases"][2]["function"], true);
    // The same from the environment; one function only.
    let one = with(&[], Some("write_checkpoint"));
    assert_eq!(
        phases(&one),
        vec![
            ("".into(), 0, 6, 4096, 10, json!({"posix": 6})),
            (
                "write_checkpoint".into(),
                0,
                18,
                0,
                49_152,
                json!({"posix": 18})
            ),
        ]
    );
    // No phases asked for, none marked: none reported.
    assert_eq!(with(&[], None)["phases"], json!([]));
}

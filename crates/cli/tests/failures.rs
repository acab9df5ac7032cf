//! Jobs that fail: what `cairn run` says, and what can still be built from what it staged.

mod common;

use std::process::Command;

use common::*;

#[test]
fn a_stopped_mpi_job_says_how_to_build_its_trace() {
    // Rank 1 calls MPI_Abort; the launcher stops the other ranks' `cairn run` with SIGTERM
    // (then SIGKILL): each one it stops first prints the command that builds the trace.
    let directory = tempfile::tempdir().unwrap();
    let program = directory.path().join("mpi_abort");
    let compiled = Command::new("mpicc.openmpi")
        .args(["-O1", "-o"])
        .arg(&program)
        .arg(programs_directory().join("mpi_abort.c"))
        .status()
        .expect("mpicc.openmpi runs (scripts/install-deps.sh installs Open MPI)");
    assert!(compiled.success());
    library();
    let trace = directory.path().join("job.cairn");
    let output = Command::new("mpirun.openmpi")
        .args(["--oversubscribe", "-np", "4"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .arg(cairn_binary())
        .args(["run", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&program)
        .arg(directory.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "MPI_Abort's error code");
    assert!(!trace.exists(), "no rank lived to build the trace");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let commands: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("the job was stopped"))
        .filter_map(|line| line.split('`').nth(1))
        .collect();
    assert!(!commands.is_empty(), "{stderr}");
    assert!(
        commands.iter().all(|command| *command == commands[0]),
        "{stderr}"
    );
    let words: Vec<&str> = commands[0].split(' ').collect();
    assert_eq!(words.len(), 5, "{}", commands[0]);
    assert_eq!((words[0], words[1], words[3]), ("cairn", "merge", "-o"));
    assert_eq!(
        std::path::Path::new(words[4]),
        directory.path().canonicalize().unwrap().join("job.cairn")
    );
    // `summary` of the missing trace says the same, in one line.
    let summary = Command::new(cairn_binary())
        .arg("summary")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(summary.status.code(), Some(2));
    let error = String::from_utf8_lossy(&summary.stderr);
    assert_eq!(error.lines().count(), 1, "{error}");
    let staging = words[2];
    assert!(
        error.contains(&format!("`cairn merge {staging} -o {}`", trace.display())),
        "{error}"
    );
    // The command it gave builds the trace of everything up to the failure.
    let merged = Command::new(cairn_binary())
        .args(&words[1..])
        .output()
        .unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let summary = summary_json(&trace, &[]);
    for rank in 0..4 {
        let file = summary["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|file| {
                file["path"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("/abort-{rank}.dat"))
            })
            .unwrap_or_else(|| panic!("rank {rank}'s file: {summary}"));
        assert_fields(
            file,
            &[
                ("opens", 1),
                ("writes", 10),
                ("bytes_written", 1000),
                ("closes", 1),
            ],
        );
    }
    let processes = summary["process_list"].as_array().unwrap();
    assert_eq!(processes.len(), 4);
    let aborted = processes
        .iter()
        .find(|process| process["rank"] == 1)
        .unwrap();
    assert_eq!(aborted["ending"], "_exit(3)", "{aborted}");
}

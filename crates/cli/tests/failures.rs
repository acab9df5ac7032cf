//! Jobs that fail: what `cairn run` says, and what can still be built from what it staged.

mod common;

use std::process::Command;

use common::*;

#[test]
fn a_stopped_mpi_job_says_how_to_build_its_trace() {
    // Rank 1 calls MPI_Abort; the launcher stops the other ranks' `cairn run` with SIGTERM
    // (then SIGKILL): each one it stops first prints the command that builds the trace.
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("mpi_abort", directory.path());
    library();
    let trace = directory.path().join("job.cairn");
    let output = mpirun_traced(4, &trace, &program, directory.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "MPI_Abort's error code");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
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
    // Open MPI gives the stopped ranks a second between SIGTERM and SIGKILL: on a fast
    // machine rank 0 builds the whole trace in it; otherwise the
    // command the ranks printed builds it. Either way it holds every rank's calls.
    let traced = if trace.exists() {
        let summary = summary_json(&trace, &[]);
        Traced {
            output,
            trace,
            summary,
        }
    } else {
        // `summary` of the missing trace says how to build it, in one line.
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
        merge_staging(std::path::Path::new(staging), words[4].into())
    };
    let summary = &traced.summary;
    for rank in 0..4 {
        assert_fields(
            traced.file(&format!("/abort-{rank}.dat")),
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

#[test]
fn a_job_killed_as_a_whole_leaves_a_staging_that_builds_its_trace() {
    // SIGKILL to mpirun itself: no `cairn run` can say anything (their output went to the
    // dead launcher); the staging directory beside the trace's path is all there is, and
    // `cairn merge` of it builds every rank's calls up to the kill and how each rank ended
    // (Open MPI's ranks `_exit(-61)` when they lose their launcher).
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("mpi_hang", directory.path());
    library();
    let trace = directory.path().join("job.cairn");
    let mut launcher = mpirun_traced(4, &trace, &program, directory.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = || (0..4).all(|rank| directory.path().join(format!("ready-{rank}")).exists());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !ready() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let all_ready = ready();
    launcher.kill().unwrap();
    launcher.wait().unwrap();
    // The ranks go when they notice their launcher is gone.
    let running = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
            .filter(|command| String::from_utf8_lossy(command).contains(program.to_str().unwrap()))
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while running() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let left = running();
    if left > 0 {
        let _ = Command::new("pkill")
            .arg("-KILL")
            .arg("-f")
            .arg(&program)
            .status();
    }
    assert!(all_ready, "the ranks did not all get ready");
    assert_eq!(
        left, 0,
        "ranks still running a minute after their launcher died"
    );
    assert!(!trace.exists());
    let stagings: Vec<std::path::PathBuf> = std::fs::read_dir(directory.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".job.cairn.staging-")
        })
        .collect();
    assert_eq!(stagings.len(), 1, "{stagings:?}");
    let traced = merge_staging(&stagings[0], trace);
    let summary = &traced.summary;
    for rank in 0..4 {
        assert_fields(
            traced.file(&format!("/hang-{rank}.dat")),
            &[
                ("opens", 1),
                ("writes", 10),
                ("bytes_written", 1000),
                ("closes", 1),
            ],
        );
    }
    assert_eq!(summary["calls"]["MPI_Barrier"]["count"].as_u64(), Some(4));
    let processes = summary["process_list"].as_array().unwrap();
    let mut ranks: Vec<i64> = processes
        .iter()
        .map(|process| process["rank"].as_i64().unwrap())
        .collect();
    ranks.sort_unstable();
    assert_eq!(ranks, [0, 1, 2, 3]);
    for process in processes {
        assert_eq!(process["ending"], "_exit(-61)", "{process}");
    }
}

#[test]
fn a_full_staging_file_system_counts_every_call_it_could_not_record() {
    // 400,000 one-byte pwrites at scattered offsets (staged 8 bytes each, in offsets
    // records) with the staging on a 1 MiB tmpfs (mounted in a user and mount namespace of
    // the test's own): the staging fills after some 90,000 calls; the program runs on and
    // ends with its own status, the rest of its calls are counted, and every reader says
    // the trace is incomplete.
    let directory = tempfile::tempdir().unwrap();
    let program = compile("scattered_writes", directory.path(), &[]);
    library();
    let small = directory.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let trace = directory.path().join("trace.cairn");
    let output = Command::new("unshare")
        .args(["--map-root-user", "--mount", "sh", "-c"])
        .arg(r#"mount -t tmpfs -o size=1m tmpfs "$0" && exec "$@""#)
        .arg(&small)
        .arg(cairn_binary())
        .args(["run", "-q", "--staging"])
        .arg(&small)
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg(&program)
        .arg(directory.path())
        .arg("400000")
        .output()
        .expect("unshare (util-linux) runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(3),
        "the program's own status: {stderr}"
    );
    let summary = summary_json(&trace, &[]);
    let unrecorded = summary["unrecorded_calls"].as_u64().unwrap();
    let calls = &summary["calls"];
    let count = |call: &str| calls[call]["count"].as_u64().unwrap_or(0);
    // Calls recorded + calls not recorded = calls made: open, 400,000 pwrites, close.
    assert_eq!(count("open"), 1, "{calls}");
    assert_eq!(
        count("open") + count("pwrite") + count("close") + unrecorded,
        400_002,
        "{calls}"
    );
    assert!(count("pwrite") > 1_000 && unrecorded > 200_000, "{calls}");
    let process = &summary["process_list"][0];
    assert_eq!(process["unrecorded_calls"].as_u64(), Some(unrecorded));
    // The end the staging could not take is the one the header page kept.
    assert_eq!(process["ending"], "exit", "{process}");
    let pid = process["pid"].as_u64().unwrap();
    let said = format!(
        "incomplete: {unrecorded} calls of process {pid} not recorded (no space left on device at "
    );
    // `cairn run` says it (even with -q), the summary first and in a note, the dump too.
    assert!(
        stderr
            .lines()
            .any(|line| line.starts_with(&format!("cairn: {said}"))),
        "{stderr}"
    );
    let text = cairn_text("summary", &[], &trace);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains(&format!(
            " events (INCOMPLETE: {unrecorded} more calls not recorded), "
        )),
        "{first}"
    );
    assert!(
        text.lines()
            .any(|line| line.starts_with(&format!("note: {said}"))),
        "{text}"
    );
    let dump = cairn_text("dump", &[], &trace);
    assert!(
        dump.lines()
            .any(|line| line.starts_with(&format!("  {said}"))),
        "{dump}"
    );
    let export = Command::new(cairn_binary())
        .arg("export")
        .arg(&trace)
        .arg("-o")
        .arg(directory.path().join("trace.pftrace"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&export.stderr);
    assert!(export.status.success(), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|line| line.starts_with(&format!("cairn: {said}"))),
        "{stderr}"
    );
}

#[test]
fn a_statically_linked_program_is_said_to_be_beyond_preloading() {
    // The dynamic loader never starts a static program, so LD_PRELOAD cannot reach it:
    // `cairn run` says so before it runs, and the program still runs as asked.
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let static_build = directory.path().join("static");
    std::fs::create_dir(&static_build).unwrap();
    let program = compile("posix_basic", &static_build, &["-static"]);
    let trace = directory.path().join("static.cairn");
    let output = Command::new(cairn_binary())
        .args(["run", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&program)
        .arg(&work)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said = format!(
        "cairn: {} is statically linked: preloading cannot reach its calls, so they are not traced (only dynamically linked programs it starts are); link it with `$(cairn link-flags)` to trace it",
        program.display()
    );
    assert_eq!(
        stderr.lines().filter(|line| *line == said).count(),
        1,
        "{stderr}"
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // It ran (its exit status says it reached its end: 2 or 3 otherwise), and nothing
    // of it is in the trace.
    assert_eq!(summary_json(&trace, &[])["processes"], 0);
    assert_eq!(summary_json(&trace, &[])["events"], 0);
    // The dynamic build is traced, without the warning.
    let dynamic = compile("posix_basic", directory.path(), &[]);
    let output = Command::new(cairn_binary())
        .args(["run", "-o"])
        .arg(directory.path().join("dynamic.cairn"))
        .arg("--")
        .arg(&dynamic)
        .arg(&work)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&output.stderr).contains("statically linked"));
    assert_eq!(
        summary_json(&directory.path().join("dynamic.cairn"), &[])["processes"],
        1
    );
}

/// A static build of `name` linked with `cairn link-flags` and its dynamic build, each run
/// under `cairn run`, share every exactly kept figure (per call and per file).
fn static_and_dynamic_figures(name: &str, arguments: &[&str]) {
    let directory = tempfile::tempdir().unwrap();
    let flags = String::from_utf8(succeeded(Command::new(cairn_binary()).arg("link-flags")).stdout)
        .unwrap();
    let mut static_flags = vec!["-static"];
    static_flags.extend(flags.split_whitespace());
    let builds = [("static", static_flags), ("dynamic", Vec::new())];
    let mut figures = Vec::new();
    for (kind, flags) in builds {
        let build = directory.path().join(kind);
        let work = build.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let program = compile(name, &build, &flags);
        let trace = build.join("trace.cairn");
        let mut arguments: Vec<String> = arguments.iter().map(|a| a.to_string()).collect();
        arguments.insert(0, work.display().to_string());
        let output = succeeded(
            Command::new(cairn_binary())
                .args(["run", "-o"])
                .arg(&trace)
                .arg("--")
                .arg(&program)
                .args(&arguments),
        );
        assert!(
            !String::from_utf8_lossy(&output.stderr).contains("statically linked"),
            "{kind}: {output:?}"
        );
        let summary = summary_json(&trace, &[]);
        assert_eq!(summary["processes"], 1, "{kind}");
        // Paths differ by the build's directory: compared relative to it.
        let text = every_exact_figure(&summary)
            .to_string()
            .replace(&build.display().to_string(), "BUILD");
        figures.push(text);
    }
    assert_eq!(figures[0], figures[1], "static, then dynamic");
    // Run without `cairn run` (no CAIRN_DIR), the static program traces nothing and
    // leaves nothing behind.
    let quiet = directory.path().join("quiet");
    std::fs::create_dir_all(&quiet).unwrap();
    let work = quiet.join("work");
    std::fs::create_dir_all(&work).unwrap();
    succeeded(
        Command::new(directory.path().join("static").join(name))
            .arg(&work)
            .args(arguments)
            .current_dir(&quiet)
            .env_remove("CAIRN_DIR"),
    );
    assert!(!quiet.join("cairn-trace.d").exists());
    assert!(!work.join("cairn-trace.d").exists());
}

#[test]
fn a_static_program_linked_with_link_flags_traces_as_its_dynamic_build() {
    // posix_basic.c: open, writes, reads, seeks, pread/pwrite, writev, syncs, stat,
    // ftruncate, rename, unlink, access — every call and byte as the dynamic build's.
    static_and_dynamic_figures("posix_basic", &[]);
    // stdio.c: fopen, fwrite, fprintf (the C shim's variadic hooks), fread, fseek...
    static_and_dynamic_figures("stdio", &[]);
    // twenty_writes.c: a loop the tracer folds as it runs.
    static_and_dynamic_figures("twenty_writes", &[]);
}

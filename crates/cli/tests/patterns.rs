//! The corpus of real I/O patterns (`tests/programs/patterns/`): each program does what a
//! well-known code does (its comment says which), runs under the real preload library at
//! N and 10·N iterations, and must give exact per-file figures and a trace whose size does
//! not grow with N (within 5%, the median of three runs at each size: timing statistics
//! move a trace by a few bytes from run to run) and stays under 16 KiB.
//!
//! A test binary of its own, its tests one at a time (as `sizes.rs`), so the sizes are not
//! measured while other tests' programs compete for this machine's two cores.

mod common;

use common::*;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Traces `patterns/<name>` with its directory and `n` as arguments, three times at `n`
/// and three at `10 n`; `check` gets each run's summary and its `n`. Returns the median
/// sizes and asserts that they are within 5% of each other and under 16 KiB.
fn folds_at_any_size(name: &str, n: u64, check: impl Fn(&Traced, u64)) -> (u64, u64) {
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile(&format!("patterns/{name}"), directory.path(), &[]);
    // The release build when it is fresh (what users run; scripts/test.sh builds it).
    let binary = release_cairn_binary().unwrap_or_else(|| {
        library();
        cairn_binary()
    });
    let mut medians = Vec::new();
    for size in [n, 10 * n] {
        let mut runs = Vec::new();
        for _ in 0..3 {
            let work = tempfile::tempdir_in(directory.path()).unwrap();
            let traced = trace_with(
                &binary,
                work.path(),
                &program,
                &[work.path().to_str().unwrap(), &size.to_string()],
            );
            assert_eq!(
                traced.exit_code(),
                Some(0),
                "{name} {size}: {}",
                String::from_utf8_lossy(&traced.output.stderr)
            );
            check(&traced, size);
            runs.push(std::fs::metadata(&traced.trace).unwrap().len());
        }
        runs.sort_unstable();
        eprintln!("{name}, {size}: {runs:?} B");
        medians.push(runs[1]);
    }
    let (small, large) = (medians[0], medians[1]);
    assert!(
        large.abs_diff(small) as f64 <= 0.05 * small as f64,
        "{name}: trace size {small} B at {n}, {large} B at {}",
        10 * n
    );
    assert!(large < 16 * 1024, "{name}: {large} B");
    (small, large)
}

#[test]
fn ior_posix_lseek_then_write_folds() {
    // 256 transfers per segment, N segments, written then read back.
    folds_at_any_size("ior_posix", 4, |traced, segments| {
        let calls = 256 * segments;
        traced.assert_files(&["/ior.dat"]);
        assert_fields(
            traced.file("/ior.dat"),
            &[
                ("opens", 2),
                ("closes", 2),
                ("syncs", 1),
                ("seeks", 2 * calls),
                ("writes", calls),
                ("reads", calls),
                ("bytes_written", 4096 * calls),
                ("bytes_read", 4096 * calls),
                // Every transfer but the first of each phase follows the one before: the
                // offsets each seek reached are exact.
                ("consecutive_writes", calls - 1),
                ("consecutive_reads", calls - 1),
                ("max_offset", 4096 * calls),
            ],
        );
    });
}

#[test]
fn interleaved_strided_streams_fold() {
    folds_at_any_size("interleaved", 20, |traced, steps| {
        let calls = 256 * steps;
        traced.assert_files(&["/streams.dat"]);
        assert_fields(
            traced.file("/streams.dat"),
            &[
                ("opens", 1),
                ("closes", 1),
                ("seeks", calls),
                ("writes", calls),
                ("reads", calls),
                ("bytes_written", 4096 * calls),
                ("bytes_read", 4096 * calls),
                // Sixteen regions visited in order, sixteen times a step: 15 of every 16
                // accesses lie after the one before, none right after it.
                ("sequential_writes", 240 * steps),
                ("sequential_reads", 240 * steps),
                ("consecutive_writes", 0),
                ("consecutive_reads", 0),
                ("max_offset", 1 << 20),
            ],
        );
    });
}

#[test]
fn stdio_log_with_flushes_and_tells_folds() {
    folds_at_any_size("stdio_log", 1000, |traced, steps| {
        traced.assert_files(&["/run.log"]);
        assert_fields(
            traced.file("/run.log"),
            &[
                ("opens", 2),
                ("closes", 2),
                // The header and a line per step; every line read back, and the EOF.
                ("writes", steps + 1),
                ("bytes_written", 30 * (steps + 1)),
                ("reads", steps + 2),
                ("bytes_read", 30 * (steps + 1)),
                ("flushes", steps / 10),
                ("seeks", steps / 10),
                ("consecutive_writes", steps),
            ],
        );
    });
}

#[test]
fn checkpoint_per_file_then_restart_folds() {
    folds_at_any_size("checkpoint_restart", 100, |traced, checkpoints| {
        let files = traced.summary["files"].as_array().unwrap();
        let checkpoint_files: Vec<&str> = files
            .iter()
            .filter_map(|file| file["path"].as_str())
            .filter(|path| path.contains("/ckpt-"))
            .collect();
        assert_eq!(checkpoint_files.len() as u64, checkpoints);
        for c in [0, checkpoints / 2, checkpoints - 2] {
            assert_fields(
                traced.file(&format!("/ckpt-{c:06}.dat")),
                &[
                    ("opens", 1),
                    ("closes", 1),
                    ("writes", 5),
                    ("bytes_written", 64 + 4 * 32768),
                    ("consecutive_writes", 4),
                    ("syncs", 1),
                    // unlinked when the next one is written
                    ("metas", 1),
                ],
            );
            // The loop over the checkpoints keeps one timing statistic for all their
            // files: each one's time is an equal share, and says so.
            let file = traced.file(&format!("/ckpt-{c:06}.dat"));
            assert_eq!(file["time_estimated"], true, "{file}");
        }
        let text = cairn_text("summary", &[], &traced.trace);
        assert!(
            text.lines().any(|line| line.contains("/ckpt-000000.dat")
                && line
                    .split_whitespace()
                    .rev()
                    .take(3)
                    .all(|time| time.starts_with('~'))),
            "{text}"
        );
        assert!(
            text.contains("\n  ~ estimated: a folded loop over several files"),
            "{text}"
        );
        assert_fields(
            traced.file(&format!("/ckpt-{:06}.dat", checkpoints - 1)),
            &[
                ("opens", 2),
                ("closes", 2),
                ("writes", 5),
                ("reads", 5),
                ("bytes_read", 64 + 4 * 32768),
                ("stats", 1),
                ("metas", 0),
            ],
        );
    });
}

#[test]
fn metadata_phases_with_a_new_name_per_item_fold() {
    // patterns/metadata.c (mdtest's phases): before, each rename kept its new name's file
    // as an index, so no two renames were alike and the trace grew with the items
    // (2.1 KB at 100, 7.2 KB at 1,000); the new name is now kept against the old one's.
    folds_at_any_size("metadata", 100, |traced, n| {
        let calls = &traced.summary["calls"];
        for (call, count) in [
            ("mkdir", n + 1),
            ("stat", 2 * n),
            ("rename", n),
            ("open", 2 * n),
            ("close", 2 * n),
            ("write", n),
            ("read", n),
            ("unlink", n),
            ("rmdir", n + 1),
        ] {
            assert_eq!(
                calls[call]["count"].as_u64(),
                Some(count),
                "{call}: {calls}"
            );
            assert_eq!(calls[call]["failures"].as_u64(), Some(0), "{call}");
        }
        assert_eq!(traced.summary["bytes_written"].as_u64(), Some(4096 * n));
        assert_eq!(traced.summary["bytes_read"].as_u64(), Some(4096 * n));
        let files = traced.summary["files"].as_array().unwrap();
        let named = |kind: &str| {
            files
                .iter()
                .filter_map(|file| file["path"].as_str())
                .filter(|path| path.contains(&format!("/tree.0/{kind}.mdtest.0.")))
                .count() as u64
        };
        // The directories, and the name the first one was renamed to ("…0.0-XX").
        assert_eq!(named("dir"), n + 1);
        assert_eq!(named("file"), n);
        for i in [0, n / 2, n - 1] {
            assert_fields(
                traced.file(&format!("/tree.0/file.mdtest.0.{i}")),
                &[
                    ("opens", 2),
                    ("closes", 2),
                    ("writes", 1),
                    ("reads", 1),
                    ("bytes_written", 4096),
                    ("bytes_read", 4096),
                    ("stats", 1),
                    ("metas", 1),
                ],
            );
        }
        // mkdir, its rename and rmdir; the last one is renamed from "…0.0-XX" instead.
        assert_fields(
            traced.file(&format!("/tree.0/dir.mdtest.0.{}", n / 2)),
            &[("stats", 1), ("metas", 3)],
        );
        assert_fields(
            traced.file(&format!("/tree.0/dir.mdtest.0.{}", n - 1)),
            &[("stats", 1), ("metas", 2)],
        );
        assert_fields(traced.file("/tree.0/dir.mdtest.0.0-XX"), &[("metas", 1)]);
    });
}

#[test]
fn fortran_unformatted_sequential_records_fold() {
    folds_at_any_size("fortran_sequential", 1000, |traced, steps| {
        // A record of 512 real(8) is 4096 bytes between two 4-byte markers.
        let bytes = 4104 * steps;
        assert_fields(
            traced.file("/history.bin"),
            &[
                ("opens", 1),
                ("closes", 1),
                ("bytes_written", bytes),
                ("bytes_read", bytes),
                ("max_offset", bytes),
            ],
        );
        // gfortran's buffer turns the records into fewer, larger writes: all consecutive.
        let file = traced.file("/history.bin");
        let writes = file["writes"].as_u64().unwrap();
        assert_eq!(file["consecutive_writes"].as_u64(), Some(writes - 1));
    });
}

/// `mpirun.openmpi -np ranks cairn run -q -o DIR/trace.cairn -- patterns/name DIR n`.
fn trace_mpi_pattern(name: &str, ranks: u64, n: u64) -> (tempfile::TempDir, Traced) {
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi_pattern(name, directory.path());
    let trace = directory.path().join("trace.cairn");
    let traced = trace_mpi_program(&program, directory.path(), ranks, n, trace);
    (directory, traced)
}

/// `patterns/name.c` built with Open MPI's `mpicc` into `directory`.
fn compile_mpi_pattern(name: &str, directory: &std::path::Path) -> std::path::PathBuf {
    let program = directory.join(name);
    let status = std::process::Command::new("mpicc.openmpi")
        .args(["-O1", "-g", "-o"])
        .arg(&program)
        .arg(programs_directory().join(format!("patterns/{name}.c")))
        .status()
        .expect("mpicc.openmpi runs (scripts/install-deps.sh installs Open MPI)");
    assert!(status.success(), "compiling {name}");
    program
}

/// `mpirun.openmpi -np ranks cairn run -q -o TRACE -- PROGRAM DIRECTORY n`, which must succeed.
fn trace_mpi_program(
    program: &std::path::Path,
    directory: &std::path::Path,
    ranks: u64,
    n: u64,
    trace: std::path::PathBuf,
) -> Traced {
    library();
    let traced = run_and_summarise(
        std::process::Command::new("mpirun.openmpi")
            .args(["--oversubscribe", "-np", &ranks.to_string()])
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .arg(cairn_binary())
            .args(["run", "-q", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(program)
            .arg(directory)
            .arg(n.to_string()),
        trace,
    );
    assert!(
        traced.output.status.success(),
        "{}",
        String::from_utf8_lossy(&traced.output.stderr)
    );
    traced
}

#[test]
fn halo_exchange_on_a_2d_grid_counts_every_message() {
    // Exact per-call figures on a 2 × 2 and a 4 × 4 grid; every rank but rank 0 (which also
    // writes a log) shares one stream, the boundary ranks lacking some of the interior
    // ranks' messages, each direction's ranks a nested run of the grid.
    let _alone = alone();
    let steps = 50;
    let mut events_bytes = Vec::new();
    // 6 × 6: 2 · 2 · 6 · 5 messages a step.
    for (ranks, messages_per_step) in [(4u64, 8u64), (16, 48), (36, 120)] {
        let (_directory, traced) = trace_mpi_pattern("halo2d", ranks, steps);
        let calls = &traced.summary["calls"];
        let count = |call: &str| calls[call]["count"].as_u64();
        let bytes = |call: &str| calls[call]["bytes"].as_u64();
        let messages = messages_per_step * steps;
        assert_eq!(count("MPI_Isend"), Some(messages), "{ranks} ranks");
        assert_eq!(count("MPI_Irecv"), Some(messages), "{ranks} ranks");
        assert_eq!(bytes("MPI_Isend"), Some(8192 * messages), "{ranks} ranks");
        // Posting a receive moves nothing; the Waitall that finishes it counts what arrived.
        assert_eq!(bytes("MPI_Irecv"), Some(0), "{ranks} ranks");
        assert_eq!(count("MPI_Waitall"), Some(ranks * steps));
        assert_eq!(bytes("MPI_Waitall"), Some(8192 * messages), "{ranks} ranks");
        let exchanged = &traced.summary["mpi_messages"];
        for field in ["sent_bytes", "received_bytes", "posted_receive_bytes"] {
            assert_eq!(
                exchanged[field].as_u64(),
                Some(8192 * messages),
                "{exchanged}"
            );
        }
        assert_eq!(count("MPI_Allreduce"), Some(ranks * steps));
        assert_fields(
            traced.file("/halo.log"),
            &[("opens", 1), ("writes", steps / 10), ("closes", 1)],
        );
        // The text summary names each process's rank, and says once how many of the MPI
        // runtime's own events were only counted.
        let text = cairn_text("summary", &[], &traced.trace);
        for rank in 0..ranks {
            assert_eq!(
                text.lines()
                    .filter(|line| line.starts_with(&format!("  rank {rank:<5} pid ")))
                    .count(),
                1,
                "{text}"
            );
        }
        let not_kept = traced.summary["filtered"]["runtime_events_not_kept"]
            .as_u64()
            .unwrap();
        assert!(not_kept > 0);
        assert!(
            text.contains(&format!(
                "note: the MPI runtime's own I/O of {ranks} ranks was counted, not kept ({not_kept} events)"
            )),
            "{text}"
        );
        assert!(!text.contains("runtime noise hidden ()"), "{text}");
        assert_eq!(
            shared_streams(&traced.trace),
            [format!("one of {} ranks sharing a stream", ranks - 1)]
        );
        let sets = rank_sets(&traced.trace);
        let expected: &[&str] = match ranks {
            4 => &[
                "only ranks 1,3",
                "only ranks 1",
                "only ranks 2",
                "only ranks 2,3",
            ],
            36 => &[
                "all ranks but 6-30/6",
                "all ranks but 5-35/6",
                "only ranks 6-35",
                "only ranks 1-29",
                "only ranks 1-4,(6,11)×4/6,31-34",
                "only ranks 5,30,35",
                "only ranks (7-10)×4/6",
            ],
            _ => &[
                // West, east, south and north neighbours; Waitall of 6, 4 and 8 requests.
                "all ranks but 4-12/4",
                "all ranks but 3-15/4",
                "only ranks 4-15",
                "only ranks 1-11",
                "only ranks 1,2,(4,7)×2/4,13,14",
                "only ranks 3,12,15",
                "only ranks (5,6)×2/4",
            ],
        };
        assert_eq!(sets, expected, "{ranks} ranks");
        events_bytes.push(events_section_bytes(&traced.trace));
    }
    // The events of 16 ranks cost at most 30% more than those of 4 (only the 4 × 4 grid
    // has edge and interior ranks: more leaves, and statistics of more ranks in more
    // histogram bins; 21–23% in most runs, 25% once, the 16 ranks' times on 2 cores
    // varying more); from 16 to 36 ranks, where every kind of rank is there, at most a
    // tenth.
    eprintln!("halo2d events section: {events_bytes:?} B");
    assert!(
        10 * events_bytes[1] <= 13 * events_bytes[0],
        "{events_bytes:?}"
    );
    assert!(
        10 * events_bytes[2] <= 11 * events_bytes[1],
        "{events_bytes:?}"
    );
}

#[test]
fn halves_with_their_own_messages_share_the_collectives_they_all_call() {
    // coupled_halves.c: the two halves' step loops have only the broadcast in common. One
    // stream for all ranks, each half's calls in parts of its ranks, the broadcast shared;
    // lossless, so every count is exact. Its events do not grow with the ranks (from 16 to
    // 32; from 8 to 16 they grow by 8–10%, timing statistics of more ranks) nor with the
    // steps.
    let _alone = alone();
    let (mut events_bytes, mut trace_bytes) = (Vec::new(), Vec::new());
    for (ranks, steps) in [(16u64, 50u64), (32, 50), (16, 500)] {
        let (_directory, traced) = trace_mpi_pattern("coupled_halves", ranks, steps);
        let half = ranks / 2;
        let count = |call: &str| traced.summary["calls"][call]["count"].as_u64();
        let bytes = |call: &str| traced.summary["calls"][call]["bytes"].as_u64();
        assert_eq!(
            count("MPI_Send"),
            Some(ranks * steps + half * steps),
            "{ranks} ranks"
        );
        assert_eq!(bytes("MPI_Send"), Some((ranks * 1024 + half * 512) * steps));
        assert_eq!(count("MPI_Irecv"), Some(ranks * steps + half * steps));
        assert_eq!(count("MPI_Wait"), Some(ranks * steps + half * steps));
        assert_eq!(count("MPI_Bcast"), Some(ranks * steps));
        assert_eq!(
            shared_streams(&traced.trace),
            [format!("one of {ranks} ranks sharing a stream")],
            "{ranks} ranks"
        );
        // Each half's calls are a part of its ranks; the ring within the first half adds
        // a few sets (its last rank sends to its first: another peer), not one a rank.
        let sets = rank_sets(&traced.trace);
        let first_half = format!("only ranks 0-{}", half - 1);
        let second_half = format!("only ranks {half}-{}", ranks - 1);
        assert!(sets.contains(&first_half), "{ranks} ranks: {sets:?}");
        assert!(sets.contains(&second_half), "{ranks} ranks: {sets:?}");
        assert!(sets.len() <= 6, "{ranks} ranks: {sets:?}");
        let text = dump(&traced.trace, &[]);
        let broadcasts: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("MPI_Bcast("))
            .collect();
        assert_eq!(broadcasts.len(), 1, "{text}");
        assert!(broadcasts[0].contains(&format!("×{steps} ")), "{text}");
        events_bytes.push(events_section_bytes(&traced.trace));
        trace_bytes.push(std::fs::metadata(&traced.trace).unwrap().len());
    }
    // Ranks: the events (each process's own record adds a few bytes a rank); steps: the
    // whole trace.
    eprintln!("coupled_halves events: {events_bytes:?} B, traces: {trace_bytes:?} B");
    assert!(
        10 * events_bytes[1] <= 11 * events_bytes[0],
        "{events_bytes:?}"
    );
    assert!(
        20 * trace_bytes[2] <= 21 * trace_bytes[0],
        "{trace_bytes:?}"
    );
}

#[test]
fn communicators_are_named_alike_whatever_memory_they_took() {
    // comm_reuse.c: the second communicator takes the first one's freed memory on even
    // ranks, not on odd ones (Open MPI's handles are addresses). Numbered by address, odd
    // and even ranks named it differently and its reductions were a part per rank set;
    // numbered in the order the program made them, every rank shares every leaf.
    let _alone = alone();
    for ranks in [4u64, 8] {
        let (_directory, traced) = trace_mpi_pattern("comm_reuse", ranks, 20);
        let count = |call: &str| traced.summary["calls"][call]["count"].as_u64();
        assert_eq!(count("MPI_Allreduce"), Some(20 * ranks));
        assert_eq!(count("MPI_Comm_dup"), Some(2 * ranks));
        assert_eq!(count("MPI_Comm_free"), Some(2 * ranks));
        assert_eq!(
            shared_streams(&traced.trace),
            [format!("one of {ranks} ranks sharing a stream")]
        );
        assert_eq!(
            rank_sets(&traced.trace),
            Vec::<String>::new(),
            "{ranks} ranks"
        );
    }
}

#[test]
fn each_ranks_tree_of_names_costs_the_file_table_nothing_more() {
    // rank_trees.c (mdtest -u): each rank's 4 directories and 200 files, its rank in every
    // name. The file table lists every name, each rank's a block of the first's with its
    // rank: the same bytes at 4 and 16 ranks (it was a run list per rank, 4 times as big,
    // and ranks 10-15 sorted between 1 and 2); one stream, no rank sets. Both runs in one
    // directory: its random name's digits are numbers of the table too.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi_pattern("rank_trees", directory.path());
    let mut table_bytes = Vec::new();
    let mut events_bytes = Vec::new();
    for ranks in [4u64, 16] {
        let trace = directory.path().join(format!("trace-{ranks}.cairn"));
        let traced = trace_mpi_program(&program, directory.path(), ranks, 50, trace);
        let count = |call: &str| traced.summary["calls"][call]["count"].as_u64();
        assert_eq!(count("open"), Some(200 * ranks));
        assert_eq!(count("unlink"), Some(200 * ranks));
        assert_eq!(count("mkdir"), Some(4 * ranks));
        let names: Vec<&str> = traced.summary["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|file| file["path"].as_str().unwrap())
            .collect();
        for rank in 0..ranks {
            let last = format!("/tree.{rank}.0/tree.{rank}.3/file.{rank}.199");
            assert!(names.iter().any(|name| name.ends_with(&last)), "{last}");
        }
        assert_eq!(
            shared_streams(&traced.trace),
            [format!("one of {ranks} ranks sharing a stream")]
        );
        assert_eq!(rank_sets(&traced.trace), Vec::<String>::new());
        table_bytes.push(section_raw_bytes(&traced.trace, "FILE"));
        events_bytes.push(section_raw_bytes(&traced.trace, "EVNT"));
    }
    eprintln!("rank_trees file table: {table_bytes:?} B raw, events {events_bytes:?} B raw");
    assert_eq!(table_bytes[1], table_bytes[0]);
    // Each rank's table of the 204 files it names is the previous rank's, renumbered by
    // one constant: a run, not a byte a file (a rank cost 204 raw bytes more).
    assert!(
        events_bytes[1] <= events_bytes[0] + 12 * 16,
        "{events_bytes:?}"
    );
}

/// The stored size of a trace's events section (`cairn dump --sections`).
fn events_section_bytes(trace: &std::path::Path) -> u64 {
    section_bytes(trace, "EVNT")
}

/// The uncompressed size of a trace's section `kind` (`cairn dump --sections`: "FILE v3:
/// 105 bytes stored, 339 raw").
fn section_raw_bytes(trace: &std::path::Path, kind: &str) -> u64 {
    let text = dump(trace, &["--sections"]);
    let line = text
        .lines()
        .find(|line| line.trim_start().starts_with(kind))
        .unwrap_or_else(|| panic!("{text}"));
    line.trim_end_matches(" raw")
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The stored size of a trace's section `kind` (`cairn dump --sections`).
fn section_bytes(trace: &std::path::Path, kind: &str) -> u64 {
    let text = dump(trace, &["--sections"]);
    let line = text
        .lines()
        .find(|line| line.trim_start().starts_with(kind))
        .unwrap_or_else(|| panic!("{text}"));
    line.split(": ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn dump(trace: &std::path::Path, extra: &[&str]) -> String {
    cairn_text("dump", extra, trace)
}

/// How each stream several ranks share says so in the dump, once per shared stream.
fn shared_streams(trace: &std::path::Path) -> Vec<String> {
    dump(trace, &[])
        .lines()
        .filter(|line| line.starts_with("pid ") && !line.contains("; as pid"))
        .filter_map(|line| {
            line.split_once("  (")
                .map(|(_, note)| note.trim_end_matches(')').to_string())
        })
        .collect()
}

/// The rank sets of the parts only some ranks have, distinct, in the order the dump shows
/// them.
fn rank_sets(trace: &std::path::Path) -> Vec<String> {
    let mut sets: Vec<String> = Vec::new();
    for line in dump(trace, &[]).lines() {
        let line = line.trim();
        if (line.starts_with("only ranks") || line.starts_with("all ranks but"))
            && line.ends_with(" {")
        {
            let set = line.trim_end_matches(" {").to_string();
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
    }
    sets
}

#[test]
fn stencil_on_a_3d_grid_shares_one_stream_whatever_the_grid() {
    // A 2 × 2 × 2 grid (every rank a corner, 3 neighbours), a 3 × 3 × 3 grid (corners,
    // edges, faces and one interior rank) and a 4 × 3 × 3 one: every rank shares one
    // stream, each direction's ranks a set of nested runs, and once every kind of rank is
    // there the events cost about the same.
    let _alone = alone();
    let steps = 20;
    let mut events_bytes = Vec::new();
    for (ranks, messages_per_step) in [(8u64, 24u64), (27, 108), (36, 150)] {
        let (_directory, traced) = trace_mpi_pattern("stencil3d", ranks, steps);
        let calls = &traced.summary["calls"];
        let count = |call: &str| calls[call]["count"].as_u64();
        assert_eq!(count("MPI_Isend"), Some(messages_per_step * steps));
        assert_eq!(count("MPI_Irecv"), Some(messages_per_step * steps));
        assert_eq!(
            calls["MPI_Isend"]["bytes"].as_u64(),
            Some(4096 * messages_per_step * steps)
        );
        assert_eq!(count("MPI_Waitall"), Some(ranks * steps));
        assert_eq!(
            shared_streams(&traced.trace),
            [format!("one of {ranks} ranks sharing a stream")]
        );
        let sets = rank_sets(&traced.trace);
        if ranks == 27 {
            assert_eq!(
                sets,
                [
                    // West, east, south, north, down, up.
                    "all ranks but 0-24/3",
                    "all ranks but 2-26/3",
                    "only ranks (3-8)×3/9",
                    "only ranks (0-5)×3/9",
                    "only ranks 9-26",
                    "only ranks 0-17",
                    // Waitall of 6 (corners), 8 (edges), 10 (faces) and 12 requests.
                    "only ranks ((0,2)×2/6)×2/18",
                    "only ranks (1-11/2)×2/14",
                    "only ranks 4,10,12-16/2,22",
                    "only ranks 13",
                ]
            );
        }
        events_bytes.push(events_section_bytes(&traced.trace));
    }
    eprintln!("stencil3d events section: {events_bytes:?} B");
    assert!(
        10 * events_bytes[2] <= 11 * events_bytes[1],
        "{events_bytes:?}"
    );
}

#[test]
fn recursive_doubling_and_transpose_share_one_stream() {
    // Partners that are not the rank plus a constant still give one stream for all ranks,
    // every message exact: rank XOR 2^k is kept as such (no part of some ranks), the
    // transposed grid position as q · rank plus a slope per grid row (one part: the ranks
    // off the diagonal), so the transpose's events cost about the same at 4 and 16 ranks.
    let _alone = alone();
    let iterations = 20;
    let mut transpose_events = Vec::new();
    for ranks in [4u64, 16] {
        let steps = ranks.trailing_zeros() as u64;
        let (_directory, traced) = trace_mpi_pattern("doubling", ranks, iterations);
        let calls = &traced.summary["calls"];
        assert_eq!(
            calls["MPI_Sendrecv"]["count"].as_u64(),
            Some(ranks * steps * iterations)
        );
        assert_eq!(
            shared_streams(&traced.trace),
            [format!("one of {ranks} ranks sharing a stream")]
        );
        assert!(rank_sets(&traced.trace).is_empty());
        assert_eq!(
            calls["MPI_Sendrecv"]["bytes"].as_u64(),
            Some(2048 * ranks * steps * iterations)
        );
        let (_directory, traced) = trace_mpi_pattern("transpose", ranks, iterations);
        let calls = &traced.summary["calls"];
        let off_diagonal = ranks - (ranks as f64).sqrt() as u64;
        assert_eq!(
            calls["MPI_Sendrecv"]["count"].as_u64(),
            Some(off_diagonal * iterations)
        );
        assert_eq!(
            calls["MPI_Barrier"]["count"].as_u64(),
            Some(ranks * iterations)
        );
        assert_eq!(
            shared_streams(&traced.trace),
            [format!("one of {ranks} ranks sharing a stream")]
        );
        let off_diagonal = if ranks == 4 {
            "only ranks 1,2"
        } else {
            "all ranks but 0-15/5"
        };
        assert_eq!(rank_sets(&traced.trace), [off_diagonal]);
        transpose_events.push(events_section_bytes(&traced.trace));
    }
    eprintln!("transpose events section: {transpose_events:?} B");
    // About 200 bytes either way: a few more for the statistics of more ranks (more
    // histogram bins) and the off-diagonal set, not a leaf or a part more.
    assert!(
        transpose_events[1] <= transpose_events[0] + 40,
        "{transpose_events:?}"
    );
}

#[test]
fn worker_threads_doing_the_same_share_one_stream() {
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/worker_threads", directory.path(), &["-pthread"]);
    let mut sizes = Vec::new();
    for threads in [16u64, 64] {
        let work = tempfile::tempdir_in(directory.path()).unwrap();
        let traced = trace(
            work.path(),
            &program,
            &[work.path().to_str().unwrap(), &threads.to_string()],
        );
        assert_eq!(traced.exit_code(), Some(0));
        assert_eq!(traced.paths().len() as u64, threads + 1);
        for index in [0, threads / 2, threads - 1] {
            assert_fields(
                traced.file(&format!("/part-{index:03}.dat")),
                &[
                    ("opens", 1),
                    ("writes", 100),
                    ("bytes_written", 51200),
                    ("consecutive_writes", 99),
                    ("closes", 1),
                ],
            );
        }
        assert_fields(
            traced.file("/shared.dat"),
            &[
                ("writes", 10 * threads),
                ("bytes_written", 640 * threads),
                // The access order is each thread's own (as Darshan's per rank).
                ("consecutive_writes", 9 * threads),
                ("max_offset", 640 * threads),
            ],
        );
        // Every worker's events are one stream, the others' as the first's.
        let dump = std::process::Command::new(cairn_binary())
            .arg("dump")
            .arg(&traced.trace)
            .output()
            .unwrap();
        let dump = String::from_utf8(dump.stdout).unwrap();
        let sharing = format!("(one of {threads} threads sharing a stream");
        assert_eq!(
            dump.lines().filter(|line| line.contains(&sharing)).count() as u64,
            threads,
            "{dump}"
        );
        sizes.push(std::fs::metadata(&traced.trace).unwrap().len());
    }
    eprintln!("worker_threads, 16 and 64 threads: {sizes:?} B");
    assert!(
        sizes[1].abs_diff(sizes[0]) as f64 <= 0.10 * sizes[0] as f64,
        "{sizes:?}"
    );
}

/// The random patterns' generator (a 64-bit linear congruential sequence, high bits).
fn generator_next(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

/// Darshan's access order of accesses of `size` bytes at `offsets`, in turn: how many
/// started where the one before ended (consecutive) and how many at or after it (sequential).
fn access_order(offsets: &[u64], size: u64) -> (u64, u64) {
    offsets
        .windows(2)
        .fold((0, 0), |(consecutive, sequential), pair| {
            let end = pair[0] + size;
            (
                consecutive + (pair[1] == end) as u64,
                sequential + (pair[1] >= end) as u64,
            )
        })
}

#[test]
fn random_reads_keep_exact_offsets_in_under_four_bytes_a_call() {
    // Nothing repeats but the call: the offsets go to the stream's column, the reads fold.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/random_reads", directory.path(), &[]);
    let reads = 100_000u64;
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap(), &reads.to_string()],
    );
    assert_eq!(traced.exit_code(), Some(0));
    // The program's generator, to know the access order it produces.
    let mut state = 12345u64;
    let offsets: Vec<u64> = (0..reads)
        .map(|_| (generator_next(&mut state) % 16384) * 4096)
        .collect();
    let (consecutive, sequential) = access_order(&offsets, 4096);
    let highest = offsets.iter().max().unwrap() + 4096;
    assert_fields(
        traced.file("/table.dat"),
        &[
            ("opens", 1),
            ("reads", reads),
            ("bytes_read", 4096 * reads),
            ("sequential_reads", sequential),
            ("consecutive_reads", consecutive),
            ("max_offset", highest),
            ("closes", 1),
        ],
    );
    // Every read's offset, in order, as the program chose it (the tracer staged them in
    // offsets records, the builder put them in the column).
    let expanded = expanded_offsets(&traced.trace, "pread");
    assert!(
        expanded == offsets,
        "the expanded offsets differ from the program's"
    );
    let size = std::fs::metadata(&traced.trace).unwrap().len();
    eprintln!("random_reads, {reads} reads: {size} B");
    assert!(size <= 4 * reads, "{size} B for {reads} reads");
}

#[test]
fn random_stdio_records_keep_exact_offsets() {
    // fseek to a random record, then fread it: the tracer stages the pair in offsets
    // records, the builder finds each fread where its fseek put the stream; every offset
    // comes back as the program chose it, in under 3 bytes a call.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/random_stdio", directory.path(), &[]);
    let reads = 20_000u64;
    let data = directory.path().join("records.dat");
    let traced = trace(
        directory.path(),
        &program,
        &[data.to_str().unwrap(), &reads.to_string()],
    );
    assert_eq!(traced.exit_code(), Some(0));
    let mut state = 7u64;
    let offsets: Vec<u64> = (0..reads)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 4096) * 512
        })
        .collect();
    assert!(
        expanded_offsets(&traced.trace, "fread") == offsets,
        "the expanded offsets differ from the program's"
    );
    assert_fields(
        traced.file("/records.dat"),
        &[
            ("reads", reads),
            ("bytes_read", 512 * reads),
            ("writes", 4096),
        ],
    );
    let size = std::fs::metadata(&traced.trace).unwrap().len();
    eprintln!("random_stdio, {reads} reads: {size} B");
    assert!(size <= 3 * (2 * reads + 4096), "{size} B");
}

#[test]
fn random_seeks_then_transfers_keep_exact_offsets_in_under_two_bytes_a_call() {
    // IOR -z: a seek to a shuffled block then a transfer; the seeks' offsets and the
    // transfers' access order go to the column.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/random_seeks", directory.path(), &[]);
    let blocks = 16_384u64;
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap(), &blocks.to_string()],
    );
    assert_eq!(traced.exit_code(), Some(0));
    // The program's shuffles, to know the access order.
    let mut state = 42u64;
    let mut orders = [(0u64, 0u64); 2];
    for phase in &mut orders {
        let mut order: Vec<u64> = (0..blocks).collect();
        for i in (1..blocks as usize).rev() {
            let j = (generator_next(&mut state) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let offsets: Vec<u64> = order.iter().map(|block| block * 4096).collect();
        *phase = access_order(&offsets, 4096);
    }
    assert_fields(
        traced.file("/random.dat"),
        &[
            ("seeks", 2 * blocks),
            ("writes", blocks),
            ("reads", blocks),
            ("bytes_written", 4096 * blocks),
            ("bytes_read", 4096 * blocks),
            ("consecutive_writes", orders[0].0),
            ("sequential_writes", orders[0].1),
            ("consecutive_reads", orders[1].0),
            ("sequential_reads", orders[1].1),
            ("max_offset", 4096 * blocks),
        ],
    );
    let size = std::fs::metadata(&traced.trace).unwrap().len();
    eprintln!("random_seeks, {blocks} blocks: {size} B");
    // 4 × blocks calls (a seek and a transfer, twice), each seek's 14-bit block number the
    // bulk of it.
    assert!(size <= 8 * blocks, "{size} B for {} calls", 4 * blocks);
}

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
    let binary = measuring_cairn_binary();
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
fn records_read_through_their_index_fold_each_stream_by_its_own_stride() {
    // indexed_records.c: each record appended, then its index entry written, through one
    // pwrite site; then each entry read and its record, through one pread site. The
    // distance from one access to the next grows with the record's number, so no two
    // were alike (8.1 KB at 1,000 records, 103 KB at 10,000); each access is now taken
    // from the last of its own size at its site (16-byte entries, 4 KiB records), which
    // its stride moves alike every time.
    folds_at_any_size("indexed_records", 1000, |traced, records| {
        traced.assert_files(&["/store.dat"]);
        assert_fields(
            traced.file("/store.dat"),
            &[
                ("opens", 1),
                ("closes", 1),
                ("writes", 2 * records),
                ("reads", 2 * records),
                ("bytes_written", 4112 * records),
                ("bytes_read", 4112 * records),
                // Each record lies after the entry before it (the first record read, after
                // the first entry; the first written, after nothing), no access right
                // after the one before: the offsets are exact.
                ("sequential_writes", records - 1),
                ("sequential_reads", records),
                ("consecutive_writes", 0),
                ("consecutive_reads", 0),
                ("max_offset", 4112 * records),
            ],
        );
    });
}

#[test]
fn a_short_block_that_breaks_does_not_lose_the_long_block_after_it() {
    // 17 writes a record: the third tag starts a block of no whole repetition, the record
    // then repeats as one long block the trace builder must read back (it dropped it, and
    // with it 96% of the writes, without a word).
    // At 1,000 and 10,000 records: the trace is mostly its 17 leaves' timing statistics,
    // whose histogram counts take a byte more each between 50 and 500.
    folds_at_any_size("record_fields", 1000, |traced, records| {
        traced.assert_files(&["/records.dat"]);
        assert_fields(
            traced.file("/records.dat"),
            &[
                ("opens", 1),
                ("closes", 1),
                ("writes", 17 * records),
                ("bytes_written", 81 * records),
                ("max_offset", 81 * records),
            ],
        );
        traced.assert_no_block_lost();
    });
}

/// interleaved.c's exact figures after `steps` steps.
fn assert_interleaved(traced: &Traced, steps: u64) {
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
}

#[test]
fn interleaved_strided_streams_fold() {
    folds_at_any_size("interleaved", 20, |traced, steps| {
        assert_interleaved(traced, steps)
    });
}

#[test]
fn interleaved_streams_fold_whole_steps_while_the_program_runs() {
    // interleaved.c's step is 768 calls: sixteen rows of sixteen (seek, write) pairs — a
    // block of 2 each, the rows a block of 32 — then sixteen rows of strided preads. The
    // tracer follows the step's period from a streak that began where its window did (cut
    // when its bodies grew to 1,024 events), and each multiple of the period since fell
    // inside an inner block, where no block can start: every step was staged a record a
    // row, 12 bytes a call (1.9 MB for 200 steps, whose trace build then took 50 ms of a
    // 130 ms run). A streak with no known beginning now starts its block at the first
    // event that can: from the third step on, one block record whatever the steps.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/interleaved", directory.path(), &[]);
    let mut staged = Vec::new();
    for steps in [20u64, 200] {
        let work = tempfile::tempdir_in(directory.path()).unwrap();
        let staging = work.path().join("staging");
        let output = std::process::Command::new(&program)
            .arg(work.path())
            .arg(steps.to_string())
            .env("LD_PRELOAD", library())
            .env("CAIRN_DIR", &staging)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        staged.push(staged_record_bytes(&staging));
        let traced = merge_staging(&staging, work.path().join("t.cairn"));
        assert_interleaved(&traced, steps);
        traced.assert_no_block_lost();
    }
    assert_eq!(staged[0], staged[1], "staged bytes at 20 and 200 steps");
    // The first steps' records (about 50 KB) and the step's block, which keeps each of its
    // 768 positions' statistics: within one chunk.
    assert!(staged[1] < 256 * 1024, "{staged:?}");
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
        // Every file listed: which 20 are the busiest depends on timing.
        let text = cairn_text("summary", &["--files", "0"], &traced.trace);
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

#[test]
fn only_files_of_a_loop_over_several_files_have_estimated_times() {
    // Five probe files opened and read in a loop (one folded loop over several files:
    // each file's time is a share), then a loop of writes to one log (exact). The summary
    // told leaves apart by the address of their decoded figures, which the walk reuses
    // from one leaf to the next: the log was marked estimated too.
    let directory = tempfile::tempdir().unwrap();
    let program = compile("probes_then_log", directory.path(), &[]);
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap(), "100"],
    );
    assert_eq!(traced.exit_code(), Some(0));
    for probe in 0..5 {
        let file = traced.file(&format!("/probe{probe}.rc"));
        assert_fields(file, &[("opens", 1), ("reads", 1), ("closes", 1)]);
        assert_eq!(file["time_estimated"], true, "{file}");
    }
    let log = traced.file("/run.log");
    assert_fields(log, &[("writes", 100), ("bytes_written", 1800)]);
    assert_eq!(log["time_estimated"], false, "{log}");
}

#[test]
fn a_monitor_line_alone_in_its_loop_keeps_its_lengths_in_the_column() {
    // patterns/residual_monitor.c: a loop of one `fprintf` whose line (a `%g` residual)
    // changes length every few iterations among a handful. Before, each change ended a run
    // and started another (4.9 KB at 2,000 lines, 33.7 KB at 20,000: 1.6 B a line); the
    // tracer now counts a run's repetitions into the sizes' rule, so the sizes wander and
    // go to the column. Every line's size and position is exact.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/residual_monitor", directory.path(), &[]);
    let binary = measuring_cairn_binary();
    let mut bytes = Vec::new();
    for lines in [2_000u64, 20_000] {
        let work = tempfile::tempdir_in(directory.path()).unwrap();
        let traced = trace_with(
            &binary,
            work.path(),
            &program,
            &[work.path().to_str().unwrap(), &lines.to_string()],
        );
        assert_eq!(traced.exit_code(), Some(0));
        let (log, lengths) = line_lengths(&work.path().join("monitor.log"));
        assert_eq!(lengths.len() as u64, lines);
        assert_written_in_order(&traced, "/monitor.log", &log, lines);
        if lines == 2_000 {
            let expanded = cairn_text("dump", &["--expand", "--limit", "100000"], &traced.trace);
            assert_eq!(fprintf_results(&expanded), lengths);
        }
        bytes.push(std::fs::metadata(&traced.trace).unwrap().len());
    }
    eprintln!("residual_monitor traces at 2,000 and 20,000 lines: {bytes:?} B");
    assert!(bytes[1] - bytes[0] <= 18_000, "{bytes:?}");
}

#[test]
fn a_log_line_a_byte_longer_from_step_10_100_and_1000_keeps_one_loop() {
    // patterns/step_log.c: three fields written with `pwrite` and a progress line with
    // `fprintf` each step, the line a byte longer from steps 10, 100 and 1000 on. The
    // loops of steps that differ only in the line's size are one loop, each line's size in
    // the stream's column (before, a copy of the step at every new number of digits:
    // 1,286 → 1,420 B from 200 to 2,000 steps, +10%; now about 1,060 → 1,090 B). The first
    // step, each file's first access (neither consecutive nor sequential), is one of the
    // loop's iterations: every step is one loop.
    folds_at_any_size("step_log", 200, |traced, steps| {
        let folded = cairn_text("dump", &[], &traced.trace);
        assert_eq!(
            folded
                .lines()
                .filter(|line| line.contains("loop ×"))
                .count(),
            1,
            "{folded}"
        );
        assert!(folded.contains(&format!("  loop ×{steps} {{")), "{folded}");
        let directory = traced.trace.parent().unwrap();
        let (log, lines) = line_lengths(&directory.join("step.log"));
        assert_eq!(lines.len() as u64, steps);
        assert_written_in_order(traced, "/step.log", &log, steps);
        assert_fields(
            traced.file("/results.dat"),
            &[
                ("writes", 3 * steps),
                ("consecutive_writes", 3 * steps - 1),
                ("bytes_written", 12800 * steps),
                ("max_offset", 12800 * steps),
            ],
        );
        // Each line's size and offset, as the expanded stream gives them.
        let dump = cairn_text("dump", &["--expand"], &traced.trace);
        let written: Vec<(u64, u64)> = dump
            .lines()
            .filter(|line| line.contains("fprintf("))
            .map(|line| {
                let (before, after) = line.split_once(" bytes @ ").expect("a size and offset");
                let size = before.rsplit(", ").next().unwrap().parse().unwrap();
                let offset = after.split(')').next().unwrap().parse().unwrap();
                (size, offset)
            })
            .collect();
        let mut offset = 0;
        let expected: Vec<(u64, u64)> = lines
            .iter()
            .map(|size| {
                offset += size;
                (*size, offset - size)
            })
            .collect();
        assert_eq!(written, expected);
    });
}

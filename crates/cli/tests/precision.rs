//! Precision levels (`cairn run --precision P`): values that differ at a call site become
//! histograms, so irregular programs' traces fold, while every count and byte total stays
//! exactly what the lossless trace says, and the summary says what was blurred.
//!
//! A test binary of its own, its tests one at a time: trace sizes are compared.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What must not change with the precision level: per call count and bytes, per file
/// bytes, access order counts and highest offset, MPI bytes sent and received (not the
/// size histograms and statistics, which are estimates below 100).
fn exact_figures(summary: &Value) -> Value {
    let mut figures = summary_figures(
        summary,
        &[
            "path",
            "bytes_read",
            "bytes_written",
            "reads",
            "writes",
            "max_offset",
            "consecutive_reads",
            "sequential_reads",
            "consecutive_writes",
            "sequential_writes",
        ],
    );
    figures["sent"] = summary["mpi_messages"]["sent_bytes"].clone();
    figures["received"] = summary["mpi_messages"]["received_bytes"].clone();
    figures
}

/// `program ARGUMENTS` traced on `ranks` ranks under Open MPI's `mpirun` at `precision`,
/// into `trace`.
fn trace_mpi_at(
    trace: &Path,
    ranks: u64,
    precision: u8,
    program: &Path,
    arguments: &[&std::ffi::OsStr],
) {
    succeeded(
        mpirun(ranks)
            .arg(cairn_binary())
            .args(["run", "-q", "--precision", &precision.to_string(), "-o"])
            .arg(trace)
            .arg("--")
            .arg(program)
            .args(arguments),
    );
}

/// `mpirun.openmpi --oversubscribe -np RANKS`, allowed to run as root.
fn mpirun(ranks: u64) -> std::process::Command {
    let mut command = std::process::Command::new("mpirun.openmpi");
    command
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    command
}

/// `cairn replay TRACE` on `ranks` ranks in `directory`: what it printed (it succeeded).
fn replayed_on(trace: &Path, ranks: u64, directory: &Path) -> String {
    let output = mpirun(ranks)
        .arg(cairn_binary())
        .arg("replay")
        .arg(trace)
        .current_dir(directory)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{text}");
    text
}

/// `patterns/irregular` on `ranks` ranks for `steps` steps at `precision`: the trace.
fn irregular(
    directory: &Path,
    program: &Path,
    ranks: u64,
    steps: u64,
    precision: u8,
) -> std::path::PathBuf {
    let trace = directory.join(format!("irregular-{ranks}-{precision}.cairn"));
    let (steps, log) = (steps.to_string(), directory.join("irregular.log"));
    trace_mpi_at(
        &trace,
        ranks,
        precision,
        program,
        &[steps.as_ref(), log.as_ref()],
    );
    trace
}

/// The solver iterations `patterns/irregular` runs at `step` (its `20 + jitter(0, step, 4)`).
fn solver_iterations(step: u64) -> u64 {
    let mut x = (step as u32).wrapping_mul(104_729).wrapping_add(12_345);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    20 + (x % 4) as u64
}

#[test]
fn an_irregular_mpi_program_folds_below_100_with_exact_totals() {
    // Two rank groups with different message sizes and distances, sizes jittering with
    // the rank and the step, rank 0 logging lines of changing length: nothing repeats
    // exactly, so the lossless trace grows with steps and ranks; below 100 it folds.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/irregular", directory.path());
    library();
    let (ranks, steps) = (8, 30);
    let mut sizes = Vec::new();
    let mut lossless = None;
    for precision in [100, 95, 0] {
        let trace = irregular(directory.path(), &program, ranks, steps, precision);
        let summary = summary_json(&trace, &[]);
        let figures = exact_figures(&summary);
        // 8 ranks × 30 steps: an Isend, an Irecv, a Waitall and an Allreduce each, and 20 to
        // 23 solver Allreduces; rank 0 writes 30 lines of 1,000–1,039 bytes.
        assert_eq!(figures["calls"]["MPI_Isend"][0], ranks * steps);
        assert_eq!(figures["calls"]["write"][0], steps);
        let solver: u64 = (0..steps).map(solver_iterations).sum();
        assert_eq!(
            figures["calls"]["MPI_Allreduce"][0],
            ranks * (steps + solver)
        );
        assert_eq!(figures["sent"], figures["received"]);
        match &lossless {
            None => lossless = Some(figures),
            Some(lossless) => assert_eq!(&figures, lossless, "precision {precision}"),
        }
        let blurred = summary["blurred"].as_array().unwrap();
        let blurred_calls: Vec<(&str, &str)> = blurred
            .iter()
            .map(|entry| {
                (
                    entry["call"].as_str().unwrap(),
                    entry["parameter"].as_str().unwrap(),
                )
            })
            .collect();
        if precision == 100 {
            assert!(blurred.is_empty(), "{blurred:?}");
        } else {
            // Sizes blurred: the sends', the completions' (bytes received) and the log's;
            // never counts or files. Each range is what the program did.
            assert!(
                blurred_calls.contains(&("MPI_Isend", "size")),
                "{blurred_calls:?}"
            );
            assert!(
                blurred_calls.contains(&("write", "size")),
                "{blurred_calls:?}"
            );
            for entry in blurred {
                let (min, max) = (
                    entry["min"].as_i64().unwrap(),
                    entry["max"].as_i64().unwrap(),
                );
                match (
                    entry["call"].as_str().unwrap(),
                    entry["parameter"].as_str().unwrap(),
                ) {
                    ("write", _) => assert!(min >= 1000 && max < 1040, "{entry}"),
                    // The step loop: a rank whose first step stands apart runs it once
                    // less, and its loop merges with the others' (within 5%).
                    ("MPI_Irecv", "iterations") => {
                        assert!(min >= steps as i64 - 1 && max <= steps as i64, "{entry}")
                    }
                    (_, "iterations") => assert!(min >= 20 && max <= 23, "{entry}"),
                    _ => assert!(min >= 4096 && max < 16384 + 512, "{entry}"),
                }
            }
            let text = cairn_text("summary", &[], &trace);
            assert!(text.contains("estimated: MPI_Isend sizes of"), "{text}");
            let dump = cairn_text("dump", &[], &trace);
            assert!(dump.contains("[histogram: sizes"), "{dump}");
            if precision == 0 {
                // Every rank's sends share a few leaves, their first step's included (a
                // message size is a histogram from its first value, so the ranks' merge):
                // the lossless trace has one per rank and step.
                let sends = dump.matches("MPI_Isend(").count();
                assert!(sends <= 8, "{sends} send leaves\n{dump}");
                // The solver's counts (20–23, up to 15% apart) all merge at 0.
                assert!(blurred_calls.contains(&("MPI_Allreduce", "iterations")));
                assert!(dump.contains("loop ×20..23 {"), "{dump}");
                assert!(text.contains("ran 20..23 iterations each"), "{text}");
            } else {
                // At 95 only counts within 5% of one another share a histogram: each
                // loop's range (the summary's line is over all loops of a call).
                for line in dump
                    .lines()
                    .filter(|line| line.trim_start().starts_with("loop ×"))
                {
                    let range = line.trim_start()["loop ×".len()..]
                        .split(' ')
                        .next()
                        .unwrap();
                    if let Some((min, max)) = range.split_once("..") {
                        let (min, max): (i64, i64) = (min.parse().unwrap(), max.parse().unwrap());
                        assert!((max - min) * 100 <= 5 * max, "{line}");
                    }
                }
            }
        }
        sizes.push(std::fs::metadata(&trace).unwrap().len());
    }
    eprintln!("irregular, {ranks} ranks, {steps} steps: P=100/95/0 {sizes:?} B");
    // Jitter of 3% merges at 95 and at 0, the solver's counts at 0; the lossless trace
    // keeps every size and count.
    assert!(sizes[2] * 4 < sizes[0], "{sizes:?}");
    // At 95 about half (48–50% measured, its timing statistics' bits moving it by ±2%
    // from run to run).
    assert!(sizes[1] * 100 < sizes[0] * 55, "{sizes:?}");
    assert!(sizes[2] < sizes[1], "{sizes:?}");
}

/// Traces `program DIR BLOCKS` (a block pattern: `random_seeks`, `random_sizes`) at
/// `precision` in a directory of its own: the trace's size, the figures every precision
/// level must keep exactly (the file's name, the run's own directory, left out) and the
/// summary.
fn run_blocks(
    directory: &std::path::Path,
    program: &std::path::Path,
    precision: u8,
    blocks: u64,
) -> (u64, Value, Value) {
    let work = tempfile::tempdir_in(directory).unwrap();
    let trace = work.path().join("blocks.cairn");
    succeeded(
        std::process::Command::new(cairn_binary())
            .args(["run", "-q", "--precision", &precision.to_string(), "-o"])
            .arg(&trace)
            .arg("--")
            .arg(program)
            .arg(work.path())
            .arg(blocks.to_string()),
    );
    let summary = summary_json(&trace, &[]);
    let mut figures = exact_figures(&summary);
    figures["files"][0]["path"] = Value::Null;
    (std::fs::metadata(&trace).unwrap().len(), figures, summary)
}

/// A summary's `blurred` list: (call, parameter, min, max) per entry.
fn blurred_entries(summary: &Value) -> Vec<(String, String, i64, i64)> {
    summary["blurred"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["call"].as_str().unwrap().to_string(),
                entry["parameter"].as_str().unwrap().to_string(),
                entry["min"].as_i64().unwrap(),
                entry["max"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn random_seeks_at_precision_90_do_not_grow_with_the_calls() {
    // IOR -z's lseek + write at shuffled offsets: lossless, every offset is kept (the
    // column); at 90 the offsets become a histogram once two in a row fall within 10%, and
    // the trace stops growing, while counts, bytes, the highest offset and Darshan's
    // access order counts stay exact.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/random_seeks", directory.path(), &[]);
    library();
    let run = |precision, blocks| run_blocks(directory.path(), &program, precision, blocks);
    let (lossless, exact, _) = run(100, 20_000);
    let (small, small_figures, _) = run(90, 2_000);
    let (large, figures, summary) = run(90, 20_000);
    assert_eq!(figures, exact);
    assert_eq!(small_figures["calls"]["write"][0], 2_000);
    let blurred = &summary["blurred"][0];
    assert_eq!(
        (blurred["call"].as_str(), blurred["parameter"].as_str()),
        (Some("lseek"), Some("offset"))
    );
    assert!(blurred["min"].as_i64().unwrap() >= 0);
    assert!(blurred["max"].as_i64().unwrap() < 20_000 * 4096);
    eprintln!(
        "random_seeks at 90: {small} B (2,000 blocks), {large} B (20,000); lossless {lossless} B"
    );
    // The site's first offsets stay exact until one falls within 10% of one of the four
    // before it: a head of a few lseek + write pairs (about 30 B each) that does not grow
    // with the calls but moves with the shuffle — 4 at 2,000 blocks and 10 at 20,000 since
    // a file's first access is a delta from 0 (6 and 10 before): +12% in all.
    assert!(large * 100 <= small * 115, "{small} → {large}");
    assert!(large * 20 < lossless, "{large} vs {lossless}");
}

#[test]
fn ranks_seeking_at_random_keep_their_files_access_order_below_100() {
    // IOR -F -z on 4 ranks: each rank writes and reads back every block of its own file in
    // its own shuffled order (lseek + write, lseek + read). Lossless, each rank keeps its
    // offsets in its own column; below 100 the seeks blur and the ranks share one
    // stream, whose leaves count their access order — each member's own counts, so every
    // file's consecutive and sequential counts stay those of the lossless trace (before,
    // the merged leaf kept the first rank's and every member read a share of them: 334
    // sequential writes of a file instead of 980–999).
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/rank_random_seeks", directory.path());
    library();
    let run = |precision: u8| {
        let work = tempfile::tempdir_in(directory.path()).unwrap();
        let trace = work.path().join("random.cairn");
        trace_mpi_at(
            &trace,
            4,
            precision,
            &program,
            &[work.path().as_os_str(), "2000".as_ref()],
        );
        let summary = summary_json(&trace, &[]);
        let mut figures = exact_figures(&summary);
        for file in figures["files"].as_array_mut().unwrap() {
            let path = file["path"].as_str().unwrap().to_string();
            file["path"] = path.rsplit('/').next().unwrap().into();
        }
        let dump = cairn_text("dump", &[], &trace);
        let sharing = dump
            .lines()
            .filter(|line| line.contains("sharing a stream"))
            .count();
        (figures, sharing)
    };
    let (exact, alone) = run(100);
    let files: Vec<&Value> = exact["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|file| file["path"].as_str().unwrap().starts_with("random."))
        .collect();
    assert_eq!(files.len(), 4);
    // Lossless, the ranks share one stream, each with its own column of offsets (EVNT 32;
    // before, each rank had a stream of its own); each file's 2,000 writes and reads,
    // about half of them after the one before (sequential), a few right after it, and not
    // all alike.
    assert_eq!(alone, 4);
    for file in &files {
        assert_eq!(
            (file["writes"].as_u64(), file["reads"].as_u64()),
            (Some(2000), Some(2000))
        );
        for order in ["sequential_writes", "sequential_reads"] {
            let count = file[order].as_u64().unwrap();
            assert!((900..1100).contains(&count), "{order}: {count}");
        }
    }
    let sequential: std::collections::BTreeSet<u64> = files
        .iter()
        .map(|file| file["sequential_writes"].as_u64().unwrap())
        .collect();
    assert!(sequential.len() > 1, "{sequential:?}");
    for precision in [90, 0] {
        let (figures, sharing) = run(precision);
        assert!(sharing >= 3, "precision {precision}: {sharing} ranks share");
        assert_eq!(figures, exact, "precision {precision}");
    }
}

#[test]
fn random_sizes_at_precision_90_do_not_grow_with_the_calls() {
    // Compressed blocks (`patterns/random_sizes.c`): appended with sizes of their own, then
    // read back shuffled, each `pread` at its own offset with its own size. At 90 a size or
    // offset blurs as soon as it falls within 10% of one of its site's last few values:
    // compared with the last value only, the reads' offsets stayed exact for 19 reads at
    // 2,000 blocks and 230 at 20,000 (luck), and the trace grew by 39% (2,474 → 3,437 B).
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/random_sizes", directory.path(), &[]);
    library();
    let run = |precision, blocks| run_blocks(directory.path(), &program, precision, blocks);
    let (_, exact, _) = run(100, 20_000);
    let (small, small_figures, _) = run(90, 2_000);
    let (large, figures, summary) = run(90, 20_000);
    assert_eq!(figures, exact);
    assert_eq!(small_figures["calls"]["write"][0], 2_002);
    assert_eq!(small_figures["calls"]["pread"][0], 2_000);
    let blurred = blurred_entries(&summary);
    for (call, parameter) in [("write", "size"), ("pread", "size"), ("pread", "offset")] {
        let entry = blurred
            .iter()
            .find(|entry| entry.0 == call && entry.1 == parameter)
            .unwrap_or_else(|| panic!("{call} {parameter} not blurred: {blurred:?}"));
        if parameter == "size" {
            assert!(entry.2 >= 1024 && entry.3 <= 8192, "{entry:?}");
        } else {
            assert!(entry.2 >= 0 && entry.3 < 20_000 * 8192, "{entry:?}");
        }
    }
    eprintln!("random_sizes at 90: {small} B (2,000 blocks), {large} B (20,000)");
    assert!(large * 100 <= small * 110, "{small} → {large}");
}

#[test]
fn lines_of_their_own_lengths_read_back_fold_below_100() {
    // A log whose lines have as many digits as they have (`patterns/log_lines.c`), read
    // back with `fgets`, `getline` and 4 KiB `read`s: each read asks for one size and gets
    // another. Below 100 the bytes each read got become the site's histogram, so the
    // trace stops growing with the lines (before, each new length was a leaf of its own:
    // 4.6 → 34.5 KB from 1,000 to 10,000 lines at 0). The summary's read and write sizes
    // — count, extremes, mean, spread — and Darshan's bins are the lossless trace's: read
    // from the histograms' bins, not from each leaf's mean (writes of jittering lengths at
    // 0 read 19 / 21.0 / 21, stddev 0, against 18 / 21.2 / 22, 0.8 lossless).
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/log_lines", directory.path(), &[]);
    library();
    let run = |precision, lines| run_blocks(directory.path(), &program, precision, lines);
    let (lossless_small, _, _) = run(100, 2_000);
    let (lossless, exact, exact_summary) = run(100, 20_000);
    let spread = |summary: &Value| {
        let file = &summary["files"][0];
        serde_json::json!([
            file["read_sizes"],
            file["write_sizes"],
            file["read_histogram"],
            file["write_histogram"]
        ])
    };
    assert_eq!(exact["calls"]["fgets"][0], 20_001);
    assert_eq!(exact["calls"]["getline"][0], 20_001);
    for precision in [90, 0] {
        // Medians of three runs each: the timing statistics' bytes vary from run to run by
        // a few percent under load (+5.4% once in CI against +1.7…3.0% alone).
        let median = |lines| {
            let mut runs: Vec<(u64, Value, Value)> =
                (0..3).map(|_| run(precision, lines)).collect();
            runs.sort_by_key(|(bytes, _, _)| *bytes);
            runs.swap_remove(1)
        };
        let (small, _, _) = median(2_000);
        let (large, figures, summary) = median(20_000);
        assert_eq!(figures, exact, "at {precision}");
        assert_eq!(spread(&summary), spread(&exact_summary), "at {precision}");
        let blurred = blurred_entries(&summary);
        for call in ["fgets", "getline", "fprintf"] {
            assert!(
                blurred
                    .iter()
                    .any(|entry| entry.0 == call && entry.1 == "size"),
                "{call} at {precision}: {blurred:?}"
            );
        }
        eprintln!("log_lines at {precision}: {small} B (2,000 lines), {large} B (20,000)");
        assert!(
            large * 100 <= small * 105,
            "{small} → {large} at {precision}"
        );
        assert!(
            large * 50 < lossless,
            "{large} vs {lossless} at {precision}"
        );
    }
    // Lossless, every line's length is kept.
    assert!(
        lossless > 8 * lossless_small,
        "{lossless_small} → {lossless}"
    );
}

#[test]
fn a_stream_over_its_budget_degrades_to_histograms_and_says_so() {
    // Random reads at precision 100 with a budget of 64 KiB per stream: the first reads
    // keep their offsets exactly, the rest a histogram of them; the trace stops growing
    // with the reads, every count, byte total, the highest offset and the access order
    // counts stay the lossless trace's, and the trace says which stream passed its
    // budget, after how many of its events.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/random_reads", directory.path(), &[]);
    library();
    let run = |budget: &str, reads: u64| {
        let work = tempfile::tempdir_in(directory.path()).unwrap();
        let trace = work.path().join("reads.cairn");
        succeeded(
            std::process::Command::new(cairn_binary())
                .args(["run", "-q", "--stream-budget", budget, "-o"])
                .arg(&trace)
                .arg("--")
                .arg(&program)
                .arg(work.path())
                .arg(reads.to_string()),
        );
        let summary = summary_json(&trace, &[]);
        let mut figures = exact_figures(&summary);
        figures["files"][0]["path"] = Value::Null;
        (std::fs::metadata(&trace).unwrap().len(), figures, summary)
    };
    let (lossless, exact, unbounded) = run("64M", 100_000);
    assert_eq!(unbounded["blurred"], Value::Array(Vec::new()));
    let (small, _, _) = run("64K", 20_000);
    let (large, figures, summary) = run("64K", 100_000);
    assert_eq!(figures, exact);
    let diagnostics = summary["diagnostics"].to_string();
    assert!(
        diagnostics.contains("passed its budget of 65536 bytes after")
            && diagnostics.contains("of its 100003 events"),
        "{diagnostics}"
    );
    let blurred = &summary["blurred"][0];
    assert_eq!(
        (blurred["call"].as_str(), blurred["parameter"].as_str()),
        (Some("pread"), Some("offset"))
    );
    assert!(
        blurred["max"].as_i64().unwrap() < 16_384 * 4096,
        "{blurred}"
    );
    eprintln!("random_reads with a 64 KiB budget: {small} B (20,000), {large} B (100,000); unbounded {lossless} B");
    assert!(large * 100 <= small * 110, "{small} → {large}");
    assert!(large * 3 < lossless, "{large} vs {lossless}");
}

/// The events table `cairn export --format csv EXTRA… -o DIRECTORY/NAME TRACE` writes: its
/// text, and the values of `column` in the rows whose call is `call`.
fn exported_column(
    trace: &Path,
    extra: &[&str],
    directory: &Path,
    name: &str,
    (call, column): (&str, &str),
) -> (String, Vec<i64>) {
    let tables = directory.join(name);
    succeeded(
        std::process::Command::new(cairn_binary())
            .args(["export", "--format", "csv"])
            .args(extra)
            .arg("-o")
            .arg(&tables)
            .arg(trace),
    );
    let events = std::fs::read_to_string(tables.join("events.csv")).unwrap();
    let mut lines = events.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let position = |name: &str| header.iter().position(|field| *field == name).unwrap();
    let (call_at, column_at) = (position("call"), position(column));
    let values = lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .filter(|fields| fields[call_at] == call)
        .map(|fields| fields[column_at].parse().unwrap())
        .collect();
    (events, values)
}

#[test]
fn a_blurred_trace_expands_to_values_its_histograms_hold() {
    // Every reader draws blurred values from the histograms (the same seed every time):
    // the expanded events are as many as the trace stands for, and every size lies in the
    // range the program used.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/irregular", directory.path());
    library();
    let trace = irregular(directory.path(), &program, 4, 20, 0);
    let sends = ("MPI_Isend", "request");
    let (events, sizes) = exported_column(&trace, &[], directory.path(), "tables", sends);
    assert_eq!(sizes.len(), 4 * 20);
    assert!(
        sizes.iter().all(|size| (4096..16384 + 512).contains(size)),
        "{sizes:?}"
    );
    let (again, _) = exported_column(&trace, &[], directory.path(), "again", sends);
    assert_eq!(again, events, "the same draws every time");
}

#[test]
fn a_master_worker_farm_folds_below_100_and_draws_only_peers_it_saw() {
    // The master receives each result from whichever worker finished first: its peers and
    // the results' sizes never repeat in a pattern. Lossless, the trace grows with the
    // tasks; at 0 the peers and sizes are histograms (the peers actually seen kept as a
    // set), the trace stops growing, every figure stays exact, and an export draws only
    // the peers the master really heard from.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/master_worker", directory.path());
    library();
    let run = |precision: u8, tasks: u64| {
        let trace = directory
            .path()
            .join(format!("farm-{precision}-{tasks}.cairn"));
        trace_mpi_at(
            &trace,
            4,
            precision,
            &program,
            &[tasks.to_string().as_ref()],
        );
        let summary = summary_json(&trace, &[]);
        (trace, exact_figures(&summary), summary)
    };
    let (lossless, exact, _) = run(100, 2000);
    let (small, _, _) = run(0, 200);
    let (large, figures, summary) = run(0, 2000);
    assert_eq!(figures, exact);
    // 2,000 results and 2,003 sends from the master (2,000 tasks and 3 stops).
    assert_eq!(figures["calls"]["MPI_Recv"][0], 4003);
    let blurred: Vec<(String, String)> = blurred_entries(&summary)
        .into_iter()
        .map(|(call, parameter, ..)| (call, parameter))
        .collect();
    assert!(
        blurred.contains(&("MPI_Recv".into(), "peer".into())),
        "{blurred:?}"
    );
    let size = |trace: &Path| std::fs::metadata(trace).unwrap().len();
    eprintln!(
        "master_worker at 0: {} B (200 tasks), {} B (2,000); lossless {} B",
        size(&small),
        size(&large),
        size(&lossless)
    );
    // Flat: ten times the tasks add at most a quarter (the lossless trace grows tenfold).
    // Which worker answers first depends on the machine's load, and so do a few hundred
    // bytes of timing statistics and loop shapes (1,728 → 1,987 B seen under a full
    // test run; 1–4% on a quiet machine).
    assert!(size(&large) * 100 <= size(&small) * 125);
    assert!(size(&large) * 10 < size(&lossless));
    // Rank 0's receives, expanded: 2,000 results, each from a worker (1–3).
    let (_, peers) = exported_column(
        &large,
        &["--ranks", "0"],
        directory.path(),
        "tables",
        ("MPI_Recv", "peer"),
    );
    assert_eq!(peers.len(), 2000);
    assert!(peers.iter().all(|peer| (1..=3).contains(peer)), "{peers:?}");
}

#[test]
fn wandering_neighbours_blur_relative_to_the_rank_and_each_rank_draws_its_own() {
    // wandering_neighbours.c: every step each of 16 ranks sends to the rank 1, 2 or 3
    // ahead and receives from as far behind. At 0 the peers are histograms; kept as ranks
    // they would span the whole job (an export drew 81% of the peers from other ranks'
    // neighbours); kept relative to the rank they are 1, 2 and 3, so every peer an export
    // draws is its own rank's neighbour. Totals stay exact; the trace folds.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/wandering_neighbours", directory.path());
    library();
    let (ranks, steps) = (16i64, 200u64);
    let run = |precision: u8| {
        let trace = directory.path().join(format!("wander-{precision}.cairn"));
        trace_mpi_at(
            &trace,
            ranks as u64,
            precision,
            &program,
            &[directory.path().as_os_str(), steps.to_string().as_ref()],
        );
        let summary = summary_json(&trace, &[]);
        (trace, exact_figures(&summary))
    };
    let (lossless, exact) = run(100);
    let (blurred, figures) = run(0);
    assert_eq!(figures, exact);
    assert_eq!(figures["calls"]["MPI_Isend"][0], ranks as u64 * steps);
    let size = |trace: &Path| std::fs::metadata(trace).unwrap().len();
    eprintln!(
        "wandering_neighbours, 16 ranks: lossless {} B, at 0 {} B",
        size(&lossless),
        size(&blurred)
    );
    assert!(size(&blurred) * 4 < size(&lossless));
    for (call, direction) in [("MPI_Isend", 1), ("MPI_Recv", -1)] {
        let (_, peers) = exported_column(&blurred, &[], directory.path(), call, (call, "peer"));
        let (_, of) = exported_column(&blurred, &[], directory.path(), call, (call, "rank"));
        assert_eq!(peers.len(), (ranks as u64 * steps) as usize);
        let strangers: Vec<(i64, i64)> = of
            .iter()
            .zip(&peers)
            .filter(|(rank, peer)| {
                !(1..=3).contains(&((*peer - *rank) * direction).rem_euclid(ranks))
            })
            .map(|(rank, peer)| (*rank, *peer))
            .collect();
        assert!(
            strangers.is_empty(),
            "{call}: {} drawn peers not the rank's neighbours, e.g. {:?}",
            strangers.len(),
            &strangers[..strangers.len().min(5)]
        );
    }
}

/// The loop counts a dump shows, in order (`loop ×20 {` → "20", `loop ×199..219 {` →
/// "199..219").
fn dumped_loop_counts(dump: &str) -> Vec<String> {
    dump.lines()
        .filter_map(|line| line.trim_start().strip_prefix("loop ×"))
        .map(|rest| rest.split(' ').next().unwrap().to_string())
        .collect()
}

#[test]
fn data_dependent_inner_loops_keep_their_counts_and_fold_below_100() {
    // patterns/uneven_steps: 20 steps of 200 + 7·step mod 20 writes, then an fstat.
    // Lossless, each step's writes are one loop of exactly its count (not a loop of the
    // previous step's count and a remainder, nor staged as a block of a whole step); at
    // precision 0 the steps are one loop whose inner counts are a histogram.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/uneven_steps", directory.path(), &[]);
    library();
    let counts: Vec<u64> = (0..20).map(|step| 200 + (7 * step) % 20).collect();
    let total: u64 = counts.iter().sum();
    for precision in [100, 0] {
        let trace = directory.path().join(format!("uneven-{precision}.cairn"));
        succeeded(
            std::process::Command::new(cairn_binary())
                .args(["run", "-q", "--precision", &precision.to_string(), "-o"])
                .arg(&trace)
                .arg("--")
                .arg(&program)
                .arg(directory.path())
                .arg("20"),
        );
        let summary = summary_json(&trace, &[]);
        assert_eq!(summary["calls"]["write"]["count"], total);
        assert_eq!(summary["calls"]["write"]["bytes"], 48 * total);
        assert_eq!(summary["calls"]["fstat"]["count"], 20);
        assert_eq!(summary["files"][0]["max_offset"], 48 * total);
        let dump = cairn_text("dump", &[], &trace);
        let loops = dumped_loop_counts(&dump);
        if precision == 100 {
            // The first write too (the file's first access, neither consecutive nor
            // sequential) is an iteration of its step's loop.
            let expected: Vec<String> = counts.iter().map(u64::to_string).collect();
            assert_eq!(loops, expected, "{dump}");
        } else {
            assert_eq!(loops, ["20", "199..219"], "{dump}");
            assert!(
                dump.contains("[histogram: 20 occurrences, 4189 iterations"),
                "{dump}"
            );
        }
    }
}

#[test]
fn load_imbalanced_ranks_share_one_stream_below_100_with_exact_totals() {
    // patterns/imbalanced: each rank sends 40–47 one-particle messages a step to the next
    // rank (a count that changes with the rank and the step), receives its neighbour's,
    // writes 100–109 records to its own file and joins an allreduce. Lossless, every rank
    // and step keeps its counts; at precision 0 the message loops of all ranks share one
    // count histogram, and so do their loops of writes, which keep each rank's exact
    // iterations and its file's extent (the files' figures are compared one by one).
    // Totals equal the lossless trace's.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/imbalanced", directory.path());
    library();
    let steps = 30;
    let run = |ranks: u64, precision: u8| {
        let trace = directory
            .path()
            .join(format!("imbalanced-{ranks}-{precision}.cairn"));
        let prefix = directory.path().join("particles");
        trace_mpi_at(
            &trace,
            ranks,
            precision,
            &program,
            &[steps.to_string().as_ref(), prefix.as_ref()],
        );
        trace
    };
    let mut sizes = Vec::new();
    for ranks in [4u64, 16] {
        let lossless = run(ranks, 100);
        let blurred = run(ranks, 0);
        let exact = exact_figures(&summary_json(&lossless, &[]));
        let summary = summary_json(&blurred, &[]);
        assert_eq!(exact_figures(&summary), exact, "{ranks} ranks");
        // The program's own counts (its jitter, computed here).
        let jitter = |rank: u64, step: u64, spread: u32| {
            let mut x = (rank as u32)
                .wrapping_mul(7919)
                .wrapping_add((step as u32).wrapping_mul(104_729))
                .wrapping_add(12_345);
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % spread) as u64
        };
        let sends: u64 = (0..ranks)
            .flat_map(|rank| (0..steps).map(move |step| 40 + jitter(rank, step, 8)))
            .sum();
        let writes: u64 = (0..ranks)
            .flat_map(|rank| (0..steps).map(move |step| 100 + jitter(rank, step, 10)))
            .sum();
        assert_eq!(exact["calls"]["MPI_Send"][0], sends);
        assert_eq!(exact["calls"]["MPI_Recv"][0], sends);
        assert_eq!(exact["calls"]["write"][0], writes);
        let dump = cairn_text("dump", &[], &blurred);
        assert!(
            dump.contains(&format!("(one of {ranks} ranks sharing a stream)")),
            "{dump}"
        );
        // Two send leaves (the first step's and the others'), whatever the ranks; three
        // writes (the first, the steps', the last step's), each loop of them keeping each
        // rank's iterations.
        assert_eq!(dump.matches("MPI_Send(").count(), 2, "{dump}");
        assert_eq!(dump.matches("write(").count(), 3, "{dump}");
        assert_eq!(
            dump.matches("each rank's iterations exact").count(),
            2,
            "{dump}"
        );
        assert!(!dump.contains("only ranks"), "{dump}");
        let blurred_calls: Vec<(&str, &str)> = summary["blurred"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| {
                (
                    entry["call"].as_str().unwrap(),
                    entry["parameter"].as_str().unwrap(),
                )
            })
            .collect();
        assert!(
            blurred_calls.contains(&("MPI_Send", "iterations")),
            "{blurred_calls:?}"
        );
        sizes.push((
            std::fs::metadata(&lossless).unwrap().len(),
            std::fs::metadata(&blurred).unwrap().len(),
        ));
        // The replay draws each rank's loop counts from its slice of the shared
        // histograms, keeping each slice's exact sum: every call the trace stands for.
        let text = replayed_on(&blurred, ranks, directory.path());
        let events = summary["events"].as_u64().unwrap();
        assert!(
            text.contains(&format!("replayed {events} calls of {ranks} processes")),
            "{text}"
        );
    }
    eprintln!("imbalanced at 4 and 16 ranks, lossless and precision 0: {sizes:?} B");
    let ((lossless4, small4), (lossless16, small16)) = (sizes[0], sizes[1]);
    assert!(small16 * 10 < lossless16, "{sizes:?}");
    assert!(small4 * 4 < lossless4, "{sizes:?}");
    // What grows is the process table and each rank's iterations and extents of writes
    // (1,684 → 1,905 B on 2026-11-26; 2,834 B at 16 ranks when each rank's writes were a
    // loop of its own).
    assert!(4 * small16 < 5 * small4, "{sizes:?}");
}

#[test]
fn each_ranks_own_log_keeps_its_bytes_below_100() {
    // patterns/rank_logs: every rank writes a line a step to its own file, the lines'
    // lengths changing with the step and the rank. At precision 0 the sizes are
    // histograms and the ranks share one stream; each rank's write leaf keeps its own
    // count and sum of sizes, so every file's bytes (not only the job's) equal the
    // lossless trace's (they were apportioned among the ranks by occurrence before).
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/rank_logs", directory.path());
    library();
    let ranks = 4;
    let run = |precision: u8| {
        let trace = directory.path().join(format!("logs-{precision}.cairn"));
        let prefix = directory.path().join(format!("log-{precision}"));
        trace_mpi_at(
            &trace,
            ranks,
            precision,
            &program,
            &["200".as_ref(), prefix.as_ref()],
        );
        trace
    };
    let (lossless, blurred) = (run(100), run(0));
    let exact = exact_figures(&summary_json(&lossless, &[]));
    let mut figures = exact_figures(&summary_json(&blurred, &[]));
    // The files' names differ by the prefix only.
    let renamed = serde_json::to_string(&figures)
        .unwrap()
        .replace("log-0.", "log-100.");
    figures = serde_json::from_str(&renamed).unwrap();
    assert_eq!(figures, exact);
    // Each file's bytes are the program's own: the lines it wrote.
    let summary = summary_json(&blurred, &[]);
    let written: Vec<u64> = (0..ranks)
        .map(|rank| {
            let path = directory.path().join(format!("log-0.{rank}"));
            let file = summary["files"]
                .as_array()
                .unwrap()
                .iter()
                .find(|file| file["path"].as_str() == path.to_str())
                .unwrap_or_else(|| panic!("{path:?} in {summary}"));
            assert_eq!(
                file["bytes_written"].as_u64(),
                Some(std::fs::metadata(&path).unwrap().len()),
                "{path:?}"
            );
            file["bytes_written"].as_u64().unwrap()
        })
        .collect();
    assert!(
        written.windows(2).any(|pair| pair[0] != pair[1]),
        "{written:?}"
    );
    let dump = cairn_text("dump", &[], &blurred);
    assert!(
        dump.contains(&format!("(one of {ranks} ranks sharing a stream)")),
        "{dump}"
    );
}

#[test]
fn task_ids_as_tags_blur_below_100_and_the_trace_replays() {
    // patterns/tagged_tasks: rank 0 deals tasks whose ids (shuffled) are the messages'
    // tags; workers answer under the same tag; the master collects from any source with
    // any tag. Lossless, every tag is kept (the trace grows with the tasks); at precision
    // 0 tags become histograms (like sizes and peers), the trace stops growing, totals
    // stay exact, and the trace replays every message without deadlock.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi("patterns/tagged_tasks", directory.path());
    library();
    let run = |tasks: u64, precision: u8| {
        let trace = directory
            .path()
            .join(format!("tasks-{tasks}-{precision}.cairn"));
        trace_mpi_at(
            &trace,
            4,
            precision,
            &program,
            &[tasks.to_string().as_ref()],
        );
        trace
    };
    let mut sizes = Vec::new();
    for tasks in [200, 2000] {
        let lossless = run(tasks, 100);
        let blurred = run(tasks, 0);
        let exact = exact_figures(&summary_json(&lossless, &[]));
        let summary = summary_json(&blurred, &[]);
        assert_eq!(exact_figures(&summary), exact);
        assert_eq!(exact["calls"]["MPI_Send"][0], 2 * tasks);
        assert_eq!(exact["calls"]["MPI_Recv"][0], 2 * tasks);
        let tags: Vec<&Value> = summary["blurred"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry["parameter"] == "tag")
            .collect();
        assert_eq!(tags.len(), 2, "{}", summary["blurred"]);
        for entry in tags {
            assert!(
                entry["min"].as_i64().unwrap() >= 1000
                    && entry["max"].as_i64().unwrap() < 1000 + tasks as i64,
                "{entry}"
            );
        }
        sizes.push((
            std::fs::metadata(&lossless).unwrap().len(),
            std::fs::metadata(&blurred).unwrap().len(),
        ));
        if tasks == 2000 {
            let text = replayed_on(&blurred, 4, directory.path());
            assert!(
                text.contains("replayed 8000 calls of 4 processes"),
                "{text}"
            );
        }
    }
    eprintln!("tagged tasks, 200 and 2000, lossless and precision 0: {sizes:?} B");
    let ((_, small), (lossless, large)) = (sizes[0], sizes[1]);
    assert!(large * 10 < lossless, "{sizes:?}");
    assert!(large * 100 <= small * 110, "{sizes:?}");
}

#[test]
fn steps_whose_counts_and_sizes_change_fold_in_the_tracer_below_100() {
    // patterns/imbalanced (per step: 40–47 sends and as many receives, 100–109 writes, an
    // allreduce) and patterns/irregular (a jittering message, the bytes its completion
    // got, 20–23 solver iterations; rank 0 a log line of changing length) on 4 ranks at
    // precision 90, with a step's calls folded in the tracer (the default below 100: a
    // steps record, a word per changing item and step) and without (CAIRN_STEPS=0: event
    // and run records, 600–1,000 bytes a step): every exact figure agrees, and from 30 to
    // 300 steps each rank's staging grows by under 100 bytes a step (the words, and the
    // records' heads as they double), against over 400 without. Rank 0 of `irregular`
    // is built -O1 without frame pointers: the stack walk past `main` reads its log line's
    // bytes as return addresses, a new stack every step, which the tracer cuts at the first
    // address outside every module so that the step's calls keep one context each.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    library();
    for (name, output) in [("imbalanced", "particles"), ("irregular", "log")] {
        let program = compile_mpi(&format!("patterns/{name}"), directory.path());
        let mut staged = std::collections::BTreeMap::new();
        for steps in [30u64, 300] {
            let mut figures = Vec::new();
            for folding in ["1", "0"] {
                let work = tempfile::tempdir_in(directory.path()).unwrap();
                let trace = work.path().join("steps.cairn");
                succeeded(
                    mpirun(4)
                        .env("CAIRN_STEPS", folding)
                        .arg(cairn_binary())
                        .args(["run", "-q", "--keep-staging", "--precision", "90", "-o"])
                        .arg(&trace)
                        .arg("--")
                        .arg(&program)
                        .arg(steps.to_string())
                        .arg(work.path().join(output)),
                );
                let staging = std::fs::read_dir(work.path())
                    .unwrap()
                    .map(|entry| entry.unwrap().path())
                    .find(|path| {
                        path.file_name()
                            .unwrap()
                            .to_string_lossy()
                            .contains("staging")
                    })
                    .unwrap();
                for rank in 0..4 {
                    let bytes = staged_record_bytes(&staging.join(format!("rank-{rank}")));
                    staged.insert((steps, folding, rank), bytes);
                }
                let mut exact = exact_figures(&summary_json(&trace, &[]));
                // The files' names hold the run's own directory.
                for file in exact["files"].as_array_mut().unwrap() {
                    let path = file["path"].as_str().unwrap().to_owned();
                    file["path"] = path.rsplit('/').next().unwrap().into();
                }
                figures.push(exact);
            }
            assert_eq!(figures[0], figures[1], "{name}, {steps} steps");
            let allreduces = figures[0]["calls"]["MPI_Allreduce"][0].as_u64().unwrap();
            if name == "imbalanced" {
                assert_eq!(allreduces, 4 * steps);
            } else {
                let solver: u64 = (0..steps).map(solver_iterations).sum();
                assert_eq!(allreduces, 4 * (steps + solver));
            }
        }
        for rank in 0..4 {
            let growth =
                |folding| (staged[&(300, folding, rank)] - staged[&(30, folding, rank)]) / 270;
            eprintln!(
                "{name}, rank {rank} of 4, P=90: staged a step {} B folded, {} B not",
                growth("1"),
                growth("0")
            );
            assert!(growth("1") < 100, "{name}, rank {rank}: {staged:?}");
            assert!(growth("0") > 400, "{name}, rank {rank}: {staged:?}");
        }
    }
}

#[test]
fn a_process_killed_mid_step_loses_none_of_the_steps_calls() {
    // tests/programs/killed_mid_step: 50 steps of 200 + 7·step mod 20 records written
    // and an fstat, then 123 records and SIGKILL. At precision 90 the steps are a steps
    // record whose head holds the inner loop in progress: every write is in the trace,
    // as at 100, and so is every byte of the file.
    let directory = tempfile::tempdir().unwrap();
    let program = compile("killed_mid_step", directory.path(), &[]);
    library();
    let steps = 50u64;
    let writes: u64 = (0..steps).map(|step| 200 + (7 * step) % 20).sum::<u64>() + 123;
    for precision in ["100", "90"] {
        let work = tempfile::tempdir_in(directory.path()).unwrap();
        let trace = work.path().join("killed.cairn");
        let output = std::process::Command::new(cairn_binary())
            .args(["run", "-q", "--precision", precision, "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&program)
            .arg(work.path())
            .arg(steps.to_string())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(128 + 9), "{output:?}");
        let summary = summary_json(&trace, &[]);
        let file = summary["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|file| file["path"].as_str().unwrap().ends_with("/particles.dat"))
            .unwrap();
        assert_eq!(file["writes"], writes, "precision {precision}");
        assert_eq!(file["bytes_written"], 48 * writes, "precision {precision}");
        assert_eq!(
            summary["calls"]["fstat"]["count"], steps,
            "precision {precision}"
        );
        assert_eq!(
            std::fs::metadata(work.path().join("particles.dat"))
                .unwrap()
                .len(),
            48 * writes
        );
    }
}

#[test]
fn a_halo_exchange_whose_ghost_counts_change_folds_below_100() {
    // patterns/md_ghosts (LAMMPS's CommBrick: per step a forward and a reverse exchange,
    // per swap MPI_Irecv posted for exactly the count the neighbour sends; the counts new
    // every 20 steps; migrating atoms, often none) on 4 ranks. At precision 0 the posted
    // capacities blur like the sizes sent (kept in the key, each rebuild's were new leaves:
    // real LAMMPS's P = 0 trace grew 23 → 146 KB from 100 to 1,000 steps), and the tracer's
    // blocks of exact steps go into the builder as the steps' events would (their body
    // begins part-way into the builder's own loop): from 200 to 2,000 steps the trace grows
    // by under half, 30 times smaller than the lossless one, every exact figure — the
    // bytes sent, received and posted for — the lossless trace's. The tracer stages no more
    // at 0 than at 100 (a halo's calls to one neighbour, then the next, repeat twice by
    // chance at the period of one swap: each false start of a steps record was a record).
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    library();
    let program = compile_mpi("patterns/md_ghosts", directory.path());
    let mut sizes = std::collections::BTreeMap::new();
    for steps in [200u64, 2000] {
        let mut figures = Vec::new();
        for precision in [100u8, 0] {
            let work = tempfile::tempdir_in(directory.path()).unwrap();
            let trace = work.path().join("md.cairn");
            succeeded(
                mpirun(4)
                    .arg(cairn_binary())
                    .args(["run", "-q", "--keep-staging", "--precision"])
                    .arg(precision.to_string())
                    .arg("-o")
                    .arg(&trace)
                    .arg("--")
                    .arg(&program)
                    .arg(steps.to_string()),
            );
            let staging = std::fs::read_dir(work.path())
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .find(|path| path.to_string_lossy().contains("staging"))
                .unwrap();
            sizes.insert(
                (steps, precision),
                (
                    std::fs::metadata(&trace).unwrap().len(),
                    staged_record_bytes(&staging),
                ),
            );
            let summary = summary_json(&trace, &[]);
            let mut exact = exact_figures(&summary);
            exact["posted"] = summary["mpi_messages"]["posted_receive_bytes"].clone();
            if precision == 100 && steps == 2000 {
                // The periods merged: a posting's capacities are its own, in the column.
                let dump = cairn_text("dump", &[], &trace);
                assert!(
                    dump.lines().any(|line| line
                        .trim_start()
                        .starts_with("MPI_Irecv(sizes of their own")
                        && line.contains(") = 0  ×")),
                    "{dump}"
                );
            }
            if precision == 0 {
                // A posting's capacity shown about its histogram's mean; it got nothing.
                let dump = cairn_text("dump", &[], &trace);
                let posting = dump
                    .lines()
                    .find(|line| line.trim_start().starts_with("MPI_Irecv(~"))
                    .unwrap_or_else(|| panic!("{dump}"));
                assert!(posting.contains(") = 0  ×"), "{posting}");
            }
            figures.push(exact);
        }
        assert_eq!(figures[0], figures[1], "{steps} steps");
        // Per rank: 4 swaps each way every step but the rebuilds' forward ones, and at each
        // rebuild 2 migrations and 4 borders.
        let rebuilds = steps.div_ceil(20);
        let receives = 4 * (4 * (2 * steps - rebuilds) + 6 * rebuilds);
        assert_eq!(
            figures[0]["calls"]["MPI_Irecv"][0], receives,
            "{steps} steps"
        );
        assert_eq!(figures[0]["sent"], figures[0]["posted"], "{steps} steps");
    }
    eprintln!("md_ghosts, 4 ranks (trace, staged bytes): {sizes:?}");
    let trace = |steps, precision| sizes[&(steps, precision)].0;
    assert!(trace(2000, 0) * 2 < trace(200, 0) * 3, "{sizes:?}");
    // Lossless, each rebuild period's messages are the same calls but for their sizes:
    // the periods merge into one loop when the trace is written, the sizes (a posted
    // receive's capacity, a send's size, a completion's bytes) in the column, an entry a
    // period (EVNT v31). From 200 to 2,000 steps the lossless trace grew ×10 before (35 →
    // 354 KB); the column's entries are what grows now.
    assert!(trace(2000, 100) < 3 * trace(200, 100), "{sizes:?}");
    assert!(trace(2000, 0) * 2 < trace(2000, 100), "{sizes:?}");
    for steps in [200, 2000] {
        let staged = |precision| sizes[&(steps, precision)].1;
        assert!(staged(0) * 20 <= staged(100) * 21, "{sizes:?}");
    }
}

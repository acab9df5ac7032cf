//! Trace size against iterations and time steps, in a test binary of its own: a trace's
//! size depends a little on its timing statistics (how many histogram bins are used, how
//! large the extremes are), so it is measured without the other tests' programs competing
//! for this machine's two cores, and the loop program's size is the median of seven runs:
//! at 10^3 iterations whether a timer interrupt lands in a timed call or not moves the size
//! by a few bytes either way (the smallest run is an unusually quiet one), at 10^6 many
//! always do, and the growth between them (3.5% to 5% here) is measured a second time if
//! the first is over 5%. The two tests take turns (a test binary runs its tests in
//! parallel), so neither competes with the other.

mod common;

use common::*;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the other size test off while a test runs (a failed one leaves the lock usable).
fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn loop_structured_trace_does_not_grow_with_iterations() {
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("loops", directory.path(), &[]);
    // The release build when there is a fresh one: at 10^6 iterations the debug build's
    // slower hook sees more timer interrupts inside the calls it times.
    let binary = measuring_cairn_binary();
    // The median of seven runs at each size; measured twice if the first comparison is
    // off, since this machine's timer noise moves the growth by about a percent.
    let measure = || -> (f64, f64) {
        let mut sizes = Vec::new();
        for outer in [1_000u64, 1_000_000] {
            let mut runs = Vec::new();
            for _ in 0..7 {
                let traced = trace_with(
                    &binary,
                    directory.path(),
                    &program,
                    &[directory.path().to_str().unwrap(), &outer.to_string()],
                );
                assert_eq!(traced.exit_code(), Some(0));
                traced.assert_files(&["/loops.dat", "/loops.log"]);
                assert_fields(
                    traced.file("/loops.dat"),
                    &[
                        ("opens", 1),
                        ("closes", 1),
                        ("seeks", outer),
                        ("reads", 4 * outer),
                        ("bytes_read", 256 * outer),
                        ("writes", 8 + outer),
                        ("bytes_written", 64 * (8 + outer)),
                        ("consecutive_reads", 3 * outer),
                    ],
                );
                assert_fields(
                    traced.file("/loops.log"),
                    &[
                        ("writes", 8 * outer / 10),
                        ("bytes_written", 48 * outer / 10),
                    ],
                );
                runs.push(std::fs::metadata(&traced.trace).unwrap().len());
            }
            runs.sort_unstable();
            eprintln!("loops.c, {outer} iterations: {runs:?} B");
            sizes.push(runs[runs.len() / 2] as f64);
        }
        (sizes[0], sizes[1])
    };
    let within = |(small, large): (f64, f64)| (large - small).abs() <= 0.05 * small;
    let mut measured = measure();
    if !within(measured) {
        measured = measure();
    }
    let (small, large) = measured;
    assert!(
        within(measured),
        "trace size {small} B for 10^3 iterations, {large} B for 10^6"
    );
    assert!(large < 16.0 * 1024.0, "{large} B");
}

#[test]
fn a_file_per_step_does_not_grow_the_trace() {
    let _alone = alone();
    let mut sizes = Vec::new();
    for steps in [1_000u64, 10_000] {
        let (_directory, traced) = trace_program("steps", &[], &[&steps.to_string()]);
        assert_eq!(traced.exit_code(), Some(0));
        let files = traced.summary["files"].as_array().unwrap();
        assert_eq!(
            files.len() as u64,
            steps + 1,
            "every checkpoint file and the log"
        );
        for step in [0, steps / 2, steps - 1] {
            assert_fields(
                traced.file(&format!("/ckpt-{step:05}.dat")),
                &[
                    ("opens", 1),
                    ("closes", 1),
                    ("writes", 4),
                    ("bytes_written", 4096),
                    ("metas", 1),
                ],
            );
        }
        assert_fields(
            traced.file("/steps.log"),
            &[("writes", steps), ("bytes_written", 10 * steps)],
        );
        sizes.push(std::fs::metadata(&traced.trace).unwrap().len() as f64);
    }
    assert!(
        (sizes[1] - sizes[0]).abs() <= 0.05 * sizes[0],
        "trace size {} B for 1 000 steps, {} B for 10 000",
        sizes[0],
        sizes[1]
    );
}

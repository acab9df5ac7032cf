//! Offline merge of generated per-rank traces of an SPMD program (`cairn_trace::synthetic`)
//! at P = 64 … 16,384 ranks: merged trace size and merge time per P.
//!
//! What is timed is what `cairn merge rank-*.cairn` does: read every rank's trace file
//! image, merge, encode the one trace. Generating the traces is not timed. Each P is run
//! `CAIRN_BENCH_RUNS` times (default 3); medians are printed, with the growth of time
//! against P·log P (the bound) and of size against P, both relative to the first P.
//! A radix-tree merge (fan-in 4, as `cairn run` does under a launcher) is timed too: its
//! total work and its critical path (the longest chain of merges, what a job waits for when
//! the inner nodes run in parallel). The merged trace's size is printed exact and at
//! precision 99 (`cairn merge --precision 99`), where ranks that started and ended together
//! share their process times.

use std::time::Instant;

use cairn_trace::merge::merge_traces;
use cairn_trace::synthetic::{rank_trace, Spmd};
use cairn_trace::Trace;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Merges like `cairn run`'s tree: returns (merged trace, total seconds, critical-path
/// seconds).
fn tree_merge(mut level: Vec<Vec<u8>>, fan_in: usize) -> (Vec<u8>, f64, f64) {
    let (mut total, mut critical) = (0.0, 0.0);
    while level.len() > 1 {
        let mut next = Vec::new();
        let mut slowest: f64 = 0.0;
        for group in level.chunks(fan_in) {
            let started = Instant::now();
            let traces: Vec<Trace> = group
                .iter()
                .map(|bytes| Trace::from_bytes(bytes.clone()).expect("generated traces read"))
                .collect();
            next.push(merge_traces(traces, 100).to_bytes());
            let seconds = started.elapsed().as_secs_f64();
            total += seconds;
            slowest = slowest.max(seconds);
        }
        critical += slowest;
        level = next;
    }
    (level.pop().unwrap_or_default(), total, critical)
}

fn main() {
    let runs: usize = std::env::var("CAIRN_BENCH_RUNS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(3);
    let largest: u32 = std::env::var("CAIRN_BENCH_LARGEST")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(16_384);
    let shape = Spmd::benchmark(0);
    println!(
        "offline merge of generated SPMD rank traces ({} segments, {} transfers of {} B, halo {} B; medians of {runs})",
        shape.segments, shape.transfers, shape.transfer_size, shape.message_size
    );
    println!(
        "{:>6} {:>10} {:>12} {:>10} {:>11} {:>9} {:>8} {:>11} {:>12} {:>14} {:>10}",
        "ranks",
        "input B",
        "merged B",
        "B/rank",
        "size ×",
        "p99 B",
        "p99 ×",
        "flat s",
        "time ×",
        "P·logP ×",
        "tree s (crit)"
    );
    let mut baseline: Option<(f64, f64, f64, f64)> = None;
    let mut ranks = 64u32;
    while ranks <= largest {
        let program = Spmd::benchmark(ranks);
        let images: Vec<Vec<u8>> = (0..ranks)
            .map(|rank| rank_trace(&program, rank).to_bytes())
            .collect();
        let input: usize = images.iter().map(Vec::len).sum();
        let mut times = Vec::new();
        let (mut size, mut lossy_size) = (0, 0);
        for _ in 0..runs {
            let started = Instant::now();
            let traces: Vec<Trace> = images
                .iter()
                .map(|bytes| Trace::from_bytes(bytes.clone()).expect("generated traces read"))
                .collect();
            let mut merged = merge_traces(traces, 100);
            let bytes = merged.to_bytes();
            times.push(started.elapsed().as_secs_f64());
            size = bytes.len();
            merged.apply_precision(99);
            lossy_size = merged.to_bytes().len();
        }
        let (tree_bytes, tree_total, tree_critical) = tree_merge(images, 4);
        let merged = Trace::from_bytes(tree_bytes).expect("the merged trace reads");
        assert_eq!(merged.processes.len(), ranks as usize);
        assert_eq!(
            merged.event_count(),
            ranks as u64 * program.events_per_rank()
        );
        let time = median(times);
        let p_log_p = ranks as f64 * (ranks as f64).log2();
        let (base_time, base_size, base_lossy, base_p_log_p) =
            *baseline.get_or_insert((time, size as f64, lossy_size as f64, p_log_p));
        println!(
            "{:>6} {:>10} {:>12} {:>10.1} {:>11.2} {:>9} {:>8.3} {:>11.3} {:>12.1} {:>14.1} {:>7.3} ({:.3})",
            ranks,
            input,
            size,
            size as f64 / ranks as f64,
            size as f64 / base_size,
            lossy_size,
            lossy_size as f64 / base_lossy,
            time,
            time / base_time,
            p_log_p / base_p_log_p,
            tree_total,
            tree_critical
        );
        ranks *= 4;
    }
}

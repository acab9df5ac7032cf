//! libFuzzer target that gets past the checksums: the input replaces the contents of one
//! section (chosen by its first byte) of a real trace in the corpus' first file format,
//! and the container is rebuilt with valid CRCs, so every section decoder, the folded
//! stream reader, the walk and the expansion see arbitrary bytes.
#![no_main]

#[path = "exercise.rs"]
mod exercise;

use cairn_format::container::{TraceFile, TraceWriter};
use libfuzzer_sys::fuzz_target;

/// Small real traces in the current format, embedded: tests/programs/patterns/imbalanced.c
/// on 4 ranks, 6 steps, at precision 0 (one stream the ranks share, their file tables,
/// count histograms, loops that keep each rank's iterations, leaves that keep each rank's
/// offset range), and patterns/rank_logs.c on 4 ranks, 30 steps, at precision 0 (leaves
/// that keep each rank's count and sum of blurred sizes), and patterns/random_sizes.c with
/// 200 blocks, lossless (sizes and offsets in the column, leaves with their sizes' figures),
/// and patterns/rank_random_seeks.c on 4 ranks, 200 blocks, at precision 0 (leaves that keep
/// each rank's access-order counts), and patterns/progress_log.c on 4 ranks, 20 steps,
/// lossless (a stream the ranks share with rank 0's column, EVNT 28; remade for EVNT 29, 30, 31 and 32).
/// Remake them when a section's version changes, or the decoders are only fuzzed up to the
/// version check (an earlier sample, rank_trees.c, fuzzed file tables of blocks).
const SAMPLES: [&[u8]; 5] = [
    include_bytes!("sample.cairn"),
    include_bytes!("sample_logs.cairn"),
    include_bytes!("sample_sizes.cairn"),
    include_bytes!("sample_orders.cairn"),
    include_bytes!("sample_column.cairn"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    // The selector's two high bits pick the sample, the rest the section.
    let sample = SAMPLES[(selector >> 6) as usize % SAMPLES.len()];
    let Ok(file) = TraceFile::from_bytes(sample.to_vec()) else {
        return;
    };
    let entries = file.entries().to_vec();
    let target = (selector & 0x3f) as usize % entries.len();
    let mut writer = TraceWriter::new();
    for (index, entry) in entries.iter().enumerate() {
        let Ok(Some((version, bytes))) = file.section(entry.kind) else {
            return;
        };
        let bytes = if index == target {
            payload.to_vec()
        } else {
            bytes
        };
        writer.add_section(entry.kind, version, &bytes, false);
    }
    if let Ok(trace) = cairn_trace::Trace::from_bytes(writer.finish()) {
        exercise::exercise(&trace);
    }
});

//! The corpus's random patterns (`tests/programs/patterns/random_*.c`, HDF5's deflated
//! chunks): offsets and sizes that never repeat, kept exactly in the stream's column.
//! Each test asserts the figures the program's own generator gives, every offset read
//! back in order, and a bound in bytes a call. A test binary of its own, its tests one at
//! a time, as `patterns.rs` (from which they were split): sizes are measured without
//! other tests' programs competing for the two cores.

mod common;

use common::*;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
fn random_reads_keep_exact_offsets_in_under_two_and_a_quarter_bytes_a_call() {
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
    // A step between two of 16,384 blocks (15 bits, 4 KiB its divisor) and the access
    // order (2 bits), bit-packed: 2.1 bytes a read (3.0 when the column was varints).
    assert!(4 * size <= 9 * reads, "{size} B for {reads} reads");
}

#[test]
fn random_sizes_keep_every_size_exact_in_under_four_bytes_a_call() {
    // Compressed blocks (`patterns/random_sizes.c`): appended with sizes of their own,
    // then read back in shuffled order, each `pread` of its own size at its own offset.
    // Each size went into the key, so every call was a leaf of its own (15 B a call); the
    // sizes now go to the stream's column beside the offsets, the calls fold, and the
    // summary's bytes, size statistics, Darshan bins and access order stay exact.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/random_sizes", directory.path(), &[]);
    let blocks = 20_000u64;
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap(), &blocks.to_string()],
    );
    assert_eq!(traced.exit_code(), Some(0));
    // The program's generator: each block's size, then the shuffled order of the reads.
    let mut state = 7u64;
    let sizes: Vec<u64> = (0..blocks)
        .map(|_| 1024 + generator_next(&mut state) % (8192 - 1024 + 1))
        .collect();
    let offsets: Vec<u64> = sizes
        .iter()
        .scan(0, |at, size| {
            let offset = *at;
            *at += size;
            Some(offset)
        })
        .collect();
    let mut order: Vec<usize> = (0..blocks as usize).collect();
    for i in (1..order.len()).rev() {
        let j = (generator_next(&mut state) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let data: u64 = sizes.iter().sum();
    let table = 16 * blocks;
    let (mut consecutive, mut sequential) = (0, 0);
    for pair in order.windows(2) {
        let end = offsets[pair[0]] + sizes[pair[0]];
        consecutive += (offsets[pair[1]] == end) as u64;
        sequential += (offsets[pair[1]] >= end) as u64;
    }
    let file = traced.file("/blocks.dat");
    assert_fields(
        file,
        &[
            ("opens", 1),
            ("writes", blocks + 2),
            ("bytes_written", data + table),
            ("reads", blocks),
            ("bytes_read", data),
            ("consecutive_reads", consecutive),
            ("sequential_reads", sequential),
            ("max_offset", data + table),
            ("closes", 1),
        ],
    );
    let (low, high) = (*sizes.iter().min().unwrap(), *sizes.iter().max().unwrap());
    assert_eq!(file["read_sizes"]["count"], blocks);
    assert_eq!(file["read_sizes"]["min"], low);
    assert_eq!(file["read_sizes"]["max"], high);
    let mean = data as f64 / blocks as f64;
    let read_mean = file["read_sizes"]["mean"].as_f64().unwrap();
    assert!(
        (read_mean - mean).abs() < 1e-6,
        "{read_mean} against {mean}"
    );
    let mut bins = [0u64; 10];
    for size in &sizes {
        bins[cairn_model::size_bin(*size)] += 1;
    }
    assert_eq!(file["read_histogram"], serde_json::json!(bins));
    bins[cairn_model::size_bin(8 * blocks)] += 2;
    assert_eq!(file["write_histogram"], serde_json::json!(bins));
    // Every read's offset, in the program's order, and every size (from the column).
    let expanded = expanded_offsets(&traced.trace, "pread");
    let wanted: Vec<u64> = order.iter().map(|block| offsets[*block]).collect();
    assert!(
        expanded == wanted,
        "the expanded offsets differ from the program's"
    );
    let expanded_sizes: Vec<u64> = cairn_text("dump", &["--expand"], &traced.trace)
        .lines()
        .filter(|line| line.contains("pread("))
        .map(|line| {
            let size = line.split(", ").nth(1).expect("a size");
            size.split(" bytes").next().unwrap().parse().unwrap()
        })
        .collect();
    let wanted: Vec<u64> = order.iter().map(|block| sizes[*block]).collect();
    assert!(
        expanded_sizes == wanted,
        "the expanded sizes differ from the program's"
    );
    let size = std::fs::metadata(&traced.trace).unwrap().len();
    let calls = 2 * blocks + 4;
    eprintln!("random_sizes, {blocks} blocks: {size} B, {calls} calls");
    // A write's size takes 13 bits; a read its step within the 92 MB file (28 bits), its
    // order (2) and its size (13), each site's values packed apart: 3.6 bytes a call (4.1
    // when the column was varints of every site's values in turn).
    assert!(4 * size <= 15 * calls, "{size} B for {calls} calls");
}

#[test]
fn real_hdf5_deflated_chunks_keep_every_size_in_the_column() {
    // Real HDF5 (Debian's) writing a chunked dataset through the deflate filter
    // (`patterns/deflated_chunks.c`): each chunk is compressed to a size of its own, a few
    // thousand bytes drifting with the data, and appended with `pwrite`. Sizes in such a
    // band repeat recent ones by chance; under offsets' rule (a value seen among the last
    // 64 counts as regular) the site kept going back to its keys, a leaf a size (3,851
    // leaves of one pwrite at 10,000 chunks). By the sizes' own rule (a size is expected
    // only where it continues a cycle) they stay in the column: every byte, the file's
    // end and the kernel's counts exact, a few dozen leaves of one call.
    let _alone = alone();
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi_with("patterns/deflated_chunks", directory.path(), &HDF5);
    let chunks = 4_000u64;
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap(), &chunks.to_string()],
    );
    assert_eq!(traced.exit_code(), Some(0));
    let calls = &traced.summary["calls"];
    assert_eq!(calls["H5Dwrite"]["count"], chunks);
    assert_eq!(calls["H5Dwrite"]["bytes"], chunks * 4096 * 4);
    // Below HDF5, every pwrite and byte the kernel counted.
    let kernel = &traced.summary["kernel_io"];
    assert_eq!(calls["pwrite"]["count"], kernel["write_calls"]);
    assert_eq!(calls["pwrite"]["bytes"], kernel["written_bytes"]);
    assert_eq!(kernel["unseen_written_bytes"], 0);
    assert_eq!(
        traced.file("/chunks.h5")["library_subcall_bytes"],
        kernel["written_bytes"]
    );
    // Each pwrite expanded with its own size and offset: the furthest end is the file's.
    let on_disk = std::fs::metadata(directory.path().join("chunks.h5"))
        .unwrap()
        .len();
    let furthest = cairn_text("dump", &["--expand"], &traced.trace)
        .lines()
        .filter(|line| line.contains("pwrite("))
        .map(|line| {
            let arguments = line.split(", ").nth(1).expect("a size and an offset");
            let (size, offset) = arguments.split_once(" bytes @ ").expect("size @ offset");
            let offset = offset.split(')').next().unwrap();
            size.parse::<u64>().unwrap() + offset.parse::<u64>().unwrap()
        })
        .max();
    assert_eq!(furthest, Some(on_disk));
    let dump = cairn_text("dump", &[], &traced.trace);
    let alone_leaves = dump
        .lines()
        .filter(|line| line.trim_start().starts_with("pwrite(") && line.contains("  ×1  "))
        .count();
    assert!(
        alone_leaves < 60,
        "{alone_leaves} leaves of one pwrite\n{dump}"
    );
    let size = std::fs::metadata(&traced.trace).unwrap().len();
    eprintln!("deflated_chunks, {chunks} chunks: {size} B, {alone_leaves} leaves of one pwrite");
    assert!(size <= 3 * chunks, "{size} B for {chunks} chunks");
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
fn random_seeks_then_transfers_keep_exact_offsets_in_under_one_and_a_quarter_bytes_a_call() {
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
    // 4 × blocks calls (a seek and a transfer, twice), each seek's step to another of
    // 16,384 blocks (15 bits) and its order the bulk of it: the transfers' steps (0) are
    // their site's own, which costs next to nothing (1.7 bytes a call when the column was
    // varints of both sites' values in turn).
    assert!(size <= 5 * blocks, "{size} B for {} calls", 4 * blocks);
}

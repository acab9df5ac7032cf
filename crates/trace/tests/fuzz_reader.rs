//! A deterministic mutation fuzzer for the trace reader (runs in the normal test suite; the
//! libFuzzer target in fuzz/ runs the same check for as long as one likes on nightly).
//!
//! Two levels: mutations of the file's bytes (mostly stopped by checksums), and mutations
//! of each section's decoded contents re-wrapped with valid checksums, which reach every
//! decoder. Either way the reader must return an error or a trace, never panic, and never
//! allocate more than the input justifies.

use cairn_format::container::{SectionKind, TraceFile, TraceWriter};
use cairn_model::Event;
use cairn_trace::{CallInfo, Context, Ending, FileInfo, Meta, Process, Stream, Trace};

/// xorshift64*: deterministic, so a failure reproduces.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, limit: usize) -> usize {
        (self.next() % limit.max(1) as u64) as usize
    }
}

fn sample_trace() -> Trace {
    let mut encoder = cairn_compress::stream::StreamEncoder::default();
    for index in 0..200u64 {
        let event = Event {
            call: (index % 3) as u16,
            start: index * 1000,
            duration: 150 + index % 7,
            file: Some((index % 2) as u32),
            handle: 3,
            offset: (index * 4096) as i64,
            request: 4096,
            result: 4096,
            errno: 0,
            context: 1,
            aux: 0,
            flags: 0,
        };
        encoder.push(&event, Some(cairn_model::CallClass::Write));
    }
    // A second thread traced at precision 0: jittering sizes, wandering offsets and a loop
    // whose count changes, so the fuzzer reaches the histograms' decoding and draws.
    let mut blurred = cairn_compress::stream::StreamEncoder::default();
    blurred.set_precision(0, 4);
    let mut start = 0;
    for step in 0..40u64 {
        for index in 0..3 + step % 4 {
            let size = 1000 + (step * 37 + index * 11) % 90;
            let event = Event {
                call: 1,
                start,
                duration: 100 + step % 5,
                file: Some(0),
                handle: 4,
                offset: ((step * 7919 + index * 104_729) % 1000) as i64 * 4096,
                request: size,
                result: size as i64,
                errno: 0,
                context: 1,
                aux: 0,
                flags: cairn_model::event_flags::EXPLICIT_OFFSET,
            };
            start += 300;
            blurred.push(&event, Some(cairn_model::CallClass::Write));
        }
        let event = Event {
            call: 2,
            start,
            duration: 90,
            file: Some(1),
            handle: 5,
            offset: -1,
            request: 10 + step % 3,
            result: (10 + step % 3) as i64,
            errno: 0,
            context: 1,
            aux: 0,
            flags: 0,
        };
        start += 300;
        blurred.push(&event, Some(cairn_model::CallClass::Read));
    }
    Trace {
        meta: Meta {
            writer: "test".into(),
            command: vec![b"prog".to_vec()],
            exit_status: Some(0),
            start_realtime: 1,
            duration: 2,
            process_time_step: 1,
        },
        calls: vec![
            CallInfo::new("write"),
            CallInfo::new("pwrite64"),
            CallInfo::new("read"),
        ],
        processes: vec![Process {
            pid: 10,
            parent_pid: 1,
            parent: None,
            exec_of: None,
            forked: false,
            executable: b"/bin/prog".to_vec(),
            arguments: vec![b"prog".to_vec()],
            working_directory: b"/tmp".to_vec(),
            hostname: b"host".to_vec(),
            start: 0,
            end: 200_000,
            main_start: Some(5),
            ending: Ending::Exited,
            threads: 1,
            untraced_calls: 0,
            rank: None,
            runtime_events_dropped: 0,
            runtime_bytes_dropped: [0; 2],
            kernel_io: None,
            unrecorded: None,
            group_times: false,
            group_counters: false,
        }],
        files: vec![
            FileInfo {
                path: b"/tmp/a".to_vec(),
                noise: None,
            },
            FileInfo {
                path: b"/tmp/b".to_vec(),
                noise: None,
            },
        ],
        modules: vec![b"/bin/prog".to_vec()],
        contexts: vec![Context {
            frames: vec![(Some(0), 0x1234)],
        }],
        streams: vec![
            Stream::new(0, 10, encoder.finish(), vec![0, 1]),
            Stream::new(0, 11, blurred.finish(), vec![0, 1]),
        ],
        diagnostics: vec!["note".into()],
    }
}

struct Everything(u64);

impl cairn_trace::walk::Visitor for Everything {
    fn event(&mut self, occurrence: &cairn_trace::walk::Occurrence) {
        self.0 = self.0.wrapping_add(occurrence.count);
    }
}

fn exercise(bytes: Vec<u8>) {
    if let Ok(trace) = Trace::from_bytes(bytes) {
        cairn_trace::walk::walk(&trace, &mut Everything(0));
        for stream in &trace.streams {
            if stream.count < 100_000 {
                trace.expand(stream, |_| {});
            }
        }
    }
}

fn mutate(random: &mut Random, data: &mut Vec<u8>) {
    match random.below(5) {
        0 => {
            let at = random.below(data.len());
            data[at] ^= 1 << random.below(8);
        }
        1 => data.truncate(random.below(data.len())),
        2 => {
            let at = random.below(data.len());
            data[at] = random.next() as u8;
        }
        3 => {
            // A huge varint where a length or count was.
            let at = random.below(data.len());
            for byte in data.iter_mut().skip(at).take(9) {
                *byte = 0xff;
            }
        }
        _ => {
            let at = random.below(data.len() + 1);
            data.insert(at, random.next() as u8);
        }
    }
}

#[test]
fn sample_roundtrips() {
    let trace = sample_trace();
    assert_eq!(Trace::from_bytes(trace.to_bytes()).unwrap(), trace);
    // The blurred stream folds and keeps its histograms.
    let blurred = &trace.streams[1].events;
    assert!(blurred.has_blurred_sizes());
    // Each step: 3 to 6 writes and a read.
    let events: u64 = (0..40u64).map(|step| 3 + step % 4 + 1).sum();
    assert_eq!(blurred.count, events);
}

#[test]
fn mutated_files_never_panic() {
    let original = sample_trace().to_bytes();
    let mut random = Random(0x5eed_1234_abcd_ef01);
    for _ in 0..20_000 {
        let mut data = original.clone();
        for _ in 0..1 + random.below(3) {
            if !data.is_empty() {
                mutate(&mut random, &mut data);
            }
        }
        exercise(data);
    }
}

#[test]
fn mutated_sections_never_panic() {
    mutate_sections(sample_trace().to_bytes(), 0x0dd_ba11_cafe_f00d, 20_000);
}

/// The real traces the libFuzzer target embeds (fuzz/fuzz_targets/, see trace_sections.rs
/// there): they must open in the current format — a section version that changed without
/// them being remade left that target fuzzing only the version check, and one of them was
/// once never committed, which only building the target (not part of the suite) showed —
/// and their sections, mutated, must not make the reader panic either.
#[test]
fn the_fuzz_targets_real_samples_open_and_survive_mutation() {
    let samples: [(&str, &[u8]); 5] = [
        (
            "sample.cairn",
            include_bytes!("../../../fuzz/fuzz_targets/sample.cairn"),
        ),
        (
            "sample_logs.cairn",
            include_bytes!("../../../fuzz/fuzz_targets/sample_logs.cairn"),
        ),
        (
            "sample_sizes.cairn",
            include_bytes!("../../../fuzz/fuzz_targets/sample_sizes.cairn"),
        ),
        (
            "sample_orders.cairn",
            include_bytes!("../../../fuzz/fuzz_targets/sample_orders.cairn"),
        ),
        (
            "sample_column.cairn",
            include_bytes!("../../../fuzz/fuzz_targets/sample_column.cairn"),
        ),
    ];
    for (index, (name, bytes)) in samples.into_iter().enumerate() {
        let trace = Trace::from_bytes(bytes.to_vec())
            .unwrap_or_else(|error| panic!("{name}: {error} (remake it: trace_sections.rs)"));
        let mut counted = Everything(0);
        cairn_trace::walk::walk(&trace, &mut counted);
        assert!(counted.0 > 0, "{name}: no events");
        mutate_sections(bytes.to_vec(), 0x5a3b_1e00 + index as u64, 2_000);
    }
}

/// `rounds` times, one section of `original` mutated and the file rebuilt with valid
/// checksums, read and walked.
fn mutate_sections(original: Vec<u8>, seed: u64, rounds: usize) {
    let file = TraceFile::from_bytes(original).unwrap();
    let kinds: Vec<SectionKind> = file.entries().iter().map(|entry| entry.kind).collect();
    let sections: Vec<(SectionKind, u16, Vec<u8>)> = kinds
        .iter()
        .map(|kind| {
            let (version, bytes) = file.section(*kind).unwrap().unwrap();
            (*kind, version, bytes)
        })
        .collect();
    let mut random = Random(seed);
    for _ in 0..rounds {
        let target = random.below(sections.len());
        let mut writer = TraceWriter::new();
        for (index, (kind, version, bytes)) in sections.iter().enumerate() {
            let mut bytes = bytes.clone();
            if index == target && !bytes.is_empty() {
                for _ in 0..1 + random.below(3) {
                    if !bytes.is_empty() {
                        mutate(&mut random, &mut bytes);
                    }
                }
            }
            writer.add_section(*kind, *version, &bytes, false);
        }
        exercise(writer.finish());
    }
}

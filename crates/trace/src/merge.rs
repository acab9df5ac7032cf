//! Merging whole traces into one: what `cairn merge` does with per-rank trace files (a job
//! that died before its end, per-rank traces built on each node, generated traces that
//! simulate scale) and what each inner node of the merge tree of a parallel run does.
//!
//! A trace's tables are renumbered into the merged trace's — calls and modules by name,
//! contexts by their frames, files by path — and its times moved onto the merged time line
//! (traces start at different wall-clock moments; the earliest start is the merged run's
//! start). Then the streams of all ranks go through the same rank merge as a single run's
//! ([`crate::ranks::merge_streams`]): streams already shared inside an input are offered
//! member by member, so ranks that did the same thing end up sharing one stream however
//! the inputs were cut.
//!
//! Files are ordered by name with the last number compared as a number (`part-2` before
//! `part-10`), so one file per rank is one numbered run in the file table whatever order
//! the inputs came in. Processes keep the order of their inputs, and inputs are taken in
//! order of their lowest rank, so the result does not depend on the order of the files on
//! the command line.
//!
//! Cost: linear in the inputs' folded sizes plus the rank merge
//! (O(P · folded size) for an SPMD job); a stream is only re-encoded when its calls or
//! contexts change numbers.

use std::collections::HashMap;

use cairn_compress::stream::EncodedStream;
use cairn_model::{CallClass, Layer};

use crate::table::Table;
use crate::{CallInfo, Context, FileInfo, Process, Stream, Trace};

/// The merged trace's view of one input: where its indices go.
struct Renumbering {
    calls: Vec<u16>,
    contexts: Vec<u32>,
    files: Vec<u32>,
    first_process: u32,
}

impl Renumbering {
    fn is_identity_for(&self, events: &EncodedStream) -> bool {
        let calls_same = self
            .calls
            .iter()
            .take(events.max_call as usize + 1)
            .enumerate()
            .all(|(index, call)| *call as usize == index);
        let contexts_same = self
            .contexts
            .iter()
            .take(events.max_context as usize)
            .enumerate()
            .all(|(index, context)| *context as usize == index);
        calls_same && contexts_same
    }
}

/// The lowest rank of a trace's processes (inputs without ranks go last).
fn lowest_rank(trace: &Trace) -> (bool, u32) {
    trace
        .processes
        .iter()
        .filter_map(|process| process.rank)
        .min()
        .map_or((true, 0), |rank| (false, rank))
}

/// Merges whole traces into one (see the module documentation). An empty input gives an
/// empty trace. Below `precision` 100, ranks' loops whose counts differ within its margin
/// share a stream ([`crate::ranks::merge_streams`]).
pub fn merge_traces(mut traces: Vec<Trace>, precision: u8) -> Trace {
    traces.sort_by_key(|trace| (lowest_rank(trace), trace.meta.start_realtime));
    // An input without processes (a rank that could not build its trace) has no start.
    let run_start = traces
        .iter()
        .filter(|trace| !trace.processes.is_empty())
        .map(|trace| trace.meta.start_realtime)
        .min()
        .unwrap_or(0);
    let mut calls: Table<String> = Table::default();
    // What the inputs say of calls this build has no row for.
    let mut kinds: HashMap<String, (Layer, CallClass)> = HashMap::new();
    let mut modules: Table<Vec<u8>> = Table::default();
    let mut contexts: Table<Context> = Table::default();
    let mut files: Table<Vec<u8>> = Table::default();
    let mut noise = Vec::new();
    let mut processes: Vec<Process> = Vec::new();
    let mut streams: Vec<Stream> = Vec::new();
    let mut diagnostics: Vec<String> = Vec::new();
    let mut meta = traces
        .first()
        .map(|trace| trace.meta.clone())
        .unwrap_or_default();
    meta.start_realtime = run_start;
    meta.duration = 0;
    // Times move by each input's shift: rounded inputs stay rounded, but on no common step.
    meta.process_time_step = 1;

    for trace in traces {
        let shift = trace.meta.start_realtime.saturating_sub(run_start);
        meta.duration = meta.duration.max(shift.saturating_add(trace.meta.duration));
        if meta.exit_status.is_none_or(|status| status == 0) {
            meta.exit_status = trace.meta.exit_status.or(meta.exit_status);
        }
        let module_numbers: Vec<u32> = trace
            .modules
            .iter()
            .map(|module| modules.intern(module))
            .collect();
        let renumbering = Renumbering {
            calls: trace
                .calls
                .iter()
                .map(|call| {
                    if let Some(kind) = call.kind.filter(|_| call.call.is_none()) {
                        kinds.insert(call.name.clone(), kind);
                    }
                    calls.intern(&call.name) as u16
                })
                .collect(),
            contexts: trace
                .contexts
                .iter()
                .map(|context| {
                    let frames = context
                        .frames
                        .iter()
                        .map(|(module, offset)| {
                            (
                                module.map(|module| module_numbers[module as usize]),
                                *offset,
                            )
                        })
                        .collect();
                    contexts.intern(&Context { frames })
                })
                .collect(),
            files: trace
                .files
                .iter()
                .map(|file| {
                    let index = files.intern(&file.path) as usize;
                    if index == noise.len() {
                        noise.push(file.noise);
                    } else if file.noise.is_none() {
                        // The program's own file in any input is the program's own.
                        noise[index] = None;
                    }
                    index as u32
                })
                .collect(),
            first_process: processes.len() as u32,
        };
        processes.extend(trace.processes.into_iter().map(|mut process| {
            let moved = |index: u32| index + renumbering.first_process;
            process.parent = process.parent.map(moved);
            process.exec_of = process.exec_of.map(moved);
            process.start += shift;
            process.end += shift;
            process.main_start = process.main_start.map(|time| time + shift);
            process
        }));
        // Streams shared by several ranks of the input are renumbered once.
        let mut input_streams = trace.streams;
        crate::map_shared_events(&mut input_streams, |events| {
            let (first, last) = (events.first_start + shift, events.last_end + shift);
            if renumbering.is_identity_for(events) {
                events.with_times(first, last)
            } else {
                events
                    .map_keys(|key| {
                        key.call = renumbering.calls[key.call as usize];
                        if key.context > 0 {
                            key.context = renumbering.contexts[key.context as usize - 1] + 1;
                        }
                    })
                    .with_times(first, last)
            }
        });
        for mut stream in input_streams {
            stream.process += renumbering.first_process;
            stream.first_start += shift;
            stream.last_end += shift;
            for file in &mut stream.files {
                *file = renumbering.files[*file as usize];
            }
            streams.push(stream);
        }
        for message in trace.diagnostics {
            if !diagnostics.contains(&message) {
                diagnostics.push(message);
            }
        }
    }

    // Files by name, numbers as numbers (natural order).
    let mut order: Vec<u32> = (0..files.values.len() as u32).collect();
    order.sort_by_cached_key(|index| crate::names::natural_order(&files.values[*index as usize]));
    let files: Vec<FileInfo> = files
        .values
        .into_iter()
        .zip(noise)
        .map(|(path, noise)| FileInfo { path, noise })
        .collect();
    let files = crate::reorder_files(files, &order, &mut streams);
    let calls = CallInfo::table(&calls.values, &kinds);
    let streams = crate::ranks::merge_streams(&processes, &calls, streams, precision);
    Trace {
        meta,
        calls,
        processes,
        files,
        modules: modules.values,
        contexts: contexts.values,
        streams,
        diagnostics,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::synthetic::{rank_trace, Spmd};

    const PROGRAM: Spmd = Spmd {
        ranks: 0,
        segments: 6,
        transfers: 4,
        transfer_size: 4096,
        message_size: 8192,
    };

    /// Call, file path, handle, offset, request, result, aux.
    type ExactEvent = (String, Option<Vec<u8>>, u64, i64, u64, i64, u64);

    fn program(ranks: u32) -> Spmd {
        Spmd { ranks, ..PROGRAM }
    }

    /// Every kept field of every event of a rank, files by path, in stream order.
    fn exact_events(trace: &Trace, rank: u32) -> Vec<ExactEvent> {
        let process = trace
            .processes
            .iter()
            .position(|process| process.rank == Some(rank))
            .expect("the rank is in the trace") as u32;
        let mut events = Vec::new();
        for stream in trace
            .streams
            .iter()
            .filter(|stream| stream.process == process)
        {
            trace.expand(stream, |event| {
                events.push((
                    trace.call(&event).name.clone(),
                    event
                        .file
                        .map(|file| trace.files[file as usize].path.clone()),
                    event.handle,
                    event.offset,
                    event.request,
                    event.result,
                    event.aux,
                ))
            });
        }
        events
    }

    fn merged(ranks: u32) -> Trace {
        merge_traces(
            (0..ranks)
                .map(|rank| rank_trace(&program(ranks), rank))
                .collect(),
            100,
        )
    }

    #[test]
    fn every_rank_expands_to_its_own_events() {
        for ranks in [1, 2, 3, 8, 33] {
            let trace = merged(ranks);
            let trace = Trace::from_bytes(trace.to_bytes()).expect("the merged trace reads back");
            assert_eq!(trace.processes.len(), ranks as usize);
            for rank in 0..ranks {
                let alone = rank_trace(&program(ranks), rank);
                let expected = exact_events(&alone, rank);
                assert_eq!(expected.len() as u64, program(ranks).events_per_rank());
                assert_eq!(
                    exact_events(&trace, rank),
                    expected,
                    "rank {rank} of {ranks}"
                );
            }
        }
    }

    #[test]
    fn all_ranks_share_one_stream_and_the_size_stays_flat() {
        let sizes: Vec<usize> = [64, 256, 1024]
            .iter()
            .map(|ranks| {
                let trace = merged(*ranks);
                let shared: std::collections::HashSet<_> = trace
                    .streams
                    .iter()
                    .map(|stream| Arc::as_ptr(&stream.events))
                    .collect();
                // Ring neighbours wrap round the job (rank 0's left, the last rank's
                // right): kept modulo the job size, every rank has the same stream.
                assert_eq!(shared.len(), 1, "{ranks} ranks");
                // One numbered run of per-rank files plus the shared file.
                assert_eq!(trace.files.len(), *ranks as usize + 1);
                assert_eq!(trace.files[0].path, b"/scratch/part-0.dat");
                assert_eq!(
                    trace.files[*ranks as usize - 1].path,
                    format!("/scratch/part-{}.dat", ranks - 1).into_bytes()
                );
                trace.to_bytes().len()
            })
            .collect();
        // What grows with the ranks is each process's record (pid, times): a few bytes.
        // (Since process records are statistics, PROC version 11, the larger job's can be
        // the smaller trace: signed.)
        let per_rank = (sizes[2] as f64 - sizes[0] as f64) / (1024 - 64) as f64;
        assert!(
            per_rank < 16.0,
            "sizes {sizes:?}: {per_rank} bytes per rank"
        );
    }

    #[test]
    fn input_order_and_tree_shape_do_not_change_the_result() {
        let ranks = 12;
        let traces: Vec<Trace> = (0..ranks)
            .map(|rank| rank_trace(&program(ranks), rank))
            .collect();
        let flat = merge_traces(traces.clone(), 100);
        let mut reversed = traces.clone();
        reversed.reverse();
        assert_eq!(merge_traces(reversed, 100).to_bytes(), flat.to_bytes());
        // A radix tree of fan-in 3: [0..3) [3..6) ... then those merged.
        let partials: Vec<Trace> = traces
            .chunks(3)
            .map(|chunk| merge_traces(chunk.to_vec(), 100))
            .collect();
        let tree = merge_traces(partials, 100);
        assert_eq!(tree.processes, flat.processes);
        assert_eq!(tree.files, flat.files);
        for rank in 0..ranks {
            assert_eq!(exact_events(&tree, rank), exact_events(&flat, rank));
        }
        let shared = |trace: &Trace| {
            trace
                .streams
                .iter()
                .map(|stream| Arc::as_ptr(&stream.events))
                .collect::<std::collections::HashSet<_>>()
                .len()
        };
        assert_eq!(shared(&tree), shared(&flat));
        // The timing statistics are merged, not lost: the total time of every event is the
        // same (up to rounding of the merged means).
        let total = |trace: &Trace| {
            let mut sum = 0.0;
            for stream in &trace.streams {
                trace.expand(stream, |event| sum += event.duration as f64);
            }
            sum
        };
        let (tree_total, flat_total) = (total(&tree), total(&flat));
        assert!(
            (tree_total - flat_total).abs() <= flat_total * 1e-9 + 1.0 * ranks as f64 * 200.0,
            "{tree_total} vs {flat_total}"
        );
    }

    #[test]
    fn times_move_onto_the_earliest_start() {
        let mut first = rank_trace(&program(2), 0);
        let mut second = rank_trace(&program(2), 1);
        first.meta.start_realtime = 5_000_000;
        second.meta.start_realtime = 5_000_700;
        let merged = merge_traces(vec![second.clone(), first.clone()], 100);
        assert_eq!(merged.meta.start_realtime, 5_000_000);
        assert_eq!(merged.processes[1].start, second.processes[0].start + 700);
        assert_eq!(merged.processes[1].end, second.processes[0].end + 700);
        assert_eq!(
            merged.meta.duration,
            (second.meta.duration + 700).max(first.meta.duration)
        );
        // The two ranks share a stream: the second is placed like the first, relative to
        // its own process's start.
        let stream = merged
            .streams
            .iter()
            .find(|stream| stream.process == 1)
            .unwrap();
        let offset = first.streams[0].first_start - first.processes[0].start;
        assert_eq!(stream.first_start, merged.processes[1].start + offset);
    }

    #[test]
    fn ranks_keep_their_times_as_statistics_and_the_trace_stays_flat() {
        let size = |ranks: u32, precision: u8| {
            let mut trace = merged(ranks);
            let exact = trace.processes.clone();
            trace.apply_precision(precision);
            let grid = trace.meta.process_time_step;
            let bytes = trace.to_bytes();
            let read = Trace::from_bytes(bytes.clone()).unwrap();
            // Every rank shares the one stream: its times are the group's statistics (PROC
            // version 11), the earliest and latest of each exact at the ranks that had them.
            assert!(read.processes.iter().all(|process| process.group_times));
            for time in crate::data::process_times() {
                let extremes = |processes: &[Process]| {
                    let values: Vec<u64> = processes.iter().map(time).collect();
                    let (min, max) = (values.iter().min().copied(), values.iter().max().copied());
                    let at = |value: Option<u64>| values.iter().position(|v| Some(*v) == value);
                    (min, at(min), max, at(max))
                };
                assert_eq!(extremes(&read.processes), extremes(&trace.processes));
            }
            if precision < 100 {
                let margin = trace.meta.duration * (100 - precision as u64) / 100;
                assert_eq!(grid, margin / 2);
                for (shared, exact) in read.processes.iter().zip(&exact) {
                    assert!(shared.start.abs_diff(exact.start) <= margin);
                    assert!(shared.end.abs_diff(exact.end) <= margin);
                    let main = |process: &Process| process.main_start.unwrap();
                    assert!(main(shared).abs_diff(main(exact)) <= margin);
                    assert_eq!(shared.start % grid, 0);
                }
                // Launched within 3 ms, ending together, in a run of 0.8 s: at 1% (8 ms)
                // every rank has the same start, end and `main` start.
                let distinct = |time: &dyn Fn(&Process) -> u64| {
                    let times: std::collections::HashSet<u64> =
                        read.processes.iter().map(time).collect();
                    times.len()
                };
                assert_eq!(distinct(&|process| process.start), 1);
                assert_eq!(distinct(&|process| process.end), 1);
                assert_eq!(distinct(&|process| process.main_start.unwrap()), 1);
                assert!(read
                    .diagnostics
                    .iter()
                    .any(|note| note.contains("rounded to")));
            }
            bytes.len() as f64
        };
        // Exact per-rank times cost about 5 B a rank (85 KB at 16,384 ranks before PROC
        // version 11); as statistics, nothing a rank at either level.
        for precision in [100, 99] {
            let (small, large) = (size(64, precision), size(1024, precision));
            assert!(
                (large - small).abs() <= small * 0.05,
                "precision {precision}: {small} B at 64 ranks, {large} B at 1024"
            );
        }
    }

    #[test]
    fn loop_counts_that_grow_with_the_rank_share_a_stream() {
        // Rank r runs 3 + r segments: one stream, and every rank's events and event count
        // come back exactly after writing and reading.
        let ranks = 8;
        let traces: Vec<Trace> = (0..ranks)
            .map(|rank| {
                let program = Spmd {
                    segments: 3 + rank,
                    ..program(ranks)
                };
                rank_trace(&program, rank)
            })
            .collect();
        let expected: Vec<Vec<ExactEvent>> = traces
            .iter()
            .enumerate()
            .map(|(rank, trace)| exact_events(trace, rank as u32))
            .collect();
        let merged = Trace::from_bytes(merge_traces(traces, 100).to_bytes()).unwrap();
        let shared: std::collections::HashSet<_> = merged
            .streams
            .iter()
            .map(|stream| Arc::as_ptr(&stream.events))
            .collect();
        assert_eq!(shared.len(), 1);
        for rank in 0..ranks {
            assert_eq!(
                exact_events(&merged, rank),
                expected[rank as usize],
                "rank {rank}"
            );
            let stream = merged
                .streams
                .iter()
                .find(|stream| merged.processes[stream.process as usize].rank == Some(rank))
                .unwrap();
            assert_eq!(stream.count, expected[rank as usize].len() as u64);
        }
    }

    #[test]
    fn an_empty_input_only_adds_its_notes() {
        let mut empty = Trace::default();
        empty
            .diagnostics
            .push("rank 3's trace could not be built".into());
        let traces: Vec<Trace> = (0..3).map(|rank| rank_trace(&program(4), rank)).collect();
        let without = merge_traces(traces.clone(), 100);
        let mut with_empty = traces;
        with_empty.insert(1, empty);
        let merged = merge_traces(with_empty, 100);
        assert_eq!(merged.meta, without.meta);
        assert_eq!(merged.processes, without.processes);
        assert_eq!(merged.diagnostics, ["rank 3's trace could not be built"]);
    }

    #[test]
    fn calls_and_contexts_are_renumbered_by_name_and_frames() {
        let ranks = 2;
        let first = rank_trace(&program(ranks), 0);
        let mut second = rank_trace(&program(ranks), 1);
        // The second input lists its calls and contexts in reverse order.
        let calls = second.calls.len();
        let contexts = second.contexts.len() as u32;
        second.calls.reverse();
        second.contexts.reverse();
        let events = second.streams[0].events.map_keys(|key| {
            key.call = (calls - 1 - key.call as usize) as u16;
            key.context = contexts + 1 - key.context;
        });
        second.streams[0].events = Arc::new(events);
        let expected = exact_events(&rank_trace(&program(ranks), 1), 1);
        assert_eq!(exact_events(&second, 1), expected);
        let merged = merge_traces(vec![first, second], 100);
        assert_eq!(merged.calls.len(), calls);
        assert_eq!(merged.contexts.len(), contexts as usize);
        assert_eq!(exact_events(&merged, 1), expected);
    }
}

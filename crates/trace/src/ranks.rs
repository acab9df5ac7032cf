//! Streams of MPI ranks that did the same thing, stored once (EVNT section version 5).
//!
//! [`merge_streams`] hands the streams of ranked processes to
//! `cairn_compress::ranks::merge_ranks` (same structure, values affine in the rank → one
//! shared stream) and gives each member the shared stream, its distance from the base rank
//! and its share of the merged timing statistics. The on-disk form stores each shared
//! stream once, then its members column by column (process, thread, rank, times, file
//! tables), each column as differences from the previous member so that the regular case —
//! consecutive ranks, one file per rank with consecutive indices, a shared file — is runs
//! of equal bytes that the section's zstd all but removes. A shared stream's members do not
//! keep their own first and last event times: they are placed like the member first in
//! (process, thread) order, relative to their process's start (exact process times are in
//! PROC).

use std::collections::HashMap;
use std::sync::Arc;

use cairn_compress::ranks::{merge_ranks, Member};
use cairn_compress::stream::{EncodedStream, Shares};
use cairn_format::bytes::{ByteReader, ByteWriter};

use crate::{CallInfo, Process, Result, Stream, Trace, TraceError};

/// Streams larger than this (encoded) are not offered for merging: they are irregular
/// (folding left them large), so they would not merge, and the merge holds each candidate
/// as a tree in memory (about ten times its encoded size).
const LARGEST_MERGED_STREAM: usize = 1 << 20;

/// Partitions of threads of processes without a rank (the process index below it).
const UNRANKED_PARTITION: u64 = 1 << 63;

/// The stream's process (`None` only for a stream of an unknown process).
fn process_of<'a>(processes: &'a [Process], stream: &Stream) -> Option<&'a Process> {
    processes.get(stream.process as usize)
}

fn process_start(processes: &[Process], stream: &Stream) -> u64 {
    process_of(processes, stream).map_or(0, |process| process.start)
}

fn canonical_order(streams: &mut [Stream]) {
    streams.sort_by_key(|stream| (stream.process, stream.thread));
}

/// Merges the streams of ranks that did the same thing; other streams are left alone.
/// The result is in (process, thread) order.
/// `calls`: the trace's call table (an MPI peer may change with the rank, a request count
/// may not). Below `precision` 100, loops whose iteration counts differ between ranks
/// within its margin merge with a histogram of all their counts.
pub fn merge_streams(
    processes: &[Process],
    calls: &[CallInfo],
    mut streams: Vec<Stream>,
    precision: u8,
) -> Vec<Stream> {
    canonical_order(&mut streams);
    // A thread's position in its process: only the n-th threads of ranks are compared.
    let mut ordinals = Vec::with_capacity(streams.len());
    for (index, stream) in streams.iter().enumerate() {
        let ordinal = match index.checked_sub(1).map(|previous| &streams[previous]) {
            Some(previous) if previous.process == stream.process => ordinals[index - 1] + 1,
            _ => 0u64,
        };
        ordinals.push(ordinal);
    }
    let rank_of = |stream: &Stream| process_of(processes, stream).and_then(|process| process.rank);
    // What a stream is merged as: a rank's n-th thread is compared with the other ranks'
    // n-th threads, its index in the merge being the rank; the threads of a process
    // without a rank are compared with one another, their index being their position in
    // the process (64 threads doing the same thing share one stream as ranks do).
    let merged_as: Vec<(u64, i64)> = streams
        .iter()
        .zip(&ordinals)
        .map(|(stream, ordinal)| match rank_of(stream) {
            Some(rank) => (*ordinal, rank as i64),
            None => (UNRANKED_PARTITION | stream.process as u64, *ordinal as i64),
        })
        .collect();
    // A stream with irregular offsets in its column is its thread's own.
    let mut ranked: Vec<usize> = (0..streams.len())
        .filter(|index| {
            let events = &streams[*index].events;
            events.bytes().len() <= LARGEST_MERGED_STREAM && !events.has_column()
        })
        .collect();
    ranked.sort_by_key(|index| (merged_as[*index], *index));
    // Members of an already shared stream each take their share of its statistics: the
    // members' distances from its base rank say which ranks have each part.
    let mut shares: HashMap<*const EncodedStream, (Shares, Vec<i64>)> = HashMap::new();
    for index in &ranked {
        let stream = &streams[*index];
        shares
            .entry(Arc::as_ptr(&stream.events))
            .or_insert_with(|| (Shares::new(Vec::new()), Vec::new()))
            .1
            .push(stream.rank_delta);
    }
    for (shares, deltas) in shares.values_mut() {
        deltas.sort_unstable();
        *shares = Shares::new(deltas.clone());
    }
    // Members of one rank (two processes) take consecutive shares.
    let mut taken: HashMap<(*const EncodedStream, i64), usize> = HashMap::new();
    let (streams_read, merged_as_read) = (&streams, &merged_as);
    let members = ranked.iter().map(move |index| {
        let stream = &streams_read[*index];
        let key = Arc::as_ptr(&stream.events);
        let (shares, deltas) = shares.get_mut(&key).expect("every member was counted");
        let before = taken.entry((key, stream.rank_delta)).or_default();
        let member = deltas.partition_point(|delta| *delta < stream.rank_delta) + *before;
        *before += 1;
        let (partition, rank) = merged_as_read[*index];
        Member {
            rank,
            partition,
            nodes: stream.nodes().member_nodes(shares, member),
        }
    });
    // Peers wrap round the job: its size is one more than its highest rank.
    let job_size = processes
        .iter()
        .filter_map(|process| process.rank)
        .max()
        .map(|rank| rank as i64 + 1);
    let class_of = |call: u16| calls.get(call as usize).and_then(CallInfo::class);
    let groups = merge_ranks(members, job_size, &class_of, precision);
    for group in groups {
        // Times come from the member first in (process, thread) order, as when reading.
        let anchor = group
            .members
            .iter()
            .map(|member| ranked[*member])
            .min()
            .expect("a group has members");
        let anchor_stream = &streams[anchor];
        let offset = anchor_stream
            .first_start
            .wrapping_sub(process_start(processes, anchor_stream));
        let length = anchor_stream
            .last_end
            .saturating_sub(anchor_stream.first_start);
        let single = group.members.len() == 1 && group.sharing.parameters.is_empty();
        let shared = if single && anchor_stream.members == 1 {
            anchor_stream.events.clone()
        } else {
            Arc::new(EncodedStream::from_nodes(
                &group.nodes,
                anchor_stream.first_start,
                anchor_stream.last_end,
                &group.sharing,
                group.members.len() > 1,
            ))
        };
        let members = group.members.len() as u32;
        for (position, member) in group.members.iter().enumerate() {
            let index = ranked[*member];
            let (_, rank) = merged_as[index];
            let start = process_start(processes, &streams[index]).wrapping_add(offset);
            let stream = &mut streams[index];
            stream.events = shared.clone();
            stream.rank_delta = rank - group.base_rank;
            stream.members = members;
            stream.member = position as u32;
            stream.first_start = start;
            stream.last_end = start.saturating_add(length);
        }
    }
    streams
}

/// Writes the trace's streams: each shared stream once, then its members by columns.
pub fn encode_streams(trace: &Trace, out: &mut ByteWriter) {
    let mut groups: Vec<Vec<&Stream>> = Vec::new();
    let mut group_of: HashMap<*const EncodedStream, usize> = HashMap::new();
    for stream in &trace.streams {
        let group = *group_of
            .entry(Arc::as_ptr(&stream.events))
            .or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
        groups[group].push(stream);
    }
    out.u64(groups.len() as u64);
    for members in groups {
        out.bytes(members[0].events.bytes());
        out.u64(members.len() as u64);
        let mut previous = (0i64, 0i64);
        for stream in &members {
            out.i64(stream.process as i64 - previous.0);
            out.i64(stream.rank_delta.wrapping_sub(previous.1));
            previous = (stream.process as i64, stream.rank_delta);
        }
        for stream in &members {
            let pid = process_of(&trace.processes, stream).map_or(0, |process| process.pid);
            out.i64(stream.thread as i64 - pid as i64);
        }
        // A stream of its own keeps its exact times; members of a shared stream are placed
        // like the first member relative to their process's start (only `expand` uses them).
        if members.len() == 1 {
            let stream = members[0];
            let start = process_start(&trace.processes, stream);
            out.i64(stream.first_start.wrapping_sub(start) as i64);
            out.u64(stream.last_end.saturating_sub(stream.first_start));
        }
        for stream in &members {
            out.u64(stream.files.len() as u64);
        }
        // Each table as steps from entry to entry (a run of numbered files is a run of
        // +1), then column by column as the difference from the previous member's step.
        let steps: Vec<Vec<i64>> = members
            .iter()
            .map(|stream| {
                let mut previous = 0i64;
                stream
                    .files
                    .iter()
                    .map(|file| {
                        let step = *file as i64 - previous;
                        previous = *file as i64;
                        step
                    })
                    .collect()
            })
            .collect();
        let widest = steps.iter().map(Vec::len).max();
        for column in 0..widest.unwrap_or(0) {
            let mut previous = 0i64;
            for table in &steps {
                if let Some(step) = table.get(column) {
                    out.i64(step - previous);
                    previous = *step;
                }
            }
        }
    }
}

/// Reads what [`encode_streams`] wrote; the streams come back in (process, thread) order.
pub fn decode_streams(reader: &mut ByteReader, processes: &[Process]) -> Result<Vec<Stream>> {
    let invalid = |what: &str| TraceError::Invalid(format!("section EVNT: {what}"));
    let mut streams = Vec::new();
    for _ in 0..reader.count(2)? {
        let shared = Arc::new(EncodedStream::from_bytes(reader.bytes()?.to_vec())?);
        let count = reader.count(4)?;
        let members = u32::try_from(count).map_err(|_| invalid("too many members"))?;
        let first = streams.len();
        let mut previous = (0i64, 0i64);
        for position in 0..count {
            let process = previous.0.wrapping_add(reader.i64()?);
            let rank_delta = previous.1.wrapping_add(reader.i64()?);
            previous = (process, rank_delta);
            let process = u32::try_from(process)
                .ok()
                .filter(|process| (*process as usize) < processes.len())
                .ok_or_else(|| invalid("event stream of an unknown process"))?;
            streams.push(Stream {
                process,
                thread: 0,
                // Loop counts may depend on the rank.
                count: shared.count_for_rank(rank_delta),
                events: shared.clone(),
                rank_delta,
                members,
                member: position as u32,
                first_start: 0,
                last_end: 0,
                files: Vec::new(),
                scaled: None,
            });
        }
        let group = &mut streams[first..];
        for stream in group.iter_mut() {
            let pid = processes[stream.process as usize].pid as i64;
            stream.thread = u32::try_from(pid.wrapping_add(reader.i64()?))
                .map_err(|_| invalid("thread id out of range"))?;
        }
        let (offset, length) = if group.len() == 1 {
            (reader.i64()?, reader.u64()?)
        } else {
            (
                shared
                    .first_start
                    .wrapping_sub(processes[group[0].process as usize].start)
                    as i64,
                shared.last_end.saturating_sub(shared.first_start),
            )
        };
        for stream in group.iter_mut() {
            let start = processes[stream.process as usize].start;
            stream.first_start = start.wrapping_add(offset as u64);
            stream.last_end = stream.first_start.saturating_add(length);
        }
        let mut wanted = Vec::with_capacity(group.len());
        for _ in 0..group.len() {
            wanted.push(reader.count(1)?);
        }
        // Each entry takes at least a byte: a table larger than the rest is corrupt.
        let total = wanted
            .iter()
            .fold(0usize, |sum, files| sum.saturating_add(*files));
        if total > reader.remaining() {
            return Err(invalid("file tables larger than the section"));
        }
        for column in 0..wanted.iter().copied().max().unwrap_or(0) {
            let mut previous_step = 0i64;
            for (stream, wanted) in group.iter_mut().zip(&wanted) {
                if column < *wanted {
                    let step = previous_step.wrapping_add(reader.i64()?);
                    previous_step = step;
                    let file =
                        (stream.files.last().map_or(0, |file| *file as i64)).wrapping_add(step);
                    stream
                        .files
                        .push(u32::try_from(file).map_err(|_| invalid("file index out of range"))?);
                }
            }
        }
    }
    canonical_order(&mut streams);
    Ok(streams)
}

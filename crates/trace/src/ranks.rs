//! Streams of MPI ranks that did the same thing, stored once (EVNT section version 15).
//!
//! [`merge_streams`] hands the streams of ranked processes to
//! `cairn_compress::ranks::merge_ranks` (same structure, values affine in the rank → one
//! shared stream) and gives each member the shared stream, its distance from the base rank
//! and its share of the merged timing statistics. The on-disk form stores each shared
//! stream once, then its members column by column (process, thread, rank, times), each
//! column as differences from the previous member so that the regular case — consecutive
//! ranks — is runs of equal bytes that the section's zstd all but removes; each member's
//! file table as runs, against the previous member's where that is shorter (one file per
//! rank, a shared file, a tree of numbered files per rank: one run a rank). A shared
//! stream's members do not keep their own first and last event times: they are placed like
//! the member first in (process, thread) order, relative to their process's start (exact
//! process times are in PROC).

use std::collections::HashMap;
use std::sync::Arc;

use cairn_compress::fold::Node;
use cairn_compress::ranks::{merge_ranks, Group, Member};
use cairn_compress::stream::{
    pending, Column, EncodedStream, EventKey, OffsetRef, RankView, Shares, SIZE_IN_COLUMN,
};
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
    // Streams offered to the merge: small enough, and of those with a column of their own
    // (irregular offsets, lines printed of their own sizes) only the first in each
    // partition, whose column then goes with its parts — rank 0 printing its progress
    // still shares the other ranks' stream — and those whose column is that one's value
    // for value (the jumps of a dataset per step, alike on every rank: each rank reads
    // them after its own previous access), and (EVNT 32) any whose column holds offsets
    // alone: members whose columns differ then each keep their own. If a column of sizes
    // does not fit the merged stream (`group_streams` says so), the merge is made again
    // without it.
    let candidates = |with_column: bool| {
        let mut ranked: Vec<usize> = (0..streams.len())
            .filter(|index| streams[*index].events.bytes().len() <= LARGEST_MERGED_STREAM)
            .collect();
        ranked.sort_by_key(|index| (merged_as[*index], *index));
        let mut column_of: HashMap<u64, usize> = HashMap::new();
        ranked.retain(|index| {
            let column = streams[*index].column();
            if column.is_empty() {
                return true;
            }
            let owner = streams[*column_of.entry(merged_as[*index].0).or_insert(*index)].column();
            // Columns of offsets alone may differ: each member then keeps its own.
            with_column
                && (std::ptr::eq(owner, column)
                    || owner == column
                    || (owner.sizes() == 0 && column.sizes() == 0))
        });
        ranked
    };
    let mut ranked = candidates(true);
    let built = match group_streams(processes, calls, &streams, &merged_as, &ranked, precision) {
        Some(built) => built,
        None => {
            ranked = candidates(false);
            group_streams(processes, calls, &streams, &merged_as, &ranked, precision)
                .expect("streams without columns merge")
        }
    };
    for (group, shared, offset, length, own_columns) in built {
        let members = group.members.len() as u32;
        for (position, member) in group.members.iter().enumerate() {
            let index = ranked[*member];
            let (_, rank) = merged_as[index];
            let start = process_start(processes, &streams[index]).wrapping_add(offset);
            let stream = &mut streams[index];
            stream.column = own_columns.then(|| Arc::new(stream.column().clone()));
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

/// Whether some leaf of `nodes` reads the stream's column.
fn reads_column(nodes: &[Node<EventKey>]) -> bool {
    nodes.iter().any(|node| match node {
        Node::Leaf(leaf) => {
            leaf.key.offset == OffsetRef::Column || leaf.key.flags & SIZE_IN_COLUMN != 0
        }
        Node::Loop { body, .. } => reads_column(body),
    })
}

/// A merged group with its stream, the offset and length of its members' times, and
/// whether each member keeps its own column.
type Built = (Group, Arc<EncodedStream>, u64, u64, bool);

/// The rank merge of the streams `ranked` (indices into `streams`): each group and its
/// encoded stream. `None` when a group's leaves would not take exactly the column of the
/// member that brought one (the caller merges again without that member).
fn group_streams(
    processes: &[Process],
    calls: &[CallInfo],
    streams: &[Stream],
    merged_as: &[(u64, i64)],
    ranked: &[usize],
    precision: u8,
) -> Option<Vec<Built>> {
    // Members of an already shared stream each take their share of its statistics: the
    // members' distances from its base rank say which ranks have each part.
    let mut shares: HashMap<*const EncodedStream, (Shares, Vec<i64>)> = HashMap::new();
    for index in ranked {
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
    // A completion of every request its body posted is kept against them, so that ranks
    // with more neighbours (more posts, a longer `MPI_Waitall`) share its leaf.
    let class_of = |call: u16| calls.get(call as usize).and_then(CallInfo::class);
    let posts = |call: u16| {
        class_of(call)
            .is_some_and(|class| cairn_model::posts_request(&calls[call as usize].name, class))
    };
    let completes = |call: u16| class_of(call) == Some(cairn_model::CallClass::Completion);
    let members = ranked.iter().map(move |index| {
        let stream = &streams_read[*index];
        let key = Arc::as_ptr(&stream.events);
        let (shares, deltas) = shares.get_mut(&key).expect("every member was counted");
        let before = taken.entry((key, stream.rank_delta)).or_default();
        let member = deltas.partition_point(|delta| *delta < stream.rank_delta) + *before;
        *before += 1;
        let (partition, rank) = merged_as_read[*index];
        let mut nodes = stream.nodes().member_nodes(shares, member);
        pending::mark(&mut nodes, &posts, &completes);
        Member {
            rank,
            partition,
            nodes,
        }
    });
    // Peers wrap round the job: its size is one more than its highest rank.
    let job_size = processes
        .iter()
        .filter_map(|process| process.rank)
        .max()
        .map(|rank| rank as i64 + 1);
    let groups = merge_ranks(members, job_size, &class_of, precision);
    let mut built = Vec::with_capacity(groups.len());
    for mut group in groups {
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
        let mut nodes = std::mem::take(&mut group.nodes);
        if group.members.len() == 1 {
            // A rank alone keeps its own values.
            pending::resolve(&mut nodes);
        }
        let mut own_columns = false;
        let shared = if single && anchor_stream.members == 1 && anchor_stream.column.is_none() {
            anchor_stream.events.clone()
        } else {
            let times = (anchor_stream.first_start, anchor_stream.last_end);
            let several = group.members.len() > 1;
            let columns: Vec<&Column> = group
                .members
                .iter()
                .map(|member| streams[ranked[*member]].column())
                .collect();
            // The one column the members' parts read (one member's, or alike on all), if
            // they read one; else, where the columns hold offsets alone, each member's own.
            let column = columns.iter().find(|column| !column.is_empty());
            let one = column.filter(|column| {
                columns
                    .iter()
                    .all(|other| other.is_empty() || other == *column)
            });
            let reads = reads_column(&nodes);
            let from_one = one.filter(|_| reads).and_then(|column| {
                EncodedStream::from_nodes_with_column(
                    &nodes,
                    times,
                    &group.sharing,
                    several,
                    column,
                )
                .ok()
            });
            Arc::new(match (from_one, column) {
                (Some(stream), _) => stream,
                (None, Some(_)) if reads => {
                    if columns.iter().any(|column| column.sizes() > 0) {
                        return None;
                    }
                    own_columns = true;
                    EncodedStream::from_nodes(&nodes, times.0, times.1, &group.sharing, several)
                }
                _ => EncodedStream::from_nodes(&nodes, times.0, times.1, &group.sharing, several),
            })
        };
        built.push((group, shared, offset, length, own_columns));
    }
    Some(built)
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
        let mut previous: &[u32] = &[];
        for stream in &members {
            encode_file_table(previous, &stream.files, out);
            previous = &stream.files;
        }
        // Members with columns of their own (version 32): position, then 0 and the
        // column, or 1 and the column less the previous one written here (see
        // `Column::less`), whichever is shorter.
        let own: Vec<(usize, &Column)> = members
            .iter()
            .enumerate()
            .filter_map(|(position, stream)| Some((position, stream.column.as_deref()?)))
            .collect();
        out.u64(own.len() as u64);
        let mut previous: Option<&Column> = None;
        for (position, column) in own {
            out.u64(position as u64);
            let mut whole = ByteWriter::new();
            column.write(&mut whole);
            let mut less = ByteWriter::new();
            if let Some(difference) = previous.and_then(|previous| column.less(previous)) {
                difference.write(&mut less);
            }
            if !less.buffer.is_empty() && less.buffer.len() < whole.buffer.len() {
                out.u64(1);
                out.buffer.extend_from_slice(&less.buffer);
            } else {
                out.u64(0);
                out.buffer.extend_from_slice(&whole.buffer);
            }
            previous = Some(column);
        }
    }
}

/// Members' file tables (files or total entries) beyond this are refused on reading: runs
/// let a few bytes stand for a long table, so the section's size no longer bounds them.
/// 32 M entries (128 MiB) is 4,096 ranks naming 8,192 files each.
const MAX_MEMBER_FILE_ENTRIES: usize = 1 << 25;

/// Runs of equal values: (how many, value).
fn runs(values: impl Iterator<Item = i64>) -> Vec<(u64, i64)> {
    let mut runs: Vec<(u64, i64)> = Vec::new();
    for value in values {
        match runs.last_mut() {
            Some((count, last)) if *last == value => *count += 1,
            _ => runs.push((1, value)),
        }
    }
    runs
}

/// Steps from entry to entry of `table` from `start` (a run of numbered files is one run).
fn step_runs(start: i64, table: &[u32]) -> Vec<(u64, i64)> {
    let mut previous = start;
    runs(table.iter().map(|file| {
        let step = *file as i64 - previous;
        previous = *file as i64;
        step
    }))
}

/// A member's file table, in whichever of two forms takes fewer runs: its own steps from
/// entry to entry, or entry by entry against the previous member's table (the rest, if
/// longer, as steps; this form when it takes no more runs, so that a file per rank is the
/// same bytes for every rank). Ranks naming their own numbered files (`file.r.0` …
/// `file.r.999`, a tree per rank) are one run each against their neighbour — a few bytes
/// a rank however many files each names, where steps column by column (EVNT 14) cost a
/// byte a file.
fn encode_file_table(previous: &[u32], table: &[u32], out: &mut ByteWriter) {
    let own = step_runs(0, table);
    let common = previous.len().min(table.len());
    let mut against = runs(
        previous
            .iter()
            .zip(table)
            .map(|(before, file)| *file as i64 - *before as i64),
    );
    let last = common.checked_sub(1).map_or(0, |index| table[index] as i64);
    against.extend(step_runs(last, &table[common..]));
    let (form, runs) = if common > 0 && against.len() <= own.len() {
        (1, against)
    } else {
        (0, own)
    };
    out.u64(form);
    for (count, value) in runs {
        out.u64(count);
        out.i64(value);
    }
}

/// Reads what [`encode_file_table`] wrote: a table of `length` entries.
fn decode_file_table(reader: &mut ByteReader, previous: &[u32], length: usize) -> Result<Vec<u32>> {
    let invalid = |what: &str| TraceError::Invalid(format!("section EVNT: {what}"));
    let against = match reader.u64()? {
        0 => false,
        1 if !previous.is_empty() => true,
        _ => return Err(invalid("unknown form of a file table")),
    };
    let common = if against {
        previous.len().min(length)
    } else {
        0
    };
    let mut table = Vec::with_capacity(length);
    let mut file = 0i64;
    while table.len() < length {
        let count = reader.u64()?;
        let value = reader.i64()?;
        if count == 0 || count > (length - table.len()) as u64 {
            return Err(invalid("file table run out of range"));
        }
        for _ in 0..count {
            let position = table.len();
            file = if position < common {
                (previous[position] as i64).wrapping_add(value)
            } else {
                file.wrapping_add(value)
            };
            table.push(u32::try_from(file).map_err(|_| invalid("file index out of range"))?);
        }
    }
    Ok(table)
}

/// Reads what [`encode_streams`] wrote; the streams come back in (process, thread) order.
pub fn decode_streams(reader: &mut ByteReader, processes: &[Process]) -> Result<Vec<Stream>> {
    let invalid = |what: &str| TraceError::Invalid(format!("section EVNT: {what}"));
    let mut streams = Vec::new();
    let mut entries = 0u64;
    for _ in 0..reader.count(2)? {
        let shared = Arc::new(EncodedStream::from_bytes(reader.bytes()?.to_vec())?);
        let count = reader.count(4)?;
        if count == 0 {
            // Found by fuzzing: the members' columns below are placed by the first one.
            return Err(invalid("event stream without members"));
        }
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
                count: shared.count_for_view(RankView {
                    member: position as u32,
                    members,
                    ..RankView::of(rank_delta)
                }),
                events: shared.clone(),
                rank_delta,
                members,
                member: position as u32,
                first_start: 0,
                last_end: 0,
                files: Vec::new(),
                scaled: None,
                column: None,
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
            let length = reader.u64()?;
            entries = entries.saturating_add(length);
            if entries > MAX_MEMBER_FILE_ENTRIES as u64 {
                return Err(invalid("members' file tables too large"));
            }
            wanted.push(length as usize);
        }
        for (index, length) in wanted.into_iter().enumerate() {
            let (done, rest) = group.split_at_mut(index);
            let previous = done.last().map_or(&[][..], |stream| &stream.files);
            rest[0].files = decode_file_table(reader, previous, length)?;
        }
        let mut previous: Option<Arc<Column>> = None;
        for _ in 0..reader.count(3)? {
            let position = usize::try_from(reader.u64()?)
                .ok()
                .filter(|position| *position < group.len())
                .ok_or_else(|| invalid("column of an unknown member"))?;
            if !shared.column().is_empty() || group[position].column.is_some() {
                return Err(invalid("a member's column beside another"));
            }
            let form = reader.u64()?;
            let column = Column::read(reader)?;
            let column = match (form, &previous) {
                (0, _) => column,
                (1, Some(previous)) => column
                    .plus(previous)
                    .ok_or_else(|| invalid("a member's column unlike the one it follows"))?,
                _ => return Err(invalid("unknown form of a member's column")),
            };
            let column = Arc::new(column);
            previous = Some(column.clone());
            group[position].column = Some(column);
        }
    }
    canonical_order(&mut streams);
    Ok(streams)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encoded(tables: &[Vec<u32>]) -> Vec<u8> {
        let mut out = ByteWriter::new();
        let mut previous: &[u32] = &[];
        for table in tables {
            encode_file_table(previous, table, &mut out);
            previous = table;
        }
        out.into_inner()
    }

    fn decoded(bytes: &[u8], lengths: &[usize]) -> Result<Vec<Vec<u32>>> {
        let mut reader = ByteReader::new(bytes, "EVNT");
        let mut tables: Vec<Vec<u32>> = Vec::new();
        for length in lengths {
            let previous = tables.last().map_or(&[][..], Vec::as_slice);
            let table = decode_file_table(&mut reader, previous, *length)?;
            tables.push(table);
        }
        Ok(tables)
    }

    #[test]
    fn ranks_with_their_own_numbered_files_cost_a_run_each() {
        // mdtest -u: each rank a tree of 3,815 files, numbered on from the previous rank's.
        let rank = |r: u32| -> Vec<u32> { (0..3815).map(|k| r * 3813 + 7 + k * 2).collect() };
        let tables: Vec<Vec<u32>> = (0..16).map(rank).collect();
        let bytes = encoded(&tables);
        // The first table: one run of steps after its first entry; each other: one run
        // (+3813 on every entry of the previous rank's).
        assert_eq!(bytes.len(), 6 + 15 * 5, "{bytes:?}");
        let lengths: Vec<usize> = tables.iter().map(Vec::len).collect();
        assert_eq!(decoded(&bytes, &lengths).unwrap(), tables);
    }

    #[test]
    fn runs_past_the_table_or_empty_are_refused() {
        let mut out = ByteWriter::new();
        out.u64(0);
        out.u64(5);
        out.i64(1);
        let bytes = out.into_inner();
        assert!(decoded(&bytes, &[4]).is_err());
        assert_eq!(decoded(&bytes, &[5]).unwrap(), [vec![1, 2, 3, 4, 5]]);
        let mut out = ByteWriter::new();
        out.u64(0);
        out.u64(0);
        out.i64(1);
        assert!(decoded(&out.into_inner(), &[1]).is_err());
        // Against a previous table when there is none.
        let mut out = ByteWriter::new();
        out.u64(1);
        out.u64(1);
        out.i64(1);
        assert!(decoded(&out.into_inner(), &[1]).is_err());
    }

    #[test]
    fn a_shared_stream_without_members_is_refused() {
        // Found by fuzzing (the members' columns are placed by the first member).
        let stream = EncodedStream::from_nodes(&[], 0, 0, &Default::default(), true);
        let mut out = ByteWriter::new();
        out.u64(1);
        out.bytes(stream.bytes());
        out.u64(0);
        let bytes = out.into_inner();
        let Err(error) = decode_streams(&mut ByteReader::new(&bytes, "EVNT"), &[]) else {
            panic!("a stream without members was accepted");
        };
        assert_eq!(
            error.to_string(),
            "section EVNT: event stream without members"
        );
    }

    proptest! {
        #[test]
        fn member_file_tables_come_back_as_written(
            tables in proptest::collection::vec(
                proptest::collection::vec(0u32..64, 0..40), 1..8),
            shift in 0u32..1000,
        ) {
            // Some tables shifted copies of the one before, as ranks' often are.
            let mut tables = tables;
            for index in 1..tables.len() {
                if index % 2 == 0 {
                    let previous = tables[index - 1].clone();
                    tables[index] = previous.iter().map(|file| file + shift).collect();
                }
            }
            let lengths: Vec<usize> = tables.iter().map(Vec::len).collect();
            prop_assert_eq!(decoded(&encoded(&tables), &lengths).unwrap(), tables);
        }
    }
}

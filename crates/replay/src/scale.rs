//! Replaying a trace of N ranks on M (`cairn replay --scale-ranks M`): a procurement team
//! runs a job's pattern at the scale of the machine it is buying, from a trace taken at
//! another.
//!
//! What the trace says, and what is inferred:
//! - Each rank of the replay takes a recorded rank's processes and threads as its model: the
//!   first rank the first's, the last rank the last's, every other rank the recorded rank of
//!   the same number, or the last interior one past it ([`model`]). In a stream ranks share,
//!   it takes the parts only some ranks have as its model does (rank 0's file creation, the
//!   ranks with a west neighbour), and every value that changes with the rank (peers,
//!   offsets, loop counts) from the stored slopes at its own rank: a ring, a block per rank
//!   and a halo extend to any size, exactly as the program would have (`RankView`).
//! - A peer modulo the recorded job size wraps modulo the new one. A collective file open
//!   over the whole recorded world is over the whole new one.
//! - Where no slope says how a value follows the rank — a stream of its own, a part only
//!   one recorded rank has (the ends of a 1-D decomposition, when the first and last ranks
//!   share a stream) — peers keep their distance from the rank, except from rank 0 (a root
//!   stays the root) and from the last rank (its neighbours are the last ranks'):
//!   [`Scaling::peer`].
//! - A file per rank is named by the recorded names' template: two ranks sharing a stream
//!   name it `out.00002` and `out.00003`, rank 12 names it `out.00012` ([`filled`]). A
//!   name without such a template is the model's own name (the ranks then share it), and
//!   the replay counts those files.
//! - What cannot scale is refused before MPI starts, with the reason: peers that follow the
//!   rows of a process grid (its width would change), XOR partners on a rank count that is
//!   not a power of two.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_compress::stream::{Body, Item, RankView};
use cairn_model::{event_flags, CallClass, Event, Layer};
use cairn_trace::{FileInfo, Process, Stream, Trace};

use crate::ReplayError;

/// The recorded rank replayed rank `rank` of `ranks` takes as its model, of `recorded`.
pub(crate) fn model(rank: u32, ranks: u32, recorded: u32) -> u32 {
    let last = recorded.saturating_sub(1);
    if rank == 0 {
        0
    } else if rank + 1 == ranks {
        last
    } else {
        rank.min(last.saturating_sub(1)).max(1).min(last)
    }
}

/// How the events of a scaled trace's streams are adjusted where the stored slopes do not
/// say it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scaling {
    pub(crate) recorded: u32,
    pub(crate) ranks: u32,
}

impl Scaling {
    /// Adjusts an event of `stream` (of a scaled trace) that the slopes could not: peers of
    /// a stream of its own, the size of a collective open's communicator.
    pub(crate) fn adjust(&self, trace: &Trace, stream: &Stream, event: &mut Event) {
        let Some(view) = stream.scaled else {
            return;
        };
        let info = &trace.calls[event.call as usize];
        let (recorded, ranks) = (self.recorded as i64, self.ranks as i64);
        if info.layer() == Some(Layer::MpiIo) && info.name == "MPI_File_open" {
            if (event.aux >> 32) as i64 == recorded {
                event.aux = (event.aux & 0xffff_ffff) | ((ranks as u64) << 32);
            }
            return;
        }
        let no_slopes = stream.members == 1 || event.flags & event_flags::FROM_ONE_RANK != 0;
        if !no_slopes
            || info.layer() != Some(Layer::Mpi)
            || info.class() != Some(CallClass::PointToPoint)
        {
            return;
        }
        let peer = event.aux as u32 as i32 as i64;
        if peer < 0 {
            return; // MPI_ANY_SOURCE, MPI_PROC_NULL
        }
        let rank = trace.processes[stream.process as usize].rank.unwrap_or(0) as i64;
        let model = rank - (view.delta - view.member_delta);
        let moved = self.peer(model, rank, peer);
        event.aux = (event.aux & !0xffff_ffff) | moved as u32 as u64;
    }

    /// The peer of replayed `rank` whose model rank `model` had `peer`.
    fn peer(&self, model: i64, rank: i64, peer: i64) -> i64 {
        let (recorded, ranks) = (self.recorded as i64, self.ranks as i64);
        let last = recorded - 1;
        if peer == model {
            rank
        } else if model == 0 {
            if peer == last && last > 1 {
                ranks - 1
            } else {
                peer
            }
        } else if model == last {
            if peer == 0 {
                0
            } else {
                (peer + ranks - recorded).rem_euclid(ranks)
            }
        } else if peer == 0 && (model - peer).abs() > 1 {
            0
        } else {
            (peer + rank - model).rem_euclid(ranks)
        }
    }
}

impl Scaling {
    /// Refuses, before anything is replayed, a scaled trace whose messages would not pair
    /// up: a partner outside the new job, or sends from a rank to another that the other
    /// does not receive as often (a pattern the recorded job size made look like another:
    /// on 4 ranks `rank XOR 2` is also `rank + 2 mod 4`, which does not pair on 6). The
    /// check expands every rank's stream (run once, on rank 0); receives from any source
    /// or matched probes make it unable to say, and it lets those through.
    pub(crate) fn check_messages(&self, trace: &Trace, seed: u64) -> Result<(), ReplayError> {
        let ranks = self.ranks as i64;
        let mut pairs: HashMap<(i64, i64), i64> = HashMap::new();
        let mut unsure = false;
        let mut outside = None;
        for stream in &trace.streams {
            let Some(rank) = trace.processes[stream.process as usize].rank else {
                continue;
            };
            let rank = rank as i64;
            for mut event in trace.events_seeded(stream, seed) {
                self.adjust(trace, stream, &mut event);
                let info = &trace.calls[event.call as usize];
                if info.layer() != Some(Layer::Mpi)
                    || info.class() != Some(CallClass::PointToPoint)
                    || crate::left_to_libraries(&event)
                {
                    continue;
                }
                let peer = event.aux as u32 as i32 as i64;
                let name = info.name.as_str();
                let receive = matches!(
                    name,
                    "MPI_Recv"
                        | "MPI_Irecv"
                        | "MPI_Start_recv"
                        | "MPI_Sendrecv_received"
                        | "MPI_Sendrecv_replace_received"
                );
                if peer >= ranks {
                    outside = Some((rank, name.to_string(), peer));
                    break;
                }
                if crate::mpi::sends(name) {
                    if peer >= 0 {
                        *pairs.entry((rank, peer)).or_default() += 1;
                    }
                } else if receive {
                    if peer >= 0 {
                        *pairs.entry((peer, rank)).or_default() -= 1;
                    } else {
                        unsure = true; // any source
                    }
                } else {
                    unsure |= name.contains("probe") || name.contains("Probe");
                }
            }
            if let Some((rank, call, peer)) = outside {
                let named = if peer == i32::MAX as i64 {
                    "a rank below 0".to_string()
                } else {
                    format!("rank {peer}")
                };
                return Err(ReplayError::Mpi(format!(
                    "--scale-ranks: rank {rank} would name {named} in {call}, outside the {ranks} ranks: the trace's partners do not follow the rank in a way that scales"
                )));
            }
        }
        if unsure {
            return Ok(());
        }
        let mut unpaired: Vec<_> = pairs.into_iter().filter(|(_, left)| *left != 0).collect();
        unpaired.sort();
        match unpaired.first() {
            Some(((from, to), left)) => Err(ReplayError::Mpi(format!(
                "--scale-ranks: on {ranks} ranks, rank {from} would send rank {to} {} messages it does not receive ({} such pairs): the recorded partners of {} ranks do not say how they extend",
                left,
                unpaired.len(),
                self.recorded
            ))),
            None => Ok(()),
        }
    }
}

/// What a scaled trace is made of, for the report.
#[derive(Debug, Default)]
pub(crate) struct Scaled {
    pub(crate) trace: Trace,
    /// Files a replayed rank names as its model did, for want of a template.
    pub(crate) names_kept: u64,
}

/// `trace` (of `recorded` ranks) as `ranks` ranks would have made it.
pub(crate) fn scaled(trace: &Trace, recorded: u32, ranks: u32) -> Result<Scaled, ReplayError> {
    refuse_what_cannot_scale(trace, recorded, ranks)?;
    let mut scaled = trace.clone();
    scaled.processes.clear();
    scaled.streams.clear();
    // Processes without a rank stay as they are; each rank's are its model's.
    let mut index_of: HashMap<(u32, u32), u32> = HashMap::new();
    let mut copies: Vec<(u32, Option<u32>)> = Vec::new();
    for (index, process) in trace.processes.iter().enumerate() {
        if process.rank.is_none() {
            index_of.insert((index as u32, u32::MAX), scaled.processes.len() as u32);
            copies.push((index as u32, None));
            scaled.processes.push(process.clone());
        }
    }
    for rank in 0..ranks {
        let model = model(rank, ranks, recorded);
        for (index, process) in trace.processes.iter().enumerate() {
            if process.rank == Some(model) {
                index_of.insert((index as u32, rank), scaled.processes.len() as u32);
                copies.push((index as u32, Some(rank)));
                scaled.processes.push(Process {
                    rank: Some(rank),
                    ..process.clone()
                });
            }
        }
    }
    // A copy's parent and exec predecessor are the same rank's copies.
    for (new, (old, rank)) in copies.iter().enumerate() {
        let key = |index: u32| {
            index_of
                .get(&(index, rank.unwrap_or(u32::MAX)))
                .or_else(|| index_of.get(&(index, u32::MAX)))
                .copied()
        };
        let process = &trace.processes[*old as usize];
        scaled.processes[new].parent = process.parent.and_then(key);
        scaled.processes[new].exec_of = process.exec_of.and_then(key);
    }
    let own_files = RankFiles::of(trace);
    let mut takers = vec![0u32; recorded as usize];
    for rank in 0..ranks {
        takers[model(rank, ranks, recorded) as usize] += 1;
    }
    let mut names: HashMap<Vec<u8>, u32> = trace
        .files
        .iter()
        .enumerate()
        .map(|(index, file)| (file.path.clone(), index as u32))
        .collect();
    let mut names_kept = 0;
    for (new, (old, rank)) in copies.iter().enumerate() {
        for stream in trace.streams.iter().filter(|s| s.process == *old) {
            let Some(rank) = rank else {
                scaled.streams.push(Stream {
                    process: new as u32,
                    ..stream.clone()
                });
                continue;
            };
            let model = trace.processes[*old as usize].rank.unwrap_or(0);
            let delta = stream.rank_delta + *rank as i64 - model as i64;
            let view = RankView {
                delta,
                member_delta: stream.rank_delta,
                sizes: Some((recorded as i64, ranks as i64)),
                ..RankView::of(delta)
            };
            let mut files = stream.files.clone();
            if *rank != model {
                for file in files.iter_mut() {
                    let Some(path) = own_files.named_for(trace, model, *file, *rank) else {
                        // A file of the model's own that no other rank names alike: the
                        // ranks taking after it share it.
                        if takers[model as usize] > 1 && !own_files.shared(model, *file) {
                            names_kept += 1;
                        }
                        continue;
                    };
                    let noise = trace.files[*file as usize].noise;
                    *file = *names.entry(path.clone()).or_insert_with(|| {
                        scaled.files.push(FileInfo { path, noise });
                        scaled.files.len() as u32 - 1
                    });
                }
            }
            scaled.streams.push(Stream {
                process: new as u32,
                count: stream.events.count_for_view(view),
                rank_delta: delta,
                files,
                scaled: Some(view),
                events: Arc::clone(&stream.events),
                ..stream.clone()
            });
        }
    }
    Ok(Scaled {
        trace: scaled,
        names_kept,
    })
}

/// The files each recorded rank's streams name.
struct RankFiles {
    files: HashMap<u32, Vec<u32>>,
}

impl RankFiles {
    fn of(trace: &Trace) -> RankFiles {
        let mut files: HashMap<u32, Vec<u32>> = HashMap::new();
        for stream in &trace.streams {
            if let Some(rank) = trace.processes[stream.process as usize].rank {
                let mine = files.entry(rank).or_default();
                mine.extend(&stream.files);
                mine.sort_unstable();
                mine.dedup();
            }
        }
        RankFiles { files }
    }

    /// Whether another rank than `model` names `file` too (a shared file).
    fn shared(&self, model: u32, file: u32) -> bool {
        self.files
            .iter()
            .any(|(rank, files)| *rank != model && files.binary_search(&file).is_ok())
    }

    /// The name replayed `rank` gives the file its `model` names `file`: `None` for a file
    /// ranks share, or one without a numbered name that a rank near the model names
    /// alike (`testFile.00000003` of rank 3 and `testFile.00000002` of rank 2).
    fn named_for(&self, trace: &Trace, model: u32, file: u32, rank: u32) -> Option<Vec<u8>> {
        if self.shared(model, file) {
            return None;
        }
        let mine = &trace.files[file as usize].path;
        let near = (1..=4i64).flat_map(|d| [model as i64 - d, model as i64 + d]);
        near.filter_map(|other| u32::try_from(other).ok())
            .filter_map(|other| Some((other, self.files.get(&other)?)))
            .find_map(|(other, files)| {
                files.iter().find_map(|theirs| {
                    filled(
                        mine,
                        model as i64,
                        &trace.files[*theirs as usize].path,
                        other as i64,
                        rank as i64,
                    )
                })
            })
    }
}

/// The name rank `rank` gives a file that rank `a_rank` names `a` and rank `b_rank` names
/// `b`: the one run of digits where they differ, moved in proportion (`out.00002`,
/// `out.00003` → rank 12: `out.00012`); `None` when the names differ otherwise.
pub(crate) fn filled(a: &[u8], a_rank: i64, b: &[u8], b_rank: i64, rank: i64) -> Option<Vec<u8>> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    // The differing digits, widened to the whole number around them.
    let mut start = prefix;
    while start > 0 && a[start - 1].is_ascii_digit() {
        start -= 1;
    }
    let (mut a_end, mut b_end) = (a.len() - suffix, b.len() - suffix);
    while a_end < a.len() && a[a_end].is_ascii_digit() {
        a_end += 1;
        b_end += 1;
    }
    let (a_digits, b_digits) = (&a[start..a_end], &b[start..b_end]);
    let number = |digits: &[u8]| -> Option<i64> {
        if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    };
    let (x, y) = (number(a_digits)?, number(b_digits)?);
    let ranks_apart = b_rank - a_rank;
    if ranks_apart == 0 || (y - x) % ranks_apart != 0 {
        return None;
    }
    let value = x + (y - x) / ranks_apart * (rank - a_rank);
    if value < 0 {
        return None;
    }
    let width = if a_digits.len() > 1 && a_digits[0] == b'0' {
        a_digits.len()
    } else {
        0
    };
    let mut name = a[..start].to_vec();
    name.extend_from_slice(format!("{value:0width$}").as_bytes());
    name.extend_from_slice(&a[a_end..]);
    Some(name)
}

/// The reason a trace cannot be replayed on `ranks` ranks, if there is one.
fn refuse_what_cannot_scale(trace: &Trace, recorded: u32, ranks: u32) -> Result<(), ReplayError> {
    let mut walked = std::collections::HashSet::new();
    for stream in &trace.streams {
        if stream.members > 1 && walked.insert(Arc::as_ptr(&stream.events)) {
            let base = stream.events.sharing().base_rank;
            one_dimensional(
                trace,
                stream.events.nodes_for_rank(0),
                base,
                recorded as i64,
            )?;
        }
        for slopes in stream.events.parameters() {
            if slopes.peer_row_width > 0 {
                return Err(ReplayError::Mpi(format!(
                    "--scale-ranks: peers follow the rows of a process grid {} ranks wide, which would change with the rank count",
                    slopes.peer_row_width
                )));
            }
            if slopes.peer_xor && !ranks.is_power_of_two() {
                return Err(ReplayError::Mpi(format!(
                    "--scale-ranks: partners are rank XOR 2^k (recursive doubling): {ranks} is not a power of two"
                )));
            }
        }
    }
    // Checked last: a 2-wide grid's east and south neighbours are rank XOR 1 and 2 too,
    // and what is said of its parts above is the better reason.
    if ranks != recorded
        && trace
            .streams
            .iter()
            .any(|stream| stream.events.has_doubling_peers())
    {
        return Err(ReplayError::Mpi(format!(
            "--scale-ranks: partners double (or halve) round after round (rank XOR 1, 2, 4…: recursive doubling), and how many rounds follows the rank count: a trace of {recorded} ranks does not say how {ranks} run"
        )));
    }
    Ok(())
}

/// Whether a body holds point-to-point calls the replay issues (not an MPI library's own).
fn sends_or_receives(trace: &Trace, body: Body) -> bool {
    body.iter().any(|item| match item {
        Item::Leaf(leaf) => {
            !crate::made_by_libraries(leaf.key.flags)
                && trace
                    .calls
                    .get(leaf.key.call as usize)
                    .is_some_and(|info| info.class() == Some(CallClass::PointToPoint))
        }
        Item::Loop { body, .. } => sends_or_receives(trace, body),
    })
}

/// Whether the parts only some ranks have that send or receive are those a
/// one-dimensional decomposition has: the first rank, the last, the interior ones, all but
/// the first or the last. Anything else (every other rank, a row of a grid) depends on a
/// shape the trace does not keep.
fn one_dimensional(
    trace: &Trace,
    body: Body,
    first: i64,
    recorded: i64,
) -> Result<(), ReplayError> {
    for item in body.iter() {
        let Item::Loop { body, ranks, .. } = item else {
            continue;
        };
        let first = match ranks {
            None => first,
            Some(set) => {
                let low = first + set.first();
                let high = low + set.len() as i64 - 1;
                let interval = (0..set.len() as i64).all(|k| set.contains(set.first() + k));
                let edge = |rank: i64| rank == 0 || rank == recorded - 1;
                let spans_interior = low <= 1 && high >= recorded - 2;
                let scales = interval && (spans_interior || (low == high && edge(low)));
                // Only messages depend on the place in a grid. Parts of other calls that
                // look strided are the aggregators of a collective write (the library's:
                // it picks its own on the new job) or per-rank file numbering (each rank
                // then takes its model's calls on its own files).
                if !scales && sends_or_receives(trace, body) {
                    return Err(ReplayError::Mpi(format!(
                        "--scale-ranks: a part of the trace ({}): its place in a {recorded}-rank job does not say where it would be in another (only the first, the last and the interior ranks of a one-dimensional decomposition scale)",
                        set.describe(first)
                    )));
                }
                low
            }
        };
        one_dimensional(trace, body, first, recorded)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_recorded_template() {
        let fill = |a: &str, ar, b: &str, br, r| {
            filled(a.as_bytes(), ar, b.as_bytes(), br, r).map(|n| String::from_utf8(n).unwrap())
        };
        assert_eq!(
            fill("/d/out.00002", 2, "/d/out.00003", 3, 12).as_deref(),
            Some("/d/out.00012")
        );
        assert_eq!(
            fill("/d/f9.dat", 9, "/d/f10.dat", 10, 11).as_deref(),
            Some("/d/f11.dat")
        );
        assert_eq!(
            fill("/d/r2/x", 1, "/d/r4/x", 2, 7).as_deref(),
            Some("/d/r14/x")
        );
        assert_eq!(fill("/d/a.1", 1, "/d/b.2", 2, 5), None);
        assert_eq!(
            fill("/d/x.3", 1, "/d/x.4", 3, 5),
            None,
            "no whole step per rank"
        );
    }

    #[test]
    fn models_keep_the_edges() {
        let of = |r| model(r, 10, 4);
        assert_eq!(
            (0..10).map(of).collect::<Vec<_>>(),
            [0, 1, 2, 2, 2, 2, 2, 2, 2, 3]
        );
        assert_eq!(
            (0..3).map(|r| model(r, 3, 8)).collect::<Vec<_>>(),
            [0, 1, 7]
        );
        assert_eq!(
            (0..3).map(|r| model(r, 3, 2)).collect::<Vec<_>>(),
            [0, 1, 1]
        );
    }

    #[test]
    fn own_streams_keep_their_neighbours() {
        let s = Scaling {
            recorded: 4,
            ranks: 8,
        };
        // Rank 0 (model 0) of a ring: right 1, left the last.
        assert_eq!((s.peer(0, 0, 1), s.peer(0, 0, 3)), (1, 7));
        // The last rank: its left neighbour, rank 0 (the root, or the ring's wrap).
        assert_eq!((s.peer(3, 7, 2), s.peer(3, 7, 0)), (6, 0));
        // An interior rank: neighbours at the same distance, the root stays.
        assert_eq!((s.peer(2, 5, 1), s.peer(2, 5, 3)), (4, 6));
        assert_eq!(s.peer(2, 5, 0), 0);
    }
}

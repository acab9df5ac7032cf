//! `dump`'s folded view of a stream: loops with their counts, leaves with how many events
//! they stand for, and the parts only some ranks of a shared stream have under their ranks.
//!
//! Files are named by position in a stream (the file bound to a descriptor, the rank's next
//! new file...), so naming them takes walking the stream with a rank's relative state. In a
//! stream ranks share, a part the shown rank is not in is shown as the part's first rank
//! has it: from that rank's own view of the stream (its loop counts, its values) and with
//! that rank's state, which its own walk brought there through everything it did before —
//! not the shown rank's (with it, rank 1's `open` of the shared file named nothing, as
//! rank 1 had not touched it, and its collective write named rank 0's own file). So the
//! walk goes in step over the shown rank and the first rank of every part ([`Walker`]).

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;

use cairn_compress::fold::Leaf;
use cairn_compress::stream::{
    Body, EventKey, Item, OffsetRef, Relative, BLURRED_CAPACITY, BLURRED_PEER, BLURRED_RESULT,
    BLURRED_SIZE, BLURRED_TAG, COLUMN_HOLDS_CAPACITY, COLUMN_HOLDS_RESULT, SIZE_IN_COLUMN,
    TAG_STEP,
};
use cairn_model::event_flags;
use cairn_trace::symbols::Symbolizer;
use cairn_trace::{Stream, Trace};

use super::{call_arguments, mpi_note, printable_bytes};

/// Leaves [`advance`] decodes after one loop for the shown rank, at most: a dump of ten
/// million folded events stays within a second; past it, files named after that loop may
/// be its first iteration's. Each other walker gets a [`MOST_WALKERS`]th of it, so all of
/// them together take at most twice as long.
const ADVANCE_BUDGET: u64 = 10_000_000;

/// Ranks walked besides the shown one, at most: the first ranks of that many parts (a
/// stream with more parts shows the others with the shown rank's files).
const MOST_WALKERS: usize = 64;

/// One rank of a shared stream walked for the folded view: its own view of the events and
/// the relative state its walk has reached.
struct Walker<'t> {
    stream: &'t Stream,
    relative: Relative,
}

impl<'t> Walker<'t> {
    fn of(stream: &'t Stream) -> Walker<'t> {
        let mut relative = Relative::default();
        relative.set_rank(stream.events.rank_for(stream.view().delta));
        Walker { stream, relative }
    }
}

/// Prints `stream`'s folded events, each part as its first rank has it (or the shown rank,
/// when it is in the part).
pub(super) fn show(
    trace: &Trace,
    stream: &Stream,
    symbols: &mut Symbolizer,
    all: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut firsts = BTreeSet::new();
    part_firsts(stream.nodes(), 0, &mut firsts);
    let mut walkers = vec![Walker::of(stream)];
    for delta in firsts
        .into_iter()
        .filter(|delta| *delta != stream.rank_delta)
    {
        let member = trace.streams.iter().find(|member| {
            Arc::ptr_eq(&member.events, &stream.events) && member.rank_delta == delta
        });
        if let Some(member) = member {
            walkers.push(Walker::of(member));
        }
    }
    let bodies: Vec<(usize, Body)> = walkers
        .iter()
        .enumerate()
        .map(|(index, walker)| (index, walker.stream.nodes()))
        .collect();
    let view = View {
        trace,
        top: stream,
        all,
    };
    let sharers = stream.members as u64;
    view.structure(symbols, &mut walkers, &bodies, (0, 0), 1, sharers, out)
}

/// The first rank (as a distance from the stream's base rank) of every part in `body`,
/// whose enclosing part starts at `first` (a nested part's ranks are stored from it).
fn part_firsts(body: Body, first: i64, found: &mut BTreeSet<i64>) {
    for item in body.iter() {
        if let Item::Loop { body, ranks, .. } = item {
            let inner = first + ranks.map_or(0, |set| set.first());
            if ranks.is_some() && found.len() < MOST_WALKERS {
                found.insert(inner);
            }
            part_firsts(body, inner, found);
        }
    }
}

/// Moves `relative` past `iterations` more runs of `body` (a rank's own view of it: a part
/// it is not in counts 0), as a walk of every event does.
fn advance(trace: &Trace, body: Body, iterations: u64, relative: &mut Relative, budget: &mut u64) {
    for _ in 0..iterations {
        for item in body.iter() {
            match item {
                Item::Leaf(leaf) => {
                    if *budget == 0 {
                        return;
                    }
                    *budget -= 1;
                    relative.decode(&leaf.key, trace.class_of(leaf.key.call));
                }
                Item::Loop { count, body, .. } => advance(trace, body, count, relative, budget),
            }
        }
        if *budget == 0 {
            return;
        }
    }
}

struct View<'t> {
    trace: &'t Trace,
    /// The stream shown: its base rank names the parts' ranks.
    top: &'t Stream,
    all: bool,
}

impl View<'_> {
    /// Prints the folded structure of `bodies` — one body as each walker there sees it
    /// (walker index, its view) — as the `shown`th of them has it: loops with their counts,
    /// leaves with how many events they stand for (per rank of the `sharers` that share
    /// their statistics) and their mean duration, parts only some ranks have under their
    /// ranks (`first`: the enclosing part's first rank, from which a part's set is stored).
    /// A loop's body shows its files as its first iteration resolved them; what follows the
    /// loop, as they were after its last.
    #[allow(clippy::too_many_arguments)]
    fn structure(
        &self,
        symbols: &mut Symbolizer,
        walkers: &mut [Walker],
        bodies: &[(usize, Body)],
        (shown, first): (usize, i64),
        depth: usize,
        sharers: u64,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let trace = self.trace;
        let indent = "  ".repeat(depth);
        let mut items: Vec<_> = bodies.iter().map(|(_, body)| body.iter()).collect();
        loop {
            // The walkers' items at this position: one node, each as its rank has it.
            let here: Vec<Option<Item>> = items.iter_mut().map(Iterator::next).collect();
            match &here[shown] {
                None => return Ok(()),
                Some(Item::Leaf(leaf)) => {
                    let mut file_plus_one = 0;
                    for (position, item) in here.iter().enumerate() {
                        if let Some(Item::Leaf(leaf)) = item {
                            let class = trace.class_of(leaf.key.call);
                            let walker = &mut walkers[bodies[position].0];
                            let (decoded, _, _) = walker.relative.decode(&leaf.key, class);
                            if position == shown {
                                file_plus_one = decoded;
                            }
                        }
                    }
                    let stream = walkers[bodies[shown].0].stream;
                    self.leaf(symbols, stream, leaf, file_plus_one, &indent, sharers, out)?;
                }
                Some(Item::Loop {
                    count,
                    body,
                    ranks,
                    counts,
                    own,
                }) => {
                    // Who walks the body: a part's members (their views run it once), a
                    // loop's every walker here.
                    let mut inner: Vec<(usize, Body)> = Vec::new();
                    let mut inner_shown = None;
                    for (position, item) in here.iter().enumerate() {
                        if let Some(Item::Loop { count, body, .. }) = item {
                            if *count > 0 || (ranks.is_none() && position == shown) {
                                if position == shown {
                                    inner_shown = Some(inner.len());
                                }
                                inner.push((bodies[position].0, *body));
                            }
                        }
                    }
                    let inner_first = first + ranks.map_or(0, |set| set.first());
                    // A part the shown rank is not in: its first rank shows it.
                    let inner_shown = inner_shown.or_else(|| {
                        inner.iter().position(|(walker, _)| {
                            walkers[*walker].stream.rank_delta == inner_first
                        })
                    });
                    let sharers = ranks.map_or(sharers, |set| set.len());
                    // A loop whose events are all hidden (runtime noise) is not shown at all.
                    let mut inside = Vec::new();
                    if let Some(inner_shown) = inner_shown {
                        let at = (inner_shown, inner_first);
                        self.structure(
                            symbols,
                            walkers,
                            &inner,
                            at,
                            depth + 1,
                            sharers,
                            &mut inside,
                        )?;
                    } else {
                        // No walker is in the part (a stream of more than MOST_WALKERS
                        // parts): shown with the shown rank's files, its state unmoved.
                        let walker = &walkers[bodies[shown].0];
                        let mut alone = [Walker {
                            stream: walker.stream,
                            relative: walker.relative.clone(),
                        }];
                        let at = (0, inner_first);
                        let body = [(0, *body)];
                        self.structure(
                            symbols,
                            &mut alone,
                            &body,
                            at,
                            depth + 1,
                            sharers,
                            &mut inside,
                        )?;
                    }
                    // The body is shown once; what follows the loop names its files as they
                    // were after its last iteration (a rename after a loop of renames, the
                    // write after a loop of opens), so the other iterations move each
                    // walker's state on, by its own count.
                    if ranks.is_none() {
                        for (position, item) in here.iter().enumerate() {
                            if let Some(Item::Loop { count, body, .. }) = item {
                                let walker = &mut walkers[bodies[position].0];
                                let more = count.saturating_sub(1);
                                let mut budget = match position == shown {
                                    true => ADVANCE_BUDGET,
                                    false => ADVANCE_BUDGET / MOST_WALKERS as u64,
                                };
                                advance(trace, *body, more, &mut walker.relative, &mut budget);
                            }
                        }
                    }
                    if inside.is_empty() {
                        continue;
                    }
                    if let Some(set) = ranks {
                        let top = self.top;
                        let base = trace.processes[top.process as usize]
                            .rank
                            .map_or(0, |rank| rank as i64 - top.rank_delta)
                            + first;
                        writeln!(out, "{indent}{} {{", set.describe(base))?;
                    } else if let Some(counts) = counts {
                        // Counts that differ (a precision level below 100): their range,
                        // how many occurrences, and their exact sum (and each rank's, kept
                        // where the loop accesses files).
                        writeln!(
                            out,
                            "{indent}loop ×{}..{} {{  [histogram: {} occurrences, {} iterations in {} bins{}]",
                            counts.min,
                            counts.max,
                            counts.count,
                            counts.sum,
                            counts.bins().len(),
                            if own.is_some() {
                                "; each rank's iterations exact"
                            } else {
                                ""
                            }
                        )?;
                    } else {
                        writeln!(out, "{indent}loop ×{count} {{")?;
                    }
                    out.write_all(&inside)?;
                    writeln!(out, "{indent}}}")?;
                }
            }
        }
    }

    /// One leaf's line: the call, its file (`file_plus_one` in `stream`'s table), its
    /// values, how many events it stands for, mean duration and calling context.
    #[allow(clippy::too_many_arguments)]
    fn leaf(
        &self,
        symbols: &mut Symbolizer,
        stream: &Stream,
        leaf: &Leaf<EventKey>,
        file_plus_one: u64,
        indent: &str,
        sharers: u64,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let trace = self.trace;
        let key = &leaf.key;
        let tag_step = key.flags & TAG_STEP != 0;
        let file = stream
            .file(file_plus_one)
            .and_then(|file| trace.files.get(file as usize));
        if !self.all
            && (file.is_some_and(|file| file.noise.is_some())
                || key.flags & event_flags::RUNTIME != 0)
        {
            return Ok(());
        }
        let path = file.map_or("?".into(), |file| printable_bytes(&file.path));
        let blurred_size = leaf
            .blurred
            .as_deref()
            .and_then(|blurred| blurred.size.as_ref())
            .filter(|_| key.flags & BLURRED_SIZE != 0)
            .map(|sizes| format!("~{}", sizes.mean().round() as i64));
        let offset_note = match key.offset {
            OffsetRef::Unknown => String::new(),
            OffsetRef::Delta(0) => " at +0".to_string(),
            OffsetRef::Delta(delta) => format!(" at {delta:+}"),
            OffsetRef::First(offset) => format!(" @{offset}"),
            OffsetRef::OwnDelta(delta) => format!(" at {delta:+} after its last"),
            OffsetRef::Column => " at irregular offsets".to_string(),
            OffsetRef::Blurred => " at blurred offsets".to_string(),
        };
        writeln!(
            out,
            "{indent}{}({}{offset_note}{}) = {}{}  ×{}  mean {:.3} µs  ctx @{}{}{}",
            trace.calls[key.call as usize].name,
            call_arguments(
                trace.class_of(key.call),
                &path,
                file.is_some(),
                key,
                blurred_size.as_deref()
            ),
            mpi_note(
                trace.class_of(key.call),
                key.aux,
                key.flags,
                tag_step,
                key.flags & (BLURRED_PEER | BLURRED_TAG)
            ),
            if key.flags & event_flags::RESULT_AT_POSITION != 0 {
                "the offset".to_string()
            } else if let Some(about) = &blurred_size {
                // A histogram's results, or a result relative to a histogram's
                // size; a receive that got nothing got 0.
                match key.result {
                    _ if key.flags & BLURRED_CAPACITY != 0 => "0".to_string(),
                    _ if key.flags & BLURRED_RESULT != 0 => about.clone(),
                    0 => about.clone(),
                    less => format!("{about} {less:+}"),
                }
            } else if key.flags & SIZE_IN_COLUMN != 0 {
                // The result is relative to each call's own size; a posted receive's is
                // its own (0), a completion's each one's own.
                match (key.request, key.result) {
                    (COLUMN_HOLDS_CAPACITY, result) => result.to_string(),
                    (COLUMN_HOLDS_RESULT, _) => "its own".to_string(),
                    (_, 0) => "its size".to_string(),
                    (_, less) => format!("its size {less:+}"),
                }
            } else if let Some(id) = made_hdf5_id(trace, key) {
                format!("id {id}")
            } else {
                key.result().to_string()
            },
            if key.failed() {
                format!(" errno {}", key.errno)
            } else {
                String::new()
            },
            leaf.occurrences() / sharers.max(1),
            leaf.duration.mean / 1e3,
            key.context,
            symbols
                .frames(key.context)
                .first()
                .map_or(String::new(), |frame| format!(" in {}", frame.function)),
            blur_note(leaf)
        )?;
        Ok(())
    }
}

/// The number of the HDF5 object a create or open made (its result, numbered per process:
/// `cairn_trace::collect::MADE_HDF5_ID`), shown as that rather than as the tagged value.
fn made_hdf5_id(trace: &Trace, key: &EventKey) -> Option<i64> {
    use cairn_trace::collect::{MADE_HDF5_ID, NUMBERED_HANDLE};
    let result = key.result();
    let tags = NUMBERED_HANDLE | MADE_HDF5_ID;
    let layer = trace.calls[key.call as usize].layer();
    (layer == Some(cairn_model::Layer::Hdf5) && result >= 0 && result as u64 & tags == tags)
        .then_some(result & 0xFFFF_FFFF)
}

/// What a precision level below 100 kept of a leaf's values as histograms: their range,
/// count and bins (the line shows such a size as `~` its mean, such a peer or tag as `~`).
fn blur_note(leaf: &Leaf<EventKey>) -> String {
    if let Some(sizes) = leaf.column_sizes.as_deref() {
        return format!(
            "  [sizes exact, in the column: {}..{}, sum {}]",
            sizes.min, sizes.max, sizes.sum
        );
    }
    let Some(blurred) = leaf.blurred.as_deref() else {
        return String::new();
    };
    let mut parts = Vec::new();
    // Peers relative to the rank, when ranks share the leaf, as readers draw them.
    let relative = blurred
        .peers_seen_relative
        .as_ref()
        .map(|seen| (seen, blurred.peer_relative.as_ref()));
    for (name, histogram) in [
        ("sizes", &blurred.size),
        ("offsets", &blurred.offset),
        ("peers", &blurred.peer),
        ("peers − rank", &blurred.peer_relative),
        ("tags", &blurred.tag),
    ] {
        if let Some(histogram) = histogram {
            parts.push(format!(
                "{name} {}..{} in {} bins (sum {})",
                histogram.min,
                histogram.max,
                histogram.bins().len(),
                histogram.sum
            ));
        }
    }
    if let Some((seen, Some(_))) = relative {
        let seen: Vec<String> = seen.iter().take(8).map(|peer| peer.to_string()).collect();
        parts.push(format!("relative peers seen {}", seen.join(",")));
    }
    format!("  [histogram: {}]", parts.join("; "))
}

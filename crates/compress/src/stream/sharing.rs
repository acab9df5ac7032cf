//! What a stream several ranks share keeps besides its nodes: how a leaf's values change
//! with the rank ([`RankSlopes`]) and which ranks have a part only some of them have
//! ([`RankSet`]), so that walking the stream for any member rank gives back its own values.

use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::Result;

use super::{EventKey, FileRef, OffsetRef};
use crate::fold::Leaf;

/// How one rank walks a stream: its distance from the stream's base rank, and, for a replay
/// on another rank count (`cairn replay --scale-ranks`), which recorded member's parts it
/// takes and the job sizes a peer wrapping modulo the job size is moved between.
///
/// A rank of the bigger (or smaller) job takes the parts only some ranks have as a
/// recorded rank in the same place has them (the first, an interior one, the last:
/// `member_delta`), and every value that changes with the rank (peers, offsets, loop counts)
/// from the stored slopes at its own distance (`delta`): a ring's partner, a block per rank,
/// a halo neighbour extend to any size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankView {
    pub delta: i64,
    /// The distance whose membership of rank sets the walk takes (`delta` but in a scaled
    /// replay).
    pub member_delta: i64,
    /// (recorded job size, replayed job size): a peer modulo the first is taken modulo
    /// the second.
    pub sizes: Option<(i64, i64)>,
    /// This member's index among the `members` sharing the stream (0 of 1 for a stream of
    /// its own): a loop's count histogram holds every member's occurrences, and each
    /// member draws its counts from its own even slice of them, so the members' iterations
    /// add up to the recorded total.
    pub member: u32,
    pub members: u32,
}

impl RankView {
    /// The recorded rank `delta` from the base rank, as recorded.
    pub fn of(delta: i64) -> RankView {
        RankView {
            delta,
            member_delta: delta,
            sizes: None,
            member: 0,
            members: 1,
        }
    }
}

/// How a leaf's values change with the rank, in a stream several ranks share: rank `r`'s
/// value is the stored one plus `slope · (r − base rank)` (wrapping). Peers (`rank ± 1`),
/// offsets of a block per rank (`rank · block`) and per-rank files are all of this form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RankSlopes {
    pub handle: i64,
    /// Of the file reference's delta.
    pub file: i64,
    /// Of the offset (first offset or delta).
    pub offset: i64,
    pub request: i64,
    pub result: i64,
    pub aux: i64,
    pub offset_low: i64,
    pub offset_high: i64,
    /// When not 0, the peer (aux's low 32 bits, an MPI call's peer rank) wraps modulo this
    /// job size instead of growing past it, and the tag above it stays as stored.
    pub peer_modulus: i64,
    /// The peer is the rank XOR a constant (recursive doubling, butterflies, hypercube
    /// exchanges: `rank ^ 2^k`): the stored peer XOR the part's first rank, XOR the
    /// walked rank; the tag stays as stored.
    pub peer_xor: bool,
    /// When not 0, the peer also moves by `peer_row_slope` per row of a grid this many
    /// ranks wide (rows counted from the part's first rank's): a transpose's partner.
    pub peer_row_width: i64,
    pub peer_row_slope: i64,
}

impl RankSlopes {
    pub const FIELDS: usize = 8;

    pub fn to_array(self) -> [i64; RankSlopes::FIELDS] {
        [
            self.handle,
            self.file,
            self.offset,
            self.request,
            self.result,
            self.aux,
            self.offset_low,
            self.offset_high,
        ]
    }

    pub fn from_array(values: [i64; RankSlopes::FIELDS]) -> RankSlopes {
        let [handle, file, offset, request, result, aux, offset_low, offset_high] = values;
        RankSlopes {
            handle,
            file,
            offset,
            request,
            result,
            aux,
            offset_low,
            offset_high,
            peer_modulus: 0,
            peer_xor: false,
            peer_row_width: 0,
            peer_row_slope: 0,
        }
    }

    /// The leaf's rank-varying values, in [`RankSlopes::to_array`] order.
    pub fn values(leaf: &Leaf<EventKey>) -> [i64; RankSlopes::FIELDS] {
        let key = &leaf.key;
        let file = match key.file {
            FileRef::Delta(delta) => delta,
            _ => 0,
        };
        let offset = match key.offset {
            OffsetRef::First(offset) | OffsetRef::Delta(offset) | OffsetRef::OwnDelta(offset) => {
                offset
            }
            OffsetRef::Unknown | OffsetRef::Column | OffsetRef::Blurred => 0,
        };
        [
            key.handle as i64,
            file,
            offset,
            key.request as i64,
            key.result,
            key.aux as i64,
            leaf.offset_low,
            leaf.offset_high,
        ]
    }

    /// Rank `first + delta`'s leaf from the stored one, which is the rank `first`'s.
    /// In a scaled replay, `sizes` (recorded, replayed) moves a peer modulo the recorded job
    /// size to the replayed one.
    pub fn apply(
        &self,
        leaf: &mut Leaf<EventKey>,
        first: i64,
        delta: i64,
        sizes: Option<(i64, i64)>,
    ) {
        let shift = |value: i64, slope: i64| value.wrapping_add(slope.wrapping_mul(delta));
        let key = &mut leaf.key;
        key.handle = shift(key.handle as i64, self.handle) as u64;
        key.file = match key.file {
            FileRef::Delta(value) => FileRef::Delta(shift(value, self.file)),
            other => other,
        };
        key.offset = match key.offset {
            OffsetRef::First(value) => OffsetRef::First(shift(value, self.offset)),
            OffsetRef::Delta(value) => OffsetRef::Delta(shift(value, self.offset)),
            OffsetRef::OwnDelta(value) => OffsetRef::OwnDelta(shift(value, self.offset)),
            other => other,
        };
        key.request = shift(key.request as i64, self.request) as u64;
        key.result = shift(key.result, self.result);
        key.aux = if self.peer_xor {
            let peer = key.aux as u32 as i64 ^ first ^ first.wrapping_add(delta);
            (key.aux & !0xffff_ffff) | peer as u32 as u64
        } else if self.peer_modulus > 0 {
            let stored = key.aux as u32 as i128;
            let peer = match sizes {
                // On another job size the partner keeps its distance: `slope · rank + d`
                // with d the stored partner's distance, the nearer way round the ring
                // (a left neighbour stored as rank 3 of 4 is −1, rank 7 of 8).
                Some((recorded, replayed)) if recorded == self.peer_modulus => {
                    // Both taken the nearer way round: a slope of −3 on 4 ranks is +1.
                    let nearer = |value: i128, n: i128| {
                        let value = value.rem_euclid(n);
                        if value > n / 2 {
                            value - n
                        } else {
                            value
                        }
                    };
                    let n = recorded as i128;
                    let slope = nearer(self.aux as i128, n);
                    let distance = nearer(stored - slope * first as i128, n);
                    (slope * first.wrapping_add(delta) as i128 + distance)
                        .rem_euclid(replayed as i128)
                }
                _ => (stored + self.aux as i128 * delta as i128)
                    .rem_euclid(self.peer_modulus as i128),
            };
            (key.aux & !0xffff_ffff) | peer as u64
        } else if self.peer_row_width > 0 {
            let rows = first.wrapping_add(delta).div_euclid(self.peer_row_width)
                - first.div_euclid(self.peer_row_width);
            let peer = (key.aux as u32 as i64)
                .wrapping_add(self.aux.wrapping_mul(delta))
                .wrapping_add(self.peer_row_slope.wrapping_mul(rows));
            (key.aux & !0xffff_ffff) | peer as u32 as u64
        } else {
            let aux = shift(key.aux as i64, self.aux) as u64;
            // On another job size a peer the slope takes below rank 0 has no rank there:
            // made plainly out of range (never MPI_ANY_SOURCE or MPI_PROC_NULL, which
            // are negative) for the replay to refuse.
            let went_negative = (aux as u32 as i32) < 0 && (key.aux as u32 as i32) >= 0;
            if sizes.is_some() && self.aux != 0 && went_negative {
                (aux & !0xffff_ffff) | i32::MAX as u32 as u64
            } else {
                aux
            }
        };
        leaf.offset_low = shift(leaf.offset_low, self.offset_low);
        leaf.offset_high = shift(leaf.offset_high, self.offset_high);
    }
}

/// A run of ranks: `first`, then for each level from the innermost, `count` copies of what
/// is inside, `stride` apart. One level is an arithmetic run (`1-7`, `0-56/8`); more are the
/// rows, columns and planes of a process grid (the interior ranks of an 8 × 8 grid: 9-14,
/// six times, 8 apart), so a grid's boundary classes cost a few runs whatever its size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Run {
    first: i64,
    /// Innermost first; never empty. Each level's stride exceeds the extent of the levels
    /// inside it (the runs come from sorted ranks), so a rank's position is unique.
    levels: Vec<(u64, i64)>,
}

impl Run {
    fn single(first: i64) -> Run {
        Run {
            first,
            levels: vec![(1, 0)],
        }
    }

    fn len(&self) -> u64 {
        self.levels
            .iter()
            .fold(1u64, |len, (count, _)| len.saturating_mul(*count))
    }

    /// The distance from `first` to the last rank.
    fn extent(&self) -> i64 {
        self.levels.iter().fold(0i64, |extent, (count, stride)| {
            extent.saturating_add((*count as i64 - 1).saturating_mul(*stride))
        })
    }

    fn contains(&self, delta: i64) -> bool {
        let mut offset = delta.wrapping_sub(self.first);
        for &(count, stride) in self.levels.iter().rev() {
            if stride <= 0 {
                continue;
            }
            let step = offset.div_euclid(stride).min(count as i64 - 1);
            if step < 0 {
                return false;
            }
            offset = offset.wrapping_sub(step.wrapping_mul(stride));
        }
        offset == 0
    }

    fn describe(&self, base: i64) -> String {
        let (count, stride) = self.levels[0];
        let low = base.wrapping_add(self.first);
        let high = low.wrapping_add((count as i64 - 1).wrapping_mul(stride));
        let mut text = match (count, stride) {
            (1, _) => low.to_string(),
            (2, _) => format!("{low},{high}"),
            (_, 1) => format!("{low}-{high}"),
            _ => format!("{low}-{high}/{stride}"),
        };
        for &(count, stride) in &self.levels[1..] {
            text = format!("({text})×{count}/{stride}");
        }
        text
    }
}

/// Ranks, as distances from a shared stream's base rank, in `Run`s: which members have a
/// part of the stream that not all of them have (rank 0 creating a file, every eighth rank
/// aggregating a collective write, the ranks with a west neighbour on a grid). When the
/// members left out take fewer runs (every rank but the aggregators), the runs are those,
/// and the set keeps its lowest member and its size.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RankSet {
    runs: Vec<Run>,
    /// The runs are the members not in the set: (lowest member in it, members in it).
    all_but: Option<(i64, u64)>,
}

impl RankSet {
    /// Largest number of runs a stored set may have (a set of arbitrary ranks is a run each).
    const MAX_RUNS: usize = 1 << 20;
    /// Deepest nesting of a stored run (a grid of more dimensions than anyone uses).
    const MAX_LEVELS: u64 = 16;

    /// The set of `deltas`, which must be strictly increasing.
    pub fn from_sorted(deltas: &[i64]) -> RankSet {
        let mut runs: Vec<Run> = Vec::new();
        for &delta in deltas {
            if let Some(run) = runs.last_mut() {
                let (count, stride) = run.levels[0];
                if count == 1 && delta > run.first {
                    run.levels[0] = (2, delta - run.first);
                    continue;
                }
                if count > 1 && run.first + count as i64 * stride == delta {
                    run.levels[0].0 += 1;
                    continue;
                }
            }
            runs.push(Run::single(delta));
        }
        // Runs of the same shape at a constant distance are one run of one more level.
        let mut level = 1;
        loop {
            let mut nested: Vec<Run> = Vec::with_capacity(runs.len());
            let mut changed = false;
            for run in runs {
                if let Some(last) = nested.last_mut() {
                    if last.levels.len() == level + 1 && last.levels[..level] == run.levels[..] {
                        let (count, stride) = last.levels[level];
                        if last.first + count as i64 * stride == run.first {
                            last.levels[level].0 += 1;
                            continue;
                        }
                    }
                    if last.levels.len() == level
                        && last.levels == run.levels
                        && run.first - last.first > last.extent()
                    {
                        let period = run.first - last.first;
                        last.levels.push((2, period));
                        changed = true;
                        continue;
                    }
                }
                nested.push(run);
            }
            runs = nested;
            if !changed {
                break;
            }
            level += 1;
        }
        RankSet {
            runs,
            all_but: None,
        }
    }

    /// The set of `deltas` among `members` (both strictly increasing; `deltas` a non-empty
    /// subset), by whichever of it and the members left out is shorter.
    pub fn among(members: &[i64], deltas: &[i64]) -> RankSet {
        let listed = RankSet::from_sorted(deltas);
        let mut inside = deltas.iter().peekable();
        let left_out: Vec<i64> = members
            .iter()
            .copied()
            .filter(|member| inside.next_if_eq(&member).is_none())
            .collect();
        let mut complement = RankSet::from_sorted(&left_out);
        if complement.cost() < listed.cost() {
            complement.all_but = Some((deltas[0], deltas.len() as u64));
            return complement;
        }
        listed
    }

    /// What the set costs to store, in numbers.
    fn cost(&self) -> usize {
        self.runs.iter().map(|run| 1 + run.levels.len()).sum()
    }

    /// Whether the member `delta` away from the base rank is in the set (for a rank that
    /// is not a member, the answer means nothing).
    pub fn contains(&self, delta: i64) -> bool {
        let listed = self.runs.iter().any(|run| run.contains(delta));
        listed != self.all_but.is_some()
    }

    /// The lowest member: the values of the part are stored as this rank has them.
    pub fn first(&self) -> i64 {
        match self.all_but {
            Some((first, _)) => first,
            None => self.runs.first().map_or(0, |run| run.first),
        }
    }

    /// How many ranks the set holds.
    pub fn len(&self) -> u64 {
        match self.all_but {
            Some((_, len)) => len,
            None => self.runs.iter().map(Run::len).sum(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The runs as `a`, `a-b` (stride 1) or `a-b/s`, a nested run as `(run)×n/s` (n times,
    /// s apart), comma-separated, each rank `base` plus its distance, as `only ranks …`; a
    /// set stored by the members it leaves out as `all ranks but …`.
    pub fn describe(&self, base: i64) -> String {
        let runs: Vec<String> = self.runs.iter().map(|run| run.describe(base)).collect();
        match self.all_but {
            Some(_) => format!("all ranks but {}", runs.join(",")),
            None => format!("only ranks {}", runs.join(",")),
        }
    }

    pub(crate) fn encode(&self, out: &mut ByteWriter) {
        out.u64((self.runs.len() as u64) << 1 | self.all_but.is_some() as u64);
        if let Some((first, len)) = self.all_but {
            out.i64(first);
            out.u64(len);
        }
        for run in &self.runs {
            out.i64(run.first);
            out.u64(run.levels.len() as u64);
            for &(count, stride) in &run.levels {
                out.u64(count);
                out.i64(stride);
            }
        }
    }

    pub(crate) fn decode(reader: &mut ByteReader) -> Result<RankSet> {
        // Each run takes at least four bytes.
        let header = reader.u64()?;
        let runs = header >> 1;
        if runs == 0 || runs as usize > Self::MAX_RUNS || runs as usize > reader.remaining() / 4 {
            return Err(reader.corrupt("rank set size out of range"));
        }
        let mut set = RankSet::default();
        if header & 1 != 0 {
            let (first, len) = (reader.i64()?, reader.u64()?);
            if len == 0 || len > u32::MAX as u64 {
                return Err(reader.corrupt("rank set size out of range"));
            }
            set.all_but = Some((first, len));
        }
        for _ in 0..runs {
            let first = reader.i64()?;
            let depth = reader.u64()?;
            if depth == 0 || depth > Self::MAX_LEVELS {
                return Err(reader.corrupt("rank set run out of range"));
            }
            let mut run = Run {
                first,
                levels: Vec::with_capacity(depth as usize),
            };
            for _ in 0..depth {
                let (count, stride) = (reader.u64()?, reader.i64()?);
                if count == 0 || count > u32::MAX as u64 {
                    return Err(reader.corrupt("rank set run out of range"));
                }
                run.levels.push((count, stride));
            }
            if run.len() > u32::MAX as u64 {
                return Err(reader.corrupt("rank set run out of range"));
            }
            set.runs.push(run);
        }
        Ok(set)
    }
}

/// Each member's (occurrences, iterations) of one loop, in the order of the stream's
/// members ([`Sharing::loop_totals`]).
pub type MemberTotals = std::sync::Arc<[(u64, u64)]>;

/// Each member's (lowest offset, highest offset + size) of one leaf, in the order of the
/// stream's members ([`Sharing::leaf_extents`]).
pub type MemberExtents = std::sync::Arc<[(i64, i64)]>;

/// What a stream several ranks share keeps besides its nodes: how leaf values and loop
/// counts change with the rank, and which parts only some ranks have.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sharing {
    pub parameters: Vec<RankSlopes>,
    /// How each loop's count changes with the rank, in pre-order (missing ones are 0).
    pub loop_slopes: Vec<i64>,
    /// Per loop in pre-order: 0, or 1 + the index into `rank_sets` of the only ranks that
    /// have it (such a loop runs once for them and not at all for the others).
    pub loop_ranks: Vec<u32>,
    /// Per loop in pre-order: for a loop whose counts differ between ranks (a histogram)
    /// and whose body accesses files, each member's (occurrences, iterations) in the
    /// order of the stream's members (0, 0 for a member without the loop), so each walks
    /// its own exact iterations; otherwise `None` (members share the histogram's sum
    /// evenly).
    pub loop_totals: Vec<Option<MemberTotals>>,
    /// Per leaf in pre-order (empty when no leaf has them): for a leaf whose key has
    /// [`super::MEMBER_EXTENTS`], each member's exact (lowest offset, highest offset +
    /// size) in the order of the stream's members.
    pub leaf_extents: Vec<Option<MemberExtents>>,
    /// Per leaf in pre-order (empty when no leaf has them): for a leaf whose key has
    /// [`super::MEMBER_SIZES`], each member's (count, sum) of its blurred sizes in the
    /// order of the stream's members.
    pub leaf_sizes: Vec<Option<MemberTotals>>,
    /// Per leaf in pre-order (empty when no leaf has them): for a leaf that counts its
    /// access order ([`super::EventKey::order_in_leaf`]) and that several members share,
    /// each member's (consecutive, sequential) accesses in the order of the stream's
    /// members.
    pub leaf_orders: Vec<Option<MemberTotals>>,
    pub rank_sets: Vec<RankSet>,
    /// The base rank itself (peers that are the rank XOR a constant need it).
    pub base_rank: i64,
}

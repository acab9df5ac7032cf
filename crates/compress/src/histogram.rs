//! Adaptive histograms: what a parameter becomes when a precision level below 100 lets
//! values that differ share one event (the thesis' lossy encoding, chapter 4).
//!
//! A histogram keeps its count, its sum, its minimum and maximum — each with the rank that
//! produced it — **exactly**, under any insertion order and any tree of merges; so the
//! totals a summary prints (calls, bytes) stay exact at every precision level, and a reader
//! never produces a value outside [min, max]. The distribution in between is kept in at
//! most [`Histogram::capacity`] bins whose ranges adapt as values arrive: a value that falls
//! in no bin opens one of its own, and when there are too many, the two adjacent bins with
//! the fewest values over the narrowest span merge. Each bin keeps the
//! count, min, max, mean and variance of exactly the values it holds.
//!
//! The fullest bin splits (the thesis' rebalancing) when that frees resolution where the
//! values crowd: when two neighbours together hold at most half as many values, they are
//! joined and the fullest is cut in two. A cut must keep both halves exact, and a bin no
//! longer has its values; so a bin made by joining two keeps, while it is in memory, the
//! two it was joined from (one level: bounded memory) and files each later value on its
//! side of the seam, and only such a bin splits — back along that seam, each half's
//! figures exact. A bin read from a trace, or made by folding overlapping bins of two
//! histograms together, does not know its halves and only merges. Outliers stay visible
//! because a lone value is the last a crowded neighbour absorbs.

use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::Result;

use crate::stats::{merged_moments, portion, portion_before};

/// Bins per histogram unless a trace says otherwise.
pub const DEFAULT_BINS: usize = 8;
/// The most bins a histogram may have (a trace asking for more is damaged).
pub const MAX_BINS: usize = 64;

/// The values of one bin.
#[derive(Clone, Debug)]
pub struct Bin {
    pub count: u64,
    pub min: i64,
    pub max: i64,
    pub mean: f64,
    /// Sum of squared differences from the mean.
    pub m2: f64,
    /// The two bins this one was joined from, each with the values added since on its side
    /// of the seam (values below the seam go to the first): what a split gives back. Kept
    /// in memory only, one level deep; not known for a bin read from a trace.
    halves: Option<Box<(i64, Bin, Bin)>>,
}

/// Bins are equal by their figures: the halves are how one was made, not what it holds.
impl PartialEq for Bin {
    fn eq(&self, other: &Bin) -> bool {
        (self.count, self.min, self.max, self.mean, self.m2)
            == (other.count, other.min, other.max, other.mean, other.m2)
    }
}

impl Bin {
    fn many(value: i64, count: u64) -> Bin {
        Bin {
            count,
            min: value,
            max: value,
            mean: value as f64,
            m2: 0.0,
            halves: None,
        }
    }

    /// Folds `other`'s figures into this bin's; which side of a seam its values lie on is
    /// not known, so the halves are forgotten.
    fn merge(&mut self, other: &Bin) {
        self.merge_figures(other);
        self.halves = None;
    }

    fn merge_figures(&mut self, other: &Bin) {
        (self.mean, self.m2) = merged_moments(
            (self.count, self.mean, self.m2),
            (other.count, other.mean, other.m2),
        );
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Adds `count` times `value`, which lies in the bin's range, to it and to its half.
    fn absorb(&mut self, value: i64, count: u64) {
        let values = Bin::many(value, count);
        self.merge_figures(&values);
        if let Some(halves) = &mut self.halves {
            let (seam, below, from) = &mut **halves;
            let side = if value < *seam { below } else { from };
            side.merge_figures(&values);
        }
    }

    /// The bin of `low`'s and `high`'s values (`low` entirely below `high`), remembering
    /// both so it can be split back.
    fn join(low: Bin, high: Bin) -> Bin {
        let mut joined = low.clone();
        joined.merge_figures(&high);
        let forget = |mut bin: Bin| {
            bin.halves = None;
            bin
        };
        joined.halves = Some(Box::new((high.min, forget(low), forget(high))));
        joined
    }

    /// Whether it knows the two bins it was joined from and both hold values.
    fn splits(&self) -> bool {
        self.halves
            .as_deref()
            .is_some_and(|(_, below, from)| below.count > 0 && from.count > 0)
    }

    /// `count` of its values in proportion (a share given to one rank): range and mean
    /// kept, which values they are not known.
    fn scaled(&self, count: u64) -> Bin {
        Bin {
            count,
            m2: self.m2 * count as f64 / self.count.max(1) as f64,
            halves: None,
            ..*self
        }
    }

    pub fn variance(&self) -> f64 {
        self.m2 / self.count.max(1) as f64
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    capacity: usize,
    /// The precision level its values were let in at (0–100; merged histograms keep the
    /// lower): values differ by at most (100 − precision)% of the larger where it was
    /// decided.
    pub precision: u8,
    /// Increasing and disjoint.
    bins: Vec<Bin>,
    pub count: u64,
    pub sum: i128,
    pub min: i64,
    pub max: i64,
    /// The rank that produced the minimum and the maximum (-1: not known).
    pub min_rank: i64,
    pub max_rank: i64,
}

impl Histogram {
    pub fn new(capacity: usize) -> Histogram {
        Histogram {
            capacity: capacity.clamp(1, MAX_BINS),
            precision: 0,
            bins: Vec::new(),
            count: 0,
            sum: 0,
            min: 0,
            max: 0,
            min_rank: -1,
            max_rank: -1,
        }
    }

    /// A histogram of one value, of `capacity` bins, at `precision`.
    pub fn of(value: i64, capacity: usize, precision: u8) -> Histogram {
        let mut histogram = Histogram::new(capacity);
        histogram.precision = precision.min(100);
        histogram.add(value, -1);
        histogram
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn bins(&self) -> &[Bin] {
        &self.bins
    }

    /// Every value it holds is the same: nothing was blurred.
    pub fn is_exact(&self) -> bool {
        self.min == self.max
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The mean of the squares of its values, `shift` added to each: exact up to
    /// floating point, since each bin keeps its mean and its squared differences from it.
    pub fn mean_square(&self, shift: i64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let total: f64 = self
            .bins
            .iter()
            .map(|bin| {
                let mean = bin.mean + shift as f64;
                bin.m2 + bin.count as f64 * mean * mean
            })
            .sum();
        total / self.count as f64
    }

    pub fn add(&mut self, value: i64, rank: i64) {
        self.add_many(value, 1, rank);
    }

    /// Adds `value` `times` times.
    pub fn add_many(&mut self, value: i64, times: u64, rank: i64) {
        if times == 0 {
            return;
        }
        let first = self.count == 0;
        self.count_in(
            times,
            value as i128 * times as i128,
            value,
            value,
            rank,
            rank,
            first,
        );
        let at = self.bins.partition_point(|existing| existing.max < value);
        match self.bins.get_mut(at) {
            Some(existing) if existing.min <= value => existing.absorb(value, times),
            _ => self.bins.insert(at, Bin::many(value, times)),
        }
        self.shrink();
        self.rebalance();
    }

    /// Adds every value of `other` (its bins, which may overlap ours).
    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        let first = self.count == 0;
        self.precision = if first {
            other.precision
        } else {
            self.precision.min(other.precision)
        };
        self.count_in(
            other.count,
            other.sum,
            other.min,
            other.max,
            other.min_rank,
            other.max_rank,
            first,
        );
        let mut bins = std::mem::take(&mut self.bins);
        bins.extend_from_slice(&other.bins);
        bins.sort_by_key(|bin| (bin.min, bin.max));
        // Overlapping bins (from two histograms) become one, so bins stay disjoint.
        for bin in bins {
            match self.bins.last_mut() {
                Some(last) if bin.min <= last.max => last.merge(&bin),
                _ => self.bins.push(bin),
            }
        }
        self.shrink();
        self.rebalance();
    }

    #[allow(clippy::too_many_arguments)]
    fn count_in(
        &mut self,
        count: u64,
        sum: i128,
        min: i64,
        max: i64,
        min_rank: i64,
        max_rank: i64,
        first: bool,
    ) {
        if first
            || min < self.min
            || (min == self.min && min_rank >= 0 && (self.min_rank < 0 || min_rank < self.min_rank))
        {
            self.min_rank = min_rank;
            self.min = min;
        }
        if first
            || max > self.max
            || (max == self.max && max_rank >= 0 && (self.max_rank < 0 || max_rank < self.max_rank))
        {
            self.max_rank = max_rank;
            self.max = max;
        }
        self.count = self.count.saturating_add(count);
        self.sum = self.sum.saturating_add(sum);
    }

    /// Merges adjacent bins until there are at most `capacity`: the pair whose values
    /// times the width they would span is least (few values close together first; a
    /// lone far value is the last a crowded neighbour absorbs), the narrower on a tie.
    fn shrink(&mut self) {
        while self.bins.len() > self.capacity {
            let pair = self.pair_to_join(usize::MAX).expect("more than one bin");
            self.join(pair);
        }
    }

    /// The adjacent pair (its first bin's index) whose joining loses least, leaving
    /// out the bin at `keep`.
    fn pair_to_join(&self, keep: usize) -> Option<usize> {
        (0..self.bins.len().saturating_sub(1))
            .filter(|&index| index != keep && index + 1 != keep)
            .min_by_key(|&index| self.loss(index, index + 1))
    }

    /// What one bin for the values of bins `first..=last` blurs: their count times the
    /// span (then the span, to prefer the narrower).
    fn loss(&self, first: usize, last: usize) -> (u128, u128) {
        let width = self.bins[last].max.wrapping_sub(self.bins[first].min) as u64 as u128;
        let count: u64 = self.bins[first..=last].iter().map(|bin| bin.count).sum();
        (count as u128 * width, width)
    }

    fn join(&mut self, pair: usize) {
        let high = self.bins.remove(pair + 1);
        let low = std::mem::replace(&mut self.bins[pair], Bin::many(0, 0));
        self.bins[pair] = Bin::join(low, high);
    }

    /// The thesis' rebalancing, once per change: the fullest bin, if it knows its halves,
    /// is split back into them where there is room, or where the pair [`Self::shrink`]
    /// would join first holds at most half as many values and blurs less joined than the
    /// fullest does (so a lone far value is still the last to be absorbed).
    fn rebalance(&mut self) {
        let Some(mut fullest) = (0..self.bins.len()).max_by_key(|&index| self.bins[index].count)
        else {
            return;
        };
        if !self.bins[fullest].splits() {
            return;
        }
        if self.bins.len() >= self.capacity {
            let Some(pair) = self.pair_to_join(fullest) else {
                return;
            };
            let joined = self.bins[pair].count + self.bins[pair + 1].count;
            if joined.saturating_mul(2) > self.bins[fullest].count
                || self.loss(pair, pair + 1) >= self.loss(fullest, fullest)
            {
                return;
            }
            self.join(pair);
            if pair < fullest {
                fullest -= 1;
            }
        }
        // Decided: the bin gives back the two it was joined from, with the values since.
        if let Some(halves) = self.bins[fullest].halves.take() {
            let (_, below, from) = *halves;
            self.bins.splice(fullest..=fullest, [below, from]);
        }
    }

    /// The `index`-th of `parts` shares of the values (a leaf's histogram several ranks
    /// share, given back to one of them): each bin's count split as evenly as integers
    /// allow ([`crate::stats::portion`]), the sum by the bins' means, so
    /// the shares of every index merge back into these count and sum exactly. Ranges,
    /// means and the extremes are kept (a share never holds a value outside them).
    /// The histogram of the same values each moved by `by` (exact: every bin, the sum and
    /// the extremes move with them).
    pub fn shifted(&self, by: i64) -> Histogram {
        let mut shifted = self.clone();
        for bin in &mut shifted.bins {
            bin.min = bin.min.saturating_add(by);
            bin.max = bin.max.saturating_add(by);
            bin.mean += by as f64;
            // A moved copy is read, not added to: no splits to prepare.
            bin.halves = None;
        }
        if shifted.count > 0 {
            shifted.sum += by as i128 * shifted.count as i128;
            shifted.min = shifted.min.saturating_add(by);
            shifted.max = shifted.max.saturating_add(by);
        }
        shifted
    }

    pub fn share(&self, index: u64, parts: u64) -> Histogram {
        if parts <= 1 || self.count == 0 {
            return self.clone();
        }
        let mut share = Histogram {
            bins: Vec::new(),
            count: 0,
            sum: 0,
            ..self.clone()
        };
        // The sum the shares before an index hold together: each bin's shares so far at
        // its mean (so a share's sum lies within its bins), the last index taking exactly
        // what is left (the shares of every index add up to the sum).
        let through = |index: u64| -> i128 {
            if index >= parts {
                return self.sum;
            }
            self.bins
                .iter()
                .map(|bin| portion_before(bin.count, index, parts) as f64 * bin.mean)
                .sum::<f64>()
                .round() as i128
        };
        for bin in &self.bins {
            let count = portion(bin.count, index, parts);
            if count > 0 {
                share.bins.push(bin.scaled(count));
                share.count += count;
            }
        }
        if share.count == 0 {
            return Histogram::new(self.capacity);
        }
        share.sum = through(index + 1) - through(index);
        share
    }

    /// The `index`-th of `parts` equal slices of the values, in order (a loop's count
    /// histogram several ranks share, given back to one of them, each having run the loop
    /// as often as the others): its count is the whole's split as evenly as integers allow,
    /// so a member's share has as many occurrences as the member walks; its bins are the
    /// slice's part of each bin and its sum theirs at the bins' means, the last slice
    /// taking exactly what is left, so the slices of every index merge back into this
    /// count and sum exactly. The extremes are kept.
    pub fn share_evenly(&self, index: u64, parts: u64) -> Histogram {
        if parts <= 1 || self.count == 0 {
            return self.clone();
        }
        let before = portion_before(self.count, index, parts);
        let count = portion(self.count, index, parts);
        if count == 0 {
            return Histogram::new(self.capacity);
        }
        // The values before the `k`-th in order, summed at their bins' means.
        let through = |k: u64| -> i128 {
            if k >= self.count {
                return self.sum;
            }
            let (mut left, mut total) = (k, 0.0);
            for bin in &self.bins {
                let taken = left.min(bin.count);
                total += taken as f64 * bin.mean;
                left -= taken;
            }
            total.round() as i128
        };
        let mut share = Histogram {
            bins: Vec::new(),
            count,
            sum: through(before + count) - through(before),
            ..self.clone()
        };
        let mut start = 0;
        for bin in &self.bins {
            let (low, high) = (start.max(before), (start + bin.count).min(before + count));
            if high > low {
                let taken = high - low;
                share.bins.push(bin.scaled(taken));
            }
            start += bin.count;
        }
        share
    }

    /// A member's own slice when its exact occurrences and iterations are known (a loop
    /// that accesses files, in a stream ranks share): these bins spread over `count`
    /// occurrences, with the member's exact `sum`.
    pub fn exact_share(&self, count: u64, sum: u64) -> Histogram {
        Histogram {
            sum: sum as i128,
            ..self.clone()
        }
        .with_count(count)
    }

    /// The same sum spread over `count` occurrences: each bin's count scaled (largest
    /// remainders first, so they add up to `count`), its range and mean kept. For a
    /// member's slice of a shared loop's counts, counted as the occurrences the member
    /// walks.
    pub fn with_count(mut self, count: u64) -> Histogram {
        if count == self.count {
            return self;
        }
        if self.bins.is_empty() || self.count == 0 {
            if count > 0 {
                let mean = (self.sum as f64 / count as f64).round() as i64;
                let value = mean.clamp(self.min.min(self.max), self.max.max(self.min));
                self.bins = vec![Bin::many(value, count)];
            }
            self.count = count;
            return self;
        }
        let total = self.count as u128;
        let mut scaled: Vec<(u64, u128, usize)> = self
            .bins
            .iter()
            .enumerate()
            .map(|(index, bin)| {
                let exact = bin.count as u128 * count as u128;
                ((exact / total) as u64, exact % total, index)
            })
            .collect();
        let mut left = count - scaled.iter().map(|(whole, _, _)| whole).sum::<u64>();
        let mut order: Vec<usize> = (0..scaled.len()).collect();
        order.sort_by_key(|at| std::cmp::Reverse(scaled[*at].1));
        for at in order {
            if left == 0 {
                break;
            }
            scaled[at].0 += 1;
            left -= 1;
        }
        let bins = std::mem::take(&mut self.bins);
        self.bins = bins
            .into_iter()
            .zip(&scaled)
            .filter(|(_, (whole, _, _))| *whole > 0)
            .map(|(bin, (whole, _, _))| bin.scaled(*whole))
            .collect();
        self.count = count;
        self
    }

    /// Whether `a` and `b` may share a histogram at `precision` (0–100): they differ by at
    /// most (100 − precision)% of the larger magnitude; at 0, always.
    pub fn within(precision: u8, a: i64, b: i64) -> bool {
        if precision == 0 {
            return true;
        }
        let larger = a.unsigned_abs().max(b.unsigned_abs()) as u128;
        let difference = (a as i128 - b as i128).unsigned_abs();
        difference * 100 <= larger * (100 - precision.min(100) as u128)
    }

    /// A value as the histogram's values are distributed: a bin drawn by its count, then a
    /// value around its mean within its range. Never outside [min, max].
    pub fn draw(&self, random: &mut SplitMix) -> i64 {
        let at = random.unit();
        self.draw_at(at, random)
    }

    /// [`Histogram::draw`] with the bin chosen by `at` in [0, 1) along the bins' counts:
    /// successive draws at well-spread points (a low-discrepancy sequence) take each bin
    /// in proportion to its count far more closely than independent draws, so a few
    /// dozen draws from a two-peaked histogram already add up to about its sum.
    pub fn draw_at(&self, at: f64, random: &mut SplitMix) -> i64 {
        if self.count == 0 {
            return 0;
        }
        let total: u64 = self.bins.iter().map(|bin| bin.count).sum();
        let mut pick = ((at.clamp(0.0, 1.0) * total as f64) as u64).min(total.saturating_sub(1));
        let bin = self
            .bins
            .iter()
            .find(|bin| {
                if pick < bin.count {
                    true
                } else {
                    pick -= bin.count;
                    false
                }
            })
            .unwrap_or(&self.bins[0]);
        if bin.min == bin.max {
            return bin.min;
        }
        // About normal (sum of three uniforms) with the bin's spread, kept in its range.
        let spread = bin.variance().sqrt();
        let centred = (0..3).map(|_| random.unit()).sum::<f64>() - 1.5;
        let value = (bin.mean + 2.0 * spread * centred).round();
        (value as i64).clamp(bin.min, bin.max)
    }

    pub fn encode(&self, out: &mut ByteWriter) {
        out.u64((self.precision as u64) << 7 | self.capacity as u64);
        out.u64(self.count);
        out.i64(self.min);
        out.u64(self.max.wrapping_sub(self.min) as u64);
        out.i64(self.min_rank);
        out.i64(self.max_rank);
        out.i64(self.sum as i64);
        out.i64((self.sum >> 64) as i64);
        out.u64(self.bins.len() as u64);
        for bin in &self.bins {
            out.u64(bin.count);
            out.u64(bin.min.wrapping_sub(self.min) as u64);
            out.u64(bin.max.wrapping_sub(bin.min) as u64);
            if bin.count > 1 && bin.min != bin.max {
                out.f64(bin.mean);
                out.f64(bin.m2);
            }
        }
    }

    /// Reads what [`Histogram::encode`] wrote, checking that its figures agree.
    pub fn decode(reader: &mut ByteReader) -> Result<Histogram> {
        let first = reader.u64()?;
        let (capacity, precision) = ((first & 127) as usize, first >> 7);
        if capacity == 0 || capacity > MAX_BINS || precision > 100 {
            return Err(reader.corrupt("histogram bin count out of range"));
        }
        let mut histogram = Histogram::new(capacity);
        histogram.precision = precision as u8;
        histogram.count = reader.u64()?;
        histogram.min = reader.i64()?;
        histogram.max = histogram.min.wrapping_add(reader.u64()? as i64);
        histogram.min_rank = reader.i64()?;
        histogram.max_rank = reader.i64()?;
        let low = reader.i64()? as u64 as i128;
        let high = reader.i64()? as i128;
        histogram.sum = high << 64 | low;
        let bins = reader.u64()? as usize;
        if bins > capacity || (bins == 0) != (histogram.count == 0) || histogram.max < histogram.min
        {
            return Err(reader.corrupt("histogram out of shape"));
        }
        let mut counted = 0u64;
        for _ in 0..bins {
            let count = reader.u64()?;
            let min = histogram.min.wrapping_add(reader.u64()? as i64);
            let max = min.wrapping_add(reader.u64()? as i64);
            let (mean, m2) = if count > 1 && min != max {
                (reader.f64()?, reader.f64()?)
            } else {
                (min as f64, 0.0)
            };
            let previous = histogram.bins.last().map_or(i64::MIN, |bin| bin.max);
            if count == 0
                || min > max
                || min < histogram.min
                || max > histogram.max
                || (!histogram.bins.is_empty() && min <= previous)
            {
                return Err(reader.corrupt("histogram bin out of range"));
            }
            counted = counted
                .checked_add(count)
                .ok_or_else(|| reader.corrupt("histogram bins larger than its count"))?;
            histogram.bins.push(Bin {
                count,
                min,
                max,
                mean: if mean.is_finite() {
                    mean.clamp(min as f64, max as f64)
                } else {
                    min as f64
                },
                m2: if m2.is_finite() { m2.max(0.0) } else { 0.0 },
                halves: None,
            });
        }
        if counted != histogram.count {
            return Err(reader.corrupt("histogram bins do not add up to its count"));
        }
        Ok(histogram)
    }
}

/// The parameters of one leaf that a precision level below 100 turned into histograms
/// (the key holds no value for them, only that they are blurred).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Blurred {
    /// Requested sizes (bytes or MPI counts as the call takes them).
    pub size: Option<Histogram>,
    /// Offsets where the accesses started, absolute.
    pub offset: Option<Histogram>,
    /// MPI peers of point-to-point calls (world ranks), with the peers actually seen.
    pub peer: Option<Histogram>,
    pub peers_seen: Option<PeerSet>,
    /// Once ranks merge, the same peers less the rank that talked to them (`peer − rank`),
    /// with those seen, and the job size a reader takes `rank + relative` modulo (0: none).
    /// A reader walks whichever set is the smaller: the relative one for SPMD ranks that
    /// talk to neighbours at wandering distances (each rank draws its own neighbours), the
    /// absolute one for ranks that all talk to the same few (workers of one master).
    pub peer_relative: Option<Histogram>,
    pub peers_seen_relative: Option<PeerSet>,
    pub peer_modulus: i64,
    /// MPI tags of point-to-point calls.
    pub tag: Option<Histogram>,
}

/// The peers a leaf actually talked to, so a reader never invents one (the thesis' bitmap of
/// relative ranks: here of ranks, as the key keeps them, and once ranks merge of ranks
/// relative to the rank as well, [`Blurred::peer_relative`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PeerSet {
    /// The lowest peer seen; bit i of the words is peer `first + i`.
    first: i64,
    words: Vec<u64>,
}

impl PeerSet {
    /// The most peers a set spans (beyond, a blurred peer is drawn from its histogram).
    pub const MAX_SPAN: i64 = 1 << 16;

    pub fn of(peer: i64) -> PeerSet {
        PeerSet {
            first: peer,
            words: vec![1],
        }
    }

    pub fn contains(&self, peer: i64) -> bool {
        let Some(index) = peer.checked_sub(self.first).filter(|index| *index >= 0) else {
            return false;
        };
        let index = index as usize;
        self.words
            .get(index / 64)
            .is_some_and(|word| word >> (index % 64) & 1 != 0)
    }

    /// Adds `other`'s peers; `None` when the set would span more than [`Self::MAX_SPAN`].
    pub fn union(&self, other: &PeerSet) -> Option<PeerSet> {
        let first = self.first.min(other.first);
        let end = self.end().max(other.end());
        if end - first > Self::MAX_SPAN {
            return None;
        }
        let mut union = PeerSet {
            first,
            words: vec![0; ((end - first) as usize).div_ceil(64)],
        };
        for set in [self, other] {
            for peer in set.iter() {
                let index = (peer - first) as usize;
                union.words[index / 64] |= 1 << (index % 64);
            }
        }
        Some(union)
    }

    fn end(&self) -> i64 {
        self.first + self.words.len() as i64 * 64
    }

    /// The set with every peer moved by `by`.
    pub fn shifted(&self, by: i64) -> PeerSet {
        PeerSet {
            first: self.first.saturating_add(by),
            words: self.words.clone(),
        }
    }

    /// How many distinct peers the set holds, taken modulo `modulus` when it is above 0
    /// (`-1` and `size - 1` are one neighbour of a ring).
    pub fn distinct(&self, modulus: i64) -> usize {
        if modulus <= 0 {
            return self
                .words
                .iter()
                .map(|word| word.count_ones() as usize)
                .sum();
        }
        let mut seen: Vec<i64> = self.iter().map(|peer| peer.rem_euclid(modulus)).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.words.iter().enumerate().flat_map(move |(word, bits)| {
            (0..64)
                .filter(move |bit| bits >> bit & 1 != 0)
                .map(move |bit| self.first + (word * 64 + bit) as i64)
        })
    }

    /// The seen peer nearest `peer` within [low, high] (ties to the lower), if any.
    pub fn nearest(&self, peer: i64, low: i64, high: i64) -> Option<i64> {
        self.iter()
            .filter(|seen| (low..=high).contains(seen))
            .min_by_key(|seen| (seen.abs_diff(peer), *seen))
    }

    pub fn encode(&self, out: &mut ByteWriter) {
        out.i64(self.first);
        out.u64(self.words.len() as u64);
        for word in &self.words {
            out.u64(*word);
        }
    }

    pub fn decode(reader: &mut ByteReader) -> Result<PeerSet> {
        let first = reader.i64()?;
        let words = reader.u64()? as usize;
        if words as i64 > Self::MAX_SPAN / 64 + 1 || words > reader.remaining() {
            return Err(reader.corrupt("peer set larger than its span"));
        }
        let mut set = PeerSet {
            first,
            words: Vec::with_capacity(words),
        };
        for _ in 0..words {
            set.words.push(reader.u64()?);
        }
        Ok(set)
    }
}

impl Blurred {
    /// The `index`-th of `parts` shares ([`Histogram::share`]); the peers seen are kept.
    pub fn share(&self, index: u64, parts: u64) -> Blurred {
        let share = |histogram: &Option<Histogram>| {
            histogram
                .as_ref()
                .map(|histogram| histogram.share(index, parts))
        };
        Blurred {
            size: share(&self.size),
            offset: share(&self.offset),
            peer: share(&self.peer),
            peers_seen: self.peers_seen.clone(),
            peer_relative: share(&self.peer_relative),
            peers_seen_relative: self.peers_seen_relative.clone(),
            peer_modulus: self.peer_modulus,
            tag: share(&self.tag),
        }
    }

    /// `other`'s peers relative to the rank: as kept, or — for one rank's peers (no rank
    /// given to them yet), `rank`'s — its absolute ones less the rank (exact: a shift).
    fn relative_peers(&self, rank: i64) -> Option<(Histogram, Option<PeerSet>)> {
        if let Some(relative) = &self.peer_relative {
            return Some((relative.clone(), self.peers_seen_relative.clone()));
        }
        let peer = self.peer.as_ref()?;
        (rank >= 0 && (peer.count == 0 || peer.min_rank < 0)).then(|| {
            (
                peer.shifted(-rank),
                self.peers_seen.as_ref().map(|seen| seen.shifted(-rank)),
            )
        })
    }

    /// Adds `other`'s values; those with no rank yet are `rank`'s (of a job of
    /// `job_size` ranks, 0 if not known).
    pub fn merge(&mut self, other: &Blurred, rank: i64, job_size: i64) {
        // Peers seen: the union while it stays within its span, else none kept (a reader
        // then draws from the histogram alone).
        if other.peer.is_some() {
            // Relative peers first (before `self.peer` takes `other`'s): kept only while
            // every rank's are known.
            let relative = match (self.peer.is_some(), other.relative_peers(rank)) {
                (false, theirs) => theirs,
                (true, Some((theirs, theirs_seen))) => self.peer_relative.take().map(|mut mine| {
                    mine.merge(&theirs);
                    let seen = match (self.peers_seen_relative.take(), theirs_seen) {
                        (Some(mine), Some(theirs)) => mine.union(&theirs),
                        _ => None,
                    };
                    (mine, seen)
                }),
                (true, None) => None,
            };
            (self.peer_relative, self.peers_seen_relative) = match relative {
                Some((histogram, seen)) => (Some(histogram), seen),
                None => (None, None),
            };
            if self.peer_modulus == 0 {
                self.peer_modulus = other.peer_modulus.max(job_size.max(0));
            }
            self.peers_seen = match (&self.peers_seen, &other.peers_seen, &self.peer) {
                (Some(mine), Some(theirs), _) => mine.union(theirs),
                (None, theirs, None) => theirs.clone(),
                _ => None,
            };
        }
        for (mine, theirs) in [
            (&mut self.size, &other.size),
            (&mut self.offset, &other.offset),
            (&mut self.peer, &other.peer),
            (&mut self.tag, &other.tag),
        ] {
            let Some(theirs) = theirs else { continue };
            let mut theirs = theirs.clone();
            if rank >= 0 {
                if theirs.min_rank < 0 {
                    theirs.min_rank = rank;
                }
                if theirs.max_rank < 0 {
                    theirs.max_rank = rank;
                }
            }
            match mine {
                Some(mine) => mine.merge(&theirs),
                None => *mine = Some(theirs),
            }
        }
    }
}

/// A small deterministic generator (SplitMix64): the same seed gives every reader the same
/// values, so a replay or an export of a blurred trace is reproducible.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Stats;
    use proptest::prelude::*;

    fn of_values(values: &[(i64, i64)], capacity: usize) -> Histogram {
        let mut histogram = Histogram::new(capacity);
        for (value, rank) in values {
            histogram.add(*value, *rank);
        }
        histogram
    }

    proptest! {
        /// Count, sum, min and max (and who produced them) are exact whatever the order of
        /// insertion and whatever tree of merges; bins stay within [min, max] and disjoint.
        #[test]
        fn exact_figures_under_any_order_and_merge_tree(
            values in proptest::collection::vec((-1_000_000_000_000i64..1_000_000_000_000, 0i64..64), 1..200),
            cuts in proptest::collection::vec(0usize..200, 0..6),
            capacity in 1usize..12,
            seed in any::<u64>(),
        ) {
            let count = values.len() as u64;
            let sum: i128 = values.iter().map(|(value, _)| *value as i128).sum();
            let min = values.iter().map(|(value, _)| *value).min().unwrap();
            let max = values.iter().map(|(value, _)| *value).max().unwrap();
            let min_rank = values.iter().filter(|(value, _)| *value == min).map(|(_, rank)| *rank).min().unwrap();
            let max_rank = values.iter().filter(|(value, _)| *value == max).map(|(_, rank)| *rank).min().unwrap();
            // Pieces cut anywhere, each inserted in its own order, merged as a chain and
            // as a balanced tree.
            let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut.min(values.len())).collect();
            cuts.push(0);
            cuts.push(values.len());
            cuts.sort();
            let mut pieces: Vec<Histogram> = cuts.windows(2).map(|pair| {
                let mut piece = values[pair[0]..pair[1]].to_vec();
                if pair[0] % 2 == 1 { piece.reverse(); }
                of_values(&piece, capacity)
            }).collect();
            let mut random = SplitMix::new(seed);
            while pieces.len() > 1 {
                let at = (random.next_u64() % (pieces.len() as u64 - 1)) as usize;
                let right = pieces.remove(at + 1);
                pieces[at].merge(&right);
            }
            for histogram in [pieces.remove(0), of_values(&values, capacity)] {
                prop_assert_eq!((histogram.count, histogram.sum, histogram.min, histogram.max), (count, sum, min, max));
                prop_assert_eq!((histogram.min_rank, histogram.max_rank), (min_rank, max_rank));
                prop_assert!(histogram.bins().len() <= capacity);
                prop_assert_eq!(histogram.bins().iter().map(|bin| bin.count).sum::<u64>(), count);
                for pair in histogram.bins().windows(2) {
                    prop_assert!(pair[0].max < pair[1].min);
                }
                // Each bin's figures are those of exactly the values in its range (joins,
                // splits and merges never guess).
                for bin in histogram.bins() {
                    let inside: Vec<i64> = values.iter().map(|(value, _)| *value)
                        .filter(|value| *value >= bin.min && *value <= bin.max).collect();
                    prop_assert_eq!(bin.count, inside.len() as u64);
                    prop_assert_eq!(Some(bin.min), inside.iter().copied().min());
                    prop_assert_eq!(Some(bin.max), inside.iter().copied().max());
                    let mean = inside.iter().map(|value| *value as f64).sum::<f64>() / inside.len() as f64;
                    prop_assert!((bin.mean - mean).abs() <= 1e-6 * mean.abs().max(1.0), "{} {}", bin.mean, mean);
                }
                // The mean square (what a summary's spread of sizes reads) is the values'.
                let shift = 1000;
                let square = values.iter().map(|(value, _)| ((*value + shift) as f64).powi(2)).sum::<f64>() / count as f64;
                let kept = histogram.mean_square(shift);
                prop_assert!((kept - square).abs() <= 1e-9 * square.max(1.0), "{} {}", kept, square);
                for _ in 0..50 {
                    let drawn = histogram.draw(&mut random);
                    prop_assert!(drawn >= min && drawn <= max);
                    prop_assert!(histogram.bins().iter().any(|bin| drawn >= bin.min && drawn <= bin.max));
                }
                let mut writer = ByteWriter::new();
                histogram.encode(&mut writer);
                let bytes = writer.into_inner();
                let read = Histogram::decode(&mut ByteReader::new(&bytes, "t")).unwrap();
                prop_assert_eq!((read.count, read.sum, read.min, read.max, read.bins().len()), (count, sum, min, max, histogram.bins().len()));
            }
        }

        /// Even slices (a loop's count histogram given back to the ranks that shared it):
        /// each has its portion of the occurrences, its sum lies within its count times the
        /// extremes, and the slices merge back into the whole's count and sum.
        #[test]
        fn even_slices_merge_back_exactly(
            values in proptest::collection::vec(1i64..1_000, 1..300),
            parts in 1u64..20,
            capacity in 1usize..12,
        ) {
            let whole = of_values(&values.iter().map(|value| (*value, 0)).collect::<Vec<_>>(), capacity);
            let mut merged = Histogram::new(capacity);
            for index in 0..parts {
                let slice = whole.share_evenly(index, parts);
                prop_assert_eq!(slice.count, portion(whole.count, index, parts));
                prop_assert_eq!(slice.bins().iter().map(|bin| bin.count).sum::<u64>(), slice.count);
                prop_assert!(slice.sum >= slice.count as i128 * whole.min as i128);
                prop_assert!(slice.sum <= slice.count as i128 * whole.max as i128);
                merged.merge(&slice);
            }
            prop_assert_eq!((merged.count, merged.sum), (whole.count, whole.sum));
        }

        /// A damaged histogram is an error, never a panic or a huge allocation.
        #[test]
        fn damaged_bytes_are_refused_or_read(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(histogram) = Histogram::decode(&mut ByteReader::new(&bytes, "t")) {
                prop_assert!(histogram.bins().len() <= MAX_BINS);
                prop_assert!(histogram.min <= histogram.max);
            }
        }
    }

    #[test]
    fn peers_merged_over_ranks_are_kept_relative_to_each_rank_as_well() {
        // One rank's blurred peers, as its stream keeps them (no rank given yet).
        let of_rank = |peers: &[i64]| {
            let mut blurred = Blurred::default();
            for &peer in peers {
                blurred.merge(
                    &Blurred {
                        peer: Some(Histogram::of(peer, 4, 0)),
                        peers_seen: Some(PeerSet::of(peer)),
                        ..Blurred::default()
                    },
                    -1,
                    0,
                );
            }
            blurred
        };
        assert_eq!(of_rank(&[1, 2]).peer_relative, None);
        let mut merged = Blurred::default();
        merged.merge(&of_rank(&[1, 2]), 0, 16);
        merged.merge(&of_rank(&[6, 8]), 5, 16);
        merged.merge(&of_rank(&[0, 14]), 15, 16);
        let relative = merged.peer_relative.as_ref().unwrap();
        // 1, 2; 1, 3; -15, -1: exact count, sum and extremes of the differences.
        assert_eq!(
            (relative.count, relative.sum, relative.min, relative.max),
            (6, -9, -15, 3)
        );
        let seen = merged.peers_seen_relative.as_ref().unwrap();
        assert_eq!(seen.iter().collect::<Vec<_>>(), [-15, -1, 1, 2, 3]);
        // Modulo the job, -15 is 1 and -1 is 15: four distinct neighbours; six ranks.
        assert_eq!((merged.peer_modulus, seen.distinct(16)), (16, 4));
        assert_eq!(merged.peers_seen.as_ref().unwrap().distinct(0), 6);
        // A merged stream's peers come with their relative form and keep it; peers whose
        // ranks are not known (none given and no relative form) drop it.
        let mut again = Blurred::default();
        again.merge(&merged, 0, 16);
        assert_eq!(again.peer_relative, merged.peer_relative);
        again.merge(&of_rank(&[3]), -1, 16);
        assert_eq!(
            (again.peer_relative, again.peers_seen_relative),
            (None, None)
        );
        assert_eq!(again.peer.unwrap().count, 7);
    }

    proptest! {
        /// A leaf's histogram split among the ranks that share it (one share each, in any
        /// order of merging back) gives back its exact count, sum, min and max; every
        /// share's bins lie within the whole's range, and each share's sum is within its
        /// bins' ranges.
        #[test]
        fn shares_add_up_to_the_whole(
            values in proptest::collection::vec(-1_000_000_000_000i64..1_000_000_000_000, 1..200),
            parts in 1u64..40,
            capacity in 1usize..12,
            reversed in any::<bool>(),
        ) {
            let whole = of_values(&values.iter().map(|value| (*value, 0)).collect::<Vec<_>>(), capacity);
            let mut shares: Vec<Histogram> = (0..parts).map(|index| whole.share(index, parts)).collect();
            if reversed { shares.reverse(); }
            let mut merged = Histogram::new(capacity);
            for share in &shares {
                prop_assert!(share.bins().iter().all(|bin| bin.min >= whole.min && bin.max <= whole.max));
                if share.count > 0 {
                    let low = share.bins().first().unwrap().min as i128 * share.count as i128;
                    let high = share.bins().last().unwrap().max as i128 * share.count as i128;
                    // Rounding (and the last share's float remainder) aside.
                    let slack = 2 + (whole.max as i128 - whole.min as i128) / 1_000_000;
                    prop_assert!(share.sum >= low - slack && share.sum <= high + slack, "{} not in {}..{}", share.sum, low, high);
                }
                merged.merge(share);
            }
            prop_assert_eq!((merged.count, merged.sum, merged.min, merged.max), (whole.count, whole.sum, whole.min, whole.max));
            let stats = values.iter().fold(Stats::default(), |mut stats, value| { stats.add(value.unsigned_abs() % 1_000_000_000); stats });
            let mut back = Stats::default();
            for index in 0..parts { back.merge(&stats.share(index, parts)); }
            prop_assert_eq!((back.count, back.min, back.max, back.histogram), (stats.count, stats.min, stats.max, stats.histogram));
            prop_assert!((back.total() - stats.total()).abs() <= 1e-6 * stats.total().abs().max(1.0));
        }
    }

    #[test]
    fn well_spread_draws_take_each_bin_in_proportion() {
        // Two peaks (a rank group sending 4 KiB, another 16 KiB), drawn 38 times at the
        // golden-ratio points: the total is within one value's spread of the histogram's
        // sum (one draw in the wrong peak at most; independent draws are off by several).
        let mut histogram = Histogram::new(8);
        for step in 0..19 {
            histogram.add(4096 + step, 0);
            histogram.add(16384 + step, 1);
        }
        let mut random = SplitMix::new(7);
        let mut at = 0.25;
        let drawn: i64 = (0..38)
            .map(|_| {
                let value = histogram.draw_at(at, &mut random);
                at = (at + 0.618_033_988_749_894_9) % 1.0;
                value
            })
            .sum();
        let expected = histogram.sum as f64;
        let spread = (histogram.max - histogram.min) as f64;
        assert!(
            (drawn as f64 - expected).abs() <= spread + 100.0,
            "{drawn} drawn, {expected}"
        );
    }

    /// The thesis' rebalancing: a bin joined early that the values then crowd into is
    /// split back into what it was joined from (each half exact), two sparse neighbours
    /// joined to make room.
    #[test]
    fn the_fullest_bin_splits_back_when_values_crowd_into_it() {
        let mut histogram = Histogram::new(4);
        for value in [0, 100, 200, 300, 400] {
            histogram.add(value, 0);
        }
        let figures = |histogram: &Histogram| -> Vec<(u64, i64, i64)> {
            histogram
                .bins()
                .iter()
                .map(|bin| (bin.count, bin.min, bin.max))
                .collect()
        };
        assert_eq!(
            figures(&histogram),
            [(2, 0, 100), (1, 200, 200), (1, 300, 300), (1, 400, 400)]
        );
        for _ in 0..1000 {
            histogram.add(100, 0);
        }
        assert_eq!(
            figures(&histogram),
            [(1, 0, 0), (1001, 100, 100), (2, 200, 300), (1, 400, 400)]
        );
        // Read back from a trace, a bin no longer knows its halves: it only merges.
        let mut writer = ByteWriter::new();
        histogram.encode(&mut writer);
        let bytes = writer.into_inner();
        let mut read = Histogram::decode(&mut ByteReader::new(&bytes, "t")).unwrap();
        read.add(250, 0);
        assert_eq!(read.bins().len(), 4);
        assert_eq!((read.count, read.sum), (1006, 101_250));
    }

    #[test]
    fn an_outlier_keeps_its_own_bin() {
        let mut histogram = Histogram::new(4);
        for value in 0..1000 {
            histogram.add(4096 + value % 10, 0);
        }
        histogram.add(1 << 30, 7);
        assert_eq!(histogram.max, 1 << 30);
        assert_eq!(histogram.max_rank, 7);
        let last = histogram.bins().last().unwrap();
        assert_eq!((last.count, last.min, last.max), (1, 1 << 30, 1 << 30));
    }

    proptest! {
        /// A peer drawn and snapped to the set is always one that was seen, whatever the
        /// merges of sets (until they span too far, when none is kept).
        #[test]
        fn peers_drawn_are_peers_seen(
            peers in proptest::collection::vec(0i64..5000, 1..40),
            seed in any::<u64>(),
        ) {
            let mut blurred = Blurred::default();
            for peer in &peers {
                blurred.merge(
                    &Blurred {
                        peer: Some(Histogram::of(*peer, 4, 0)),
                        peers_seen: Some(PeerSet::of(*peer)),
                        ..Blurred::default()
                    },
                    -1,
                    0,
                );
            }
            let (histogram, seen) = (blurred.peer.unwrap(), blurred.peers_seen.unwrap());
            prop_assert_eq!(seen.iter().count(), peers.iter().collect::<std::collections::BTreeSet<_>>().len());
            let mut random = SplitMix::new(seed);
            for _ in 0..20 {
                let drawn = histogram.draw(&mut random);
                let peer = seen.nearest(drawn, histogram.min, histogram.max).unwrap();
                prop_assert!(peers.contains(&peer), "{} not among {:?}", peer, peers);
            }
            let mut writer = ByteWriter::new();
            seen.encode(&mut writer);
            let bytes = writer.into_inner();
            prop_assert_eq!(PeerSet::decode(&mut ByteReader::new(&bytes, "t")).unwrap(), seen);
        }
    }

    #[test]
    fn tolerance_is_a_share_of_the_larger_value() {
        assert!(Histogram::within(95, 1000, 1050));
        assert!(!Histogram::within(95, 1000, 1060));
        assert!(Histogram::within(0, 1, 1 << 40));
        assert!(!Histogram::within(100, 7, 8));
        assert!(Histogram::within(100, 7, 7));
        assert!(Histogram::within(50, -100, -60));
    }
}

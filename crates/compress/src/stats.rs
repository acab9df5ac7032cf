//! Running statistics of a value (a duration, a compute gap): count, min, max, mean,
//! variance (Welford, mergeable) and a small fixed histogram with decade bins.

use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::Result;

/// Upper bounds (exclusive) of the histogram's bins, in nanoseconds: <100 ns, <1 µs,
/// <10 µs, <100 µs, <1 ms, <10 ms, <100 ms, and the rest (shared with the staging
/// segments' run records, whose histograms the tracer fills as the program runs).
pub const BIN_BOUNDS: [u64; 7] = cairn_format::segment::HISTOGRAM_BOUNDS_NS;
pub const BINS: usize = BIN_BOUNDS.len() + 1;

/// The mean (above the minimum) and the standard deviation are stored in units of 1/16 ns
/// (see [`Stats::encode`]).
const UNITS_PER_NS: f64 = 16.0;

/// The bin a value falls in.
fn bin_of(value: u64) -> usize {
    BIN_BOUNDS
        .iter()
        .position(|bound| value < *bound)
        .unwrap_or(BINS - 1)
}

/// Significant bits the standard deviation keeps (version 24): a relative 2^-8, which no
/// reader of a spread needs finer, in at most two bytes whatever its size — a spread in
/// sixteenths of a nanosecond took three to five, and more as ranks on fewer cores made
/// their calls' times vary more.
const SPREAD_BITS: u32 = 8;

/// A spread (in [`UNITS_PER_NS`]ths of a nanosecond) as a small floating-point code:
/// below 2^8 the value itself; above, `e · 2^7 + m` with `m` the value's top 8 bits
/// (rounded, so 2^7 ≤ m < 2^8) and `e ≥ 1` the bits dropped.
fn spread_to_code(value: u64) -> u64 {
    let half = 1u64 << (SPREAD_BITS - 1);
    let mut width = 64 - value.leading_zeros();
    if width <= SPREAD_BITS {
        return value;
    }
    let mut dropped = width - SPREAD_BITS;
    let mut mantissa = (value >> dropped) + ((value >> (dropped - 1)) & 1);
    if mantissa >> SPREAD_BITS != 0 {
        // Rounding carried into a ninth bit.
        width += 1;
        dropped = width - SPREAD_BITS;
        mantissa >>= 1;
    }
    u64::from(dropped) * half + mantissa
}

/// The spread a [`spread_to_code`] code stands for.
fn code_to_spread(code: u64) -> u64 {
    let half = 1u64 << (SPREAD_BITS - 1);
    if code < 2 * half {
        return code;
    }
    let dropped = (code - half) / half;
    let mantissa = code - dropped * half;
    // A corrupt code cannot shift past the top: saturate rather than wrap.
    if dropped > 64 - u64::from(SPREAD_BITS) {
        return u64::MAX;
    }
    mantissa << dropped
}

/// The mean and sum of squared deviations of two sets of observations together, each given
/// as (count, mean, sum of squared deviations): Chan et al.'s parallel update.
pub fn merged_moments(a: (u64, f64, f64), b: (u64, f64, f64)) -> (f64, f64) {
    let count = (a.0 + b.0).max(1) as f64;
    let delta = b.1 - a.1;
    (
        a.1 + delta * b.0 as f64 / count,
        a.2 + b.2 + delta * delta * a.0 as f64 * b.0 as f64 / count,
    )
}

/// The `index`-th of `parts` integer shares of `total`, as even as can be: the shares of
/// the indices 0..parts add up to `total`, and the first `index` of them to
/// `portion_before(total, index, parts)`.
pub fn portion(total: u64, index: u64, parts: u64) -> u64 {
    portion_before(total, index + 1, parts) - portion_before(total, index, parts)
}

/// The shares of `total` before the `index`-th, together.
pub fn portion_before(total: u64, index: u64, parts: u64) -> u64 {
    (total as u128 * index.min(parts) as u128 / parts.max(1) as u128) as u64
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub count: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sum of squared differences from the mean (variance = m2 / count).
    pub m2: f64,
    pub histogram: [u64; BINS],
}

impl Stats {
    pub fn of(value: u64) -> Stats {
        let mut stats = Stats::default();
        stats.add(value);
        stats
    }

    pub fn add(&mut self, value: u64) {
        if self.count == 0 || value < self.min {
            self.min = value;
        }
        self.max = self.max.max(value);
        self.count += 1;
        let delta = value as f64 - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (value as f64 - self.mean);
        self.histogram[bin_of(value)] += 1;
    }

    /// Combines two sets of observations (Chan et al.'s parallel update).
    pub fn merge(&mut self, other: &Stats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        (self.mean, self.m2) = merged_moments(
            (self.count, self.mean, self.m2),
            (other.count, other.mean, other.m2),
        );
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        for (mine, theirs) in self.histogram.iter_mut().zip(&other.histogram) {
            *mine += theirs;
        }
    }

    /// Keeps `bits` significant bits of min, max, mean and spread (a precision level below
    /// 100: values within a relative 2^-bits compare and compress alike); counts and the
    /// histogram stay exact.
    pub fn round(&mut self, bits: u32) {
        let integer = |value: u64| {
            let width = 64 - value.leading_zeros();
            if width <= bits {
                return value;
            }
            let drop = width - bits;
            let half = 1u64 << (drop - 1);
            (value.saturating_add(half) >> drop) << drop
        };
        if let (2..=3, Some(values)) = (self.count, self.values()) {
            // Two or three observations: each value rounded, and the statistics those
            // values' (kept as the values, version 25); the histogram stays the one of the
            // values as they were.
            let histogram = self.histogram;
            let mut rounded = Stats::default();
            let (low, high) = (integer(values[0]), integer(values[values.len() - 1]));
            for value in values {
                rounded.add(integer(value).clamp(low, high.max(low)));
            }
            *self = Stats {
                histogram,
                ..rounded
            };
            return;
        }
        self.min = integer(self.min);
        self.max = integer(self.max).max(self.min);
        if self.count > 1 {
            // The mean above the minimum and the spread keep those bits as they are
            // stored (integers, [`Stats::encode`]), so values within the margin are
            // stored alike.
            let above = integer(self.mean_code()) as f64 / UNITS_PER_NS;
            self.mean = (self.min as f64 + above).min(self.max as f64);
            let deviation = integer(self.spread_code()) as f64 / UNITS_PER_NS;
            self.m2 = deviation * deviation * self.count as f64;
        } else {
            // One observation (or none): its value is all there is.
            self.mean = self.min as f64;
            self.m2 = 0.0;
        }
    }

    pub fn total(&self) -> f64 {
        self.mean * self.count as f64
    }

    /// The `index`-th of `parts` shares of these observations (the statistics of a leaf
    /// several ranks share, given back to one of them): each bin's count split as evenly
    /// as integers allow, so the shares of every index add up to these exactly; mean,
    /// min and max kept, the spread in proportion.
    pub fn share(&self, index: u64, parts: u64) -> Stats {
        if parts <= 1 || self.count == 0 {
            return *self;
        }
        let mut share = Stats::default();
        let binned: u64 = self.histogram.iter().sum();
        if binned == self.count {
            for (mine, all) in share.histogram.iter_mut().zip(&self.histogram) {
                *mine = portion(*all, index, parts);
            }
            share.count = share.histogram.iter().sum();
        } else {
            // Statistics kept without their histogram (compute gaps).
            share.count = portion(self.count, index, parts);
        }
        if share.count == 0 {
            return Stats::default();
        }
        share.min = self.min;
        share.max = self.max;
        share.mean = self.mean;
        share.m2 = self.m2 * share.count as f64 / self.count as f64;
        share
    }

    /// Takes one observation off these statistics — one repetition of a block the tracer
    /// folded, placed alone — and returns it: a value at the mean, in a bin that holds
    /// one (where the histogram is kept); what is left keeps the sum, the extremes and
    /// the rest of the histogram, so the two merge back to these.
    pub fn take_one(&mut self) -> Stats {
        if self.count <= 1 {
            return std::mem::take(self);
        }
        let binned = self.histogram.iter().sum::<u64>() == self.count;
        let mut value = (self.mean.round() as u64).clamp(self.min, self.max);
        let mut one = Stats::default();
        if binned {
            let at = bin_of(value);
            let bin = (0..BINS)
                .filter(|bin| self.histogram[*bin] > 0)
                .min_by_key(|bin| bin.abs_diff(at))
                .unwrap_or(at);
            // Into that bin's range (an observation lies there, between min and max).
            let low = if bin == 0 { 0 } else { BIN_BOUNDS[bin - 1] };
            let high = BIN_BOUNDS.get(bin).map_or(u64::MAX, |bound| bound - 1);
            value = value.clamp(low.max(self.min), high.min(self.max).max(low.max(self.min)));
            self.histogram[bin] -= 1;
            one.histogram[bin] = 1;
        }
        // What is left must still average within the extremes it keeps, or its mean would
        // be clamped and the total lost: the value lies where the others can make up the
        // rest (before the bin's range, if they disagree).
        let count = self.count as f64;
        let total = self.mean * count;
        let others = count - 1.0;
        let feasible_low = (total - others * self.max as f64)
            .ceil()
            .max(self.min as f64);
        let feasible_high = (total - others * self.min as f64)
            .floor()
            .min(self.max as f64);
        if feasible_low <= feasible_high {
            value = value.clamp(feasible_low as u64, feasible_high as u64);
        }
        let rest_mean = (self.mean * count - value as f64) / (count - 1.0);
        self.m2 = (self.m2 - (value as f64 - rest_mean).powi(2) * (count - 1.0) / count).max(0.0);
        self.mean = rest_mean.clamp(self.min as f64, self.max as f64);
        self.count -= 1;
        one.count = 1;
        one.min = value;
        one.max = value;
        one.mean = value as f64;
        one
    }

    pub fn variance(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.m2 / self.count as f64
        }
    }

    /// Writes the statistics; the histogram only if `histogram` (kept for durations, not
    /// for compute gaps, whose rare outliers would otherwise make long runs' traces grow).
    pub fn encode(&self, out: &mut ByteWriter, histogram: bool) {
        out.u64(self.count);
        self.encode_after_count(out, histogram);
    }

    /// Writes the statistics but their count, which the reader knows otherwise
    /// ([`Stats::decode_with_count`]).
    pub fn encode_after_count(&self, out: &mut ByteWriter, histogram: bool) {
        if self.count == 0 {
            return;
        }
        if self.count == 1 {
            // One observation: the value says everything (mean = value, no spread).
            out.u64(self.min);
            return;
        }
        out.u64(self.min);
        if self.count <= 3 {
            // Two or three observations (version 25): the values say everything, in fewer
            // bytes than a mean, a spread and a histogram — when they are these statistics'
            // (a precision level may have rounded the extremes but not the histogram).
            // The range's low bit says which form follows.
            let values = self.values();
            let exact = values.as_ref().is_some_and(|values| {
                let mut again = Stats::default();
                values.iter().for_each(|value| again.add(*value));
                (again.min, again.max, again.histogram, again.mean_code())
                    == (self.min, self.max, self.histogram, self.mean_code())
                    && spread_to_code(again.spread_code()) == spread_to_code(self.spread_code())
            });
            // (A range beyond 2^63 ns, which no clock gives, is kept as that.)
            let range = (self.max - self.min).min(u64::MAX >> 1);
            out.u64(range << 1 | !exact as u64);
            if let (true, Some(values)) = (exact, values) {
                if self.count == 3 {
                    out.u64(values[1] - self.min);
                }
                return;
            }
        } else {
            out.u64(self.max - self.min);
        }
        out.u64(self.mean_code());
        out.u64(spread_to_code(self.spread_code()));
        if histogram {
            // The fullest bin is implied (count minus the others): it is the one that grows
            // with a loop's iterations, and the trace should not. Bins below the minimum's
            // are empty and not written (version 24) — unless a precision level's rounding
            // moved the minimum across a bin's bound, when the fullest bin's index is
            // written above `BINS` and every other bin follows. (Bins above the maximum's
            // are written, though empty: a long run's rare slow call would otherwise add
            // bins as the loop runs longer.)
            let fullest = self.fullest_bin();
            let (low, high) = (bin_of(self.min), BINS - 1);
            let outside = self
                .histogram
                .iter()
                .enumerate()
                .any(|(index, bin)| *bin != 0 && !(low..=high).contains(&index))
                || !(low..=high).contains(&fullest);
            let (first, last, tag) = if outside {
                (0, BINS - 1, BINS + fullest)
            } else {
                (low, high, fullest - low)
            };
            out.u64(tag as u64);
            for index in first..=last {
                if index != fullest {
                    out.u64(self.histogram[index]);
                }
            }
        }
    }

    /// The observations of statistics of two or three (the middle one from the mean), if
    /// they are whole nanoseconds within the extremes.
    fn values(&self) -> Option<Vec<u64>> {
        match self.count {
            2 => Some(vec![self.min, self.max]),
            3 => {
                let middle = (self.mean * 3.0 - self.min as f64 - self.max as f64).round();
                (middle >= self.min as f64 && middle <= self.max as f64)
                    .then(|| vec![self.min, middle as u64, self.max])
            }
            _ => None,
        }
    }

    /// The mean above the minimum in [`UNITS_PER_NS`]ths of a nanosecond: finer than the
    /// clock, in a few bytes instead of a float's eight whose full mantissa compressed
    /// badly; and unlike the sum, it does not take more bytes as a loop runs longer.
    fn mean_code(&self) -> u64 {
        let most = (self.max - self.min) as f64 * UNITS_PER_NS;
        ((self.mean - self.min as f64) * UNITS_PER_NS)
            .round()
            .clamp(0.0, most) as u64
    }

    /// The standard deviation in [`UNITS_PER_NS`]ths of a nanosecond.
    fn spread_code(&self) -> u64 {
        (self.variance().max(0.0).sqrt() * UNITS_PER_NS).round() as u64
    }

    fn fullest_bin(&self) -> usize {
        let mut fullest = 0;
        for (index, bin) in self.histogram.iter().enumerate() {
            if *bin > self.histogram[fullest] {
                fullest = index;
            }
        }
        fullest
    }

    /// Reads what [`Stats::encode`] wrote with the same `histogram`.
    pub fn decode(reader: &mut ByteReader, histogram: bool) -> Result<Stats> {
        let count = reader.u64()?;
        Self::decode_with_count(reader, histogram, count)
    }

    /// Reads what [`Stats::encode_after_count`] wrote, of `count` observations.
    pub fn decode_with_count(
        reader: &mut ByteReader,
        histogram: bool,
        count: u64,
    ) -> Result<Stats> {
        if count == 0 {
            return Ok(Stats::default());
        }
        if count == 1 {
            return Ok(Stats::of(reader.u64()?));
        }
        let mut stats = Stats {
            count,
            ..Stats::default()
        };
        stats.min = reader.u64()?;
        let range = if count <= 3 {
            // Version 25: two or three observations as their values (low bit 0).
            let word = reader.u64()?;
            let range = word >> 1;
            if word & 1 == 0 {
                let mut values = Stats::of(stats.min);
                if count == 3 {
                    let middle = reader.u64()?;
                    if middle > range {
                        return Err(
                            reader.corrupt("statistics' middle value beyond their extremes")
                        );
                    }
                    values.add(stats.min.saturating_add(middle));
                }
                values.add(stats.min.saturating_add(range));
                return Ok(values);
            }
            range
        } else {
            reader.u64()?
        };
        stats.max = stats.min.saturating_add(range);
        let above = reader.u64()? as f64 / UNITS_PER_NS;
        if above > (stats.max - stats.min) as f64 {
            return Err(reader.corrupt("statistics' mean beyond their extremes"));
        }
        stats.mean = stats.min as f64 + above;
        let deviation = code_to_spread(reader.u64()?) as f64 / UNITS_PER_NS;
        stats.m2 = deviation * deviation * count as f64;
        if histogram {
            let tag = reader.u64()?;
            let (low, high) = (bin_of(stats.min), BINS - 1);
            let (first, last, fullest) = if tag >= BINS as u64 {
                (0, BINS - 1, tag - BINS as u64)
            } else {
                (low, high, tag.saturating_add(low as u64))
            };
            if fullest > last as u64 {
                return Err(reader.corrupt("histogram bin out of range"));
            }
            let fullest = fullest as usize;
            let mut others = 0u64;
            for index in first..=last {
                if index != fullest {
                    let bin = reader.u64()?;
                    stats.histogram[index] = bin;
                    others = others
                        .checked_add(bin)
                        .ok_or_else(|| reader.corrupt("histogram larger than its count"))?;
                }
            }
            stats.histogram[fullest] = count
                .checked_sub(others)
                .ok_or_else(|| reader.corrupt("histogram larger than its count"))?;
        }
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn merge_equals_sequential(values in proptest::collection::vec(0u64..10_000_000_000, 1..100), split in 0usize..100) {
            let split = split.min(values.len());
            let mut all = Stats::default();
            values.iter().for_each(|v| all.add(*v));
            let (mut left, mut right) = (Stats::default(), Stats::default());
            values[..split].iter().for_each(|v| left.add(*v));
            values[split..].iter().for_each(|v| right.add(*v));
            left.merge(&right);
            prop_assert_eq!((left.count, left.min, left.max, left.histogram), (all.count, all.min, all.max, all.histogram));
            prop_assert!((left.mean - all.mean).abs() <= 1e-6 * all.mean.abs().max(1.0));
            prop_assert!((left.variance() - all.variance()).abs() <= 1e-6 * all.variance().max(1.0));
            let mut writer = ByteWriter::new();
            left.encode(&mut writer, true);
            let bytes = writer.into_inner();
            // Read back: count, extremes and histogram as they were, the mean to a 32nd
            // of a nanosecond, the spread to a relative 2^-8 (and that 32nd); and written
            // again, the same bytes.
            let read = Stats::decode(&mut ByteReader::new(&bytes, "t"), true).unwrap();
            prop_assert_eq!((read.count, read.min, read.max, read.histogram), (left.count, left.min, left.max, left.histogram));
            prop_assert!((read.mean - left.mean).abs() <= 1.0 / 32.0 + 1e-9 * left.mean);
            prop_assert!((read.variance().sqrt() - left.variance().sqrt()).abs() <= 1.0 / 32.0 + left.variance().sqrt() / 256.0);
            let mut again = ByteWriter::new();
            read.encode(&mut again, true);
            prop_assert_eq!(again.into_inner(), bytes);
        }
    }

    #[test]
    fn two_or_three_observations_round_as_their_values() {
        // Rounded to 7 significant bits, each value is (its low bits zero), the statistics
        // are those values' and still stored as them; the histogram is the one of the
        // values before rounding.
        let mut stats = Stats::default();
        for value in [1_500_003u64, 1_734_567, 1_999_999] {
            stats.add(value);
        }
        let histogram = stats.histogram;
        stats.round(7);
        let values = stats.values().unwrap();
        assert!(
            values.iter().all(|value| value.trailing_zeros() >= 14),
            "{values:?}"
        );
        assert_eq!(stats.histogram, histogram);
        let mut writer = ByteWriter::new();
        stats.encode(&mut writer, true);
        let bytes = writer.into_inner();
        // Count, minimum, range and middle value: no mean, spread or histogram.
        assert!(bytes.len() <= 10, "{bytes:?}");
        let read = Stats::decode(&mut ByteReader::new(&bytes, "t"), true).unwrap();
        assert_eq!(
            (read.min, read.max, read.mean),
            (stats.min, stats.max, stats.mean)
        );
    }

    #[test]
    fn two_or_three_observations_are_kept_as_themselves() {
        // A leaf a loop of two or three ran (a rank's own part of a halo exchange): its
        // values, exactly, in the bytes of the values — not a mean, a spread and a
        // histogram (14 bytes for two durations of about a microsecond before version 25).
        for values in [
            vec![1_500u64, 2_700],
            vec![900, 1_234, 56_789],
            vec![7, 7, 7],
        ] {
            let mut stats = Stats::default();
            values.iter().for_each(|value| stats.add(*value));
            let mut writer = ByteWriter::new();
            stats.encode(&mut writer, true);
            let bytes = writer.into_inner();
            assert!(bytes.len() <= 1 + 3 * values.len(), "{values:?}: {bytes:?}");
            let read = Stats::decode(&mut ByteReader::new(&bytes, "t"), true).unwrap();
            assert_eq!(
                (read.count, read.min, read.max, read.mean, read.histogram),
                (
                    stats.count,
                    stats.min,
                    stats.max,
                    stats.mean,
                    stats.histogram
                )
            );
            assert!((read.m2 - stats.m2).abs() <= 1e-6 * stats.m2.max(1.0));
        }
        // Extremes a precision level rounded (the histogram is the values'): the full form,
        // read back as it was written.
        let mut stats = Stats::default();
        [1_000_003u64, 1_234_567]
            .iter()
            .for_each(|value| stats.add(*value));
        stats.round(3);
        let mut writer = ByteWriter::new();
        stats.encode(&mut writer, true);
        let bytes = writer.into_inner();
        let read = Stats::decode(&mut ByteReader::new(&bytes, "t"), true).unwrap();
        assert_eq!(
            (read.count, read.min, read.max, read.histogram),
            (stats.count, stats.min, stats.max, stats.histogram)
        );
        let mut again = ByteWriter::new();
        read.encode(&mut again, true);
        assert_eq!(again.into_inner(), bytes);
    }

    #[test]
    fn rounding_keeps_significant_bits() {
        let mut stats = Stats::default();
        for value in [1_000_003, 1_234_567, 999_999, 1_100_000] {
            stats.add(value);
        }
        let exact = stats;
        stats.round(7);
        assert_eq!(
            (stats.count, stats.histogram),
            (exact.count, exact.histogram)
        );
        for (rounded, exact) in [
            (stats.min as f64, exact.min as f64),
            (stats.max as f64, exact.max as f64),
            (stats.mean, exact.mean),
            (stats.m2, exact.m2),
        ] {
            assert!(
                (rounded - exact).abs() <= exact.abs() / 128.0,
                "{rounded} vs {exact}"
            );
        }
        assert!(stats.min <= stats.max && stats.mean >= stats.min as f64);
        // 7 significant bits: the low bits are zero.
        assert!(stats.max.trailing_zeros() >= 14, "{}", stats.max);
    }

    #[test]
    fn spread_codes_take_two_bytes_and_read_back_within_a_relative_2_to_the_minus_8() {
        let mut previous = 0;
        for value in (0..64).flat_map(|shift| {
            [
                1u64 << shift,
                (1u64 << shift).saturating_add(1u64 << shift >> 1),
                u64::MAX >> shift,
            ]
        }) {
            let code = spread_to_code(value);
            assert!(code < 1 << 14, "{value}: {code}");
            let back = code_to_spread(code);
            assert!(back.abs_diff(value) <= value / 256, "{value} -> {back}");
            assert_eq!(spread_to_code(back), code, "{value}");
            if value > previous {
                assert!(code >= spread_to_code(previous));
            }
            previous = value;
        }
        assert_eq!(
            (
                spread_to_code(255),
                spread_to_code(256),
                code_to_spread(256)
            ),
            (255, 256, 256)
        );
        // Rounding up into a ninth bit: 511 = 0b1_1111_1111 is 512.
        assert_eq!(code_to_spread(spread_to_code(511)), 512);
    }

    #[test]
    fn no_bin_below_the_minimums_is_written() {
        // 500 ns .. 50 µs: bins 1 to 7 (those above the maximum's too), the fullest
        // implied, six written; bin 0 not.
        let mut stats = Stats::default();
        for value in [500, 600, 5_000, 50_000] {
            stats.add(value);
        }
        let mut writer = ByteWriter::new();
        stats.encode(&mut writer, true);
        let mut without = ByteWriter::new();
        stats.encode(&mut without, false);
        assert_eq!(writer.buffer.len() - without.buffer.len(), 7);
        let read = Stats::decode(&mut ByteReader::new(&writer.buffer, "t"), true).unwrap();
        assert_eq!(read.histogram, stats.histogram);
        // Rounded extremes that leave a bin outside them: every bin is written.
        let mut rounded = stats;
        rounded.min = 1_000;
        let mut writer = ByteWriter::new();
        rounded.encode(&mut writer, true);
        let read = Stats::decode(&mut ByteReader::new(&writer.buffer, "t"), true).unwrap();
        assert_eq!(read.histogram, stats.histogram);
        // A corrupt fullest index is refused.
        let mut corrupt = ByteWriter::new();
        stats.encode(&mut corrupt, false);
        corrupt.u64(3);
        assert!(Stats::decode(&mut ByteReader::new(&corrupt.buffer, "t"), true).is_err());
    }

    #[test]
    fn known_values() {
        let mut stats = Stats::default();
        for value in [2, 4, 4, 4, 5, 5, 7, 9] {
            stats.add(value);
        }
        assert_eq!((stats.count, stats.min, stats.max), (8, 2, 9));
        assert_eq!(stats.mean, 5.0);
        assert_eq!(stats.variance(), 4.0);
        assert_eq!(stats.histogram[0], 8);
    }
}

#[cfg(test)]
mod take_one_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn observations_taken_one_at_a_time_merge_back_to_the_whole(
            values in proptest::collection::vec(0u64..5_000_000, 2..200),
            taken in 1usize..10,
            binned in any::<bool>(),
        ) {
            // A block's statistics given back a repetition at a time (the folder places
            // the first few alone): count, extremes, histogram and total survive.
            let mut whole = Stats::default();
            values.iter().for_each(|value| whole.add(*value));
            if !binned {
                whole.histogram = [0; BINS];
            }
            let mut rest = whole;
            let mut merged = Stats::default();
            for _ in 0..taken.min(values.len() - 1) {
                let one = rest.take_one();
                prop_assert_eq!(one.count, 1);
                prop_assert!(one.min >= whole.min && one.max <= whole.max);
                merged.merge(&one);
            }
            merged.merge(&rest);
            prop_assert_eq!(merged.count, whole.count);
            prop_assert_eq!((merged.min, merged.max), (whole.min, whole.max));
            prop_assert_eq!(merged.histogram, whole.histogram);
            let total = whole.total();
            prop_assert!((merged.total() - total).abs() <= 1e-6 * total.max(1.0) + 1.0);
        }
    }
}

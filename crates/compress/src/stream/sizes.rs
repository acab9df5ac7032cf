//! Sizes that wander, kept exactly: a read or write whose requested sizes at a calling
//! context keep being new (compressed blocks of a checkpoint, variable-length records) has
//! its size in the stream's column, beside irregular offsets, so the key repeats and the
//! calls fold into one leaf, as random offsets do. The decision is
//! `cairn_model::WanderingSizes`' rule (the tracer's too): sites whose sizes follow a
//! cycle (a pattern of 4 KiB and 512 B, a loop over variables of their own sizes) keep
//! them in their keys; sizes that do not — random, or drifting in a band as deflated
//! chunks do — go to the column.
//!
//! The leaf keeps what analyses need without reading the column ([`ColumnSizes`]): the
//! sizes' sum, extremes, sum of squares and Darshan's access-size bins, all exact; the
//! column gives each call's own size to whatever expands the stream.

use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::Result;
use cairn_model::{size_bin, SIZE_BIN_NAMES};

use super::EventKey;

/// Key flag: a value of each occurrence is the stream's next column entry (after its
/// offset's, if that is in the column too). Which value the key's request says
/// ([`ColumnRole`], EVNT version 31): 0, the requested size, the key's result then, as
/// always, the result minus the request (every read and write; an MPI send);
/// [`COLUMN_HOLDS_CAPACITY`], a posted receive's capacity, the key's result then the
/// result itself (0); [`COLUMN_HOLDS_RESULT`], a completion's received bytes, the request
/// 0.
pub const SIZE_IN_COLUMN: u32 = 1 << 18;

/// The request of a [`SIZE_IN_COLUMN`] key whose column holds a posted receive's capacity.
pub const COLUMN_HOLDS_CAPACITY: u64 = 1;
/// The request of a [`SIZE_IN_COLUMN`] key whose column holds the call's result.
pub const COLUMN_HOLDS_RESULT: u64 = 2;

/// What the column entry of a call whose values differ holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnRole {
    /// Its requested size, the result relative to it (reads, writes, MPI sends, receives
    /// that got what they posted for).
    Request,
    /// A posted receive's capacity (`MPI_Irecv`); its result, 0, stays in the key.
    Capacity,
    /// Its result (a completion's received bytes); its request stays 0.
    Result,
}

/// `key` (of a [`SIZE_IN_COLUMN`] leaf) with the occurrence's column entry `entry` in
/// place: its request and result as the call had them, the flag cleared.
pub fn with_column_entry(key: &EventKey, entry: i64) -> EventKey {
    let entry = entry.max(0);
    let (request, result) = match key.request {
        COLUMN_HOLDS_CAPACITY => (entry as u64, key.result.wrapping_sub(entry)),
        COLUMN_HOLDS_RESULT => (0, entry),
        _ => (entry as u64, key.result),
    };
    EventKey {
        request,
        result,
        flags: key.flags & !SIZE_IN_COLUMN,
        ..*key
    }
}

const BINS: usize = SIZE_BIN_NAMES.len();

/// The sizes of a leaf whose sizes are in the column, over all its occurrences.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSizes {
    pub count: u64,
    pub sum: u64,
    pub min: u64,
    pub max: u64,
    /// Sum of the squared sizes (for their spread).
    pub squares: f64,
    /// How many sizes fall in each of Darshan's access-size bins
    /// (`cairn_model::SIZE_BINS`).
    pub bins: [u64; BINS],
    /// How many of the leaf's occurrences in a row one column entry stands for (EVNT
    /// version 31): a message whose size changes at each rebuild of a time-step loop's
    /// neighbour lists, and so is one size over the period's 19 steps, takes an entry a
    /// period, not a step. 1 for values that may change at every call.
    pub repeat: u64,
}

impl ColumnSizes {
    pub fn of(size: u64) -> ColumnSizes {
        let mut bins = [0; BINS];
        bins[size_bin(size)] = 1;
        ColumnSizes {
            count: 1,
            sum: size,
            min: size,
            max: size,
            squares: size as f64 * size as f64,
            bins,
            repeat: 1,
        }
    }

    /// `count` sizes of `size` (at least one).
    pub fn repeated(size: u64, count: u64) -> ColumnSizes {
        let mut figures = ColumnSizes::of(size);
        let count = count.max(1);
        figures.count = count;
        figures.sum = size.saturating_mul(count);
        figures.squares = size as f64 * size as f64 * count as f64;
        figures.bins[size_bin(size)] = count;
        figures
    }

    /// `count` sizes of 0: what a leaf that lost its figures is written with (never made
    /// by the encoder), so the stream still reads.
    pub(super) fn unknown(count: u64) -> ColumnSizes {
        ColumnSizes {
            count,
            bins: [count, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ..ColumnSizes::of(0)
        }
    }

    pub fn merge(&mut self, other: &ColumnSizes) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        self.count = self.count.saturating_add(other.count);
        self.sum = self.sum.saturating_add(other.sum);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.squares += other.squares;
        for (bin, other) in self.bins.iter_mut().zip(other.bins) {
            *bin = bin.saturating_add(other);
        }
        // Only the leaves a merge of loops made repeat entries, and no fold merges those.
        if self.repeat != other.repeat {
            self.repeat = 1;
        }
    }

    /// Written after the leaf's other figures; its count is the leaf's occurrences.
    pub(super) fn encode(&self, out: &mut ByteWriter) {
        out.u64(self.min);
        out.u64(self.max - self.min);
        out.u64(self.sum.saturating_sub(self.min.saturating_mul(self.count)));
        out.f64(self.squares);
        let used = self
            .bins
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
            .fold(0u64, |mask, (bin, _)| mask | 1 << bin);
        out.u64(used);
        for count in self.bins.iter().filter(|count| **count > 0) {
            out.u64(*count);
        }
        out.u64(self.repeat.max(1) - 1);
    }

    /// Reads what [`ColumnSizes::encode`] wrote for a leaf of `count` occurrences, checking
    /// that its figures agree with one another.
    pub(super) fn decode(reader: &mut ByteReader, count: u64) -> Result<ColumnSizes> {
        let min = reader.u64()?;
        let max = min
            .checked_add(reader.u64()?)
            .ok_or_else(|| reader.corrupt("column sizes out of range"))?;
        let above = reader.u64()?;
        let sum = min
            .checked_mul(count)
            .and_then(|low| low.checked_add(above))
            .ok_or_else(|| reader.corrupt("column sizes out of range"))?;
        let squares = reader.f64()?;
        let used = reader.u64()?;
        if used >> BINS != 0 {
            return Err(reader.corrupt("column size bins out of range"));
        }
        let mut bins = [0; BINS];
        let mut counted = 0u64;
        for (bin, slot) in bins.iter_mut().enumerate() {
            if used & 1 << bin != 0 {
                *slot = reader.u64()?;
                counted = counted
                    .checked_add(*slot)
                    .ok_or_else(|| reader.corrupt("column size bins out of range"))?;
            }
        }
        let repeat = reader.u64()?.saturating_add(1);
        if counted != count
            || count == 0
            || (sum as u128) > max as u128 * count as u128
            || !count.is_multiple_of(repeat)
        {
            return Err(reader.corrupt("column sizes do not agree with their leaf"));
        }
        Ok(ColumnSizes {
            count,
            sum,
            min,
            max,
            squares: if squares.is_finite() {
                squares.max(0.0)
            } else {
                0.0
            },
            bins,
            repeat,
        })
    }
}

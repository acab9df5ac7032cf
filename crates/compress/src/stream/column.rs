//! A stream's column: the values that did not fold into keys, one per occurrence of the
//! leaves that take them, in event order — irregular offsets (each an offset delta and an
//! access order, [`column_entry`](super::relative)) and sizes of their own.
//!
//! Design decisions:
//! - Each call site (call and calling context) keeps its own three sequences: its offsets'
//!   deltas, their access orders and its sizes. A leaf takes its offset from the first two
//!   and its size from the third, so readers keep a cursor in each and nothing says which
//!   entry is which; sites are numbered in the order they first took a value, so keys
//!   renumbered by a merge still find theirs. Kept apart, each sequence's values are
//!   alike: a size of 1–8 KiB takes 13 bits, not the 16 of a varint beside 5-byte offset
//!   entries; 4 KiB-aligned random offsets share their divisor; the transfer right after a
//!   seek to a random offset (step 0) costs nothing beside the seek's 15 bits.
//! - Each sequence is cut into blocks of up to [`BLOCK`] values, each written as its
//!   minimum, the greatest common divisor of the values' distances from it and those
//!   quotients bit-packed at the width of the largest — or as varints when that is
//!   smaller (one outlier would widen every value of a packed block). Random values take
//!   their entropy and no more; a block of equal values takes 4 bytes. A site's sizes that
//!   all fit a byte (a text log's line lengths) are written a byte each instead, for the
//!   section's zstd to find their order ([`Column::write`]).
//! - The column stays packed in memory, written as it grows (values wait in an open block
//!   of at most [`BLOCK`]), and is read block by block through a [`ColumnCursor`]: a
//!   trace's column costs its bytes in memory, never more, however many values a corrupt
//!   file claims.

use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::{FormatError, Result};

use crate::hash::FastMap;

/// Most values in a block.
pub const BLOCK: usize = 128;

/// A sequence of integers, packed block by block.
#[derive(Clone, Debug, Default)]
struct Packed {
    /// Whole blocks, as written.
    bytes: Vec<u8>,
    /// Values not yet in a block.
    open: Vec<i64>,
    len: u64,
    last: Option<i64>,
}

impl Packed {
    /// `seal`: a full block is written (else the values wait, as a draft's do).
    fn push(&mut self, value: i64, seal: bool) {
        self.open.push(value);
        self.len += 1;
        self.last = Some(value);
        if seal && self.open.len() == BLOCK {
            let mut out = ByteWriter {
                buffer: std::mem::take(&mut self.bytes),
            };
            write_block(&self.open, &mut out);
            self.bytes = out.buffer;
            self.open.clear();
        }
    }

    /// [`Packed::push`] of each of `values`, whole blocks written straight from the slice
    /// (a draft's million offsets were pushed one by one: a tenth of a trace build).
    fn extend(&mut self, mut values: &[i64], seal: bool) {
        let Some(last) = values.last() else {
            return;
        };
        self.len += values.len() as u64;
        self.last = Some(*last);
        if !seal {
            self.open.extend_from_slice(values);
            return;
        }
        if !self.open.is_empty() {
            let take = (BLOCK - self.open.len()).min(values.len());
            self.open.extend_from_slice(&values[..take]);
            values = &values[take..];
            if self.open.len() < BLOCK {
                return;
            }
        }
        let mut out = ByteWriter {
            buffer: std::mem::take(&mut self.bytes),
        };
        if self.open.len() == BLOCK {
            write_block(&self.open, &mut out);
            self.open.clear();
        }
        let mut blocks = values.chunks_exact(BLOCK);
        for block in &mut blocks {
            write_block(block, &mut out);
        }
        self.bytes = out.buffer;
        self.open.extend_from_slice(blocks.remainder());
    }

    /// The values not yet in a block: all of a draft's.
    fn unsealed(&self) -> &[i64] {
        &self.open
    }

    fn iter(&self) -> PackedIter<'_> {
        PackedIter {
            reader: ByteReader::new(&self.bytes, "column"),
            block: [0; BLOCK],
            at: 0,
            filled: 0,
            open: &self.open,
            open_at: 0,
        }
    }

    /// `u` values, `u` bytes, the blocks (the open values written as a last, shorter one).
    /// `bytewise`: values that all fit a byte are written a byte each, as they are (see
    /// [`Column::write`]).
    fn write(&self, out: &mut ByteWriter, bytewise: bool) {
        if bytewise {
            // One pass: the bytes, unless some value does not fit one.
            let bytes: Option<Vec<u8>> =
                self.iter().map(|value| u8::try_from(value).ok()).collect();
            if let Some(bytes) = bytes {
                out.u64(self.len << 1 | 1);
                out.bytes(&bytes);
                return;
            }
        }
        let mut blocks = ByteWriter {
            buffer: self.bytes.clone(),
        };
        if !self.open.is_empty() {
            write_block(&self.open, &mut blocks);
        }
        out.u64(self.len << 1);
        out.bytes(&blocks.buffer);
    }

    /// What [`Packed::write`] wrote, every block's header and length checked.
    fn read(reader: &mut ByteReader) -> Result<Packed> {
        let (len, bytewise) = {
            let form = reader.u64()?;
            (form >> 1, form & 1 != 0)
        };
        let bytes = reader.bytes()?;
        if bytewise {
            if bytes.len() as u64 != len {
                return Err(reader.corrupt("column's bytes do not hold its length"));
            }
            // Packed again: a byte each at most, and read the one way.
            let mut packed = Packed::default();
            for byte in bytes {
                packed.push(i64::from(*byte), true);
            }
            packed.last = None;
            return Ok(packed);
        }
        let mut blocks = ByteReader::new(bytes, "column");
        let mut values = 0u64;
        while !blocks.is_empty() {
            values += skip_block(&mut blocks)? as u64;
        }
        if values != len {
            return Err(reader.corrupt("column's blocks do not hold its length"));
        }
        Ok(Packed {
            bytes: bytes.to_vec(),
            open: Vec::new(),
            len,
            // Only a column being written is asked for its last value.
            last: None,
        })
    }
}

impl PartialEq for Packed {
    fn eq(&self, other: &Packed) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

/// Writes one block: `u` values − 1, `i` minimum, `u` divisor, `u` width · 2 + form, then
/// the quotients (value − minimum) / divisor: form 0 bit-packed, `width` bits each, least
/// significant first; form 1 a varint each.
fn write_block(values: &[i64], out: &mut ByteWriter) {
    let min = values.iter().copied().min().unwrap_or(0);
    // The divisor's power of two is the fewest trailing zeros; its odd part the odd
    // parts' greatest common divisor, which random values bring to 1 within a few (4 KiB-
    // aligned random steps kept the whole gcd above 4096 to the block's end: a quarter of
    // building the trace of 100,000 random reads).
    // The fewest trailing zeros are those of all distances or-ed together.
    let (mut any, mut odd) = (0u64, 0u64);
    for value in values {
        let distance = (*value as u64).wrapping_sub(min as u64);
        any |= distance;
        if odd != 1 && distance != 0 {
            odd = gcd(odd, distance >> distance.trailing_zeros());
        }
    }
    let zeros = any.trailing_zeros();
    let divisor = if any == 0 { 0 } else { odd << zeros };
    // Each quotient once: a shift when the divisor is a power of two (aligned offsets), a
    // division otherwise.
    let mut quotients = [0u64; BLOCK];
    let quotients = &mut quotients[..values.len()];
    for (quotient, value) in quotients.iter_mut().zip(values) {
        let distance = (*value as u64).wrapping_sub(min as u64);
        *quotient = match divisor {
            0 => 0,
            _ if divisor.is_power_of_two() => distance >> zeros,
            _ => distance / divisor,
        };
    }
    let largest = quotients.iter().copied().max().unwrap_or(0);
    let width = 64 - largest.leading_zeros() as u64;
    let packed = (values.len() as u64 * width).div_ceil(8);
    // A varint takes a byte at least: never fewer bytes than values of a byte or less.
    let varints: u64 = if width <= 8 {
        u64::MAX
    } else {
        quotients.iter().map(|quotient| varint_len(*quotient)).sum()
    };
    out.u64(values.len() as u64 - 1);
    out.i64(min);
    out.u64(divisor);
    if varints < packed {
        out.u64(width << 1 | 1);
        for quotient in quotients.iter() {
            out.u64(*quotient);
        }
        return;
    }
    out.u64(width << 1);
    // Eight bytes at a time (a byte at a time was most of the block's cost).
    out.buffer.reserve(packed as usize + 8);
    let mut bits = 0u128;
    let mut held = 0;
    for quotient in quotients.iter() {
        bits |= u128::from(*quotient) << held;
        held += width;
        if held >= 64 {
            out.buffer.extend_from_slice(&(bits as u64).to_le_bytes());
            bits >>= 64;
            held -= 64;
        }
    }
    let rest = (held as usize).div_ceil(8);
    out.buffer
        .extend_from_slice(&(bits as u64).to_le_bytes()[..rest]);
}

/// A block's header: (values, minimum, divisor, width, varints).
fn block_header(reader: &mut ByteReader) -> Result<(usize, i64, u64, u32, bool)> {
    let values = reader.u64()?;
    if values >= BLOCK as u64 {
        return Err(reader.corrupt("column block larger than a block"));
    }
    let min = reader.i64()?;
    let divisor = reader.u64()?;
    let form = reader.u64()?;
    let width = form >> 1;
    if width > 64 {
        return Err(reader.corrupt("column block wider than 64 bits"));
    }
    Ok((
        values as usize + 1,
        min,
        divisor,
        width as u32,
        form & 1 != 0,
    ))
}

/// Checks one block and moves past it: its number of values.
fn skip_block(reader: &mut ByteReader) -> Result<usize> {
    let (values, _, _, width, varints) = block_header(reader)?;
    if varints {
        for _ in 0..values {
            reader.u64()?;
        }
    } else {
        reader.fixed((values * width as usize).div_ceil(8))?;
    }
    Ok(values)
}

/// Decodes one block (checked when the column was read) into `block`: its number of values.
fn read_block(reader: &mut ByteReader, block: &mut [i64; BLOCK]) -> Result<usize> {
    let (values, min, divisor, width, varints) = block_header(reader)?;
    let value = |quotient: u64| min.wrapping_add(quotient.wrapping_mul(divisor) as i64);
    if varints {
        for slot in &mut block[..values] {
            *slot = value(reader.u64()?);
        }
        return Ok(values);
    }
    let bytes = reader.fixed((values * width as usize).div_ceil(8))?;
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let mut bits = 0u128;
    let mut held = 0;
    let mut next = bytes.iter();
    for slot in &mut block[..values] {
        while held < width {
            bits |= u128::from(*next.next().unwrap_or(&0)) << held;
            held += 8;
        }
        *slot = value(bits as u64 & mask);
        bits >>= width;
        held -= width;
    }
    Ok(values)
}

/// Binary (Stein's): shifts and subtractions, no division (Euclid's divisions were a
/// third of building the trace of 100,000 random reads).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    if a == 0 || b == 0 {
        return a | b;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            (a, b) = (b, a);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

fn varint_len(value: u64) -> u64 {
    (64 - value.leading_zeros() as u64).div_ceil(7).max(1)
}

struct PackedIter<'a> {
    reader: ByteReader<'a>,
    block: [i64; BLOCK],
    at: usize,
    filled: usize,
    open: &'a [i64],
    open_at: usize,
}

impl Iterator for PackedIter<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        if self.at == self.filled && !self.reader.is_empty() {
            // Checked when read or written: a failure here leaves the rest unread.
            self.filled = read_block(&mut self.reader, &mut self.block).unwrap_or(0);
            self.at = 0;
            if self.filled == 0 {
                self.reader = ByteReader::new(&[], "column");
            }
        }
        if self.at < self.filled {
            self.at += 1;
            return Some(self.block[self.at - 1]);
        }
        let value = self.open.get(self.open_at).copied();
        self.open_at += 1;
        value
    }
}

/// A call site's key in a column: its call and calling context.
pub fn site(call: u16, context: u32) -> u64 {
    u64::from(call) << 32 | u64::from(context)
}

/// One call site's values.
#[derive(Clone, Debug, Default, PartialEq)]
struct Slot {
    deltas: Packed,
    orders: Packed,
    sizes: Packed,
}

/// A stream's column (see the module's documentation).
#[derive(Clone, Debug, Default)]
pub struct Column {
    /// In the order the sites first took a value.
    slots: Vec<Slot>,
    /// Each slot's site, and the slot of each site (a column being written: one read back
    /// is only read or written again whole).
    sites: Vec<u64>,
    slot_of: FastMap<u64, usize>,
    /// The site that took the last value and its slot: the next is most often the same.
    last_site: Option<(u64, usize)>,
    /// A draft's values are not packed (see [`Column::draft`]).
    draft: bool,
}

impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        self.slots == other.slots
    }
}

impl Column {
    /// A column whose values stay unpacked until [`Column::extend`] takes them: for values
    /// pushed on trial (a tracer's record, taken whole if every repetition fits its key),
    /// so that they are packed once, not packed, unpacked and packed again.
    pub fn draft() -> Column {
        Column {
            draft: true,
            ..Column::default()
        }
    }

    fn slot(&mut self, site: u64) -> &mut Slot {
        let index = match self.last_site {
            Some((last, index)) if last == site => index,
            _ => {
                let next = self.slots.len();
                let index = *self.slot_of.entry(site).or_insert(next);
                if index == next {
                    self.slots.push(Slot::default());
                    self.sites.push(site);
                }
                self.last_site = Some((site, index));
                index
            }
        };
        &mut self.slots[index]
    }

    /// An irregular offset's entry at `site`: 4 × delta + access order.
    pub fn push_offset(&mut self, site: u64, entry: i64) {
        let seal = !self.draft;
        let slot = self.slot(site);
        slot.deltas.push(entry >> 2, seal);
        slot.orders.push(entry & 3, seal);
    }

    pub fn push_size(&mut self, site: u64, size: i64) {
        let seal = !self.draft;
        self.slot(site).sizes.push(size, seal);
    }

    /// The size pushed last at `site` (by this encoder: a column read back has none).
    pub fn last_size(&self, site: u64) -> Option<i64> {
        self.slots[*self.slot_of.get(&site)?].sizes.last
    }

    pub fn offsets(&self) -> u64 {
        self.slots.iter().map(|slot| slot.deltas.len).sum()
    }

    pub fn sizes(&self) -> u64 {
        self.slots.iter().map(|slot| slot.sizes.len).sum()
    }

    /// Offsets and sizes.
    pub fn len(&self) -> u64 {
        self.offsets() + self.sizes()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Appends a draft ([`Column::draft`]: its values all unpacked), its sites in the order
    /// they first took a value: as if its values had been pushed here.
    pub fn extend(&mut self, draft: &Column) {
        debug_assert!(draft.draft, "only a draft's values are all at hand");
        let seal = !self.draft;
        for (slot, site) in draft.slots.iter().zip(&draft.sites) {
            let into = self.slot(*site);
            into.deltas.extend(slot.deltas.unsealed(), seal);
            into.orders.extend(slot.orders.unsealed(), seal);
            into.sizes.extend(slot.sizes.unsealed(), seal);
        }
    }

    /// Each value less the value at the same place of `base`, site by site (the same
    /// sites in the same order, as many values each), or `None` where they do not line
    /// up: a member's column written against the previous member's in a stream ranks
    /// share (EVNT version 32), whose offsets mostly differ by the distance between the
    /// ranks' blocks, so each value packs to a few bits.
    pub fn less(&self, base: &Column) -> Option<Column> {
        self.combined(base, i64::wrapping_sub)
    }

    /// The inverse of [`Column::less`].
    pub fn plus(&self, base: &Column) -> Option<Column> {
        self.combined(base, i64::wrapping_add)
    }

    fn combined(&self, base: &Column, op: fn(i64, i64) -> i64) -> Option<Column> {
        if self.slots.len() != base.slots.len() {
            return None;
        }
        let mut slots = Vec::with_capacity(self.slots.len());
        for (slot, other) in self.slots.iter().zip(&base.slots) {
            let mut combined = Slot::default();
            for (into, (ours, theirs)) in [
                (&mut combined.deltas, (&slot.deltas, &other.deltas)),
                (&mut combined.orders, (&slot.orders, &other.orders)),
                (&mut combined.sizes, (&slot.sizes, &other.sizes)),
            ] {
                if ours.len != theirs.len {
                    return None;
                }
                for (a, b) in ours.iter().zip(theirs.iter()) {
                    into.push(op(a, b), true);
                }
                // (A damaged column read back may yield fewer values than it says.)
                if into.len != ours.len {
                    return None;
                }
            }
            slots.push(combined);
        }
        Some(Column {
            slots,
            ..Column::default()
        })
    }

    /// Reads the column from its start.
    pub fn cursor(&self) -> ColumnCursor<'_> {
        ColumnCursor {
            column: self,
            slots: Vec::new(),
            slot_of: FastMap::default(),
        }
    }

    /// `u` sites, then each site's deltas, orders and sizes, each `u` values × 2 + b, `u`
    /// bytes, then blocks (b = 0, see [`write_block`]) or a byte each (b = 1).
    ///
    /// A site's sizes that all fit a byte — a text log's lines — go a byte each: the
    /// section's zstd finds the repeats in their order and codes skewed ones below their
    /// width, which it cannot once they are bit-packed (a residual line's lengths, 21 to
    /// 32 bytes, took 6% more of the trace so). Orders and steps stay in blocks: random
    /// ones, which are most of them, take fewer bytes packed.
    pub fn write(&self, out: &mut ByteWriter) {
        out.u64(self.slots.len() as u64);
        for slot in &self.slots {
            slot.deltas.write(out, false);
            slot.orders.write(out, false);
            slot.sizes.write(out, true);
        }
    }

    pub fn read(reader: &mut ByteReader) -> Result<Column> {
        // Each site takes at least six bytes.
        let sites = reader.count(6)?;
        let mut slots = Vec::with_capacity(sites);
        for _ in 0..sites {
            let slot = Slot {
                deltas: Packed::read(reader)?,
                orders: Packed::read(reader)?,
                sizes: Packed::read(reader)?,
            };
            if slot.deltas.len != slot.orders.len {
                return Err(FormatError::Corrupt(
                    "column's offsets and access orders differ in number".into(),
                ));
            }
            slots.push(slot);
        }
        Ok(Column {
            slots,
            ..Column::default()
        })
    }
}

/// Takes a column's offsets and sizes, each site's in order: a site's first value is from
/// the next slot not yet taken (sites meet their values in the order they were pushed).
pub struct ColumnCursor<'a> {
    column: &'a Column,
    slots: Vec<(PackedIter<'a>, PackedIter<'a>, PackedIter<'a>)>,
    slot_of: FastMap<u64, usize>,
}

impl<'a> ColumnCursor<'a> {
    fn slot(&mut self, site: u64) -> Option<&mut (PackedIter<'a>, PackedIter<'a>, PackedIter<'a>)> {
        let next = self.slots.len();
        let index = *self.slot_of.entry(site).or_insert(next);
        if index == next {
            let slot = self.column.slots.get(next)?;
            self.slots
                .push((slot.deltas.iter(), slot.orders.iter(), slot.sizes.iter()));
        }
        self.slots.get_mut(index)
    }

    /// `site`'s next offset entry (4 × delta + access order).
    pub fn offset(&mut self, site: u64) -> Option<i64> {
        let (deltas, orders, _) = self.slot(site)?;
        let delta = deltas.next()?;
        let order = orders.next()?;
        Some(delta.wrapping_mul(4) | order & 3)
    }

    /// `site`'s next size.
    pub fn size(&mut self, site: u64) -> Option<i64> {
        self.slot(site)?.2.next()
    }

    /// The size of a leaf's next occurrence when each of its entries stands for `repeat`
    /// occurrences in a row (`ColumnSizes::repeat`): a new entry of `site` every `repeat`
    /// occurrences, else the last again. `met`: the leaf's occurrences met so far and the
    /// entry last taken, kept by the reader per leaf.
    pub fn repeated_size(&mut self, site: u64, repeat: u64, met: &mut (u64, i64)) -> i64 {
        if met.0.is_multiple_of(repeat.max(1)) {
            met.1 = self.size(site).unwrap_or(0);
        }
        met.0 += 1;
        met.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(column: &Column) -> Column {
        let mut out = ByteWriter::new();
        column.write(&mut out);
        let mut reader = ByteReader::new(&out.buffer, "test");
        let read = Column::read(&mut reader).expect("reads back");
        assert!(reader.is_empty());
        read
    }

    /// Each value's site, then whether it is an offset, then the value.
    type Pushed = Vec<(u64, bool, i64)>;

    #[test]
    fn a_members_column_less_the_previous_members_packs_small_and_comes_back() {
        // Two ranks' header and data entries (300 segments): the second rank's offsets are
        // the first's less its block (a constant per site), its orders now and then others.
        let mut first = Column::default();
        let mut second = Column::default();
        for segment in 0..300i64 {
            let header = (segment * 7919) % 4001 * 8 - 16_000;
            let data = 262_144 + (segment * 104_729) % 3 * 2048;
            first.push_offset(1, header * 4 + 2);
            second.push_offset(
                1,
                (header - 65_536) * 4 + if segment % 7 == 0 { 3 } else { 2 },
            );
            first.push_offset(2, data * 4 + 2);
            second.push_offset(2, (data + 65_536) * 4 + 2);
        }
        let (first, second) = (round_trip(&first), round_trip(&second));
        let less = second.less(&first).expect("the same sites, as many values");
        let size = |column: &Column| {
            let mut out = ByteWriter::new();
            column.write(&mut out);
            out.buffer.len()
        };
        assert!(
            size(&less) * 4 < size(&second),
            "{} vs {}",
            size(&less),
            size(&second)
        );
        let back = round_trip(&less).plus(&first).expect("lines up");
        assert!(back == second);
        // A column with another site, or another number of values, does not line up.
        let mut other = Column::default();
        other.push_offset(1, 4);
        assert!(other.less(&first).is_none());
    }

    fn taken(column: &Column, pushed: &Pushed) -> Vec<Option<i64>> {
        let mut cursor = column.cursor();
        pushed
            .iter()
            .map(|(site, offset, _)| match offset {
                true => cursor.offset(*site),
                false => cursor.size(*site),
            })
            .collect()
    }

    fn bytes(column: &Column) -> usize {
        let mut out = ByteWriter::new();
        column.write(&mut out);
        out.buffer.len()
    }

    proptest! {
        #[test]
        fn values_come_back_in_order(
            pushed in proptest::collection::vec((0u64..4, any::<bool>(), any::<i64>()), 0..900),
            bytewise in any::<bool>(),
        ) {
            // Sizes that fit a byte are written a byte each.
            let pushed: Pushed = pushed
                .into_iter()
                .map(|(site, offset, value)| (site, offset, if bytewise && !offset { value & 255 } else { value }))
                .collect();
            let mut column = Column::default();
            for (site, offset, value) in &pushed {
                match offset {
                    true => column.push_offset(*site, *value),
                    false => column.push_size(*site, *value),
                }
            }
            let values: Vec<Option<i64>> = pushed.iter().map(|(_, _, value)| Some(*value)).collect();
            prop_assert_eq!(&taken(&column, &pushed), &values);
            let read = round_trip(&column);
            prop_assert_eq!(&taken(&read, &pushed), &values);
            prop_assert_eq!(&read, &column);
            prop_assert_eq!(read.len(), pushed.len() as u64);
            // Two halves pushed apart and joined are the column pushed whole.
            let (first, second) = pushed.split_at(pushed.len() / 2);
            // The second half on trial (a draft), as a tracer's record is.
            let mut halves = [Column::default(), Column::draft()];
            for (half, values) in halves.iter_mut().zip([first, second]) {
                for (site, offset, value) in values {
                    match offset {
                        true => half.push_offset(*site, *value),
                        false => half.push_size(*site, *value),
                    }
                }
            }
            let [mut joined, second] = halves;
            joined.extend(&second);
            prop_assert_eq!(&joined, &column);
        }

        #[test]
        fn the_binary_gcd_is_euclids(a in any::<u64>(), b in any::<u64>(), shift in 0u32..40) {
            let euclid = |mut a: u64, mut b: u64| {
                while b != 0 {
                    (a, b) = (b, a % b);
                }
                a
            };
            let (a, b) = (a >> shift << shift, b >> (shift / 2) << shift);
            prop_assert_eq!(gcd(a, b), euclid(a, b));
            prop_assert_eq!(gcd(a, 0), a);
            prop_assert_eq!(gcd(0, b), b);
        }

        #[test]
        fn corrupt_columns_are_errors_not_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut reader = ByteReader::new(&bytes, "test");
            if let Ok(column) = Column::read(&mut reader) {
                let mut cursor = column.cursor();
                let mut offsets = 0;
                while cursor.offset(0).is_some() {
                    offsets += 1;
                }
                prop_assert!(offsets <= column.offsets());
            }
        }
    }

    #[test]
    fn random_values_take_their_bits_and_each_site_its_own_width() {
        let mut state = 7u64;
        let mut random = |range: i64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            (state >> 33) as i64 % range
        };
        // Sizes of 1 – 8 KiB: 13 bits each, packed; varints would take 16.
        let mut column = Column::default();
        for _ in 0..1280 {
            column.push_size(1, 1024 + random(7169));
        }
        assert!(
            bytes(&column) < 1280 * 13 / 8 + 10 * 16,
            "{}",
            bytes(&column)
        );
        // A seek to a 4 KiB-aligned step within ±64 MiB: 15 bits, 2 for the order; the
        // transfer right after it (step 0, always consecutive) at a site of its own costs
        // next to nothing.
        let mut column = Column::default();
        for index in 0..1280 {
            let delta = (random(32768) - 16384) * 4096;
            column.push_offset(1, (delta * 4) | if index % 3 == 0 { 0 } else { 2 });
            column.push_offset(2, 3);
        }
        assert!(
            bytes(&column) < 1280 * 17 / 8 + 20 * 24,
            "{}",
            bytes(&column)
        );
        // Equal values: a few bytes a block.
        let mut column = Column::default();
        for _ in 0..1280 {
            column.push_size(1, 4096);
        }
        assert!(bytes(&column) <= 10 * 5 + 8, "{}", bytes(&column));
    }
}

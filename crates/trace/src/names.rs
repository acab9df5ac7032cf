//! The file table on disk (FILE section version 3): consecutive names that differ only in
//! their last number, stepping evenly (`ckpt-000.dat`, `ckpt-001.dat`, …), are stored as one
//! run — prefix, suffix, zero-padding width, first value, step, count — so a program that
//! writes one file per time step does not make the trace grow with the number of steps.
//! And a block of such entries repeated with every number in it stepping evenly (each
//! rank's files of a program whose directories hold the rank: mdtest `-u`) is stored once
//! with its steps, so the table does not grow with the ranks either. Both are exact: the
//! reader gets every name back.

use cairn_format::bytes::{ByteReader, ByteWriter};

use crate::noise::Noise;
use crate::{FileInfo, Result, TraceError};

/// Most files a trace may expand to; a damaged run count cannot make the reader allocate
/// more.
pub const MAX_FILES: u64 = 1 << 22;
/// Most bytes a trace's file names may take together once expanded: runs and blocks let a
/// few bytes stand for millions of names, each as long as the prefix a damaged entry
/// claims. 512 MiB is 4 M names of 128 bytes.
pub const MAX_NAME_BYTES: u64 = 1 << 29;

/// A name split around its last run of digits.
pub(crate) struct Split<'a> {
    pub prefix: &'a [u8],
    pub digits: &'a [u8],
    pub suffix: &'a [u8],
    pub value: u64,
}

pub(crate) fn split(path: &[u8]) -> Option<Split<'_>> {
    let end = path.iter().rposition(u8::is_ascii_digit)? + 1;
    let start = path[..end]
        .iter()
        .rposition(|byte| !byte.is_ascii_digit())
        .map_or(0, |at| at + 1);
    let digits = &path[start..end];
    if digits.len() > 18 {
        return None;
    }
    let value = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(Split {
        prefix: &path[..start],
        digits,
        suffix: &path[end..],
        value,
    })
}

/// A file name's sort key, in natural order: text as bytes, numbers (runs of digits) by
/// value, so `part-2` comes before `part-10` wherever the number is — consecutive numbered
/// names stay together for the file table's runs, and each rank's files (`tree.2/…` before
/// `tree.10/…`) for its blocks. Ties (`01` and `1`) by the bytes. The key is bytes (a
/// number is 0, its length and its digits without leading zeros; a text byte is itself,
/// 1 escaped as 1 1), so sorting a million names compares bytes.
pub(crate) fn natural_order(path: &[u8]) -> (Vec<u8>, &[u8]) {
    let mut key = Vec::with_capacity(path.len() + 8);
    let mut at = 0;
    while at < path.len() {
        let byte = path[at];
        if !byte.is_ascii_digit() {
            if byte <= 1 {
                key.push(1);
            }
            key.push(byte);
            at += 1;
            continue;
        }
        let start = at;
        while at < path.len() && path[at].is_ascii_digit() {
            at += 1;
        }
        let digits = &path[start..at];
        let value = &digits[digits
            .iter()
            .position(|digit| *digit != b'0')
            .unwrap_or(digits.len())..];
        key.push(0);
        key.push(value.len().min(255) as u8);
        key.extend_from_slice(value);
    }
    (key, path)
}

/// Zero-padding width of a number as written: 0 when it has no leading zero.
fn width(digits: &[u8]) -> usize {
    if digits.len() > 1 && digits[0] == b'0' {
        digits.len()
    } else {
        0
    }
}

fn format_number(value: u64, width: usize) -> Vec<u8> {
    format!("{value:0width$}").into_bytes()
}

struct Run<'a> {
    prefix: &'a [u8],
    suffix: &'a [u8],
    width: usize,
    start: u64,
    step: i64,
    count: u64,
    noise: Option<Noise>,
}

impl Run<'_> {
    fn next_value(&self) -> Option<u64> {
        stepped(self.start, self.step, self.count as i64)
    }
}

/// `start + step · times`, if it is a number a name can hold (runs, and blocks' numbers).
fn stepped(start: u64, step: i64, times: i64) -> Option<u64> {
    step.checked_mul(times)
        .and_then(|offset| (start as i64).checked_add(offset))
        .and_then(|value| u64::try_from(value).ok())
}

fn noise_code(noise: Option<Noise>) -> u64 {
    noise.map_or(0, Noise::code)
}

/// One entry of the table: a name, or a run of numbered names.
#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Name {
        path: Vec<u8>,
        noise: Option<Noise>,
    },
    Run {
        prefix: Vec<u8>,
        suffix: Vec<u8>,
        width: usize,
        start: u64,
        step: i64,
        count: u64,
        noise: Option<Noise>,
    },
}

/// A digit run of a name that a number stands for: where, its value and padding width.
struct Number {
    start: usize,
    end: usize,
    value: u64,
    width: usize,
}

/// The digit runs of `text` written as `format_number` writes them (others are text).
fn numbers(text: &[u8]) -> Vec<Number> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        if !text[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < text.len() && text[at].is_ascii_digit() {
            at += 1;
        }
        let digits = &text[start..at];
        if digits.len() > 18 {
            continue;
        }
        let value: u64 = std::str::from_utf8(digits)
            .ok()
            .and_then(|digits| digits.parse().ok())
            .unwrap_or(0);
        if format_number(value, width(digits)) == digits {
            found.push(Number {
                start,
                end: at,
                value,
                width: width(digits),
            });
        }
    }
    found
}

/// `text` with its numbers moved by `deltas` (one per number, in order).
fn moved(text: &[u8], deltas: &[i64], times: i64) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() + 4);
    let mut at = 0;
    for (number, delta) in numbers(text).iter().zip(deltas) {
        out.extend_from_slice(&text[at..number.start]);
        let value = stepped(number.value, *delta, times)
            .ok_or_else(|| TraceError::Invalid("file name block overflows".into()))?;
        out.extend_from_slice(&format_number(value, number.width));
        at = number.end;
    }
    out.extend_from_slice(&text[at..]);
    Ok(out)
}

impl Entry {
    /// What must be equal for two entries to be one block's repetitions: the text between
    /// numbers, their widths, a run's step and count, the noise.
    fn shape(&self) -> Vec<u8> {
        fn template(text: &[u8], out: &mut Vec<u8>) {
            let mut at = 0;
            for number in numbers(text) {
                out.extend_from_slice(&text[at..number.start]);
                out.push(0);
                out.push(number.width as u8);
                at = number.end;
            }
            out.extend_from_slice(&text[at..]);
            out.push(1);
        }
        let mut shape = Vec::new();
        match self {
            Entry::Name { path, noise } => {
                shape.push(0);
                template(path, &mut shape);
                shape.extend_from_slice(&noise_code(*noise).to_le_bytes());
            }
            Entry::Run {
                prefix,
                suffix,
                width,
                step,
                count,
                noise,
                ..
            } => {
                shape.push(1);
                template(prefix, &mut shape);
                template(suffix, &mut shape);
                for value in [*width as u64, *step as u64, *count, noise_code(*noise)] {
                    shape.extend_from_slice(&value.to_le_bytes());
                }
            }
        }
        shape
    }

    /// The entry's numbers: a name's; a run's prefix's, its first value, its suffix's.
    fn values(&self) -> Vec<u64> {
        match self {
            Entry::Name { path, .. } => numbers(path).iter().map(|n| n.value).collect(),
            Entry::Run {
                prefix,
                suffix,
                start,
                ..
            } => numbers(prefix)
                .iter()
                .map(|n| n.value)
                .chain([*start])
                .chain(numbers(suffix).iter().map(|n| n.value))
                .collect(),
        }
    }

    /// The entry with its numbers moved by `times` × `deltas`.
    fn moved(&self, deltas: &[i64], times: i64) -> Result<Entry> {
        Ok(match self {
            Entry::Name { path, noise } => Entry::Name {
                path: moved(path, deltas, times)?,
                noise: *noise,
            },
            Entry::Run {
                prefix,
                suffix,
                width,
                start,
                step,
                count,
                noise,
            } => {
                let before = numbers(prefix).len().min(deltas.len());
                let delta = deltas.get(before).copied().unwrap_or(0);
                let start = stepped(*start, delta, times)
                    .ok_or_else(|| TraceError::Invalid("file name block overflows".into()))?;
                Entry::Run {
                    prefix: moved(prefix, &deltas[..before], times)?,
                    suffix: moved(suffix, deltas.get(before + 1..).unwrap_or(&[]), times)?,
                    width: *width,
                    start,
                    step: *step,
                    count: *count,
                    noise: *noise,
                }
            }
        })
    }

    /// The bytes its names take at most (a number takes up to 20 digits).
    fn name_bytes(&self) -> u64 {
        let longest = match self {
            Entry::Name { path, .. } => path.len() as u64,
            Entry::Run { prefix, suffix, .. } => (prefix.len() + suffix.len()) as u64 + 20,
        };
        longest.saturating_mul(self.files())
    }

    fn files(&self) -> u64 {
        match self {
            Entry::Name { .. } => 1,
            Entry::Run { count, .. } => *count,
        }
    }

    fn encode(&self, out: &mut ByteWriter) {
        match self {
            Entry::Name { path, noise } => {
                out.u64(0);
                out.bytes(path);
                out.u64(noise_code(*noise));
            }
            Entry::Run {
                prefix,
                suffix,
                width,
                start,
                step,
                count,
                noise,
            } => {
                out.u64(1);
                out.bytes(prefix);
                out.bytes(suffix);
                out.u64(*width as u64);
                out.u64(*start);
                out.i64(*step);
                out.u64(*count);
                out.u64(noise_code(*noise));
            }
        }
    }

    /// An entry of kind `kind` (0 or 1; the caller read it).
    fn decode(kind: u64, reader: &mut ByteReader) -> Result<Entry> {
        Ok(match kind {
            0 => Entry::Name {
                path: reader.bytes()?.to_vec(),
                noise: Noise::from_code(reader.u64()?),
            },
            1 => Entry::Run {
                prefix: reader.bytes()?.to_vec(),
                suffix: reader.bytes()?.to_vec(),
                width: reader.u64()?.min(18) as usize,
                start: reader.u64()?,
                step: reader.i64()?,
                count: reader.u64()?,
                noise: Noise::from_code(reader.u64()?),
            },
            _ => return Err(TraceError::Invalid("unknown file table entry".into())),
        })
    }

    /// Appends the entry's names; `name_bytes` is what the table's names may still take.
    fn expand(&self, files: &mut Vec<FileInfo>, name_bytes: &mut u64) -> Result<()> {
        if files.len() as u64 + self.files() > MAX_FILES {
            return Err(TraceError::Invalid(format!(
                "the file table holds more than {MAX_FILES} files"
            )));
        }
        take_name_bytes(name_bytes, self.name_bytes())?;
        match self {
            Entry::Name { path, noise } => files.push(FileInfo {
                path: path.clone(),
                noise: *noise,
            }),
            Entry::Run {
                prefix,
                suffix,
                width,
                start,
                step,
                count,
                noise,
            } => {
                for index in 0..*count {
                    let value = stepped(*start, *step, index as i64)
                        .ok_or_else(|| TraceError::Invalid("file name run overflows".into()))?;
                    let mut path = prefix.clone();
                    path.extend_from_slice(&format_number(value, *width));
                    path.extend_from_slice(suffix);
                    files.push(FileInfo {
                        path,
                        noise: *noise,
                    });
                }
            }
        }
        Ok(())
    }
}

/// The table's names as entries: runs of names that differ in their last number.
fn entries(files: &[FileInfo]) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut run: Option<Run> = None;
    let flush = |run: Option<Run>, entries: &mut Vec<Entry>| {
        let Some(run) = run else { return };
        entries.push(if run.count == 1 {
            let mut path = run.prefix.to_vec();
            path.extend_from_slice(&format_number(run.start, run.width));
            path.extend_from_slice(run.suffix);
            Entry::Name {
                path,
                noise: run.noise,
            }
        } else {
            Entry::Run {
                prefix: run.prefix.to_vec(),
                suffix: run.suffix.to_vec(),
                width: run.width,
                start: run.start,
                step: run.step,
                count: run.count,
                noise: run.noise,
            }
        });
    };
    for file in files {
        let Some(parts) = split(&file.path)
            .filter(|parts| format_number(parts.value, width(parts.digits)) == parts.digits)
        else {
            flush(run.take(), &mut entries);
            entries.push(Entry::Name {
                path: file.path.clone(),
                noise: file.noise,
            });
            continue;
        };
        if let Some(current) = &mut run {
            let same_shape = current.prefix == parts.prefix
                && current.suffix == parts.suffix
                && current.width == width(parts.digits)
                && current.noise == file.noise;
            if same_shape {
                if current.count == 1 && parts.value != current.start {
                    current.step = parts.value as i64 - current.start as i64;
                    current.count = 2;
                    continue;
                }
                if current.count > 1 && current.next_value() == Some(parts.value) {
                    current.count += 1;
                    continue;
                }
            }
        }
        flush(run.take(), &mut entries);
        run = Some(Run {
            prefix: parts.prefix,
            suffix: parts.suffix,
            width: width(parts.digits),
            start: parts.value,
            step: 0,
            count: 1,
            noise: file.noise,
        });
    }
    flush(run.take(), &mut entries);
    entries
}

/// Most entries a block repeats, and entry comparisons a table's search for blocks may
/// spend (beyond, the rest is written entry by entry).
const MAX_BLOCK: usize = 1024;
const BLOCK_SEARCH_BUDGET: u64 = 1 << 22;

/// Blocks of entries repeated with their numbers stepping evenly — each rank's files of
/// a file-per-rank program whose names hold the rank in their directories too (mdtest
/// `-u`: `mdtest_tree.3.0/…/file.mdtest.3.17`): at `index`, the block length and the
/// repetitions that cover the most entries (at least three), with each entry's deltas.
fn block_at(
    shapes: &[u64],
    values: &[Vec<u64>],
    index: usize,
    budget: &mut u64,
) -> Option<(usize, usize, Vec<Vec<i64>>)> {
    let n = shapes.len();
    let mut best: Option<(usize, usize)> = None;
    // Whether entry `to` is entry `from` moved as `to_0` is `from_0` (no allocation: this
    // is asked of every block length at every entry).
    let same_step = |from_0: usize, to_0: usize, from: usize, to: usize| {
        shapes[from] == shapes[to]
            && values[from_0]
                .iter()
                .zip(&values[to_0])
                .zip(values[from].iter().zip(&values[to]))
                .all(|((a0, b0), (a, b))| b0.wrapping_sub(*a0) == b.wrapping_sub(*a))
    };
    for length in 1..=MAX_BLOCK.min((n - index) / 3) {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        // Cheap first: the block's first entry three times alike, stepping evenly.
        let (a, b, c) = (index, index + length, index + 2 * length);
        if shapes[a] != shapes[b] || !same_step(a, b, b, c) {
            continue;
        }
        let mut repetitions = 1;
        'more: while index + (repetitions + 1) * length <= n {
            for offset in 0..length {
                *budget = budget.saturating_sub(1);
                let first = index + offset;
                let this = index + repetitions * length + offset;
                if !same_step(first, index + length + offset, this - length, this) {
                    break 'more;
                }
            }
            repetitions += 1;
        }
        if repetitions >= 3 && best.is_none_or(|(l, r)| length * repetitions > l * r) {
            best = Some((length, repetitions));
        }
    }
    let (length, repetitions) = best?;
    let deltas = (0..length)
        .map(|offset| {
            let (from, to) = (index + offset, index + length + offset);
            values[from]
                .iter()
                .zip(&values[to])
                .map(|(a, b)| b.wrapping_sub(*a) as i64)
                .collect()
        })
        .collect();
    Some((length, repetitions, deltas))
}

/// FNV-1a: a shape's hash, to compare shapes cheaply.
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ *byte as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

pub fn encode(files: &[FileInfo], out: &mut ByteWriter) {
    let entries = entries(files);
    // Shapes by a hash (a table may have a million entries): a block found is checked
    // against the shapes themselves before it is written.
    let shapes: Vec<u64> = entries.iter().map(|entry| hash(&entry.shape())).collect();
    let values: Vec<Vec<u64>> = entries.iter().map(Entry::values).collect();
    let mut body = ByteWriter::new();
    let mut written = 0u64;
    let mut budget = BLOCK_SEARCH_BUDGET;
    let mut index = 0;
    while index < entries.len() {
        written += 1;
        let block =
            block_at(&shapes, &values, index, &mut budget).filter(|(length, repetitions, _)| {
                (index + length..index + length * repetitions)
                    .all(|at| entries[at].shape() == entries[at - length].shape())
            });
        match block {
            Some((length, repetitions, deltas)) => {
                body.u64(2);
                body.u64(length as u64);
                body.u64(repetitions as u64);
                for (entry, deltas) in entries[index..index + length].iter().zip(&deltas) {
                    entry.encode(&mut body);
                    body.u64(deltas.len() as u64);
                    for delta in deltas {
                        body.i64(*delta);
                    }
                }
                index += length * repetitions;
            }
            None => {
                entries[index].encode(&mut body);
                index += 1;
            }
        }
    }
    out.u64(written);
    out.buffer.extend_from_slice(&body.buffer);
}

/// Takes `bytes` from what the table's names may still take ([`MAX_NAME_BYTES`]).
fn take_name_bytes(left: &mut u64, bytes: u64) -> Result<()> {
    *left = left.checked_sub(bytes).ok_or_else(|| {
        TraceError::Invalid(format!(
            "the file table's names take more than {} MiB",
            MAX_NAME_BYTES >> 20
        ))
    })?;
    Ok(())
}

pub fn decode(reader: &mut ByteReader) -> Result<Vec<FileInfo>> {
    let mut files = Vec::new();
    let mut name_bytes = MAX_NAME_BYTES;
    let entries = reader.count(2)?;
    for _ in 0..entries {
        match reader.u64()? {
            2 => {
                let length = reader.count(3)?;
                let repetitions = reader.u64()?;
                let mut block = Vec::with_capacity(length);
                let mut per_repetition = 0u64;
                let mut bytes_per_repetition = 0u64;
                for _ in 0..length {
                    let kind = reader.u64()?;
                    let entry = Entry::decode(kind, reader)?;
                    let numbers = reader.count(1)?;
                    let deltas = (0..numbers)
                        .map(|_| reader.i64())
                        .collect::<std::result::Result<Vec<_>, _>>()?;
                    per_repetition = per_repetition.saturating_add(entry.files());
                    bytes_per_repetition = bytes_per_repetition.saturating_add(entry.name_bytes());
                    block.push((entry, deltas));
                }
                // Entries of no file (a run of 0) must not make a loop of any length: as many
                // entries to expand as files at most.
                if repetitions.saturating_mul(length as u64) > MAX_FILES
                    || per_repetition.saturating_mul(repetitions)
                        > MAX_FILES.saturating_sub(files.len() as u64)
                {
                    return Err(TraceError::Invalid(format!(
                        "the file table holds more than {MAX_FILES} files"
                    )));
                }
                // Refused before any is made (each repetition's entries are checked again
                // as they expand, against what is left after this).
                let mut left_after_all = name_bytes;
                take_name_bytes(
                    &mut left_after_all,
                    bytes_per_repetition.saturating_mul(repetitions),
                )?;
                for times in 0..repetitions {
                    for (entry, deltas) in &block {
                        entry
                            .moved(deltas, times as i64)?
                            .expand(&mut files, &mut name_bytes)?;
                    }
                }
            }
            kind => Entry::decode(kind, reader)?.expand(&mut files, &mut name_bytes)?,
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(files: &[FileInfo]) -> (Vec<FileInfo>, usize) {
        let mut writer = ByteWriter::new();
        encode(files, &mut writer);
        let bytes = writer.into_inner();
        (
            decode(&mut ByteReader::new(&bytes, "test")).unwrap(),
            bytes.len(),
        )
    }

    fn file(path: &str) -> FileInfo {
        FileInfo {
            path: path.as_bytes().to_vec(),
            noise: None,
        }
    }

    #[test]
    fn checkpoint_names_become_one_run() {
        let many: Vec<FileInfo> = (0..10_000)
            .map(|step| file(&format!("/scratch/run/ckpt-{step:05}.dat")))
            .collect();
        let few: Vec<FileInfo> = (0..10)
            .map(|step| file(&format!("/scratch/run/ckpt-{step:05}.dat")))
            .collect();
        let (back, size_many) = roundtrip(&many);
        assert_eq!(back, many);
        let (_, size_few) = roundtrip(&few);
        assert!(size_many <= size_few + 4, "{size_few} -> {size_many}");
        let mixed = vec![
            file("/a/out.log"),
            file("/a/p9.dat"),
            file("/a/p10.dat"),
            file("/a/p11.dat"),
            file("/a/x7"),
            file("/b/7"),
        ];
        assert_eq!(roundtrip(&mixed).0, mixed);
    }

    #[test]
    fn each_ranks_tree_of_names_is_one_block_whatever_the_ranks() {
        // mdtest -u: each rank's tree of directories, each holding a run of items, the
        // rank in the directories' and the items' names.
        let table = |ranks: u64| -> Vec<FileInfo> {
            let mut files = vec![file("/dev/shm/md"), file("/dev/shm/md/test-dir.0-0")];
            for rank in 0..ranks {
                for directory in 0..13 {
                    let tree = format!("/dev/shm/md/test-dir.0-0/mdtest_tree.{rank}.{directory}");
                    files.push(file(&format!("{tree}/")));
                    for kind in ["dir", "file"] {
                        for item in 0..76 {
                            files.push(file(&format!(
                                "{tree}/{kind}.mdtest.{rank}.{}",
                                directory * 76 + item
                            )));
                        }
                    }
                }
            }
            files.push(file("/dev/shm/md/summary.log"));
            files
        };
        let (four, sixteen) = (table(4), table(16));
        let (back, size_four) = roundtrip(&four);
        assert_eq!(back, four);
        let (back, size_sixteen) = roundtrip(&sixteen);
        assert_eq!(back, sixteen);
        assert!(
            size_sixteen <= size_four + 2,
            "{size_four} -> {size_sixteen}"
        );
        // Blocks need three repetitions; two ranks' names are written as runs.
        assert_eq!(roundtrip(&table(2)).0, table(2));
        // A block whose numbers overflow is refused, not wrapped.
        let mut writer = ByteWriter::new();
        writer.u64(1);
        writer.u64(2);
        writer.u64(1);
        writer.u64(3);
        Entry::Name {
            path: b"/r9".to_vec(),
            noise: None,
        }
        .encode(&mut writer);
        writer.u64(1);
        writer.i64(i64::MAX);
        let bytes = writer.into_inner();
        assert!(decode(&mut ByteReader::new(&bytes, "test")).is_err());
        // Nor does a block of empty runs repeated without end make the reader loop.
        let mut writer = ByteWriter::new();
        writer.u64(1);
        writer.u64(2);
        writer.u64(1);
        writer.u64(u64::MAX);
        Entry::Run {
            prefix: b"/r".to_vec(),
            suffix: Vec::new(),
            width: 0,
            start: 0,
            step: 1,
            count: 0,
            noise: None,
        }
        .encode(&mut writer);
        writer.u64(0);
        let bytes = writer.into_inner();
        assert!(decode(&mut ByteReader::new(&bytes, "test")).is_err());
    }

    #[test]
    fn hostile_counts_are_refused() {
        let mut writer = ByteWriter::new();
        writer.u64(1);
        writer.u64(1);
        writer.bytes(b"/f");
        writer.bytes(b"");
        writer.u64(0);
        writer.u64(0);
        writer.i64(1);
        writer.u64(u64::MAX / 2);
        writer.u64(0);
        let bytes = writer.into_inner();
        assert!(decode(&mut ByteReader::new(&bytes, "test")).is_err());
    }

    #[test]
    fn long_names_times_many_are_refused_before_they_are_made() {
        // A run of 4 M names (as many files as a table may hold) of a 1 KiB prefix: 4 GiB of
        // names from 1 KiB of section (found by fuzzing the FILE section: 50 bytes made
        // 800 MB of names).
        let mut writer = ByteWriter::new();
        writer.u64(1);
        writer.u64(1);
        writer.bytes(&[b'a'; 1024]);
        writer.bytes(b"");
        writer.u64(0);
        writer.u64(0);
        writer.i64(1);
        writer.u64(MAX_FILES);
        writer.u64(0);
        let bytes = writer.into_inner();
        let error = decode(&mut ByteReader::new(&bytes, "test")).unwrap_err();
        assert!(error.to_string().contains("512 MiB"), "{error}");
        // The same names in a block repeated 4 M times.
        let mut writer = ByteWriter::new();
        writer.u64(1);
        writer.u64(2);
        writer.u64(1);
        writer.u64(1 << 22);
        writer.u64(0);
        writer.bytes(&[b'a'; 1024]);
        writer.u64(0);
        writer.u64(0);
        let bytes = writer.into_inner();
        let error = decode(&mut ByteReader::new(&bytes, "test")).unwrap_err();
        assert!(error.to_string().contains("512 MiB"), "{error}");
    }

    proptest! {
        #[test]
        fn repeated_blocks_roundtrip(
            block in proptest::collection::vec("/[a-b]{0,2}[0-9]{0,3}(/[a-c][0-9]{0,2}){0,2}", 1..6),
            repetitions in 0usize..6,
            step in 0u64..30,
        ) {
            // Each repetition's names with every number moved by the repetition's step.
            let mut files = Vec::new();
            for repetition in 0..repetitions as u64 {
                for name in &block {
                    let path = name.as_bytes();
                    let deltas = vec![(step * repetition) as i64; numbers(path).len()];
                    files.push(FileInfo { path: moved(path, &deltas, 1).unwrap(), noise: None });
                }
            }
            prop_assert_eq!(roundtrip(&files).0, files);
        }

        #[test]
        fn any_table_roundtrips(paths in proptest::collection::vec("(/[a-c]{0,2}[0-9]{0,3}){1,3}", 0..40), noisy in proptest::collection::vec(any::<bool>(), 40)) {
            let files: Vec<FileInfo> = paths.iter().zip(&noisy).map(|(path, noisy)| FileInfo {
                path: path.as_bytes().to_vec(),
                noise: noisy.then_some(Noise::Kernel),
            }).collect();
            prop_assert_eq!(roundtrip(&files).0, files);
        }
    }
}

//! The file table on disk (FILE section version 2): consecutive names that differ only in
//! their last number, stepping evenly (`ckpt-000.dat`, `ckpt-001.dat`, …), are stored as one
//! run — prefix, suffix, zero-padding width, first value, step, count — so a program that
//! writes one file per time step does not make the trace grow with the number of steps.

use cairn_format::bytes::{ByteReader, ByteWriter};

use crate::noise::Noise;
use crate::{FileInfo, Result, TraceError};

/// Most files a trace may expand to; a damaged run count cannot make the reader allocate
/// more.
pub const MAX_FILES: u64 = 1 << 22;

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
        (self.start as i64)
            .checked_add(self.step.checked_mul(self.count as i64)?)
            .and_then(|v| u64::try_from(v).ok())
    }
}

fn noise_code(noise: Option<Noise>) -> u64 {
    noise.map_or(0, Noise::code)
}

pub fn encode(files: &[FileInfo], out: &mut ByteWriter) {
    let mut entries = ByteWriter::new();
    let mut entry_count = 0u64;
    let mut run: Option<Run> = None;
    let flush = |run: Option<Run>, entries: &mut ByteWriter, entry_count: &mut u64| {
        let Some(run) = run else { return };
        *entry_count += 1;
        if run.count == 1 {
            let mut path = run.prefix.to_vec();
            path.extend_from_slice(&format_number(run.start, run.width));
            path.extend_from_slice(run.suffix);
            entries.u64(0);
            entries.bytes(&path);
        } else {
            entries.u64(1);
            entries.bytes(run.prefix);
            entries.bytes(run.suffix);
            entries.u64(run.width as u64);
            entries.u64(run.start);
            entries.i64(run.step);
            entries.u64(run.count);
        }
        entries.u64(noise_code(run.noise));
    };
    for file in files {
        let Some(parts) = split(&file.path)
            .filter(|parts| format_number(parts.value, width(parts.digits)) == parts.digits)
        else {
            flush(run.take(), &mut entries, &mut entry_count);
            entry_count += 1;
            entries.u64(0);
            entries.bytes(&file.path);
            entries.u64(noise_code(file.noise));
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
        flush(run.take(), &mut entries, &mut entry_count);
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
    flush(run.take(), &mut entries, &mut entry_count);
    out.u64(entry_count);
    out.buffer.extend_from_slice(&entries.buffer);
}

pub fn decode(reader: &mut ByteReader) -> Result<Vec<FileInfo>> {
    let mut files = Vec::new();
    let entries = reader.count(2)?;
    for _ in 0..entries {
        match reader.u64()? {
            0 => {
                let path = reader.bytes()?.to_vec();
                let noise = Noise::from_code(reader.u64()?);
                files.push(FileInfo { path, noise });
            }
            1 => {
                let prefix = reader.bytes()?.to_vec();
                let suffix = reader.bytes()?.to_vec();
                let width = reader.u64()?.min(18) as usize;
                let start = reader.u64()?;
                let step = reader.i64()?;
                let count = reader.u64()?;
                let noise = Noise::from_code(reader.u64()?);
                if files.len() as u64 + count > MAX_FILES {
                    return Err(TraceError::Invalid(format!(
                        "the file table holds more than {MAX_FILES} files"
                    )));
                }
                for index in 0..count {
                    let value = step
                        .checked_mul(index as i64)
                        .and_then(|offset| (start as i64).checked_add(offset))
                        .and_then(|value| u64::try_from(value).ok())
                        .ok_or_else(|| TraceError::Invalid("file name run overflows".into()))?;
                    let mut path = prefix.clone();
                    path.extend_from_slice(&format_number(value, width));
                    path.extend_from_slice(&suffix);
                    files.push(FileInfo { path, noise });
                }
            }
            _ => return Err(TraceError::Invalid("unknown file table entry".into())),
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

    proptest! {
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

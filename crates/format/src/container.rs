//! The trace file: header, sections, section table, footer (see `docs/FORMAT.md`).

use std::io::{Read, Write};
use std::path::Path;

use crate::{FormatError, Result};

pub const MAGIC: &[u8; 8] = b"CAIRNTRC";
pub const FOOTER_MAGIC: &[u8; 8] = b"CAIRNEND";
pub const MAJOR_VERSION: u16 = 1;
pub const MINOR_VERSION: u16 = 0;
pub const HEADER_SIZE: usize = 32;
pub const FOOTER_SIZE: usize = 32;
pub const TABLE_ENTRY_SIZE: usize = 48;
/// Largest decoded section a reader accepts; a hostile file cannot make it allocate more.
pub const MAX_SECTION_SIZE: u64 = 2 << 30;

const ENCODING_RAW: u16 = 0;
const ENCODING_ZSTD: u16 = 1;

/// A section kind: four ASCII bytes, readable in a hex dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SectionKind(pub [u8; 4]);

impl SectionKind {
    pub const META: SectionKind = SectionKind(*b"META");
    pub const CALLS: SectionKind = SectionKind(*b"CALL");
    pub const PROCESSES: SectionKind = SectionKind(*b"PROC");
    pub const FILES: SectionKind = SectionKind(*b"FILE");
    pub const CONTEXTS: SectionKind = SectionKind(*b"CTXT");
    pub const EVENTS: SectionKind = SectionKind(*b"EVNT");
    pub const DIAGNOSTICS: SectionKind = SectionKind(*b"DIAG");

    pub fn name(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

/// One entry of the section table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionEntry {
    pub kind: SectionKind,
    pub version: u16,
    compressed: bool,
    offset: u64,
    stored_length: u64,
    raw_length: u64,
    checksum: u32,
}

/// Builds a trace file in memory and writes it atomically.
#[derive(Default)]
pub struct TraceWriter {
    entries: Vec<SectionEntry>,
    body: Vec<u8>,
    quick: bool,
    /// One zstd context for all the sections (made on first use): making one per section
    /// took a tenth of the trace build of a short run.
    compressor: Option<zstd::bulk::Compressor<'static>>,
}

impl TraceWriter {
    pub fn new() -> TraceWriter {
        TraceWriter::default()
    }

    /// A writer whose sections are compressed at zstd level 1 whatever their size: for a
    /// trace handed to the next merge of a job's tree and read once, where level 19's
    /// milliseconds a section buy nothing.
    pub fn quick() -> TraceWriter {
        TraceWriter {
            quick: true,
            ..TraceWriter::default()
        }
    }

    /// Adds a section; `compress` selects zstd: level 19 up to 64 KiB (a folded trace's
    /// sections, where every byte counts in a trace that should not grow with ranks, take
    /// milliseconds), level 1 for larger ones — irregular traces, whose columns of random
    /// offsets hardly compress: on 100,000 random reads' 425 KB, level 3 took 3.4 ms and
    /// level 1 0.8 ms for 8% more bytes (a third of the trace build of their calls; level 9
    /// took 12 ms more than 3 for 6% fewer), and level 19 took 45 ms on the 200 KB of IOR
    /// -z's 65,536 calls for 7% fewer (measured 2026-11-26 on the 2-core VM, `zstd -b`).
    pub fn add_section(&mut self, kind: SectionKind, version: u16, payload: &[u8], compress: bool) {
        let stored = if compress {
            let level = if payload.len() <= 1 << 16 && !self.quick {
                19
            } else {
                1
            };
            let compressor = match &mut self.compressor {
                Some(compressor) => compressor,
                slot => slot.insert(
                    zstd::bulk::Compressor::new(level).expect("a zstd compression context"),
                ),
            };
            compressor
                .set_compression_level(level)
                .and_then(|_| compressor.compress(payload))
                .expect("zstd compression of an in-memory buffer")
        } else {
            payload.to_vec()
        };
        self.entries.push(SectionEntry {
            kind,
            version,
            compressed: compress,
            offset: (HEADER_SIZE + self.body.len()) as u64,
            stored_length: stored.len() as u64,
            raw_length: payload.len() as u64,
            checksum: crc32fast::hash(&stored),
        });
        self.body.extend_from_slice(&stored);
    }

    /// The complete file image.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_SIZE + self.body.len() + 256);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&MAJOR_VERSION.to_le_bytes());
        out.extend_from_slice(&MINOR_VERSION.to_le_bytes());
        out.extend_from_slice(&[0u8; 20]);
        out.extend_from_slice(&self.body);
        let table_offset = out.len() as u64;
        let mut table = Vec::with_capacity(self.entries.len() * TABLE_ENTRY_SIZE);
        for entry in &self.entries {
            table.extend_from_slice(&entry.kind.0);
            table.extend_from_slice(&entry.version.to_le_bytes());
            let encoding = if entry.compressed {
                ENCODING_ZSTD
            } else {
                ENCODING_RAW
            };
            table.extend_from_slice(&encoding.to_le_bytes());
            table.extend_from_slice(&entry.offset.to_le_bytes());
            table.extend_from_slice(&entry.stored_length.to_le_bytes());
            table.extend_from_slice(&entry.raw_length.to_le_bytes());
            table.extend_from_slice(&entry.checksum.to_le_bytes());
            table.extend_from_slice(&[0u8; 12]);
        }
        out.extend_from_slice(&table);
        out.extend_from_slice(&table_offset.to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&table).to_le_bytes());
        out.extend_from_slice(&[0u8; 8]);
        out.extend_from_slice(FOOTER_MAGIC);
        out
    }

    /// Writes the file to a temporary name beside `path`, syncs it and renames it over
    /// `path`, so a failure never leaves a half-written trace where a good one was.
    pub fn write_atomically(self, path: &Path) -> Result<u64> {
        let image = self.finish();
        write_file_atomically(path, &image)?;
        Ok(image.len() as u64)
    }
}

/// Writes `data` to `path` through a temporary file and a rename.
pub fn write_file_atomically(path: &Path, data: &[u8]) -> Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = directory.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(data)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = result {
        let _ = std::fs::remove_file(&temporary);
        return Err(FormatError::io(path, error));
    }
    Ok(())
}

fn le_u16(data: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([data[at], data[at + 1]])
}

fn le_u32(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes"))
}

fn le_u64(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes"))
}

/// An opened, validated trace file.
pub struct TraceFile {
    data: Vec<u8>,
    entries: Vec<SectionEntry>,
    pub major: u16,
    pub minor: u16,
}

impl TraceFile {
    pub fn open(path: &Path) -> Result<TraceFile> {
        let data = std::fs::read(path).map_err(|error| FormatError::io(path, error))?;
        TraceFile::from_bytes(data)
    }

    /// Validates header, footer and section table; section contents are checked when read.
    pub fn from_bytes(data: Vec<u8>) -> Result<TraceFile> {
        if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
            if data.len() < MAGIC.len() && MAGIC.starts_with(&data) && !data.is_empty() {
                return Err(FormatError::Truncated("file ends inside the header".into()));
            }
            return Err(FormatError::NotATrace);
        }
        if data.len() < HEADER_SIZE + FOOTER_SIZE {
            return Err(FormatError::Truncated(format!(
                "file has {} bytes, a trace has at least {}",
                data.len(),
                HEADER_SIZE + FOOTER_SIZE
            )));
        }
        let major = le_u16(&data, 8);
        let minor = le_u16(&data, 10);
        if major != MAJOR_VERSION {
            return Err(FormatError::UnsupportedVersion {
                major,
                minor,
                supported: MAJOR_VERSION,
            });
        }
        let footer = data.len() - FOOTER_SIZE;
        if &data[footer + 24..] != FOOTER_MAGIC {
            return Err(FormatError::Truncated(
                "the footer is missing (the file was cut short or is still being written)".into(),
            ));
        }
        let table_offset = le_u64(&data, footer);
        let section_count = le_u32(&data, footer + 8) as u64;
        let table_checksum = le_u32(&data, footer + 12);
        let table_length = section_count * TABLE_ENTRY_SIZE as u64;
        if table_offset < HEADER_SIZE as u64
            || table_offset.saturating_add(table_length) != footer as u64
        {
            return Err(FormatError::Corrupt(
                "section table position does not match the file".into(),
            ));
        }
        let table = &data[table_offset as usize..footer];
        if crc32fast::hash(table) != table_checksum {
            return Err(FormatError::Checksum("table".into()));
        }
        let mut entries = Vec::with_capacity(section_count as usize);
        for raw in table.chunks_exact(TABLE_ENTRY_SIZE) {
            let entry = SectionEntry {
                kind: SectionKind(raw[0..4].try_into().expect("4 bytes")),
                version: le_u16(raw, 4),
                compressed: match le_u16(raw, 6) {
                    ENCODING_RAW => false,
                    ENCODING_ZSTD => true,
                    other => {
                        return Err(FormatError::Corrupt(format!(
                            "unknown section encoding {other}"
                        )))
                    }
                },
                offset: le_u64(raw, 8),
                stored_length: le_u64(raw, 16),
                raw_length: le_u64(raw, 24),
                checksum: le_u32(raw, 32),
            };
            let end = entry.offset.checked_add(entry.stored_length);
            if entry.offset < HEADER_SIZE as u64 || end.is_none_or(|end| end > table_offset) {
                return Err(FormatError::Corrupt(format!(
                    "section {} lies outside the file",
                    entry.kind.name()
                )));
            }
            if entry.raw_length > MAX_SECTION_SIZE
                || (!entry.compressed && entry.raw_length != entry.stored_length)
            {
                return Err(FormatError::Corrupt(format!(
                    "section {} has an impossible size",
                    entry.kind.name()
                )));
            }
            entries.push(entry);
        }
        Ok(TraceFile {
            data,
            entries,
            major,
            minor,
        })
    }

    pub fn entries(&self) -> &[SectionEntry] {
        &self.entries
    }

    pub fn file_size(&self) -> u64 {
        self.data.len() as u64
    }

    /// Stored (on-disk) size of each section, for `cairn dump --sections`.
    pub fn stored_size(&self, entry: &SectionEntry) -> u64 {
        entry.stored_length
    }

    /// Size of a section before compression.
    pub fn raw_size(&self, entry: &SectionEntry) -> u64 {
        entry.raw_length
    }

    /// The decoded bytes of the first section of `kind`, checked against its CRC and size.
    pub fn section(&self, kind: SectionKind) -> Result<Option<(u16, Vec<u8>)>> {
        let Some(entry) = self.entries.iter().find(|entry| entry.kind == kind) else {
            return Ok(None);
        };
        let stored =
            &self.data[entry.offset as usize..(entry.offset + entry.stored_length) as usize];
        if crc32fast::hash(stored) != entry.checksum {
            return Err(FormatError::Checksum(kind.name()));
        }
        let decoded = if entry.compressed {
            let decoder = zstd::stream::read::Decoder::new(stored).map_err(|error| {
                FormatError::Corrupt(format!("section {}: {error}", kind.name()))
            })?;
            // Grow the output only as real data arrives: the declared size is a limit, not
            // an allocation request.
            let mut decoded = Vec::with_capacity(entry.raw_length.min(1 << 20) as usize);
            decoder
                .take(entry.raw_length + 1)
                .read_to_end(&mut decoded)
                .map_err(|error| {
                    FormatError::Corrupt(format!("section {}: {error}", kind.name()))
                })?;
            decoded
        } else {
            stored.to_vec()
        };
        if decoded.len() as u64 != entry.raw_length {
            return Err(FormatError::Corrupt(format!(
                "section {} decodes to {} bytes, the table says {}",
                kind.name(),
                decoded.len(),
                entry.raw_length
            )));
        }
        Ok(Some((entry.version, decoded)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut writer = TraceWriter::new();
        writer.add_section(SectionKind::META, 1, b"hello", false);
        writer.add_section(SectionKind::EVENTS, 2, &[7u8; 10_000], true);
        writer.finish()
    }

    #[test]
    fn roundtrip() {
        let file = TraceFile::from_bytes(sample()).unwrap();
        assert_eq!(
            file.section(SectionKind::META).unwrap(),
            Some((1, b"hello".to_vec()))
        );
        assert_eq!(
            file.section(SectionKind::EVENTS).unwrap(),
            Some((2, vec![7u8; 10_000]))
        );
        assert_eq!(file.section(SectionKind::FILES).unwrap(), None);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let image = sample();
        for length in 0..image.len() {
            let result = TraceFile::from_bytes(image[..length].to_vec());
            assert!(result.is_err(), "truncation at {length} accepted");
        }
    }

    #[test]
    fn every_bit_flip_is_detected_or_harmless() {
        let image = sample();
        for position in 0..image.len() {
            let mut damaged = image.clone();
            damaged[position] ^= 0x10;
            if let Ok(file) = TraceFile::from_bytes(damaged) {
                // A flip the structure checks let through is caught by a section's
                // checksum, or sat in a reserved byte and changed nothing.
                let meta = file.section(SectionKind::META);
                let events = file.section(SectionKind::EVENTS);
                if let (Ok(meta), Ok(events)) = (meta, events) {
                    assert_eq!(meta, Some((1, b"hello".to_vec())), "flip at {position}");
                    assert_eq!(events, Some((2, vec![7u8; 10_000])), "flip at {position}");
                }
            }
        }
    }

    #[test]
    fn foreign_file() {
        assert!(matches!(
            TraceFile::from_bytes(b"\x7fELF.......".to_vec()),
            Err(FormatError::NotATrace)
        ));
        assert!(matches!(
            TraceFile::from_bytes(Vec::new()),
            Err(FormatError::NotATrace)
        ));
    }

    #[test]
    fn atomic_write_keeps_old_file_on_failure() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("t.cairn");
        std::fs::write(&path, b"old").unwrap();
        // A directory where the temporary file should go makes the write fail.
        let blocked = directory.path().join("missing-dir").join("t.cairn");
        assert!(write_file_atomically(&blocked, b"new").is_err());
        write_file_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let leftovers: Vec<_> = std::fs::read_dir(directory.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
    }
}

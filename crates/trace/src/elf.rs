//! Just enough of a module's ELF program headers to place a recorded frame: where the file
//! is linked (so a (module, offset) frame can be looked up) and which offsets are return
//! addresses — in code, right after a call instruction — so a frame-pointer walk's garbage
//! (stack data that happened to look like a frame in code built without frame pointers,
//! often pointing into code) can be cut off.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The loaded segments of one module, as offsets from its load base.
#[derive(Debug)]
pub struct Segments {
    /// The address the file uses for its first loaded byte: 0 for shared objects and
    /// position-independent executables, the link address for classic executables
    /// (`ET_EXEC`), whose load base (what the tracer subtracted) is that address.
    pub link_base: u64,
    /// Executable ranges, [start, end) as offsets from the load base, with the file
    /// position of each range's start.
    code: Vec<(u64, u64, u64)>,
    /// The module, to read the bytes before a return address.
    file: File,
}

impl Segments {
    /// Reads the program headers of a 64-bit little-endian ELF file; `None` for anything
    /// else or an unreadable file.
    pub fn read(path: &Path) -> Option<Segments> {
        let file = File::open(path).ok()?;
        let mut header = [0u8; 64];
        file.read_exact_at(&mut header, 0).ok()?;
        if header[..6] != [0x7f, b'E', b'L', b'F', 2, 1] {
            return None;
        }
        let u16_at = |data: &[u8], at: usize| u16::from_le_bytes([data[at], data[at + 1]]);
        let u32_at =
            |data: &[u8], at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
        let u64_at =
            |data: &[u8], at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap());
        let executable = u16_at(&header, 16) == 2;
        let table = u64_at(&header, 32);
        let entry_size = u16_at(&header, 54) as usize;
        let count = u16_at(&header, 56) as usize;
        if entry_size < 56 || count == 0 {
            return None;
        }
        let mut entries = vec![0u8; entry_size * count];
        file.read_exact_at(&mut entries, table).ok()?;
        // (virtual address, memory size, flags, file offset) of each PT_LOAD.
        let loads: Vec<(u64, u64, u32, u64)> = entries
            .chunks_exact(entry_size)
            .filter(|entry| u32_at(entry, 0) == 1)
            .map(|entry| {
                let (address, size) = (u64_at(entry, 16), u64_at(entry, 40));
                (address, size, u32_at(entry, 4), u64_at(entry, 8))
            })
            .collect();
        let link_base = if executable {
            loads
                .iter()
                .map(|(address, ..)| *address)
                .min()
                .map_or(0, |address| address & !0xfff)
        } else {
            0
        };
        const EXECUTE: u32 = 1;
        let code = loads
            .iter()
            .filter(|(_, _, flags, _)| flags & EXECUTE != 0)
            .map(|(address, size, _, position)| {
                let start = address.saturating_sub(link_base);
                (start, start.saturating_add(*size), *position)
            })
            .collect();
        Some(Segments {
            link_base,
            code,
            file,
        })
    }

    /// Whether `offset` from the load base can be a return address: it lies in code and
    /// the bytes before it end a call instruction (x86-64: `call rel32`, or `call` through
    /// a register or memory, opcode FF /2; elsewhere only the code range is checked). A
    /// bogus frame is rarely both.
    pub fn holds_return_address(&self, offset: u64) -> bool {
        let Some((start, _, position)) = self
            .code
            .iter()
            .find(|(start, end, _)| (*start..=*end).contains(&offset))
        else {
            return false;
        };
        if !cfg!(target_arch = "x86_64") {
            return true;
        }
        let mut before = [0u8; 7];
        let Some(at) = (offset - start + position).checked_sub(before.len() as u64) else {
            return false;
        };
        if self.file.read_exact_at(&mut before, at).is_err() {
            return false;
        }
        // `call rel32` ends 5 bytes back; FF /2 forms end 2 to 7 bytes back.
        before[2] == 0xe8
            || (2..=7).any(|back| {
                let opcode = before[7 - back];
                let modrm = before.get(8 - back).copied().unwrap_or(0);
                opcode == 0xff && (modrm >> 3) & 7 == 2
            })
    }
}

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

    /// The bytes of the module at `offset` from its load base, if they lie in code.
    fn code_at<const N: usize>(&self, offset: u64) -> Option<[u8; N]> {
        let (start, _, position) = self
            .code
            .iter()
            .find(|(start, end, _)| (*start..*end).contains(&offset))?;
        let mut bytes = [0u8; N];
        self.file
            .read_exact_at(&mut bytes, offset - start + position)
            .ok()?;
        Some(bytes)
    }

    /// Whether the return address `offset` (which [`Segments::holds_return_address`]
    /// accepted) can be the caller of the frame `callee` — the return address one frame
    /// deeper, as an offset in this module when it is the same module (`None`: another
    /// one). A direct call (`call rel32`) names its target: a function of this module,
    /// which the callee's code must follow, or a stub that jumps to another module. The
    /// walk's garbage in code built without frame pointers is often a stale return address
    /// left on the stack by an earlier call (inside `free`, after its call to an internal
    /// function): it follows a call instruction, but not one that can have led to the
    /// callee. Indirect calls cannot be checked. x86-64 only.
    pub fn may_have_called(&self, offset: u64, callee: Option<u64>) -> bool {
        if !cfg!(target_arch = "x86_64") {
            return true;
        }
        let Some(before) = offset.checked_sub(5).and_then(|at| self.code_at::<5>(at)) else {
            return true;
        };
        if before[0] != 0xe8 {
            return true;
        }
        let relative = i32::from_le_bytes([before[1], before[2], before[3], before[4]]);
        let target = offset.wrapping_add(relative as i64 as u64);
        if self.is_stub(target) {
            return true;
        }
        // A function of this module: the callee's return address lies in its code, after
        // its start (functions are rarely a mebibyte long; a tail call may have gone on
        // to another function, whose frame is then cut off with the garbage — a shorter
        // context, never a wrong one).
        callee.is_some_and(|callee| callee > target && callee - target < 1 << 20)
    }

    /// Whether the code at `offset` is a PLT entry: an indirect jump through the GOT
    /// (`jmp *rel(%rip)`, after `endbr64` and a `bnd` prefix where the build has them).
    fn is_stub(&self, offset: u64) -> bool {
        let Some(code) = self.code_at::<7>(offset) else {
            return false;
        };
        let rest = if code[..4] == [0xf3, 0x0f, 0x1e, 0xfa] {
            &code[4..]
        } else {
            &code[..]
        };
        let rest = rest.strip_prefix(&[0xf2]).unwrap_or(rest);
        rest.starts_with(&[0xff, 0x25])
    }

    /// Whether `offset` from the load base can be a return address: it lies in code and
    /// the bytes before it end a call instruction (x86-64: `call rel32`, or `call` through
    /// a register or memory, opcode FF /2; elsewhere only the code range is checked). A
    /// bogus frame is rarely both.
    pub fn holds_return_address(&self, offset: u64) -> bool {
        if !self
            .code
            .iter()
            .any(|(start, end, _)| (*start..=*end).contains(&offset))
        {
            return false;
        }
        if !cfg!(target_arch = "x86_64") {
            return true;
        }
        let Some(before) = offset.checked_sub(7).and_then(|at| self.code_at::<7>(at)) else {
            return false;
        };
        // `call rel32` ends 5 bytes back; FF /2 forms end 2 to 7 bytes back.
        before[2] == 0xe8
            || (2..=7).any(|back| {
                let opcode = before[7 - back];
                let modrm = before.get(8 - back).copied().unwrap_or(0);
                opcode == 0xff && (modrm >> 3) & 7 == 2
            })
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// A shared object of one executable segment (file offset = address) holding `code`
    /// at the given offsets.
    fn module(code: &[(u64, &[u8])]) -> (tempfile::NamedTempFile, Segments) {
        let mut image = vec![0u8; 0x1000];
        image[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
        image[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        image[32..40].copy_from_slice(&64u64.to_le_bytes()); // program headers
        image[54..56].copy_from_slice(&56u16.to_le_bytes());
        image[56..58].copy_from_slice(&1u16.to_le_bytes());
        let header = &mut image[64..120];
        header[0..4].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        header[4..8].copy_from_slice(&5u32.to_le_bytes()); // read, execute
        header[32..40].copy_from_slice(&0x1000u64.to_le_bytes());
        header[40..48].copy_from_slice(&0x1000u64.to_le_bytes());
        for (at, bytes) in code {
            image[*at as usize..*at as usize + bytes.len()].copy_from_slice(bytes);
        }
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &image).unwrap();
        let segments = Segments::read(file.path()).unwrap();
        (file, segments)
    }

    /// `call rel32` at `at` to `target`.
    fn call(at: u64, target: u64) -> [u8; 5] {
        let relative = (target as i64 - (at as i64 + 5)) as i32;
        let mut bytes = [0xe8, 0, 0, 0, 0];
        bytes[1..].copy_from_slice(&relative.to_le_bytes());
        bytes
    }

    #[test]
    fn a_direct_call_must_lead_to_the_frame_it_returns_from() {
        // A PLT stub at 0x100 (endbr64; bnd jmp *GOT), a function at 0x200, calls to each
        // (returning to 0x305 and 0x405), and an indirect call (call *%rax, back to 0x502).
        let (_file, segments) = module(&[
            (0x100, &[0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25]),
            (0x200, &[0x55, 0x48, 0x89, 0xe5]),
            (0x300, &call(0x300, 0x100)),
            (0x400, &call(0x400, 0x200)),
            (0x500, &[0xff, 0xd0]),
        ]);
        for offset in [0x305, 0x405, 0x502] {
            assert!(segments.holds_return_address(offset), "{offset:#x}");
        }
        // Through the stub: any callee, in any module.
        assert!(segments.may_have_called(0x305, None));
        assert!(segments.may_have_called(0x305, Some(0x900)));
        // To the function at 0x200: a callee in it (after its start, in this module) —
        // not one in another module (a stale return address left on the stack), nor one
        // before the function.
        assert!(segments.may_have_called(0x405, Some(0x230)));
        assert!(!segments.may_have_called(0x405, None));
        assert!(!segments.may_have_called(0x405, Some(0x150)));
        // Indirect calls cannot be checked.
        assert!(segments.may_have_called(0x502, None));
    }
}

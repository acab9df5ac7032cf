//! Whether a program can be traced by preloading: an ELF executable without an
//! interpreter (`PT_INTERP`) is started by the kernel alone, so the dynamic loader never
//! reads `LD_PRELOAD` and none of its calls reach the tracer. `cairn run` says so up front
//! instead of leaving the user with an empty trace — unless the program carries the tracer,
//! linked in with `cairn link-flags`.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The file `program` names as the shell would find it (a name without a slash is looked
/// up along `PATH`).
pub fn resolve(program: &Path) -> Option<PathBuf> {
    if program.as_os_str().as_encoded_bytes().contains(&b'/') {
        return Some(program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|directory| directory.join(program))
        .find(|candidate| candidate.is_file())
}

/// What the tracer linked into a static program carries (crates/preload, `lifecycle.rs`).
const STATIC_MARKER: &[u8] = b"cairn-static-tracer-v1";

/// Whether a (static) program carries the tracer, linked in with `cairn link-flags`: its
/// file holds the marker. Read in pieces (a static program is tens of megabytes).
pub fn carries_tracer(path: &Path) -> bool {
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut window = Vec::with_capacity((1 << 20) + STATIC_MARKER.len());
    let mut piece = vec![0u8; 1 << 20];
    loop {
        let Ok(read) = file.read(&mut piece) else {
            return false;
        };
        if read == 0 {
            return false;
        }
        window.extend_from_slice(&piece[..read]);
        if window
            .windows(STATIC_MARKER.len())
            .any(|bytes| bytes == STATIC_MARKER)
        {
            return true;
        }
        // Keep the tail a marker could start in.
        let keep = window.len().min(STATIC_MARKER.len() - 1);
        window.drain(..window.len() - keep);
    }
}

/// Whether `path` is an ELF executable the dynamic loader does not start (statically
/// linked, static-pie included). Anything unreadable or not ELF (a script, whose
/// interpreter is dynamic) is not.
pub fn statically_linked(path: &Path) -> bool {
    let mut header = Vec::new();
    // The program headers of any executable are near its start.
    let read =
        std::fs::File::open(path).and_then(|file| file.take(64 * 1024).read_to_end(&mut header));
    read.is_ok() && without_interpreter(&header).unwrap_or(false)
}

const PT_INTERP: u32 = 3;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;

/// Reads the ELF header and program headers in `bytes`; `None` if they are not an ELF
/// executable's (or lie beyond `bytes`).
fn without_interpreter(bytes: &[u8]) -> Option<bool> {
    if bytes.get(..4)? != b"\x7fELF" {
        return None;
    }
    let wide = match bytes.get(4)? {
        1 => false,
        2 => true,
        _ => return None,
    };
    let little = match bytes.get(5)? {
        1 => true,
        2 => false,
        _ => return None,
    };
    let number = |at: usize, width: usize| -> Option<u64> {
        let field = bytes.get(at..at + width)?;
        let mut value = 0u64;
        for index in 0..width {
            let byte = if little {
                field[width - 1 - index]
            } else {
                field[index]
            };
            value = value << 8 | byte as u64;
        }
        Some(value)
    };
    let kind = number(16, 2)? as u16;
    if kind != ET_EXEC && kind != ET_DYN {
        return None;
    }
    let (table, entry_size, entries) = if wide {
        (number(32, 8)?, number(54, 2)?, number(56, 2)?)
    } else {
        (number(28, 4)?, number(42, 2)?, number(44, 2)?)
    };
    for entry in 0..entries {
        let at = usize::try_from(table.checked_add(entry.checked_mul(entry_size)?)?).ok()?;
        if number(at, 4)? as u32 == PT_INTERP {
            return Some(false);
        }
    }
    // Static, or static-pie (a shared library has no interpreter either, but nobody
    // runs one as a program).
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_program_has_an_interpreter() {
        assert!(!statically_linked(Path::new("/bin/sh")));
        assert!(!statically_linked(Path::new("/nonexistent")));
        assert_eq!(without_interpreter(b"#!/bin/sh\n"), None);
        // Damaged: a program header table beyond the bytes.
        let mut damaged = b"\x7fELF\x02\x01".to_vec();
        damaged.resize(64, 0);
        damaged[16] = ET_EXEC as u8;
        damaged[32] = 0xff;
        damaged[56] = 1;
        assert_eq!(without_interpreter(&damaged), None);
    }
}

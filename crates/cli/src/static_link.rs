//! `cairn link-flags`: how to link the tracer into a static program, which no preloading
//! reaches. The program's calls of each hooked function go to the tracer's `__wrap_` hook
//! (`ld --wrap`, one option per call in a response file) and the tracer's archive,
//! `libcairn_static.a` (crates/preload-static), is pulled in by its anchor symbol.

use std::path::PathBuf;

use anyhow::{Context, Result};
use cairn_model::{Call, Layer};

const ARCHIVE_NAME: &str = "libcairn_static.a";
/// A symbol only the archive defines: asking the linker for it pulls the tracer in (with
/// its constructor) even before any wrapped call does.
const ANCHOR: &str = "cairn_static_anchor";
/// What the archive's Rust side needs from the C libraries, beyond libc.
const SYSTEM_LIBRARIES: &str = "-lpthread -ldl -lm -lrt";

/// The calls a static program's link wraps: every hook of the POSIX and stdio layers, and
/// the start and ends of the process (`__libc_start_main` tells the tracer where `main`
/// begins). MPI and the library layers are left to dynamic linking.
pub fn wrapped_calls() -> impl Iterator<Item = Call> {
    Call::ALL.iter().copied().filter(|call| {
        !call.is_share()
            && (matches!(call.layer(), Layer::Posix | Layer::Stdio)
                || matches!(call.name(), "__libc_start_main" | "_exit" | "_Exit"))
    })
}

/// Writes the response file beside the archive (replacing it atomically) and returns the
/// linker arguments: `-Wl,@FILE -Wl,--undefined=ANCHOR ARCHIVE -lpthread ...`.
pub fn link_flags() -> Result<String> {
    let archive = crate::run::installed_file(ARCHIVE_NAME, "CAIRN_STATIC_LIB")?;
    let directory = archive
        .parent()
        .context("the static library has no directory")?;
    // `--undefined` too: the tracer's `__real_` references are weak (a call left out of
    // this list must still link), and a weak reference never pulls a member out of libc.a.
    let options: String = wrapped_calls()
        .map(|call| format!("--wrap={0}\n--undefined={0}\n", call.name()))
        .collect();
    let response: PathBuf = directory.join("cairn-wrap.rsp");
    if std::fs::read_to_string(&response).ok().as_deref() != Some(options.as_str()) {
        crate::run::write_replacing(&response, |file| {
            use std::io::Write as _;
            Ok(file.write_all(options.as_bytes())?)
        })?;
    }
    Ok(format!(
        "-Wl,@{} -Wl,--undefined={ANCHOR} {} {SYSTEM_LIBRARIES}",
        response.display(),
        archive.display()
    ))
}

//! Calls beyond read and write that name files or change them: temporary files made by
//! `mkstemp`, space reserved and advice given, sizes and modes changed.

mod common;

use common::*;

#[test]
fn mkstemp_opens_and_space_mode_and_advice_calls_are_metadata() {
    let (_directory, traced) = trace_program("tempfiles", &[], &[]);
    assert_eq!(
        traced.exit_code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&traced.output.stderr)
    );
    let name = String::from_utf8(traced.output.stdout.clone()).unwrap();
    let name = name.trim();
    assert!(
        name.starts_with("scratch-") && !name.ends_with("XXXXXX"),
        "{name}"
    );
    traced.assert_files(&[&format!("/{name}")]);
    assert_fields(
        traced.file(&format!("/{name}")),
        &[
            // mkstemp is the open: no open by name happened.
            ("opens", 1),
            ("writes", 3),
            ("bytes_written", 30),
            ("closes", 1),
            // posix_fallocate, posix_fadvise, fallocate, truncate, fchmod, chmod,
            // faccessat, unlink.
            ("metas", 8),
            ("failures", 0),
        ],
    );
    let calls = &traced.summary["calls"];
    for (call, count, failures) in [
        ("mkstemp", 1, 0),
        // The call on the pipe is on a pipe, runtime noise to the summary (`--all` shows it).
        ("posix_fallocate", 1, 0),
        ("posix_fadvise", 1, 0),
        ("fallocate", 1, 0),
        ("truncate", 1, 0),
        ("fchmod", 1, 0),
        ("chmod", 1, 0),
        ("faccessat", 1, 0),
    ] {
        assert_eq!(
            calls[call]["count"].as_u64(),
            Some(count),
            "{call}: {calls}"
        );
        assert_eq!(calls[call]["failures"].as_u64(), Some(failures), "{call}");
    }
    // posix_fallocate on a pipe returned ESPIPE without setting errno: the trace keeps the
    // error it returned.
    let dump = std::process::Command::new(cairn_binary())
        .args(["dump", "--expand", "--all"])
        .arg(&traced.trace)
        .output()
        .unwrap();
    let dump = String::from_utf8(dump.stdout).unwrap();
    let failed: Vec<&str> = dump
        .lines()
        .filter(|line| line.contains("posix_fallocate(pipe:") && line.contains("errno"))
        .collect();
    assert_eq!(failed.len(), 1, "{dump}");
    assert!(
        failed[0].contains(&format!("errno {}", libc_espipe())),
        "{}",
        failed[0]
    );
}

/// `ESPIPE` on Linux.
fn libc_espipe() -> i32 {
    29
}

#[test]
fn the_kernel_counts_the_bytes_no_traced_call_moved() {
    // 1 MiB through write() and, the second time, 1 MiB more through syscall(SYS_write):
    // the kernel's counters (/proc/self/io) hold both, the trace the first, and the summary
    // says what is missing. Reads: only the tracer's own of /proc (a few KiB).
    for raw in [false, true] {
        let arguments: &[&str] = if raw { &["raw"] } else { &[] };
        let (_directory, traced) = trace_program("raw_syscalls", &[], arguments);
        assert_eq!(traced.exit_code(), Some(0));
        let kernel = &traced.summary["process_list"][0]["kernel_io"];
        let field = |name: &str| kernel[name].as_u64().unwrap_or_else(|| panic!("{kernel}"));
        let mib = 1 << 20;
        let written = if raw { 2 * mib } else { mib };
        assert_eq!(field("written_bytes"), written, "{kernel}");
        assert_eq!(field("write_calls"), written / 65536, "{kernel}");
        assert_eq!(field("traced_written_bytes"), mib, "{kernel}");
        assert_eq!(field("unseen_written_bytes"), written - mib, "{kernel}");
        assert_eq!(field("traced_read_bytes"), 0, "{kernel}");
        assert!(field("unseen_read_bytes") < 16 * 1024, "{kernel}");
        let total = &traced.summary["kernel_io"];
        assert_eq!(total["unseen_written_bytes"].as_u64(), Some(written - mib));
        let text = cairn_text("summary", &[], &traced.trace);
        let warning = "written that no traced call accounts for";
        assert_eq!(text.contains(warning), raw, "{text}");
        let line = text
            .lines()
            .find(|line| line.starts_with("cairn saw "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            line.contains(" written; not in the trace: ")
                && line.ends_with(&format!("{} written)", written - mib)),
            "{line}"
        );
    }
}

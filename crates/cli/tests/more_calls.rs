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

#[test]
fn bytes_between_two_files_count_on_both_and_aio_bytes_when_collected() {
    let (directory, traced) = trace_program("two_files", &[], &[]);
    assert_eq!(
        traced.exit_code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&traced.output.stderr)
    );
    let kib = 1024;
    let mib = 1024 * kib;
    let root = directory.path().to_str().unwrap();
    // source: written, then read by copy_file_range (1 MiB, then 0 at the end), sendfile
    // (64 KiB) and splice (32 KiB); readahead is a metadata call.
    assert_fields(
        traced.file("/source"),
        &[
            ("reads", 4),
            ("bytes_read", mib + 64 * kib + 32 * kib),
            ("writes", 1),
            ("bytes_written", mib),
            ("metas", 1),
        ],
    );
    // Each destination has the bytes its source gave.
    for (name, writes, bytes, syncs) in [
        ("/copied", 2, mib, 1),
        ("/sent", 1, 64 * kib, 0),
        ("/spliced", 1, 32 * kib, 0),
    ] {
        assert_fields(
            traced.file(name),
            &[
                ("writes", writes),
                ("bytes_written", bytes),
                ("reads", 0),
                ("syncs", syncs),
            ],
        );
    }
    // AIO: four 16 KiB writes, one read and a list of two 4 KiB writes, counted when
    // aio_return collected them; the submissions (lio_listio one call) are metadata calls;
    // the time is the latency from submission.
    let asynchronous = traced.file("/async");
    assert_fields(
        asynchronous,
        &[
            ("writes", 6),
            ("bytes_written", 72 * kib),
            ("reads", 1),
            ("bytes_read", 16 * kib),
            ("metas", 6),
        ],
    );
    assert!(asynchronous["write_time"].as_f64().unwrap() > 0.0);
    let dump = cairn_text("dump", &["--expand"], &traced.trace);
    let completions: Vec<(u64, f64)> = dump
        .lines()
        .filter(|line| line.contains("aio_write_done("))
        .map(|line| {
            let offset = line.split(" @ ").nth(1).unwrap().split(')').next().unwrap();
            let latency = line.split(", ").last().unwrap().split(' ').next().unwrap();
            (offset.parse().unwrap(), latency.parse().unwrap())
        })
        .collect();
    assert_eq!(
        completions
            .iter()
            .map(|(offset, _)| *offset)
            .collect::<Vec<_>>(),
        [0, 16384, 32768, 49152, 65536, 69632],
        "{dump}"
    );
    // tee between two pipes (not files: shown with --all): read on one, written on the other.
    let everything = cairn_text("dump", &["--expand", "--all"], &traced.trace);
    for call in ["  tee(pipe:[", "  tee_into(pipe:["] {
        let lines: Vec<&str> = everything
            .lines()
            .filter(|line| line.contains(call))
            .collect();
        assert_eq!(lines.len(), 1, "{call}: {everything}");
        assert!(lines[0].contains(", 100 bytes) = 100"), "{}", lines[0]);
    }
    let duration = traced.summary["duration"].as_f64().unwrap();
    for (_, latency) in &completions {
        assert!(*latency > 0.0 && *latency < duration, "{dump}");
    }
    // fgetpos/fsetpos are seeks: the last 5 bytes land at 10, where fgetpos was.
    assert_fields(
        traced.file("/positions"),
        &[("writes", 3), ("bytes_written", 25), ("seeks", 2)],
    );
    assert!(
        dump.contains("fwrite(") && dump.contains(" 5 bytes @ 10) = 5"),
        "{dump}"
    );
    // The directory: opendir, each entry (the program prints how many) and the end from
    // readdir, closedir.
    let entries: u64 = String::from_utf8_lossy(&traced.output.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_fields(traced.file(root), &[("metas", entries + 3), ("opens", 0)]);
    // renameat names both files; utimensat the new name.
    assert_fields(traced.file("/sent2"), &[("metas", 1)]);
    let calls = &traced.summary["calls"];
    assert_calls(
        calls,
        &[
            ("copy_file_range", 2, mib),
            ("copy_file_range_into", 2, mib),
            ("sendfile", 1, 64 * kib),
            ("sendfile_into", 1, 64 * kib),
            ("aio_write", 4, 0),
            ("lio_listio", 1, 0),
            ("aio_write_done", 6, 72 * kib),
            ("aio_read_done", 1, 16 * kib),
            ("tmpfile", 1, 0),
            ("readdir", entries + 1, 0),
            ("renameat", 1, 0),
            ("utimensat", 1, 0),
            ("sync_file_range", 1, 0),
            ("fgetpos", 1, 0),
            ("fsetpos", 1, 0),
        ],
    );
    // The unnamed temporary file: one open, its 100 bytes.
    let temporary = traced
        .paths()
        .into_iter()
        .find(|path| path.ends_with(" (deleted)"))
        .unwrap_or_else(|| panic!("{:#?}", traced.paths()));
    assert_fields(
        traced.file(&temporary),
        &[("opens", 1), ("writes", 1), ("bytes_written", 100)],
    );
}

#[test]
fn cp_shows_the_bytes_of_both_files() {
    // coreutils' cp copies with copy_file_range where it can (read and write elsewhere):
    // either way the source was read and the copy written, 3,000,000 bytes each.
    let directory = tempfile::tempdir().unwrap();
    let source = directory.path().join("input.bin");
    let bytes: Vec<u8> = (0..3_000_000u32).map(|index| (index % 251) as u8).collect();
    std::fs::write(&source, &bytes).unwrap();
    let copy = directory.path().join("copy.bin");
    let trace = directory.path().join("trace.cairn");
    let mut command = std::process::Command::new(cairn_binary());
    command
        .args(["run", "-q", "-o"])
        .arg(&trace)
        .args(["--", "cp"])
        .arg(&source)
        .arg(&copy);
    let traced = run_and_summarise(&mut command, trace);
    assert_eq!(traced.exit_code(), Some(0));
    assert_eq!(std::fs::read(&copy).unwrap(), bytes);
    assert_fields(traced.file("/input.bin"), &[("bytes_read", 3_000_000)]);
    assert_fields(traced.file("/copy.bin"), &[("bytes_written", 3_000_000)]);
    let calls = &traced.summary["calls"];
    assert_eq!(
        calls["copy_file_range"]["bytes"], calls["copy_file_range_into"]["bytes"],
        "{calls}"
    );
}

#[test]
fn relative_names_follow_the_working_directory_whoever_moved_it() {
    let (_directory, traced) = trace_program("working_directory", &["-pthread"], &[]);
    assert_eq!(
        traced.exit_code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&traced.output.stderr)
    );
    // Each file once, with its own bytes: `g` was made in `a` because another thread had
    // gone back there (a thread's copy of the working directory is dropped whoever moves
    // it), `h` in `a` after fchdir, `i` there too after a chdir that failed.
    for (name, bytes) in [
        ("/a/f", 10),
        ("/b/f", 20),
        ("/a/g", 30),
        ("/a/h", 40),
        ("/a/i", 50),
    ] {
        assert_fields(
            traced.file(name),
            &[("opens", 1), ("writes", 1), ("bytes_written", bytes)],
        );
    }
    assert!(
        !traced.paths().iter().any(|path| path.ends_with("/b/g")),
        "{:#?}",
        traced.paths()
    );
    // Intercepted, not recorded: the directory a program works in is not one of its files.
    let calls = &traced.summary["calls"];
    assert!(
        calls.get("chdir").is_none() && calls.get("fchdir").is_none(),
        "{calls}"
    );
}

//! The command line itself: naming, exit status, `lib`, `merge`, and bad input.

mod common;

use std::process::Command;

use common::*;

fn cairn() -> Command {
    Command::new(cairn_binary())
}

#[test]
fn lib_prints_the_preload_library() {
    let output = cairn().arg("lib").output().unwrap();
    assert!(output.status.success());
    let printed = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        std::path::Path::new(printed.trim()),
        library().canonicalize().unwrap()
    );
}

#[test]
fn default_trace_names_never_overwrite() {
    let directory = tempfile::tempdir().unwrap();
    library();
    for expected in ["true.cairn", "true.1.cairn", "true.2.cairn"] {
        let output = cairn()
            .current_dir(directory.path())
            .args(["run", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(message.contains(&format!("-> {expected}")), "{message}");
        assert!(directory.path().join(expected).is_file());
    }
    let leftovers: Vec<_> = std::fs::read_dir(directory.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(
        leftovers.is_empty(),
        "staging directories are removed: {leftovers:?}"
    );
}

#[test]
fn exit_status_is_the_commands() {
    let directory = tempfile::tempdir().unwrap();
    library();
    let trace = directory.path().join("t.cairn");
    for (script, expected) in [("exit 0", 0), ("exit 42", 42), ("kill -TERM $$", 128 + 15)] {
        let status = cairn()
            .args(["run", "-q", "-o"])
            .arg(&trace)
            .args(["--", "sh", "-c", script])
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(expected), "{script}");
        assert_eq!(
            summary_json(&trace, &[])["exit_status"].as_i64(),
            Some(expected as i64)
        );
    }
    let missing = cairn()
        .args(["run", "-q", "--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr)
        .starts_with("cairn: error: cannot run /nonexistent/program"));
}

#[test]
fn environment_configuration_and_merge() {
    let directory = tempfile::tempdir().unwrap();
    let program = compile("twenty_writes", directory.path(), &[]);
    let staging = directory.path().join("staging");
    let status = Command::new(&program)
        .arg(directory.path())
        .env("LD_PRELOAD", library())
        .env("CAIRN_DIR", &staging)
        .status()
        .unwrap();
    assert!(status.success());
    let traced = merge_staging(&staging, directory.path().join("merged.cairn"));
    assert_fields(
        traced.file("/out.dat"),
        &[("writes", 20), ("bytes_written", 200)],
    );
    // CAIRN_DISABLE=1 loads the library but records nothing.
    let disabled = directory.path().join("disabled");
    Command::new(&program)
        .arg(directory.path())
        .env("LD_PRELOAD", library())
        .env("CAIRN_DIR", &disabled)
        .env("CAIRN_DISABLE", "1")
        .status()
        .unwrap();
    assert!(!disabled.exists());
}

fn assert_one_line_error(path: &std::path::Path, expected: &str) {
    for command in ["summary", "dump"] {
        let output = cairn().arg(command).arg(path).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{command} {}",
            path.display()
        );
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.starts_with("cairn: error: "), "{stderr}");
        assert!(
            stderr.contains(expected),
            "{stderr:?} should mention {expected:?}"
        );
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn bad_input_gives_one_line_errors() {
    let directory = tempfile::tempdir().unwrap();
    library();
    let good = directory.path().join("good.cairn");
    let status = cairn()
        .args(["run", "-q", "-o"])
        .arg(&good)
        .args(["--", "sh", "-c", "echo hi > out.txt"])
        .current_dir(directory.path())
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&good).unwrap();

    assert_one_line_error(&directory.path().join("missing.cairn"), "No such file");
    let empty = directory.path().join("empty.cairn");
    std::fs::write(&empty, b"").unwrap();
    assert_one_line_error(&empty, "not a cairn trace");
    let foreign = directory.path().join("foreign.cairn");
    std::fs::copy("/bin/sh", &foreign).unwrap();
    assert_one_line_error(&foreign, "not a cairn trace");
    let truncated = directory.path().join("truncated.cairn");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert_one_line_error(&truncated, "truncated");
    let corrupt = directory.path().join("corrupt.cairn");
    let mut damaged = bytes.clone();
    damaged[40] ^= 0xff;
    std::fs::write(&corrupt, &damaged).unwrap();
    assert_one_line_error(&corrupt, "checksum mismatch");
    let newer = directory.path().join("newer.cairn");
    let mut future = bytes.clone();
    future[8] = 9;
    std::fs::write(&newer, &future).unwrap();
    assert_one_line_error(&newer, "version 9.0 is not supported");
}

#[test]
fn failed_write_keeps_the_previous_trace() {
    let directory = tempfile::tempdir().unwrap();
    library();
    let trace = directory.path().join("keep.cairn");
    let status = cairn()
        .args(["run", "-q", "-o"])
        .arg(&trace)
        .args(["--", "true"])
        .status()
        .unwrap();
    assert!(status.success());
    let before = std::fs::read(&trace).unwrap();
    // A trace path inside a directory that does not exist cannot be written...
    let output = cairn()
        .args(["run", "-q", "-o"])
        .arg(directory.path().join("no/such/dir/t.cairn"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    // ...and a merge into a read-only directory fails without touching the old file.
    let staging = directory.path().join("empty-staging");
    std::fs::create_dir(&staging).unwrap();
    let output = cairn()
        .arg("merge")
        .arg(&staging)
        .arg("-o")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no staging segments"));
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    // A trace file among the inputs that is not a trace: one line naming it, nothing
    // written.
    let foreign = directory.path().join("foreign.cairn");
    std::fs::write(&foreign, b"not a trace at all, just some bytes").unwrap();
    let output = cairn()
        .arg("merge")
        .arg(&trace)
        .arg(&foreign)
        .arg("-o")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("foreign.cairn"), "{stderr}");
    assert_eq!(std::fs::read(&trace).unwrap(), before);
}

#[test]
fn a_missing_staging_directory_is_made() {
    let directory = tempfile::tempdir().unwrap();
    library();
    // A staging directory that does not exist yet is made (a job's scratch directory),
    // and the program's status and calls come through; the staging is gone after.
    let scratch = directory.path().join("scratch/job");
    let written = directory.path().join("written");
    let status = cairn()
        .args(["run", "-q", "--staging"])
        .arg(&scratch)
        .arg("-o")
        .arg(directory.path().join("staged.cairn"))
        .args(["--", "sh", "-c", "echo hi > \"$0\"; exit 7"])
        .arg(&written)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(7));
    let summary = summary_json(&directory.path().join("staged.cairn"), &[]);
    assert_eq!(summary["exit_status"].as_i64(), Some(7));
    assert_eq!(summary["calls"]["write"]["count"].as_u64(), Some(1));
    assert_eq!(summary["calls"]["write"]["bytes"].as_u64(), Some(3));
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
}

#[test]
fn a_closed_output_pipe_ends_printing_quietly() {
    // `cairn summary trace | head -1`: the reader goes away after one line.
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let directory = tempfile::tempdir().unwrap();
    library();
    let trace = directory.path().join("t.cairn");
    let script = "for i in $(seq 300); do echo line > f$i; done";
    let status = cairn()
        .current_dir(directory.path())
        .args(["run", "-q", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", script])
        .status()
        .unwrap();
    assert!(status.success());
    for arguments in [&["summary"][..], &["dump", "--expand"]] {
        let mut child = cairn()
            .args(arguments)
            .arg(&trace)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.trim().is_empty(), "{arguments:?}");
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.is_empty(), "{arguments:?}: {stderr}");
        // Ended by SIGPIPE, or finished before the pipe closed.
        assert!(
            output.status.signal() == Some(libc::SIGPIPE) || output.status.success(),
            "{arguments:?}: {:?}",
            output.status
        );
    }
}

#[test]
fn control_characters_in_names_are_escaped_in_text_output() {
    let (_directory, traced) = trace_program("odd_names", &[], &[]);
    assert_eq!(traced.exit_code(), Some(0));
    // The JSON keeps the names as they are (escaped by JSON itself).
    assert_fields(traced.file("/two\nlines.dat"), &[("bytes_written", 10)]);
    assert_fields(
        traced.file("/red\u{1b}[31mtext.dat"),
        &[("bytes_written", 10)],
    );
    for command in [&["summary"][..], &["dump"], &["dump", "--expand"]] {
        let output = cairn().args(command).arg(&traced.trace).output().unwrap();
        assert!(output.status.success());
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            !text.contains('\u{1b}'),
            "{command:?}: a raw escape\n{text}"
        );
        assert!(
            text.contains("two\\nlines.dat") && text.contains("red\\u{1b}[31mtext.dat"),
            "{command:?}\n{text}"
        );
        assert!(
            !text.lines().any(|line| line.starts_with("lines.dat")),
            "{command:?}: a name broke a line\n{text}"
        );
    }
}

#[test]
fn a_frame_in_a_stripped_library_is_not_named_after_another_function() {
    // The library keeps only its exported entry point; the writes come from a static
    // function after it, which no symbol covers: its frame is `library+0xoffset`.
    let directory = tempfile::tempdir().unwrap();
    let library = directory.path().join("libstripped.so");
    let built = Command::new("cc")
        .args(["-O1", "-shared", "-fPIC", "-fno-toplevel-reorder", "-o"])
        .arg(&library)
        .arg(programs_directory().join("stripped.c"))
        .status()
        .unwrap();
    assert!(built.success());
    let stripped = Command::new("strip")
        .arg("--strip-unneeded")
        .arg(&library)
        .status()
        .expect("strip (binutils) runs");
    assert!(stripped.success());
    let rpath = format!("-Wl,-rpath,{}", directory.path().display());
    let search = format!("-L{}", directory.path().display());
    let program = compile(
        "stripped_main",
        directory.path(),
        &[&search, "-lstripped", &rpath],
    );
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap()],
    );
    assert_eq!(traced.exit_code(), Some(0));
    let sites: Vec<(String, u64)> = traced.summary["call_sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|site| site["call"] == "write")
        .map(|site| {
            (
                site["stack"].as_str().unwrap().to_string(),
                site["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(sites.len(), 2, "{sites:?}");
    let (inside, count) = sites
        .iter()
        .find(|(stack, _)| stack.contains("libstripped.so+0x"))
        .unwrap_or_else(|| panic!("no frame left as library+offset: {sites:?}"));
    assert_eq!(*count, 3);
    assert!(inside.ends_with(" → write"), "{inside}");
    assert!(!inside.contains("stripped_entry → write"), "{inside}");
    assert!(
        sites.contains(&("main → write".to_string(), 1)),
        "{sites:?}"
    );
}

#[test]
fn summary_tables_show_the_busiest_files_and_total_the_rest() {
    // patterns/metadata.c with 30 items touches 62 files and directories, each with the
    // same few calls. The tables show 20 and total the rest on one line; `--files 0` shows
    // every one; the JSON keeps them all.
    let (_directory, traced) = trace_program("patterns/metadata", &[], &["30"]);
    assert_eq!(traced.exit_code(), Some(0));
    let files = traced.summary["files"].as_array().unwrap().len();
    assert!(files > 40, "{files} files");
    let rows = |text: &str| {
        let table = text.split("\nFiles\n").nth(1).unwrap();
        let table = table.split("\n\n").next().unwrap();
        table.lines().filter(|line| line.contains("mdtest")).count()
    };
    let text = cairn_text("summary", &[], &traced.trace);
    assert_eq!(rows(&text), 20, "{text}");
    let more = text
        .lines()
        .find(|line| line.trim_start().starts_with("… and "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        more.contains(&format!("… and {} more files: ", files - 20)),
        "{more} ({files} files)"
    );
    let all = cairn_text("summary", &["--files", "0"], &traced.trace);
    assert!(!all.contains("… and "), "{all}");
    let five = cairn_text("summary", &["--files", "5"], &traced.trace);
    assert!(
        five.contains(&format!("… and {} more files: ", files - 5)),
        "{five}"
    );
}

//! `cairn export`: the output read back by the tools' own readers.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use common::*;

/// The Python environment `scripts/install-deps.sh` makes, with Perfetto's package.
fn python_with_readers() -> PathBuf {
    let python =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/python-tests/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/install-deps.sh",
        python.display()
    );
    python
}

/// `tests/programs/<name>.c` run on 4 ranks of Open MPI under `cairn run`, its trace
/// exported to Perfetto's format and read back (tests/python/read_perfetto.py): the
/// directory, the trace, and what the reader found.
fn traced_and_read(name: &str) -> (tempfile::TempDir, PathBuf, serde_json::Value) {
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi(name, 4, directory.path());
    let exported = directory.path().join(format!("{name}.pftrace"));
    cairn_text("export", &["-o", exported.to_str().unwrap()], &trace);
    let read = read_back(&["read_perfetto.py"], &exported);
    (directory, trace, read)
}

/// What `tests/python/<reader> [arguments…] FILE` prints as JSON about an exported `file`.
fn read_back(reader: &[&str], file: &std::path::Path) -> serde_json::Value {
    let output = succeeded(
        Command::new(python_with_readers())
            .arg(programs_directory().join("../python").join(reader[0]))
            .args(&reader[1..])
            .arg(file),
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Counts of each flow's (call names…, slices), as JSON text.
fn flows(read: &serde_json::Value) -> BTreeMap<String, u64> {
    let mut flows = BTreeMap::new();
    for flow in read["flows"].as_array().unwrap() {
        *flows.entry(flow.to_string()).or_default() += 1;
    }
    flows
}

#[test]
fn perfetto_export_has_a_slice_per_call_and_flows_to_mpi_io_sub_calls() {
    // 4 ranks: a ring of Isend/Irecv/Waitall, Allreduces, MPI-IO on a shared file (the MPI
    // library's POSIX calls inside the MPI-IO calls: open, pwrite, the aggregator's
    // pwritev and preadv).
    let (directory, trace, read) = traced_and_read("mpi_ring_io");
    // A slice per call the summary counts, call by call.
    let summary = summary_json(&trace, &[]);
    let counts = program_call_counts(&summary);
    let slices: BTreeMap<String, u64> = serde_json::from_value(read["slices"].clone()).unwrap();
    assert_eq!(slices, counts, "{read}");
    assert_eq!(slices["MPI_Isend"], 60);
    // Per layer track; every slice on a described track, every slice closed.
    let per_track: BTreeMap<String, u64> =
        serde_json::from_value(read["per_track"].clone()).unwrap();
    let expected: BTreeMap<String, u64> = [("mpi", 196), ("mpiio", 32), ("posix", 36)]
        .map(|(track, count)| (track.to_string(), count))
        .into();
    assert_eq!(per_track, expected, "{read}");
    assert_eq!(read["unknown_tracks"], 0);
    assert_eq!(read["unclosed"], 0);
    // One process track per rank, by pid.
    let pids = sorted_pids(&summary);
    assert_eq!(read["processes"], serde_json::json!(pids));
    // Per process, its threads' byte counters end at the bytes the summary counts.
    for process in summary["process_list"].as_array().unwrap() {
        let counted = &read["bytes"][process["pid"].to_string()];
        for (counter, field) in [
            ("bytes read", "bytes_read"),
            ("bytes written", "bytes_written"),
        ] {
            assert_eq!(
                counted[counter].as_u64().unwrap_or(0),
                process[field].as_u64().unwrap(),
                "{counter} of {process}: {read}"
            );
        }
    }
    assert_eq!(
        summary["process_list"][0]["bytes_written"].as_u64(),
        Some(65_536 + 4 * 1024),
        "rank 0's MPI-IO writes: one collective of 64 KiB, four of 1 KiB"
    );
    // The ring's 15 steps fold, and the ranks share one stream: those calls' times are
    // means, and say so; rank 0's own open (it creates the file, a part of its own in the
    // shared stream) keeps its own times.
    for call in ["MPI_Isend", "MPI_Irecv", "MPI_Waitall"] {
        assert_eq!(read["estimated"][call], 60, "{call}: {read}");
    }
    assert_eq!(read["estimated"]["open"], 3, "{read}");
    // Each MPI-IO call with sub-calls and its sub-calls share one flow: (call names, slices).
    let expected: BTreeMap<String, u64> = [
        // And each message its send and the completion where it arrived: the ring's 15
        // steps on 4 ranks (its Waitall of the receive and the send).
        (r#"["MPI_Isend","MPI_Waitall",2]"#, 60),
        (r#"["MPI_File_write_at","pwrite",2]"#, 16),
        (r#"["MPI_File_open","lstat","open",3]"#, 4),
        (r#"["MPI_File_close","close",2]"#, 4),
        // The aggregator's collective write and read.
        (r#"["MPI_File_write_at_all","pwritev",5]"#, 1),
        (r#"["MPI_File_read_at_all","preadv",5]"#, 1),
    ]
    .map(|(flow, count)| (flow.to_string(), count))
    .into();
    assert_eq!(flows(&read), expected, "{read}");
    // The tables, as CSV read with Python's csv module and as Parquet read with pyarrow
    // (tests/python/read_tables.py): a row per call the summary counts; per file the bytes
    // the summary says were read and written, from the events and in the files table; a
    // process row per process; the events per call site as the call-sites table counts them;
    // each sub-call named with the MPI-IO call it was made inside.
    for kind in ["csv", "parquet"] {
        let tables = directory.path().join(format!("ring.{kind}"));
        cairn_text(
            "export",
            &["--format", kind, "-o", tables.to_str().unwrap()],
            &trace,
        );
        let read = read_back(&["read_tables.py", kind], &tables);
        let rows: BTreeMap<String, u64> = serde_json::from_value(read["calls"].clone()).unwrap();
        assert_eq!(rows, counts, "{kind}: {read}");
        for file in summary["files"].as_array().unwrap() {
            let path = file["path"].as_str().unwrap();
            for field in ["bytes_read", "bytes_written"] {
                assert_eq!(
                    read["files"][path][field], file[field],
                    "{kind} {path} {field}"
                );
                assert_eq!(
                    read["files_table"][path][field], file[field],
                    "{kind} {path} {field}"
                );
            }
        }
        assert_eq!(
            read["files"].as_object().unwrap().len(),
            1,
            "{kind}: {read}"
        );
        assert_eq!(
            read["files_table"].as_object().unwrap().len(),
            1,
            "{kind}: {read}"
        );
        assert_eq!(read["processes_table"], serde_json::json!(pids), "{kind}");
        assert_eq!(read["call_sites"], read["call_sites_table"], "{kind}");
        let sites: u64 =
            serde_json::from_value::<BTreeMap<String, u64>>(read["call_sites"].clone())
                .unwrap()
                .values()
                .sum();
        assert_eq!(
            sites,
            counts.values().sum::<u64>(),
            "{kind}: every call has its site"
        );
        let parents: BTreeMap<String, u64> =
            serde_json::from_value(read["parents"].clone()).unwrap();
        let expected: BTreeMap<String, u64> = [
            ("MPI_File_open > open", 4),
            ("MPI_File_open > lstat", 4),
            ("MPI_File_write_at_all > pwritev", 4),
            ("MPI_File_write_at > pwrite", 16),
            ("MPI_File_read_at_all > preadv", 4),
            ("MPI_File_close > close", 4),
        ]
        .map(|(pair, count)| (pair.to_string(), count))
        .into();
        assert_eq!(parents, expected, "{kind}");
    }
    let read = read_back(
        &["read_tables.py", "parquet"],
        &directory.path().join("ring.parquet"),
    );
    for (column, kind) in [
        ("rank", "uint32"),
        ("start_ns", "uint64"),
        ("offset", "int64"),
        ("result", "int64"),
        ("subcall", "bool"),
        ("file", "string"),
    ] {
        assert_eq!(read["types"][column], kind, "{column}");
    }
    // Chrome's JSON, ranks 1 and 2 only: their calls, as many as the summary counts for them,
    // each with its process's pid; with MPI-IO and POSIX only, those layers' calls.
    let chrome = directory.path().join("ring.json");
    cairn_text(
        "export",
        &[
            "--format",
            "chrome",
            "--ranks",
            "1-2",
            "-o",
            chrome.to_str().unwrap(),
        ],
        &trace,
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&chrome).unwrap()).expect("valid JSON");
    let calls: Vec<&serde_json::Value> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["ph"] == "X")
        .collect();
    let processes = summary["process_list"].as_array().unwrap();
    let of_ranks: Vec<&serde_json::Value> = processes
        .iter()
        .filter(|process| matches!(process["rank"].as_u64(), Some(1 | 2)))
        .collect();
    let expected: u64 = of_ranks.iter().map(|p| p["events"].as_u64().unwrap()).sum();
    assert_eq!(calls.len() as u64, expected, "{json}");
    let mut pids: Vec<&serde_json::Value> = calls.iter().map(|call| &call["pid"]).collect();
    pids.sort_by_key(|pid| pid.as_u64());
    pids.dedup();
    let mut wanted: Vec<&serde_json::Value> = of_ranks.iter().map(|p| &p["pid"]).collect();
    wanted.sort_by_key(|pid| pid.as_u64());
    assert_eq!(pids, wanted);
    let isends: Vec<_> = calls
        .iter()
        .filter(|call| call["name"] == "MPI_Isend")
        .collect();
    assert_eq!(isends.len(), 30);
    assert!(isends
        .iter()
        .all(|call| call["args"]["times_estimated"] == true));
    cairn_text(
        "export",
        &[
            "--format",
            "chrome",
            "--ranks",
            "1-2",
            "--layers",
            "mpiio,posix",
            "-o",
            chrome.to_str().unwrap(),
        ],
        &trace,
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
    let layered = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["ph"] == "X")
        .inspect(|event| {
            assert!(
                event["cat"] == "mpiio" || event["cat"] == "posix",
                "{event}"
            )
        })
        .count();
    // Per rank: open, close, the collective write and read, four writes at an offset, and
    // the POSIX calls inside them (ranks 1 and 2 are not the aggregator).
    assert_eq!(layered, 30, "{json}");
}

#[test]
fn perfetto_export_joins_each_send_to_its_receive() {
    // tests/programs/mpi_received.c on 4 ranks: per rank 10 Isend→Irecv, one Isend→Recv,
    // one Sendrecv (its send to its neighbour's receive half) and 3 Send→Irecv. A posted
    // receive's flow ends where the message arrived, at the completion that finished it:
    // the Waitall of the ring (it names no source, but got bytes), and the successful
    // MPI_Test, the Waitany and the Waitsome of one receive each, which kept their
    // source (the Tests that found nothing, and the Wait on the Isend, end none).
    let (directory, trace, read) = traced_and_read("mpi_received");
    let expected: BTreeMap<String, u64> = [
        (r#"["MPI_Isend","MPI_Waitall",2]"#, 40),
        (r#"["MPI_Isend","MPI_Recv",2]"#, 4),
        (r#"["MPI_Sendrecv","MPI_Sendrecv_received",2]"#, 4),
        (r#"["MPI_Send","MPI_Test",2]"#, 4),
        (r#"["MPI_Send","MPI_Waitany",2]"#, 4),
        (r#"["MPI_Send","MPI_Waitsome",2]"#, 4),
    ]
    .map(|(flow, count)| (flow.to_string(), count))
    .into();
    assert_eq!(flows(&read), expected, "{read}");
    // OTF2: each rank's MpiRecv records, by tag, with the bytes that arrived (the ring's
    // 800 of 64 KiB posted; 24 of the 1 KiB posted for tags 22-24, whose completions
    // named their source), from its left neighbour.
    let archive = directory.path().join("received.otf2");
    cairn_text(
        "export",
        &["--format", "otf2", "-o", archive.to_str().unwrap()],
        &trace,
    );
    let mut received: BTreeMap<(u64, u64), (u64, u64)> = BTreeMap::new();
    for (record, location, line) in otf2_print(&archive, false) {
        if record == "MPI_RECV" {
            let entry = received
                .entry((location, number(&line, "Tag")))
                .or_default();
            entry.0 += 1;
            entry.1 += number(&line, "Length");
            assert!(line.contains("Sender: "), "{line}");
        }
    }
    let mut expected: BTreeMap<(u64, u64), (u64, u64)> = BTreeMap::new();
    for location in 0..4 {
        for tag in 0..10 {
            expected.insert((location, tag), (1, 800));
        }
        expected.insert((location, 20), (1, 100));
        expected.insert((location, 21), (1, 40));
        for tag in 22..25 {
            expected.insert((location, tag), (1, 24));
        }
    }
    assert_eq!(received, expected);
    // The tables: a completion of one receive names its source in the peer column (its
    // left neighbour), without a tag; the Waitall of two requests names none.
    let tables = directory.path().join("received.csv");
    cairn_text(
        "export",
        &["--format", "csv", "-o", tables.to_str().unwrap()],
        &trace,
    );
    let events = std::fs::read_to_string(tables.join("events.csv")).unwrap();
    let mut lines = events.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|field| *field == name).unwrap();
    let (rank, call, peer, tag) = (
        column("rank"),
        column("call"),
        column("peer"),
        column("tag"),
    );
    let mut sources: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        if ["MPI_Waitany", "MPI_Waitsome", "MPI_Waitall"].contains(&fields[call]) {
            let left = (fields[rank].parse::<u64>().unwrap() + 3) % 4;
            let named = if fields[call] == "MPI_Waitall" {
                String::new()
            } else {
                left.to_string()
            };
            sources.entry(fields[call].to_string()).or_default().push((
                fields[peer].to_string(),
                named,
                fields[tag].to_string(),
            ));
        }
    }
    assert_eq!(sources["MPI_Waitall"].len(), 40, "{sources:?}");
    assert_eq!(sources["MPI_Waitany"].len(), 4, "{sources:?}");
    for (peer, named, tag) in sources.values().flatten() {
        assert_eq!((peer, tag.as_str()), (named, ""), "{sources:?}");
    }
}

/// What `otf2-print` (Debian's otf2-tools) prints of an archive: its definitions (`-G`)
/// or its events, a record per line: (record, location or definition id, the rest).
fn otf2_print(archive: &std::path::Path, definitions: bool) -> Vec<(String, u64, String)> {
    let mut command = Command::new("otf2-print");
    if definitions {
        command.arg("-G");
    }
    let output = command.arg(archive.join("traces.otf2")).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let record = fields.next()?.to_string();
            let id = fields.next()?.parse().ok()?;
            Some((record, id, line.to_string()))
        })
        .collect()
}

/// The number in `<…>` after `field` in an `otf2-print` line (a definition's id).
fn reference(line: &str, field: &str) -> u64 {
    let after = &line[line
        .find(field)
        .unwrap_or_else(|| panic!("{field} in {line}"))..];
    let open = after.find('<').unwrap() + 1;
    after[open..open + after[open..].find('>').unwrap()]
        .parse()
        .unwrap()
}

/// The number after `field: ` in an `otf2-print` line.
fn number(line: &str, field: &str) -> u64 {
    let after = &line[line
        .find(field)
        .unwrap_or_else(|| panic!("{field} in {line}"))
        + field.len()..];
    after
        .trim_start_matches(": ")
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn otf2_export_is_read_by_otf2_print_with_each_ranks_io_operations_and_messages() {
    // tests/programs/mpi_ring_io.c on 4 ranks of Open MPI: per rank, one collective MPI-IO
    // write of 64 KiB, four independent writes of 1 KiB (each a POSIX pwrite), one
    // collective read of 64 KiB; the aggregator writes and reads every rank's block with one
    // pwritev and one preadv per rank's block; and a ring of 15 messages per rank.
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("mpi_ring_io", 4, directory.path());
    let archive = directory.path().join("ring.otf2");
    // Written twice: the second export replaces the first archive whole.
    for _ in 0..2 {
        cairn_text(
            "export",
            &["--format", "otf2", "-o", archive.to_str().unwrap()],
            &trace,
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(directory.path())
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with(".ring.otf2")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // The definitions: each location's rank, each handle's paradigm.
    let mut rank_of = BTreeMap::new();
    let mut paradigm_of = BTreeMap::new();
    for (record, id, line) in otf2_print(&archive, true) {
        match record.as_str() {
            "LOCATION" => {
                let group = &line[line.find("Group: \"rank ").unwrap() + 13..];
                let rank: u64 = group[..group.find('"').unwrap()].parse().unwrap();
                rank_of.insert(id, rank);
            }
            "IO_HANDLE" => {
                let posix = line.contains("I/O Paradigm: \"POSIX I/O\"");
                let mpiio = line.contains("I/O Paradigm: \"MPI I/O\"");
                assert!(posix != mpiio, "{line}");
                paradigm_of.insert(id, if posix { "posix" } else { "mpiio" });
            }
            _ => {}
        }
    }
    assert_eq!(rank_of.len(), 4, "{rank_of:?}");
    // Per rank and paradigm: (operations, bytes read, bytes written); per rank the handles
    // created and destroyed, and the message records with their peers.
    let mut operations: BTreeMap<(u64, &str), (u64, u64, u64)> = BTreeMap::new();
    let mut modes = BTreeMap::new();
    let mut handles: BTreeMap<(u64, &str), u64> = BTreeMap::new();
    let mut peers: BTreeMap<(u64, &str, u64), u64> = BTreeMap::new();
    let mut collectives: BTreeMap<(u64, String), u64> = BTreeMap::new();
    let mut enters = 0u64;
    for (record, location, line) in otf2_print(&archive, false) {
        let rank = rank_of[&location];
        match record.as_str() {
            "ENTER" => enters += 1,
            "IO_OPERATION_BEGIN" => {
                let write = line.contains("Mode: WRITE");
                assert!(write || line.contains("Mode: READ"), "{line}");
                modes.insert((location, number(&line, "Matching Id")), write);
            }
            "IO_OPERATION_COMPLETE" => {
                let paradigm = paradigm_of[&reference(&line, "Handle")];
                let bytes = number(&line, "Bytes Result");
                let entry = operations.entry((rank, paradigm)).or_default();
                entry.0 += 1;
                if modes[&(location, number(&line, "Matching Id"))] {
                    entry.2 += bytes;
                } else {
                    entry.1 += bytes;
                }
            }
            "IO_CREATE_HANDLE" | "IO_DESTROY_HANDLE" => {
                *handles
                    .entry((
                        rank,
                        if record == "IO_CREATE_HANDLE" {
                            "created"
                        } else {
                            "destroyed"
                        },
                    ))
                    .or_default() += 1;
            }
            "MPI_SEND" => {
                *peers
                    .entry((rank, "to", rank_of[&reference(&line, "Receiver")]))
                    .or_default() += 1;
            }
            "MPI_RECV" => {
                *peers
                    .entry((rank, "from", rank_of[&reference(&line, "Sender")]))
                    .or_default() += 1;
            }
            "MPI_COLLECTIVE_END" => {
                let operation = line.split("Operation: ").nth(1).unwrap();
                let operation = operation.split(',').next().unwrap().to_string();
                *collectives.entry((rank, operation)).or_default() += 1;
            }
            _ => {}
        }
    }
    let aggregators: Vec<u64> = (0..4)
        .filter(|rank| operations[&(*rank, "posix")].0 == 12)
        .collect();
    assert_eq!(aggregators.len(), 1, "{operations:?}");
    for rank in 0..4 {
        assert_eq!(
            operations[&(rank, "mpiio")],
            (6, 65_536, 65_536 + 4 * 1024),
            "rank {rank}"
        );
        let posix = if aggregators.contains(&rank) {
            (12, 4 * 65_536, 4 * 1024 + 4 * 65_536)
        } else {
            (4, 0, 4 * 1024)
        };
        assert_eq!(
            operations[&(rank, "posix")],
            posix,
            "rank {rank}: {operations:?}"
        );
        assert_eq!(handles[&(rank, "created")], 2, "{handles:?}");
        assert_eq!(handles[&(rank, "destroyed")], 2, "{handles:?}");
        assert_eq!(peers[&(rank, "to", (rank + 1) % 4)], 15, "{peers:?}");
        assert_eq!(peers[&(rank, "from", (rank + 3) % 4)], 15, "{peers:?}");
        // The 3 rounds' Allreduce and the barrier, as collective records.
        assert_eq!(
            collectives.get(&(rank, "ALLREDUCE".to_string())),
            Some(&3),
            "{collectives:?}"
        );
        assert_eq!(collectives[&(rank, "BARRIER".to_string())], 1);
    }
    assert_eq!(collectives.len(), 8, "{collectives:?}");
    assert_eq!(operations.len(), 8, "{operations:?}");
    assert_eq!(peers.len(), 8, "{peers:?}");
    // A region entered per call the summary counts.
    let summary = summary_json(&trace, &[]);
    let calls: u64 = program_call_counts(&summary).values().sum();
    assert_eq!(enters, calls);
    // Ranks 0 and 1 only: their I/O, and no message or collective records (their peers'
    // locations are not in the archive, so MPI_COMM_WORLD is not defined).
    let part = directory.path().join("part.otf2");
    cairn_text(
        "export",
        &[
            "--format",
            "otf2",
            "--ranks",
            "0-1",
            "-o",
            part.to_str().unwrap(),
        ],
        &trace,
    );
    let records: Vec<String> = otf2_print(&part, false)
        .into_iter()
        .map(|(record, _, _)| record)
        .collect();
    assert_eq!(
        records
            .iter()
            .filter(|r| *r == "IO_OPERATION_COMPLETE")
            .count(),
        6 + 12 + 6 + 4 - if aggregators[0] > 1 { 8 } else { 0 }
    );
    assert!(
        !records.iter().any(|r| r.starts_with("MPI_")),
        "{records:?}"
    );
}

#[test]
fn export_on_a_terminal_shows_the_expansion_reaching_every_event() {
    // Under `script` (util-linux), standard error is a terminal: the progress bar is drawn,
    // and its last state counts every event of the trace's streams (the program's 20
    // writes among them); redirected, nothing but the one-line result is said.
    let (directory, traced) = trace_program("twenty_writes", &[], &[]);
    let output_path = directory.path().join("t.pftrace");
    let command = format!(
        "{} export {} -o {}",
        cairn_binary().display(),
        traced.trace.display(),
        output_path.display()
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let shown = String::from_utf8_lossy(&output.stdout).replace('\r', "\n");
    let last = shown
        .lines()
        .filter_map(|line| line.split("expanding ").nth(1))
        .next_back()
        .unwrap_or_else(|| panic!("no progress bar in {shown:?}"));
    let (done, total) = last
        .split(" events")
        .next()
        .unwrap()
        .split_once('/')
        .unwrap();
    assert_eq!(done, total, "{shown}");
    assert!(total.parse::<u64>().unwrap() >= 20, "{shown}");
    let redirected = Command::new(cairn_binary())
        .args(["export", traced.trace.to_str().unwrap(), "-o"])
        .arg(&output_path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&redirected.stderr);
    assert!(!said.contains("expanding"), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
}

#[test]
fn perfetto_export_joins_each_hdf5_call_to_the_calls_below_it() {
    // tests/programs/patterns/hdf5_hyperslab.c at 4 ranks: each H5Dwrite and the MPI-IO
    // calls HDF5 made inside it (and the POSIX calls inside those) share one flow.
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_hdf5(directory.path());
    let exported = directory.path().join("hdf5.pftrace");
    cairn_text("export", &["-o", exported.to_str().unwrap()], &trace);
    let read = read_back(&["read_perfetto.py"], &exported);
    let summary = summary_json(&trace, &[]);
    let slices: BTreeMap<String, u64> = serde_json::from_value(read["slices"].clone()).unwrap();
    assert_eq!(slices, program_call_counts(&summary), "{read}");
    let writes: Vec<&serde_json::Value> = read["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|flow| flow.as_array().unwrap().contains(&"H5Dwrite".into()))
        .collect();
    assert_eq!(writes.len(), 8, "{read}");
    for flow in &writes {
        let names = flow.as_array().unwrap();
        assert!(names.contains(&"MPI_File_write_at_all".into()), "{flow}");
        // One H5Dwrite per flow.
        assert!(!names.contains(&"H5Dread".into()), "{flow}");
    }
    // The aggregators' pwrites are below some of them.
    assert!(
        writes
            .iter()
            .any(|flow| flow.as_array().unwrap().contains(&"pwrite".into())),
        "{read}"
    );
}

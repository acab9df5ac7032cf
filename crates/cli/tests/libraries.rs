//! Library layers above MPI-IO: `cairn wrapgen` turning a C header into call-table rows,
//! HDF5's and PnetCDF's generated hooks in the preload library, and parallel HDF5 and
//! PnetCDF programs traced from the library's call down through MPI-IO to POSIX with exact
//! figures at each layer.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn wrapgen(arguments: &[&str]) -> std::process::Output {
    Command::new(cairn_binary())
        .arg("wrapgen")
        .args(arguments)
        .current_dir(workspace())
        .output()
        .unwrap()
}

/// The rows' names and the skipped functions' names and reasons in wrapgen's text output.
fn rows_and_skipped(text: &str) -> (Vec<String>, Vec<String>) {
    let rows = text
        .lines()
        .filter(|line| line.contains(" generated ("))
        .map(|line| line.split(' ').next().unwrap().to_string())
        .collect();
    let skipped = text
        .lines()
        .filter_map(|line| line.strip_prefix("// skipped "))
        .map(String::from)
        .collect();
    (rows, skipped)
}

#[test]
fn wrapgen_generates_exactly_the_functions_selected() {
    // Every function of the header and of the header beside it, none of <stdio.h>'s.
    let output = wrapgen(&["tests/programs/libraries/toylib.h"]);
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let (rows, skipped) = rows_and_skipped(&text);
    assert_eq!(
        rows,
        [
            "toy_close",
            "toy_flush",
            "toy_helper",
            "toy_name",
            "toy_notify",
            "toy_open",
            "toy_read",
            "toy_secret",
            "toy_version",
            "toy_write"
        ]
    );
    assert_eq!(
        skipped,
        [
            "toy_log: variadic",
            "toy_configure: parameter 2 is struct toy_options by value",
            "toy_precise: returns long double"
        ]
    );
    // Types through typedef chains (toy_file → toy_handle → int64_t → long), pointers to
    // text and to data, `(void)`, an unnamed parameter, a keyword, a function pointer; the
    // class and the adapter's arguments from names and types.
    for expected in [
        "toy_open Library Open generated (path: *const c_char, flags: c_int) -> c_long\n    => library_call(0, 0, path);",
        "toy_write Library Write generated (file: c_long, data: *const c_void, size: c_ulong) -> c_long\n    => library_call(file as i64, size as u64, std::ptr::null());",
        "toy_read Library Read generated (file: c_long, data: *mut c_void, size: c_ulong) -> c_long\n    => library_call(file as i64, size as u64, std::ptr::null());",
        "toy_flush Library Sync generated (arg0: c_long) -> c_int\n    => library_call(arg0 as i64, 0, std::ptr::null());",
        "toy_version Library Meta generated () -> c_uint\n    => library_call(0, 0, std::ptr::null());",
        "toy_name Library Meta generated (file: c_long, buffer: *mut c_char, length: c_ulong) -> *mut c_char\n    => library_call(file as i64, length as u64, std::ptr::null());",
        "toy_notify Library Meta generated (file: c_long, callback: *mut c_void, type_: c_int) -> c_int\n    => library_call(file as i64, 0, std::ptr::null());",
    ] {
        assert!(text.contains(expected), "{expected}\nnot in\n{text}");
    }

    // An include list with a prefix, an exclude list by name, another layer.
    let output = wrapgen(&[
        "tests/programs/libraries/toylib.h",
        "--include",
        "toy_*,printf",
        "--exclude",
        "toy_secret,toy_log,toy_helper",
        "--layer",
        "netcdf",
    ]);
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let (rows, skipped) = rows_and_skipped(&text);
    assert_eq!(
        rows,
        [
            "toy_close",
            "toy_flush",
            "toy_name",
            "toy_notify",
            "toy_open",
            "toy_read",
            "toy_version",
            "toy_write"
        ]
    );
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(text.contains("toy_write NetCdf Write generated"), "{text}");
}

#[test]
fn wrapgen_says_what_is_wrong_in_one_line() {
    let directory = tempfile::tempdir().unwrap();
    let broken = directory.path().join("broken.h");
    std::fs::write(&broken, "int f(int x;\n").unwrap();
    let broken = broken.to_str().unwrap();
    for (arguments, expected) in [
        (
            vec!["/nonexistent/lib.h"],
            "the C preprocessor failed on /nonexistent/lib.h",
        ),
        (vec![broken], "cannot parse"),
        (
            vec!["tests/programs/libraries/toylib.h", "--layer", "fortran"],
            "unknown layer `fortran` (known: hdf5, netcdf, library)",
        ),
        (
            vec!["tests/programs/libraries/toylib.h", "--include", "nothing"],
            "matches the include and exclude lists",
        ),
    ] {
        let output = wrapgen(&arguments);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}");
        assert!(output.stdout.is_empty());
        let said = String::from_utf8(output.stderr).unwrap();
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.starts_with("cairn: error: ") && said.contains(expected),
            "{said}"
        );
    }
}

/// The functions of a library cairn hooks, as `scripts/generate-calls.sh` selects them.
fn listed_calls(list: &str) -> BTreeSet<String> {
    std::fs::read_to_string(workspace().join("scripts").join(list))
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn the_checked_in_library_rows_are_what_wrapgen_makes_of_the_headers() {
    let directory = tempfile::tempdir().unwrap();
    succeeded(
        Command::new(workspace().join("scripts/generate-calls.sh"))
            .arg(directory.path())
            .env("CAIRN", cairn_binary()),
    );
    for module in ["hdf5.rs", "pnetcdf.rs", "netcdf.rs"] {
        let checked_in = workspace().join("crates/model/src/calls").join(module);
        assert_eq!(
            std::fs::read_to_string(directory.path().join(module)).unwrap(),
            std::fs::read_to_string(&checked_in).unwrap(),
            "crates/model/src/calls/{module} is stale: run scripts/generate-calls.sh"
        );
    }
    // And the preload library defines exactly those hooks, no other HDF5 or NetCDF symbol.
    let nm = succeeded(
        Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(library()),
    );
    let defined = |prefix: &str| -> BTreeSet<String> {
        String::from_utf8_lossy(&nm.stdout)
            .lines()
            .filter_map(|line| line.split_whitespace().nth(2))
            .filter(|symbol| symbol.starts_with(prefix))
            .map(String::from)
            .collect()
    };
    assert_eq!(defined("H5"), listed_calls("hdf5-calls.txt"));
    assert_eq!(defined("ncmpi_"), listed_calls("pnetcdf-calls.txt"));
    assert_eq!(defined("nc_"), listed_calls("netcdf-calls.txt"));
}

#[test]
fn a_collective_h5dwrite_is_the_parent_of_its_mpiio_and_posix_calls() {
    // tests/programs/patterns/hdf5_hyperslab.c at 4 ranks: 1024 doubles (8 KiB) per rank
    // written collectively into a contiguous and a chunked dataset, a 4-int attribute, the
    // chunked dataset read back.
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_hdf5(directory.path());
    let summary = summary_json(&trace, &[]);
    // The program's calls, at the layer it called.
    assert_calls(
        &summary["calls"],
        &[
            ("H5Fcreate", 4, 0),
            ("H5Fopen", 4, 0),
            ("H5Fclose", 8, 0),
            ("H5Dcreate2", 8, 0),
            ("H5Dopen2", 4, 0),
            ("H5Dwrite", 8, 8 * 8192),
            ("H5Dread", 4, 4 * 8192),
            ("H5Dclose", 12, 0),
            ("H5Acreate2", 4, 0),
            ("H5Awrite", 4, 4 * 16),
            ("H5Aclose", 4, 0),
            ("H5Pset_fapl_mpio", 4, 0),
            ("H5Pset_dxpl_mpio", 4, 0),
            ("H5Pset_chunk", 4, 0),
        ],
    );
    // The file as the program used it: HDF5's opens, reads and writes, not MPI-IO's or
    // POSIX's again.
    let file = summary_file(&summary, "/slabs.h5");
    assert_fields(
        file,
        &[
            ("opens", 8),
            ("closes", 8),
            ("reads", 4),
            ("bytes_read", 4 * 8192),
            ("writes", 12),
            ("bytes_written", 8 * 8192 + 4 * 16),
        ],
    );
    assert!(file["library_subcalls"].as_u64().unwrap() > 0, "{file}");
    // Each process moved its own slabs; the MPI calls HDF5 made are not the program's.
    for process in summary["process_list"].as_array().unwrap() {
        assert_eq!(process["bytes_written"], 2 * 8192 + 16, "{process}");
        assert_eq!(process["bytes_read"], 8192, "{process}");
        assert_eq!(process["calls_by_kind"]["collective"], 1.0, "{process}");
    }
    // H5Dwrite → MPI_File_write_at_all → pwrite: the collective writes inside H5Dwrite
    // moved exactly its bytes, and the aggregators' pwrites below them the same.
    let write = &summary["library_calls"]["H5Dwrite"];
    assert_eq!(write["layer"], "hdf5");
    assert_eq!(write["count"], 8);
    assert_eq!(write["bytes"], 8 * 8192);
    assert_eq!(write["mpiio_bytes"], 8 * 8192, "{write}");
    assert_eq!(write["posix_bytes"], 8 * 8192, "{write}");
    assert!(write["mpiio_subcalls"].as_u64().unwrap() >= 8, "{write}");
    let read = &summary["library_calls"]["H5Dread"];
    assert_eq!(read["bytes"], 4 * 8192);
    assert!(read["mpiio_bytes"].as_u64().unwrap() >= 4 * 8192, "{read}");
    let collective = &summary["mpiio_calls"]["MPI_File_write_at_all"];
    assert_eq!(
        collective["bytes"], collective["posix_bytes"],
        "{collective}"
    );
    // Per layer, each call once at its own layer: HDF5's writes are HDF5's, its MPI-IO
    // sub-calls MPI-IO's.
    let profiles = &summary["layer_profiles"];
    assert_eq!(profiles["hdf5"]["operations"]["write"], 12);
    assert_eq!(profiles["hdf5"]["operations"]["read"], 4);
    assert!(profiles["mpiio"]["operations"]["write"].as_u64().unwrap() >= 8);
    // The text summary shows the table.
    let text = cairn_text("summary", &[], &trace);
    assert!(
        text.contains(
            "Library calls and the MPI-IO, MPI, POSIX and other libraries' calls below them"
        ),
        "{text}"
    );
}

#[test]
fn a_dataset_made_every_segment_is_one_id_in_the_trace() {
    // patterns/dataset_per_segment.c, IOR's HDF5 backend (`ior -a HDF5 -s 20`, 1.6 API:
    // H5Dcreate1, H5Dopen1) on 2 ranks: a dataset per segment, written in 4 independent
    // transfers of 16 KiB a rank and closed; then every dataset opened again and read
    // back. HDF5 gives each new dataset a new id, never the same twice, and H5Dcreate1 and
    // H5Dopen1 were not hooked: real IOR's segments were each a new key (39.7 KB at 100
    // segments on 4 ranks). Ids are now numbered like descriptors, a closed one's number
    // taken again, so every segment's dataset is the same id: the file is 1, each dataset
    // 2 (`cairn dump` shows a create's or open's result as `id N`).
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi_with("patterns/dataset_per_segment", directory.path(), &HDF5);
    let trace = directory.path().join("segments.cairn");
    succeeded(mpirun_traced(2, &trace, &program, directory.path()).arg("20"));
    let summary = summary_json(&trace, &[]);
    let transfer = 16384;
    assert_calls(
        &summary["calls"],
        &[
            ("H5Fcreate", 2, 0),
            ("H5Fopen", 2, 0),
            ("H5Fclose", 4, 0),
            ("H5Dcreate1", 40, 0),
            ("H5Dopen1", 40, 0),
            ("H5Dwrite", 160, 160 * transfer),
            ("H5Dread", 160, 160 * transfer),
            ("H5Dclose", 80, 0),
        ],
    );
    let dump = cairn_text("dump", &[], &trace);
    let ids = |call: &str| -> BTreeSet<String> {
        dump.lines()
            .filter(|line| line.trim_start().starts_with(&format!("{call}(")))
            .map(|line| {
                let after = line.split(") = ").nth(1).expect("a result");
                after.split("  ×").next().unwrap().to_string()
            })
            .collect()
    };
    let dataset = BTreeSet::from(["id 2".to_string()]);
    assert_eq!(ids("H5Dcreate1"), dataset, "{dump}");
    assert_eq!(ids("H5Dopen1"), dataset, "{dump}");
    let file = BTreeSet::from(["id 1".to_string()]);
    assert_eq!(ids("H5Fcreate"), file, "{dump}");
    assert_eq!(ids("H5Fopen"), file, "{dump}");
}

#[test]
fn a_dataset_per_segment_whose_starts_jitter_folds_and_keeps_every_offset() {
    // patterns/dataset_per_segment.c on 2 ranks, 200 segments: the data of each segment
    // starts past the other rank's block, 2 KiB further whenever HDF5 allocated a
    // metadata block in between, in no period. Kept in the keys, those jumps made a loop
    // of each run of equal ones (real IOR, 100 segments, 4 ranks: 29 KB; 9 KB at 10); the
    // jumps that jitter now go to the column, the pwrite's and the MPI-IO explicit
    // offset's alike, and the segments fold as one loop.
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi_with("patterns/dataset_per_segment", directory.path(), &HDF5);
    let trace = directory.path().join("segments.cairn");
    let segments = 200u64;
    succeeded(mpirun_traced(2, &trace, &program, directory.path()).arg(segments.to_string()));
    let dump = cairn_text("dump", &[], &trace);
    let folded = |call: &str| -> u64 {
        dump.lines()
            .filter(|line| line.contains(call) && line.contains("16384 at irregular offsets)"))
            .filter_map(|line| line.split("  ×").nth(1)?.split(' ').next()?.parse().ok())
            .max()
            .unwrap_or(0)
    };
    // The loop begins once the jumps are seen to jitter (a score of segments in).
    assert!(folded("pwrite(") >= 150, "{dump}");
    assert!(folded("MPI_File_write_at(") >= 150, "{dump}");
    // Read back, each segment's H5Dopen reads the dataset's 512-byte object header where
    // HDF5 put it (a few dozen distinct steps from header to header, in no period), then
    // the data, by the same call at the same context: the headers' steps, judged apart
    // from the data's, go to the column once 16 in a row missed the one a period back, at
    // both layers (each segment was a loop of its own: +392% from 20 to 200 segments on
    // 4 ranks). Each rank reads them after its own block, and reaches the rule at an
    // event of its own: both ranks still share one stream, each with its own column.
    // (A leaf of a stream ranks share counts one rank's occurrences.)
    let in_column = |call: &str| -> u64 {
        dump.lines()
            .filter(|line| line.contains(call) && line.contains(", 512 at irregular offsets)"))
            .filter_map(|line| {
                line.split("  ×")
                    .nth(1)?
                    .split(' ')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    };
    assert!(in_column("pread(") >= 150, "{dump}");
    assert!(in_column("MPI_File_read_at(") >= 150, "{dump}");
    let sharing = dump
        .lines()
        .filter(|line| line.starts_with("pid ") && line.contains("one of 2 ranks sharing a stream"))
        .count();
    assert_eq!(sharing, 2, "{dump}");
    // Every offset exact: each rank reads back exactly the 16 KiB blocks it wrote, each
    // once (the first of each segment's four from the rank's own column).
    let expanded = cairn_text("dump", &["--expand", "--limit", "100000"], &trace);
    let streams: Vec<&str> = expanded.split("\npid ").skip(1).collect();
    assert_eq!(streams.len(), 2);
    let offsets = |stream: &str, call: &str| -> Vec<i64> {
        stream
            .lines()
            .filter(|line| line.contains(&format!("{call}(")) && line.contains(", 16384 bytes @ "))
            .map(|line| {
                let after = line.split(", 16384 bytes @ ").nth(1).unwrap();
                after.split(')').next().unwrap().parse().unwrap()
            })
            .collect()
    };
    let mut written_anywhere = BTreeSet::new();
    for stream in &streams {
        let written = offsets(stream, "pwrite");
        let read = offsets(stream, "pread");
        assert_eq!(written.len() as u64, 4 * segments);
        assert!(
            written.windows(2).all(|pair| pair[0] < pair[1]),
            "{written:?}"
        );
        assert_eq!(
            written.iter().collect::<BTreeSet<_>>(),
            read.iter().collect::<BTreeSet<_>>()
        );
        written_anywhere.extend(written);
    }
    assert_eq!(written_anywhere.len() as u64, 2 * 4 * segments);
}

#[test]
fn an_hdf5_trace_replays_through_the_calls_hdf5_made() {
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_hdf5(directory.path());
    let summary = summary_json(&trace, &[]);
    let library_calls: u64 = summary["library_calls"]
        .as_object()
        .unwrap()
        .values()
        .map(|call| call["count"].as_u64().unwrap())
        .sum();
    let root = directory.path().join("replay-root");
    let output = succeeded(
        Command::new("mpirun.openmpi")
            .args(["--oversubscribe", "-np", "4"])
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .arg(cairn_binary())
            .args(["replay", "--json", "--root"])
            .arg(&root)
            .arg(&trace),
    );
    let fidelity: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // Not issued themselves (the replay does not link HDF5): through their sub-calls.
    assert_eq!(fidelity["library_calls"], library_calls);
    assert_eq!(
        fidelity["bytes_written"], fidelity["recorded_bytes_written"],
        "{fidelity}"
    );
    assert!(fidelity["bytes_written"].as_u64().unwrap() >= 8 * 8192);
    assert!(fidelity["layers"]["hdf5"].is_null(), "{fidelity}");
}

#[test]
fn a_collective_pnetcdf_write_is_the_parent_of_its_mpiio_and_posix_calls() {
    // tests/programs/patterns/pnetcdf_vars.c at 4 ranks: a 2-D field of doubles, 16 rows of
    // 64 (8 KiB) per rank, written collectively, one int per rank, the rows read back.
    let directory = tempfile::tempdir().unwrap();
    let program = compile_mpi_with("patterns/pnetcdf_vars", directory.path(), &["-lpnetcdf"]);
    let trace = directory.path().join("pnetcdf.cairn");
    succeeded(&mut mpirun_traced(4, &trace, &program, directory.path()));
    let summary = summary_json(&trace, &[]);
    assert_calls(
        &summary["calls"],
        &[
            ("ncmpi_create", 4, 0),
            ("ncmpi_open", 4, 0),
            ("ncmpi_close", 8, 0),
            ("ncmpi_def_dim", 12, 0),
            ("ncmpi_def_var", 8, 0),
            ("ncmpi_put_att_text", 4, 0),
            ("ncmpi_enddef", 4, 0),
            ("ncmpi_put_vara_double_all", 4, 4 * 8192),
            ("ncmpi_put_vara_int_all", 4, 4 * 4),
            ("ncmpi_inq_varid", 4, 0),
            ("ncmpi_begin_indep_data", 4, 0),
            ("ncmpi_get_vara_double", 4, 4 * 8192),
            ("ncmpi_end_indep_data", 4, 0),
        ],
    );
    let file = summary_file(&summary, "/history.nc");
    assert_fields(
        file,
        &[
            ("opens", 8),
            ("closes", 8),
            ("writes", 8),
            ("bytes_written", 4 * (8192 + 4)),
            ("reads", 4),
            ("bytes_read", 4 * 8192),
        ],
    );
    let write = &summary["library_calls"]["ncmpi_put_vara_double_all"];
    assert_eq!(write["layer"], "netcdf");
    assert_eq!(write["bytes"], 4 * 8192);
    assert_eq!(write["mpiio_bytes"], 4 * 8192, "{write}");
    assert_eq!(write["posix_bytes"], 4 * 8192, "{write}");
    let read = &summary["library_calls"]["ncmpi_get_vara_double"];
    assert_eq!(read["mpiio_bytes"], 4 * 8192, "{read}");
    assert_eq!(
        summary["layer_profiles"]["netcdf"]["operations"]["write"],
        8
    );
    for process in summary["process_list"].as_array().unwrap() {
        assert_eq!(process["bytes_written"], 8192 + 4, "{process}");
        assert_eq!(process["calls_by_kind"]["collective"], 1.0, "{process}");
    }
}

#[test]
fn a_users_generated_hooks_build_into_libcairn_and_count_exactly() {
    // The user's route for any library: rows from its header, `CAIRN_USER_CALLS=ROWS cargo
    // build`, then `CAIRN_LIB=` that libcairn.so. The cairn reading the trace has no rows
    // for these calls: the trace says their layer and class.
    let workspace = workspace();
    let target = workspace.join("target/user-calls");
    std::fs::create_dir_all(&target).unwrap();
    let output = wrapgen(&[
        "tests/programs/libraries/toylib.h",
        "--include",
        "toy_*",
        "--exclude",
        "toy_secret,toy_helper",
    ]);
    assert!(output.status.success(), "{output:?}");
    // Rewritten only when different: its time decides whether cargo rebuilds.
    let rows = target.join("toy.rows");
    if std::fs::read(&rows).ok().as_deref() != Some(&output.stdout[..]) {
        std::fs::write(&rows, &output.stdout).unwrap();
    }
    succeeded(
        Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["build", "--quiet", "-p", "cairn-preload", "--target-dir"])
            .arg(&target)
            .env("CAIRN_USER_CALLS", &rows)
            .current_dir(&workspace),
    );
    let hooks = target.join("debug/libcairn.so");
    let nm = succeeded(
        Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(&hooks),
    );
    let defined: Vec<String> = String::from_utf8(nm.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .filter(|symbol| symbol.starts_with("toy_"))
        .map(String::from)
        .collect();
    assert_eq!(
        defined,
        [
            "toy_close",
            "toy_flush",
            "toy_name",
            "toy_notify",
            "toy_open",
            "toy_read",
            "toy_version",
            "toy_write"
        ]
    );

    let directory = tempfile::tempdir().unwrap();
    let sources = programs_directory().join("libraries");
    let library = directory.path().join("libtoy.so");
    succeeded(
        Command::new("cc")
            .args(["-O1", "-shared", "-fPIC", "-o"])
            .arg(&library)
            .arg(sources.join("toylib.c")),
    );
    let program = directory.path().join("toy_user");
    succeeded(
        Command::new("cc")
            .args(["-O1", "-o"])
            .arg(&program)
            .arg(sources.join("toy_user.c"))
            .arg(format!("-I{}", sources.display()))
            .arg(format!("-L{}", directory.path().display()))
            .arg("-ltoy")
            .arg(format!("-Wl,-rpath,{}", directory.path().display())),
    );
    let trace = directory.path().join("toy.cairn");
    // The program checks every result the hooks forward: it fails if one is wrong.
    succeeded(
        Command::new(cairn_binary())
            .args(["run", "-q", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&program)
            .arg(directory.path())
            .env("CAIRN_LIB", &hooks),
    );
    let summary = summary_json(&trace, &[]);
    assert_calls(
        &summary["calls"],
        &[
            ("toy_open", 1, 0),
            ("toy_write", 11, 1000),
            ("toy_read", 5, 320),
            ("toy_flush", 1, 0),
            ("toy_name", 1, 0),
            ("toy_notify", 1, 0),
            ("toy_version", 1, 0),
            ("toy_close", 1, 0),
        ],
    );
    assert!(summary["calls"]["toy_secret"].is_null());
    assert_eq!(summary["calls"]["toy_write"]["layer"], "library");
    assert_eq!(summary["calls"]["toy_write"]["class"], "write");
    assert_eq!(summary["calls"]["toy_write"]["failures"], 1);
    // Calls on the handle toy_open returned are on the file it named.
    let file = summary_file(&summary, "/data.toy");
    assert_fields(
        file,
        &[
            ("opens", 1),
            ("closes", 1),
            ("writes", 10),
            ("bytes_written", 1000),
            ("reads", 5),
            ("bytes_read", 320),
        ],
    );
    assert_eq!(
        summary["layer_profiles"]["library"]["operations"]["write"],
        11
    );
}

#[test]
fn netcdf4_calls_are_the_parents_of_the_hdf5_calls_netcdf_makes() {
    // tests/programs/patterns/netcdf4_vars.c (serial NetCDF-4, HDF5 underneath): 16 x 64
    // doubles written in one nc_put_vara_double, the first 8 rows read back.
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/netcdf4_vars", directory.path(), &["-lnetcdf"]);
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap()],
    );
    let summary = &traced.summary;
    assert_calls(
        &summary["calls"],
        &[
            ("nc_create", 1, 0),
            ("nc_open", 1, 0),
            ("nc_close", 2, 0),
            ("nc_def_dim", 2, 0),
            ("nc_def_var", 1, 0),
            ("nc_put_att_text", 1, 0),
            ("nc_enddef", 1, 0),
            ("nc_put_vara_double", 1, 8192),
            ("nc_inq_varid", 1, 0),
            ("nc_get_vara_double", 1, 4096),
        ],
    );
    // The program's file, at NetCDF's level only; the files NetCDF probed for its own
    // configuration are named apart.
    let files = summary["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0]["path"].as_str().unwrap().ends_with("/field.nc"));
    assert_fields(
        &files[0],
        &[
            ("opens", 1 + 1),
            ("closes", 2),
            ("writes", 1),
            ("bytes_written", 8192),
            ("reads", 1),
            ("bytes_read", 4096),
        ],
    );
    assert!(files[0]["library_subcalls"].as_u64().unwrap() > 0);
    for path in summary["library_files"].as_array().unwrap() {
        assert!(!path.as_str().unwrap().ends_with("/field.nc"), "{path}");
    }
    assert_eq!(summary["process_list"][0]["bytes_written"], 8192);
    // NetCDF's write made HDF5's: one H5Dwrite of the same bytes, a call of its own layer
    // and a sub-call of nc_put_vara_double.
    let put = &summary["library_calls"]["nc_put_vara_double"];
    assert_eq!(put["layer"], "netcdf");
    assert_eq!(put["library_subcalls"], 1, "{put}");
    let h5dwrite = &summary["library_calls"]["H5Dwrite"];
    assert_eq!(h5dwrite["count"], 1, "{h5dwrite}");
    assert_eq!(h5dwrite["bytes"], 8192, "{h5dwrite}");
    let get = &summary["library_calls"]["nc_get_vara_double"];
    assert_eq!(get["library_subcalls"], 1, "{get}");
    assert_eq!(summary["library_calls"]["H5Dread"]["bytes"], 4096);
}

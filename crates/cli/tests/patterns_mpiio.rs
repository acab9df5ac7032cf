//! The corpus's MPI-IO layouts learnt from real I/O kernels (`tests/programs/patterns/`):
//! each program lays its file out as the real code does (its comment says which), runs
//! under Open MPI's `mpirun` with the real preload library at several rank and step
//! counts, and must give exact counts and bytes at every layer (the MPI-IO call and the
//! POSIX writes the MPI library makes of it) and a trace that does not grow with the steps.
//!
//! A test binary of its own (as `patterns_ranks.rs`): it runs 16 ranks on two cores.

mod common;

use common::mpi::Mpi;
use common::*;

/// `mpirun -np RANKS BINARY run -q -o TRACE -- PROGRAM DIRECTORY ARGUMENTS...` under Open
/// MPI, which must succeed.
fn traced_on(
    ranks: u64,
    binary: &std::path::Path,
    trace: &std::path::Path,
    program: &std::path::Path,
    directory: &std::path::Path,
    arguments: &[String],
) {
    succeeded(
        Mpi::OpenMpi
            .mpirun(ranks as usize)
            .arg(binary)
            .args(["run", "-q", "-o"])
            .arg(trace)
            .arg("--")
            .arg(program)
            .arg(directory)
            .args(arguments),
    );
}

#[test]
fn bt_io_cells_keep_every_row_and_fold_the_steps() {
    // patterns/bt_cells.c: NPB BT-IO's independent method (real BT-IO, bench/btio.sh), on
    // a 16^3 grid of 5 doubles a point (40 B): each of P = n^2 ranks writes its n cells of
    // a step's record through a file view, and Open MPI's OMPIO writes each cell's x-rows
    // (16 points, 640 B) with a `pwritev` each — but for one rank of four, whose first
    // cell's last row ends where its second cell's first row begins (one `pwritev` of two
    // rows a step). Every byte of each record at both layers.
    let directory = tempfile::tempdir().unwrap();
    let program = directory.path().join("bt_cells");
    Mpi::OpenMpi.compile("patterns/bt_cells", &program, &[]);
    let grid = 16u64;
    let record = grid.pow(3) * 40;
    let binary = measuring_cairn_binary();
    // Five runs at each step count on 4 ranks (timing statistics move a trace by a few
    // bytes from run to run: the medians are compared), one at 16 ranks.
    let mut sizes = std::collections::BTreeMap::new();
    let mut shapes = std::collections::BTreeMap::new();
    for (ranks, rows, runs) in [(4u64, 511u64, 5), (16, 1024, 1)] {
        for steps in [10u64, 100] {
            let mut bytes = Vec::new();
            for _ in 0..runs {
                let work = tempfile::tempdir_in(directory.path()).unwrap();
                let trace = work.path().join("bt.cairn");
                let arguments = [steps.to_string(), grid.to_string()];
                traced_on(ranks, &binary, &trace, &program, work.path(), &arguments);
                let summary = summary_json(&trace, &[]);
                assert_calls(
                    &summary["calls"],
                    &[
                        ("MPI_File_write", ranks * steps, record * steps),
                        ("pwritev", rows * steps, record * steps),
                    ],
                );
                let file = summary["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|file| file["path"].as_str().unwrap().ends_with("/bt.mpi"))
                    .unwrap_or_else(|| panic!("{summary}"));
                assert_fields(
                    file,
                    &[
                        ("writes", ranks * steps),
                        ("bytes_written", record * steps),
                        ("mpiio_subcall_bytes", record * steps),
                    ],
                );
                bytes.push(std::fs::metadata(&trace).unwrap().len());
                let dump = cairn_text("dump", &[], &trace);
                let dump = dump.replace(work.path().to_str().unwrap(), "DIR");
                shapes.insert((ranks, steps), shape(&dump));
            }
            bytes.sort_unstable();
            sizes.insert((ranks, steps), bytes[bytes.len() / 2]);
        }
    }
    eprintln!("bt_cells, (ranks, steps): trace bytes {sizes:?}");
    // On 4 ranks every rank's step folds: 10 and 100 steps within 5%. (On 16 ranks the
    // trace is still about 2.8 times the 4 ranks' and grows by up to 10% with the steps:
    // each rank's jumps between cells differ where its cells wrap around the grid, so its
    // steps fold into loops of their own shapes, each kept as a part of the stream.)
    assert_eq!(shapes[&(4, 10)], shapes[&(4, 100)], "the loops' shapes");
    let (small, large) = (sizes[&(4, 10)], sizes[&(4, 100)]);
    assert!(
        large.abs_diff(small) * 20 <= small,
        "{small} B at 10 steps, {large} B at 100"
    );
}

/// A dump's loops and calls without what the steps change (counts, process ids and times):
/// the trace's shape.
fn shape(dump: &str) -> Vec<String> {
    dump.lines()
        .skip_while(|line| !line.starts_with("pid "))
        .filter(|line| !line.starts_with("pid "))
        .map(|line| {
            line.split(['×', 'µ'])
                .next()
                .unwrap_or(line)
                .trim_end()
                .to_string()
        })
        .collect()
}

#[test]
fn a_checkpoint_file_per_step_through_its_own_communicator_folds() {
    // patterns/checkpoint_files_mpiio.c (S3D-IO through PnetCDF, bench figures in the
    // README): every step a communicator duplicated, a new file opened on it, 4 collective
    // writes, the file closed, the communicator freed; odd ranks allocate between steps,
    // so the MPI library's handles are other addresses on some ranks and steps. Numbered
    // in the order made, every step's communicator and file were new handles and no two
    // steps alike: real S3D-IO's trace grew from 8.0 to 62.9 KB from 5 to 50 checkpoints
    // on 4 ranks, 9.7 to 249 KB on 16. A freed communicator's and a closed file's numbers
    // are now taken again, lowest first, as descriptors are: the steps are one loop.
    let directory = tempfile::tempdir().unwrap();
    let program = directory.path().join("checkpoint_files_mpiio");
    Mpi::OpenMpi.compile("patterns/checkpoint_files_mpiio", &program, &[]);
    let binary = measuring_cairn_binary();
    let mut sizes = std::collections::BTreeMap::new();
    for (ranks, runs) in [(4u64, 3), (16, 1)] {
        for steps in [20u64, 200] {
            let mut bytes = Vec::new();
            for _ in 0..runs {
                let work = tempfile::tempdir_in(directory.path()).unwrap();
                let trace = work.path().join("ckpt.cairn");
                let arguments = [steps.to_string()];
                traced_on(ranks, &binary, &trace, &program, work.path(), &arguments);
                let summary = summary_json(&trace, &[]);
                let block = 4096 * 8;
                assert_calls(
                    &summary["calls"],
                    &[
                        ("MPI_Comm_dup", ranks * steps, 0),
                        ("MPI_Comm_free", ranks * steps, 0),
                        ("MPI_File_open", ranks * steps, 0),
                        ("MPI_File_close", ranks * steps, 0),
                        (
                            "MPI_File_write_at_all",
                            4 * ranks * steps,
                            4 * ranks * steps * block,
                        ),
                    ],
                );
                let files = summary["files"].as_array().unwrap();
                let fields: Vec<_> = files
                    .iter()
                    .filter(|file| file["path"].as_str().unwrap().contains("/field."))
                    .collect();
                assert_eq!(fields.len() as u64, steps);
                for file in fields {
                    assert_fields(
                        file,
                        &[("writes", 4 * ranks), ("bytes_written", 4 * ranks * block)],
                    );
                }
                let dump = cairn_text("dump", &[], &trace);
                let streams = dump.lines().filter(|line| line.starts_with("pid ")).count();
                assert_eq!(
                    dump.matches(" ranks sharing a stream").count(),
                    streams,
                    "{dump}"
                );
                // The first step, then the others as one loop.
                assert!(
                    dump.contains(&format!("  loop ×{} {{", steps - 1)),
                    "{dump}"
                );
                bytes.push(std::fs::metadata(&trace).unwrap().len());
            }
            bytes.sort_unstable();
            sizes.insert((ranks, steps), bytes[bytes.len() / 2]);
        }
    }
    eprintln!("checkpoint_files_mpiio, (ranks, steps): trace bytes {sizes:?}");
    let (small, large) = (sizes[&(4, 20)], sizes[&(4, 200)]);
    assert!(
        large.abs_diff(small) * 20 <= small,
        "{small} B at 20 steps, {large} B at 200"
    );
}

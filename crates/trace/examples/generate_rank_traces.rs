//! Writes the per-rank traces of a generated SPMD program (`cairn_trace::synthetic`), what a
//! job of P ranks that died before `MPI_Finalize` would leave, so that `cairn merge` can be
//! tried at scales this machine cannot run:
//!
//! ```text
//! cargo run --release -p cairn-trace --example generate_rank_traces -- 4096 /tmp/ranks
//! cairn merge --precision 99 -o job.cairn /tmp/ranks/rank-*.cairn
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_trace::synthetic::{rank_trace, Spmd};

fn main() -> ExitCode {
    let mut arguments = std::env::args().skip(1);
    let (Some(Ok(ranks)), Some(directory)) = (
        arguments.next().map(|ranks| ranks.parse::<u32>()),
        arguments.next().map(PathBuf::from),
    ) else {
        eprintln!("usage: generate_rank_traces RANKS DIRECTORY");
        return ExitCode::from(2);
    };
    if let Err(error) = std::fs::create_dir_all(&directory) {
        eprintln!("cannot create {}: {error}", directory.display());
        return ExitCode::FAILURE;
    }
    let program = Spmd::benchmark(ranks);
    for rank in 0..ranks {
        let path = directory.join(format!("rank-{rank}.cairn"));
        if let Err(error) = rank_trace(&program, rank).write(&path) {
            eprintln!("cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!("{ranks} rank traces in {}", directory.display());
    ExitCode::SUCCESS
}

//! Writes generated per-rank traces of an SPMD program (see `cairn_trace::synthetic`):
//! `cargo run --release -p cairn-trace --example generate_rank_traces -- RANKS DIRECTORY`,
//! then `cairn merge DIRECTORY/rank-*.cairn -o merged.cairn`.

use cairn_trace::synthetic::{rank_trace, Spmd};

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let (Some(ranks), Some(directory)) = (
        arguments.get(1).and_then(|ranks| ranks.parse::<u32>().ok()),
        arguments.get(2),
    ) else {
        eprintln!("usage: generate_rank_traces RANKS DIRECTORY");
        std::process::exit(2);
    };
    let program = Spmd::benchmark(ranks);
    std::fs::create_dir_all(directory).expect("the directory can be created");
    for rank in 0..ranks {
        let path = std::path::Path::new(directory).join(format!("rank-{rank:05}.cairn"));
        rank_trace(&program, rank)
            .write(&path)
            .expect("the trace can be written");
    }
}

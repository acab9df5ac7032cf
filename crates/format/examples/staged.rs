//! Prints a staging segment's records, one line each: what the tracer folded as the
//! program ran (runs, blocks, offsets records) and what it staged event by event.
//!
//!     cairn run --keep-staging -o t.cairn -- ./prog
//!     cargo run -q --example staged -p cairn-format -- .t.cairn.staging-*/*.seg [-v]
//!
//! (`-v`: every value of event records.)
use cairn_format::segment::{decode_chunk_header, records, Record, SegmentFile};

fn main() {
    let verbose = std::env::args().nth(2).is_some_and(|flag| flag == "-v");
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: staged SEGMENT_FILE [-v]");
        std::process::exit(2);
    };
    let file = match SegmentFile::open(std::path::Path::new(&path)) {
        Ok(file) => file,
        Err(error) => {
            eprintln!("staged: {error}");
            std::process::exit(1);
        }
    };
    let mut buffer = Vec::new();
    for chunk in 0..file.chunk_count() {
        if let Err(error) = file.read_chunk(chunk, &mut buffer) {
            eprintln!("staged: {error}");
            continue;
        }
        let Ok(list) = records(&buffer) else {
            println!("chunk {chunk}: damaged");
            continue;
        };
        if verbose {
            let header = decode_chunk_header(&buffer);
            println!(
                "chunk {chunk}: {} bytes, {} records, {header:?}",
                buffer.len(),
                list.len()
            );
        }
        for record in list {
            match record {
                Record::Event { call, event } if verbose => println!("event call {call} {event:?}"),
                Record::Event { call, event } => println!(
                    "event call {call} offset {} request {}",
                    event.offset, event.request
                ),
                Record::Run { call, run } => {
                    println!("run call {call} ×{} stride {}", run.count, run.stride)
                }
                Record::Block { count, positions } => {
                    println!("block ×{count} of the last {} events", positions.len())
                }
                Record::Offsets {
                    positions,
                    offsets,
                    sizes,
                } => println!(
                    "offsets: a body of {} repeated at {} offsets ({} sizes)",
                    positions.len(),
                    offsets.len(),
                    sizes.len()
                ),
                Record::Steps(steps) => println!(
                    "steps: a body of {} items ({}), {} occurrences{}, {} words",
                    steps.items.len(),
                    steps
                        .items
                        .iter()
                        .map(|item| format!("call {} changing {}", item.call, item.changing))
                        .collect::<Vec<_>>()
                        .join(", "),
                    steps.count,
                    if steps.open.is_some() {
                        " and one open"
                    } else {
                        ""
                    },
                    steps.words.len()
                ),
                Record::Context { context, frames } if verbose => {
                    println!("context {context} {frames:x?}")
                }
                _ => {}
            }
        }
    }
}

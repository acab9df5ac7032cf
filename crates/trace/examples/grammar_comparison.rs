//! Loop folding (what cairn stores) against Sequitur grammar compression (what Recorder and
//! Pilgrim use) on the same symbols: each event's exactly-kept key, after cairn's relative
//! encodings, from real traces.
//!
//! `cargo run --release -p cairn-trace --example grammar_comparison -- NAME=TRACE ...`
//! (`bench/grammar_comparison.sh` makes the traces). For each trace, over its streams:
//! events, distinct keys; cairn's folded tree (leaves + loops) and folding throughput;
//! Sequitur's grammar (rules, symbols in all bodies, its bytes as varints) and throughput.
//! Both are fed the same events in memory, one core, median of 3 runs for the times.

use std::collections::HashMap;
use std::time::Instant;

use cairn_compress::grammar::Grammar;
use cairn_compress::stream::{Body, EventKey, Item, Relative, StreamEncoder};
use cairn_model::Event;
use cairn_trace::Trace;

fn tree_nodes(body: Body) -> u64 {
    body.iter()
        .map(|item| match item {
            Item::Leaf(_) => 1,
            Item::Loop { body, .. } => 1 + tree_nodes(body),
        })
        .sum()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

struct Figures {
    events: u64,
    keys: usize,
    nodes: u64,
    fold_seconds: f64,
    rules: usize,
    symbols: usize,
    grammar_bytes: usize,
    grammar_seconds: f64,
}

fn compare(trace: &Trace) -> Figures {
    let mut figures = Figures {
        events: 0,
        keys: 0,
        nodes: 0,
        fold_seconds: 0.0,
        rules: 0,
        symbols: 0,
        grammar_bytes: 0,
        grammar_seconds: 0.0,
    };
    let mut seen = std::collections::HashSet::new();
    let mut distinct: HashMap<EventKey, u32> = HashMap::new();
    for stream in &trace.streams {
        // A stream several ranks share is compared once.
        if !seen.insert(std::sync::Arc::as_ptr(&stream.events)) {
            continue;
        }
        let mut events: Vec<(Event, Option<cairn_model::CallClass>)> = Vec::new();
        stream.events.expand(
            |call| trace.class_of(call),
            |mut event| {
                let class = trace.class_of(event.call);
                // What the trace keeps, not what expansion says about the times.
                event.flags &= !cairn_model::event_flags::TIMES_FROM_STATISTICS;
                events.push((event, class));
            },
        );
        // The symbols: each event's key under cairn's relative encodings.
        let mut relative = Relative::default();
        let symbols: Vec<u32> = events
            .iter()
            .map(|(event, class)| {
                let key = relative.encode(event, *class);
                let next = distinct.len() as u32;
                *distinct.entry(key).or_insert(next)
            })
            .collect();
        let mut fold_times = Vec::new();
        let mut grammar_times = Vec::new();
        let mut folded = None;
        let mut grammar = None;
        for _ in 0..3 {
            let started = Instant::now();
            let mut encoder = StreamEncoder::default();
            for (event, class) in &events {
                encoder.push(event, *class);
            }
            folded = Some(encoder.finish());
            fold_times.push(started.elapsed().as_secs_f64());
            let started = Instant::now();
            let mut built = Grammar::default();
            for symbol in &symbols {
                built.push(*symbol);
            }
            grammar_times.push(started.elapsed().as_secs_f64());
            grammar = Some(built);
        }
        let (folded, grammar) = (folded.unwrap(), grammar.unwrap());
        assert_eq!(
            grammar.expand_all(),
            symbols,
            "the grammar gives the events back"
        );
        figures.events += events.len() as u64;
        figures.nodes += tree_nodes(folded.nodes());
        figures.fold_seconds += median(fold_times);
        let (rules, grammar_symbols) = grammar.size();
        figures.rules += rules;
        figures.symbols += grammar_symbols;
        figures.grammar_bytes += grammar.encode().len();
        figures.grammar_seconds += median(grammar_times);
    }
    figures.keys = distinct.len();
    figures
}

fn main() {
    println!(
        "{:<22} {:>9} {:>7} | {:>9} {:>9} | {:>7} {:>9} {:>10} {:>9}",
        "workload",
        "events",
        "keys",
        "cairn nodes",
        "M ev/s",
        "rules",
        "symbols",
        "grammar B",
        "M ev/s"
    );
    for argument in std::env::args().skip(1) {
        let (name, path) = argument.split_once('=').unwrap_or((&argument, &argument));
        let trace = match Trace::open(std::path::Path::new(path)) {
            Ok(trace) => trace,
            Err(error) => {
                eprintln!("{path}: {error}");
                std::process::exit(2);
            }
        };
        let figures = compare(&trace);
        let rate = |seconds: f64| figures.events as f64 / seconds.max(1e-9) / 1e6;
        println!(
            "{:<22} {:>9} {:>7} | {:>11} {:>9.2} | {:>7} {:>9} {:>10} {:>9.2}",
            name,
            figures.events,
            figures.keys,
            figures.nodes,
            rate(figures.fold_seconds),
            figures.rules,
            figures.symbols,
            figures.grammar_bytes,
            rate(figures.grammar_seconds)
        );
    }
}

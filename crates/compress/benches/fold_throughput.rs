//! Compression throughput on one core: events per second through `StreamEncoder` (value
//! encodings + loop folding), for a loop-structured stream and for an irregular one, and
//! the resulting sizes. Prints medians of 5 runs. Run: `cargo bench -p cairn-compress`.

use std::time::Instant;

use cairn_compress::stream::StreamEncoder;
use cairn_model::{CallClass, Event};

const EVENTS: u64 = 2_000_000;

fn event(call: u16, file: u32, offset: i64, request: u64, context: u32, start: u64) -> Event {
    Event {
        call,
        start,
        duration: 250 + start % 17,
        file: Some(file),
        handle: 3,
        offset,
        request,
        result: request as i64,
        errno: 0,
        context,
        aux: 0,
        flags: 0,
    }
}

/// Like tests/programs/loops.c: seek, 4 reads, a write; every 10th iteration 8 log appends.
fn looped(index: u64) -> (Event, CallClass) {
    let iteration = index / 6;
    match index % 6 {
        0 => (event(0, 1, 0, 0, 1, index * 1000), CallClass::Seek),
        1..=4 => (
            event(1, 1, ((index % 6) - 1) as i64 * 64, 64, 2, index * 1000),
            CallClass::Read,
        ),
        _ => (
            event(
                2,
                1 + (iteration % 10 == 9) as u32,
                256,
                64,
                3,
                index * 1000,
            ),
            CallClass::Write,
        ),
    }
}

/// Random offsets and sizes: nothing folds.
fn irregular(index: u64) -> (Event, CallClass) {
    let mut state = index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x1234_5678;
    state ^= state >> 29;
    let offset = (state % 1_000_000) as i64 * 512;
    let request = 512 * (1 + (state >> 40) % 16);
    (
        event(
            1,
            (state >> 20) as u32 % 8,
            offset,
            request,
            (state >> 50) as u32 % 4,
            index * 1000,
        ),
        CallClass::Read,
    )
}

fn measure(name: &str, generate: fn(u64) -> (Event, CallClass)) {
    let events: Vec<(Event, CallClass)> = (0..EVENTS).map(generate).collect();
    let mut rates = Vec::new();
    let mut size = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let mut encoder = StreamEncoder::default();
        for (event, class) in &events {
            encoder.push(event, Some(*class));
        }
        let stream = encoder.finish();
        let bytes = stream.bytes();
        rates.push(EVENTS as f64 / start.elapsed().as_secs_f64());
        size = bytes.len();
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "{name:<10} {EVENTS} events: median {:.2} M events/s (min {:.2}, max {:.2}); folded stream {size} B ({:.4} B/event)",
        rates[2] / 1e6,
        rates[0] / 1e6,
        rates[4] / 1e6,
        size as f64 / EVENTS as f64
    );
}

fn main() {
    measure("looped", looped);
    measure("irregular", irregular);
}

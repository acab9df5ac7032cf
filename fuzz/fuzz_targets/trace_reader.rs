//! libFuzzer target: any bytes given to the trace reader give an error or a trace that
//! can be walked and expanded — never a panic or an unbounded allocation.
#![no_main]

#[path = "exercise.rs"]
mod exercise;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = cairn_trace::Trace::from_bytes(data.to_vec()) {
        exercise::exercise(&trace);
    }
});

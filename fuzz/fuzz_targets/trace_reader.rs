//! libFuzzer target: any bytes given to the trace reader give an error or a trace whose
//! every event decodes — never a panic or an unbounded allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = cairn_trace::Trace::from_bytes(data.to_vec()) {
        for stream in &trace.streams {
            if let Ok(events) = stream.events() {
                for event in events {
                    if event.is_err() {
                        break;
                    }
                }
            }
        }
    }
});

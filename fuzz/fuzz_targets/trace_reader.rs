//! libFuzzer target: any bytes given to the trace reader give an error or a trace that
//! can be walked and expanded — never a panic or an unbounded allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = cairn_trace::Trace::from_bytes(data.to_vec()) {
        struct Count(u64);
        impl cairn_trace::walk::Visitor for Count {
            fn event(&mut self, occurrence: &cairn_trace::walk::Occurrence) {
                self.0 = self.0.wrapping_add(occurrence.count);
            }
        }
        cairn_trace::walk::walk(&trace, &mut Count(0));
        for stream in &trace.streams {
            if stream.count < 100_000 {
                trace.expand(stream, |_| {});
            }
        }
    }
});

//! What both fuzz targets do with a trace that opened: walk every stream (as the analyses
//! do) and expand the small ones (as `cairn dump --expand` does).

struct Count(u64);

impl cairn_trace::walk::Visitor for Count {
    fn event(&mut self, occurrence: &cairn_trace::walk::Occurrence) {
        self.0 = self.0.wrapping_add(occurrence.count);
    }
}

pub fn exercise(trace: &cairn_trace::Trace) {
    cairn_trace::walk::walk(trace, &mut Count(0));
    for stream in &trace.streams {
        if stream.count < 100_000 {
            trace.expand(stream, |_| {});
        }
    }
}

//! The events as a CSV table (RFC 4180), one row per call, for pandas, R, a spreadsheet or
//! any SQL engine: rank, pid, thread, layer, call, class (read, write, open…), file, start and duration (ns since the
//! run's start), offset, request, result, errno, MPI peer and tag, whether the call was made
//! inside an MPI-IO call (`subcall`: the summary counts those bytes once, at the MPI-IO
//! call) and whether its times are means (`times_estimated`). Empty cells for values a
//! call does not have. Written as it goes.

use std::io::Write;

use cairn_model::event_flags;
use cairn_trace::Trace;

use crate::{ExportError, Filter};

/// The header row.
pub const COLUMNS: [&str; 17] = [
    "rank",
    "pid",
    "thread",
    "layer",
    "call",
    "class",
    "file",
    "start_ns",
    "duration_ns",
    "offset",
    "request",
    "result",
    "errno",
    "peer",
    "tag",
    "subcall",
    "times_estimated",
];

/// Writes `trace`'s events as CSV to `out`; returns the number of rows.
pub fn write(trace: &Trace, filter: &Filter, out: &mut impl Write) -> Result<u64, ExportError> {
    writeln!(out, "{}", COLUMNS.join(","))?;
    let mut rows = 0u64;
    for stream in &trace.streams {
        let process = &trace.processes[stream.process as usize];
        if !filter.keeps_process(process) {
            continue;
        }
        let rank = process.rank.map_or(String::new(), |rank| rank.to_string());
        let mut failure = Ok(());
        trace.expand(stream, |event| {
            if failure.is_err() || !filter.keeps_event(trace, &event) {
                return;
            }
            let call = &trace.calls[event.call as usize];
            let file = event.file.map_or(String::new(), |file| {
                quoted(&String::from_utf8_lossy(&trace.files[file as usize].path))
            });
            let (peer, tag) = crate::message(trace, &event).map_or_else(
                || (String::new(), String::new()),
                |(peer, tag)| (peer.to_string(), tag.to_string()),
            );
            let flag = |bit: u32| u8::from(event.flags & bit != 0);
            rows += 1;
            failure = writeln!(
                out,
                "{rank},{},{},{},{},{},{file},{},{},{},{},{},{},{peer},{tag},{},{}",
                process.pid,
                stream.thread,
                call.layer().map_or("", |layer| layer.name()),
                quoted(&call.name),
                call.class().map_or("", |class| class.name()),
                event.start,
                event.duration,
                if event.offset >= 0 {
                    event.offset.to_string()
                } else {
                    String::new()
                },
                event.request,
                event.result,
                if event.failed() {
                    event.errno.to_string()
                } else {
                    String::new()
                },
                flag(event_flags::INSIDE_MPIIO),
                flag(event_flags::TIMES_FROM_STATISTICS),
            );
        });
        failure?;
    }
    out.flush()?;
    Ok(rows)
}

/// A cell, quoted when it holds a comma, a quote or a line break.
fn quoted(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_with_separators_are_quoted() {
        assert_eq!(super::quoted("plain.dat"), "plain.dat");
        assert_eq!(super::quoted("a,b\"c"), "\"a,b\"\"c\"");
        assert_eq!(super::quoted("two\nlines"), "\"two\nlines\"");
    }
}

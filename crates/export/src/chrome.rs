//! Chrome's JSON trace-event format (`chrome://tracing`, Perfetto's UI, speedscope): one
//! `"ph": "X"` complete event per call, with microsecond times, the process's pid and the
//! thread's id, the layer as its category and the call's values as its arguments, plus
//! the metadata events naming processes and threads. Written as it goes; meant for small
//! traces (every call is a line of JSON), the Perfetto format for large ones.

use std::io::Write;

use cairn_model::event_flags;
use cairn_trace::Trace;

use crate::{ExportError, Filter};

/// Writes `trace` as a Chrome JSON trace to `out`; returns the number of calls written.
pub fn write(trace: &Trace, filter: &Filter, out: &mut impl Write) -> Result<u64, ExportError> {
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    let mut first = true;
    let mut line = |out: &mut dyn Write, text: String| -> std::io::Result<()> {
        let separator = if first { "\n" } else { ",\n" };
        first = false;
        write!(out, "{separator}{text}")
    };
    for process in trace.processes.iter().filter(|p| filter.keeps_process(p)) {
        let executable = String::from_utf8_lossy(&process.executable);
        let name = match process.rank {
            Some(rank) => format!("rank {rank}: {executable}"),
            None => executable.into_owned(),
        };
        line(
            out,
            format!(
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}",
                process.pid,
                json_string(&name)
            ),
        )?;
    }
    let mut calls = 0u64;
    for stream in &trace.streams {
        let process = &trace.processes[stream.process as usize];
        if !filter.keeps_process(process) {
            continue;
        }
        line(
            out,
            format!(
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"thread {}\"}}}}",
                process.pid, stream.thread, stream.thread
            ),
        )?;
        let mut failure = Ok(());
        filter.expand(trace, stream, |event| {
            let call = &trace.calls[event.call as usize];
            let mut arguments = vec![
                format!("\"request\":{}", event.request),
                format!("\"result\":{}", event.result),
            ];
            if let Some(file) = event.file {
                let path = String::from_utf8_lossy(&trace.files[file as usize].path);
                arguments.push(format!("\"file\":{}", json_string(&path)));
            }
            if event.offset >= 0 {
                arguments.push(format!("\"offset\":{}", event.offset));
            }
            if event.failed() {
                arguments.push(format!("\"errno\":{}", event.errno));
            }
            if let Some((peer, tag)) = crate::message(trace, &event) {
                arguments.push(format!("\"peer\":{peer}"));
                if let Some(tag) = tag {
                    arguments.push(format!("\"tag\":{tag}"));
                }
            }
            if event.flags & event_flags::TIMES_FROM_STATISTICS != 0 {
                arguments.push("\"times_estimated\":true".to_string());
            }
            calls += 1;
            failure = line(
                out,
                format!(
                    "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"ts\":{:.3},\"dur\":{:.3},\"pid\":{},\"tid\":{},\"args\":{{{}}}}}",
                    json_string(&call.name),
                    call.layer().map_or("unknown", |layer| layer.name()),
                    event.start as f64 / 1e3,
                    event.duration as f64 / 1e3,
                    process.pid,
                    stream.thread,
                    arguments.join(",")
                ),
            );
            failure.is_ok()
        });
        failure?;
    }
    out.write_all(b"\n]}\n")?;
    out.flush()?;
    Ok(calls)
}

/// A JSON string literal of `text`.
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_are_escaped_as_json() {
        assert_eq!(super::json_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\u000ad\"");
    }
}

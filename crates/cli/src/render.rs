//! Text output of `summary` and `dump`.

use std::fmt::Write as _;
use std::io::Write;

use cairn_analyze::summary::{Summary, SIZE_BIN_NAMES};
use std::collections::HashMap;
use std::sync::Arc;

use cairn_compress::stream::{
    EncodedStream, BLURRED_PEER, BLURRED_RESULT, BLURRED_TAG, PEER_DOUBLED, PEER_HALVED,
    SIZE_IN_COLUMN,
};
use cairn_model::{event_flags, Call, CallClass, Event};
use cairn_trace::symbols::Symbolizer;
use cairn_trace::Trace;

mod folded;

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn shorten(path: &str, width: usize) -> String {
    if path.chars().count() <= width {
        return path.to_string();
    }
    let tail: String = path
        .chars()
        .rev()
        .take(width - 1)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`...): a file name with a
/// newline must not break a table, and one with a terminal escape sequence must not reach
/// the user's terminal as one.
fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_debug());
        } else {
            escaped.push(c);
        }
    }
    escaped.into()
}

/// [`printable`] of bytes that may not be UTF-8 (invalid sequences shown as U+FFFD).
fn printable_bytes(bytes: &[u8]) -> String {
    printable(&String::from_utf8_lossy(bytes)).into_owned()
}

/// Quotes an argument for display the way a shell would need it, on one line.
fn shell_quote(argument: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-=:,+@%".contains(c);
    if !argument.is_empty() && argument.chars().all(plain) {
        return argument.to_string();
    }
    let escaped: String = argument.chars().flat_map(char::escape_debug).collect();
    format!("'{escaped}'")
}

/// Which of `files` the text tables show: every one when `limit` is 0 or they are no more,
/// else the `limit` busiest (bytes moved, then operations, then time), in their order. A
/// metadata benchmark's 40,000 files of no bytes would otherwise be 40,000 lines a table.
fn files_shown(files: &[cairn_analyze::summary::FileSummary], limit: usize) -> Vec<bool> {
    if limit == 0 || files.len() <= limit {
        return vec![true; files.len()];
    }
    let mut order: Vec<usize> = (0..files.len()).collect();
    let weight = |file: &cairn_analyze::summary::FileSummary| {
        (
            file.bytes_read + file.bytes_written,
            operations(file),
            file.read_time + file.write_time + file.meta_time,
        )
    };
    order.sort_by(|a, b| {
        let (a, b) = (weight(&files[*a]), weight(&files[*b]));
        (b.0, b.1).cmp(&(a.0, a.1)).then(b.2.total_cmp(&a.2))
    });
    let mut shown = vec![false; files.len()];
    for index in order.into_iter().take(limit) {
        shown[index] = true;
    }
    shown
}

/// Every call on a file the summary counts.
fn operations(file: &cairn_analyze::summary::FileSummary) -> u64 {
    file.opens
        + file.closes
        + file.reads
        + file.writes
        + file.seeks
        + file.syncs
        + file.flushes
        + file.stats
        + file.metas
        + file.dups
        + file.mmaps
}

/// The summary as tables; the files tables show the `files_limit` busiest files (0: all).
pub fn summary_text(summary: &Summary, files_limit: usize) -> String {
    let shown = files_shown(&summary.files, files_limit);
    let files = || {
        summary
            .files
            .iter()
            .zip(&shown)
            .filter(|(_, shown)| **shown)
            .map(|(file, _)| file)
    };
    let mut out = String::new();
    let command: Vec<String> = summary
        .command
        .iter()
        .map(|argument| shell_quote(argument))
        .collect();
    let command = command.join(" ");
    let status = summary
        .exit_status
        .map_or_else(String::new, |status| format!(", exit status {status}"));
    // A trace that lacks calls says so before any figure (the notes say whose and why).
    let unrecorded = match summary.unrecorded_calls {
        0 => String::new(),
        calls => format!(" (INCOMPLETE: {calls} more calls not recorded)"),
    };
    let _ = writeln!(
        out,
        "{}{status}: {} process{}, {} events{unrecorded}, {} read, {} written, {:.3} s",
        if command.is_empty() {
            "trace".to_string()
        } else {
            command
        },
        summary.processes,
        if summary.processes == 1 { "" } else { "es" },
        summary.events,
        human_bytes(summary.bytes_read),
        human_bytes(summary.bytes_written),
        summary.duration
    );
    let _ = writeln!(out, "\nFiles");
    let _ = writeln!(
        out,
        "  {:<44} {:>5} {:>7} {:>7} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "path", "opens", "reads", "writes", "read", "written", "read s", "write s", "meta s"
    );
    for file in files() {
        // Estimated times (shares of a folded loop's statistic) are marked `~`.
        let time = |seconds: f64| {
            let mark = if file.time_estimated { "~" } else { "" };
            format!("{mark}{seconds:.6}")
        };
        let _ = writeln!(
            out,
            "  {:<44} {:>5} {:>7} {:>7} {:>10} {:>10} {:>9} {:>9} {:>9}",
            shorten(&printable(&file.path), 44),
            file.opens,
            file.reads,
            file.writes,
            human_bytes(file.bytes_read),
            human_bytes(file.bytes_written),
            time(file.read_time),
            time(file.write_time),
            time(file.meta_time)
        );
    }
    let hidden: Vec<_> = summary
        .files
        .iter()
        .zip(&shown)
        .filter(|(_, shown)| !**shown)
        .map(|(file, _)| file)
        .collect();
    if !hidden.is_empty() {
        let _ = writeln!(
            out,
            "  … and {} more files: {} operations, {} read, {} written, {:.6} s \
             (--files 0 shows every file; --json lists them all)",
            hidden.len(),
            hidden.iter().map(|file| operations(file)).sum::<u64>(),
            human_bytes(hidden.iter().map(|file| file.bytes_read).sum()),
            human_bytes(hidden.iter().map(|file| file.bytes_written).sum()),
            hidden
                .iter()
                .map(|file| file.read_time + file.write_time + file.meta_time)
                .sum::<f64>()
        );
    }
    if files().any(|file| file.time_estimated) {
        let _ = writeln!(
            out,
            "  ~ estimated: a folded loop over several files keeps one timing statistic for \
             all of them, shared out equally"
        );
    }
    let _ = writeln!(
        out,
        "\nRequest sizes (bytes): count, min / mean / max, stddev"
    );
    for file in files() {
        for (what, stats, bandwidth) in [
            ("reads", &file.read_sizes, file.read_bandwidth),
            ("writes", &file.write_sizes, file.write_bandwidth),
        ] {
            if stats.count > 0 {
                let _ = writeln!(
                    out,
                    "  {:<44} {what:<6} {:>8}  {} / {:.1} / {}, {:.1}  ({}/s)",
                    shorten(&printable(&file.path), 44),
                    stats.count,
                    stats.min,
                    stats.mean,
                    stats.max,
                    stats.stddev,
                    human_bytes(bandwidth as u64)
                );
            }
        }
    }
    let _ = writeln!(out, "\nAccess sizes (Darshan bins)");
    let _ = write!(out, "  {:<44} {:<6}", "path", "");
    for name in SIZE_BIN_NAMES {
        let _ = write!(out, " {name:>8}");
    }
    let _ = writeln!(out);
    for file in files() {
        for (what, histogram) in [
            ("reads", &file.read_histogram),
            ("writes", &file.write_histogram),
        ] {
            if histogram.iter().any(|count| *count > 0) {
                let _ = write!(
                    out,
                    "  {:<44} {what:<6}",
                    shorten(&printable(&file.path), 44)
                );
                for count in histogram {
                    let _ = write!(out, " {count:>8}");
                }
                let _ = writeln!(out);
            }
        }
    }
    let _ = writeln!(out, "\nCalls");
    // Columns as wide as their longest entry (`MPI_File_write_at_all`, `point-to-point`).
    let widest = |width: &dyn Fn(&cairn_analyze::summary::CallSummary) -> usize, least| {
        summary.calls.values().map(width).fold(least, usize::max)
    };
    let name_width = summary
        .calls
        .keys()
        .map(|name| name.chars().count())
        .fold(20, usize::max);
    let layer_width = widest(&|call| call.layer.chars().count(), 6);
    let class_width = widest(&|call| call.class.chars().count(), 6);
    let _ = writeln!(
        out,
        "  {:<name_width$} {:<layer_width$} {:<class_width$} {:>10} {:>12} {:>10}",
        "call", "layer", "class", "count", "bytes", "time s"
    );
    for (name, call) in &summary.calls {
        let binding = match call.fortran {
            0 => String::new(),
            all if all == call.count => "  (Fortran)".to_string(),
            some => format!("  ({some} from Fortran)"),
        };
        let _ = writeln!(
            out,
            "  {:<name_width$} {:<layer_width$} {:<class_width$} {:>10} {:>12} {:>10.6}{binding}",
            name, call.layer, call.class, call.count, call.bytes, call.time
        );
    }
    if let Some(table) = &summary.rank_table {
        let _ = writeln!(out, "\nCalls by kind ({} ranks)", summary.ranks);
        let _ = writeln!(
            out,
            "  {:<24} {:>10} {:>11} {:>10} {:>13} {:>11}",
            "", "I/O", "collective", "blocking", "non-blocking", "completion"
        );
        for (name, kinds) in [
            ("rank 0", &table.rank_0),
            ("average of other ranks", &table.other_ranks_average),
        ] {
            let _ = writeln!(
                out,
                "  {:<24} {:>10.1} {:>11.1} {:>10.1} {:>13.1} {:>11.1}",
                name,
                kinds.io,
                kinds.collective,
                kinds.blocking,
                kinds.non_blocking,
                kinds.completion
            );
        }
    }
    if !summary.mpiio_calls.is_empty() {
        let _ = writeln!(out, "\nMPI-IO calls and the POSIX calls below them");
        let _ = writeln!(
            out,
            "  {:<28} {:>7} {:>12} {:>11} {:>9} {:>12} {:>9} {:>13} {:>8}",
            "call",
            "count",
            "bytes",
            "latency s",
            "posix",
            "posix bytes",
            "per call",
            "max posix s",
            "slowest"
        );
        for (name, call) in &summary.mpiio_calls {
            let _ = writeln!(
                out,
                "  {:<28} {:>7} {:>12} {:>11.6} {:>9} {:>12} {:>9.2} {:>13.6} {:>8}",
                name,
                call.count,
                call.bytes,
                call.mean_latency,
                call.posix_subcalls,
                call.posix_bytes,
                call.fragmentation,
                call.max_posix_latency,
                call.slowest_rank
                    .map_or("-".to_string(), |rank| format!("rank {rank}"))
            );
        }
    }
    if !summary.library_calls.is_empty() {
        let _ = writeln!(
            out,
            "\nLibrary calls and the MPI-IO, MPI, POSIX and other libraries' calls below them"
        );
        let _ = writeln!(
            out,
            "  {:<20} {:>6} {:>7} {:>12} {:>11} {:>7} {:>12} {:>7} {:>12} {:>6} {:>7} {:>8}",
            "call",
            "layer",
            "count",
            "bytes",
            "latency s",
            "mpiio",
            "mpiio bytes",
            "posix",
            "posix bytes",
            "mpi",
            "library",
            "slowest"
        );
        for (name, call) in &summary.library_calls {
            let _ = writeln!(
                out,
                "  {:<20} {:>6} {:>7} {:>12} {:>11.6} {:>7} {:>12} {:>7} {:>12} {:>6} {:>7} {:>8}",
                name,
                call.layer,
                call.count,
                call.bytes,
                call.mean_latency,
                call.mpiio_subcalls,
                call.mpiio_bytes,
                call.posix_subcalls,
                call.posix_bytes,
                call.mpi_subcalls,
                call.library_subcalls,
                call.slowest_rank
                    .map_or("-".to_string(), |rank| format!("rank {rank}"))
            );
        }
    }
    if !summary.call_sites.is_empty() {
        let _ = writeln!(out, "\nCall sites (by time; the 15 busiest)");
        let _ = writeln!(
            out,
            "  {:>10} {:>12} {:>10}  stack",
            "count", "bytes", "time s"
        );
        for site in summary.call_sites.iter().take(15) {
            let location = site
                .location
                .as_ref()
                .map_or(String::new(), |location| format!("  ({location})"));
            let _ = writeln!(
                out,
                "  {:>10} {:>12} {:>10.6}  {}{location}",
                site.count,
                site.bytes,
                site.time,
                printable(&site.stack)
            );
        }
    }
    if summary.processes > 1 {
        let _ = writeln!(out, "\nProcesses");
        let ranked = summary.ranks > 0;
        for process in &summary.process_list {
            let arguments: Vec<String> = process
                .arguments
                .iter()
                .map(|argument| shell_quote(argument))
                .collect();
            let rank = match (ranked, process.rank) {
                (false, _) => String::new(),
                (true, Some(rank)) => format!("rank {rank:<5} "),
                (true, None) => format!("{:<11}", "no rank"),
            };
            let _ = writeln!(
                out,
                "  {rank}pid {:<7} parent {:<7} {:<9} {:>7} events  {}{}",
                process.pid,
                process.parent_pid,
                process.ending,
                process.events,
                arguments.join(" "),
                process
                    .exec_of_pid
                    .map_or(String::new(), |pid| format!("  (exec in pid {pid})")),
            );
        }
    }
    if !summary.library_files.is_empty() {
        let _ = writeln!(
            out,
            "\n{} files only libraries touched inside the program's library calls (not in the files table): {}",
            summary.library_files.len(),
            summary.library_files.join(", ")
        );
    }
    // The MPI runtime's events counted but not kept have a note of their own (below).
    let filtered = &summary.filtered;
    let on_files = filtered.events - filtered.runtime_events_not_kept;
    if filtered.files > 0 {
        let reasons: Vec<String> = filtered
            .reasons
            .iter()
            .map(|(reason, count)| format!("{count} {reason}"))
            .collect();
        let _ = writeln!(
            out,
            "\n{on_files} events on {} files of runtime noise hidden ({}); --all shows them",
            filtered.files,
            reasons.join(", ")
        );
    } else if on_files > 0 {
        // Calls on no file: before `main`, or the MPI runtime's inside MPI_Init/Finalize.
        let _ = writeln!(
            out,
            "\n{on_files} events of the runtime (before main, inside MPI_Init/MPI_Finalize) \
             hidden; --all shows them"
        );
    }
    let messages = &summary.mpi_messages;
    if !messages.is_empty() {
        let _ = writeln!(
            out,
            "\nMPI messages: {} bytes sent, {} received, into receives posted for {}",
            messages.sent_bytes, messages.received_bytes, messages.posted_receive_bytes,
        );
    }
    if let Some(kernel) = &summary.kernel_io {
        let _ = writeln!(
            out,
            "\ncairn saw {:.1}% of the bytes the kernel counted ({} read, {} written; not in \
             the trace: {} read, {} written)",
            kernel.seen_percent(),
            kernel.read_bytes,
            kernel.written_bytes,
            kernel.unseen_read_bytes,
            kernel.unseen_written_bytes
        );
    }
    phases_text(&mut out, &summary.phases);
    insights_text(&mut out, &summary.insights);
    for blurred in &summary.blurred {
        if blurred.parameter == "iterations" {
            let _ = writeln!(
                out,
                "estimated: {} loops (starting with {}) ran {}..{} iterations each, from histograms; their total is exact",
                blurred.events,
                printable(&blurred.call),
                blurred.min,
                blurred.max
            );
            continue;
        }
        let _ = writeln!(
            out,
            "estimated: {} {}s of {} events are from histograms ({}..{}); counts and bytes exact",
            printable(&blurred.call),
            blurred.parameter,
            blurred.events,
            blurred.min,
            blurred.max
        );
    }
    for message in &summary.diagnostics {
        let _ = writeln!(out, "note: {}", printable(message));
    }
    out
}

/// The phases the program marked: what each one's calls did, the calls outside them last.
fn phases_text(out: &mut String, phases: &[cairn_analyze::phases::PhaseSummary]) {
    if phases.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nphases:");
    let inside = phases.iter().filter(|phase| !phase.name.is_empty());
    let outside = phases.iter().filter(|phase| phase.name.is_empty());
    for phase in inside.chain(outside) {
        let name = if phase.name.is_empty() {
            "(outside phases)".to_string()
        } else if phase.function {
            format!("{} (function)", printable(&phase.name))
        } else {
            format!("{} ×{}", printable(&phase.name), phase.occurrences)
        };
        let layers: Vec<String> = phase
            .layers
            .iter()
            .map(|(layer, share)| format!("{layer} {}", share.calls))
            .collect();
        let _ = writeln!(
            out,
            "  {name}: {} calls ({}), read {}, wrote {}, {:.6} s in calls",
            phase.calls,
            layers.join(", "),
            human_bytes(phase.bytes_read),
            human_bytes(phase.bytes_written),
            phase.time
        );
    }
}

/// The insights, each with its evidence and recommendation.
fn insights_text(out: &mut String, insights: &[cairn_analyze::insights::Insight]) {
    if insights.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nInsights");
    for insight in insights {
        let _ = writeln!(
            out,
            "  [{}] {}: {}",
            insight.level.to_uppercase(),
            insight.id,
            printable(&insight.message)
        );
        for (what, list) in [
            ("files", &insight.files),
            ("call sites", &insight.call_sites),
        ] {
            if !list.is_empty() {
                let shown: Vec<String> = list
                    .iter()
                    .map(|item| printable(item).into_owned())
                    .collect();
                let _ = writeln!(out, "      {what}: {}", shown.join(", "));
            }
        }
        if !insight.ranks.is_empty() {
            let ranks: Vec<String> = insight.ranks.iter().map(u32::to_string).collect();
            let _ = writeln!(out, "      ranks: {}", ranks.join(", "));
        }
        let _ = writeln!(out, "      what to do: {}", insight.recommendation);
    }
}

/// The peer and tag of an MPI message (", peer 3 tag 7"; a wildcard that matched says so),
/// or the root of a rooted collective (", root 0"); empty for other calls.
/// The peer and tag of a point-to-point call, the root of a rooted collective; with
/// `tag_step`, the tag is a step from the last one at the same context (`+1`).
/// `blurred`: a folded leaf's key flags saying its peer or tag is a histogram's (shown
/// as `~`; 0 for an event).
fn mpi_note(
    class: Option<CallClass>,
    aux: u64,
    flags: u32,
    tag_step: bool,
    blurred: u32,
) -> String {
    let (peer, tag) = cairn_model::peer_and_tag(aux);
    let named = |value: i32, matched: bool, wildcard: &str| match value {
        -1 => wildcard.to_string(),
        -2 => "none".to_string(),
        value if matched => format!("{value} ({wildcard})"),
        value => value.to_string(),
    };
    let any_tag = flags & event_flags::ANY_TAG != 0;
    match class {
        Some(CallClass::PointToPoint) => format!(
            ", peer {} tag {}",
            // Recursive doubling (halving): the rank XOR twice (half) the last mask at
            // the call site.
            if blurred & BLURRED_PEER != 0 {
                "~".to_string()
            } else if flags & PEER_DOUBLED != 0 {
                "rank XOR 2 × last mask".to_string()
            } else if flags & PEER_HALVED != 0 {
                "rank XOR last mask / 2".to_string()
            } else {
                named(peer, flags & event_flags::ANY_SOURCE != 0, "any source")
            },
            match tag_step {
                _ if blurred & BLURRED_TAG != 0 => "~".to_string(),
                true if any_tag => format!("{tag:+} (any tag)"),
                true => format!("{tag:+}"),
                false => named(tag, any_tag, "any tag"),
            },
        ),
        Some(CallClass::Collective) if peer >= 0 => format!(", root {peer}"),
        _ => String::new(),
    }
}

/// A folded leaf's first arguments: the file and size, or for MPI communication (which
/// names no file) the size, or the number of requests a completion call waited for.
fn call_arguments(
    class: Option<CallClass>,
    path: &str,
    has_file: bool,
    key: &cairn_compress::stream::EventKey,
    blurred_size: Option<&str>,
) -> String {
    // A size a histogram holds (the key's is 0): about its mean.
    let request = match blurred_size {
        Some(about) if key.flags & BLURRED_RESULT == 0 => about.to_string(),
        _ => key.request.to_string(),
    };
    match class {
        // A message's sizes that differ from one loop to the next are each call's own.
        Some(CallClass::PointToPoint) if !has_file && key.flags & SIZE_IN_COLUMN != 0 => {
            "sizes of their own".to_string()
        }
        Some(CallClass::PointToPoint | CallClass::Collective) if !has_file => request,
        Some(CallClass::Completion) if !has_file => {
            match cairn_model::completion_source(key.aux, key.flags) {
                Some(source) => format!(
                    "{} requests, from {source}",
                    cairn_model::completion_requests(key.aux, key.flags)
                ),
                None => format!("{} requests", key.aux),
            }
        }
        // Sizes that keep being new are each call's own, in the column (range below).
        _ if key.flags & SIZE_IN_COLUMN != 0 => format!("{path}, sizes of their own"),
        // A seek to an absolute position: the key keeps it as the offset (below).
        _ if key.flags & event_flags::REQUEST_AT_POSITION != 0 => format!("{path}, SEEK_SET"),
        _ => format!("{path}, {request}"),
    }
}

fn describe(trace: &Trace, event: &Event) -> String {
    let info = trace.call(event);
    let file = event
        .file
        .map(|file| printable_bytes(&trace.files[file as usize].path))
        .unwrap_or_else(|| "?".into());
    let mut text = format!("{}(", info.name);
    match info.class() {
        Some(CallClass::Read | CallClass::Write) => {
            let _ = write!(text, "{file}, {} bytes", event.request);
            if event.offset >= 0 {
                let _ = write!(text, " @ {}", event.offset);
            }
        }
        Some(CallClass::Open) => {
            // MPI_File_open keeps the ranks that opened the file together above the mode.
            let _ = write!(text, "{file}, flags 0x{:x}", event.aux as u32);
            if event.aux >> 32 > 0 {
                let _ = write!(text, ", over {} ranks", event.aux >> 32);
            }
        }
        Some(CallClass::Seek) => {
            let _ = write!(text, "{file}, {}", event.request as i64);
        }
        // MPI communication names no file: its size, or the requests completed.
        Some(CallClass::PointToPoint | CallClass::Collective) if event.file.is_none() => {
            let _ = write!(text, "{} bytes", event.request);
        }
        Some(CallClass::Completion) if event.file.is_none() => {
            let requests = cairn_model::completion_requests(event.aux, event.flags);
            let _ = write!(text, "{requests} requests");
            if let Some(source) = cairn_model::completion_source(event.aux, event.flags) {
                let _ = write!(text, ", from {source}");
            }
        }
        _ => text.push_str(&file),
    }
    text.push_str(&mpi_note(info.class(), event.aux, event.flags, false, 0));
    let _ = write!(text, ") = {}", event.result);
    if info.call.is_some_and(Call::latency_in_aux) && event.aux > 0 {
        let _ = write!(
            text,
            ", {:.6} s after its submission",
            event.aux as f64 / 1e9
        );
    }
    if event.failed() {
        let _ = write!(text, " errno {}", event.errno);
    }
    if event.flags & event_flags::BEFORE_MAIN != 0 {
        text.push_str("  [before main]");
    }
    text
}

pub fn dump(
    trace: &Trace,
    all: bool,
    expand: bool,
    limit: Option<u64>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let result =
        (|| -> anyhow::Result<()> {
            let command: Vec<String> = trace
                .meta
                .command
                .iter()
                .map(|a| shell_quote(&String::from_utf8_lossy(a)))
                .collect();
            writeln!(
                out,
                "trace by {}; command: {}; exit status: {}; duration {:.6} s",
                trace.meta.writer,
                command.join(" "),
                trace
                    .meta
                    .exit_status
                    .map_or("unknown".into(), |s| s.to_string()),
                trace.meta.duration as f64 / 1e9
            )?;
            for (index, process) in trace.processes.iter().enumerate() {
                let arguments: Vec<String> = process
                    .arguments
                    .iter()
                    .map(|a| shell_quote(&String::from_utf8_lossy(a)))
                    .collect();
                writeln!(
                out,
                "process #{index}: pid {} parent pid {}{}{} threads {} {}[{:.6} .. {:.6}] {:?}: {}",
                process.pid,
                process.parent_pid,
                if process.forked { " (forked)" } else { "" },
                process.exec_of.map_or(String::new(), |p| format!(" (exec after #{p})")),
                process.threads,
                // Its group's statistics, not its own times (PROC version 11).
                if process.group_times { "≈" } else { "" },
                process.start as f64 / 1e9,
                process.end as f64 / 1e9,
                process.ending,
                arguments.join(" ")
            )?;
                if let Some(unrecorded) = process.unrecorded {
                    writeln!(out, "  {}", unrecorded.message(process))?;
                }
            }
            writeln!(out, "files:")?;
            for (index, file) in trace.files.iter().enumerate() {
                if all || file.noise.is_none() {
                    let noise = file
                        .noise
                        .map_or(String::new(), |noise| format!("  [{}]", noise.name()));
                    writeln!(out, "  #{index} {}{noise}", printable_bytes(&file.path))?;
                }
            }
            writeln!(out, "calling contexts (outermost first):")?;
            let mut symbols = Symbolizer::new(trace);
            for index in 0..trace.contexts.len() as u32 {
                let frames = symbols.frames(index + 1);
                let site = frames.first().and_then(|frame| frame.location.clone());
                let chain: Vec<String> = frames
                    .into_iter()
                    .rev()
                    .map(|frame| frame.function)
                    .collect();
                let site = site.map_or(String::new(), |site| format!("  ({site})"));
                writeln!(out, "  @{} {}{site}", index + 1, chain.join(" → "))?;
            }
            // A stream several ranks share is shown once; its other members refer to it.
            let mut shown_streams: HashMap<*const EncodedStream, (u32, u32, i64)> = HashMap::new();
            for stream in &trace.streams {
                let process = &trace.processes[stream.process as usize];
                write!(
                    out,
                    "pid {} thread {}: {} events",
                    process.pid, stream.thread, stream.count
                )?;
                let first = *shown_streams.entry(Arc::as_ptr(&stream.events)).or_insert((
                    process.pid,
                    stream.thread,
                    stream.rank_delta,
                ));
                if stream.members > 1 {
                    // Ranks share streams, and so do the threads of a process without one.
                    let (sharers, index) = match process.rank {
                        Some(_) => ("ranks", "rank"),
                        None => ("threads", "thread position"),
                    };
                    write!(
                        out,
                        "  (one of {} {sharers} sharing a stream",
                        stream.members
                    )?;
                    if !expand && first != (process.pid, stream.thread, stream.rank_delta) {
                        writeln!(
                            out,
                            "; as pid {} thread {} with {index} {:+})",
                            first.0,
                            first.1,
                            stream.rank_delta - first.2
                        )?;
                        continue;
                    }
                    write!(out, ")")?;
                }
                writeln!(out)?;
                if expand {
                    let mut shown = 0u64;
                    let mut failure: std::io::Result<()> = Ok(());
                    trace.expand(stream, |event| {
                        if failure.is_err() || limit.is_some_and(|limit| shown >= limit) {
                            return;
                        }
                        let noise = event
                            .file
                            .is_some_and(|file| trace.files[file as usize].noise.is_some());
                        if !all && (noise || event.flags & event_flags::RUNTIME != 0) {
                            return;
                        }
                        shown += 1;
                        failure = writeln!(
                            out,
                            "  {:>12.6} {:>10.6}  {}  @{}",
                            event.start as f64 / 1e9,
                            event.duration as f64 / 1e9,
                            describe(trace, &event),
                            event.context
                        );
                    });
                    failure?;
                } else {
                    folded::show(trace, stream, &mut symbols, all, out)?;
                }
            }
            Ok(())
        })();
    match result {
        Err(error)
            if error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        other => other,
    }
}

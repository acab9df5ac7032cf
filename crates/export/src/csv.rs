//! The tables of [`crate::table`] as CSV files (RFC 4180) in a directory, for pandas, R, a
//! spreadsheet or any SQL engine: `events.csv` (a row per call: rank, pid, thread, layer,
//! call, class, file, start and duration in ns since the run's start, offset, request,
//! result, errno, MPI peer and tag, whether made inside an MPI-IO call and which, call
//! site, whether its times are means), `files.csv`, `processes.csv` and `call_sites.csv`.
//! Empty cells for values a row does not have. Events are written as they are expanded.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use cairn_trace::Trace;

use crate::table::{each_event, summary_tables, Cell, EventRow, EVENT_COLUMNS};
use crate::{ExportError, Filter};

/// Writes the tables into `directory` (made here); returns the number of event rows.
pub fn write(trace: &Trace, filter: &Filter, directory: &Path) -> Result<u64, ExportError> {
    std::fs::create_dir_all(directory)?;
    let mut out = BufWriter::new(File::create(directory.join("events.csv"))?);
    writeln!(out, "{}", EVENT_COLUMNS.join(","))?;
    let rows = each_event(trace, filter, |row| Ok(event_line(&mut out, row)?))?;
    out.into_inner()
        .map_err(|error| error.into_error())?
        .sync_all()?;
    for (name, table) in summary_tables(trace, filter)? {
        let mut out = BufWriter::new(File::create(directory.join(format!("{name}.csv")))?);
        let header: Vec<String> = table.columns.iter().map(|c| quoted(c)).collect();
        writeln!(out, "{}", header.join(","))?;
        for row in &table.rows {
            let cells: Vec<String> = row.iter().map(cell).collect();
            writeln!(out, "{}", cells.join(","))?;
        }
        out.into_inner()
            .map_err(|error| error.into_error())?
            .sync_all()?;
    }
    Ok(rows)
}

fn event_line(out: &mut impl Write, row: &EventRow) -> std::io::Result<()> {
    fn or_empty<T: ToString>(value: Option<T>) -> String {
        value.map_or(String::new(), |value| value.to_string())
    }
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        or_empty(row.rank),
        row.pid,
        row.thread,
        row.layer.unwrap_or(""),
        quoted(row.call),
        row.class.unwrap_or(""),
        row.file.as_deref().map_or(String::new(), quoted),
        row.start_ns,
        row.duration_ns,
        or_empty(row.offset),
        row.request,
        row.result,
        or_empty(row.errno),
        or_empty(row.peer),
        or_empty(row.tag),
        u8::from(row.subcall),
        row.parent_call.unwrap_or(""),
        or_empty(row.call_site),
        u8::from(row.times_estimated),
    )
}

fn cell(cell: &Cell) -> String {
    match cell {
        Cell::Null => String::new(),
        Cell::Bool(value) => u8::from(*value).to_string(),
        Cell::Unsigned(value) => value.to_string(),
        Cell::Signed(value) => value.to_string(),
        Cell::Float(value) => value.to_string(),
        Cell::Text(text) => quoted(text),
    }
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

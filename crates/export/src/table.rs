//! The tables the CSV and Parquet exports write, defined once for both.
//!
//! - `events`: a row per call, as the trace is expanded ([`each_event`], [`EVENT_COLUMNS`]).
//! - `files`, `processes`, `call_sites`: the summary's own records (`cairn summary --json`),
//!   a row each, nested records flattened into `outer.inner` columns and lists kept as JSON
//!   text ([`summary_tables`]). They describe the whole trace (noise included with `--all`);
//!   the rank, layer and time filters apply to the events.
//!
//! Paths are written as the summary writes them (bytes that are not UTF-8 as `\xNN`, a
//! backslash doubled), so the events' `file` column joins the files table's `path`.

use std::collections::BTreeMap;

use cairn_analyze::summary::{escape_path, summarize, Options};
use cairn_model::{event_flags, Event, Layer};
use cairn_trace::Trace;

use crate::{ExportError, Filter};

/// The events table's columns, in order.
pub const EVENT_COLUMNS: [&str; 19] = [
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
    "parent_call",
    "call_site",
    "times_estimated",
];

/// One call, as a row of the events table; `None` for a value the call does not have.
#[derive(Clone, Debug)]
pub struct EventRow<'t> {
    pub rank: Option<u32>,
    pub pid: u32,
    pub thread: u32,
    pub layer: Option<&'t str>,
    pub call: &'t str,
    pub class: Option<&'t str>,
    pub file: Option<String>,
    pub start_ns: u64,
    pub duration_ns: u64,
    pub offset: Option<i64>,
    pub request: u64,
    pub result: i64,
    pub errno: Option<i32>,
    pub peer: Option<i32>,
    pub tag: Option<i32>,
    /// Made by the MPI library inside an MPI-IO call (the summary counts its bytes once,
    /// at the MPI-IO call).
    pub subcall: bool,
    /// For a sub-call, the MPI-IO call it was made inside.
    pub parent_call: Option<&'t str>,
    /// The calling context's number (the call-sites table's `context`); `None` unknown.
    pub call_site: Option<u32>,
    /// Start and duration are the folded loop's means.
    pub times_estimated: bool,
}

/// Calls `visit` with each row of the events table, stream by stream as the trace expands;
/// returns the number of rows. A sub-call made inside an MPI-IO call is recorded before
/// it (a call is recorded when it returns), so sub-calls wait for their MPI-IO call, which
/// names them, and follow it.
pub fn each_event<'t>(
    trace: &'t Trace,
    filter: &Filter,
    mut visit: impl FnMut(&EventRow<'t>) -> Result<(), ExportError>,
) -> Result<u64, ExportError> {
    let mut rows = 0u64;
    for stream in &trace.streams {
        let process = &trace.processes[stream.process as usize];
        if !filter.keeps_process(process) {
            continue;
        }
        let row = |event: &Event, parent: Option<&'t str>| {
            let call = &trace.calls[event.call as usize];
            let message = crate::message(trace, event);
            EventRow {
                rank: process.rank,
                pid: process.pid,
                thread: stream.thread,
                layer: call.layer().map(Layer::name),
                call: &call.name,
                class: call.class().map(|class| class.name()),
                file: event
                    .file
                    .map(|file| escape_path(&trace.files[file as usize].path).0),
                start_ns: event.start,
                duration_ns: event.duration,
                offset: (event.offset >= 0).then_some(event.offset),
                request: event.request,
                result: event.result,
                errno: event.failed().then_some(event.errno),
                peer: message.map(|(peer, _)| peer),
                tag: message.and_then(|(_, tag)| tag),
                subcall: event.flags & (event_flags::INSIDE_MPIIO | event_flags::INSIDE_LIBRARY)
                    != 0,
                parent_call: parent,
                call_site: event.context.checked_sub(1).map(|_| event.context),
                times_estimated: event.flags & event_flags::TIMES_FROM_STATISTICS != 0,
            }
        };
        // A sub-call whose MPI-IO call the filter left out (or that never returned) comes
        // alone, and is a row without a parent.
        let mut failure: Result<(), ExportError> = Ok(());
        filter.expand_calls(trace, stream, |event, subcalls| {
            let layer = trace.calls[event.call as usize].layer();
            failure = (|| {
                visit(&row(&event, None))?;
                rows += 1;
                let parent = (layer == Some(Layer::MpiIo))
                    .then(|| trace.calls[event.call as usize].name.as_str());
                for subcall in subcalls {
                    visit(&row(subcall, parent))?;
                    rows += 1;
                }
                Ok(())
            })();
            failure.is_ok()
        });
        failure?;
    }
    Ok(rows)
}

/// A value of a summary table's cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
}

/// A summary table: its column names (in order) and rows (a cell per column).
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// The `files`, `processes` and `call_sites` tables, from the summary of `trace`.
pub fn summary_tables(
    trace: &Trace,
    filter: &Filter,
) -> Result<Vec<(&'static str, Table)>, ExportError> {
    let summary = summarize(
        trace,
        Options {
            include_noise: filter.all,
            ..Options::default()
        },
    )
    .map_err(|error| ExportError::Summary(error.to_string()))?;
    Ok(vec![
        ("files", table(json(&summary.files))),
        ("processes", table(json(&summary.process_list))),
        ("call_sites", table(json(&summary.call_sites))),
    ])
}

/// A list of the summary's records as JSON, with an empty record's: each table's columns
/// start with the empty record's, so that a table without rows still has them.
fn json<T: serde::Serialize + Default>(records: &[T]) -> (serde_json::Value, serde_json::Value) {
    let serialised = "the summary serialises";
    (
        serde_json::to_value(records).expect(serialised),
        serde_json::to_value(T::default()).expect(serialised),
    )
}

/// A table of a JSON array of records: a column per (flattened) field, those of `empty`
/// (an empty record) by name, then any that only some records have.
fn table((records, empty): (serde_json::Value, serde_json::Value)) -> Table {
    let records: Vec<BTreeMap<String, Cell>> = records
        .as_array()
        .map(|records| {
            records
                .iter()
                .map(|record| {
                    let mut cells = BTreeMap::new();
                    flatten("", record, &mut cells);
                    cells
                })
                .collect()
        })
        .unwrap_or_default();
    let mut template = BTreeMap::new();
    flatten("", &empty, &mut template);
    let mut columns: Vec<String> = template.into_keys().collect();
    for record in &records {
        for name in record.keys() {
            if !columns.contains(name) {
                columns.push(name.clone());
            }
        }
    }
    let rows = records
        .into_iter()
        .map(|mut record| {
            columns
                .iter()
                .map(|column| record.remove(column).unwrap_or(Cell::Null))
                .collect()
        })
        .collect();
    Table { columns, rows }
}

fn flatten(prefix: &str, value: &serde_json::Value, cells: &mut BTreeMap<String, Cell>) {
    use serde_json::Value;
    let cell = match value {
        Value::Object(fields) => {
            for (name, value) in fields {
                let name = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                flatten(&name, value, cells);
            }
            return;
        }
        Value::Null => Cell::Null,
        Value::Bool(value) => Cell::Bool(*value),
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(value), _) => Cell::Unsigned(value),
            (None, Some(value)) => Cell::Signed(value),
            _ => Cell::Float(number.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(text) => Cell::Text(text.clone()),
        Value::Array(_) => Cell::Text(value.to_string()),
    };
    cells.insert(prefix.to_string(), cell);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_flatten_into_columns_those_of_an_empty_record_first() {
        let table = table((
            serde_json::json!([
                {"path": "/a", "sizes": {"min": 1, "mean": 2.5}, "list": [1, 2]},
                {"path": "/b", "rank": -1},
            ]),
            serde_json::json!({"path": "", "list": []}),
        ));
        assert_eq!(
            table.columns,
            ["list", "path", "sizes.mean", "sizes.min", "rank"]
        );
        let empty = super::table((
            serde_json::json!([]),
            serde_json::json!({"path": "", "n": 0}),
        ));
        assert_eq!(empty.columns, ["n", "path"]);
        assert!(empty.rows.is_empty(), "{empty:?}");
        assert_eq!(
            table.rows[0],
            [
                Cell::Text("[1,2]".into()),
                Cell::Text("/a".into()),
                Cell::Float(2.5),
                Cell::Unsigned(1),
                Cell::Null
            ]
        );
        assert_eq!(table.rows[1][4], Cell::Signed(-1));
        assert_eq!(table.rows[1][0], Cell::Null);
    }
}

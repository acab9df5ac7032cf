//! `cairn._native`: the Rust trace reader for Python, wrapped by the pure-Python `cairn`
//! package (`python/cairn/__init__.py`), which turns what this module returns into pandas
//! DataFrames. This module stays free of pandas: it hands over plain values and raw column
//! buffers.
//!
//! Design decisions:
//! - Events stream: a thread of the reader expands the trace (`cairn_export::table`'s events
//!   table, the one the CSV and Parquet exports write) into batches of columns and passes
//!   them through a channel of one batch, so a 10^9-event trace is read in the memory of two
//!   batches; dropping the iterator stops the walk.
//! - A batch's numeric columns are little-endian buffers (`numpy.frombuffer` reads them
//!   without copying) with a validity mask where values can be missing, and its text
//!   columns are codes into the batch's distinct values (a pandas `Categorical`): building
//!   millions of Python objects per batch is what would make Python slow, not the trace.
//! - The folded structure is given as nested lists of loops and calls, per stream, so an
//!   analysis can work on the loops without expanding them.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};

use cairn_compress::stream::{Body, Item};
use cairn_export::table::{each_event, summary_tables, Cell, EventRow, EVENT_COLUMNS};
use cairn_export::{ExportError, Filter};
use cairn_model::Layer;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// An open trace.
#[pyclass(frozen, module = "cairn._native")]
struct Trace {
    trace: Arc<cairn_trace::Trace>,
}

/// Opens the trace at `path` (a one-line `OSError` when it is missing or not a trace).
#[pyfunction]
fn open(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Trace> {
    let trace = py
        .detach(|| cairn_trace::Trace::open(&path))
        .map_err(|error| PyOSError::new_err(format!("{}: {error}", path.display())))?;
    Ok(Trace {
        trace: Arc::new(trace),
    })
}

fn filter(
    ranks: Option<Vec<(u32, u32)>>,
    layers: Option<Vec<String>>,
    all: bool,
) -> PyResult<Filter> {
    let layers = layers
        .map(|names| {
            names
                .iter()
                .map(|name| {
                    Layer::ALL
                        .into_iter()
                        .find(|layer| layer.name() == name)
                        .ok_or_else(|| {
                            PyValueError::new_err(format!(
                                "unknown layer {name:?}: one of posix, stdio, mpi, mpiio, process"
                            ))
                        })
                })
                .collect::<PyResult<Vec<Layer>>>()
        })
        .transpose()?;
    Ok(Filter {
        all,
        ranks,
        layers,
        time: None,
        progress: None,
    })
}

#[pymethods]
impl Trace {
    /// The summary (`cairn summary --json`) as JSON text.
    #[pyo3(signature = (all = false))]
    fn summary_json(&self, py: Python<'_>, all: bool) -> PyResult<String> {
        let trace = &self.trace;
        let summary = py
            .detach(|| {
                cairn_analyze::summary::summarize(
                    trace,
                    cairn_analyze::summary::Options {
                        include_noise: all,
                        ..Default::default()
                    },
                )
            })
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        serde_json::to_string(&summary).map_err(|error| PyValueError::new_err(error.to_string()))
    }

    /// The `files`, `processes` or `call_sites` table: (column names, rows of values).
    #[pyo3(signature = (name, all = false))]
    fn table<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        all: bool,
    ) -> PyResult<(Vec<String>, Bound<'py, PyList>)> {
        let trace = &self.trace;
        let filter = filter(None, None, all)?;
        let tables = py
            .detach(|| summary_tables(trace, &filter))
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        let (_, table) = tables
            .into_iter()
            .find(|(table, _)| *table == name)
            .ok_or_else(|| PyValueError::new_err(format!("no table {name:?}")))?;
        let rows = PyList::empty(py);
        for row in &table.rows {
            let values = PyList::empty(py);
            for cell in row {
                match cell {
                    Cell::Null => values.append(py.None())?,
                    Cell::Bool(value) => values.append(*value)?,
                    Cell::Unsigned(value) => values.append(*value)?,
                    Cell::Signed(value) => values.append(*value)?,
                    Cell::Float(value) => values.append(*value)?,
                    Cell::Text(text) => values.append(text)?,
                }
            }
            rows.append(values)?;
        }
        Ok((table.columns, rows))
    }

    /// The expanded events as an iterator of column batches (see the module's notes).
    #[pyo3(signature = (ranks = None, layers = None, all = false, batch = 65_536))]
    fn event_batches(
        &self,
        ranks: Option<Vec<(u32, u32)>>,
        layers: Option<Vec<String>>,
        all: bool,
        batch: usize,
    ) -> PyResult<EventBatches> {
        let filter = filter(ranks, layers, all)?;
        let batch = batch.max(1);
        let trace = Arc::clone(&self.trace);
        let (sender, receiver) = sync_channel::<Result<Columns, String>>(1);
        std::thread::Builder::new()
            .name("cairn-events".into())
            .spawn(move || {
                let mut columns = Columns::new(batch);
                let walked = each_event(&trace, &filter, |row| {
                    columns.push(row);
                    if columns.len == batch {
                        let full = std::mem::replace(&mut columns, Columns::new(batch));
                        // The reader went away: stop expanding.
                        sender.send(Ok(full)).map_err(|_| ExportError::Stopped)?;
                    }
                    Ok(())
                });
                let last = match walked {
                    Ok(_) => Ok(columns),
                    Err(ExportError::Stopped) => return,
                    Err(error) => Err(error.to_string()),
                };
                let _ = sender.send(last);
            })
            .map_err(|error| PyOSError::new_err(error.to_string()))?;
        Ok(EventBatches {
            receiver: Mutex::new(Some(receiver)),
        })
    }

    /// Each stream's folded structure without expanding it: a dict per thread (pid, rank,
    /// thread, events) with `tree`, a list of calls (dicts: call, count, mean duration and
    /// gap in ns, request, context) and loops (dicts: loop = iterations, body = a list).
    fn structure<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let trace = &self.trace;
        let streams = PyList::empty(py);
        for stream in &trace.streams {
            let process = &trace.processes[stream.process as usize];
            let entry = PyDict::new(py);
            entry.set_item("pid", process.pid)?;
            entry.set_item("rank", process.rank)?;
            entry.set_item("thread", stream.thread)?;
            entry.set_item("events", stream.count)?;
            entry.set_item(
                "tree",
                tree(py, trace, stream.events.nodes_for_rank(stream.rank_delta))?,
            )?;
            streams.append(entry)?;
        }
        Ok(streams)
    }
}

fn tree<'py>(
    py: Python<'py>,
    trace: &cairn_trace::Trace,
    body: Body<'_>,
) -> PyResult<Bound<'py, PyList>> {
    let nodes = PyList::empty(py);
    for item in body.iter() {
        let node = PyDict::new(py);
        match item {
            Item::Leaf(leaf) => {
                let call = &trace.calls[leaf.key.call as usize];
                node.set_item("call", &call.name)?;
                node.set_item("count", leaf.duration.count)?;
                node.set_item("duration_mean_ns", leaf.duration.mean)?;
                node.set_item("gap_mean_ns", leaf.gap.mean)?;
                node.set_item("request", leaf.key.request)?;
                node.set_item("context", leaf.key.context)?;
                // A precision level below 100: the sizes' and offsets' histograms.
                if let Some(blurred) = leaf.blurred.as_deref() {
                    for (name, histogram) in
                        [("sizes", &blurred.size), ("offsets", &blurred.offset)]
                    {
                        if let Some(histogram) = histogram {
                            node.set_item(name, histogram_dict(py, histogram)?)?;
                        }
                    }
                }
                // Sizes that kept being new are each call's own, in the stream's column
                // (`events()` gives them); the leaf keeps their exact figures.
                if let Some(sizes) = leaf.column_sizes.as_deref() {
                    let figures = PyDict::new(py);
                    figures.set_item("exact", true)?;
                    figures.set_item("count", sizes.count)?;
                    figures.set_item("sum", sizes.sum)?;
                    figures.set_item("min", sizes.min)?;
                    figures.set_item("max", sizes.max)?;
                    node.set_item("sizes", figures)?;
                }
            }
            Item::Loop {
                count,
                body,
                counts,
                ..
            } => {
                node.set_item("loop", count)?;
                if let Some(counts) = counts {
                    node.set_item("counts", histogram_dict(py, &counts)?)?;
                }
                node.set_item("body", tree(py, trace, body)?)?;
            }
        }
        nodes.append(node)?;
    }
    Ok(nodes)
}

/// A histogram as a dict: exact `count`, `sum`, `min`, `max`, and its `bins` (each
/// `count`, `min`, `max`, `mean`).
fn histogram_dict<'py>(
    py: Python<'py>,
    histogram: &cairn_compress::histogram::Histogram,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("count", histogram.count)?;
    dict.set_item("sum", histogram.sum)?;
    dict.set_item("min", histogram.min)?;
    dict.set_item("max", histogram.max)?;
    let bins = PyList::empty(py);
    for bin in histogram.bins() {
        let entry = PyDict::new(py);
        entry.set_item("count", bin.count)?;
        entry.set_item("min", bin.min)?;
        entry.set_item("max", bin.max)?;
        entry.set_item("mean", bin.mean)?;
        bins.append(entry)?;
    }
    dict.set_item("bins", bins)?;
    Ok(dict)
}

/// The iterator `Trace.event_batches` returns.
#[pyclass(module = "cairn._native")]
struct EventBatches {
    receiver: Mutex<Option<Receiver<Result<Columns, String>>>>,
}

#[pymethods]
impl EventBatches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next batch: a dict of column name → (kind, data, mask or None, categories or
    /// None), in the events table's column order.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut guard = self.receiver.lock().expect("not poisoned");
        let Some(receiver) = guard.take() else {
            return Ok(None);
        };
        // Waiting for the walk releases Python's lock (the receiver moves into the wait
        // and back: a receiver may not be shared between threads).
        let (receiver, next) = py.detach(move || {
            let next = receiver.recv();
            (receiver, next)
        });
        match next {
            Ok(Ok(columns)) if columns.len > 0 => {
                *guard = Some(receiver);
                columns.into_python(py).map(Some)
            }
            Ok(Ok(_)) | Err(_) => Ok(None),
            Ok(Err(message)) => Err(PyValueError::new_err(message)),
        }
    }

    /// Stops the walk now (also done when the iterator is dropped).
    fn close(&self) {
        *self.receiver.lock().expect("not poisoned") = None;
    }
}

/// A text column: codes into the batch's distinct values, −1 for none.
#[derive(Default)]
struct Codes {
    codes: Vec<i32>,
    values: Vec<String>,
    known: HashMap<String, i32>,
}

impl Codes {
    fn push(&mut self, value: Option<&str>) {
        let code = match value {
            None => -1,
            Some(value) => match self.known.get(value) {
                Some(code) => *code,
                None => {
                    let code = self.values.len() as i32;
                    self.values.push(value.to_string());
                    self.known.insert(value.to_string(), code);
                    code
                }
            },
        };
        self.codes.push(code);
    }
}

/// A numeric column: little-endian values and, when values can be missing, a mask (1 =
/// missing, as pandas' masked arrays take it).
struct Numbers {
    data: Vec<u8>,
    mask: Option<Vec<u8>>,
}

impl Numbers {
    fn new(nullable: bool, capacity: usize) -> Numbers {
        Numbers {
            data: Vec::with_capacity(capacity * 8),
            mask: nullable.then(|| Vec::with_capacity(capacity)),
        }
    }

    fn push(&mut self, bytes: &[u8], missing: bool) {
        self.data.extend_from_slice(bytes);
        if let Some(mask) = &mut self.mask {
            mask.push(u8::from(missing));
        }
    }
}

/// One batch of the events table.
struct Columns {
    len: usize,
    /// Per column of [`EVENT_COLUMNS`]: text codes or numbers, with its numpy kind.
    text: HashMap<&'static str, Codes>,
    numbers: HashMap<&'static str, (&'static str, Numbers)>,
}

/// Each events column's kind: `text`, or the numpy type of its numbers and whether it can
/// be missing.
fn kind(column: &str) -> (&'static str, bool) {
    match column {
        "layer" | "call" | "class" | "file" | "parent_call" => ("text", true),
        "rank" | "call_site" => ("<u4", true),
        "pid" | "thread" => ("<u4", false),
        "start_ns" | "duration_ns" | "request" => ("<u8", false),
        "result" => ("<i8", false),
        "offset" => ("<i8", true),
        "errno" | "peer" | "tag" => ("<i4", true),
        "subcall" | "times_estimated" => ("bool", false),
        _ => unreachable!("every events column has a kind"),
    }
}

impl Columns {
    fn new(capacity: usize) -> Columns {
        let mut text = HashMap::new();
        let mut numbers = HashMap::new();
        for column in EVENT_COLUMNS {
            match kind(column) {
                ("text", _) => {
                    text.insert(column, Codes::default());
                }
                (numpy, nullable) => {
                    numbers.insert(column, (numpy, Numbers::new(nullable, capacity)));
                }
            }
        }
        Columns {
            len: 0,
            text,
            numbers,
        }
    }

    fn number(&mut self, column: &'static str, bytes: &[u8], missing: bool) {
        self.numbers
            .get_mut(column)
            .expect("a numeric column")
            .1
            .push(bytes, missing);
    }

    fn push(&mut self, row: &EventRow) {
        self.len += 1;
        for (column, value) in [
            ("layer", row.layer),
            ("call", Some(row.call)),
            ("class", row.class),
            ("file", row.file.as_deref()),
            ("parent_call", row.parent_call),
        ] {
            self.text
                .get_mut(column)
                .expect("a text column")
                .push(value);
        }
        self.number(
            "rank",
            &row.rank.unwrap_or(0).to_le_bytes(),
            row.rank.is_none(),
        );
        self.number("pid", &row.pid.to_le_bytes(), false);
        self.number("thread", &row.thread.to_le_bytes(), false);
        self.number("start_ns", &row.start_ns.to_le_bytes(), false);
        self.number("duration_ns", &row.duration_ns.to_le_bytes(), false);
        self.number(
            "offset",
            &row.offset.unwrap_or(0).to_le_bytes(),
            row.offset.is_none(),
        );
        self.number("request", &row.request.to_le_bytes(), false);
        self.number("result", &row.result.to_le_bytes(), false);
        for (column, value) in [("errno", row.errno), ("peer", row.peer), ("tag", row.tag)] {
            self.number(column, &value.unwrap_or(0).to_le_bytes(), value.is_none());
        }
        self.number("subcall", &[u8::from(row.subcall)], false);
        self.number(
            "call_site",
            &row.call_site.unwrap_or(0).to_le_bytes(),
            row.call_site.is_none(),
        );
        self.number("times_estimated", &[u8::from(row.times_estimated)], false);
    }

    fn into_python(mut self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let batch = PyDict::new(py);
        for column in EVENT_COLUMNS {
            if let Some(codes) = self.text.remove(column) {
                let data: Vec<u8> = codes.codes.iter().flat_map(|c| c.to_le_bytes()).collect();
                batch.set_item(
                    column,
                    (
                        "text",
                        PyBytes::new(py, &data),
                        py.None(),
                        PyList::new(py, &codes.values)?,
                    ),
                )?;
            } else if let Some((numpy, numbers)) = self.numbers.remove(column) {
                let mask = match &numbers.mask {
                    Some(mask) => PyBytes::new(py, mask).into_any(),
                    None => py.None().into_bound(py),
                };
                batch.set_item(
                    column,
                    (numpy, PyBytes::new(py, &numbers.data), mask, py.None()),
                )?;
            }
        }
        Ok(batch)
    }
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(open, module)?)?;
    module.add_class::<Trace>()?;
    module.add_class::<EventBatches>()?;
    module.add("EVENT_COLUMNS", EVENT_COLUMNS.to_vec())?;
    Ok(())
}

//! The tables of [`crate::table`] as Parquet files in a directory (`events.parquet`,
//! `files.parquet`, `processes.parquet`, `call_sites.parquet`), for pandas, polars, DuckDB
//! or Spark. The events are written in row groups of [`BATCH`] rows as the trace is
//! expanded, so memory stays bounded whatever the trace's size; Snappy-compressed, and
//! Parquet's dictionary encoding keeps repeated names (calls, files) small.
//!
//! Types: counts, sizes and times are unsigned 64-bit, offsets and results signed (−1 is a
//! result), ranks, pids and threads unsigned 32-bit; a value a row does not have is null.
//! The summary tables' columns take the narrowest type holding every value (unsigned, then
//! signed, then float; text if any value is text).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use cairn_trace::Trace;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::table::{each_event, summary_tables, Cell, EventRow, Table, EVENT_COLUMNS};
use crate::{ExportError, Filter};

/// Event rows per row group.
pub const BATCH: usize = 65_536;

impl From<parquet::errors::ParquetError> for ExportError {
    fn from(error: parquet::errors::ParquetError) -> ExportError {
        ExportError::Parquet(error.to_string())
    }
}

impl From<arrow_schema::ArrowError> for ExportError {
    fn from(error: arrow_schema::ArrowError) -> ExportError {
        ExportError::Parquet(error.to_string())
    }
}

/// Writes the tables into `directory` (made here); returns the number of event rows.
pub fn write(trace: &Trace, filter: &Filter, directory: &Path) -> Result<u64, ExportError> {
    std::fs::create_dir_all(directory)?;
    let properties = || {
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(BATCH))
            .build()
    };
    let schema = event_schema();
    let file = File::create(directory.join("events.parquet"))?;
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(properties()))?;
    let mut columns = EventColumns::default();
    let rows = each_event(trace, filter, |row| {
        columns.push(row);
        if columns.len == BATCH {
            writer.write(&columns.finish(&schema)?)?;
        }
        Ok(())
    })?;
    if columns.len > 0 {
        writer.write(&columns.finish(&schema)?)?;
    }
    writer.into_inner()?.sync_all()?;
    for (name, table) in summary_tables(trace, filter)? {
        let batch = summary_batch(&table)?;
        let file = File::create(directory.join(format!("{name}.parquet")))?;
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties()))?;
        writer.write(&batch)?;
        writer.into_inner()?.sync_all()?;
    }
    Ok(rows)
}

fn event_schema() -> SchemaRef {
    use DataType::*;
    let types: [(DataType, bool); 19] = [
        (UInt32, true),   // rank
        (UInt32, false),  // pid
        (UInt32, false),  // thread
        (Utf8, true),     // layer
        (Utf8, false),    // call
        (Utf8, true),     // class
        (Utf8, true),     // file
        (UInt64, false),  // start_ns
        (UInt64, false),  // duration_ns
        (Int64, true),    // offset
        (UInt64, false),  // request
        (Int64, false),   // result
        (Int32, true),    // errno
        (Int32, true),    // peer
        (Int32, true),    // tag
        (Boolean, false), // subcall
        (Utf8, true),     // parent_call
        (UInt32, true),   // call_site
        (Boolean, false), // times_estimated
    ];
    Arc::new(Schema::new(
        EVENT_COLUMNS
            .iter()
            .zip(types)
            .map(|(name, (kind, nullable))| Field::new(*name, kind, nullable))
            .collect::<Vec<_>>(),
    ))
}

/// The events of one row group, column by column, in [`EVENT_COLUMNS`] order.
#[derive(Default)]
struct EventColumns {
    len: usize,
    rank: UInt32Builder,
    pid: UInt32Builder,
    thread: UInt32Builder,
    layer: StringBuilder,
    call: StringBuilder,
    class: StringBuilder,
    file: StringBuilder,
    start: UInt64Builder,
    duration: UInt64Builder,
    offset: Int64Builder,
    request: UInt64Builder,
    result: Int64Builder,
    errno: Int32Builder,
    peer: Int32Builder,
    tag: Int32Builder,
    subcall: BooleanBuilder,
    parent_call: StringBuilder,
    call_site: UInt32Builder,
    times_estimated: BooleanBuilder,
}

impl EventColumns {
    fn push(&mut self, row: &EventRow) {
        self.len += 1;
        self.rank.append_option(row.rank);
        self.pid.append_value(row.pid);
        self.thread.append_value(row.thread);
        self.layer.append_option(row.layer);
        self.call.append_value(row.call);
        self.class.append_option(row.class);
        self.file.append_option(row.file.as_deref());
        self.start.append_value(row.start_ns);
        self.duration.append_value(row.duration_ns);
        self.offset.append_option(row.offset);
        self.request.append_value(row.request);
        self.result.append_value(row.result);
        self.errno.append_option(row.errno);
        self.peer.append_option(row.peer);
        self.tag.append_option(row.tag);
        self.subcall.append_value(row.subcall);
        self.parent_call.append_option(row.parent_call);
        self.call_site.append_option(row.call_site);
        self.times_estimated.append_value(row.times_estimated);
    }

    /// The rows pushed since the last batch, as a batch (the builders start over).
    fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ExportError> {
        self.len = 0;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.rank.finish()),
            Arc::new(self.pid.finish()),
            Arc::new(self.thread.finish()),
            Arc::new(self.layer.finish()),
            Arc::new(self.call.finish()),
            Arc::new(self.class.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.start.finish()),
            Arc::new(self.duration.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.request.finish()),
            Arc::new(self.result.finish()),
            Arc::new(self.errno.finish()),
            Arc::new(self.peer.finish()),
            Arc::new(self.tag.finish()),
            Arc::new(self.subcall.finish()),
            Arc::new(self.parent_call.finish()),
            Arc::new(self.call_site.finish()),
            Arc::new(self.times_estimated.finish()),
        ];
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// A summary table as one batch, each column of the narrowest type holding its values.
fn summary_batch(table: &Table) -> Result<RecordBatch, ExportError> {
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (index, name) in table.columns.iter().enumerate() {
        let cells = table.rows.iter().map(|row| &row[index]);
        let kind = cells.clone().fold(None, widest);
        let array: ArrayRef = match kind.unwrap_or(DataType::Boolean) {
            DataType::Boolean => Arc::new(
                cells
                    .map(|cell| match cell {
                        Cell::Bool(value) => Some(*value),
                        _ => None,
                    })
                    .collect::<arrow_array::BooleanArray>(),
            ),
            DataType::UInt64 => Arc::new(
                cells
                    .map(|cell| match cell {
                        Cell::Unsigned(value) => Some(*value),
                        _ => None,
                    })
                    .collect::<arrow_array::UInt64Array>(),
            ),
            DataType::Int64 => Arc::new(
                cells
                    .map(|cell| match cell {
                        Cell::Unsigned(value) => i64::try_from(*value).ok(),
                        Cell::Signed(value) => Some(*value),
                        _ => None,
                    })
                    .collect::<arrow_array::Int64Array>(),
            ),
            DataType::Float64 => Arc::new(
                cells
                    .map(|cell| match cell {
                        Cell::Unsigned(value) => Some(*value as f64),
                        Cell::Signed(value) => Some(*value as f64),
                        Cell::Float(value) => Some(*value),
                        _ => None,
                    })
                    .collect::<arrow_array::Float64Array>(),
            ),
            _ => Arc::new(
                cells
                    .map(|cell| match cell {
                        Cell::Null => None,
                        Cell::Bool(value) => Some(value.to_string()),
                        Cell::Unsigned(value) => Some(value.to_string()),
                        Cell::Signed(value) => Some(value.to_string()),
                        Cell::Float(value) => Some(value.to_string()),
                        Cell::Text(text) => Some(text.clone()),
                    })
                    .collect::<arrow_array::StringArray>(),
            ),
        };
        fields.push(Field::new(name, array.data_type().clone(), true));
        arrays.push(array);
    }
    if arrays.is_empty() {
        return Ok(RecordBatch::new_empty(Arc::new(Schema::empty())));
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}

/// The narrowest type holding a column's values so far and `cell`.
fn widest(kind: Option<DataType>, cell: &Cell) -> Option<DataType> {
    use DataType::*;
    let own = match cell {
        Cell::Null => return kind,
        Cell::Bool(_) => Boolean,
        Cell::Unsigned(_) => UInt64,
        Cell::Signed(_) => Int64,
        Cell::Float(_) => Float64,
        Cell::Text(_) => Utf8,
    };
    Some(match (kind, own) {
        (None, own) => own,
        (Some(kind), own) if kind == own => kind,
        (Some(UInt64 | Int64), Int64) | (Some(Int64), UInt64) => Int64,
        (Some(UInt64 | Int64 | Float64), UInt64 | Int64 | Float64) => Float64,
        _ => Utf8,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_columns_take_the_narrowest_type_of_their_values() {
        let table = Table {
            columns: vec!["count".into(), "delta".into(), "mean".into(), "name".into()],
            rows: vec![
                vec![
                    Cell::Unsigned(3),
                    Cell::Unsigned(1),
                    Cell::Unsigned(2),
                    Cell::Text("a".into()),
                ],
                vec![Cell::Null, Cell::Signed(-1), Cell::Float(0.5), Cell::Null],
            ],
        };
        let batch = summary_batch(&table).unwrap();
        let kinds: Vec<&DataType> = batch
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.data_type())
            .collect();
        assert_eq!(
            kinds,
            [
                &DataType::UInt64,
                &DataType::Int64,
                &DataType::Float64,
                &DataType::Utf8
            ]
        );
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.column(0).null_count(), 1);
    }
}

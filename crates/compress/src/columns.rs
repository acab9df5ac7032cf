//! Lossless columnar coding of an event stream (one thread's events, in order).

use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::Result;
use cairn_model::{event_flags, Event};

const COLUMN_COUNT: usize = 12;

/// The value each column is predicted from: the previous event.
#[derive(Default, Clone)]
struct Previous {
    start: u64,
    handle: u64,
    next_offset: i64,
    file: u64,
    context: u32,
}

impl Previous {
    fn advance(&mut self, event: &Event) {
        self.start = event.start;
        self.handle = event.handle;
        self.next_offset = if event.offset >= 0 {
            event.offset.wrapping_add(event.result.max(0))
        } else {
            event.offset
        };
        self.file = event.file.map_or(0, |f| f as u64 + 1);
        self.context = event.context;
    }
}

/// Encodes events one at a time; `finish` returns the stream's bytes.
#[derive(Default)]
pub struct ColumnEncoder {
    columns: [ByteWriter; COLUMN_COUNT],
    previous: Previous,
    count: u64,
}

impl ColumnEncoder {
    pub fn new() -> ColumnEncoder {
        ColumnEncoder::default()
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn push(&mut self, event: &Event) {
        let previous = &self.previous;
        let [call, start, duration, file, handle, offset, request, result, errno, context, aux, flags] =
            &mut self.columns;
        call.u64(event.call as u64);
        start.i64(event.start.wrapping_sub(previous.start) as i64);
        duration.u64(event.duration);
        file.i64(
            event
                .file
                .map_or(0, |f| f as u64 + 1)
                .wrapping_sub(previous.file) as i64,
        );
        handle.i64(event.handle.wrapping_sub(previous.handle) as i64);
        offset.i64(event.offset.wrapping_sub(previous.next_offset));
        request.u64(event.request);
        result.i64(event.result.wrapping_sub(event.request as i64));
        errno.i64(event.errno as i64);
        context.i64(event.context as i64 - previous.context as i64);
        aux.u64(event.aux);
        flags.u64(event.flags as u64);
        self.previous.advance(event);
        self.count += 1;
    }

    pub fn finish(self) -> Vec<u8> {
        let mut out = ByteWriter::new();
        out.u64(self.count);
        for column in &self.columns {
            out.bytes(&column.buffer);
        }
        out.into_inner()
    }
}

/// Decodes a stream written by [`ColumnEncoder`], one event at a time, without
/// materialising the whole stream.
pub struct ColumnDecoder<'a> {
    columns: Vec<ByteReader<'a>>,
    previous: Previous,
    remaining: u64,
}

impl<'a> ColumnDecoder<'a> {
    pub fn new(data: &'a [u8]) -> Result<ColumnDecoder<'a>> {
        let mut reader = ByteReader::new(data, "event stream");
        // Every event takes at least one byte in each column.
        let count = reader.u64()?;
        let mut columns = Vec::with_capacity(COLUMN_COUNT);
        for _ in 0..COLUMN_COUNT {
            let column = reader.bytes()?;
            if (column.len() as u64) < count {
                return Err(reader.corrupt("event column shorter than its event count"));
            }
            columns.push(ByteReader::new(column, "event column"));
        }
        Ok(ColumnDecoder {
            columns,
            previous: Previous::default(),
            remaining: count,
        })
    }

    pub fn len(&self) -> u64 {
        self.remaining
    }

    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }

    fn decode_one(&mut self) -> Result<Event> {
        let previous = &self.previous;
        let columns = &mut self.columns;
        let call = columns[0].u64()?;
        let call =
            u16::try_from(call).map_err(|_| columns[0].corrupt("call index out of range"))?;
        let start = previous.start.wrapping_add(columns[1].i64()? as u64);
        let duration = columns[2].u64()?;
        let file_plus_one = previous.file.wrapping_add(columns[3].i64()? as u64);
        let file = match file_plus_one {
            0 => None,
            value => Some(
                u32::try_from(value - 1)
                    .map_err(|_| columns[3].corrupt("file index out of range"))?,
            ),
        };
        let handle = previous.handle.wrapping_add(columns[4].i64()? as u64);
        let offset = previous.next_offset.wrapping_add(columns[5].i64()?);
        let request = columns[6].u64()?;
        let result = (request as i64).wrapping_add(columns[7].i64()?);
        let errno = columns[8].i32()?;
        let context = previous.context as i64 + columns[9].i64()?;
        let context =
            u32::try_from(context).map_err(|_| columns[9].corrupt("context index out of range"))?;
        let aux = columns[10].u64()?;
        let flags = columns[11].u32()?;
        let event = Event {
            call,
            start,
            duration,
            file,
            handle,
            offset,
            request,
            result,
            errno,
            context,
            aux,
            flags,
        };
        self.previous.advance(&event);
        Ok(event)
    }
}

impl Iterator for ColumnDecoder<'_> {
    type Item = Result<Event>;

    fn next(&mut self) -> Option<Result<Event>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let event = self.decode_one();
        if event.is_err() {
            self.remaining = 0;
        }
        Some(event)
    }
}

/// True when an event's offset was given by the program rather than tracked.
pub fn has_explicit_offset(event: &Event) -> bool {
    event.flags & event_flags::EXPLICIT_OFFSET != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arbitrary_event() -> impl Strategy<Value = Event> {
        (
            (
                any::<u16>(),
                any::<u64>(),
                any::<u64>(),
                proptest::option::of(any::<u32>()),
                any::<u64>(),
                any::<i64>(),
            ),
            (
                any::<u64>(),
                any::<i64>(),
                any::<i32>(),
                any::<u32>(),
                any::<u64>(),
                any::<u32>(),
            ),
        )
            .prop_map(
                |(
                    (call, start, duration, file, handle, offset),
                    (request, result, errno, context, aux, flags),
                )| {
                    Event {
                        call,
                        start,
                        duration,
                        file,
                        handle,
                        offset,
                        request,
                        result,
                        errno,
                        context,
                        aux,
                        flags,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn every_field_survives(events in proptest::collection::vec(arbitrary_event(), 0..60)) {
            let mut encoder = ColumnEncoder::new();
            for event in &events { encoder.push(event); }
            let bytes = encoder.finish();
            let decoded: Vec<Event> = ColumnDecoder::new(&bytes).unwrap().map(|e| e.unwrap()).collect();
            prop_assert_eq!(decoded, events);
        }

        #[test]
        fn garbage_gives_errors_not_panics(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(decoder) = ColumnDecoder::new(&data) {
                for event in decoder { if event.is_err() { break; } }
            }
        }
    }

    #[test]
    fn regular_stream_is_small() {
        let mut encoder = ColumnEncoder::new();
        for index in 0..10_000u64 {
            encoder.push(&Event {
                call: 3,
                start: index * 1000,
                duration: 200,
                file: Some(0),
                handle: 3,
                offset: (index * 4096) as i64,
                request: 4096,
                result: 4096,
                errno: 0,
                context: 1,
                aux: 0,
                flags: 0,
            });
        }
        let bytes = encoder.finish();
        // One byte per event and column, except where the value itself needs two (start
        // delta 1000, duration 200, request 4096): offsets, files and results are predicted.
        let column_bytes = 10_000 * 9 + 19_999 + 20_000 * 2;
        let headers = 2 + 9 * 2 + 3 * 3;
        assert_eq!(bytes.len(), column_bytes + headers);
    }
}

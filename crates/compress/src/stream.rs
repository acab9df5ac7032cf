//! One thread's events as a folded tree: value encodings that make repetitions equal, the
//! folding itself, and the bytes of the result (EVNT section version 2, docs/FORMAT.md).
//!
//! Value encodings (what makes the 100th iteration's key equal to the first's):
//! - **file**: `Bound` when the file is the one already bound to the event's descriptor or
//!   stream in this thread (every `write` after its `open`); otherwise the difference
//!   between the file's index and the last file used at the same calling context, so
//!   `open("ckpt-%d.dat")` in a loop is "+1" every time while the trace's file table still
//!   names every file exactly.
//! - **offset**: the difference to where the previous access to the same file in this
//!   thread ended (0 = consecutive); the first access to a file keeps its offset. Any arithmetic pattern at any loop depth
//!   (offset = 4096·(100·i + j)) becomes a constant; the exact offset comes back by summing.
//! - **result**: relative to the request (0 when a call moved what it asked for).
//! - calls, contexts, handles, sizes, flags, whence, errno: exact.
//!
//! Timing (duration, compute gap before the event) is kept as statistics per leaf; the exact
//! start of the stream's first event and end of its last are kept.

use std::collections::HashMap;

use cairn_format::bytes::{ByteReader, ByteWriter};
use cairn_format::{FormatError, Result};
use cairn_model::{event_flags, CallClass, Event, UNKNOWN};

use crate::fold::{for_each_occurrence, Folder, Leaf, Limits, Node};
use crate::stats::Stats;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileRef {
    None,
    /// The file bound to the event's handle (set by the last event on that handle).
    Bound,
    /// (file index + 1) minus the last (file index + 1) seen at the same context.
    Delta(i64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OffsetRef {
    Unknown,
    /// The first access to the file in this thread: the offset itself.
    First(i64),
    /// Offset minus the end of the previous access to the same file.
    Delta(i64),
}

/// Everything about an event that is kept exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventKey {
    pub call: u16,
    pub context: u32,
    pub handle: u64,
    pub file: FileRef,
    pub offset: OffsetRef,
    pub request: u64,
    /// result − request.
    pub result: i64,
    pub errno: i32,
    pub aux: u64,
    pub flags: u32,
    /// Darshan's access order, against the previous access in the same direction (read or
    /// write) to the same file in this thread: [`CONSECUTIVE`] and/or [`SEQUENTIAL`].
    pub order: u8,
}

/// The access starts exactly where the previous one in the same direction ended.
pub const CONSECUTIVE: u8 = 1;
/// The access starts at or after where the previous one in the same direction ended.
pub const SEQUENTIAL: u8 = 2;

impl EventKey {
    pub fn is_consecutive(&self) -> bool {
        self.order & CONSECUTIVE != 0
    }

    pub fn is_sequential(&self) -> bool {
        self.order & SEQUENTIAL != 0
    }

    pub fn result(&self) -> i64 {
        (self.request as i64).wrapping_add(self.result)
    }

    pub fn failed(&self) -> bool {
        self.flags & event_flags::FAILED != 0
    }

    /// Bytes moved by one occurrence of a data call.
    pub fn bytes(&self) -> u64 {
        if self.failed() {
            0
        } else {
            self.result().max(0) as u64
        }
    }
}

/// The state both sides of the relative encodings keep, per thread.
#[derive(Default, Clone, Debug)]
pub struct Relative {
    context_file: HashMap<u32, u64>,
    bound: HashMap<u64, u64>,
    file_end: HashMap<u64, i64>,
    /// End of the last read (true) or write (false) per file: only for the access order.
    direction_end: HashMap<(u64, bool), i64>,
}

impl Relative {
    fn advance(
        &mut self,
        key: &EventKey,
        file_plus_one: u64,
        offset: i64,
        class: Option<CallClass>,
    ) {
        if file_plus_one != 0 {
            self.context_file.insert(key.context, file_plus_one);
            self.bound.insert(key.handle, file_plus_one);
            if class == Some(CallClass::Dup) && !key.failed() {
                self.bound.insert(key.result() as u64, file_plus_one);
            }
            if offset >= 0 {
                let moved = if matches!(class, Some(CallClass::Read | CallClass::Write)) {
                    key.bytes() as i64
                } else {
                    0
                };
                self.file_end
                    .insert(file_plus_one, offset.wrapping_add(moved));
            }
        }
    }

    pub fn encode(&mut self, event: &Event, class: Option<CallClass>) -> EventKey {
        let file_plus_one = event.file.map_or(0, |file| file as u64 + 1);
        let file = if file_plus_one == 0 {
            FileRef::None
        } else if self.bound.get(&event.handle) == Some(&file_plus_one) {
            FileRef::Bound
        } else {
            FileRef::Delta(
                file_plus_one
                    .wrapping_sub(self.context_file.get(&event.context).copied().unwrap_or(0))
                    as i64,
            )
        };
        let offset = if event.offset < 0 {
            OffsetRef::Unknown
        } else {
            match self.file_end.get(&file_plus_one) {
                Some(end) => OffsetRef::Delta(event.offset.wrapping_sub(*end)),
                None => OffsetRef::First(event.offset),
            }
        };
        let mut order = 0;
        if let (Some(CallClass::Read | CallClass::Write), true, false) = (
            class,
            event.offset >= 0,
            event.flags & event_flags::FAILED != 0,
        ) {
            let direction = (file_plus_one, class == Some(CallClass::Read));
            if let Some(end) = self.direction_end.get(&direction) {
                if event.offset == *end {
                    order |= CONSECUTIVE;
                }
                if event.offset >= *end {
                    order |= SEQUENTIAL;
                }
            }
            self.direction_end
                .insert(direction, event.offset.saturating_add(event.result.max(0)));
        }
        let key = EventKey {
            order,
            call: event.call,
            context: event.context,
            handle: event.handle,
            file,
            offset,
            request: event.request,
            result: event.result.wrapping_sub(event.request as i64),
            errno: event.errno,
            aux: event.aux,
            flags: event.flags,
        };
        self.advance(&key, file_plus_one, event.offset, class);
        key
    }

    /// The file (index + 1, 0 = none) and offset of the next occurrence of `key`.
    pub fn decode(&mut self, key: &EventKey, class: Option<CallClass>) -> (u64, i64) {
        let file_plus_one = match key.file {
            FileRef::None => 0,
            FileRef::Bound => self.bound.get(&key.handle).copied().unwrap_or(0),
            FileRef::Delta(delta) => self
                .context_file
                .get(&key.context)
                .copied()
                .unwrap_or(0)
                .wrapping_add(delta as u64),
        };
        let offset = match key.offset {
            OffsetRef::Unknown => UNKNOWN,
            OffsetRef::First(offset) => offset,
            OffsetRef::Delta(delta) => self
                .file_end
                .get(&file_plus_one)
                .copied()
                .unwrap_or(0)
                .wrapping_add(delta),
        };
        self.advance(key, file_plus_one, offset, class);
        (file_plus_one, offset)
    }
}

/// Folds one thread's events as they come.
pub struct StreamEncoder {
    relative: Relative,
    folder: Folder<EventKey>,
    first_start: Option<u64>,
    last_end: u64,
    count: u64,
}

impl Default for StreamEncoder {
    fn default() -> StreamEncoder {
        StreamEncoder::new(Limits::default())
    }
}

impl StreamEncoder {
    pub fn new(limits: Limits) -> StreamEncoder {
        StreamEncoder {
            relative: Relative::default(),
            folder: Folder::new(limits),
            first_start: None,
            last_end: 0,
            count: 0,
        }
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds the next event; `class` is the class of its call (for dup bindings and offsets).
    pub fn push(&mut self, event: &Event, class: Option<CallClass>) {
        let gap = match self.first_start {
            None => {
                self.first_start = Some(event.start);
                0
            }
            Some(_) => event.start.saturating_sub(self.last_end),
        };
        self.last_end = self
            .last_end
            .max(event.start.saturating_add(event.duration));
        let key = self.relative.encode(event, class);
        let (offset_low, offset_high) = if event.offset >= 0 {
            let moved = if matches!(class, Some(CallClass::Read | CallClass::Write)) {
                key.bytes() as i64
            } else {
                0
            };
            (event.offset, event.offset.saturating_add(moved))
        } else {
            (-1, -1)
        };
        self.folder.push(Leaf {
            key,
            duration: Stats::of(event.duration),
            gap: Stats::of(gap),
            offset_low,
            offset_high,
        });
        self.count += 1;
    }

    pub fn finish(self) -> StreamTree {
        StreamTree {
            first_start: self.first_start.unwrap_or(0),
            last_end: self.last_end,
            count: self.count,
            nodes: self.folder.finish(),
        }
    }
}

/// A folded stream.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamTree {
    pub first_start: u64,
    pub last_end: u64,
    /// Events the tree stands for.
    pub count: u64,
    pub nodes: Vec<Node<EventKey>>,
}

const MAX_DEPTH: usize = 64;

fn file_ref_code(file: FileRef) -> (u64, i64) {
    match file {
        FileRef::None => (0, 0),
        FileRef::Bound => (1, 0),
        FileRef::Delta(delta) => (2, delta),
    }
}

impl StreamTree {
    pub fn encode(&self) -> Vec<u8> {
        let mut keys: Vec<EventKey> = Vec::new();
        let mut key_index: HashMap<EventKey, u64> = HashMap::new();
        let mut tree = ByteWriter::new();
        fn walk(
            nodes: &[Node<EventKey>],
            keys: &mut Vec<EventKey>,
            key_index: &mut HashMap<EventKey, u64>,
            out: &mut ByteWriter,
        ) {
            out.u64(nodes.len() as u64);
            for node in nodes {
                match node {
                    Node::Leaf(leaf) => {
                        let index = *key_index.entry(leaf.key).or_insert_with(|| {
                            keys.push(leaf.key);
                            keys.len() as u64 - 1
                        });
                        out.u64(index << 1);
                        leaf.duration.encode(out);
                        leaf.gap.encode(out);
                        out.i64(leaf.offset_low);
                        out.i64(leaf.offset_high.wrapping_sub(leaf.offset_low));
                    }
                    Node::Loop { count, body } => {
                        out.u64(1 | (count << 1));
                        walk(body, keys, key_index, out);
                    }
                }
            }
        }
        walk(&self.nodes, &mut keys, &mut key_index, &mut tree);
        let mut out = ByteWriter::new();
        out.u64(self.first_start);
        out.u64(self.last_end.saturating_sub(self.first_start));
        out.u64(self.count);
        out.u64(keys.len() as u64);
        for key in &keys {
            out.u64(key.call as u64);
            out.u64(key.context as u64);
            out.u64(key.handle);
            let (file_kind, file_delta) = file_ref_code(key.file);
            out.u64(file_kind);
            out.i64(file_delta);
            match key.offset {
                OffsetRef::Unknown => out.u64(0),
                OffsetRef::Delta(delta) => {
                    out.u64(1);
                    out.i64(delta);
                }
                OffsetRef::First(offset) => {
                    out.u64(2);
                    out.i64(offset);
                }
            }
            out.u64(key.request);
            out.i64(key.result);
            out.i64(key.errno as i64);
            out.u64(key.aux);
            out.u64(key.flags as u64);
            out.u64(key.order as u64);
        }
        out.buffer.extend_from_slice(&tree.buffer);
        out.into_inner()
    }

    pub fn decode(data: &[u8]) -> Result<StreamTree> {
        let mut reader = ByteReader::new(data, "event stream");
        let first_start = reader.u64()?;
        let last_end = first_start.saturating_add(reader.u64()?);
        let count = reader.u64()?;
        let key_count = reader.count(12)?;
        let mut keys = Vec::with_capacity(key_count);
        for _ in 0..key_count {
            let call = u16::try_from(reader.u64()?)
                .map_err(|_| reader.corrupt("call index out of range"))?;
            let context = reader.u32()?;
            let handle = reader.u64()?;
            let file = match (reader.u64()?, reader.i64()?) {
                (0, _) => FileRef::None,
                (1, _) => FileRef::Bound,
                (2, delta) => FileRef::Delta(delta),
                _ => return Err(reader.corrupt("unknown file encoding")),
            };
            let offset = match reader.u64()? {
                0 => OffsetRef::Unknown,
                1 => OffsetRef::Delta(reader.i64()?),
                2 => OffsetRef::First(reader.i64()?),
                _ => return Err(reader.corrupt("unknown offset encoding")),
            };
            keys.push(EventKey {
                call,
                context,
                handle,
                file,
                offset,
                request: reader.u64()?,
                result: reader.i64()?,
                errno: reader.i32()?,
                aux: reader.u64()?,
                flags: reader.u32()?,
                order: u8::try_from(reader.u64()?)
                    .map_err(|_| reader.corrupt("bad access order"))?,
            });
        }
        fn walk(
            reader: &mut ByteReader,
            keys: &[EventKey],
            depth: usize,
        ) -> Result<Vec<Node<EventKey>>> {
            if depth > MAX_DEPTH {
                return Err(reader.corrupt("loops nested too deeply"));
            }
            let length = reader.count(1)?;
            let mut nodes = Vec::with_capacity(length);
            for _ in 0..length {
                let tag = reader.u64()?;
                if tag & 1 == 0 {
                    let key = *keys
                        .get((tag >> 1) as usize)
                        .ok_or_else(|| reader.corrupt("key index out of range"))?;
                    let duration = Stats::decode(reader)?;
                    let gap = Stats::decode(reader)?;
                    let offset_low = reader.i64()?;
                    let offset_high = offset_low.wrapping_add(reader.i64()?);
                    nodes.push(Node::Leaf(Leaf {
                        key,
                        duration,
                        gap,
                        offset_low,
                        offset_high,
                    }));
                } else {
                    let count = tag >> 1;
                    nodes.push(Node::Loop {
                        count,
                        body: walk(reader, keys, depth + 1)?,
                    });
                }
            }
            Ok(nodes)
        }
        let nodes = walk(&mut reader, &keys, 0)?;
        if !reader.is_empty() {
            return Err(FormatError::Corrupt(
                "event stream has trailing bytes".into(),
            ));
        }
        let tree = StreamTree {
            first_start,
            last_end,
            count,
            nodes,
        };
        if crate::fold::occurrence_count(&tree.nodes) != count {
            return Err(FormatError::Corrupt(
                "event stream's loops do not add up to its event count".into(),
            ));
        }
        Ok(tree)
    }

    /// Every event in order, with exact keys, files and offsets; start and duration come
    /// from the leaves' mean gap and duration (exact only for the first start).
    pub fn expand(
        &self,
        class_of: impl Fn(u16) -> Option<CallClass>,
        mut visit: impl FnMut(Event),
    ) {
        let mut relative = Relative::default();
        let mut clock = self.first_start;
        let mut first = true;
        for_each_occurrence(&self.nodes, &mut |leaf: &Leaf<EventKey>| {
            let key = &leaf.key;
            let (file_plus_one, offset) = relative.decode(key, class_of(key.call));
            let start = if first {
                clock
            } else {
                clock.saturating_add(leaf.gap.mean.round() as u64)
            };
            first = false;
            let duration = leaf.duration.mean.round() as u64;
            clock = start.saturating_add(duration);
            visit(Event {
                call: key.call,
                start,
                duration,
                file: file_plus_one.checked_sub(1).map(|file| file as u32),
                handle: key.handle,
                offset,
                request: key.request,
                result: key.result(),
                errno: key.errno,
                context: key.context,
                aux: key.aux,
                flags: key.flags,
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn class_of(call: u16) -> Option<CallClass> {
        [
            CallClass::Open,
            CallClass::Read,
            CallClass::Write,
            CallClass::Seek,
            CallClass::Dup,
            CallClass::Close,
        ]
        .get(call as usize)
        .copied()
    }

    /// Events from a small alphabet, so that repetitions (and loops) happen.
    fn events() -> impl Strategy<Value = Vec<Event>> {
        proptest::collection::vec(
            (
                0u16..6,
                0u32..3,
                3u64..6,
                proptest::option::of(0u32..4),
                prop_oneof![Just(-1i64), (0i64..3).prop_map(|o| o * 4096)],
                prop_oneof![Just(4096u64), Just(100)],
                0u64..3,
                0u32..2,
                1u64..1000,
                0u64..100,
            ),
            0..300,
        )
        .prop_map(|raw| {
            let mut clock = 0;
            raw.into_iter()
                .map(
                    |(
                        call,
                        context,
                        handle,
                        file,
                        offset,
                        request,
                        short,
                        failed,
                        duration,
                        gap,
                    )| {
                        clock += gap;
                        let start = clock;
                        clock += duration;
                        let failed = failed == 1 && short == 2;
                        Event {
                            call,
                            start,
                            duration,
                            file,
                            handle,
                            offset,
                            request,
                            result: if failed {
                                -1
                            } else {
                                request as i64 - short as i64
                            },
                            errno: if failed { 9 } else { 0 },
                            context,
                            aux: short,
                            flags: if failed { event_flags::FAILED } else { 0 },
                        }
                    },
                )
                .collect()
        })
    }

    fn exact(event: &Event) -> (u16, Option<u32>, u64, i64, u64, i64, i32, u32, u64, u32) {
        (
            event.call,
            event.file,
            event.handle,
            event.offset,
            event.request,
            event.result,
            event.errno,
            event.context,
            event.aux,
            event.flags,
        )
    }

    proptest! {
        #[test]
        fn every_exactly_kept_field_survives(events in events()) {
            let mut encoder = StreamEncoder::default();
            for event in &events {
                encoder.push(event, class_of(event.call));
            }
            let tree = encoder.finish();
            let decoded = StreamTree::decode(&tree.encode()).unwrap();
            prop_assert_eq!(&decoded, &tree);
            let mut expanded = Vec::new();
            decoded.expand(class_of, |event| expanded.push(event));
            prop_assert_eq!(expanded.len(), events.len());
            for (original, back) in events.iter().zip(&expanded) {
                prop_assert_eq!(exact(original), exact(back));
            }
            if let (Some(first), Some(back)) = (events.first(), expanded.first()) {
                prop_assert_eq!(first.start, back.start);
            }
            prop_assert_eq!(decoded.last_end, events.iter().map(Event::end).max().unwrap_or(0));
        }

        #[test]
        fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Ok(tree) = StreamTree::decode(&data) {
                if tree.count < 10_000 {
                    tree.expand(class_of, |_| {});
                }
            }
        }
    }

    #[test]
    fn checkpoint_loop_folds_to_a_constant_size() {
        let size = |steps: u64| {
            let mut encoder = StreamEncoder::default();
            let mut clock = 0;
            let mut push =
                |encoder: &mut StreamEncoder, call, file, handle, offset, request, context| {
                    clock += 1000;
                    let event = Event {
                        call,
                        start: clock,
                        duration: 500,
                        file: Some(file),
                        handle,
                        offset,
                        request,
                        result: request as i64,
                        errno: 0,
                        context,
                        aux: 0,
                        flags: 0,
                    };
                    encoder.push(&event, class_of(call));
                };
            for step in 0..steps {
                let file = 1 + step as u32;
                push(&mut encoder, 0, file, 3, -1, 0, 10);
                for block in 0..16 {
                    push(&mut encoder, 2, file, 3, block * 65536, 65536, 11);
                }
                push(&mut encoder, 5, file, 3, -1, 0, 12);
                push(&mut encoder, 2, 0, 7, -1, 26, 13);
            }
            let tree = encoder.finish();
            assert_eq!(tree.count, steps * 19);
            tree.encode().len()
        };
        // Only the counters (loop count, statistics counts) get wider varints.
        let (small, large) = (size(10), size(100_000));
        assert!(large - small < 64, "{small} -> {large}");
        assert!(large < 1024, "{large}");
    }
}

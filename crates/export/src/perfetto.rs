//! Perfetto's trace format: a `Trace` message is a sequence of `TracePacket`s (field 1), so
//! packets are written one by one as the trace is expanded. The messages below are the
//! part of Perfetto's schema (`protos/perfetto/trace/perfetto_trace.proto`) this export
//! uses, with the schema's own field numbers.
//!
//! Tracks: one per process (named by rank and executable), one per thread below it, and
//! one per layer below that (`posix`, `stdio`, `mpi`, `mpiio`), so that the POSIX calls an
//! MPI-IO call made show beside it rather than as slices that would have to nest inside
//! it exactly. Each call is a slice (begin and end packets) named after the call, with its
//! file, sizes, offset, result, errno and MPI peer and tag as debug annotations, and
//! `times_estimated` when its times are its folded loop's means. Each MPI-IO call and the
//! POSIX sub-calls made inside it share a flow, drawn as arrows, as do each message's send
//! and the receive, or the completion of a posted receive, where it arrived. Below each thread, counter
//! tracks follow the bytes it read and wrote (the program's calls, as the summary counts).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Write;

use cairn_model::{event_flags, CallClass, Event, Layer, MessageBytes};
use cairn_trace::Trace;
use prost::Message;

use crate::{ExportError, Filter};

/// The subset of Perfetto's schema written here.
mod proto {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TracePacket {
        #[prost(uint64, optional, tag = "8")]
        pub timestamp: Option<u64>,
        #[prost(uint32, optional, tag = "10")]
        pub trusted_packet_sequence_id: Option<u32>,
        #[prost(message, optional, tag = "11")]
        pub track_event: Option<TrackEvent>,
        #[prost(message, optional, tag = "60")]
        pub track_descriptor: Option<TrackDescriptor>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TrackDescriptor {
        #[prost(uint64, optional, tag = "1")]
        pub uuid: Option<u64>,
        #[prost(string, optional, tag = "2")]
        pub name: Option<String>,
        #[prost(message, optional, tag = "3")]
        pub process: Option<ProcessDescriptor>,
        #[prost(message, optional, tag = "4")]
        pub thread: Option<ThreadDescriptor>,
        #[prost(uint64, optional, tag = "5")]
        pub parent_uuid: Option<u64>,
        #[prost(message, optional, tag = "8")]
        pub counter: Option<CounterDescriptor>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct CounterDescriptor {
        /// 3: bytes.
        #[prost(int32, optional, tag = "3")]
        pub unit: Option<i32>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ProcessDescriptor {
        #[prost(int32, optional, tag = "1")]
        pub pid: Option<i32>,
        #[prost(string, optional, tag = "6")]
        pub process_name: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ThreadDescriptor {
        #[prost(int32, optional, tag = "1")]
        pub pid: Option<i32>,
        #[prost(int32, optional, tag = "2")]
        pub tid: Option<i32>,
        #[prost(string, optional, tag = "5")]
        pub thread_name: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TrackEvent {
        #[prost(message, repeated, tag = "4")]
        pub debug_annotations: Vec<DebugAnnotation>,
        /// 1 slice begin, 2 slice end.
        #[prost(int32, optional, tag = "9")]
        pub r#type: Option<i32>,
        #[prost(uint64, optional, tag = "11")]
        pub track_uuid: Option<u64>,
        #[prost(string, repeated, tag = "22")]
        pub categories: Vec<String>,
        #[prost(string, optional, tag = "23")]
        pub name: Option<String>,
        #[prost(int64, optional, tag = "30")]
        pub counter_value: Option<i64>,
        #[prost(fixed64, repeated, packed = "false", tag = "47")]
        pub flow_ids: Vec<u64>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct DebugAnnotation {
        #[prost(string, optional, tag = "10")]
        pub name: Option<String>,
        #[prost(int64, optional, tag = "4")]
        pub int_value: Option<i64>,
        #[prost(string, optional, tag = "6")]
        pub string_value: Option<String>,
    }
}

const SLICE_BEGIN: i32 = 1;
const SLICE_END: i32 = 2;
const COUNTER: i32 = 4;
const UNIT_BYTES: i32 = 3;
/// One writer sequence for every packet: nothing is interned, so none is needed per thread.
const SEQUENCE: u32 = 1;

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub tracks: u64,
    pub slices: u64,
    /// MPI-IO calls joined to their POSIX sub-calls.
    pub flows: u64,
    /// Point-to-point messages whose send started a flow (its receive ends it).
    pub messages: u64,
}

/// Writes `trace` as a Perfetto trace to `out`.
pub fn write(trace: &Trace, filter: &Filter, out: &mut impl Write) -> Result<Written, ExportError> {
    let mut writer = Writer {
        out,
        written: Written::default(),
        next_uuid: 1,
        next_flow: 1,
    };
    // Filtered-out processes get no track (their streams are skipped below).
    let mut process_tracks = Vec::with_capacity(trace.processes.len());
    for process in &trace.processes {
        if !filter.keeps_process(process) {
            process_tracks.push(0);
            continue;
        }
        let uuid = writer.uuid();
        let executable = String::from_utf8_lossy(&process.executable);
        let name = match process.rank {
            Some(rank) => format!("rank {rank}: {executable}"),
            None => executable.into_owned(),
        };
        writer.track(proto::TrackDescriptor {
            uuid: Some(uuid),
            process: Some(proto::ProcessDescriptor {
                pid: Some(process.pid as i32),
                process_name: Some(name),
            }),
            ..Default::default()
        })?;
        process_tracks.push(uuid);
    }
    let mut messages = Messages::default();
    for stream in &trace.streams {
        let process = &trace.processes[stream.process as usize];
        if !filter.keeps_process(process) {
            continue;
        }
        let thread_uuid = writer.uuid();
        writer.track(proto::TrackDescriptor {
            uuid: Some(thread_uuid),
            parent_uuid: Some(process_tracks[stream.process as usize]),
            thread: Some(proto::ThreadDescriptor {
                pid: Some(process.pid as i32),
                tid: Some(stream.thread as i32),
                thread_name: Some(format!("thread {}", stream.thread)),
            }),
            ..Default::default()
        })?;
        let mut layers: HashMap<Layer, u64> = HashMap::new();
        let mut counters = Counters::default();
        // The POSIX calls made inside an MPI-IO call are written with it, sharing its flow;
        // the calls a library (HDF5) made inside the program's call share one flow with it
        // (they come first: a call is recorded when it returns).
        let mut library_flow: Option<u64> = None;
        let mut awaiting = Awaiting::new();
        let mut failure: Result<(), ExportError> = Ok(());
        filter.expand_calls(trace, stream, |event, subcalls| {
            let layer = trace.calls[event.call as usize].layer();
            failure = (|| {
                if crate::is_subcall(trace, &event) {
                    // One whose MPI-IO call was left out: a slice of its own.
                    return writer.slice(trace, &mut layers, thread_uuid, &event, &[]);
                }
                let inside_library = event.flags & event_flags::INSIDE_LIBRARY != 0;
                let library_flow = if inside_library {
                    Some(*library_flow.get_or_insert_with(|| writer.flow()))
                } else if layer.is_some_and(Layer::is_library) {
                    library_flow.take()
                } else {
                    None
                };
                let flow = library_flow.or_else(|| {
                    (layer == Some(Layer::MpiIo) && !subcalls.is_empty()).then(|| writer.flow())
                });
                let flows = match flow {
                    Some(flow) => vec![flow],
                    None => messages.flows(
                        trace,
                        process.rank,
                        &event,
                        &mut awaiting,
                        &mut writer.written,
                    ),
                };
                writer.slice(trace, &mut layers, thread_uuid, &event, &flows)?;
                writer.count(trace, &mut counters, thread_uuid, &event)?;
                for subcall in subcalls {
                    writer.slice(trace, &mut layers, thread_uuid, subcall, &flows)?;
                }
                Ok(())
            })();
            failure.is_ok()
        });
        failure?;
    }
    writer.out.flush()?;
    Ok(writer.written)
}

/// Flows from point-to-point sends to their receives, on `MPI_COMM_WORLD` (kept as handle 0
/// on every rank) with a concrete peer and tag: MPI does not let messages from one sender
/// with one tag overtake each other, so the k-th send from rank a to rank b with tag t
/// meets the k-th receive b posted from a with tag t. Both ends compute the same flow id
/// from (a, b, t, k), each from its own process's order, so nothing is held between
/// streams. Receives posted with a wildcard source or tag are left without a flow.
///
/// A blocking receive ends its flow; a posted one (`MPI_Irecv`) waits in its thread's
/// [`Awaiting`] for the completion that finished it, where the message arrived
/// ([`crate::finished_receives`]), as Score-P's `MpiIrecv` records are written at the
/// completion.
#[derive(Default)]
struct Messages {
    sent: HashMap<(u32, u32, u32), u64>,
    received: HashMap<(u32, u32, u32), u64>,
}

/// A thread's posted receives whose completion has not come yet: (source, flow).
type Awaiting = Vec<(u32, u64)>;

impl Messages {
    /// The flows `event` starts or ends (see [`Messages`]).
    fn flows(
        &mut self,
        trace: &Trace,
        rank: Option<u32>,
        event: &Event,
        awaiting: &mut Awaiting,
        written: &mut Written,
    ) -> Vec<u64> {
        let Some(call) = trace.calls[event.call as usize].call else {
            return Vec::new();
        };
        if call.message_bytes() == Some(MessageBytes::Completed) {
            let finished = crate::finished_receives(awaiting, event);
            return finished.into_iter().map(|(_, flow)| flow).collect();
        }
        let Some(flow) = self.flow(call, rank, event, written) else {
            return Vec::new();
        };
        if call.message_bytes() == Some(MessageBytes::Posted) {
            let (peer, _) = cairn_model::peer_and_tag(event.aux);
            awaiting.push((peer as u32, flow));
            return Vec::new();
        }
        vec![flow]
    }

    fn flow(
        &mut self,
        call: cairn_model::Call,
        rank: Option<u32>,
        event: &Event,
        written: &mut Written,
    ) -> Option<u64> {
        let role = call.message_bytes()?;
        let rank = rank?;
        if event.handle != 0 || event.failed() {
            return None;
        }
        let (peer, tag) = cairn_model::peer_and_tag(event.aux);
        let (peer, tag) = (u32::try_from(peer).ok()?, u32::try_from(tag).ok()?);
        let (key, order) = match role {
            MessageBytes::Sent => ((rank, peer, tag), &mut self.sent),
            MessageBytes::Received | MessageBytes::Posted => {
                ((peer, rank, tag), &mut self.received)
            }
            MessageBytes::Completed | MessageBytes::Probed | MessageBytes::Described => {
                return None
            }
        };
        let index = order.entry(key).or_default();
        let k = *index;
        *index += 1;
        if role == MessageBytes::Sent {
            written.messages += 1;
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (key, k).hash(&mut hasher);
        // The top bit keeps message flows apart from the MPI-IO ones (numbered from 2).
        Some(hasher.finish() | 1 << 63)
    }
}

/// A thread's byte counters: the program's file bytes read and written so far (MPI-IO's
/// POSIX sub-calls left out, as the summary counts them), each a counter track below the
/// thread, made when first needed: (track, total).
#[derive(Default)]
struct Counters {
    read: Option<(u64, i64)>,
    written: Option<(u64, i64)>,
}

struct Writer<'a, W: Write> {
    out: &'a mut W,
    written: Written,
    next_uuid: u64,
    next_flow: u64,
}

impl<W: Write> Writer<'_, W> {
    fn uuid(&mut self) -> u64 {
        self.next_uuid += 1;
        self.next_uuid
    }

    fn flow(&mut self) -> u64 {
        self.written.flows += 1;
        self.next_flow += 1;
        self.next_flow
    }

    /// One `Trace.packet` (field 1, length-delimited).
    fn packet(&mut self, packet: &proto::TracePacket) -> Result<(), ExportError> {
        let mut bytes = Vec::with_capacity(packet.encoded_len() + 12);
        prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut bytes);
        packet
            .encode_length_delimited(&mut bytes)
            .expect("a Vec grows as needed");
        self.out.write_all(&bytes)?;
        Ok(())
    }

    fn track(&mut self, descriptor: proto::TrackDescriptor) -> Result<(), ExportError> {
        self.written.tracks += 1;
        self.packet(&proto::TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE),
            track_descriptor: Some(descriptor),
            ..Default::default()
        })
    }

    /// The track of `layer` under a thread's track, described the first time.
    fn layer_track(
        &mut self,
        layers: &mut HashMap<Layer, u64>,
        thread: u64,
        layer: Option<Layer>,
    ) -> Result<u64, ExportError> {
        let layer = layer.unwrap_or(Layer::Process);
        if let Some(uuid) = layers.get(&layer) {
            return Ok(*uuid);
        }
        let uuid = self.uuid();
        self.track(proto::TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: Some(thread),
            name: Some(layer.name().to_string()),
            ..Default::default()
        })?;
        layers.insert(layer, uuid);
        Ok(uuid)
    }

    /// Moves a thread's byte counter on by what a read or write moved, at its end.
    fn count(
        &mut self,
        trace: &Trace,
        counters: &mut Counters,
        thread: u64,
        event: &Event,
    ) -> Result<(), ExportError> {
        let (counter, name) = match trace.calls[event.call as usize].class() {
            Some(CallClass::Read) => (&mut counters.read, "bytes read"),
            Some(CallClass::Write) => (&mut counters.written, "bytes written"),
            _ => return Ok(()),
        };
        let bytes = event.bytes() as i64;
        if bytes == 0 {
            return Ok(());
        }
        let (track, total) = match counter {
            Some(counter) => counter,
            None => {
                let uuid = self.uuid();
                self.track(proto::TrackDescriptor {
                    uuid: Some(uuid),
                    parent_uuid: Some(thread),
                    name: Some(name.to_string()),
                    counter: Some(proto::CounterDescriptor {
                        unit: Some(UNIT_BYTES),
                    }),
                    ..Default::default()
                })?;
                counter.insert((uuid, 0))
            }
        };
        *total += bytes;
        let (track, value) = (*track, *total);
        self.packet(&proto::TracePacket {
            timestamp: Some(event.start + event.duration),
            trusted_packet_sequence_id: Some(SEQUENCE),
            track_event: Some(proto::TrackEvent {
                r#type: Some(COUNTER),
                track_uuid: Some(track),
                counter_value: Some(value),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    fn slice(
        &mut self,
        trace: &Trace,
        layers: &mut HashMap<Layer, u64>,
        thread: u64,
        event: &Event,
        flows: &[u64],
    ) -> Result<(), ExportError> {
        let call = &trace.calls[event.call as usize];
        let track = self.layer_track(layers, thread, call.layer())?;
        let begin = proto::TrackEvent {
            r#type: Some(SLICE_BEGIN),
            track_uuid: Some(track),
            name: Some(call.name.clone()),
            categories: call
                .layer()
                .map(|layer| layer.name().to_string())
                .into_iter()
                .collect(),
            debug_annotations: annotations(trace, event),
            flow_ids: flows.to_vec(),
            ..Default::default()
        };
        self.packet(&proto::TracePacket {
            timestamp: Some(event.start),
            trusted_packet_sequence_id: Some(SEQUENCE),
            track_event: Some(begin),
            ..Default::default()
        })?;
        self.packet(&proto::TracePacket {
            timestamp: Some(event.start + event.duration),
            trusted_packet_sequence_id: Some(SEQUENCE),
            track_event: Some(proto::TrackEvent {
                r#type: Some(SLICE_END),
                track_uuid: Some(track),
                ..Default::default()
            }),
            ..Default::default()
        })?;
        self.written.slices += 1;
        Ok(())
    }
}

fn annotations(trace: &Trace, event: &Event) -> Vec<proto::DebugAnnotation> {
    let int = |name: &str, value: i64| proto::DebugAnnotation {
        name: Some(name.to_string()),
        int_value: Some(value),
        ..Default::default()
    };
    let mut list = Vec::new();
    if let Some(file) = event.file {
        list.push(proto::DebugAnnotation {
            name: Some("file".into()),
            string_value: Some(
                String::from_utf8_lossy(&trace.files[file as usize].path).into_owned(),
            ),
            ..Default::default()
        });
    }
    list.push(int("request", event.request as i64));
    list.push(int("result", event.result));
    if event.offset >= 0 {
        list.push(int("offset", event.offset));
    }
    if event.failed() {
        list.push(int("errno", event.errno as i64));
    }
    if event.flags & event_flags::TIMES_FROM_STATISTICS != 0 {
        // The start and duration are the folded loop's means for this call.
        list.push(int("times_estimated", 1));
    }
    if let Some((peer, tag)) = crate::message(trace, event) {
        list.push(int("peer", peer as i64));
        if let Some(tag) = tag {
            list.push(int("tag", tag as i64));
        }
    }
    list
}

"""Reads a Perfetto trace with the schema Perfetto's Python package ships and prints, as
JSON, what the export test checks: slices per call name, slices per track name (a layer's
track is named after the layer), the call names each flow joins, packets without a known
track, per process the last value of its threads' byte counters, and per call name the
slices whose times are marked estimated."""
import collections
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

trace = pb.Trace()
with open(sys.argv[1], "rb") as file:
    trace.ParseFromString(file.read())
tracks = {}
slices = collections.Counter()
per_track = collections.Counter()
flows = collections.defaultdict(list)
unknown_tracks = 0
open_slices = collections.Counter()
counter_last = {}
estimated = collections.Counter()
for packet in trace.packet:
    if packet.HasField("track_descriptor"):
        descriptor = packet.track_descriptor
        tracks[descriptor.uuid] = descriptor
    if packet.HasField("track_event"):
        event = packet.track_event
        if event.track_uuid not in tracks:
            unknown_tracks += 1
        if event.type == pb.TrackEvent.TYPE_COUNTER:
            # Written in time order per track: the last value is the total.
            counter_last[event.track_uuid] = event.counter_value
        if event.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            slices[event.name] += 1
            if any(a.name == "times_estimated" and a.int_value == 1 for a in event.debug_annotations):
                estimated[event.name] += 1
            per_track[tracks[event.track_uuid].name] += 1
            open_slices[event.track_uuid] += 1
            for flow in event.flow_ids:
                flows[flow].append(event.name)
        elif event.type == pb.TrackEvent.TYPE_SLICE_END:
            open_slices[event.track_uuid] -= 1
processes = sorted(d.process.pid for d in tracks.values() if d.HasField("process"))
bytes_per_process = collections.defaultdict(lambda: {"bytes read": 0, "bytes written": 0})
for uuid, value in counter_last.items():
    counter = tracks[uuid]
    thread = tracks[counter.parent_uuid].thread
    bytes_per_process[str(thread.pid)][counter.name] += value
json.dump(
    {
        "slices": slices,
        "per_track": per_track,
        # Ordered by their JSON text: flows of different lengths do not compare as lists.
        "flows": sorted(
            (sorted(set(names)) + [len(names)] for names in flows.values()), key=json.dumps
        ),
        "unknown_tracks": unknown_tracks,
        "unclosed": sum(count != 0 for count in open_slices.values()),
        "processes": processes,
        "bytes": bytes_per_process,
        "estimated": estimated,
    },
    sys.stdout,
)

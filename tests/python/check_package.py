"""Run by the Python package test in a fresh virtual environment where only the `cairn`
wheel (and pandas, numpy) was installed: opens a 4-rank MPI-IO trace and a trace of 10^7
folded pwrites through `cairn.open` and prints, as JSON, the figures the test compares with
`cairn summary --json`.

Usage: check_package.py RING_TRACE BIG_TRACE"""
import json
import resource
import sys

import cairn

ring, big = sys.argv[1], sys.argv[2]
out = {}
trace = cairn.open(ring)
out["summary_events"] = trace.summary()["events"]
events = trace.events_frame()
out["calls"] = {str(k): int(v) for k, v in events.groupby("call", observed=True).size().items()}
out["files"] = {
    row.path: [int(row.bytes_read), int(row.bytes_written)] for row in trace.files().itertuples()
}
out["pids"] = sorted(int(pid) for pid in trace.processes()["pid"])
out["ranks"] = sorted(int(rank) for rank in trace.processes()["rank"])
out["call_site_events"] = int(trace.call_sites()["count"].sum())
out["events_with_call_site"] = int(events["call_site"].notna().sum())
part = trace.events_frame(ranks=[1], layers=["mpiio"])
out["rank_1_mpiio"] = {str(k): int(v) for k, v in part.groupby("call", observed=True).size().items()}
out["rank_1_mpiio_ranks"] = sorted(set(int(rank) for rank in part["rank"]))
out["limited"] = len(trace.events_frame(limit=5))
out["subcall_parents"] = {
    str(k): int(v)
    for k, v in events[events["subcall"]].groupby("parent_call", observed=True).size().items()
}
out["first_loop"] = [node.get("loop") for node in trace.structure()[0]["tree"]][:1]
try:
    cairn.open(ring + ".missing")
    out["missing"] = "opened"
except OSError as error:
    out["missing"] = str(error).count("\n") == 0 and "missing" in str(error)

big_trace = cairn.open(big)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = pwrites = 0
for batch in big_trace.events():
    rows += len(batch)
    pwrites += int((batch["call"] == "pwrite").sum())
out["big"] = {
    "rows": rows,
    "pwrites": pwrites,
    "summary_events": big_trace.summary()["events"],
    "rss_growth_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before,
}
json.dump(out, sys.stdout)

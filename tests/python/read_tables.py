"""Reads cairn's table export (`--format csv` with Python's csv module, `--format parquet`
with pyarrow) and prints, as JSON, what the export test compares with the summary: from the
events table, rows per call, per file the bytes of the read and write calls the program made
(rows inside an MPI-IO call left out, as the summary does), rows per call site and per
(MPI-IO call, sub-call); and the files, processes and call-sites tables' own figures.

Usage: read_tables.py csv|parquet DIRECTORY"""
import collections
import csv
import json
import os
import sys

kind, directory = sys.argv[1], sys.argv[2]


def rows(table):
    """The table's rows as dicts, with None for empty cells (CSV) or nulls (Parquet)."""
    path = os.path.join(directory, f"{table}.{kind}")
    if kind == "parquet":
        import pyarrow.parquet

        return pyarrow.parquet.read_table(path).to_pylist()
    with open(path, newline="") as handle:
        return [{k: (v if v != "" else None) for k, v in row.items()} for row in csv.DictReader(handle)]


def number(value):
    return None if value is None else int(value)


calls = collections.Counter()
files = collections.defaultdict(lambda: {"bytes_read": 0, "bytes_written": 0})
call_sites = collections.Counter()
parents = collections.Counter()
for row in rows("events"):
    calls[row["call"]] += 1
    if row["call_site"] is not None:
        call_sites[str(row["call_site"])] += 1
    subcall = row["subcall"] in (True, "1")
    if subcall:
        parents[f'{row["parent_call"]} > {row["call"]}'] += 1
    if subcall or row["file"] is None or row["errno"] is not None:
        continue
    result = max(number(row["result"]), 0)
    if row["class"] == "read":
        files[row["file"]]["bytes_read"] += result
    elif row["class"] == "write":
        files[row["file"]]["bytes_written"] += result

files_table = {
    row["path"]: {"bytes_read": number(row["bytes_read"]), "bytes_written": number(row["bytes_written"])}
    for row in rows("files")
}
processes_table = sorted(number(row["pid"]) for row in rows("processes"))
call_sites_table = collections.Counter()
for row in rows("call_sites"):
    call_sites_table[str(row["context"])] += number(row["count"])

result = {
    "calls": calls,
    "files": files,
    "call_sites": call_sites,
    "parents": parents,
    "files_table": files_table,
    "processes_table": processes_table,
    "call_sites_table": call_sites_table,
}
if kind == "parquet":
    import pyarrow.parquet

    schema = pyarrow.parquet.read_schema(os.path.join(directory, "events.parquet"))
    result["types"] = {field.name: str(field.type) for field in schema}
json.dump(result, sys.stdout)

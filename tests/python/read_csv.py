"""Reads cairn's CSV export with Python's csv module and prints, as JSON, what the export
test compares with the summary: rows per call, and per file the bytes of the read and
write calls made by the program (rows inside an MPI-IO call left out, as the summary does)."""
import collections
import csv
import json
import sys

calls = collections.Counter()
files = collections.defaultdict(lambda: {"bytes_read": 0, "bytes_written": 0})
with open(sys.argv[1], newline="") as table:
    for row in csv.DictReader(table):
        calls[row["call"]] += 1
        if row["subcall"] == "1" or not row["file"] or row["errno"]:
            continue
        result = max(int(row["result"]), 0)
        if row["class"] == "read":
            files[row["file"]]["bytes_read"] += result
        elif row["class"] == "write":
            files[row["file"]]["bytes_written"] += result
json.dump({"calls": calls, "files": files}, sys.stdout)

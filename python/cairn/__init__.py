"""cairn traces in Python, read by cairn's own Rust reader.

>>> import cairn
>>> trace = cairn.open("job.cairn")
>>> trace.summary()["bytes_written"]          # `cairn summary --json`, as a dict
>>> trace.files()                             # pandas DataFrames: the summary's tables
>>> trace.processes(); trace.call_sites()
>>> for batch in trace.events(ranks=[0, (4, 7)], layers=["mpiio", "posix"]):
...     ...                                   # the expanded events, a DataFrame per batch
>>> trace.events_frame(limit=1000)            # or the first events as one DataFrame
>>> trace.structure()                         # the folded loops, without expanding them

The events stream in batches (65,536 rows by default) from a reader thread, so a trace of
billions of events is read in the memory of two batches; a batch's columns are those of
`cairn export --format parquet`'s events table (text columns as pandas categoricals,
missing values as nulls).
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import _native

__all__ = ["open", "Trace"]

RankSpec = Union[int, Tuple[int, int], range]


def open(path: Union[str, os.PathLike]) -> "Trace":  # noqa: A001 - the package's verb
    """Opens a trace file (`OSError` when it is missing or not a cairn trace)."""
    return Trace(_native.open(os.fspath(path)))


def _ranges(ranks: Optional[Iterable[RankSpec]]) -> Optional[List[Tuple[int, int]]]:
    if ranks is None:
        return None
    if isinstance(ranks, (int, range, tuple)):
        ranks = [ranks]
    ranges = []
    for spec in ranks:
        if isinstance(spec, int):
            ranges.append((spec, spec))
        elif isinstance(spec, range):
            if len(spec):
                ranges.append((spec[0], spec[-1]))
        else:
            first, last = spec
            ranges.append((int(first), int(last)))
    return ranges


def _frame(batch: dict) -> pd.DataFrame:
    columns = {}
    for name, (kind, data, mask, categories) in batch.items():
        if kind == "text":
            codes = np.frombuffer(data, dtype="<i4")
            columns[name] = pd.Categorical.from_codes(codes, categories=categories)
        elif kind == "bool":
            columns[name] = np.frombuffer(data, dtype=np.bool_)
        else:
            values = np.frombuffer(data, dtype=kind)
            if mask is None:
                columns[name] = values
            else:
                missing = np.frombuffer(mask, dtype=np.bool_)
                columns[name] = pd.arrays.IntegerArray(values.copy(), missing.copy())
    return pd.DataFrame(columns)


class Trace:
    """An open trace. Tables are computed from the folded trace; only `events` expands it."""

    def __init__(self, native):
        self._native = native

    def summary(self, all: bool = False) -> dict:
        """`cairn summary --json` (docs/SUMMARY-JSON.md); `all` includes runtime noise."""
        return json.loads(self._native.summary_json(all))

    def _table(self, name: str, all: bool) -> pd.DataFrame:
        columns, rows = self._native.table(name, all)
        return pd.DataFrame.from_records(rows, columns=columns)

    def files(self, all: bool = False) -> pd.DataFrame:
        """A row per file: opens, reads, writes, bytes, times, access sizes, order..."""
        return self._table("files", all)

    def processes(self, all: bool = False) -> pd.DataFrame:
        """A row per process: pid, rank, executable, times, events, bytes, ending..."""
        return self._table("processes", all)

    def call_sites(self, all: bool = False) -> pd.DataFrame:
        """A row per (calling context, call): stack, location, count, bytes, time; its
        `context` is the events' `call_site`."""
        return self._table("call_sites", all)

    def events(
        self,
        ranks: Optional[Iterable[RankSpec]] = None,
        layers: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        all: bool = False,
        batch: int = 65_536,
    ) -> Iterator[pd.DataFrame]:
        """The expanded events, a DataFrame per batch of `batch` rows: only `ranks` (ints,
        (first, last) pairs or ranges), only `layers` (posix, stdio, mpi, mpiio, process),
        at most `limit` rows; `all` includes runtime noise."""
        if limit is not None and limit <= 0:
            return
        batches = self._native.event_batches(_ranges(ranks), list(layers) if layers else None, all, batch)
        left = limit
        try:
            for columns in batches:
                frame = _frame(columns)
                if left is not None:
                    if len(frame) >= left:
                        yield frame.iloc[:left]
                        return
                    left -= len(frame)
                yield frame
        finally:
            batches.close()

    def events_frame(self, **options) -> pd.DataFrame:
        """`events(...)` as one DataFrame (mind the size: use `limit` or filters)."""
        frames = list(self.events(**options))
        if not frames:
            return pd.DataFrame(columns=_native.EVENT_COLUMNS)
        return pd.concat(frames, ignore_index=True)

    def structure(self) -> list:
        """Per thread, its folded events: a list of calls (call, count, mean duration and gap
        in ns, request, context) and loops (`loop`: iterations, `body`: the same list)."""
        return self._native.structure()

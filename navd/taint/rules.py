"""Taint and reprocess, the pure part: the time period of a partition read from its values,
period conversion between granularities, the dataset and partition of an element, and the
dependency order of datasets.

A dataset here is a directory (a table's location, or a path Spark wrote) with its partitions
below it, `k=v` directories (HDFS) and PARTITION elements (HMS) alike: what navd saw of them is
the only truth about a dataset's granularity. A partition's period comes from its values alone
(`dt=2026-11-01/hr=05` is the hour 05:00-06:00 of that day, `month=2026-11` the month), so a
tainted range converts downstream by overlap: 10 bad hours touch the one or two days (daily
partitions) built on them, and those days the month built on them. The Solr side (records, the
walk) is navd/taint/store.py and navd/taint/reprocess.py.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from navd.errors import UsageError
from navd.model import ElementType
from navd.names import InvalidName, path_qualified_name

#: the kinds of period, finest first
HOUR, DAY, MONTH, YEAR = "hour", "day", "month", "year"

#: partition keys that hold a date or time in one value (`dt=2026-11-01`, `ds=20261101`); compact
#: digit forms are read only under these keys: `id=20261101` is no date
_DATE_KEYS = frozenset({"dt", "ds", "date", "day", "d", "dd", "hour", "hr", "hh", "h", "ts", "time",
                        "datehour", "date_hour", "dh", "month", "mon", "mm", "m", "ym", "year", "yr", "y",
                        "yyyy", "yyyymm", "yyyymmdd", "partition_date", "event_date"})
_HOUR_KEYS = frozenset({"hour", "hr", "hh", "h"})
_DAY_KEYS = frozenset({"day", "d", "dd"})
_MONTH_KEYS = frozenset({"month", "mon", "mm", "m"})
_YEAR_KEYS = frozenset({"year", "yr", "y", "yyyy"})

#: whole-date values, read under any key (the separators make them dates)
_DASHED = (
    (re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T _-](\d{2})(?::00(?::00)?)?$"), HOUR),
    (re.compile(r"^(\d{4})-(\d{2})-(\d{2})$"), DAY),
    (re.compile(r"^(\d{4})/(\d{2})/(\d{2})$"), DAY),
    (re.compile(r"^(\d{4})-(\d{2})$"), MONTH),
)
#: compact values, read only under a date key
_COMPACT = (
    (re.compile(r"^(\d{4})(\d{2})(\d{2})(\d{2})$"), HOUR),
    (re.compile(r"^(\d{4})(\d{2})(\d{2})$"), DAY),
    (re.compile(r"^(\d{4})(\d{2})$"), MONTH),
)
_SMALL = re.compile(r"^\d{1,2}$")
_YEAR = re.compile(r"^\d{4}$")


@dataclasses.dataclass(frozen=True, order=True)
class Period:
    """[start, end) in UTC, and the granularity it was read at."""

    start: datetime
    end: datetime
    granularity: str = HOUR

    def overlaps(self, other: Period) -> bool:
        return self.start < other.end and other.start < self.end

    def as_dict(self) -> dict[str, str]:
        return {"from": iso(self.start), "to": iso(self.end), "granularity": self.granularity}


def iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _add_months(at: datetime, months: int) -> datetime:
    total = at.year * 12 + at.month - 1 + months
    return at.replace(year=total // 12, month=total % 12 + 1)


def _period(year: int, month: int | None, day: int | None, hour: int | None) -> Period | None:
    try:
        if month is None:
            start = datetime(year, 1, 1, tzinfo=UTC)
            return Period(start, start.replace(year=year + 1), YEAR)
        if day is None:
            start = datetime(year, month, 1, tzinfo=UTC)
            return Period(start, _add_months(start, 1), MONTH)
        if hour is None:
            start = datetime(year, month, day, tzinfo=UTC)
            return Period(start, start + timedelta(days=1), DAY)
        start = datetime(year, month, day, hour, tzinfo=UTC)
        return Period(start, start + timedelta(hours=1), HOUR)
    except ValueError:  # month 13, hour 24: not a time after all
        return None


def partition_period(spec: Mapping[str, str]) -> Period | None:
    """The period a partition's values name (keys lower case, in their order), or None when
    they name none: `{dt: 2026-11-01, hr: 05}` -> that hour; `{dt: 2026-11-01}` -> that day;
    `{month: 2026-11}` or `{year: 2026, month: 11}` -> that month; `{region: eu}` -> None. Keys
    that are no time (`region=eu/dt=...`) are left aside."""
    year = month = day = hour = None
    for key, value in spec.items():
        key = key.lower()
        patterns = _DASHED + (_COMPACT if key in _DATE_KEYS else ())
        whole = next(((m, kind) for pattern, kind in patterns if (m := pattern.match(value))), None)
        if whole is not None:
            parts = [int(p) for p in whole[0].groups()]
            year, month = parts[0], parts[1]
            day = parts[2] if len(parts) > 2 else day
            hour = parts[3] if len(parts) > 3 else hour
        elif key in _HOUR_KEYS and _SMALL.match(value):
            hour = int(value)
        elif key in _DAY_KEYS and _SMALL.match(value):
            day = int(value)
        elif key in _MONTH_KEYS and _SMALL.match(value):
            month = int(value)
        elif key in _YEAR_KEYS and _YEAR.match(value):
            year = int(value)
    if year is None or (hour is not None and day is None) or (day is not None and month is None):
        return None
    return _period(year, month, day, hour)


def split_partition_path(path: str) -> tuple[str, dict[str, str]]:
    """`/w/hourly/dt=2026-11-01/hr=05` -> (`/w/hourly`, {dt: 2026-11-01, hr: 05}): the dataset's
    directory (the trailing `k=v` names stripped) and the partition spec, keys lower case."""
    parts = path.rstrip("/").split("/")
    spec: list[tuple[str, str]] = []
    while len(parts) > 1 and "=" in parts[-1]:
        key, _, value = parts.pop().partition("=")
        if not key:
            parts.append(f"{key}={value}")
            break
        spec.append((key.lower(), value))
    return "/".join(parts), dict(reversed(spec))


_FILE_TYPES = (ElementType.DIRECTORY.value, ElementType.FILE.value)


def element_path(doc: Mapping[str, Any]) -> str | None:
    """An element's path in its one spelling (names.path_qualified_name): a directory's or file's
    qualifiedName (the HDFS extractor's `fileSystemPath` is the bare path), a table's or
    partition's location (the metastore's, a URI); None for an element with no path."""
    if doc.get("type") in _FILE_TYPES and doc.get("qualifiedName"):
        return str(doc["qualifiedName"]).rstrip("/")
    location = doc.get("fileSystemPath")
    if not location:
        return None
    try:
        return path_qualified_name(str(location)).rstrip("/")
    except InvalidName:  # a bare path with no file system: as it is
        return str(location).rstrip("/")


def dataset_of(doc: Mapping[str, Any]) -> tuple[str | None, dict[str, str]]:
    """(the dataset's directory, the partition spec) of an element: a table's location, a
    partition's or a `k=v` directory's parent dataset; (None, {}) for an element with no path."""
    path = element_path(doc)
    if path is None:
        return None, {}
    return split_partition_path(path)


class Periods:
    """A union of periods ([start, end) intervals, merged), or everything (`Periods.ALL`)."""

    def __init__(self, intervals: Iterable[tuple[datetime, datetime]] = (), *, everything: bool = False) -> None:
        self.everything = everything
        merged: list[tuple[datetime, datetime]] = []
        for start, end in sorted(intervals):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        self.intervals: tuple[tuple[datetime, datetime], ...] = tuple(merged)

    @classmethod
    def all(cls) -> Periods:
        return cls(everything=True)

    def covers(self, period: Period | None) -> bool:
        """Whether a partition of `period` is touched (a partition with no time always is)."""
        if self.everything or period is None:
            return True
        return any(start < period.end and period.start < end for start, end in self.intervals)

    def union(self, other: Periods) -> Periods:
        if self.everything or other.everything:
            return Periods.all()
        return Periods(self.intervals + other.intervals)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Periods) and (self.everything, self.intervals) == (other.everything,
                                                                                    other.intervals)

    def __hash__(self) -> int:
        return hash((self.everything, self.intervals))

    def as_list(self) -> list[dict[str, str]] | None:
        """JSON: the intervals, or None for everything."""
        if self.everything:
            return None
        return [{"from": iso(start), "to": iso(end)} for start, end in self.intervals]

    def __repr__(self) -> str:
        return "Periods.all()" if self.everything else f"Periods({list(self.intervals)!r})"


def taint_range(start: datetime | None, end: datetime | None) -> Periods:
    """--from/--to as Periods: both or neither (everything); UsageError otherwise."""
    if start is None and end is None:
        return Periods.all()
    if start is None or end is None:
        raise UsageError("--from and --to go together (or neither: the whole dataset)")
    if end <= start:
        raise UsageError(f"--to {iso(end)} must be after --from {iso(start)}")
    return Periods([(start, end)])


def converted(partitions: Iterable[Period | None], incoming: Periods) -> Periods:
    """The periods of a downstream dataset touched by `incoming`: the union of its partitions'
    periods that `incoming` overlaps (10 hours -> the days they fall in). A dataset with no time
    partitions passes `incoming` on unchanged (it is rebuilt whole from what it read)."""
    timed = [p for p in partitions if p is not None]
    if not timed:
        return incoming
    return Periods((p.start, p.end) for p in timed if incoming.covers(p))


def leaves(paths: Iterable[str]) -> list[str]:
    """The paths that are no prefix directory of another (the partitions themselves, not the
    `dt=...` directories holding their `hr=...` ones), sorted."""
    ordered = sorted(set(paths))
    out = []
    for n, path in enumerate(ordered):
        following = ordered[n + 1] if n + 1 < len(ordered) else ""
        if not following.startswith(path + "/"):
            out.append(path)
    return out


def dependency_order(nodes: Sequence[str], edges: Iterable[tuple[str, str]]) -> list[str]:
    """`nodes` in topological order of `edges` (upstream first); ties in the order of `nodes`
    (discovery order), and the nodes of a cycle (a job rewriting its own input) in that order
    once nothing outside the cycle is left before them."""
    position = {node: n for n, node in enumerate(nodes)}
    incoming: dict[str, set[str]] = {node: set() for node in nodes}
    for source, target in edges:
        if source != target and source in incoming and target in incoming:
            incoming[target].add(source)
    done: list[str] = []
    left = set(nodes)
    while left:
        ready = [n for n in left if not (incoming[n] & left)]
        if not ready:  # a cycle: take the first discovered of it and go on
            ready = [min(left, key=position.__getitem__)]
        for node in sorted(ready, key=position.__getitem__)[:1]:
            done.append(node)
            left.discard(node)
    return done


__all__ = ["DAY", "HOUR", "MONTH", "YEAR", "Period", "Periods", "converted", "dataset_of", "dependency_order",
           "element_path", "iso", "leaves", "partition_period", "split_partition_path", "taint_range"]

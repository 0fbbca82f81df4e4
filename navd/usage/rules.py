"""Usage, unused tables, job dependencies and impact, the pure part: the window of days, the
counts per day, what one figure holds, and the tally of reads or writes over a stream of runs.

An execution that reads a dataset (DATA_FLOW dataset -> execution) is one read on the day it
started; one that writes it (DATA_FLOW execution -> dataset) one write. The Solr side is
navd/usage/store.py; navd/usage/service.py puts them together.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any


def window_start(now: datetime, days: int) -> datetime:
    """The first instant of the window of `days` days ending at `now`: midnight UTC, `days - 1`
    days before today (--days 1 is today)."""
    if days < 1:
        raise ValueError(f"days={days}: must be >= 1")
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=days - 1)


def day_of(solr_time: str) -> str:
    """The UTC day (`2026-11-23`) of a Solr date."""
    return solr_time[:10]


def latest(current: str | None, candidate: str | None) -> str | None:
    """The later of two Solr dates (ISO text in UTC compares as time); None is the earliest."""
    if candidate is None:
        return current
    return candidate if current is None or candidate > current else current


@dataclasses.dataclass(frozen=True)
class DayCount:
    day: str  # YYYY-MM-DD, UTC
    reads: int
    writes: int

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day, "reads": self.reads, "writes": self.writes}


def per_day(reads: Mapping[str, int], writes: Mapping[str, int]) -> tuple[DayCount, ...]:
    """Counts per day, oldest first, only the days that have any."""
    return tuple(DayCount(day, reads.get(day, 0), writes.get(day, 0)) for day in sorted({*reads, *writes}))


# -- results ----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Run:
    """One execution as a usage figure names it."""

    execution: str  # identity
    qualified_name: str
    started: str | None
    ended: str | None
    user: str | None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Run:
        return cls(str(doc["identity"]), str(doc.get("qualifiedName", "")), doc.get("started"), doc.get("ended"),
                   doc.get("principal"))

    def as_dict(self) -> dict[str, Any]:
        return {"execution": self.execution, "qualifiedName": self.qualified_name, "started": self.started,
                "ended": self.ended, "user": self.user}


@dataclasses.dataclass(frozen=True)
class ColumnUsage:
    column: str  # qualifiedName
    reads: int  # in the window
    writes: int
    last_read: str | None  # in the window
    last_write: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"column": self.column, "reads": self.reads, "writes": self.writes, "lastRead": self.last_read,
                "lastWrite": self.last_write}


@dataclasses.dataclass(frozen=True)
class PartitionGeneration:
    partition: str  # qualifiedName
    generated: str | None  # end of the execution that wrote it, else its directory's modification time
    execution: str | None  # the identity of that execution, when one was found
    directory_modified: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"partition": self.partition, "generated": self.generated, "execution": self.execution,
                "directoryModified": self.directory_modified}


@dataclasses.dataclass(frozen=True)
class Usage:
    entity: str  # identity
    qualified_name: str
    type: str
    days: int
    since: str  # the window's first instant
    reads: int  # in the window
    writes: int
    by_day: tuple[DayCount, ...]
    last_read: str | None  # all time: when the last reading execution started
    last_write: str | None  # all time: when the last writing execution started
    generated: str | None  # end of the last execution that wrote it
    generated_by: str | None  # that execution's identity
    columns: tuple[ColumnUsage, ...] = ()
    partitions: tuple[PartitionGeneration, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"entity": self.entity, "qualifiedName": self.qualified_name, "type": self.type, "days": self.days,
                "since": self.since, "reads": self.reads, "writes": self.writes,
                "byDay": [d.as_dict() for d in self.by_day], "lastRead": self.last_read,
                "lastWrite": self.last_write, "generated": self.generated, "generatedBy": self.generated_by,
                "columns": [c.as_dict() for c in self.columns],
                "partitions": [p.as_dict() for p in self.partitions]}


@dataclasses.dataclass
class Tally:
    """Reads or writes of one side, counted over a stream of executions."""

    since: str
    by_day: Counter[str] = dataclasses.field(default_factory=Counter)
    #: executions in the window: qualifiedName -> started (bounded by the window)
    in_window: dict[str, str] = dataclasses.field(default_factory=dict)
    seen: set[str] = dataclasses.field(default_factory=set)  # identities counted (in the window)
    last: str | None = None
    last_end: Run | None = None  # the run that ended last

    def add(self, run: Run) -> None:
        self.last = latest(self.last, run.started)
        if run.ended is not None and (self.last_end is None or run.ended > (self.last_end.ended or "")):
            self.last_end = run
        if run.started is not None and run.started >= self.since and run.execution not in self.seen:
            self.seen.add(run.execution)
            self.by_day[day_of(run.started)] += 1
            self.in_window[run.qualified_name] = run.started


@dataclasses.dataclass(frozen=True)
class UnusedTable:
    table: str  # qualifiedName
    identity: str
    owner: str | None
    size: int | None  # bytes: the files under its location (HDFS), else Hive's totalSize
    location: str | None
    created: str | None
    last_read: str | None  # before the window, if ever

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "identity": self.identity, "owner": self.owner, "size": self.size,
                "location": self.location, "created": self.created, "lastRead": self.last_read}


@dataclasses.dataclass(frozen=True)
class Dependency:
    operation: str  # identity
    qualified_name: str
    name: str
    datasets: tuple[str, ...]  # qualifiedNames: what it produces that the job reads (or, impact: reads)
    last_run: Run | None  # deps: its last run writing them; impact: its last run reading them
    users: tuple[str, ...] = ()  # impact: who ran the reading executions
    #: the qualifiedNames of the Oozie workflows whose actions started its last run
    workflows: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        shown = {"operation": self.operation, "qualifiedName": self.qualified_name, "name": self.name,
                 "datasets": list(self.datasets), "lastRun": self.last_run.as_dict() if self.last_run else None}
        if self.users:
            shown["users"] = list(self.users)
        if self.workflows:
            shown["workflows"] = list(self.workflows)
        return shown


@dataclasses.dataclass(frozen=True)
class Deps:
    job: str  # the operation's identity
    qualified_name: str
    run: Run | None  # the job's last run, whose inputs these are
    inputs: tuple[str, ...]  # qualifiedNames
    producers: tuple[Dependency, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"job": self.job, "qualifiedName": self.qualified_name,
                "run": self.run.as_dict() if self.run else None, "inputs": list(self.inputs),
                "producers": [p.as_dict() for p in self.producers]}


@dataclasses.dataclass(frozen=True)
class Impact:
    entity: str
    qualified_name: str
    datasets: tuple[dict[str, Any], ...]  # downstream: qualifiedName, type, owner
    jobs: tuple[Dependency, ...]  # the operations reading the entity or a downstream dataset
    truncated: bool

    def as_dict(self) -> dict[str, Any]:
        shown = {"entity": self.entity, "qualifiedName": self.qualified_name, "datasets": list(self.datasets),
                 "jobs": [j.as_dict() for j in self.jobs]}
        if self.truncated:
            shown["truncated"] = True
        return shown

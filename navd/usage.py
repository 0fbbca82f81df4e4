"""Usage, unused tables, job dependencies and impact (issue 23), read from executions' DATA_FLOW.

An execution that reads a dataset (DATA_FLOW dataset -> execution) is one read on the day it
started; one that writes it (DATA_FLOW execution -> dataset) one write. A table is read also
through its directory (LOGICAL_PHYSICAL table -> directory: a job reading the files by path).
Column reads and writes are the column edges (DATA_FLOW / CONTROL_FLOW) whose `discriminator`
names the execution they were seen in.

Everything is streamed from Solr in batches of ids: what is held is bounded by the window asked
for (executions in the last N days), never by the size of the index or the history of a table.
The pure rules (days, windows, the order of results) are separate functions, tested alone.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from navd.index.client import SolrIndex, batches
from navd.index.documents import endpoint_field, property_field, solr_date
from navd.index.lineage_store import SolrLineageStore, terms_filter
from navd.index.query_syntax import escape, range_bound
from navd.lineage import LineageOptions
from navd.lineage import lineage as walk_lineage
from navd.model import ElementType, RelationType

_EXECUTION = ElementType.OPERATION_EXECUTION.value
_OPERATION = ElementType.OPERATION.value
_FIELD = ElementType.FIELD.value
_TABLES = (ElementType.TABLE.value, ElementType.VIEW.value)
_DATA_FLOW = RelationType.DATA_FLOW.value
_COLUMN_FLOWS = f"({RelationType.DATA_FLOW.value} OR {RelationType.CONTROL_FLOW.value})"
#: ids per terms filter / per request
_CHUNK = 1000
#: the fields of an execution a usage figure needs
_RUN_FIELDS = "identity,qualifiedName,originalName,principal,started,ended"
#: partitions shown per table (the newest by their directory's modification time)
DEFAULT_PARTITIONS = 50


# -- pure rules -------------------------------------------------------------------------------

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


# -- Solr reads shared by the commands --------------------------------------------------------

def _far_ends(index: SolrIndex, relation_type: str, near_end: int, ids: Sequence[str], *,
              far_type: str | None = None, far_types: Sequence[str] = ()) -> Iterator[tuple[str, str]]:
    """(near id, far id) of the relations of `relation_type` with `near_end` in `ids`, streamed."""
    far_end = 3 - near_end
    near_field, far_field = endpoint_field(near_end, "Id"), endpoint_field(far_end, "Id")
    filters = [f"type:{relation_type}"]
    if far_type is not None:
        filters.append(f"{endpoint_field(far_end, 'Type')}:{far_type}")
    if far_types:
        filters.append(f"{endpoint_field(far_end, 'Type')}:({' OR '.join(far_types)})")
    for chunk in batches(ids, _CHUNK):
        for doc in index.scan("relations", "*:*", fl=f"{near_field},{far_field}",
                              filters=[*filters, terms_filter(near_field, chunk)]):
            yield str(doc[near_field]), str(doc[far_field])


def _elements(index: SolrIndex, ids: Iterable[str], fl: str, filters: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    for chunk in batches(ids, _CHUNK):
        yield from index.scan("elements", "*:*", fl=fl, filters=[*filters, terms_filter("identity", chunk)])


def _physical(index: SolrIndex, ids: Sequence[str]) -> dict[str, str]:
    """{directory id: table id} for the tables among `ids` (LOGICAL_PHYSICAL table -> directory):
    a job reading a table's files by path uses the table."""
    return {far: near for near, far in _far_ends(index, RelationType.LOGICAL_PHYSICAL.value, 1, ids)}


def _runs(index: SolrIndex, execution_ids: Iterable[str]) -> Iterator[Run]:
    yield from (Run.from_doc(doc) for doc in _elements(index, execution_ids, _RUN_FIELDS, [f"type:{_EXECUTION}"]))


def _deduplicated(pairs: Iterable[tuple[str, str]], size: int = _CHUNK) -> Iterator[list[tuple[str, str]]]:
    """Batches of distinct pairs (distinct within a batch: a pair seen through a table and its
    directory is usually in the same batch; the windowed counts below dedupe across batches)."""
    for chunk in batches(pairs, size):
        yield list(dict.fromkeys(chunk))


def operations_of(index: SolrIndex, execution_ids: Sequence[str]) -> dict[str, str]:
    """{execution id: its operation's id}: an application run is an INSTANCE_OF its operation;
    a SQL execution inside it (PARENT_CHILD run -> execution) belongs to the run's operation."""
    parents = dict(_far_ends(index, RelationType.PARENT_CHILD.value, 2, execution_ids, far_type=_EXECUTION))
    runs = sorted({parents.get(e, e) for e in execution_ids})
    templates = dict(_far_ends(index, RelationType.INSTANCE_OF.value, 2, runs, far_type=_OPERATION))
    return {e: templates[parents.get(e, e)] for e in execution_ids if parents.get(e, e) in templates}


# -- usage --------------------------------------------------------------------------------------

@dataclasses.dataclass
class _Tally:
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


def _tally(index: SolrIndex, execution_ids: Iterable[str], since: str) -> _Tally:
    tally = _Tally(since)
    for chunk in batches(execution_ids, _CHUNK):
        for run in _runs(index, dict.fromkeys(chunk)):
            tally.add(run)
    return tally


def usage(index: SolrIndex, doc: Mapping[str, Any], *, days: int, now: datetime,
          partitions: int = DEFAULT_PARTITIONS) -> Usage:
    """Reads and writes per day in the last `days` days of the element `doc` (a table, view,
    directory, file or column), its last read and write, and when it was generated."""
    since = solr_date(window_start(now, days))
    identity, kind = str(doc["identity"]), str(doc.get("type"))
    if kind == _FIELD:
        reads = _column_tally(index, [identity], 1, since)
        writes = _column_tally(index, [identity], 2, since)
        columns: tuple[ColumnUsage, ...] = ()
        parts: tuple[PartitionGeneration, ...] = ()
    else:
        subjects = [identity, *(_physical(index, [identity]) if kind in _TABLES else {})]
        reads = _tally(index, (far for _, far in _far_ends(index, _DATA_FLOW, 1, subjects, far_type=_EXECUTION)),
                       since)
        writes = _tally(index, (far for _, far in _far_ends(index, _DATA_FLOW, 2, subjects, far_type=_EXECUTION)),
                        since)
        columns = _table_columns(index, identity, reads, writes) if kind in _TABLES else ()
        parts = _partitions(index, identity, writes, partitions) if kind in _TABLES else ()
    generated = writes.last_end
    return Usage(identity, str(doc.get("qualifiedName", "")), kind, days, since, sum(reads.by_day.values()),
                 sum(writes.by_day.values()), per_day(reads.by_day, writes.by_day), reads.last, writes.last,
                 generated.ended if generated else None, generated.execution if generated else None, columns, parts)


def _column_tally(index: SolrIndex, columns: Sequence[str], near_end: int, since: str) -> _Tally:
    """Reads (near_end 1) or writes (2) of columns: the executions their column edges name."""
    field = endpoint_field(near_end, "Id")
    names = (str(doc["discriminator"]) for chunk in batches(columns, _CHUNK)
             for doc in index.scan("relations", "*:*", fl="discriminator",
                                   filters=[f"type:{_COLUMN_FLOWS}", "discriminator:*", terms_filter(field, chunk)]))
    tally = _Tally(since)
    for chunk in batches(names, _CHUNK):
        for doc in index.scan("elements", "*:*", fl=_RUN_FIELDS,
                              filters=[f"type:{_EXECUTION}", terms_filter("qualifiedName", dict.fromkeys(chunk))]):
            tally.add(Run.from_doc(doc))
    return tally


def _table_columns(index: SolrIndex, table: str, reads: _Tally, writes: _Tally) -> tuple[ColumnUsage, ...]:
    """Per column of the table, its reads and writes by the executions in the window that read
    or wrote the table (a column edge names its execution: bounded by the window)."""
    columns = {doc["identity"]: str(doc.get("qualifiedName", "")) for doc in _elements(
        index, [far for _, far in _far_ends(index, RelationType.PARENT_CHILD.value, 1, [table], far_type=_FIELD)],
        "identity,qualifiedName")}
    counts: dict[str, dict[int, set[str]]] = {c: {1: set(), 2: set()} for c in columns}
    for near_end, tally in ((1, reads), (2, writes)):
        if not tally.in_window or not columns:
            continue
        field = endpoint_field(near_end, "Id")
        for names in batches(sorted(tally.in_window), _CHUNK):
            for chunk in batches(sorted(columns), _CHUNK):
                for doc in index.scan("relations", "*:*", fl=f"{field},discriminator", filters=[
                        f"type:{_COLUMN_FLOWS}", terms_filter(field, chunk), terms_filter("discriminator", names)]):
                    counts[str(doc[field])][near_end].add(str(doc["discriminator"]))
    out = []
    for column, sides in counts.items():
        last_read = max((reads.in_window[n] for n in sides[1]), default=None)
        last_write = max((writes.in_window[n] for n in sides[2]), default=None)
        out.append(ColumnUsage(columns[column], len(sides[1]), len(sides[2]), last_read, last_write))
    return tuple(sorted(out, key=lambda c: c.column))


def _partitions(index: SolrIndex, table: str, writes: _Tally, limit: int) -> tuple[PartitionGeneration, ...]:
    """The table's partitions (HMS) with when each was generated: the end of the execution in
    the window that wrote the table while the partition's directory changed (Spark's event log
    names the table, not the partitions written), else the directory's modification time
    (HDFS). The newest `limit`, by that time."""
    if limit <= 0:
        return ()
    partitions = [far for _, far in _far_ends(index, RelationType.PARENT_CHILD.value, 1, [table],
                                              far_type=ElementType.PARTITION.value)]
    newest: list[tuple[str, str, str]] = []  # a heap of (modified, partition id, directory id)
    for chunk in batches(partitions, _CHUNK):
        directories = dict(_far_ends(index, RelationType.LOGICAL_PHYSICAL.value, 1, chunk))
        by_directory = {d: p for p, d in directories.items()}
        for doc in _elements(index, by_directory, "identity,lastModified"):
            if doc.get("lastModified"):
                item = (str(doc["lastModified"]), by_directory[str(doc["identity"])], str(doc["identity"]))
                heapq.heappush(newest, item)
                if len(newest) > limit:
                    heapq.heappop(newest)
    if not newest:
        return ()
    names = {str(d["identity"]): str(d.get("qualifiedName", ""))
             for d in _elements(index, [p for _, p, _ in newest], "identity,qualifiedName")}
    writers = list(_runs_by_name(index, writes.in_window))
    out = []
    for modified, partition, _directory in sorted(newest, reverse=True):
        writer = next((r for r in sorted(writers, key=lambda r: r.ended or "", reverse=True)
                       if r.started and r.ended and r.started <= modified <= r.ended), None)
        out.append(PartitionGeneration(names.get(partition, partition), writer.ended if writer else modified,
                                       writer.execution if writer else None, modified))
    return tuple(out)


def _runs_by_name(index: SolrIndex, names: Iterable[str]) -> Iterator[Run]:
    for chunk in batches(names, _CHUNK):
        for doc in index.scan("elements", "*:*", fl=_RUN_FIELDS,
                              filters=[f"type:{_EXECUTION}", terms_filter("qualifiedName", chunk)]):
            yield Run.from_doc(doc)


# -- unused -------------------------------------------------------------------------------------

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


#: the tables scanned per step of `unused`: one page of tables, their readers in a few requests
_TABLE_PAGE = 500
_TABLE_FIELDS = f"identity,qualifiedName,owner,fileSystemPath,created,{property_field('tblproperty.totalSize')}," \
                f"{property_field('tblproperty.spark.sql.statistics.totalSize')}"


def unused(index: SolrIndex, *, days: int, now: datetime, database: str | None = None,
           after: str | None = None) -> Iterator[UnusedTable]:
    """The tables (not deleted) that no execution read in the last `days` days, directly or
    through their directory, streamed a page of tables at a time in identity order: held at
    once are one page of tables and a batch of their readers, whatever the index's size.
    `after`: only tables whose identity sorts after it (the API's cursor)."""
    since = solr_date(window_start(now, days))
    filters = [f"type:{ElementType.TABLE.value}", "-deleted:true"]
    if after:
        filters.append(f"identity:{{{range_bound(after)} TO *]")
    if database:
        filters.append(f"qualifiedName:{escape(database.lower())}.*")
    for page in batches(index.scan("elements", "*:*", fl=_TABLE_FIELDS, filters=filters), _TABLE_PAGE):
        tables = {str(doc["identity"]): doc for doc in page}
        subject_of = {t: t for t in tables} | _physical(index, list(tables))
        used: set[str] = set()
        last_read: dict[str, str] = {}
        readers = _far_ends(index, _DATA_FLOW, 1, list(subject_of), far_type=_EXECUTION)
        for pairs in _deduplicated(((subject_of[s], e) for s, e in readers)):
            pairs = [(t, e) for t, e in pairs if t not in used]  # a used table needs no more reads
            started = {str(d["identity"]): str(d["started"]) for d in _elements(
                index, {e for _, e in pairs}, "identity,started", [f"type:{_EXECUTION}", "started:*"])}
            for table, execution in pairs:
                when = started.get(execution)
                if when is None:
                    continue
                if when >= since:
                    used.add(table)
                last_read[table] = latest(last_read.get(table), when) or when
        unread = [t for t in tables if t not in used]
        directory_of = {subject_of[d]: d for d in subject_of if subject_of[d] != d}
        directories = {str(d["identity"]): str(d["qualifiedName"]) for d in _elements(
            index, [directory_of[t] for t in unread if t in directory_of], "identity,qualifiedName")}
        for identity in unread:
            doc = tables[identity]
            yield UnusedTable(str(doc.get("qualifiedName", "")), identity, doc.get("owner"),
                              _size(index, doc, directories.get(directory_of.get(identity, ""))),
                              doc.get("fileSystemPath"), doc.get("created"), last_read.get(identity))


def _size(index: SolrIndex, table: Mapping[str, Any], directory: str | None) -> int | None:
    """The bytes of the files under the table's directory (its LOGICAL_PHYSICAL end, by
    qualifiedName) that the HDFS extractor indexed, one stats request; else what Hive's
    statistics say."""
    if directory:
        body = index.search("elements", "*:*", rows=0, filters=[
            f"type:{ElementType.FILE.value}", "-deleted:true", f"qualifiedName:{escape(directory)}/*"],
            params={"stats": "true", "stats.field": "size"})
        stats = body.get("stats", {}).get("stats_fields", {}).get("size") or {}
        if stats.get("count"):
            return int(stats["sum"])
    for key in ("tblproperty.totalSize", "tblproperty.spark.sql.statistics.totalSize"):
        value = table.get(property_field(key))
        if value is not None and str(value).isdigit():
            return int(value)
    return None


# -- deps and impact ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Dependency:
    operation: str  # identity
    qualified_name: str
    name: str
    datasets: tuple[str, ...]  # qualifiedNames: what it produces that the job reads (or, impact: reads)
    last_run: Run | None  # deps: its last run writing them; impact: its last run reading them
    users: tuple[str, ...] = ()  # impact: who ran the reading executions

    def as_dict(self) -> dict[str, Any]:
        shown = {"operation": self.operation, "qualifiedName": self.qualified_name, "name": self.name,
                 "datasets": list(self.datasets), "lastRun": self.last_run.as_dict() if self.last_run else None}
        if self.users:
            shown["users"] = list(self.users)
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


def operation_of_element(index: SolrIndex, doc: Mapping[str, Any]) -> str | None:
    """The operation an element stands for: itself, or an execution's operation."""
    if doc.get("type") == _OPERATION:
        return str(doc["identity"])
    if doc.get("type") == _EXECUTION:
        return operations_of(index, [str(doc["identity"])]).get(str(doc["identity"]))
    return None


def _last_run(index: SolrIndex, operation: str) -> Run | None:
    """The operation's newest run by start time."""
    runs = [far for _, far in _far_ends(index, RelationType.INSTANCE_OF.value, 1, [operation])]
    best: Run | None = None
    for chunk in batches(runs, _CHUNK):
        body = index.search("elements", "*:*", rows=1, sort="started desc, identity asc", fl=_RUN_FIELDS,
                            filters=[f"type:{_EXECUTION}", terms_filter("identity", chunk)])
        for doc in body["response"]["docs"]:
            run = Run.from_doc(doc)
            if best is None or (run.started or "") > (best.started or ""):
                best = run
    return best


def _with_children(index: SolrIndex, run: str) -> list[str]:
    return [run, *(far for _, far in _far_ends(index, RelationType.PARENT_CHILD.value, 1, [run], far_type=_EXECUTION))]


def _aggregate(index: SolrIndex, pairs: Iterable[tuple[str, str]], names: Mapping[str, str],
               ) -> dict[str, tuple[set[str], Run | None, set[str]]]:
    """{operation: (dataset names, its latest run by end time, users)} over (dataset, execution)
    pairs, streamed in batches (held: one batch and one entry per operation)."""
    found: dict[str, tuple[set[str], Run | None, set[str]]] = {}
    for chunk in _deduplicated(pairs):
        executions = sorted({e for _, e in chunk})
        operation = operations_of(index, executions)
        runs = {run.execution: run for run in _runs(index, executions)}
        for dataset, execution in chunk:
            if execution not in operation:
                continue
            datasets, best, users = found.setdefault(operation[execution], (set(), None, set()))
            datasets.add(names.get(dataset, dataset))
            run = runs.get(execution)
            if run is not None:
                if run.user:
                    users.add(run.user)
                if best is None or (run.ended or run.started or "") > (best.ended or best.started or ""):
                    found[operation[execution]] = (datasets, run, users)
    return found


def _dependencies(index: SolrIndex, found: Mapping[str, tuple[set[str], Run | None, set[str]]],
                  with_users: bool) -> tuple[Dependency, ...]:
    docs = {str(d["identity"]): d for d in _elements(index, found, "identity,qualifiedName,originalName")}
    out = [Dependency(op, str(docs.get(op, {}).get("qualifiedName", op)), str(docs.get(op, {}).get("originalName", "")),
                      tuple(sorted(datasets)), run, tuple(sorted(users)) if with_users else ())
           for op, (datasets, run, users) in found.items()]
    return tuple(sorted(out, key=lambda d: d.qualified_name))


def deps(index: SolrIndex, doc: Mapping[str, Any]) -> Deps:
    """The operations that produce the inputs of the job `doc` (an operation or one of its
    executions) read in its last run, with the last run of each that wrote them."""
    operation = operation_of_element(index, doc)
    if operation is None:
        raise ValueError(f"{doc.get('qualifiedName')} is a {doc.get('type')}, not an operation or an execution")
    run = _last_run(index, operation) if doc.get("type") == _OPERATION else None
    executions = _with_children(index, run.execution if run else str(doc["identity"]))
    inputs = sorted({far for _, far in _far_ends(index, _DATA_FLOW, 2, executions)} - set(executions))
    subjects = {i: i for i in inputs} | _physical(index, inputs)
    # a directory read by path is produced by whoever writes its table too
    subjects |= _physical_reverse(index, inputs)
    names = {str(d["identity"]): str(d.get("qualifiedName", "")) for d in _elements(
        index, list(dict.fromkeys([*inputs, *subjects.values()])), "identity,qualifiedName")}
    writers = ((subjects[s], e) for s, e in _far_ends(index, _DATA_FLOW, 2, list(subjects), far_type=_EXECUTION))
    found = _aggregate(index, writers, names)
    found.pop(operation, None)  # a job that reads what it writes does not depend on itself
    job = next(_elements(index, [operation], "identity,qualifiedName"), {"qualifiedName": operation})
    return Deps(operation, str(job.get("qualifiedName", "")), run, tuple(sorted(names.get(i, i) for i in inputs)),
                _dependencies(index, found, with_users=False))


def _physical_reverse(index: SolrIndex, ids: Sequence[str]) -> dict[str, str]:
    """{table id: directory id} for the directories among `ids` that back a table."""
    return {far: near for near, far in _far_ends(index, RelationType.LOGICAL_PHYSICAL.value, 2, ids)}


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


def impact(index: SolrIndex, doc: Mapping[str, Any], *, depth: int = 5, max_nodes: int = 3000) -> Impact:
    """What a change to `doc` reaches: its downstream datasets (the lineage walk), the jobs that
    read it or them, their users and the datasets' owners."""
    root = str(doc["identity"])
    options = LineageOptions(direction="downstream", depth=depth, columns=doc.get("type") == _FIELD,
                             max_nodes=max_nodes)
    graph = walk_lineage(SolrLineageStore(index, known=[doc]), root, options)
    downstream = [n for n in graph.nodes if n.id != root and n.indexed]
    owners = {str(d["identity"]): d.get("owner") for d in _elements(index, [n.id for n in downstream], "identity,owner")}
    datasets = tuple({"identity": n.id, "qualifiedName": n.qualified_name, "type": n.type, "owner": owners.get(n.id)}
                     for n in sorted(downstream, key=lambda n: n.qualified_name))
    read = [root, *(n.id for n in downstream if n.type != _FIELD)]
    if doc.get("type") == _FIELD:  # columns are read by the jobs reading their tables
        read = [n.parent for n in graph.nodes if n.parent] or read
    names = {root: str(doc.get("qualifiedName", ""))} | {n.id: n.qualified_name for n in graph.nodes}
    subjects = {i: i for i in read} | _physical(index, read)
    readers = ((subjects[s], e) for s, e in _far_ends(index, _DATA_FLOW, 1, list(subjects), far_type=_EXECUTION))
    found = _aggregate(index, readers, names)
    return Impact(root, str(doc.get("qualifiedName", "")), datasets, _dependencies(index, found, with_users=True),
                  graph.truncated)

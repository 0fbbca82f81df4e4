"""Usage, unused tables, job dependencies and impact, as `navd usage/unused/deps/impact` and
their API routes ask for them: names resolved (navd/index/lookup.py), the figures built from
executions' DATA_FLOW read through navd/usage/store.py, by the rules of navd/usage/rules.py."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from navd.errors import UsageError
from navd.index.client import SolrIndex, batches
from navd.index.documents import solr_date
from navd.index.lookup import Scope, resolve_one
from navd.lineage.rules import LineageOptions
from navd.lineage.rules import lineage as walk_lineage
from navd.lineage.schedulers import scheduler_relations, workflows_by_execution
from navd.lineage.store import SolrLineageStore
from navd.model import ElementType
from navd.names import shown
from navd.usage import store
from navd.usage.rules import (
    ColumnUsage,
    Dependency,
    Deps,
    Impact,
    PartitionGeneration,
    Run,
    Tally,
    UnusedTable,
    Usage,
    latest,
    per_day,
    window_start,
)

_FIELD = ElementType.FIELD.value
_TABLES = (ElementType.TABLE.value, ElementType.VIEW.value)
#: partitions shown per table (the newest by their directory's modification time)
DEFAULT_PARTITIONS = 50
#: the tables scanned per step of `unused`: one page of tables, their readers in a few requests
_TABLE_PAGE = 500


# -- what the CLI and the server call ---------------------------------------------------------

def usage(index: SolrIndex, entity: str, scope: Scope = Scope(), *, days: int = 30,
          now: datetime | None = None) -> Usage:
    """Reads and writes per day of a table, directory, file or column in the last `days` days,
    its last read and write and when it was generated."""
    _check_days(days)
    return usage_of(index, resolve_one(index, entity, scope), days=days, now=now or datetime.now(UTC))


def unused(index: SolrIndex, *, days: int = 30, database: str | None = None, after: str | None = None,
           now: datetime | None = None) -> Iterator[UnusedTable]:
    """The tables no execution read in the last `days` days (in `database`), streamed in
    identity order (`after`: from the table after that identity)."""
    _check_days(days)
    return unused_tables(index, days=days, database=database, after=after, now=now or datetime.now(UTC))


def deps(index: SolrIndex, job: str, scope: Scope = Scope()) -> Deps:
    """The operations producing what the job (an operation or an execution) read in its last run."""
    doc = resolve_one(index, job, scope)
    if doc.get("type") not in (store.OPERATION, store.EXECUTION):
        raise UsageError(f"job: {shown(job)} is a {doc.get('type')}, not an operation or an execution")
    return deps_of(index, doc)


def impact(index: SolrIndex, entity: str, scope: Scope = Scope(), *, depth: int = 5,
           max_nodes: int = 3000) -> Impact:
    """The downstream datasets of `entity`, the jobs reading it or them, their users and owners."""
    return impact_of(index, resolve_one(index, entity, scope), depth=depth, max_nodes=max_nodes)


def _deduplicated(pairs: Iterable[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
    """Batches of distinct pairs (distinct within a batch: a pair seen through a table and its
    directory is usually in the same batch; the windowed counts dedupe across batches)."""
    for chunk in batches(pairs, store.CHUNK):
        yield list(dict.fromkeys(chunk))


def _check_days(days: int) -> None:
    if days < 1:
        raise UsageError(f"days: {days} is not a number of days >= 1")


# -- usage --------------------------------------------------------------------------------------

def _tally(index: SolrIndex, execution_ids: Iterable[str], since: str) -> Tally:
    tally = Tally(since)
    for chunk in batches(execution_ids, store.CHUNK):
        for run in store.runs(index, dict.fromkeys(chunk)):
            tally.add(run)
    return tally


def usage_of(index: SolrIndex, doc: Mapping[str, Any], *, days: int, now: datetime,
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
        subjects = [identity, *(store.physical(index, [identity]) if kind in _TABLES else {})]
        reads = _tally(index, (far for _, far in store.readers(index, subjects)), since)
        writes = _tally(index, (far for _, far in store.writers(index, subjects)), since)
        columns = _table_columns(index, identity, reads, writes) if kind in _TABLES else ()
        parts = _partitions(index, identity, writes, partitions) if kind in _TABLES else ()
    generated = writes.last_end
    return Usage(identity, str(doc.get("qualifiedName", "")), kind, days, since, sum(reads.by_day.values()),
                 sum(writes.by_day.values()), per_day(reads.by_day, writes.by_day), reads.last, writes.last,
                 generated.ended if generated else None, generated.execution if generated else None, columns, parts)


def _column_tally(index: SolrIndex, columns: Sequence[str], near_end: int, since: str) -> Tally:
    """Reads (near_end 1) or writes (2) of columns: the executions their column edges name."""
    tally = Tally(since)
    for run in store.runs_by_name(index, store.column_run_names(index, columns, near_end)):
        tally.add(run)
    return tally


def _table_columns(index: SolrIndex, table: str, reads: Tally, writes: Tally) -> tuple[ColumnUsage, ...]:
    """Per column of the table, its reads and writes by the executions in the window that read
    or wrote the table (a column edge names its execution: bounded by the window)."""
    columns = {doc["identity"]: str(doc.get("qualifiedName", "")) for doc in store.elements(
        index, store.children(index, table, _FIELD), "identity,qualifiedName")}
    counts: dict[str, dict[int, set[str]]] = {c: {1: set(), 2: set()} for c in columns}
    for near_end, tally in ((1, reads), (2, writes)):
        if not tally.in_window or not columns:
            continue
        for column, run_name in store.column_runs(index, list(columns), near_end, list(tally.in_window)):
            counts[column][near_end].add(run_name)
    out = []
    for column, sides in counts.items():
        last_read = max((reads.in_window[n] for n in sides[1]), default=None)
        last_write = max((writes.in_window[n] for n in sides[2]), default=None)
        out.append(ColumnUsage(columns[column], len(sides[1]), len(sides[2]), last_read, last_write))
    return tuple(sorted(out, key=lambda c: c.column))


def _partitions(index: SolrIndex, table: str, writes: Tally, limit: int) -> tuple[PartitionGeneration, ...]:
    """The table's partitions (HMS) with when each was generated: the end of the execution in
    the window that wrote the table while the partition's directory changed (Spark's event log
    names the table, not the partitions written), else the directory's modification time
    (HDFS). The newest `limit`, by that time."""
    if limit <= 0:
        return ()
    partitions = store.children(index, table, ElementType.PARTITION.value)
    newest: list[tuple[str, str, str]] = []  # a heap of (modified, partition id, directory id)
    for chunk in batches(partitions, store.CHUNK):
        by_directory = {d: p for p, d in store.directories(index, chunk).items()}
        for doc in store.elements(index, by_directory, "identity,lastModified"):
            if doc.get("lastModified"):
                item = (str(doc["lastModified"]), by_directory[str(doc["identity"])], str(doc["identity"]))
                heapq.heappush(newest, item)
                if len(newest) > limit:
                    heapq.heappop(newest)
    if not newest:
        return ()
    names = {str(d["identity"]): str(d.get("qualifiedName", ""))
             for d in store.elements(index, [p for _, p, _ in newest], "identity,qualifiedName")}
    writers = list(store.runs_by_name(index, writes.in_window))
    out = []
    for modified, partition, _directory in sorted(newest, reverse=True):
        writer = next((r for r in sorted(writers, key=lambda r: r.ended or "", reverse=True)
                       if r.started and r.ended and r.started <= modified <= r.ended), None)
        out.append(PartitionGeneration(names.get(partition, partition), writer.ended if writer else modified,
                                       writer.execution if writer else None, modified))
    return tuple(out)


# -- unused -------------------------------------------------------------------------------------

def unused_tables(index: SolrIndex, *, days: int, now: datetime, database: str | None = None,
                  after: str | None = None) -> Iterator[UnusedTable]:
    """The tables (not deleted) that no execution read in the last `days` days, directly or
    through their directory, streamed a page of tables at a time in identity order: held at
    once are one page of tables and a batch of their readers, whatever the index's size.
    `after`: only tables whose identity sorts after it (the API's cursor)."""
    since = solr_date(window_start(now, days))
    for page in batches(store.tables(index, database=database, after=after), _TABLE_PAGE):
        tables = {str(doc["identity"]): doc for doc in page}
        subject_of = {t: t for t in tables} | store.physical(index, list(tables))
        used: set[str] = set()
        last_read: dict[str, str] = {}
        readers = store.readers(index, list(subject_of))
        for pairs in _deduplicated((subject_of[s], e) for s, e in readers):
            pairs = [(t, e) for t, e in pairs if t not in used]  # a used table needs no more reads
            started = store.started(index, {e for _, e in pairs})
            for table, execution in pairs:
                when = started.get(execution)
                if when is None:
                    continue
                if when >= since:
                    used.add(table)
                last_read[table] = latest(last_read.get(table), when) or when
        unread = [t for t in tables if t not in used]
        directory_of = {subject_of[d]: d for d in subject_of if subject_of[d] != d}
        directories = {str(d["identity"]): str(d["qualifiedName"]) for d in store.elements(
            index, [directory_of[t] for t in unread if t in directory_of], "identity,qualifiedName")}
        for identity in unread:
            doc = tables[identity]
            yield UnusedTable(str(doc.get("qualifiedName", "")), identity, doc.get("owner"),
                              store.table_size(index, doc, directories.get(directory_of.get(identity, ""))),
                              doc.get("fileSystemPath"), doc.get("created"), last_read.get(identity))


# -- deps and impact ----------------------------------------------------------------------------

def operation_of_element(index: SolrIndex, doc: Mapping[str, Any]) -> str | None:
    """The operation an element stands for: itself, or an execution's operation."""
    if doc.get("type") == store.OPERATION:
        return str(doc["identity"])
    if doc.get("type") == store.EXECUTION:
        return store.operations_of(index, [str(doc["identity"])]).get(str(doc["identity"]))
    return None


def _aggregate(index: SolrIndex, pairs: Iterable[tuple[str, str]], names: Mapping[str, str],
               ) -> dict[str, tuple[set[str], Run | None, set[str]]]:
    """{operation: (dataset names, its latest run by end time, users)} over (dataset, execution)
    pairs, streamed in batches (held: one batch and one entry per operation)."""
    found: dict[str, tuple[set[str], Run | None, set[str]]] = {}
    for chunk in _deduplicated(pairs):
        executions = sorted({e for _, e in chunk})
        operation = store.operations_of(index, executions)
        runs = {run.execution: run for run in store.runs(index, executions)}
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
    docs = {str(d["identity"]): d for d in store.elements(index, found, "identity,qualifiedName,originalName")}
    last_runs = sorted({run.execution for _, run, _ in found.values() if run is not None})
    # the Oozie workflows that started each last run (a few requests for all of them)
    workflows = workflows_by_execution(scheduler_relations(SolrLineageStore(index), last_runs), last_runs)
    out = [Dependency(op, str(docs.get(op, {}).get("qualifiedName", op)), str(docs.get(op, {}).get("originalName", "")),
                      tuple(sorted(datasets)), run, tuple(sorted(users)) if with_users else (),
                      workflows.get(run.execution, ()) if run is not None else ())
           for op, (datasets, run, users) in found.items()]
    return tuple(sorted(out, key=lambda d: d.qualified_name))


def deps_of(index: SolrIndex, doc: Mapping[str, Any]) -> Deps:
    """The operations that produce the inputs of the job `doc` (an operation or one of its
    executions) read in its last run, with the last run of each that wrote them."""
    operation = operation_of_element(index, doc)
    if operation is None:
        raise ValueError(f"{doc.get('qualifiedName')} is a {doc.get('type')}, not an operation or an execution")
    run = store.last_run(index, operation) if doc.get("type") == store.OPERATION else None
    job_run = run.execution if run else str(doc["identity"])
    executions = [job_run, *store.children(index, job_run, store.EXECUTION)]
    inputs = sorted(store.inputs(index, executions) - set(executions))
    subjects = {i: i for i in inputs} | store.physical(index, inputs)
    # a directory read by path is produced by whoever writes its table too
    subjects |= store.physical_reverse(index, inputs)
    names = {str(d["identity"]): str(d.get("qualifiedName", "")) for d in store.elements(
        index, list(dict.fromkeys([*inputs, *subjects.values()])), "identity,qualifiedName")}
    writers = ((subjects[s], e) for s, e in store.writers(index, list(subjects)))
    found = _aggregate(index, writers, names)
    found.pop(operation, None)  # a job that reads what it writes does not depend on itself
    job = next(store.elements(index, [operation], "identity,qualifiedName"), {"qualifiedName": operation})
    return Deps(operation, str(job.get("qualifiedName", "")), run, tuple(sorted(names.get(i, i) for i in inputs)),
                _dependencies(index, found, with_users=False))


def impact_of(index: SolrIndex, doc: Mapping[str, Any], *, depth: int = 5, max_nodes: int = 3000) -> Impact:
    """What a change to `doc` reaches: its downstream datasets (the lineage walk), the jobs that
    read it or them, their users and the datasets' owners."""
    root = str(doc["identity"])
    options = LineageOptions(direction="downstream", depth=depth, columns=doc.get("type") == _FIELD,
                             max_nodes=max_nodes)
    graph = walk_lineage(SolrLineageStore(index, known=[doc]), root, options)
    downstream = [n for n in graph.nodes if n.id != root and n.indexed]
    owners = {str(d["identity"]): d.get("owner")
              for d in store.elements(index, [n.id for n in downstream], "identity,owner")}
    datasets = tuple({"identity": n.id, "qualifiedName": n.qualified_name, "type": n.type, "owner": owners.get(n.id)}
                     for n in sorted(downstream, key=lambda n: n.qualified_name))
    read = [root, *(n.id for n in downstream if n.type != _FIELD)]
    if doc.get("type") == _FIELD:  # columns are read by the jobs reading their tables
        read = [n.parent for n in graph.nodes if n.parent] or read
    names = {root: str(doc.get("qualifiedName", ""))} | {n.id: n.qualified_name for n in graph.nodes}
    subjects = {i: i for i in read} | store.physical(index, read)
    readers = ((subjects[s], e) for s, e in store.readers(index, list(subjects)))
    found = _aggregate(index, readers, names)
    return Impact(root, str(doc.get("qualifiedName", "")), datasets, _dependencies(index, found, with_users=True),
                  graph.truncated)

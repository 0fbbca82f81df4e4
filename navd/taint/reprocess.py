"""The reprocess plan: what to redo downstream of a taint (the pure rules are
navd/taint/rules.py; what the walk reads of Solr, navd/taint/store.py).

The walk goes downstream dataset by dataset, one level at a time: the level's touched
partitions (and the datasets' own table and directory, which whole-dataset readers read) -> the
executions reading them (DATA_FLOW, one request per level) -> what those executions wrote -> the
datasets those outputs belong to. Each downstream dataset takes the union of its upstreams'
periods, converted to its own partitions, and is walked again if that union grew (a dataset
reached by two paths of different lengths). Only the touched partitions of each dataset are
kept in memory, never a whole table's partition list or the lineage graph (a dataset's
partition list is streamed once per visit and filtered by period as it goes: the periods come
from the names, which Solr cannot read as times).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from navd.errors import UsageError
from navd.index.client import SolrIndex
from navd.model import ElementType
from navd.taint.rules import (
    Period,
    Periods,
    converted,
    dataset_of,
    dependency_order,
    element_path,
    iso,
    leaves,
    partition_period,
    split_partition_path,
)
from navd.taint.store import MEMBER_FIELDS, RUN_FIELDS, ReprocessReads, shown_time

_TABLE = ElementType.TABLE.value


@dataclasses.dataclass(frozen=True)
class Partition:
    name: str  # below its dataset: `dt=2026-11-01/hr=05`
    period: Period | None
    run: str | None  # the last execution that wrote it; None: no recorded writer

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"partition": self.name, "run": self.run}
        if self.period is not None:
            shown.update({"from": iso(self.period.start), "to": iso(self.period.end),
                          "granularity": self.period.granularity})
        return shown


@dataclasses.dataclass(frozen=True)
class Dataset:
    name: str  # its table's qualifiedName, else its directory
    path: str
    identity: str | None  # the table's (else the directory's) element
    tainted: bool  # the dataset the taint is on (its partitions are the tainted ones)
    periods: Periods
    partitions: tuple[Partition, ...]
    upstream: tuple[str, ...]  # names
    runs: tuple[str, ...]  # for a dataset with no partitions: its last writer

    def as_dict(self) -> dict[str, Any]:
        return {"dataset": self.name, "path": self.path, "identity": self.identity,
                "role": "tainted" if self.tainted else "affected", "periods": self.periods.as_list(),
                "upstream": list(self.upstream), "partitions": [p.as_dict() for p in self.partitions],
                "runs": list(self.runs)}


@dataclasses.dataclass(frozen=True)
class Rerun:
    identity: str
    qualified_name: str
    name: str
    started: str | None
    ended: str | None
    dataset: str
    partitions: tuple[str, ...]
    period: tuple[str, str] | None  # the data period it rebuilds

    def as_dict(self) -> dict[str, Any]:
        return {"run": self.identity, "qualifiedName": self.qualified_name, "name": self.name,
                "started": self.started, "ended": self.ended, "dataset": self.dataset,
                "partitions": list(self.partitions),
                "from": self.period[0] if self.period else None, "to": self.period[1] if self.period else None}


@dataclasses.dataclass(frozen=True)
class Plan:
    root: str
    periods: Periods
    datasets: tuple[Dataset, ...]  # dependency order, the tainted one first
    runs: tuple[Rerun, ...]  # in the order to run them
    truncated: bool = False

    def as_dict(self) -> dict[str, Any]:
        shown = {"root": self.root, "periods": self.periods.as_list(),
                 "datasets": [d.as_dict() for d in self.datasets], "runs": [r.as_dict() for r in self.runs]}
        if self.truncated:
            shown["truncated"] = True
        return shown


@dataclasses.dataclass
class _Member:
    ids: list[str]
    period: Period | None


@dataclasses.dataclass
class _State:
    incoming: Periods
    upstream: set[str] = dataclasses.field(default_factory=set)
    name: str = ""
    identity: str | None = None
    roots: list[str] = dataclasses.field(default_factory=list)
    periods: Periods = dataclasses.field(default_factory=Periods)
    partitions: dict[str, _Member] = dataclasses.field(default_factory=dict)  # path -> member
    touched: list[str] = dataclasses.field(default_factory=list)
    scanned: bool = False


def reprocess(index: SolrIndex, root: Mapping[str, Any], periods: Periods, *, max_datasets: int = 500,
              max_levels: int = 50) -> Plan:
    """The datasets downstream of `root` (an element: table, directory, partition) touched by a
    taint of `periods`, in dependency order, with their touched partitions and the runs to redo."""
    root_path, spec = dataset_of(root)
    if root_path is None:
        raise UsageError(f"reprocess: {root.get('qualifiedName')} is a {root.get('type')} with no file system "
                         "path: navd cannot tell its partitions (name a table, a directory or a partition)")
    if periods.everything and spec:
        own = partition_period(spec)
        if own is not None:
            periods = Periods([(own.start, own.end)])
    reads = ReprocessReads(index)
    states: dict[str, _State] = {root_path: _State(periods)}
    order = [root_path]
    edges: set[tuple[str, str]] = set()
    pending = [root_path]
    truncated = False
    for _level in range(max_levels):
        if not pending:
            break
        touched: dict[str, str] = {}  # element id -> its dataset path
        for path in pending:
            state = states[path]
            _scan_dataset(reads, path, state)
            touched.update((i, path) for i in state.touched)
        pending = []
        readers: dict[str, set[str]] = defaultdict(set)  # execution -> datasets it read
        for element, execution in reads.readers(tuple(touched)):
            readers[execution].add(touched[element])
        outputs: dict[str, set[str]] = defaultdict(set)  # output element -> datasets upstream of it
        for execution, output in reads.outputs(tuple(readers)):
            outputs[output] |= readers[execution]
        for doc in reads.documents(outputs, MEMBER_FIELDS):
            path, _ = dataset_of(doc)
            if path is None:
                continue
            for upstream in outputs[str(doc["identity"])]:
                edges.add((upstream, path))
                if path == root_path:
                    continue  # a job rewriting the tainted dataset: its taint is the given one
                state = states.get(path)
                if state is None:
                    if len(states) >= max_datasets:
                        truncated = True
                        continue
                    state = states[path] = _State(Periods())
                    order.append(path)
                state.upstream.add(upstream)
                grown = state.incoming.union(states[upstream].periods)
                if grown != state.incoming or not state.scanned:
                    state.incoming = grown
                    if path not in pending:
                        pending.append(path)
    else:
        truncated = truncated or bool(pending)
    return _plan(reads, root, root_path, periods, states, dependency_order(order, edges), truncated)


def _scan_dataset(reads: ReprocessReads, path: str, state: _State) -> None:
    """The dataset's own elements and its partitions touched by `state.incoming`, streamed."""
    lower = path.lower()
    state.roots = []
    for doc in reads.dataset_roots(path):
        state.roots.append(str(doc["identity"]))
        if doc.get("type") == _TABLE or not state.name:
            state.name = str(doc.get("qualifiedName") or path)
            state.identity = str(doc["identity"])
    state.name = state.name or path
    kept: dict[str, _Member] = {}
    for doc in reads.dataset_members(path):
        member_path = element_path(doc)
        if member_path is None:
            continue
        dataset, spec = split_partition_path(member_path)
        if dataset.lower() != lower or not spec:
            continue  # below the dataset but no partition of it (a `_temporary` directory, ...)
        period = partition_period(spec)
        if not state.incoming.covers(period):
            continue
        key = member_path[len(path) + 1:].lower()
        kept.setdefault(key, _Member([], period)).ids.append(str(doc["identity"]))
    partitions = leaves(kept)
    state.periods = converted((kept[p].period for p in partitions), state.incoming)
    state.partitions = {p: kept[p] for p in partitions if state.periods.covers(kept[p].period)}
    state.touched = state.roots + [i for key, member in kept.items() if state.periods.covers(member.period)
                                   for i in member.ids]
    state.scanned = True


def _plan(reads: ReprocessReads, root: Mapping[str, Any], root_path: str, periods: Periods, states: dict[str, _State],
          order: list[str], truncated: bool) -> Plan:
    downstream = [p for p in order if p != root_path]
    wanted: list[str] = []
    for path in downstream:
        state = states[path]
        wanted += [i for member in state.partitions.values() for i in member.ids] or state.roots
    writers = reads.writers(wanted)
    runs = {str(d["identity"]): d for d in reads.documents({w for ws in writers.values() for w in ws}, RUN_FIELDS)}

    def last(ids: Iterable[str]) -> str | None:
        candidates = [runs[w] for i in ids for w in writers.get(i, ()) if w in runs]
        if not candidates:
            return None
        return str(max(candidates, key=lambda d: (str(d.get("started", "")), str(d["identity"])))["identity"])

    datasets: list[Dataset] = []
    reruns: dict[str, dict[str, Any]] = {}
    for path in order:
        state = states[path]
        is_root = path == root_path
        partitions = []
        for key in sorted(state.partitions, key=lambda k: (state.partitions[k].period or Period(_EPOCH, _EPOCH), k)):
            member = state.partitions[key]
            run = None if is_root else last(member.ids)
            partitions.append(Partition(key, member.period, run))
            if run is not None:
                _add_rerun(reruns, run, state.name, key, member.period)
        whole: tuple[str, ...] = ()
        if not is_root and not state.partitions:
            run = last(state.roots)
            if run is not None:
                whole = (run,)
                _add_rerun(reruns, run, state.name, None, None)
        datasets.append(Dataset(state.name, path, state.identity, is_root, state.periods, tuple(partitions),
                                tuple(sorted(states[u].name for u in state.upstream)), whole))
    shown = [Rerun(run, str(runs[run].get("qualifiedName", "")), str(runs[run].get("originalName", "")),
                   shown_time(runs[run].get("started")), shown_time(runs[run].get("ended")), info["dataset"],
                   tuple(info["partitions"]),
                   (iso(min(info["starts"])), iso(max(info["ends"]))) if info["starts"] else None)
             for run, info in reruns.items()]
    return Plan(str(root.get("qualifiedName", "")), periods, tuple(datasets), tuple(shown), truncated)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _add_rerun(reruns: dict[str, dict[str, Any]], run: str, dataset: str, partition: str | None,
               period: Period | None) -> None:
    info = reruns.setdefault(run, {"dataset": dataset, "partitions": [], "starts": [], "ends": []})
    if partition is not None:
        info["partitions"].append(partition)
    if period is not None:
        info["starts"].append(period.start)
        info["ends"].append(period.end)



__all__ = ["Dataset", "Partition", "Plan", "Rerun", "reprocess"]

"""Taints and the reprocess plan on Solr (issue 23; the pure rules are navd/taint.py).

A taint is navd's own record in the runs core (kind TAINT), never a field of an element: the
extractors rewrite element documents whole on every run, so a mark put there would be gone at
the next extraction. `navd entity` and the lineage page read the records (there are few: people
make them) and show them on the elements they cover.

The reprocess walk goes downstream dataset by dataset, one level at a time: the level's touched
partitions (and the datasets' own table and directory, which whole-dataset readers read) -> the
executions reading them (DATA_FLOW, one request per level through SolrLineageStore.related) ->
what those executions wrote -> the datasets those outputs belong to. Each downstream dataset
takes the union of its upstreams' periods, converted to its own partitions (navd/taint.py), and
is walked again if that union grew (a dataset reached by two paths of different lengths). Only
the touched partitions of each dataset are kept in memory, never a whole table's partition list
or the lineage graph (a dataset's partition list is streamed once per visit and filtered by
period as it goes: the periods come from the names, which Solr cannot read as times).
"""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from navd.errors import UsageError
from navd.index.client import SolrIndex, batches
from navd.index.documents import endpoint_field, solr_date
from navd.index.lineage_store import SolrLineageStore, terms_filter
from navd.index.query_syntax import quote
from navd.lineage import RelationAsk
from navd.model import ElementType, RelationType
from navd.names import InvalidName, path_qualified_name
from navd.runs import parse_solr_date
from navd.taint import Period, Periods, converted, dependency_order, iso, leaves, partition_period, \
    split_partition_path

TAINT_KIND = "TAINT"
_COMPONENT = "taint"
_DATA_FLOW = RelationType.DATA_FLOW.value
_EXECUTION = ElementType.OPERATION_EXECUTION.value
_TABLE = ElementType.TABLE.value
_DIRECTORY = ElementType.DIRECTORY.value
_PARTITION = ElementType.PARTITION.value
_FILE_TYPES = (_DIRECTORY, ElementType.FILE.value)
_MEMBER_FIELDS = "identity,type,qualifiedName,fileSystemPath"
_RUN_FIELDS = "identity,qualifiedName,originalName,started,ended"
#: ids per terms filter
_IDS = 2000
_LIVE = "-deleted:true"


# -- records ----------------------------------------------------------------------------------

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


def add_taint(index: SolrIndex, doc: Mapping[str, Any], start: datetime | None, end: datetime | None,
              reason: str = "", user: str | None = None) -> dict[str, Any]:
    """Record a taint on the element `doc` (a table, a directory, a partition), over [start, end)
    or (neither) over all of it; returns the record as shown."""
    periods = _checked_range(start, end)
    # An element with no path (a view, a table navd saw no location of) is still marked; only
    # `navd reprocess` needs the path, to find the partitions.
    path, spec = dataset_of(doc)
    if periods.everything and spec:  # a partition: its own period, when its values name one
        own = partition_period(spec)
        if own is not None:
            start, end = own.start, own.end
    record: dict[str, Any] = {
        "identity": f"taint-{uuid.uuid4().hex[:16]}", "kind": TAINT_KIND, "component": _COMPONENT,
        "started": solr_date(datetime.now(UTC)), "taint_target": str(doc["identity"]),
        "taint_name": str(doc.get("qualifiedName", "")), "taint_reason": reason[:2000]}
    if path is not None:
        record["taint_dataset"] = path.lower()
    if spec and (start is None):  # a partition with no time in its values: that partition only
        record["taint_partition"] = str(element_path(doc)).lower()
    if start is not None and end is not None:
        record["taint_from"], record["taint_to"] = solr_date(start), solr_date(end)
    if user:
        record["taint_user"] = user
    index.add("runs", [record])
    index.commit("runs")
    return shown_taint(record)


def _checked_range(start: datetime | None, end: datetime | None) -> Periods:
    from navd.taint import taint_range

    return taint_range(start, end)


def shown_taint(record: Mapping[str, Any]) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": record["identity"], "target": record.get("taint_target"),
                             "qualifiedName": record.get("taint_name"), "dataset": record.get("taint_dataset"),
                             "from": _iso(record.get("taint_from")), "to": _iso(record.get("taint_to")),
                             "reason": record.get("taint_reason") or "", "created": _iso(record.get("started"))}
    if record.get("taint_user"):
        shown["user"] = record["taint_user"]
    return shown


def _iso(value: Any) -> str | None:
    return iso(parse_solr_date(str(value))) if value else None


def list_taints(index: SolrIndex, target: Mapping[str, Any] | None = None, *, rows: int = 1000,
                ) -> list[dict[str, Any]]:
    """The taints (newest first, at most `rows`); with `target` (an element), those recorded on
    it and on its dataset that cover it (a partition: those whose range meets its period)."""
    filters = [f"kind:{TAINT_KIND}"]
    period: Period | None = None
    if target is not None:
        path, spec = dataset_of(target)
        clauses = [f'taint_target:{quote(str(target["identity"]))}']
        if path is not None:
            clauses.append(f'taint_dataset:{quote(path.lower())}')
            period = partition_period(spec) if spec else None
        filters.append(" OR ".join(clauses))
    body = index.search("runs", "*:*", rows=rows, sort="started desc, identity asc", filters=filters)
    out = []
    for record in body["response"]["docs"]:
        if target is not None and record.get("taint_target") != target["identity"]:
            if not _covers(record, target, period):
                continue
        out.append(shown_taint(record))
    return out


def _covers(record: Mapping[str, Any], target: Mapping[str, Any], period: Period | None) -> bool:
    """Whether a taint on `target`'s dataset covers `target` (its table, directory or partition)."""
    if record.get("taint_partition"):
        own = (element_path(target) or "").lower()
        return own == record["taint_partition"] or own.startswith(record["taint_partition"] + "/")
    if period is None or not record.get("taint_from"):
        return True
    return period.overlaps(Period(parse_solr_date(record["taint_from"]), parse_solr_date(record["taint_to"])))


def get_taint(index: SolrIndex, taint_id: str) -> dict[str, Any] | None:
    docs = [d for d in index.get("runs", [taint_id]) if d.get("kind") == TAINT_KIND]
    return docs[0] if docs else None


def clear_taints(index: SolrIndex, *, target: Mapping[str, Any] | None = None,
                 taint_id: str | None = None) -> list[dict[str, Any]]:
    """Remove one taint (`taint_id`) or every taint recorded on `target`; returns those removed."""
    if taint_id is not None:
        record = get_taint(index, taint_id)
        removed = [record] if record else []
    elif target is not None:
        removed = list(index.scan("runs", "*:*", filters=[f"kind:{TAINT_KIND}",
                                                           terms_filter("taint_target", [str(target["identity"])])]))
    else:
        raise UsageError("taint --clear: name the entity or --id")
    if removed:
        index.delete_ids("runs", [str(r["identity"]) for r in removed])
        index.commit("runs")
    return [shown_taint(r) for r in removed]


# -- the reprocess plan -----------------------------------------------------------------------

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
    store = SolrLineageStore(index)
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
            _scan_dataset(index, path, state)
            touched.update((i, path) for i in state.touched)
        pending = []
        readers: dict[str, set[str]] = defaultdict(set)  # execution -> datasets it read
        for relation in store.related([RelationAsk(tuple(touched), (_DATA_FLOW,), 1, far_type=_EXECUTION,
                                                   ends_only=True)]):
            readers[relation[1].endpoint2.id].add(touched[relation[1].endpoint1.id])
        outputs: dict[str, set[str]] = defaultdict(set)  # output element -> datasets upstream of it
        for _, relation in store.related([RelationAsk(tuple(readers), (_DATA_FLOW,), 1, ends_only=True)]):
            if relation.endpoint2.type != _EXECUTION:
                outputs[relation.endpoint2.id] |= readers[relation.endpoint1.id]
        for doc in _docs(index, "elements", outputs, _MEMBER_FIELDS):
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
    return _plan(index, root, root_path, periods, states, dependency_order(order, edges), truncated)


def _scan_dataset(index: SolrIndex, path: str, state: _State) -> None:
    """The dataset's own elements and its partitions touched by `state.incoming`, streamed."""
    lower = path.lower()
    state.roots = []
    # the directory by its qualifiedName, the table (and a partition) by its location: the
    # metastore's spelling, matched case-insensitively (fileSystemPath is indexed lower case)
    roots = itertools.chain(
        index.scan("elements", "*:*", fl=_MEMBER_FIELDS, filters=[f"{{!term f=qualifiedName}}{path}", _LIVE]),
        index.scan("elements", "*:*", fl=_MEMBER_FIELDS, filters=[f"{{!term f=fileSystemPath}}{lower}", _LIVE,
                                                                   f"-type:({' OR '.join(_FILE_TYPES)})"]))
    for doc in roots:
        state.roots.append(str(doc["identity"]))
        if doc.get("type") == _TABLE or not state.name:
            state.name = str(doc.get("qualifiedName") or path)
            state.identity = str(doc["identity"])
    state.name = state.name or path
    kept: dict[str, _Member] = {}
    members = itertools.chain(
        index.scan("elements", "*:*", fl=_MEMBER_FIELDS,
                   filters=[f"{{!prefix f=qualifiedName}}{path}/", f"type:{_DIRECTORY}", _LIVE]),
        index.scan("elements", "*:*", fl=_MEMBER_FIELDS,
                   filters=[f"{{!prefix f=fileSystemPath}}{lower}/", f"type:{_PARTITION}", _LIVE]))
    for doc in members:
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


def _docs(index: SolrIndex, core: str, ids: Iterable[str], fl: str) -> Iterable[dict[str, Any]]:
    for chunk in batches(sorted(ids), _IDS):
        yield from index.scan(core, "*:*", fl=fl, filters=[terms_filter("identity", chunk)])


def _writers(index: SolrIndex, ids: Sequence[str]) -> dict[str, list[str]]:
    """element id -> the executions with a DATA_FLOW into it."""
    found: dict[str, list[str]] = defaultdict(list)
    for chunk in batches(list(ids), _IDS):
        for doc in index.scan("relations", "*:*", fl=f"{endpoint_field(1, 'Id')},{endpoint_field(2, 'Id')}",
                              filters=[f"type:{_DATA_FLOW}", f"{endpoint_field(1, 'Type')}:{_EXECUTION}",
                                       terms_filter(endpoint_field(2, "Id"), chunk)]):
            found[str(doc[endpoint_field(2, "Id")])].append(str(doc[endpoint_field(1, "Id")]))
    return found


def _plan(index: SolrIndex, root: Mapping[str, Any], root_path: str, periods: Periods, states: dict[str, _State],
          order: list[str], truncated: bool) -> Plan:
    downstream = [p for p in order if p != root_path]
    wanted: list[str] = []
    for path in downstream:
        state = states[path]
        wanted += [i for member in state.partitions.values() for i in member.ids] or state.roots
    writers = _writers(index, wanted)
    runs = {str(d["identity"]): d for d in _docs(index, "elements", {w for ws in writers.values() for w in ws},
                                                 _RUN_FIELDS)}

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
                   _iso(runs[run].get("started")), _iso(runs[run].get("ended")), info["dataset"],
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


__all__ = ["TAINT_KIND", "Dataset", "Partition", "Plan", "Rerun", "add_taint", "clear_taints", "dataset_of",
           "element_path", "get_taint", "list_taints", "reprocess", "shown_taint"]

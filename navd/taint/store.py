"""Taints on Solr: the taint records, and what the reprocess walk reads of the index.

A taint is navd's own record in the runs core (kind TAINT), never a field of an element: the
extractors rewrite element documents whole on every run, so a mark put there would be gone at
the next extraction. `navd entity` and the lineage page read the records (there are few: people
make them) and show them on the elements they cover.
"""

from __future__ import annotations

import itertools
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from navd.errors import UsageError
from navd.index.client import SolrIndex, batches
from navd.index.documents import endpoint_field, solr_date
from navd.index.filters import prefix_filter, term_filter, terms_filter
from navd.index.query_syntax import quote
from navd.lineage.rules import RelationAsk
from navd.lineage.store import SolrLineageStore
from navd.model import ElementType, RelationType
from navd.index.documents import parse_solr_date
from navd.taint.rules import Period, dataset_of, element_path, iso, partition_period, taint_range

TAINT_KIND = "TAINT"
_COMPONENT = "taint"
_DATA_FLOW = RelationType.DATA_FLOW.value
_EXECUTION = ElementType.OPERATION_EXECUTION.value
_DIRECTORY = ElementType.DIRECTORY.value
_PARTITION = ElementType.PARTITION.value
_FILE_TYPES = (_DIRECTORY, ElementType.FILE.value)
#: what the walk reads of a dataset's elements and of the runs to redo
MEMBER_FIELDS = "identity,type,qualifiedName,fileSystemPath"
RUN_FIELDS = "identity,qualifiedName,originalName,started,ended"
#: ids per terms filter
_IDS = 2000
_LIVE = "-deleted:true"


# -- the taint records ------------------------------------------------------------------------

def add_taint(index: SolrIndex, doc: Mapping[str, Any], start: datetime | None, end: datetime | None,
              reason: str = "", user: str | None = None) -> dict[str, Any]:
    """Record a taint on the element `doc` (a table, a directory, a partition), over [start, end)
    or (neither) over all of it; returns the record as shown."""
    periods = taint_range(start, end)
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


def shown_taint(record: Mapping[str, Any]) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": record["identity"], "target": record.get("taint_target"),
                             "qualifiedName": record.get("taint_name"), "dataset": record.get("taint_dataset"),
                             "from": shown_time(record.get("taint_from")), "to": shown_time(record.get("taint_to")),
                             "reason": record.get("taint_reason") or "", "created": shown_time(record.get("started"))}
    if record.get("taint_user"):
        shown["user"] = record["taint_user"]
    return shown


def shown_time(value: Any) -> str | None:
    """A Solr date as the taints and the plan show it (ISO 8601, seconds, `Z`)."""
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


# -- what the reprocess walk reads ------------------------------------------------------------

class ReprocessReads:
    """The index as the reprocess walk (navd/taint/reprocess.py) reads it: a dataset's own
    elements and partitions, the executions reading elements and what they wrote, the writers
    of elements. Streamed, in batches of ids."""

    def __init__(self, index: SolrIndex) -> None:
        self.index = index
        self._relations = SolrLineageStore(index)

    def dataset_roots(self, path: str) -> Iterator[dict[str, Any]]:
        """The dataset's own elements: the directory by its qualifiedName, the table (and a
        partition) by its location: the metastore's spelling, matched case-insensitively
        (fileSystemPath is indexed lower case)."""
        return itertools.chain(
            self.index.scan("elements", "*:*", fl=MEMBER_FIELDS, filters=[term_filter("qualifiedName", path), _LIVE]),
            self.index.scan("elements", "*:*", fl=MEMBER_FIELDS,
                            filters=[term_filter("fileSystemPath", path.lower()), _LIVE,
                                     f"-type:({' OR '.join(_FILE_TYPES)})"]))

    def dataset_members(self, path: str) -> Iterator[dict[str, Any]]:
        """The directories and partitions below the dataset's path."""
        return itertools.chain(
            self.index.scan("elements", "*:*", fl=MEMBER_FIELDS,
                            filters=[prefix_filter("qualifiedName", f"{path}/"), f"type:{_DIRECTORY}", _LIVE]),
            self.index.scan("elements", "*:*", fl=MEMBER_FIELDS,
                            filters=[prefix_filter("fileSystemPath", f"{path.lower()}/"), f"type:{_PARTITION}",
                                     _LIVE]))

    def readers(self, ids: Sequence[str]) -> Iterator[tuple[str, str]]:
        """(element, execution) for every execution reading one of the elements `ids`
        (DATA_FLOW element -> execution), in one request per batch."""
        for _, relation in self._relations.related([RelationAsk(tuple(ids), (_DATA_FLOW,), 1, far_type=_EXECUTION,
                                                                ends_only=True)]):
            yield relation.endpoint1.id, relation.endpoint2.id

    def outputs(self, executions: Sequence[str]) -> Iterator[tuple[str, str]]:
        """(execution, element) for every element (no execution) the `executions` wrote."""
        for _, relation in self._relations.related([RelationAsk(tuple(executions), (_DATA_FLOW,), 1,
                                                                ends_only=True)]):
            if relation.endpoint2.type != _EXECUTION:
                yield relation.endpoint1.id, relation.endpoint2.id

    def documents(self, ids: Iterable[str], fl: str) -> Iterator[dict[str, Any]]:
        """The element documents of `ids` (the fields `fl`)."""
        for chunk in batches(sorted(ids), _IDS):
            yield from self.index.scan("elements", "*:*", fl=fl, filters=[terms_filter("identity", chunk)])

    def writers(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """element id -> the executions with a DATA_FLOW into it."""
        found: dict[str, list[str]] = defaultdict(list)
        for chunk in batches(list(ids), _IDS):
            for doc in self.index.scan("relations", "*:*", fl=f"{endpoint_field(1, 'Id')},{endpoint_field(2, 'Id')}",
                                       filters=[f"type:{_DATA_FLOW}", f"{endpoint_field(1, 'Type')}:{_EXECUTION}",
                                                terms_filter(endpoint_field(2, "Id"), chunk)]):
                found[str(doc[endpoint_field(2, "Id")])].append(str(doc[endpoint_field(1, "Id")]))
        return found

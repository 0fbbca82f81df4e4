"""Usage on Solr: what the usage, unused, deps and impact figures read, streamed in batches of
ids: held at once is bounded by the window asked for or a page, never by the size of the index
or the history of a table.

A table is read also through its directory (LOGICAL_PHYSICAL table -> directory: a job reading
the files by path). Column reads and writes are the column edges (DATA_FLOW / CONTROL_FLOW)
whose `discriminator` names the execution they were seen in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from navd.index.client import SolrIndex, batches
from navd.index.documents import endpoint_field, property_field
from navd.index.filters import terms_filter
from navd.index.query_syntax import escape, range_bound
from navd.model import ElementType, RelationType
from navd.usage.rules import Run

EXECUTION = ElementType.OPERATION_EXECUTION.value
OPERATION = ElementType.OPERATION.value
DATA_FLOW = RelationType.DATA_FLOW.value
_PARENT_CHILD = RelationType.PARENT_CHILD.value
_LOGICAL_PHYSICAL = RelationType.LOGICAL_PHYSICAL.value
_INSTANCE_OF = RelationType.INSTANCE_OF.value
_COLUMN_FLOWS = f"({RelationType.DATA_FLOW.value} OR {RelationType.CONTROL_FLOW.value})"
#: ids per terms filter / per request
CHUNK = 1000
#: the fields of an execution a usage figure needs
_RUN_FIELDS = "identity,qualifiedName,originalName,principal,started,ended"
#: Hive's statistics of a table's size, as table properties
_SIZE_PROPERTIES = ("tblproperty.totalSize", "tblproperty.spark.sql.statistics.totalSize")
_TABLE_FIELDS = ",".join(["identity,qualifiedName,owner,fileSystemPath,created",
                          *(property_field(key) for key in _SIZE_PROPERTIES)])


def far_ends(index: SolrIndex, relation_type: str, near_end: int, ids: Iterable[str], *,
             far_type: str | None = None) -> Iterator[tuple[str, str]]:
    """(near id, far id) of the relations of `relation_type` with `near_end` in `ids`, streamed."""
    far_end = 3 - near_end
    near_field, far_field = endpoint_field(near_end, "Id"), endpoint_field(far_end, "Id")
    filters = [f"type:{relation_type}"]
    if far_type is not None:
        filters.append(f"{endpoint_field(far_end, 'Type')}:{far_type}")
    for chunk in batches(ids, CHUNK):
        for doc in index.scan("relations", "*:*", fl=f"{near_field},{far_field}",
                              filters=[*filters, terms_filter(near_field, chunk)]):
            yield str(doc[near_field]), str(doc[far_field])


def elements(index: SolrIndex, ids: Iterable[str], fl: str, filters: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """The element documents of `ids` (the fields `fl`), streamed."""
    for chunk in batches(ids, CHUNK):
        yield from index.scan("elements", "*:*", fl=fl, filters=[*filters, terms_filter("identity", chunk)])


def readers(index: SolrIndex, ids: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(element, execution) for every execution reading one of `ids`."""
    return far_ends(index, DATA_FLOW, 1, ids, far_type=EXECUTION)


def writers(index: SolrIndex, ids: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(element, execution) for every execution writing one of `ids`."""
    return far_ends(index, DATA_FLOW, 2, ids, far_type=EXECUTION)


def inputs(index: SolrIndex, executions: Sequence[str]) -> set[str]:
    """What the `executions` read (the near ends of the DATA_FLOW into them)."""
    return {far for _, far in far_ends(index, DATA_FLOW, 2, executions)}


def physical(index: SolrIndex, ids: Sequence[str]) -> dict[str, str]:
    """{directory id: table id} for the tables among `ids` (LOGICAL_PHYSICAL table -> directory):
    a job reading a table's files by path uses the table."""
    return {far: near for near, far in far_ends(index, _LOGICAL_PHYSICAL, 1, ids)}


def physical_reverse(index: SolrIndex, ids: Sequence[str]) -> dict[str, str]:
    """{table id: directory id} for the directories among `ids` that back a table."""
    return {far: near for near, far in far_ends(index, _LOGICAL_PHYSICAL, 2, ids)}


def children(index: SolrIndex, parent: str, child_type: str) -> list[str]:
    """The PARENT_CHILD children of `parent` of the element type `child_type`."""
    return [far for _, far in far_ends(index, _PARENT_CHILD, 1, [parent], far_type=child_type)]


def directories(index: SolrIndex, partitions: Sequence[str]) -> dict[str, str]:
    """{partition id: its directory id} (LOGICAL_PHYSICAL partition -> directory)."""
    return dict(far_ends(index, _LOGICAL_PHYSICAL, 1, partitions))


def runs(index: SolrIndex, execution_ids: Iterable[str]) -> Iterator[Run]:
    """The executions among `execution_ids`, as usage figures name them."""
    yield from (Run.from_doc(doc) for doc in elements(index, execution_ids, _RUN_FIELDS, [f"type:{EXECUTION}"]))


def runs_by_name(index: SolrIndex, names: Iterable[str]) -> Iterator[Run]:
    """The executions whose qualifiedName is one of `names`."""
    for chunk in batches(names, CHUNK):
        for doc in index.scan("elements", "*:*", fl=_RUN_FIELDS,
                              filters=[f"type:{EXECUTION}", terms_filter("qualifiedName", dict.fromkeys(chunk))]):
            yield Run.from_doc(doc)


def started(index: SolrIndex, execution_ids: Iterable[str]) -> dict[str, str]:
    """{execution id: when it started} for the executions among `execution_ids` with a start."""
    return {str(d["identity"]): str(d["started"]) for d in elements(
        index, execution_ids, "identity,started", [f"type:{EXECUTION}", "started:*"])}


def operations_of(index: SolrIndex, execution_ids: Sequence[str]) -> dict[str, str]:
    """{execution id: its operation's id}: an application run is an INSTANCE_OF its operation;
    a SQL execution inside it (PARENT_CHILD run -> execution) belongs to the run's operation."""
    parents = dict(far_ends(index, _PARENT_CHILD, 2, execution_ids, far_type=EXECUTION))
    applications = sorted({parents.get(e, e) for e in execution_ids})
    templates = dict(far_ends(index, _INSTANCE_OF, 2, applications, far_type=OPERATION))
    return {e: templates[parents.get(e, e)] for e in execution_ids if parents.get(e, e) in templates}


def last_run(index: SolrIndex, operation: str) -> Run | None:
    """The operation's newest run by start time."""
    instances = [far for _, far in far_ends(index, _INSTANCE_OF, 1, [operation])]
    best: Run | None = None
    for chunk in batches(instances, CHUNK):
        body = index.search("elements", "*:*", rows=1, sort="started desc, identity asc", fl=_RUN_FIELDS,
                            filters=[f"type:{EXECUTION}", terms_filter("identity", chunk)])
        for doc in body["response"]["docs"]:
            run = Run.from_doc(doc)
            if best is None or (run.started or "") > (best.started or ""):
                best = run
    return best


def column_run_names(index: SolrIndex, columns: Sequence[str], near_end: int) -> Iterator[str]:
    """The executions (by qualifiedName) the column edges of `columns` name: their reads
    (near_end 1) or writes (2)."""
    field = endpoint_field(near_end, "Id")
    for chunk in batches(columns, CHUNK):
        for doc in index.scan("relations", "*:*", fl="discriminator",
                              filters=[f"type:{_COLUMN_FLOWS}", "discriminator:*", terms_filter(field, chunk)]):
            yield str(doc["discriminator"])


def column_runs(index: SolrIndex, columns: Sequence[str], near_end: int,
                run_names: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(column, execution name) of the column edges of `columns` (near end `near_end`) that the
    executions `run_names` wrote."""
    field = endpoint_field(near_end, "Id")
    for names in batches(sorted(run_names), CHUNK):
        for chunk in batches(sorted(columns), CHUNK):
            for doc in index.scan("relations", "*:*", fl=f"{field},discriminator", filters=[
                    f"type:{_COLUMN_FLOWS}", terms_filter(field, chunk), terms_filter("discriminator", names)]):
                yield str(doc[field]), str(doc["discriminator"])


def tables(index: SolrIndex, *, database: str | None = None, after: str | None = None) -> Iterator[dict[str, Any]]:
    """The tables (not deleted) in identity order, of `database`, after the identity `after`."""
    filters = [f"type:{ElementType.TABLE.value}", "-deleted:true"]
    if after:
        filters.append(f"identity:{{{range_bound(after)} TO *]")
    if database:
        filters.append(f"qualifiedName:{escape(database.lower())}.*")
    return index.scan("elements", "*:*", fl=_TABLE_FIELDS, filters=filters)


def table_size(index: SolrIndex, table: Mapping[str, Any], directory: str | None) -> int | None:
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
    for key in _SIZE_PROPERTIES:
        value = table.get(property_field(key))
        if value is not None and str(value).isdigit():
            return int(value)
    return None

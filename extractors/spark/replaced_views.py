"""A view defined again: the later definition's lineage replaces the earlier one's in the index.

CREATE OR REPLACE VIEW and ALTER VIEW ... AS replace a view's query, and with it what the view
is computed from. Within one application the event-log processor writes a view from its last
definition only (events.replace_views). A definition may also replace one written in an earlier
pass: another application's, or an earlier statement of a long-running one (a Spark Thrift
Server) whose records were written and whose state was retired. So after each pass's records
are in Solr, for every view the pass defined, the Spark extractor asks the index which Spark
executions wrote the view, and of all its definitions keeps the one that started last: the
others lose their relations into the view and into its columns (`withdraw_replaced`). Their
execution elements stay (they ran, and read what they read). The column stubs an earlier
definition named that the latest one (this pass's) no longer has are flagged deleted as of the
latest definition's start, as a DROP flags a table's: a view's columns are FIELD children of the
view, and the HMS extractor, which owns them, may not describe the view before someone looks.

Trust (docs/sources/spark.md, "Trust model of event-log directories"): a log speaks for its owner's
statements only. A definition from a log of another owner than the latest one's is left as it is, and the
view is named in a warning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from navd.index.client import SolrIndex
from navd.index.documents import deletion_update, endpoint_field, property_field, revival_update
from navd.index.queries import column_edges_into_view, relations_between, spark_executions_writing, view_column_stubs
from navd.lineage.stored import StoredElement
from navd.model import Deletion, ElementType, EntityRef, SourceType
from navd.names import spark_execution_ref, table_of_field
from navd.index.documents import parse_solr_date

from .application_run import ApplicationRun, SqlExecution
from .records import LOG_OWNER


@dataclasses.dataclass(frozen=True, slots=True)
class ViewDefinition:
    """A view as one Spark SQL execution defined it."""

    view: EntityRef
    execution: EntityRef
    started: datetime | None
    #: the owner of the event-log file the execution came from
    owner: str
    #: the view's columns (FIELD qualified names) as this definition has them; None when its
    #: log does not name them all (a plan cut or not read for column lineage)
    columns: frozenset[str] | None = None


def view_definitions(run: ApplicationRun, owner: str) -> list[ViewDefinition]:
    """The views the executions of `run` define (an execution replaced by a later one of the
    same application defines none: events.replace_views)."""
    if run.app_id is None:
        return []
    return [ViewDefinition(dataset.ref, spark_execution_ref(run.app_id, run.attempt, execution.execution_id),
                           execution.started, owner, _columns(execution, dataset.ref))
            for execution in run.executions for dataset in execution.outputs if dataset.ref.type is ElementType.VIEW]


def _columns(execution: SqlExecution, view: EntityRef) -> frozenset[str] | None:
    """The columns `execution` gives `view`; None unless its log names them all."""
    columns = frozenset(c for c in execution.view_columns if table_of_field(c) == view.qualified_name)
    incomplete = any(view.qualified_name in (name, table_of_field(name))
                     for _why, names in execution.column_incomplete for name in names)
    return None if not columns or incomplete or execution.column_notes else columns


@dataclasses.dataclass(frozen=True, slots=True)
class Withdrawn:
    """What `withdraw_replaced` did: the (view, execution) definitions whose relations went,
    and the views whose definition from a log of another owner was left."""

    definitions: tuple[tuple[str, str], ...] = ()
    untrusted: tuple[str, ...] = ()
    #: the view columns (stubs) flagged deleted: the latest definition no longer has them
    columns_dropped: tuple[str, ...] = ()


def withdraw_replaced(index: SolrIndex, definitions: Iterable[ViewDefinition]) -> Withdrawn:
    """For each view of `definitions`, delete the relations into the view and its columns of
    every Spark execution that defined it before the one that started last (see above).

    Solr is asked once for all the views, not once per view: one soft commit per core, one
    query for the executions writing them, one real-time get of those executions, one query for
    the column stubs, and the relations go by one delete-by-query per `DELETE_CLAUSES`
    definitions. Each commit opens a searcher and each delete-by-query holds
    up the concurrent adds while Solr applies it: a pass over many applications redefining
    views would otherwise pay both per view."""
    latest = _latest(definitions)
    if not latest:
        return Withdrawn()
    index.commit("relations", soft=True)   # the pass's own relations: searchable now
    writers = _writers(index, [ours.view for ours in latest.values()])
    for ours in latest.values():
        writers.get(ours.view.identity, {}).pop(ours.execution.identity, None)
    executions = {str(doc["identity"]): doc
                  for doc in index.get("elements", {i for w in writers.values() for i in w})}
    replaced: list[ViewDefinition] = []
    untrusted: list[str] = []
    stale_checked: list[ViewDefinition] = []
    for ours in latest.values():
        theirs = writers.get(ours.view.identity, {})
        known = [ours, *(_definition(executions[i], ours.view) for i in theirs if i in executions)]
        newest = max(known, key=_start_order)
        for definition in known:
            if newest.started is None or definition.started is None or not definition.started < newest.started:
                continue   # the newest, or no order to go by
            if definition.owner != newest.owner:
                untrusted.append(ours.view.qualified_name)
                continue
            replaced.append(definition)
        if theirs and newest is ours and ours.columns is not None and ours.started is not None:
            stale_checked.append(ours)
    _delete(index, replaced)
    dropped: list[str] = []
    if stale_checked:
        index.commit("elements", soft=True)   # the pass's own stubs: searchable now
        gone = _stale_column_stubs(index, stale_checked)
        index.atomic_update("elements", (deletion_update(Deletion(ref, started)) for ref, started in gone))
        dropped = [ref.qualified_name for ref, _started in gone]
    withdrawn = tuple((d.view.qualified_name, d.execution.qualified_name) for d in replaced)
    return Withdrawn(withdrawn, tuple(dict.fromkeys(untrusted)), tuple(dropped))


def _latest(definitions: Iterable[ViewDefinition]) -> dict[str, ViewDefinition]:
    """Per view identity, its definition that started last."""
    latest: dict[str, ViewDefinition] = {}
    for definition in definitions:
        known = latest.get(definition.view.identity)
        if known is None or _start_order(definition) > _start_order(known):
            latest[definition.view.identity] = definition
    return latest


def revive_defined_again(index: SolrIndex, definitions: Iterable[ViewDefinition],
                         untrusted: Callable[[Mapping[str, Any], str], str]) -> list[str]:
    """The views of `definitions` a DROP flagged before their latest definition started (DROP
    VIEW in one application, CREATE VIEW in a later one) are alive again, created at that start,
    with the columns it names that were flagged too; the qualified names of the views revived.

    Only where the log may speak for the view (`untrusted(doc, owner)` gives no reason, the
    DROP-trust rule: a view the HMS extractor indexed is its to describe). One real-time get for
    them all: the flags are the DROPs' atomic updates, acknowledged but maybe not searchable."""
    latest = [d for d in _latest(definitions).values() if d.started is not None]
    columns = {d.view.identity: [EntityRef(d.view.source_type, name, ElementType.FIELD).identity
                                 for name in sorted(d.columns or ())] for d in latest}
    asked = {d.view.identity for d in latest} | {c for ids in columns.values() for c in ids}
    if not asked:
        return []
    docs = {str(doc["identity"]): doc for doc in index.get("elements", sorted(asked))}
    updates: list[dict[str, Any]] = []
    revived: list[str] = []
    for ours in latest:
        assert ours.started is not None
        doc = docs.get(ours.view.identity)
        if doc is None or not StoredElement.from_doc(doc).deleted_at(ours.started) or untrusted(doc, ours.owner):
            continue
        updates.append(revival_update(ours.view.identity, ours.started))
        updates.extend(revival_update(column, ours.started) for column in columns[ours.view.identity]
                       if column in docs and StoredElement.from_doc(docs[column]).deleted_at(ours.started))
        revived.append(ours.view.qualified_name)
    if updates:
        index.atomic_update("elements", updates)
    return revived


#: the most view definitions one query or delete-by-query names (a few clauses each: Solr's
#: maxBooleanClauses, 1024 by default, bounds a query's clauses)
DELETE_CLAUSES = 100


T = TypeVar("T")


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for at in range(0, len(items), size):
        yield items[at:at + size]


def _stale_column_stubs(index: SolrIndex, latest: Sequence[ViewDefinition]) -> list[tuple[EntityRef, datetime]]:
    """The column stubs of the views of `latest`, named by a log of each one's owner, that its
    latest definition no longer has, each with that definition's start (one query for them all:
    a column is a FIELD child of one view)."""
    by_view = {ours.view.qualified_name: ours for ours in latest}
    gone: list[tuple[EntityRef, datetime]] = []
    for chunk in _chunks(latest, DELETE_CLAUSES // 2):  # six clauses each
        query = " OR ".join(f"({view_column_stubs(o.view.source_type, o.view.qualified_name, LOG_OWNER, o.owner)})"
                            for o in chunk)
        for doc in index.scan("elements", query, fl="qualifiedName"):
            name = str(doc["qualifiedName"])
            # the view whose clause it matched: the clause names the view's columns only
            ours = by_view.get(table_of_field(name) or "")
            if ours is None or ours.started is None:
                continue
            if name not in (ours.columns or frozenset()):
                gone.append((EntityRef(ours.view.source_type, name, ElementType.FIELD), ours.started))
    return gone


def _start_order(definition: ViewDefinition) -> tuple[bool, datetime]:
    """Definitions by when their execution started; one without a start time first."""
    return definition.started is not None, definition.started or _NEVER


_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def _writers(index: SolrIndex, views: Sequence[EntityRef]) -> dict[str, dict[str, str]]:
    """Per view identity, the Spark executions with a DATA_FLOW into it: identity -> qualified name."""
    writer_id, writer_name, view_id = endpoint_field(1, "Id"), endpoint_field(1, "QualifiedName"), endpoint_field(2, "Id")
    found: dict[str, dict[str, str]] = {}
    for chunk in _chunks(views, DELETE_CLAUSES * 4):
        query = spark_executions_writing([view.identity for view in chunk])
        for doc in index.scan("relations", query, fl=f"{writer_id},{writer_name},{view_id}"):
            found.setdefault(str(doc[view_id]), {})[str(doc[writer_id])] = str(doc[writer_name])
    return found


def _definition(doc: dict[str, object], view: EntityRef) -> ViewDefinition:
    """An indexed execution element, as the definition of `view` it wrote."""
    started = doc.get("started")
    owner = doc.get(property_field(LOG_OWNER))
    return ViewDefinition(view, EntityRef(SourceType.SPARK, str(doc["qualifiedName"]), ElementType.OPERATION_EXECUTION),
                          parse_solr_date(started) if isinstance(started, str) else None,
                          owner if isinstance(owner, str) else "")


def _delete(index: SolrIndex, replaced: Sequence[ViewDefinition]) -> None:
    """The relations of each definition of `replaced` into its view (the execution's DATA_FLOW)
    and into the view's columns (the column edges it discriminates): one delete-by-query for up
    to DELETE_CLAUSES definitions."""
    for chunk in _chunks(replaced, DELETE_CLAUSES):
        index.delete_query("relations", " OR ".join(
            f"({relations_between(d.execution.identity, d.view.identity)}) OR "
            f"({column_edges_into_view(d.execution.qualified_name, d.view.qualified_name)})" for d in chunk))

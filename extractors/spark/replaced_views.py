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
from collections.abc import Iterable
from datetime import datetime, timezone

from navd.index.client import SolrIndex
from navd.index.documents import deletion_update, endpoint_field, property_field
from navd.index.queries import column_edges_into_view, relations_between, spark_executions_writing, view_column_stubs
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
    every Spark execution that defined it before the one that started last (see above)."""
    latest: dict[str, ViewDefinition] = {}
    for definition in definitions:
        known = latest.get(definition.view.identity)
        if known is None or _start_order(definition) > _start_order(known):
            latest[definition.view.identity] = definition
    if not latest:
        return Withdrawn()
    index.commit("relations", soft=True)   # the pass's own relations: searchable now
    withdrawn: list[tuple[str, str]] = []
    untrusted: list[str] = []
    dropped: list[str] = []
    for ours in latest.values():
        writers = _writers(index, ours.view)
        writers.pop(ours.execution.identity, None)
        known = [ours, *(_definition(doc, ours.view) for doc in index.get("elements", writers))] if writers else [ours]
        newest = max(known, key=_start_order)
        for definition in known:
            if newest.started is None or definition.started is None or not definition.started < newest.started:
                continue   # the newest, or no order to go by
            if definition.owner != newest.owner:
                untrusted.append(ours.view.qualified_name)
                continue
            _delete(index, definition)
            withdrawn.append((definition.view.qualified_name, definition.execution.qualified_name))
        if writers and newest is ours and ours.columns is not None and ours.started is not None:
            gone = _stale_column_stubs(index, ours)
            index.atomic_update("elements", (deletion_update(Deletion(ref, ours.started)) for ref in gone))
            dropped.extend(ref.qualified_name for ref in gone)
    return Withdrawn(tuple(withdrawn), tuple(dict.fromkeys(untrusted)), tuple(dropped))


def _stale_column_stubs(index: SolrIndex, latest: ViewDefinition) -> list[EntityRef]:
    """The column stubs of `latest`'s view, named by a log of its owner, that it no longer has."""
    columns = latest.columns or frozenset()
    index.commit("elements", soft=True)   # the pass's own stubs: searchable now
    query = view_column_stubs(latest.view.source_type, latest.view.qualified_name, LOG_OWNER, latest.owner)
    return [EntityRef(latest.view.source_type, str(doc["qualifiedName"]), ElementType.FIELD)
            for doc in index.scan("elements", query, fl="qualifiedName")
            if str(doc["qualifiedName"]) not in columns]


def _start_order(definition: ViewDefinition) -> tuple[bool, datetime]:
    """Definitions by when their execution started; one without a start time first."""
    return definition.started is not None, definition.started or _NEVER


_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def _writers(index: SolrIndex, view: EntityRef) -> dict[str, str]:
    """The Spark executions with a DATA_FLOW into `view`: identity -> qualified name."""
    query = spark_executions_writing(view.identity)
    return {str(doc[endpoint_field(1, "Id")]): str(doc[endpoint_field(1, "QualifiedName")])
            for doc in index.scan("relations", query, fl=f"{endpoint_field(1, 'Id')},{endpoint_field(1, 'QualifiedName')}")}


def _definition(doc: dict[str, object], view: EntityRef) -> ViewDefinition:
    """An indexed execution element, as the definition of `view` it wrote."""
    started = doc.get("started")
    owner = doc.get(property_field(LOG_OWNER))
    return ViewDefinition(view, EntityRef(SourceType.SPARK, str(doc["qualifiedName"]), ElementType.OPERATION_EXECUTION),
                          parse_solr_date(started) if isinstance(started, str) else None,
                          owner if isinstance(owner, str) else "")


def _delete(index: SolrIndex, definition: ViewDefinition) -> None:
    """The relations of `definition` into its view (the execution's DATA_FLOW) and into the
    view's columns (the column edges it discriminates)."""
    view, execution = definition.view, definition.execution
    index.delete_query("relations", relations_between(execution.identity, view.identity))
    index.delete_query("relations", column_edges_into_view(execution.qualified_name, view.qualified_name))

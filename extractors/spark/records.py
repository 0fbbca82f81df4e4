"""A Spark application's run -> navd.model records. Pure: no I/O.

`records(run)` turns what `events.ApplicationProcessor.finish()` understood (an
`ApplicationRun`) into elements and relations (see extractors.spark.events for what each one
means), `stubs_for` gives the stubs of the datasets and columns those relations leave unlinked,
and `dropped` the deletions of what the application dropped. All names come from navd.names.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator
from datetime import datetime

from navd.index.documents import STUB_MARK
from navd.model import (
    Deletion,
    Element,
    ElementStub,
    ElementType,
    EntityRef,
    Record,
    Relation,
    RelationType,
    SourceType,
    execution_times,
)
from navd.names import (
    display_name,
    field_table,
    spark_application_ref,
    spark_execution_ref,
    spark_run_ref,
    yarn_execution_ref,
)

from .application_run import ApplicationRun, CatalogEvent, SqlExecution
from .events import CUT_BY_SPARK, MAX_FIELDS_SETTING, ApplicationProcessor


#: The property naming the owner of the event-log file a Spark element or stub came from: the
#: user is what the log claims (anyone can write any name into a log); the owner is who wrote it.
LOG_OWNER = "logOwner"


def records(run: ApplicationRun, *, extractor_run_id: str | None = None, log_owner: str = "") -> Iterator[Record]:
    """navd.model records of one application: elements first, then relations. `log_owner`, the
    owner of its event-log file, goes on the run and its executions (`logOwner`)."""
    if run.app_id is None or run.app_name is None:
        return  # no SparkListenerApplicationStart: nothing to hang records on
    template = Element(SourceType.SPARK, ElementType.OPERATION, spark_application_ref(run.app_name).qualified_name,
                       name=run.app_name, extractor_run_id=extractor_run_id)
    props = {"outcome": run.outcome, "appId": run.app_id, "attempt": run.attempt}
    if log_owner:
        props[LOG_OWNER] = log_owner
    if run.spark_version:
        props["sparkVersion"] = run.spark_version
    loose = [e for e in run.catalog_events if e.execution_id is None]
    if loose:  # catalog changes made outside any SQL execution (e.g. through the Catalog API)
        props["catalogEvents"] = _catalog_text(loose)
    if run.skipped:
        props["skippedEvents"] = ",".join(f"{k}={v}" for k, v in sorted(run.skipped.items()))
    app = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                  spark_run_ref(run.app_id, run.attempt).qualified_name,
                  name=f"{run.app_name} ({run.app_id})", principal=run.user, started=run.started,
                  ended=run.ended, source_id=run.app_id, extractor_run_id=extractor_run_id,
                  properties=props)
    children = [_execution_element(run, app, e, extractor_run_id, log_owner) for e in run.executions]
    yield template
    yield app
    yield from children
    yield Relation(RelationType.INSTANCE_OF, template.ref, app.ref, extractor_run_id=extractor_run_id)
    if run.app_id.startswith("application_"):
        # Ran on YARN: the YARN application (physical) ran this Spark run (logical). The YARN
        # extractor writes the same relation; unlinked until its side is indexed.
        yield Relation(RelationType.LOGICAL_PHYSICAL, app.ref, yarn_execution_ref(run.app_id), linked2=False,
                       extractor_run_id=extractor_run_id)
    for execution, element in zip(run.executions, children, strict=True):
        # the SQL execution's start and end, not the indexing time: what lineage as of a moment counts
        first, last = execution_times(element.started, element.ended)
        yield Relation(RelationType.PARENT_CHILD, app.ref, element.ref, extractor_run_id=extractor_run_id,
                       first_seen=first, last_seen=last)
        for dataset in execution.inputs:
            yield Relation(RelationType.DATA_FLOW, dataset.ref, element.ref, linked1=False,
                           extractor_run_id=extractor_run_id, properties={"via": dataset.via},
                           first_seen=first, last_seen=last)
        for dataset in execution.outputs:
            yield Relation(RelationType.DATA_FLOW, element.ref, dataset.ref, linked2=False,
                           extractor_run_id=extractor_run_id, properties={"via": dataset.via},
                           first_seen=first, last_seen=last)
        for edge in execution.columns:
            # Both ends unlinked: the HMS extractor owns tables' FIELD elements; a path's
            # columns (HDFS FIELDs) are owned by no extractor and stay stubs.
            yield Relation(edge.kind, edge.source, edge.target, linked1=False, linked2=False,
                           dependency_type=edge.dependency_type, expression=edge.expression,
                           discriminator=element.qualified_name, extractor_run_id=extractor_run_id,
                           properties={"subtype": edge.subtype} if edge.subtype else {}, first_seen=first,
                           last_seen=last)


def _execution_element(run: ApplicationRun, app: Element, execution: SqlExecution,
                       extractor_run_id: str | None, log_owner: str) -> Element:
    props = {"outcome": execution.outcome, "executionId": str(execution.execution_id)}
    if log_owner:
        props[LOG_OWNER] = log_owner
    if execution.nested_ids:
        props["nestedExecutionIds"] = ",".join(map(str, execution.nested_ids))
    if execution.write_commands:
        props["writeCommands"] = ",".join(execution.write_commands)
    if execution.catalog_events:
        props["catalogEvents"] = _catalog_text(execution.catalog_events)
    if execution.error:
        props["error"] = execution.error[:2000]
    if any(d.truncated for d in execution.inputs):
        props["inputsTruncated"] = "true"
    if execution.unparsed_nodes:
        props["unparsedNodes"] = ",".join(execution.unparsed_nodes)
    if execution.column_notes:
        props["columnLineageSkipped"] = "; ".join(execution.column_notes)
    if execution.column_incomplete:
        props["columnLineageIncomplete"] = incomplete_text(execution.column_incomplete)
    if execution.replaced_views:
        # a view this statement defined, defined again later: its lineage is the later one's
        props["viewsReplaced"] = ", ".join(f"{view} (by sql {by})" for view, by in execution.replaced_views)
    assert run.app_id is not None
    return Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                   spark_execution_ref(run.app_id, run.attempt, execution.execution_id).qualified_name,
                   name=f"{run.app_name} sql {execution.execution_id}", parent=app.ref,
                   principal=run.user, started=execution.started, ended=execution.ended,
                   query_text=execution.query_text, description=execution.description or None,
                   execution_plan=execution.plan,
                   source_id=f"{run.app_id}/{run.attempt}/sql/{execution.execution_id}",
                   extractor_run_id=extractor_run_id, properties=props)


#: The most of a `columnLineageIncomplete` property kept (a plan may cut hundreds of columns)
MAX_INCOMPLETE_CHARS = 4000


def incomplete_text(incomplete: Iterable[tuple[str, Iterable[str]]]) -> str:
    """`Window arguments cut by Spark: db.t.a@c, db.t.b@c; ... (raise <setting>)`: which written
    columns may miss sources, why, and the Spark setting that would have kept them."""
    incomplete = list(incomplete)
    text = "; ".join(f"{why}: {', '.join(fields)}" for why, fields in incomplete)
    if len(text) > MAX_INCOMPLETE_CHARS:
        text = text[:MAX_INCOMPLETE_CHARS] + "..."
    # only a cut plan text is cured by the setting (not a pandas UDF's output, say)
    if not any(CUT_BY_SPARK in why for why, _fields in incomplete):
        return text
    return f"{text} (raise {MAX_FIELDS_SETTING})"


_DROPPING = frozenset({"DROP_TABLE", "RENAME_TABLE", "DROP_DATABASE"})


def dropped(run: ApplicationRun, executions: Iterable[SqlExecution]) -> Iterator[Deletion]:
    """Deletions for what `executions` dropped.

    A DROP TABLE (or the old name of a RENAME) flags the table deleted as of the execution's end,
    with the columns of it that this application's column lineage named (the HMS extractor flags
    the rest on its next pass); a DROP DATABASE flags the database. This is what keeps a
    temporary table created and dropped between two HMS extractions in the lineage, flagged
    deleted, instead of a dangling name. A table created again later (in this application or a
    later one) is recorded by `created_tables` and incarnations.recreate: the dropped incarnation
    keeps its lineage under a name of its own, deleted as of this drop. Of several DROPs of a
    table in one batch each is yielded, in order (the last one's time is the one kept); a database
    or a view created again later in the same application is not flagged (CREATE OR REPLACE VIEW
    drops and creates: replaced_views withdraws the earlier definition's lineage).
    """
    executions = [e for e in executions if any(c.action in _DROPPING for c in e.catalog_events)]
    if not executions:  # the common pass: nothing dropped, nothing to scan
        return
    views = defined_views(run)
    last_action: dict[str, CatalogEvent] = {}
    for event in run.catalog_events:
        last_action[event.qualified_name] = event
        if event.new_qualified_name:
            last_action[event.new_qualified_name] = dataclasses.replace(event, action="CREATE_TABLE")
    columns_of: dict[str, set[EntityRef]] = {}
    named = itertools.chain(run.retired_columns, *((edge.source, edge.target) for execution in run.executions
                                                   for edge in execution.columns))
    for column in named:
        table = field_table(column)
        if table is not None:
            columns_of.setdefault(table.identity, set()).add(column)
    for execution in executions:
        when = execution.ended or execution.started
        if when is None:
            continue
        for event in execution.catalog_events:
            if last_action.get(event.qualified_name) is not event and (
                    event.action == "DROP_DATABASE" or event.qualified_name in views):
                # created again later in this application: a database has no incarnations, and
                # a view defined again is replaced_views' (its earlier definition's lineage withdrawn)
                continue
            if event.action == "DROP_DATABASE":
                yield Deletion(EntityRef(SourceType.HIVE, event.qualified_name, ElementType.DATABASE), when)
            elif event.action in ("DROP_TABLE", "RENAME_TABLE"):
                table = EntityRef(SourceType.HIVE, event.qualified_name, ElementType.TABLE)
                yield Deletion(table, when)
                for column in sorted(columns_of.get(table.identity, ()), key=lambda c: c.qualified_name):
                    yield Deletion(column, when)


@dataclasses.dataclass(frozen=True, slots=True)
class TableCreation:
    """A table an execution created (CREATE TABLE, or the new name of a RENAME): a re-creation
    when the name was dropped before, by this application or, as the index says, an earlier one
    (the Spark extractor decides it at its commit, once Solr has the lineage and the DROPs)."""

    table: EntityRef
    #: the creating execution's end (its start if it did not end): as a DROP's time is taken
    created: datetime
    #: when this application last dropped the name before, if it did
    dropped: datetime | None = None
    #: when this application created the name before that drop, if it did
    earlier_created: datetime | None = None


def created_tables(run: ApplicationRun, executions: Iterable[SqlExecution]) -> Iterator[TableCreation]:
    """The tables `executions` created, each with what the application did to its name before
    (the executions it still holds, in the order they ran)."""
    wanted = {e.execution_id for e in executions if any(c.action in _CREATING for c in e.catalog_events)}
    if not wanted:  # the common batch: nothing created, nothing to scan
        return
    views = defined_views(run)  # defined again: replaced_views', not incarnations
    last_drop: dict[str, datetime] = {}
    last_create: dict[str, datetime] = {}
    for execution in sorted(run.executions, key=lambda e: e.execution_id):
        when = execution.ended or execution.started
        if when is None:
            continue
        for event in execution.catalog_events:
            if event.action in ("DROP_TABLE", "RENAME_TABLE"):
                last_drop[event.qualified_name] = when
            name = event.new_qualified_name if event.action == "RENAME_TABLE" else event.qualified_name
            if event.action not in _CREATING or name is None or name in views:
                continue
            if execution.execution_id in wanted:
                dropped_at = last_drop.get(name)
                earlier = last_create.get(name)
                yield TableCreation(EntityRef(SourceType.HIVE, name, ElementType.TABLE), when, dropped_at,
                                    earlier if earlier is not None and dropped_at is not None
                                    and earlier <= dropped_at else None)
            last_create[name] = when


def defined_views(run: ApplicationRun) -> frozenset[str]:
    """Qualified names of the views the application's executions defined (a VIEW output)."""
    return frozenset(dataset.ref.qualified_name for execution in run.executions for dataset in execution.outputs
                     if dataset.ref.type is ElementType.VIEW)


#: catalog actions that give a table its name
_CREATING = frozenset({"CREATE_TABLE", "RENAME_TABLE"})


def created(run: ApplicationRun) -> frozenset[str]:
    """Qualified names of the databases and tables the application created (CREATE, or the new
    name of a RENAME): what a DROP in its own log may flag deleted without asking the index."""
    names = set()
    for event in run.catalog_events:
        if event.action in ("CREATE_TABLE", "CREATE_DATABASE"):
            names.add(event.qualified_name)
        elif event.new_qualified_name:
            names.add(event.new_qualified_name)
    return frozenset(names)


def _catalog_text(events: Iterable[CatalogEvent]) -> str:
    return "; ".join(f"{e.action} {e.qualified_name}" + (f" -> {e.new_qualified_name}" if e.new_qualified_name else "")
                     for e in events)


def process_lines(lines: Iterable[str | bytes], *, cluster: str, default_fs: str = "",
                  extractor_run_id: str | None = None, source_name: str = "") -> tuple[ApplicationRun, list[Record]]:
    """One application's log lines -> (what was understood, its records)."""
    processor = ApplicationProcessor(cluster=cluster, default_fs=default_fs, source_name=source_name)
    processor.feed_lines(lines)
    run = processor.finish()
    return run, list(records(run, extractor_run_id=extractor_run_id))


def stubs_for(emitted: Iterable[Record], extractor_run_id: str | None, log_owner: str = "",
              known_from: str = "spark", seen: set[str] | None = None) -> Iterator[Record]:
    """Stubs for the unlinked dataset and column endpoints of `emitted` relations.

    Tables and paths a job read or wrote, and the columns of column-level edges, get an element
    (indexed only if absent, see ElementStub) and columns a PARENT_CHILD from their table (or,
    for a path's columns `<path>#<column>`, its directory or file), so lineage can start from
    them and `--columns` finds them under their dataset. A stub carries the owner of the log
    that first named it (`logOwner`): a later DROP in a log flags it only for that owner.
    `known_from` names the source in the stub mark (the OpenLineage intake reuses this).
    `seen`: identities the caller already stubbed (and adds to): a lineage-log pass names the
    same tables query after query, and a stub is written once per pass, not per query.
    """
    if seen is None:
        seen = set()
    #: dataset endpoints by identity: a column's table is named by its FIELD ref as a TABLE, and
    #: may be a VIEW the execution defined (its dataset relation comes before its column edges)
    datasets: dict[str, EntityRef] = {}
    for record in emitted:
        if not isinstance(record, Relation) or record.type not in (RelationType.DATA_FLOW, RelationType.CONTROL_FLOW):
            continue
        for ref, linked in ((record.endpoint1, record.linked1), (record.endpoint2, record.linked2)):
            if ref.type is not ElementType.FIELD:
                datasets.setdefault(ref.identity, ref)
            if linked or ref.identity in seen:
                continue
            seen.add(ref.identity)
            yield ElementStub(_stub_element(ref, extractor_run_id, log_owner, known_from))
            table = field_table(ref)
            if table is not None:
                table = datasets.get(table.identity, table)
                if table.identity not in seen:
                    seen.add(table.identity)
                    yield ElementStub(_stub_element(table, extractor_run_id, log_owner, known_from))
                yield Relation(RelationType.PARENT_CHILD, table, ref, extractor_run_id=extractor_run_id)


def _stub_element(ref: EntityRef, extractor_run_id: str | None, log_owner: str, known_from: str = "spark") -> Element:
    props = {STUB_MARK: known_from, **({LOG_OWNER: log_owner} if log_owner else {})}
    return Element(ref.source_type, ref.type, ref.qualified_name,
                   name=display_name(ref.qualified_name, ref.type, ref.source_type), extractor_run_id=extractor_run_id,
                   properties=props)

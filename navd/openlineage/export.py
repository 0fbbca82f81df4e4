"""navd's index -> OpenLineage RunEvents (`navd export openlineage`, docs/sources/openlineage.md).

Every OPERATION_EXECUTION (a Spark application run or SQL execution, a run that came in through
the intake, ...) becomes its RunEvents: START at its start, then COMPLETE / FAIL / ABORT at its
end, the job its OPERATION (INSTANCE_OF; a Spark SQL execution's is its application's), the
`parent` run facet its parent execution, the terminal event (or START, for a run not ended)
carrying its inputs and outputs with their `schema` facet (the FIELD elements under them) and,
on outputs, the `columnLineage` facet built from the column edges the execution wrote
(mapping.edge_transformations: the intake's table read backwards). Datasets are named by
names.openlineage_dataset_name, the inverse of the intake's naming, so an exported event posted
back to the intake lands on the same navd elements. A Hive view's definition (the HMS
extractor's view lineage, which has no execution) is one COMPLETE run of a job named as the view,
at the view's last change.

The index is read in pages (a cursor over the executions; the relations and fields of each page
of executions by one filtered scan each), so memory holds one page, never the whole index.
`run_events` builds the events of one execution from what was read: pure, no I/O.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from navd.index.client import SolrIndex, batches
from navd.index.documents import endpoint_field
from navd.index.queries import (child_executions, column_edges_of, data_flows_at, dataset_flows_into,
                                execution_flows_with, exported_elements, fields_hung_under, fields_under,
                                instances_of, operations_of_executions, parent_executions_of,
                                undiscriminated_column_edges_into, views_reading)
from navd.model import ElementType, EntityRef, SourceType
from navd.names import PATH_SOURCES, field_ref, field_table, openlineage_dataset_name, split_field, split_path_field
from navd.openlineage.mapping import edge_transformations
from navd.openlineage.schema import SPEC_VERSION

#: the `producer` of exported events and facets (a URI, as the spec asks)
PRODUCER = "https://github.com/navd/navd"
SCHEMA_URL = f"https://openlineage.io/spec/{SPEC_VERSION}/OpenLineage.json#/$defs/RunEvent"
_FACET_URLS: Mapping[str, str] = {
    "schema": "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
    "columnLineage": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json"
                     "#/$defs/ColumnLineageDatasetFacet",
    "parent": "https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
    "errorMessage": "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
    "nominalTime": "https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet",
    "sql": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet",
}
#: a Spark `outcome` (extractors/spark/events.py) or a YARN `finalStatus` (extractors/yarn) -> the
#: terminal eventType; others (RUNNING, INCOMPLETE, UNDEFINED) have none yet
_OUTCOME_STATES: Mapping[str, str] = {"SUCCEEDED": "COMPLETE", "FAILED": "FAIL", "KILLED": "ABORT"}
_TERMINAL = frozenset({"COMPLETE", "FAIL", "ABORT"})
#: runIds of executions that did not come from OpenLineage: a UUID5 of their qualified name in
#: this namespace, so the same execution exports the same runId every time
RUN_ID_NAMESPACE = uuid.UUID("6b1e3f52-8d0a-5c52-9a55-6e61766430a1")
#: executions read (and their relations and fields fetched) per page
PAGE = 200


@dataclasses.dataclass(frozen=True)
class ExportSettings:
    """`[openlineage] namespaces` (namespace -> cluster), read backwards to name Hive datasets."""

    clusters: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Dataset:
    """An input or output of an execution as navd knows it: its ref, its element's properties
    (an OPENLINEAGE dataset's namespace and name) and its columns (name, data type)."""

    ref: EntityRef
    properties: Mapping[str, str]
    columns: tuple[tuple[str, str | None], ...]


@dataclasses.dataclass(frozen=True)
class ColumnEdge:
    """A stored FIELD DATA_FLOW / CONTROL_FLOW written by an execution."""

    kind: str
    source: EntityRef
    target: EntityRef
    subtype: str | None
    dependency_type: str | None
    expression: str | None


@dataclasses.dataclass(frozen=True)
class Execution:
    """What one execution's events are built from."""

    doc: Mapping[str, Any]
    job: tuple[str, str]
    parent: tuple[tuple[str, str], str] | None  # (job, runId) of the parent run
    inputs: tuple[Dataset, ...]
    outputs: tuple[Dataset, ...]
    columns: tuple[ColumnEdge, ...]


# -- pure: one execution -> its events --------------------------------------------------------

def run_id(doc: Mapping[str, Any]) -> str:
    """An execution's runId: its own for a run from OpenLineage, else a UUID5 of its name."""
    props = stored_properties(doc)
    if doc.get("sourceType") == SourceType.OPENLINEAGE.value and props.get("runId"):
        return props["runId"]
    return str(uuid.uuid5(RUN_ID_NAMESPACE, str(doc["qualifiedName"])))


def job_name(operation: Mapping[str, Any] | None, execution: Mapping[str, Any]) -> tuple[str, str]:
    """The OpenLineage (namespace, name) of the job of `execution`, its OPERATION `operation`:
    an OpenLineage job's own; `spark://app` is (`spark`, `app`); without an operation, the
    execution's qualified name split so."""
    props = stored_properties(execution)
    if execution.get("sourceType") == SourceType.OPENLINEAGE.value and props.get("namespace") and props.get("job"):
        return props["namespace"], props["job"]
    name = str((operation or execution)["qualifiedName"])
    scheme, separator, rest = name.partition("://")
    return (scheme, rest) if separator and rest else (str(execution.get("sourceType", "navd")).lower(), name)


def _facet(kind: str, **fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": _FACET_URLS[kind], **fields}


def _state(doc: Mapping[str, Any]) -> str | None:
    """The terminal eventType of an execution; None for one still running (or not known)."""
    props = stored_properties(doc)
    if doc.get("sourceType") == SourceType.OPENLINEAGE.value:
        return props.get("state") if props.get("state") in _TERMINAL else None
    outcome = props.get("outcome") or props.get("finalStatus")
    if outcome is None:
        return "COMPLETE" if doc.get("ended") else None  # an end and no outcome of its own
    return _OUTCOME_STATES.get(outcome)


def run_events(execution: Execution, settings: ExportSettings) -> list[dict[str, Any]]:
    """START (when the execution has a start) and its terminal event (when it ended), the
    datasets on the last of them."""
    doc = execution.doc
    props = stored_properties(doc)
    run_facets: dict[str, Any] = {}
    if execution.parent is not None:
        (namespace, name), parent_run = execution.parent
        run_facets["parent"] = _facet("parent", run={"runId": parent_run},
                                      job={"namespace": namespace, "name": name})
    if props.get("nominalStartTime"):
        nominal = {"nominalStartTime": props["nominalStartTime"]}
        if props.get("nominalEndTime"):
            nominal["nominalEndTime"] = props["nominalEndTime"]
        run_facets["nominalTime"] = _facet("nominalTime", **nominal)
    job: dict[str, Any] = {"namespace": execution.job[0], "name": execution.job[1]}
    if doc.get("queryText"):
        job["facets"] = {"sql": _facet("sql", query=str(doc["queryText"]))}
    run = {"runId": run_id(doc), **({"facets": run_facets} if run_facets else {})}
    state = _state(doc)
    started = doc.get("started")
    ended = doc.get("ended") or props.get("stateTime") or doc.get("lastIndexed")
    moments: list[tuple[str, str]] = []
    if started:
        moments.append(("START", str(started)))
    if state is not None and ended:
        moments.append((state, str(ended)))
    if not moments:  # neither start nor end known: the run as of when navd last wrote it
        moments.append(("OTHER", str(doc.get("lastIndexed") or props.get("stateTime") or _EPOCH)))
    events = []
    for number, (event_type, at) in enumerate(moments):
        event: dict[str, Any] = {"eventType": event_type, "eventTime": at, "producer": PRODUCER,
                                 "schemaURL": SCHEMA_URL, "run": run, "job": job, "inputs": [], "outputs": []}
        error = props.get("error") or props.get("diagnostics")  # (YARN's diagnostics)
        if event_type in ("FAIL", "ABORT") and error:
            event["run"] = {**run, "facets": {**run_facets, "errorMessage": _facet(
                "errorMessage", message=error,
                programmingLanguage=props.get("errorLanguage") or _language(doc))}}
        if number == len(moments) - 1:
            event["inputs"] = [_dataset(d, settings, ()) for d in execution.inputs]
            event["outputs"] = [_dataset(d, settings, execution.columns) for d in execution.outputs]
        events.append(event)
    return events


_EPOCH = "1970-01-01T00:00:00Z"


def _language(doc: Mapping[str, Any]) -> str:
    return "JVM" if doc.get("sourceType") == SourceType.SPARK.value else "unknown"


def _dataset(dataset: Dataset, settings: ExportSettings, columns: Iterable[ColumnEdge]) -> dict[str, Any]:
    namespace, name = openlineage_dataset_name(dataset.ref, settings.clusters, dataset.properties)
    facets: dict[str, Any] = {}
    if dataset.columns:
        facets["schema"] = _facet("schema", fields=[{"name": n, **({"type": t} if t else {})}
                                                    for n, t in dataset.columns])
    lineage = _column_lineage(dataset.ref, columns, settings)
    if lineage:
        facets["columnLineage"] = _facet("columnLineage", fields=lineage)
    return {"namespace": namespace, "name": name, **({"facets": facets} if facets else {})}


def _column_lineage(target: EntityRef, columns: Iterable[ColumnEdge],
                    settings: ExportSettings) -> dict[str, Any]:
    """The columnLineage facet's `fields` of the output `target`: per written column its input
    fields, each with the transformations of the edges between them, in a stable order."""
    fields: dict[str, dict[tuple[str, str, str], list[dict[str, str]]]] = {}
    for edge in columns:
        out = split_column(edge.target)
        source = split_column(edge.source)
        if out is None or source is None or out[0].identity != target.identity:
            continue
        namespace, name = openlineage_dataset_name(source[0], settings.clusters)
        transformations = fields.setdefault(out[1], {}).setdefault((namespace, name, source[1]), [])
        transformations.extend(edge_transformations(edge.kind, edge.subtype, edge.dependency_type, edge.expression))
    return {column: {"inputFields": [{"namespace": ns, "name": n, "field": f, "transformations": t}
                                     for (ns, n, f), t in sorted(inputs.items())]}
            for column, inputs in sorted(fields.items())}


def split_column(field: EntityRef) -> tuple[EntityRef, str] | None:
    """A FIELD ref -> (its dataset's ref, the column)."""
    table = field_table(field)
    if table is None:
        return None
    split = (split_path_field(field.qualified_name) if field.source_type in (*PATH_SOURCES, SourceType.OPENLINEAGE)
             else split_field(field.qualified_name, field.source_type))
    return (table, split[1]) if split is not None else None


def stored_properties(doc: Mapping[str, Any]) -> dict[str, str]:
    """An element document's properties (its JSON `properties` field); {} when absent or unreadable."""
    raw = doc.get("properties")
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


# -- reading the index page by page ----------------------------------------------------------

def execution_filters(since: datetime | None = None, identities: Sequence[str] | None = None) -> list[str]:
    """Solr filters of the executions to export: not deleted, not stubs; started or ended at or
    after `since`; one of `identities`."""
    return exported_elements(ElementType.OPERATION_EXECUTION, ("started", "ended"), since, identities)


def view_filters(since: datetime | None = None, identities: Sequence[str] | None = None) -> list[str]:
    """Solr filters of the Hive views to export (their definition is their lineage: one run
    each): not deleted, not stubs, with a definition; created or changed at or after `since`;
    one of `identities`."""
    return exported_elements(ElementType.VIEW, ("created", "lastModified"), since, identities, with_definition=True)


def export_events(index: SolrIndex, settings: ExportSettings, filters: Sequence[str],
                  views: Sequence[str] | None = None, page: int = PAGE) -> Iterator[dict[str, Any]]:
    """The RunEvents of the executions matching `filters` (execution_filters), then those of the
    views matching `views` (view_filters)."""
    yield from execution_events(index, settings, filters, page)
    if views is not None:
        yield from view_events(index, settings, views, page)


def execution_events(index: SolrIndex, settings: ExportSettings, filters: Sequence[str],
                     page: int = PAGE) -> Iterator[dict[str, Any]]:
    """The RunEvents of the executions matching `filters`, in identity order, a page of
    executions at a time."""
    for chunk in batches(index.scan("elements", filters=list(filters), page_size=page), page):
        for execution in _read_page(index, chunk):
            yield from run_events(execution, settings)


def view_events(index: SolrIndex, settings: ExportSettings, filters: Sequence[str],
                page: int = PAGE) -> Iterator[dict[str, Any]]:
    """The RunEvents of the views matching `filters` (view_filters), a page at a time."""
    for chunk in batches(index.scan("elements", filters=list(filters), page_size=page), page):
        for execution in _read_views(index, settings, chunk):
            yield from run_events(execution, settings)


def _read_views(index: SolrIndex, settings: ExportSettings, docs: list[dict[str, Any]]) -> Iterator[Execution]:
    """A view's definition as a run: the job is the view (its namespace and name), the run
    ended when the view was last changed; its inputs the datasets its definition reads (the
    DATA_FLOW into it not through an execution: the HMS extractor's), its column edges those
    into its columns without an execution (no discriminator)."""
    refs = {str(d["identity"]): EntityRef(SourceType(str(d["sourceType"])), str(d["qualifiedName"]), ElementType.VIEW)
            for d in docs}
    inputs: dict[str, list[EntityRef]] = {}
    for relation in index.scan("relations", filters=dataset_flows_into(sorted(refs))):
        inputs.setdefault(str(relation["endpoint2Id"]), []).append(_ref(relation, 1))
    views = datasets_of(index, refs)
    columns: dict[str, list[ColumnEdge]] = {}
    field_of = {}
    for view_id, view in views.items():
        for column, _type in view.columns:
            field_of[field_ref(view.ref, column).identity] = view_id
    for chunk in batches(sorted(field_of), 500):
        for relation in index.scan("relations", filters=undiscriminated_column_edges_into(chunk)):
            props = stored_properties(relation)
            columns.setdefault(field_of[str(relation["endpoint2Id"])], []).append(ColumnEdge(
                str(relation["type"]), _ref(relation, 1), _ref(relation, 2), props.get("subtype"),
                relation.get("dependencyType"), relation.get("expression")))
    sources = datasets_of(index, {r.identity: r for refs_ in inputs.values() for r in refs_})
    for doc in docs:
        identity = str(doc["identity"])
        if identity not in inputs:
            continue  # no lineage of its own (a definition navd could not read)
        run = {"identity": identity, "qualifiedName": doc["qualifiedName"], "sourceType": doc["sourceType"],
               "ended": doc.get("lastModified") or doc.get("created") or doc.get("lastIndexed"),
               "queryText": doc.get("queryText"), "lastIndexed": doc.get("lastIndexed")}
        job = openlineage_dataset_name(refs[identity], settings.clusters)
        yield Execution(run, job, None, _unique(sources, inputs[identity]), (views[identity],),
                        tuple(columns.get(identity, ())))


def _ref(doc: Mapping[str, Any], end: int) -> EntityRef:
    return EntityRef(SourceType(str(doc[f"endpoint{end}SourceType"])), str(doc[f"endpoint{end}QualifiedName"]),
                     ElementType(str(doc[f"endpoint{end}Type"])))


def _read_page(index: SolrIndex, docs: list[dict[str, Any]]) -> Iterator[Execution]:
    ids = [str(d["identity"]) for d in docs]
    parent_of = _parents(index, docs)
    parents = set(parent_of.values())
    parent_docs = {str(d["identity"]): d for d in index.get("elements", sorted(parents - set(ids)))} if parents else {}
    parent_docs.update({str(d["identity"]): d for d in docs})
    operations = operations_of(index, sorted(set(ids) | parents))
    inputs: dict[str, list[EntityRef]] = {}
    outputs: dict[str, list[EntityRef]] = {}
    for end, into in ((2, inputs), (1, outputs)):
        for relation in index.scan("relations", filters=data_flows_at(end, ids)):
            other = 1 if end == 2 else 2
            if relation.get(f"endpoint{other}Type") in (ElementType.FIELD.value, ElementType.OPERATION_EXECUTION.value,
                                                        ElementType.OPERATION.value):
                continue
            into.setdefault(str(relation[f"endpoint{end}Id"]), []).append(_ref(relation, other))
    by_name = {str(d["qualifiedName"]): str(d["identity"]) for d in docs}
    columns: dict[str, list[ColumnEdge]] = {}
    for relation in index.scan("relations", filters=column_edges_of(sorted(by_name))):
        props = stored_properties(relation)
        columns.setdefault(by_name[str(relation["discriminator"])], []).append(ColumnEdge(
            str(relation["type"]), _ref(relation, 1), _ref(relation, 2), props.get("subtype"),
            relation.get("dependencyType"), relation.get("expression")))
    datasets = datasets_of(index, {r.identity: r for refs in (*inputs.values(), *outputs.values()) for r in refs})
    for doc in docs:
        identity = str(doc["identity"])
        job = job_name(operations.get(identity) or operations.get(parent_of.get(identity, "")), doc)
        parent = None
        parent_doc = parent_docs.get(parent_of.get(identity, ""))
        if parent_doc is not None:
            parent = (job_name(operations.get(str(parent_doc["identity"])), parent_doc), run_id(parent_doc))
        yield Execution(doc, job, parent, _unique(datasets, inputs.get(identity, ())),
                        _unique(datasets, outputs.get(identity, ())), tuple(columns.get(identity, ())))


def executions_of(index: SolrIndex, doc: Mapping[str, Any]) -> list[str]:
    """The identities of the executions an element stands for (export_openlineage's `entity`)."""
    identity, kind = str(doc["identity"]), doc.get("type")
    if kind == "OPERATION_EXECUTION":
        roots = [identity]
    elif kind == "OPERATION":
        roots = [str(r["endpoint2Id"]) for r in index.scan("relations", fl="endpoint2Id", filters=instances_of(identity))]
    else:
        return sorted({str(r[endpoint_field(end, "Id")]) for end in (1, 2) for r in index.scan(
            "relations", fl=f"{endpoint_field(1, 'Id')},{endpoint_field(2, 'Id')}",
            filters=execution_flows_with(identity, end))})
    children = [str(d["identity"]) for chunk in batches(roots, 500) for d in index.scan(
        "elements", fl="identity", filters=child_executions(chunk))]
    return sorted(set(roots) | set(children))


def views_of(index: SolrIndex, doc: Mapping[str, Any]) -> list[str]:
    """The identities of the views an element stands for (export_openlineage's `entity`): a view
    itself, the views whose definition reads a dataset."""
    identity = str(doc["identity"])
    if doc.get("type") == ElementType.VIEW.value:
        return [identity]
    if doc.get("type") in (ElementType.OPERATION.value, ElementType.OPERATION_EXECUTION.value):
        return []
    return sorted({str(r["endpoint2Id"]) for r in index.scan("relations", fl="endpoint2Id",
                                                             filters=views_reading(identity))})


def operations_of(index: SolrIndex, execution_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Execution identity -> its OPERATION (`{"qualifiedName"}`, from OPERATION -INSTANCE_OF->
    execution), for those of `execution_ids` that have one."""
    operations: dict[str, dict[str, Any]] = {}
    for chunk in batches(execution_ids, 500):
        for relation in index.scan("relations", fl="endpoint1QualifiedName,endpoint2Id",
                                   filters=operations_of_executions(chunk)):
            operations[str(relation["endpoint2Id"])] = {"qualifiedName": relation["endpoint1QualifiedName"]}
    return operations


def jobs_of(index: SolrIndex, executions: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """Execution identity -> the OpenLineage (namespace, name) of its job (`job_name`): its
    operation's, or its parent execution's (a Spark SQL execution's is its application's)."""
    ids = [str(d["identity"]) for d in executions]
    operations = operations_of(index, sorted(set(ids) | {str(d["parentId"]) for d in executions if d.get("parentId")}))
    return {str(d["identity"]): job_name(operations.get(str(d["identity"])) or operations.get(str(d.get("parentId", ""))),
                                         d) for d in executions}


def _parents(index: SolrIndex, docs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Execution identity -> its parent execution's: the element's parent (a Spark SQL
    execution's application run), else a PARENT_CHILD from an execution (the `parent` run facet
    of an event the intake took)."""
    parent_of = {str(d["identity"]): str(d["parentId"]) for d in docs if d.get("parentId")}
    orphans = [str(d["identity"]) for d in docs if str(d["identity"]) not in parent_of]
    if orphans:
        for relation in index.scan("relations", fl="endpoint1Id,endpoint2Id", filters=parent_executions_of(orphans)):
            parent_of.setdefault(str(relation["endpoint2Id"]), str(relation["endpoint1Id"]))
    return parent_of


def _unique(datasets: Mapping[str, Dataset], refs: Iterable[EntityRef]) -> tuple[Dataset, ...]:
    seen = dict.fromkeys(r.identity for r in refs)
    return tuple(sorted((datasets[i] for i in seen), key=lambda d: d.ref.qualified_name))


def datasets_of(index: SolrIndex, refs: Mapping[str, EntityRef]) -> dict[str, Dataset]:
    """The datasets `refs` name, with their stored properties and columns (FIELD elements under
    them, in ordinal then name order): those whose parent is the dataset (the HMS extractor's)
    and those a PARENT_CHILD hangs under it (the stubs a Spark execution or an event named)."""
    if not refs:
        return {}
    stored = {str(d["identity"]): d for d in index.get("elements", sorted(refs))}
    fields: dict[str, tuple[str, dict[str, Any]]] = {}  # field identity -> (dataset identity, its document)
    hung: dict[str, str] = {}  # field identity -> dataset identity, from PARENT_CHILD
    for chunk in batches(sorted(refs), 500):
        for doc in index.scan("elements", filters=fields_under(chunk)):
            fields[str(doc["identity"])] = (str(doc["parentId"]), doc)
        for relation in index.scan("relations", fl="endpoint1Id,endpoint2Id", filters=fields_hung_under(chunk)):
            hung.setdefault(str(relation["endpoint2Id"]), str(relation["endpoint1Id"]))
    for chunk in batches(sorted(set(hung) - set(fields)), 500):
        for doc in index.get("elements", chunk):
            if not doc.get("deleted"):
                fields[str(doc["identity"])] = (hung[str(doc["identity"])], doc)
    columns: dict[str, list[tuple[int, str, str | None]]] = {}
    for parent, doc in fields.values():
        field = EntityRef(SourceType(str(doc["sourceType"])), str(doc["qualifiedName"]), ElementType.FIELD)
        split = split_column(field)
        if split is None:
            continue
        ordinal = stored_properties(doc).get("ordinalPosition", "")
        columns.setdefault(parent, []).append((int(ordinal) if ordinal.isdigit() else 1 << 30, split[1],
                                               doc.get("dataType")))
    return {identity: Dataset(ref, stored_properties(stored.get(identity, {})),
                              tuple((n, t) for _o, n, t in sorted(columns.get(identity, []))))
            for identity, ref in refs.items()}

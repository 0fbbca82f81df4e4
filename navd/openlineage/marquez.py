"""Marquez's read endpoints over navd's index: `GET /api/v1/lineage` and `GET
/api/v1/column-lineage` answer in Marquez's shape (docs/sources/openlineage.md), so Marquez's clients
read navd.

The shapes are Marquez's (MarquezProject/marquez at commit a89b89cad, spec/openapi.yml:
LineageGraph, GraphNode, GraphEdge, Dataset, Job; api/.../service/LineageService.java and
ColumnLineageService.java for the edges): `{"graph": [{"id", "type", "data", "inEdges",
"outEdges"}]}`. In the lineage graph an edge goes from upstream (`origin`) to downstream
(`destination`), datasets and jobs alternating; in the column-lineage graph, as Marquez builds
it, every edge of a node has the node itself as `origin` (inEdges point at its inputs, outEdges
at what it feeds).

The walk is navd's (navd/lineage/rules.py, the caps of /api/lineage); executions become their jobs
(export.jobs_of) and datasets and columns their OpenLineage names (names.openlineage_dataset_name),
the names the export writes and the intake reads.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from navd.errors import EntityNotFound, UsageError
from navd.index.client import SolrIndex, batches
from navd.index.queries import data_flows_from, fields_hung_under
from navd.lineage.rules import LineageGraph, LineageOptions, Node
from navd.lineage.rules import lineage as walk_lineage
from navd.lineage.store import SolrLineageStore
from navd.model import ElementType, EntityRef, SourceType
from navd.names import (
    field_ref,
    identity,
    openlineage_dataset_name,
    openlineage_dataset_ref,
    openlineage_job_ref,
)
from navd.openlineage import marquez_store
from navd.openlineage.export import (
    RUN_ID_NAMESPACE,
    Dataset,
    ExportSettings,
    datasets_of,
    executions_of,
    jobs_of,
    split_column,
    stored_properties,
)
from navd.openlineage.mapping import edge_transformations

#: Marquez's NodeId split (NodeId.java): at a ':' not followed by '//' or a digit, so
#: `dataset:hdfs://nn:8020:/data` is (dataset, hdfs://nn:8020, /data)
_NODE_ID_SPLIT = re.compile(r":(?!//|\d)")
_EPOCH = "1970-01-01T00:00:00Z"
_OPERATIONS = (ElementType.OPERATION.value, ElementType.OPERATION_EXECUTION.value)


def parse_node_id(value: str, kinds: Sequence[str]) -> tuple[str, str, str, str | None]:
    """`dataset:<ns>:<name>`, `job:<ns>:<name>`, `datasetField:<ns>:<name>:<field>` -> (kind,
    namespace, name, field); UsageError naming `nodeId` for anything else or a kind not in
    `kinds` (navd keeps no versions: a `#<version>` is refused too)."""
    kind, _sep, _rest = value.partition(":")
    parts = _NODE_ID_SPLIT.split(value)
    expected = 4 if kind == "datasetField" else 3
    if kind not in kinds or len(parts) < expected or not all(parts[1:]) or "#" in value:
        shapes = {"dataset": "dataset:<namespace>:<name>", "job": "job:<namespace>:<name>",
                  "datasetField": "datasetField:<namespace>:<name>:<field>"}
        raise UsageError(f"nodeId: {value[:200]!r} is not {' or '.join(shapes[k] for k in kinds)}")
    if kind == "datasetField":  # the field is the last part; a name may hold ':' (kept whole)
        return kind, parts[1], ":".join(parts[2:-1]), parts[-1]
    return kind, parts[1], ":".join(parts[2:]), None


def node_id(kind: str, namespace: str, name: str, field: str | None = None) -> str:
    return ":".join([kind, namespace, name, *([field] if field is not None else [])])


# -- GET /api/v1/lineage ----------------------------------------------------------------------

def lineage(index: SolrIndex, settings: ExportSettings, default_cluster: str, value: str, depth: int,
            max_nodes: int, as_of: datetime | None = None) -> dict[str, Any]:
    """Marquez's LineageGraph of a dataset or job node, `depth` dataset hops either way, at
    most `max_nodes` navd nodes walked; as it stood at `as_of` when given (navd's own parameter:
    Marquez has none). EntityNotFound (404) for a node navd does not hold."""
    kind, namespace, name, _ = parse_node_id(value, ("dataset", "job"))
    if kind == "dataset":
        roots = [_existing(index, openlineage_dataset_ref(namespace, name, settings.clusters, default_cluster).identity,
                           value)]
    else:
        roots = _job_executions(index, namespace, name, value)
    options = LineageOptions(direction="both", depth=depth, operations=True, max_nodes=max_nodes, as_of=as_of)
    nodes: dict[str, Node] = {}
    flows: set[tuple[str, str]] = set()
    for root in roots:
        if len(nodes) >= max_nodes:
            break
        graph = walk_lineage(SolrLineageStore(index), root, options)
        nodes.update((n.id, n) for n in graph.nodes)
        flows.update((e.source, e.target) for e in graph.edges if e.type == "DATA_FLOW")
    return {"graph": _lineage_nodes(index, settings, nodes, flows)}


def _existing(index: SolrIndex, element_id: str, value: str) -> str:
    if not index.get("elements", [element_id]):
        raise EntityNotFound(f"nodeId: no dataset {value[:200]!r} in navd")
    return element_id


def _job_executions(index: SolrIndex, namespace: str, name: str, value: str) -> list[str]:
    """The executions of the job a `job:` node names: an OpenLineage job's, or (the export's
    naming, `spark` + `app`) the operation `spark://app`'s and the executions under them."""
    candidates = [openlineage_job_ref(namespace, name).identity,
                  *(identity(s, f"{namespace}://{name}") for s in SourceType if s.value.lower() == namespace)]
    docs = index.get("elements", candidates)
    operation = next((d for d in docs if d.get("type") == ElementType.OPERATION.value), None)
    if operation is None:
        raise EntityNotFound(f"nodeId: no job {value[:200]!r} in navd")
    return executions_of(index, operation)


def _lineage_nodes(index: SolrIndex, settings: ExportSettings, nodes: Mapping[str, Node],
                   flows: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    executions = [i for i, n in nodes.items() if n.type == ElementType.OPERATION_EXECUTION.value]
    execution_docs = index.get("elements", sorted(executions)) if executions else []
    jobs = jobs_of(index, execution_docs)
    datasets = {i: n for i, n in nodes.items() if n.type not in (*_OPERATIONS, ElementType.FIELD.value)}
    refs = {i: EntityRef(SourceType(n.source_type), n.qualified_name, ElementType(n.type)) for i, n in datasets.items()}
    known = datasets_of(index, refs)
    stored = {str(d["identity"]): d for d in index.get("elements", sorted(refs))} if refs else {}
    ids: dict[str, str] = {i: node_id("job", *job) for i, job in jobs.items()}
    for i, dataset in known.items():
        ids[i] = node_id("dataset", *openlineage_dataset_name(dataset.ref, settings.clusters, dataset.properties))
    edges = sorted({(ids[a], ids[b]) for a, b in flows if a in ids and b in ids and ids[a] != ids[b]})
    inputs: dict[str, set[str]] = {}
    outputs: dict[str, set[str]] = {}
    for origin, destination in edges:
        outputs.setdefault(origin, set()).add(destination)
        inputs.setdefault(destination, set()).add(origin)
    graph: dict[str, dict[str, Any]] = {}
    for i, job in jobs.items():
        nid = ids[i]
        data = _job_data(job, execution_docs, i, inputs.get(nid, ()), outputs.get(nid, ()),
                         marquez_store.latest_run_of(index, *job))
        graph[nid] = _node(nid, "JOB", data, inputs, outputs)
    for i, dataset in known.items():
        nid = ids[i]
        graph[nid] = _node(nid, "DATASET", _dataset_data(nid, dataset, stored.get(i, {})), inputs, outputs)
    return [graph[k] for k in sorted(graph)]


def _node(nid: str, kind: str, data: dict[str, Any], inputs: Mapping[str, set[str]],
          outputs: Mapping[str, set[str]]) -> dict[str, Any]:
    return {"id": nid, "type": kind, "data": data,
            "inEdges": [{"origin": o, "destination": nid} for o in sorted(inputs.get(nid, ()))],
            "outEdges": [{"origin": nid, "destination": d} for d in sorted(outputs.get(nid, ()))]}


def _id_of(nid: str) -> dict[str, str]:
    _kind, namespace, name, _ = parse_node_id(nid, ("dataset", "job"))
    return {"namespace": namespace, "name": name}


def _job_data(job: tuple[str, str], docs: Sequence[Mapping[str, Any]], execution: str,
              inputs: Iterable[str], outputs: Iterable[str], latest_run: dict[str, Any] | None) -> dict[str, Any]:
    """Marquez's Job (openapi.yml `Job`) as navd knows it: no versions, no location; the
    latest run that of an OpenLineage job (the UI colours the node by its state)."""
    doc = next((d for d in docs if str(d["identity"]) == execution), {})
    at = str(doc.get("lastIndexed") or _EPOCH)
    namespace, name = job
    return {"id": {"namespace": namespace, "name": name}, "type": "BATCH", "name": name, "simpleName": name,
            "parentJobName": None, "parentJobUuid": None, "createdAt": at, "updatedAt": at,
            "namespace": namespace, "inputs": [_id_of(i) for i in sorted(inputs)],
            "outputs": [_id_of(o) for o in sorted(outputs)], "location": None, "context": {},
            "description": doc.get("description"), "latestRun": latest_run,
            "latestRuns": [latest_run] if latest_run else [], "facets": marquez_store.job_facets(doc),
            "currentVersion": None}


def dataset_version(identity: str, dataset: Dataset) -> str:
    """The version navd gives a dataset's current state (it keeps no other): a UUID5 of the
    element and its columns, so it changes when the schema does and is the same on every read."""
    return str(uuid.uuid5(RUN_ID_NAMESPACE, "\n".join([identity, *(f"{n}\t{t or ''}" for n, t in dataset.columns)])))


def _dataset_data(nid: str, dataset: Dataset, doc: Mapping[str, Any]) -> dict[str, Any]:
    """Marquez's Dataset (openapi.yml `Dataset`): navd's element, its columns as `fields`, its
    current state as `currentVersion`."""
    ident = _id_of(nid)
    at = str(doc.get("lastIndexed") or _EPOCH)
    return {"id": ident, "type": "DB_TABLE",  # Marquez's DatasetType: DB_TABLE or STREAM
            "name": ident["name"], "physicalName": ident["name"], "createdAt": str(doc.get("created") or at),
            "updatedAt": at, "namespace": ident["namespace"], "sourceName": ident["namespace"],
            "fields": [{"name": n, "type": t, "tags": [], "description": None} for n, t in dataset.columns],
            "tags": [], "lastModifiedAt": doc.get("lastModified"), "lastLifecycleState": None,
            "description": doc.get("description"), "currentVersion": dataset_version(dataset.ref.identity, dataset),
            "columnLineage": None,
            "facets": {"schema": {"fields": [{"name": n, **({"type": t} if t else {})} for n, t in dataset.columns]}}
            if dataset.columns else {},
            "deleted": bool(doc.get("deleted", False))}


# -- GET /api/v1/namespaces/{ns}/datasets[/{name}[/versions]] ----------------------------------

#: the elements that are runs and jobs (the other end of a dataset's DATA_FLOW through a run)
_OPENLINEAGE_OPERATIONS = (f"SourceType:{SourceType.OPENLINEAGE.value}",
                           f"Type:({ElementType.OPERATION.value} OR {ElementType.OPERATION_EXECUTION.value})")


def _reported_datasets(index: SolrIndex) -> list[str]:
    """The identities of the datasets OpenLineage events reported: those read or written by an
    OpenLineage run or job (DATA_FLOW, columns left out), and those only OpenLineage knows."""
    found: set[str] = set()
    for end, other in ((1, 2), (2, 1)):
        facets = index.search("relations", "type:DATA_FLOW", rows=0, filters=[
            *(f"endpoint{other}{clause}" for clause in _OPENLINEAGE_OPERATIONS),
            f"-endpoint{end}Type:{ElementType.FIELD.value}"],
            params={"facet": "true", "facet.field": f"endpoint{end}Id", "facet.limit": -1, "facet.mincount": 1})
        found.update(str(v) for v in facets["facet_counts"]["facet_fields"][f"endpoint{end}Id"][::2])
    found.update(str(d["identity"]) for d in index.scan("elements", "*:*", fl="identity", filters=[
        f"sourceType:{SourceType.OPENLINEAGE.value}",
        f"-type:({' OR '.join((*_OPERATIONS, ElementType.FIELD.value))})"]))
    return sorted(found)


def _named_datasets(index: SolrIndex, settings: ExportSettings, ids: Sequence[str]
                    ) -> list[tuple[str, str, Dataset, dict[str, Any]]]:
    """(namespace, name, dataset, stored document) of the datasets `ids` names that navd holds."""
    stored = {str(d["identity"]): d for chunk in batches(list(ids), 500) for d in index.get("elements", chunk)
              if d.get("type") not in (*_OPERATIONS, ElementType.FIELD.value)}
    refs = {i: EntityRef(SourceType(str(d["sourceType"])), str(d["qualifiedName"]), ElementType(str(d["type"])))
            for i, d in stored.items()}
    known = datasets_of(index, refs)
    named = []
    for i, dataset in known.items():
        namespace, name = openlineage_dataset_name(dataset.ref, settings.clusters, dataset.properties)
        named.append((namespace, name, dataset, stored[i]))
    return sorted(named, key=lambda item: (item[0], item[1]))


def datasets(index: SolrIndex, settings: ExportSettings, namespace: str, *, limit: int,
             offset: int) -> marquez_store.Listing:
    """Marquez's datasets of a namespace (by name): the datasets OpenLineage events reported
    whose OpenLineage name (names.openlineage_dataset_name) is in `namespace`."""
    found = [d for d in _named_datasets(index, settings, _reported_datasets(index)) if d[0] == namespace]
    return marquez_store.Listing(tuple(_dataset_data(node_id("dataset", ns, name), dataset, doc)
                                       for ns, name, dataset, doc in found[offset:offset + limit]), len(found))


def dataset_namespaces(index: SolrIndex, settings: ExportSettings) -> dict[str, dict[str, Any]]:
    """Marquez's Namespace of each namespace of a reported dataset, by name: created when its
    first dataset was, updated when its latest one was."""
    found: dict[str, list[tuple[str, str]]] = {}
    for namespace, _name, _dataset, doc in _named_datasets(index, settings, _reported_datasets(index)):
        at = str(doc.get("lastIndexed") or _EPOCH)
        found.setdefault(namespace, []).append((str(doc.get("created") or at), at))
    return {namespace: {"name": namespace, "createdAt": min(c for c, _u in times),
                        "updatedAt": max(u for _c, u in times), "ownerName": marquez_store.OWNER,
                        "description": None, "isHidden": False}
            for namespace, times in sorted(found.items())}


def dataset(index: SolrIndex, settings: ExportSettings, default_cluster: str, namespace: str,
            name: str) -> dict[str, Any]:
    """Marquez's Dataset of (namespace, name); EntityNotFound when navd does not hold it."""
    ref = openlineage_dataset_ref(namespace, name, settings.clusters, default_cluster)
    found = _named_datasets(index, settings, [ref.identity])
    if not found:
        raise EntityNotFound(f"dataset: no dataset {name[:200]!r} in the namespace {namespace[:200]!r}")
    ns, named, data, doc = found[0]
    return _dataset_data(node_id("dataset", ns, named), data, doc)


def dataset_versions(index: SolrIndex, settings: ExportSettings, default_cluster: str, namespace: str,
                     name: str) -> list[dict[str, Any]]:
    """Marquez's DatasetVersions of a dataset: its current state, the one version navd keeps."""
    data = dataset(index, settings, default_cluster, namespace, name)
    return [{"id": {"namespace": data["namespace"], "name": data["name"], "version": data["currentVersion"]},
             "version": data["currentVersion"], "createdByRun": None, "lifecycleState": None,
             **{k: data[k] for k in ("type", "name", "physicalName", "createdAt", "namespace", "sourceName",
                                     "fields", "tags", "description", "facets")}}]


# -- GET /api/v1/search ----------------------------------------------------------------------

#: Marquez's search filters and sorts (SearchFilter, SearchSort)
SEARCH_FILTERS = ("DATASET", "JOB")
SEARCH_SORTS = ("NAME", "UPDATE_AT")


def search(index: SolrIndex, settings: ExportSettings, query: str, kind: str | None, sort: str,
           limit: int) -> dict[str, Any]:
    """Marquez's SearchResults: the jobs and datasets whose name holds `query` (any case, as
    Marquez's ILIKE), of `kind` only when given, by name or latest change first."""
    needle = query.lower()
    results: list[dict[str, Any]] = []
    if kind in (None, "JOB"):
        results += [{"type": "JOB", "name": name, "updatedAt": at, "namespace": namespace,
                     "nodeId": node_id("job", namespace, name)}
                    for namespace, name, at in marquez_store.job_names(index) if needle in name.lower()]
    if kind in (None, "DATASET"):
        results += [{"type": "DATASET", "name": name, "updatedAt": str(doc.get("lastIndexed") or _EPOCH),
                     "namespace": namespace, "nodeId": node_id("dataset", namespace, name)}
                    for namespace, name, _d, doc in _named_datasets(index, settings, _reported_datasets(index))
                    if needle in name.lower()]
    if sort == "UPDATE_AT":
        results.sort(key=lambda r: (r["updatedAt"], r["nodeId"]), reverse=True)
    else:
        results.sort(key=lambda r: (r["name"], r["namespace"], r["type"]))
    return {"totalCount": len(results), "results": results[:limit]}


# -- GET /api/v1/column-lineage ---------------------------------------------------------------

def column_lineage(index: SolrIndex, settings: ExportSettings, default_cluster: str, value: str, depth: int,
                   with_downstream: bool, max_nodes: int) -> dict[str, Any]:
    """Marquez's column-lineage graph of a field (or of every field of a dataset, or of the
    datasets a job wrote): upstream, and downstream too `with_downstream`, `depth` column hops."""
    kind, namespace, name, field = parse_node_id(value, ("datasetField", "dataset", "job"))
    if kind == "job":  # the columns of what the job's runs wrote
        executions = _job_executions(index, namespace, name, value)
        datasets = sorted({str(r["endpoint2Id"]) for chunk in batches(executions, 500) for r in index.scan(
            "relations", fl="endpoint2Id", filters=data_flows_from(chunk))})
    else:
        dataset = openlineage_dataset_ref(namespace, name, settings.clusters, default_cluster)
        datasets = [] if field is not None else [_existing(index, dataset.identity, value)]
    if field is not None:
        roots = [_existing(index, field_ref(dataset, field).identity, value)]
    else:
        roots = [str(r["endpoint2Id"]) for chunk in batches(datasets, 500) for r in index.scan(
            "relations", fl="endpoint2Id", filters=fields_hung_under(chunk))]
    options = LineageOptions(direction="both" if with_downstream else "upstream", depth=depth, columns=True,
                             max_nodes=max_nodes)
    nodes: dict[str, Node] = {}
    edges: dict[tuple[str, str], list[Any]] = {}
    for root in roots:
        if len(nodes) >= max_nodes:
            break
        graph: LineageGraph = walk_lineage(SolrLineageStore(index), root, options)
        nodes.update((n.id, n) for n in graph.nodes if n.type == ElementType.FIELD.value)
        for edge in graph.edges:
            if edge.source in nodes and edge.target in nodes and edge.type in ("DATA_FLOW", "CONTROL_FLOW"):
                edges.setdefault((edge.source, edge.target), []).append(edge)
    return {"graph": _column_nodes(index, settings, nodes, edges)}


def _column_nodes(index: SolrIndex, settings: ExportSettings, nodes: Mapping[str, Node],
                  edges: Mapping[tuple[str, str], list[Any]]) -> list[dict[str, Any]]:
    splits = {i: split for i, n in nodes.items()
              if (split := split_column(EntityRef(SourceType(n.source_type), n.qualified_name, ElementType.FIELD)))}
    # an OPENLINEAGE dataset's namespace and name are those it came with (its element's
    # properties): `duckdb:///tmp/x.duckdb` + `shop.main.t` cannot be told from the qualified name
    owned = sorted({split[0].identity for split in splits.values() if split[0].source_type is SourceType.OPENLINEAGE})
    properties = {str(d["identity"]): stored_properties(d) for d in index.get("elements", owned)} if owned else {}
    named: dict[str, tuple[str, str, str]] = {
        i: (*openlineage_dataset_name(table, settings.clusters, properties.get(table.identity)), column)
        for i, (table, column) in splits.items()}
    types = {str(d["identity"]): d.get("dataType") for d in index.get("elements", sorted(named))} if named else {}
    inputs: dict[str, list[dict[str, Any]]] = {}
    in_edges: dict[str, set[str]] = {}
    out_edges: dict[str, set[str]] = {}
    for (source, target), found in sorted(edges.items()):
        if source not in named or target not in named:
            continue
        s_id, t_id = node_id("datasetField", *named[source]), node_id("datasetField", *named[target])
        in_edges.setdefault(t_id, set()).add(s_id)
        out_edges.setdefault(s_id, set()).add(t_id)
        for edge in found:
            for transformation in edge_transformations(edge.type, edge.subtype, edge.dependency_type, edge.expression):
                namespace, dataset, field = named[source]
                inputs.setdefault(target, []).append({
                    "namespace": namespace, "dataset": dataset, "datasetVersion": None, "field": field,
                    "transformationDescription": transformation.get("description"),
                    "transformationType": transformation["type"],
                    "transformationSubtype": transformation.get("subtype")})
    graph = []
    for i, (namespace, dataset, field) in sorted(named.items(), key=lambda item: item[1]):
        nid = node_id("datasetField", namespace, dataset, field)
        graph.append({"id": nid, "type": "DATASET_FIELD",
                      "data": {"namespace": namespace, "dataset": dataset, "datasetVersion": None, "field": field,
                               "fieldType": types.get(i), "transformationDescription": None,
                               "transformationType": None, "inputFields": inputs.get(i, [])},
                      # as Marquez's ColumnLineageService: the node is the origin of all its edges
                      "inEdges": [{"origin": nid, "destination": o} for o in sorted(in_edges.get(nid, ()))],
                      "outEdges": [{"origin": nid, "destination": d} for d in sorted(out_edges.get(nid, ()))]})
    return graph

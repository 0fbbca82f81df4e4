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
from navd.index.admin import solr_mode
from navd.index.client import SolrIndex, batches
from navd.index.queries import data_flows_from, fields_hung_under
from navd.lineage.rules import LineageGraph, LineageOptions, Node
from navd.lineage.rules import lineage as walk_lineage
from navd.lineage.store import SolrLineageStore
from navd.model import ElementType, EntityRef, SourceType
from navd.index.query_syntax import escape, quote
from navd.names import (
    OPENLINEAGE_PATH_SCHEMES,
    PATH_SOURCES,
    InvalidName,
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
    props = stored_properties(doc)
    return {"id": {"namespace": namespace, "name": name}, "type": marquez_store.job_type(props), "name": name,
            "simpleName": name,
            "parentJobName": None, "parentJobUuid": None, "createdAt": at, "updatedAt": at,
            "namespace": namespace, "inputs": [_id_of(i) for i in sorted(inputs)],
            "outputs": [_id_of(o) for o in sorted(outputs)], "location": None, "context": {},
            "description": doc.get("description"), "latestRun": latest_run,
            "latestRuns": [latest_run] if latest_run else [], "facets": marquez_store.job_facets(doc, props),
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
            "fields": [{"name": n, "type": t, "tags": [], "description": dataset.descriptions.get(n)}
                       for n, t in dataset.columns],
            "tags": [], "lastModifiedAt": doc.get("lastModified"), "lastLifecycleState": None,
            "description": doc.get("description"), "currentVersion": dataset_version(dataset.ref.identity, dataset),
            "columnLineage": None,
            "facets": {"schema": {"fields": [{"name": n, **({"type": t} if t else {})} for n, t in dataset.columns]}}
            if dataset.columns else {},
            "deleted": bool(doc.get("deleted", False))}


# -- GET /api/v1/namespaces/{ns}/datasets[/{name}[/versions]] ----------------------------------
#
# The listings page in Solr: the datasets OpenLineage events reported are a filter (a join from
# the relations core: an endpoint of a DATA_FLOW whose other end is an OpenLineage run or job;
# and the datasets only OpenLineage knows), a namespace is a filter on the elements (its
# OPENLINEAGE datasets by their kept namespace, the paths under its root, the tables of the
# cluster it names), and only the page asked for is fetched: nothing grows with the number of
# datasets but Solr's own filter cache.

_NOT_DATASETS = f"-type:({' OR '.join((*_OPERATIONS, ElementType.FIELD.value))})"
#: one end of a DATA_FLOW whose other end is an OpenLineage run or job, itself no column
_FLOWS_THROUGH_RUNS = ("type:DATA_FLOW AND endpoint{other}SourceType:" + SourceType.OPENLINEAGE.value
                       + f" AND endpoint{{other}}Type:({ElementType.OPERATION.value} OR "
                       + f"{ElementType.OPERATION_EXECUTION.value}) AND -endpoint{{end}}Type:{ElementType.FIELD.value}")
_PATH_TYPES = " OR ".join(sorted(s.value for s in PATH_SOURCES))
#: the source types whose datasets are named `<name>@<cluster>` (Hive's, a Spark catalog's)
_CLUSTER_NAMED = [s for s in SourceType if s not in PATH_SOURCES and s is not SourceType.OPENLINEAGE]


def reported_filters(index: SolrIndex) -> tuple[list[str], dict[str, str]]:
    """The filters (and the request parameters they read) of the datasets OpenLineage events
    reported: joined from the relations core, so Solr keeps the set, not navd."""
    relations = index.core("relations")
    # SolrCloud joins a collection of several shards only by streaming the keys across
    # (crossCollection); a standalone node joins its cores in place
    method = " method=crossCollection" if solr_mode(index) == "cloud" else ""
    joins = [f"{{!join{method} fromIndex={relations} from=endpoint{end}Id to=identity v=$flows{end}}}"
             for end in (1, 2)]
    params = {f"flows{end}": _FLOWS_THROUGH_RUNS.format(end=end, other=3 - end) for end in (1, 2)}
    either = " OR ".join(f"_query_:\"{j}\"" for j in joins)
    return [f"{either} OR sourceType:{SourceType.OPENLINEAGE.value}", _NOT_DATASETS], params


def namespace_filter(namespace: str, clusters: Mapping[str, str], default_cluster: str) -> str:
    """The datasets whose OpenLineage name (names.openlineage_dataset_name) is in `namespace`,
    as one filter: the OPENLINEAGE datasets that kept it, the paths under the file system root
    it names, the tables of the cluster it names. Values reach Solr escaped or quoted. Pure."""
    clauses = [f"(sourceType:{SourceType.OPENLINEAGE.value} AND prop_namespace:{quote(namespace)})"]
    scheme = namespace.partition(":")[0].lower()
    if scheme in OPENLINEAGE_PATH_SCHEMES:
        try:
            root = openlineage_dataset_ref(namespace, "/", clusters, default_cluster)
        except InvalidName:
            root = None
        if root is not None and root.source_type in PATH_SOURCES:
            under = escape(root.qualified_name.rstrip("/") + "/")
            clauses.append(f"(sourceType:({_PATH_TYPES}) AND qualifiedName:{under}*)")
    for source in _CLUSTER_NAMED:
        cluster = clusters.get(namespace) if source is SourceType.HIVE else None
        if cluster is None and namespace.lower().startswith(f"{source.value.lower()}://"):
            cluster = namespace.partition("://")[2]
        probe = EntityRef(source, f"probe@{cluster}", ElementType.TABLE) if cluster else None
        if probe is not None and openlineage_dataset_name(probe, clusters)[0] == namespace:
            clauses.append(f"(sourceType:{source.value} AND qualifiedName:*{escape('@' + cluster)})")
    return " OR ".join(clauses)


def datasets(index: SolrIndex, settings: ExportSettings, default_cluster: str, namespace: str, *, limit: int,
             offset: int) -> marquez_store.Listing:
    """Marquez's datasets of a namespace, by name (navd's qualified name: a path's, a table's
    `db.t@<cluster>`): the datasets OpenLineage events reported whose OpenLineage name
    (names.openlineage_dataset_name) is in `namespace`; one page of them read."""
    filters, params = reported_filters(index)
    found = index.search("elements", "*:*", rows=limit, start=offset, sort="qualifiedName asc,identity asc",
                         filters=[*filters, namespace_filter(namespace, settings.clusters, default_cluster)],
                         params=params)["response"]
    docs = {str(d["identity"]): d for d in found["docs"]}
    known = datasets_of(index, {i: _element_ref(d) for i, d in docs.items()})
    page = []
    for i, doc in docs.items():
        ns, name = openlineage_dataset_name(known[i].ref, settings.clusters, known[i].properties)
        page.append(_dataset_data(node_id("dataset", ns, name), known[i], doc))
    return marquez_store.Listing(tuple(page), int(found["numFound"]))


def _element_ref(doc: Mapping[str, Any]) -> EntityRef:
    return EntityRef(SourceType(str(doc["sourceType"])), str(doc["qualifiedName"]), ElementType(str(doc["type"])))


def _namespace_of(doc: Mapping[str, Any], settings: ExportSettings) -> str:
    return openlineage_dataset_name(_element_ref(doc), settings.clusters, stored_properties(doc))[0]


def dataset_namespaces(index: SolrIndex, settings: ExportSettings, default_cluster: str) -> dict[str, dict[str, Any]]:
    """Marquez's Namespace of each namespace of a reported dataset, by name: created when its
    first dataset was, updated when its latest one was. One query or a few per namespace, none
    per dataset: the OPENLINEAGE datasets' kept namespaces faceted, the file systems' roots
    skipped from one to the next in qualified-name order, the clusters navd is told of probed."""
    filters, params = reported_filters(index)
    names: set[str] = set()
    facets = index.search("elements", "*:*", rows=0, filters=[*filters, f"sourceType:{SourceType.OPENLINEAGE.value}"],
                          params={**params, "facet": "true", "facet.field": "prop_namespace", "facet.limit": -1,
                                  "facet.mincount": 1})
    names.update(str(n) for n in facets["facet_counts"]["facet_fields"]["prop_namespace"][::2])
    after: list[str] = []
    while True:  # the first path of the next file system, until none is left
        first = index.search("elements", "*:*", rows=1, sort="qualifiedName asc", fl="qualifiedName,sourceType,type",
                             filters=[*filters, f"sourceType:({_PATH_TYPES})", *after], params=params
                             )["response"]["docs"]
        if not first:
            break
        namespace = _namespace_of(first[0], settings)
        names.add(namespace)
        root = openlineage_dataset_ref(namespace, "/", settings.clusters, default_cluster).qualified_name.rstrip("/")
        after = [f"qualifiedName:[{quote(root + '0')} TO *]"]  # '0' follows '/': past every path under root
    for cluster in sorted({default_cluster, *settings.clusters.values()}):
        for source in _CLUSTER_NAMED:
            probe = EntityRef(source, f"probe@{cluster}", ElementType.TABLE)
            names.add(openlineage_dataset_name(probe, settings.clusters)[0])
    found = {}
    for namespace in sorted(names):
        times = _namespace_times(index, filters, params, namespace_filter(namespace, settings.clusters,
                                                                          default_cluster))
        if times is not None:
            found[namespace] = {"name": namespace, "createdAt": times[0], "updatedAt": times[1],
                                "ownerName": marquez_store.OWNER, "description": None, "isHidden": False}
    return found


def dataset_namespace(index: SolrIndex, settings: ExportSettings, default_cluster: str,
                      namespace: str) -> dict[str, Any] | None:
    """Marquez's Namespace of `namespace` when a reported dataset is in it, else None."""
    filters, params = reported_filters(index)
    times = _namespace_times(index, filters, params, namespace_filter(namespace, settings.clusters, default_cluster))
    return None if times is None else {"name": namespace, "createdAt": times[0], "updatedAt": times[1],
                                       "ownerName": marquez_store.OWNER, "description": None, "isHidden": False}


def _namespace_times(index: SolrIndex, filters: Sequence[str], params: Mapping[str, str],
                     in_namespace: str) -> tuple[str, str] | None:
    """(created, updated) of a namespace's reported datasets: the earliest created (or indexed)
    and the latest indexed; None when it holds none."""
    def first(sort: str) -> dict[str, Any] | None:
        docs = index.search("elements", "*:*", rows=1, sort=sort, fl="created,lastIndexed",
                            filters=[*filters, in_namespace], params=params)["response"]["docs"]
        return docs[0] if docs else None
    latest = first("lastIndexed desc")
    if latest is None:
        return None
    created = [str(d.get(k)) for d, k in ((first("created asc"), "created"), (first("lastIndexed asc"), "lastIndexed"))
               if d is not None and d.get(k)]
    return min(created, default=_EPOCH), str(latest.get("lastIndexed") or _EPOCH)


def dataset(index: SolrIndex, settings: ExportSettings, default_cluster: str, namespace: str,
            name: str) -> dict[str, Any]:
    """Marquez's Dataset of (namespace, name); EntityNotFound when navd does not hold it."""
    ref = openlineage_dataset_ref(namespace, name, settings.clusters, default_cluster)
    docs = [d for d in index.get("elements", [ref.identity])
            if d.get("type") not in (*_OPERATIONS, ElementType.FIELD.value)]
    if not docs:
        raise EntityNotFound(f"dataset: no dataset {name[:200]!r} in the namespace {namespace[:200]!r}")
    known = datasets_of(index, {ref.identity: _element_ref(docs[0])})[ref.identity]
    ns, named = openlineage_dataset_name(known.ref, settings.clusters, known.properties)
    return _dataset_data(node_id("dataset", ns, named), known, docs[0])


def dataset_versions(index: SolrIndex, settings: ExportSettings, default_cluster: str, namespace: str,
                     name: str) -> list[dict[str, Any]]:
    """Marquez's DatasetVersions of a dataset: its current state, the one version navd keeps."""
    data = dataset(index, settings, default_cluster, namespace, name)
    return [{"id": {"namespace": data["namespace"], "name": data["name"], "version": data["currentVersion"]},
             "version": data["currentVersion"], "createdByRun": None, "lifecycleState": None,
             **{k: data[k] for k in ("type", "name", "physicalName", "createdAt", "namespace", "sourceName",
                                     "fields", "tags", "description", "facets")}}]


# -- GET /api/v1/search ----------------------------------------------------------------------

#: Marquez's search filters and sorts (SearchFilter, SearchSort), the latter as navd sorts them
SEARCH_FILTERS = ("DATASET", "JOB")
SEARCH_SORTS = {"NAME": "qualifiedName asc,identity asc", "UPDATE_AT": "lastIndexed desc,identity asc"}
#: the longest `q` taken (a name part; Marquez's own column is 255 characters)
MAX_SEARCH_CHARS = 255


def name_part_pattern(part: str) -> str:
    """`part` as a piece of a Lucene regular expression matching it in any case (Marquez's
    ILIKE): a letter as `[aA]`, anything else escaped. Pure."""
    pieces = []
    for char in part:
        if char.lower() != char.upper():
            pieces.append(f"[{char.lower()}{char.upper()}]")
        else:
            pieces.append(char if char.isascii() and char.isalnum() else "\\" + char)
    return "".join(pieces)


def search_filter(part: str, kinds: Sequence[str]) -> str:
    """The jobs and datasets (of `kinds`) whose Marquez name holds `part`, any case: a job's
    name, an OPENLINEAGE dataset's kept name, a path's path (after its root), a table's
    `db.t` (before `@<cluster>`). Pure; `part` reaches Solr escaped."""
    pattern = name_part_pattern(part)
    clauses = []
    if "JOB" in kinds:
        clauses.append(f"(sourceType:{SourceType.OPENLINEAGE.value} AND type:{ElementType.OPERATION.value} AND "
                       f"originalName:*{escape(part.lower())}*)")
    if "DATASET" in kinds:
        root = "[^\\/]*\\/\\/[^\\/]*"  # scheme: // authority (no '/' in either)
        under_root = f"{root}(\\/.*)?{pattern}.*" if part.startswith("/") else f"{root}\\/.*{pattern}.*"
        clauses += [f"(sourceType:{SourceType.OPENLINEAGE.value} AND prop_openlineageName:/.*{pattern}.*/)",
                    f"(sourceType:({_PATH_TYPES}) AND qualifiedName:/{under_root}/)",
                    f"(sourceType:({' OR '.join(s.value for s in _CLUSTER_NAMED)}) AND "
                    f"qualifiedName:/[^\\@]*{pattern}[^\\@]*\\@.*/)"]
    return " OR ".join(clauses)


def search(index: SolrIndex, settings: ExportSettings, query: str, kind: str | None, sort: str,
           limit: int) -> dict[str, Any]:
    """Marquez's SearchResults: the jobs and datasets whose name holds `query` (any case, as
    Marquez's ILIKE), of `kind` only when given, by name (navd's qualified name) or latest
    change first; one page read, the total counted by Solr."""
    kinds = (kind,) if kind is not None else SEARCH_FILTERS
    filters, params = reported_filters(index)
    jobs = f"(sourceType:{SourceType.OPENLINEAGE.value} AND type:{ElementType.OPERATION.value})"
    params = {**params, "reported": filters[0]}
    scope = [f"{jobs} OR (_query_:\"{{!lucene v=$reported}}\" AND {filters[1]})" if "DATASET" in kinds else jobs,
             f"-type:({' OR '.join((ElementType.OPERATION_EXECUTION.value, ElementType.FIELD.value))})"]
    found = index.search("elements", "*:*", rows=limit, sort=SEARCH_SORTS[sort], params=params,
                         filters=[*scope, search_filter(query, kinds)])["response"]
    results = []
    for doc in found["docs"]:
        at = str(doc.get("lastIndexed") or _EPOCH)
        if doc.get("type") == ElementType.OPERATION.value:
            namespace, name, node = stored_properties(doc).get("namespace", ""), marquez_store.job_name(doc), "job"
        else:
            namespace, name = openlineage_dataset_name(_element_ref(doc), settings.clusters, stored_properties(doc))
            node = "dataset"
        results.append({"type": node.upper(), "name": name, "updatedAt": at, "namespace": namespace,
                        "nodeId": node_id(node, namespace, name)})
    return {"totalCount": int(found["numFound"]), "results": results}


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

"""Lineage queries: walk nav_relations from one entity, upstream and/or downstream.

The walk is a breadth-first search through the index client, one batched terms query per level
(`{!terms f=endpoint2Id}` ...), so it works the same on one core and on a sharded SolrCloud
collection (Solr's `{!graph}` parser silently returns partial results across shards).

What is walked, as in Navigator:
- DATA_FLOW (and CONTROL_FLOW for columns): dataset -> execution -> dataset;
- LOGICAL_PHYSICAL only from the physical end to the logical one: a directory leads to the table
  it backs, a YARN application to the Spark execution it ran; seen from the logical end the
  physical one is not lineage;
- PARENT_CHILD from an execution down to the executions inside it (a Spark run's SQL
  executions), so a YARN application reaches the datasets its Spark work read and wrote;
- INSTANCE_OF from an execution to its operation template, shown with `operations`.

What is shown: without `operations`, executions and templates are contracted away (dataset ->
execution -> dataset becomes dataset -> dataset), and so are endpoints no extractor has indexed
(unlinked); without `deleted`, deleted entities are contracted away too, so the connection
through a dropped temporary table stays. `columns` adds FIELD nodes and column edges.

A stub (an element known only from a job's reference, see model.ElementStub) counts as an entity
when something proves it existed: an operation wrote it (it is the target of a DATA_FLOW) or
dropped it (flagged deleted). A stub only ever read is an unresolved reference, shown like an
unlinked endpoint (Navigator shows such an input only with operations on).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from navd.errors import NavdError
from navd.index.client import SolrIndex, batches
from navd.index.documents import is_stub
from navd.index.lookup import find_entity
from navd.model import ElementType, RelationType

Direction = Literal["upstream", "downstream", "both"]

_OPERATION_TYPES = frozenset({ElementType.OPERATION.value, ElementType.OPERATION_EXECUTION.value})
_FIELD = ElementType.FIELD.value
_RELATION_FIELDS = ("identity,type,endpoint1Id,endpoint2Id,endpoint1QualifiedName,endpoint2QualifiedName,"
                    "endpoint1Type,endpoint2Type,endpoint1SourceType,endpoint2SourceType,"
                    "dependencyType,expression")
_ELEMENT_FIELDS = "identity,qualifiedName,type,sourceType,originalName,deleted,properties"


class EntityNotFound(NavdError):
    """The entity a lineage query starts from is not indexed."""


@dataclasses.dataclass(frozen=True)
class LineageOptions:
    direction: Direction = "both"
    depth: int = 5
    columns: bool = False
    operations: bool = False
    deleted: bool = False
    max_nodes: int = 3000  # Navigator's UI capped lineage at 400-3,000 entities


@dataclasses.dataclass(frozen=True)
class Node:
    id: str
    qualified_name: str
    type: str
    source_type: str
    name: str
    deleted: bool
    indexed: bool  # False: only known from a relation's unlinked endpoint

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"id": self.id, "qualifiedName": self.qualified_name, "type": self.type,
                                 "sourceType": self.source_type, "name": self.name, "deleted": self.deleted}
        if not self.indexed:
            shown["unlinked"] = True
        return shown


@dataclasses.dataclass(frozen=True)
class Edge:
    source: str
    target: str
    type: str
    dependency_type: str | None = None
    expression: str | None = None

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"source": self.source, "target": self.target, "type": self.type}
        if self.dependency_type:
            shown["dependencyType"] = self.dependency_type
        if self.expression:
            shown["expression"] = self.expression
        return shown


@dataclasses.dataclass(frozen=True)
class LineageGraph:
    root: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    truncated: bool = False

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"root": self.root, "nodes": [n.as_dict() for n in self.nodes],
                                 "edges": [e.as_dict() for e in self.edges]}
        if self.truncated:
            shown["truncated"] = True
        return shown


# -- the walk ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Hop:
    """One relation seen from the node the walk is at."""

    relation: Mapping[str, Any]
    far_id: str
    far_end: int  # 1 or 2: which endpoint of the relation the far node is


def lineage(index: SolrIndex, entity: str, options: LineageOptions = LineageOptions()) -> LineageGraph:
    matches = find_entity(index, entity)
    if not matches:
        raise EntityNotFound(f"no element with identity or qualifiedName {entity!r}")
    root_doc = matches[0]
    root = str(root_doc["identity"])
    directions: tuple[str, ...] = ("upstream", "downstream") if options.direction == "both" \
        else (options.direction,)

    relations: dict[str, Mapping[str, Any]] = {}
    node_ids: set[str] = {root}
    truncated = False
    for direction in directions:
        for relation in _walk(index, root_doc, direction, options):
            relations[str(relation["identity"])] = relation
            node_ids.update((str(relation["endpoint1Id"]), str(relation["endpoint2Id"])))
            if len(node_ids) > options.max_nodes:
                truncated = True
                break
    nodes = _load_nodes(index, node_ids, relations.values())
    edges = [Edge(str(r["endpoint1Id"]), str(r["endpoint2Id"]), str(r["type"]), r.get("dependencyType"),
                  r.get("expression")) for r in relations.values()]
    return _contract(root, nodes, edges, options, truncated)


def _walk(index: SolrIndex, root_doc: Mapping[str, Any], direction: str,
          options: LineageOptions) -> Iterator[Mapping[str, Any]]:
    """Relations reachable from the root in one direction, level by level.

    Depth counts dataset hops: passing through an execution does not use up a level, so
    `depth=1` upstream of a table reaches the tables its producing jobs read.
    """
    root = str(root_doc["identity"])
    root_is_field = root_doc.get("type") == _FIELD
    seen: set[str] = {root}
    frontier: deque[tuple[str, int, bool]] = deque([(root, 0, root_is_field)])
    if options.columns and not root_is_field:
        for field_id in _field_ids(index, [root]):
            seen.add(field_id)
            frontier.append((field_id, 0, True))
    while frontier:
        level = list(frontier)
        frontier.clear()
        by_kind: dict[bool, list[str]] = {True: [], False: []}
        depth_of = {node: depth for node, depth, _ in level}
        for node, _depth, is_field in level:
            by_kind[is_field].append(node)
        hops = list(_hops(index, by_kind[False], direction, columns=False, operations=options.operations))
        if options.columns:
            hops += list(_hops(index, by_kind[True], direction, columns=True, operations=False))
        for near, hop in hops:
            yield hop.relation
            far = hop.far_id
            if far in seen:
                continue
            seen.add(far)
            far_type = str(hop.relation[f"endpoint{hop.far_end}Type"])
            depth = depth_of[near] + (0 if far_type in _OPERATION_TYPES else 1)
            if depth >= options.depth and far_type not in _OPERATION_TYPES:
                continue
            if hop.relation["type"] == RelationType.INSTANCE_OF.value:
                continue  # a template is shown, not walked: its other executions are not lineage
            frontier.append((far, depth, far_type == _FIELD))
            if options.columns and far_type not in _OPERATION_TYPES and far_type != _FIELD:
                for field_id in _field_ids(index, [far]):
                    if field_id not in seen:
                        seen.add(field_id)
                        frontier.append((field_id, depth, True))


def _hops(index: SolrIndex, node_ids: list[str], direction: str, *, columns: bool,
          operations: bool) -> Iterator[tuple[str, _Hop]]:
    """(near node, hop) for every lineage relation touching `node_ids` in `direction`."""
    if not node_ids:
        return
    flow_types = ["DATA_FLOW", "CONTROL_FLOW"] if columns else ["DATA_FLOW"]
    # Upstream: relations whose target is the node; downstream: whose source is the node.
    near_end, far_end = (2, 1) if direction == "upstream" else (1, 2)
    queries: list[tuple[str, int, int]] = [(f"type:({' OR '.join(flow_types)})", near_end, far_end)]
    if not columns:
        # Physical -> logical only (see the module docstring), in either walking direction.
        queries.append(("type:LOGICAL_PHYSICAL", 2, 1))
        # An application run to the executions inside it (a YARN application's Spark run to
        # its SQL executions); never upwards, so a dataset's lineage does not fan out to every
        # sibling execution of the job that wrote it.
        queries.append(("type:PARENT_CHILD AND endpoint1Type:OPERATION_EXECUTION AND "
                        "endpoint2Type:OPERATION_EXECUTION", 1, 2))
        if operations:
            queries.append(("type:INSTANCE_OF", 2, 1))  # execution -> its template
    for type_filter, near, far in queries:
        for chunk in batches(node_ids, 500):
            filters = [type_filter, f"{{!terms f=endpoint{near}Id}}{','.join(chunk)}"]
            for relation in index.scan("relations", "*:*", fl=_RELATION_FIELDS, filters=filters):
                yield str(relation[f"endpoint{near}Id"]), _Hop(relation, str(relation[f"endpoint{far}Id"]), far)


def _field_ids(index: SolrIndex, dataset_ids: Iterable[str]) -> list[str]:
    """The FIELD children of datasets (columns of tables and views)."""
    ids: list[str] = []
    for chunk in batches(list(dataset_ids), 500):
        filters = ["type:PARENT_CHILD", "endpoint2Type:FIELD", f"{{!terms f=endpoint1Id}}{','.join(chunk)}"]
        ids.extend(str(r["endpoint2Id"]) for r in index.scan("relations", "*:*", fl="identity,endpoint2Id",
                                                              filters=filters))
    return ids


def _load_nodes(index: SolrIndex, node_ids: set[str],
                relations: Iterable[Mapping[str, Any]]) -> dict[str, Node]:
    nodes: dict[str, Node] = {}
    live_stubs: list[str] = []
    for chunk in batches(sorted(node_ids), 500):
        for doc in index.scan("elements", "*:*", fl=_ELEMENT_FIELDS,
                              filters=[f"{{!terms f=identity}}{','.join(chunk)}"]):
            deleted = bool(doc.get("deleted", False))
            nodes[str(doc["identity"])] = Node(str(doc["identity"]), str(doc["qualifiedName"]), str(doc["type"]),
                                               str(doc["sourceType"]), str(doc.get("originalName", "")),
                                               deleted, indexed=True)
            if not deleted and is_stub(doc):
                live_stubs.append(str(doc["identity"]))
    for node_id in _unresolved(index, live_stubs, {n: nodes[n].type for n in live_stubs}):
        nodes[node_id] = dataclasses.replace(nodes[node_id], indexed=False)
    for relation in relations:  # endpoints no extractor has indexed: known from the relation only
        for end in (1, 2):
            node_id = str(relation[f"endpoint{end}Id"])
            if node_id not in nodes:
                qualified_name = str(relation.get(f"endpoint{end}QualifiedName", ""))
                nodes[node_id] = Node(node_id, qualified_name, str(relation.get(f"endpoint{end}Type", "")),
                                      str(relation.get(f"endpoint{end}SourceType", "")),
                                      _last_segment(qualified_name), deleted=False, indexed=False)
    return nodes


def _unresolved(index: SolrIndex, live_stubs: list[str], types: Mapping[str, str]) -> set[str]:
    """The live (not deleted) stubs nothing proves existed: datasets no operation wrote, and
    columns of such a dataset (a column is as real as its table)."""
    fields = [n for n in live_stubs if types[n] == _FIELD]
    parent_of: dict[str, str] = {}
    for chunk in batches(fields, 500):
        for relation in index.scan("relations", "*:*", fl="identity,endpoint1Id,endpoint2Id",
                                   filters=["type:PARENT_CHILD", f"{{!terms f=endpoint2Id}}{','.join(chunk)}"]):
            parent_of[str(relation["endpoint2Id"])] = str(relation["endpoint1Id"])
    stub_datasets = {n for n in live_stubs if types[n] != _FIELD}
    other_parents = set(parent_of.values()) - stub_datasets
    proven_parents: set[str] = set()  # real elements, or deleted ones: they existed
    for chunk in batches(sorted(other_parents), 500):
        for doc in index.scan("elements", "*:*", fl="identity,deleted,properties",
                              filters=[f"{{!terms f=identity}}{','.join(chunk)}"]):
            if not doc.get("deleted", False) and is_stub(doc):
                stub_datasets.add(str(doc["identity"]))
            else:
                proven_parents.add(str(doc["identity"]))
    unproven = stub_datasets - _written(index, sorted(stub_datasets))
    unresolved = {n for n in live_stubs if types[n] != _FIELD and n in unproven}
    unresolved.update(f for f in fields if parent_of.get(f) not in proven_parents and
                      (parent_of.get(f) is None or parent_of[f] in unproven))
    return unresolved


def _written(index: SolrIndex, element_ids: list[str]) -> set[str]:
    """Those of `element_ids` that some DATA_FLOW leads into (an operation wrote them)."""
    found: set[str] = set()
    for chunk in batches(element_ids, 500):
        found.update(str(r["endpoint2Id"]) for r in index.scan(
            "relations", "*:*", fl="identity,endpoint2Id",
            filters=["type:DATA_FLOW", f"{{!terms f=endpoint2Id}}{','.join(chunk)}"]))
    return found


def _last_segment(qualified_name: str) -> str:
    return qualified_name.split("@", 1)[0].rstrip("/").rsplit("/", 1)[-1].rsplit(".", 1)[-1]


# -- what is shown ----------------------------------------------------------------------------

def _contract(root: str, nodes: Mapping[str, Node], edges: list[Edge], options: LineageOptions,
              truncated: bool) -> LineageGraph:
    """Drop hidden nodes and connect what was connected through them."""
    def hidden(node_id: str) -> bool:
        if node_id == root:
            return False
        node = nodes[node_id]
        if node.type in _OPERATION_TYPES or not node.indexed:
            return not options.operations
        return node.deleted and not options.deleted

    outgoing: dict[str, list[Edge]] = {}
    for edge in edges:
        outgoing.setdefault(edge.source, []).append(edge)
    shown_edges: dict[tuple[str, str, str, str | None, str | None], Edge] = {}
    for edge in edges:
        if hidden(edge.source):
            continue
        if not hidden(edge.target):
            shown_edges[(edge.source, edge.target, edge.type, edge.dependency_type, edge.expression)] = edge
            continue
        # Follow the flow through hidden nodes to the next shown ones.
        stack, visited = [edge.target], {edge.target}
        while stack:
            for onward in outgoing.get(stack.pop(), []):
                if onward.type not in ("DATA_FLOW", "CONTROL_FLOW", "LOGICAL_PHYSICAL"):
                    continue
                if hidden(onward.target):
                    if onward.target not in visited:
                        visited.add(onward.target)
                        stack.append(onward.target)
                elif onward.target != edge.source:
                    key = (edge.source, onward.target, edge.type, None, None)
                    shown_edges[key] = Edge(edge.source, onward.target, edge.type)
    used = {root} | {e.source for e in shown_edges.values()} | {e.target for e in shown_edges.values()}
    shown_nodes = tuple(sorted((nodes[n] for n in used if n in nodes),
                               key=lambda n: (n.id != root, n.type, n.qualified_name)))
    ordered_edges = tuple(sorted(shown_edges.values(),
                                 key=lambda e: (nodes[e.source].qualified_name, nodes[e.target].qualified_name, e.type)))
    return LineageGraph(root, shown_nodes, ordered_edges, truncated)


def render_text(graph: LineageGraph) -> str:
    """Edges as `source -> target`, one a line, after the root."""
    by_id = {n.id: n for n in graph.nodes}

    def label(node_id: str) -> str:
        node = by_id[node_id]
        flags = "".join([" [deleted]" if node.deleted else "", "" if node.indexed else " [unlinked]"])
        return f"{node.qualified_name} ({node.source_type} {node.type}){flags}"

    lines = [label(graph.root)]
    for edge in graph.edges:
        detail = edge.type + (f" {edge.dependency_type}" if edge.dependency_type else "") + \
            (f": {edge.expression}" if edge.expression else "")
        lines.append(f"  {label(edge.source)} -> {label(edge.target)}  [{detail}]")
    if len(graph.edges) == 0:
        lines.append("  (no lineage)")
    if graph.truncated:
        lines.append("  ... truncated: more entities than the node limit")
    return "\n".join(lines)

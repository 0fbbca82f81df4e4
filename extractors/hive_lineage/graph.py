"""A query's lineage graph as Hive's LineageLogger and impalad write it -> navd records. Pure.

Both engines log one JSON object per query with the same graph: `vertices` (`id`, `vertexType`
COLUMN or TABLE, `vertexId` `db.table.column` or `db.table`; Impala adds `metadata.tableName`,
`tableType` and `tableCreateTime`) and `edges` (`sources` and `targets` vertex ids, `edgeType`
PROJECTION or PREDICATE, Hive an optional `expression`). Hive's `vertexId` of a column of a
query's result (a SELECT's `k`, `src1.key`) has fewer than three parts: it is no table's column
and takes part only through the tables its sources belong to. Impala names a CTAS's target
column by the column alone with the table in `metadata.tableName`.

What each query becomes (as the Spark extractor writes its SQL executions):
- an OPERATION per query text, named by the engine's hash (`hive://<cluster>/query/<hash>`),
  its name the text trimmed and lower-cased, as Atlas names a Hive process;
- an OPERATION_EXECUTION per run (user, start, end, engine, query id, the query text stored as
  `queryText`), INSTANCE_OF from the operation;
- DATA_FLOW from each table read to the execution and from the execution to each table written
  (HIVE tables `db.table@cluster`, unlinked until the HMS extractor indexes them; stubs meanwhile);
- column DATA_FLOW for PROJECTION (SIMPLE without an expression, EXPRESSION with it) and
  CONTROL_FLOW for PREDICATE, from each source column to each target column, discriminated by
  the execution;
- LOGICAL_PHYSICAL to the YARN applications of Hive's `jobIds`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from navd.extractors.spark.records import stubs_for
from navd.model import (
    DependencyType,
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
    field_ref,
    hive_qualified_name,
    query_execution_ref,
    query_operation_ref,
    shown,
    yarn_execution_ref,
)

#: the most of an operation's normalised text kept as its name (the text itself is the
#: execution's queryText)
MAX_NAME_CHARS = 4000
#: the most of a column edge's expression kept (Spark's column edges keep as much)
MAX_EXPRESSION_CHARS = 1000
#: the property of a table's DATA_FLOW holding impalad's `tableCreateTime` (epoch seconds):
#: which incarnation of a table of that name the query read or wrote
TABLE_CREATE_TIME = "tableCreateTime"


class BadLineage(ValueError):
    """A lineage record that cannot be understood; the message is one line saying why."""


@dataclasses.dataclass(frozen=True, slots=True)
class Vertex:
    id: int
    kind: str  # COLUMN or TABLE
    label: str
    #: Impala's metadata: the table the column belongs to (`db.table`), its type and create time
    table_name: str | None = None
    table_type: str | None = None
    table_create_time: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Edge:
    sources: tuple[int, ...]
    targets: tuple[int, ...]
    edge_type: str  # PROJECTION or PREDICATE
    expression: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class QueryLineage:
    """One logged query, as either engine wrote it."""

    source_type: SourceType  # HIVE or IMPALA: which engine ran it
    query_text: str
    query_hash: str
    edges: tuple[Edge, ...]
    vertices: tuple[Vertex, ...]
    user: str | None = None
    started: datetime | None = None
    ended: datetime | None = None
    query_id: str | None = None
    engine: str | None = None
    database: str | None = None
    operation_type: str | None = None
    job_ids: tuple[str, ...] = ()
    table_location: str | None = None
    version: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class TableColumn:
    """Where a vertex points: a table (`column` None) or a column of one."""

    database: str
    table: str
    column: str | None
    view: bool = False
    create_time: int | None = None


# --- parsing helpers (both engines) ----------------------------------------------------------

def text(raw: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    value = raw.get(key)
    if value is None or value == "":
        if required:
            raise BadLineage(f"no {key}")
        return None
    if not isinstance(value, str):
        raise BadLineage(f"{key} is a {type(value).__name__}, not a string")
    return value


def integer(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadLineage(f"{key} is {shown(str(value), 40)}, not an integer")
    return value


def epoch_seconds(value: int | None) -> datetime | None:
    if value is None or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise BadLineage(f"timestamp {value} is out of range") from None


def parse_graph(raw: Mapping[str, Any]) -> tuple[tuple[Edge, ...], tuple[Vertex, ...]]:
    """`edges` and `vertices` of a record; BadLineage for a malformed one or an edge naming a
    vertex the record does not have."""
    raw_vertices, raw_edges = raw.get("vertices", []), raw.get("edges", [])
    if not isinstance(raw_vertices, list) or not isinstance(raw_edges, list):
        raise BadLineage("edges and vertices must be lists")
    vertices = tuple(_vertex(v) for v in raw_vertices)
    ids = {v.id for v in vertices}
    if len(ids) != len(vertices):
        raise BadLineage("two vertices share an id")
    edges = []
    for position, edge in enumerate(raw_edges):
        if not isinstance(edge, dict):
            raise BadLineage(f"edge {position} is not an object")
        sources, targets = _ids(edge, "sources", position), _ids(edge, "targets", position)
        missing = [i for i in (*sources, *targets) if i not in ids]
        if missing:
            raise BadLineage(f"edge {position} names vertex {missing[0]}, which the record does not have")
        kind = text(edge, "edgeType", required=True)
        if kind not in ("PROJECTION", "PREDICATE"):
            raise BadLineage(f"edge {position} has edgeType {shown(str(kind), 40)}, not PROJECTION or PREDICATE")
        edges.append(Edge(sources, targets, kind, text(edge, "expression")))
    return tuple(edges), vertices


def _ids(edge: Mapping[str, Any], key: str, position: int) -> tuple[int, ...]:
    value = edge.get(key, [])
    if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in value):
        raise BadLineage(f"edge {position}: {key} must be a list of vertex ids")
    return tuple(value)


def _vertex(raw: Any) -> Vertex:
    if not isinstance(raw, dict):
        raise BadLineage("a vertex is not an object")
    vertex_id = integer(raw, "id")
    if vertex_id is None:
        raise BadLineage("a vertex has no id")
    kind = text(raw, "vertexType") or "COLUMN"
    if kind not in ("COLUMN", "TABLE"):
        raise BadLineage(f"vertex {vertex_id} has vertexType {shown(kind, 40)}, not COLUMN or TABLE")
    label = raw.get("vertexId")
    if not isinstance(label, str) or not label.strip():
        raise BadLineage(f"vertex {vertex_id} has no vertexId")
    metadata = raw.get("metadata")
    if metadata is None:
        return Vertex(vertex_id, kind, label)
    if not isinstance(metadata, dict):
        raise BadLineage(f"vertex {vertex_id}: metadata is not an object")
    return Vertex(vertex_id, kind, label, text(metadata, "tableName"), text(metadata, "tableType"),
                  integer(metadata, "tableCreateTime"))


def _db_table(name: str, vertex: Vertex) -> tuple[str, str]:
    parts = name.split(".")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise BadLineage(f"vertex {vertex.id}: {shown(name, 80)} is not db.table[.column]")
    return parts[0], parts[1]


def locate(vertex: Vertex) -> TableColumn | None:
    """The table or table column a vertex names; None for a column of a query's result.
    BadLineage for a name that is not `db.table[.column]`."""
    view = (vertex.table_type or "").lower() == "view"
    created = vertex.table_create_time if vertex.table_create_time and vertex.table_create_time > 0 else None
    if vertex.kind == "TABLE":
        db, table = _db_table(vertex.label, vertex)
        return TableColumn(db, table, None, view, created)
    if vertex.table_name:
        db, table = _db_table(vertex.table_name, vertex)
        prefix = vertex.table_name + "."
        column = vertex.label[len(prefix):] if vertex.label.lower().startswith(prefix.lower()) else vertex.label
        if not column.strip():
            raise BadLineage(f"vertex {vertex.id}: {shown(vertex.label, 80)} names no column")
        return TableColumn(db, table, column, view, created)
    parts = vertex.label.split(".", 2)
    if not all(p.strip() for p in parts):
        raise BadLineage(f"vertex {vertex.id}: {shown(vertex.label, 80)} is not db.table[.column]")
    if len(parts) < 3:
        return None  # `k`, `src1.key`: a column of the query's result, no table's
    return TableColumn(parts[0], parts[1], parts[2])


def normalised(query_text: str) -> str:
    """The operation's name: the text trimmed and lower-cased (Atlas's Hive process name), cut."""
    name = query_text.strip().lower()
    return name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + "..."


# --- records ---------------------------------------------------------------------------------

def records(query: QueryLineage, *, cluster: str, extractor_run_id: str | None = None,
            stubbed: set[str] | None = None) -> Iterator[Record]:
    """The records of one query: stubs for the tables and columns it names, the operation and
    its execution, then the relations. BadLineage (nothing yielded) for a vertex that is not
    `db.table[.column]`. `stubbed`: identities stubbed before in the same pass (no stub again)."""
    st = query.source_type
    located = {v.id: locate(v) for v in query.vertices}  # raises before anything is yielded
    operation = query_operation_ref(st, cluster, query.query_hash)
    if query.query_id:
        run = (query.query_id,)
    else:
        # Hive logs no query id: the hash, the start and the user tell runs apart (test mode
        # logs neither: one execution per text)
        started = str(int(query.started.timestamp())) if query.started else "0"
        run = (query.query_hash.lower(), started, query.user or "unknown")
    execution = query_execution_ref(st, cluster, *run)
    props = {"queryHash": query.query_hash}
    for key, value in (("engine", query.engine), ("database", query.database), ("queryId", query.query_id),
                       ("operationType", query.operation_type), ("tableLocation", query.table_location),
                       ("lineageVersion", query.version)):
        if value:
            props[key] = value
    if query.job_ids:
        props["jobIds"] = ",".join(query.job_ids)
    name = normalised(query.query_text)
    short = name if len(name) <= 200 else name[:200] + "..."
    template = Element(st, ElementType.OPERATION, operation.qualified_name, name=name,
                       extractor_run_id=extractor_run_id, properties={"queryHash": query.query_hash})
    instance = Element(st, ElementType.OPERATION_EXECUTION, execution.qualified_name, name=short,
                       principal=query.user, started=query.started, ended=query.ended,
                       query_text=query.query_text, source_id=query.query_id,
                       extractor_run_id=extractor_run_id, properties=props)
    # The relations' times are the execution's, not the indexing time
    seen = _Seen(*execution_times(query.started, query.ended))
    relations = list(_relations(query, located, cluster, template.ref, instance.ref, extractor_run_id, seen))
    yield from _dated_stubs(stubs_for(relations, extractor_run_id, known_from=st.value.lower(), seen=stubbed),
                            relations)
    yield template
    yield instance
    yield from relations


def _table_ref(cluster: str, where: TableColumn) -> EntityRef:
    return _hive_table_ref(cluster, where.database, where.table, where.view)


# A log names the same tables and columns query after query: their refs (names checked, MD5
# identities) are made once. Bounded; EntityRef is frozen, so sharing one is safe.
@functools.lru_cache(maxsize=16384)
def _hive_table_ref(cluster: str, database: str, table: str, view: bool) -> EntityRef:
    return EntityRef(SourceType.HIVE, hive_qualified_name(cluster, database, table),
                     ElementType.VIEW if view else ElementType.TABLE)


@functools.lru_cache(maxsize=65536)
def _hive_field_ref(cluster: str, database: str, table: str, column: str) -> EntityRef:
    return field_ref(_hive_table_ref(cluster, database, table, False), column)


@dataclasses.dataclass(frozen=True, slots=True)
class _Seen:
    """When the execution behind a query's relations ran (model.Relation.first_seen/last_seen)."""

    first: datetime | None
    last: datetime | None


def _relations(query: QueryLineage, located: Mapping[int, TableColumn | None], cluster: str,
               operation: EntityRef, execution: EntityRef, run_id: str | None, seen: _Seen) -> Iterator[Relation]:
    yield Relation(RelationType.INSTANCE_OF, operation, execution, extractor_run_id=run_id, first_seen=seen.first,
                   last_seen=seen.last)
    for job in query.job_ids:
        application = _application_id(job)
        if application:
            # the YARN application (physical) that ran part of this query (logical); unlinked
            # until the YARN extractor indexes it
            yield Relation(RelationType.LOGICAL_PHYSICAL, execution, yarn_execution_ref(application),
                           linked2=False, extractor_run_id=run_id, first_seen=seen.first, last_seen=seen.last)
    inputs: dict[str, tuple[EntityRef, int | None]] = {}
    outputs: dict[str, tuple[EntityRef, int | None]] = {}
    for edge in query.edges:
        for ids, found in ((edge.sources, inputs), (edge.targets, outputs)):
            for vertex_id in ids:
                where = located[vertex_id]
                if where is not None:
                    ref = _table_ref(cluster, where)
                    found.setdefault(ref.identity, (ref, where.create_time))
    for ref, created in inputs.values():
        yield Relation(RelationType.DATA_FLOW, ref, execution, linked1=False, extractor_run_id=run_id,
                       first_seen=seen.first, last_seen=seen.last,
                       properties=_created(created))
    for ref, created in outputs.values():
        yield Relation(RelationType.DATA_FLOW, execution, ref, linked2=False, extractor_run_id=run_id,
                       first_seen=seen.first, last_seen=seen.last,
                       properties=_created(created))
    yield from _column_edges(query.edges, located, cluster, execution.qualified_name, run_id, seen)


def _dated_stubs(stubs: Iterator[Record], relations: Sequence[Relation]) -> Iterator[Record]:
    """The stubs of the tables a query touched, created when impalad says the table was
    (`tableCreateTime`, stored on the table's DATA_FLOW): the entity's first sighting for
    `--as-of`, as the HMS extractor's `createTime` is (whose element replaces the stub)."""
    created: dict[str, datetime] = {}
    for relation in relations:
        raw = relation.properties.get(TABLE_CREATE_TIME) if relation.type is RelationType.DATA_FLOW else None
        if raw and raw.isdigit():
            table = relation.endpoint2 if relation.endpoint1.type is ElementType.OPERATION_EXECUTION else relation.endpoint1
            created.setdefault(table.identity, datetime.fromtimestamp(int(raw), UTC))
    for stub in stubs:
        at = created.get(stub.element.identity) if isinstance(stub, ElementStub) else None
        yield dataclasses.replace(stub, element=dataclasses.replace(stub.element, created=at)) if at else stub


def _created(create_time: int | None) -> dict[str, str]:
    return {TABLE_CREATE_TIME: str(create_time)} if create_time else {}


def _column_edges(edges: Sequence[Edge], located: Mapping[int, TableColumn | None], cluster: str,
                  discriminator: str, run_id: str | None, seen: _Seen) -> Iterator[Relation]:
    """Column edges, one per (kind, source column, target column): Hive logs a projection
    again with `compute_stats(...)` (its statistics task) after the real one, which is kept;
    the expressions of several predicates on the same pair are joined."""
    expressions: dict[tuple[RelationType, str, str], list[str | None]] = {}
    ends: dict[str, EntityRef] = {}
    for edge in edges:
        kind = RelationType.DATA_FLOW if edge.edge_type == "PROJECTION" else RelationType.CONTROL_FLOW
        sources = [_field(cluster, located[i], ends) for i in edge.sources]
        targets = [_field(cluster, located[i], ends) for i in edge.targets]
        for source in sources:
            for target in targets:
                if source is None or target is None:
                    continue
                found = expressions.setdefault((kind, source, target), [])
                if edge.expression not in found:
                    found.append(edge.expression)
    for (kind, source, target), found in expressions.items():
        if kind is RelationType.DATA_FLOW:
            expression = found[0]
            dependency = DependencyType.SIMPLE if expression is None else DependencyType.EXPRESSION
        else:
            expression = "; ".join(e for e in found if e) or None
            dependency = None
        if expression and len(expression) > MAX_EXPRESSION_CHARS:
            expression = expression[:MAX_EXPRESSION_CHARS] + "..."
        # Both ends unlinked: the HMS extractor owns tables' FIELD elements.
        yield Relation(kind, ends[source], ends[target], linked1=False, linked2=False, dependency_type=dependency,
                       expression=expression, discriminator=discriminator, extractor_run_id=run_id,
                       first_seen=seen.first, last_seen=seen.last)


def _field(cluster: str, where: TableColumn | None, ends: dict[str, EntityRef]) -> str | None:
    if where is None or where.column is None:
        return None  # a result column, or a whole table (`count(*)`): no column edge
    ref = _hive_field_ref(cluster, where.database, where.table, where.column)
    ends.setdefault(ref.identity, ref)
    return ref.identity


def _application_id(job_id: str) -> str | None:
    """`job_1700000000000_0001` (MapReduce) -> `application_1700000000000_0001`; a Tez DAG's or
    Spark's application id as it is; None for anything else."""
    if job_id.startswith("job_"):
        return "application_" + job_id[len("job_"):]
    if job_id.startswith("application_"):
        return job_id
    return None


def timedelta_ms(milliseconds: int | None) -> timedelta | None:
    return None if milliseconds is None or milliseconds < 0 else timedelta(milliseconds=milliseconds)


__all__ = ["BadLineage", "Edge", "QueryLineage", "TableColumn", "Vertex", "epoch_seconds", "integer", "locate",
           "normalised", "parse_graph", "records", "text", "timedelta_ms"]

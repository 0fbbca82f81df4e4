"""Sensitivity on Solr: the tag records, the rule's graph reads and the projection's writes.

Tags are the truth and live in the runs core (`kind:SENSITIVITY_TAG`, one record per source
and element, `tag_*` fields): element documents are rewritten whole by their extractors, so a
level written on them is a projection, re-applied by the sensitivity pass after extractions
(navd/sensitivity/component.py). purge removes only run records, never tags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from navd.errors import SolrError
from navd.index.client import CoreWriter, SolrIndex, batches
from navd.index.documents import solr_date
from navd.index.filters import terms_filter
from navd.lineage.rules import RelationAsk
from navd.lineage.store import SolrLineageStore
from navd.logs import get_logger
from navd.model import ElementType, RelationType
from navd.index.documents import parse_solr_date
from navd.sensitivity.rules import HIVE, Levels, Outcome, Tag, downstream_closure, hive_tags, recompute

log = get_logger("navd.sensitivity")

TAG_KIND = "SENSITIVITY_TAG"
#: the pass's checkpoint record (its `tag_time`: where the next pass starts)
CHECKPOINT_KIND = "SENSITIVITY_CHECKPOINT"
CHECKPOINT_ID = "sensitivity-checkpoint"
COMPONENT = "sensitivity"
#: the element field holding the projected level
FIELD = "sensitivity"
_FIELD_TYPE = ElementType.FIELD.value
_TABLE_TYPES = f"({ElementType.TABLE.value} OR {ElementType.VIEW.value})"
_PARENT_CHILD = RelationType.PARENT_CHILD.value
_IDS = 4000  # ids per request, as the lineage walk's store
_TAG_FIELDS = "identity,tag_target,tag_level,tag_source,tag_name,tag_table"


def tag_identity(source: str, target: str) -> str:
    return f"sensitivity|{source}|{target}"


def tag_document(tag: Tag, *, table: str | None = None, at: datetime | None = None) -> dict[str, Any]:
    """The runs-core record of a tag; `table`: the Hive table whose property set it (so one query
    finds every tag a table's properties give, to withdraw those gone)."""
    doc: dict[str, Any] = {"identity": tag_identity(tag.source, tag.target), "kind": TAG_KIND,
                           "component": COMPONENT, "tag_target": tag.target, "tag_level": tag.level,
                           "tag_source": tag.source, "tag_name": tag.name,
                           "tag_time": solr_date(at or datetime.now(UTC))}
    if table is not None:
        doc["tag_table"] = table
    return doc


def _tag(doc: Mapping[str, Any]) -> Tag:
    return Tag(str(doc["tag_target"]), str(doc["tag_level"]), str(doc["tag_source"]), str(doc.get("tag_name", "")))


@dataclasses.dataclass(frozen=True)
class GraphOptions:
    control_flow: bool = False

    @property
    def types(self) -> tuple[str, ...]:
        flows = [RelationType.DATA_FLOW.value]
        if self.control_flow:
            flows.append(RelationType.CONTROL_FLOW.value)
        return tuple(flows)


class SolrSensitivityGraph:
    """`navd.sensitivity.rules.SensitivityGraph` over the cores: column edges through the lineage
    walk's store (one request per level and 4,000 ids), levels and tags by terms filters."""

    def __init__(self, index: SolrIndex, options: GraphOptions = GraphOptions()) -> None:
        self.index = index
        self.options = options
        self._store = SolrLineageStore(index)

    def _edges(self, ids: Collection[str], near_end: int) -> Iterator[tuple[str, str]]:
        if not ids:
            return
        ask = RelationAsk(tuple(sorted(ids)), self.options.types, near_end, _FIELD_TYPE, _FIELD_TYPE, ends_only=True)
        for _, relation in self._store.related([ask]):
            yield relation.endpoint(near_end).id, relation.endpoint(3 - near_end).id

    def downstream(self, ids: Collection[str]) -> Iterable[tuple[str, str]]:
        return self._edges(ids, 1)

    def upstream(self, ids: Collection[str]) -> Iterable[tuple[str, str]]:
        return self._edges(ids, 2)

    def stored_levels(self, ids: Collection[str]) -> Mapping[str, str]:
        found: dict[str, str] = {}
        for chunk in batches(sorted(ids), _IDS):
            for doc in self.index.scan("elements", f"{FIELD}:*", fl=f"identity,{FIELD}",
                                       filters=[terms_filter("identity", chunk)], page_size=5000):
                found[str(doc["identity"])] = str(doc[FIELD])
        return found

    def levels_and_downstream(self, level_ids: Collection[str], walk_ids: Collection[str],
                              ) -> tuple[Mapping[str, str], Sequence[tuple[str, str]]]:
        """The two reads in parallel (a second thread on the same connection pool): a level of
        the propagation costs one round trip, as a level of the lineage walk does."""
        if not level_ids or not walk_ids:
            return self.stored_levels(level_ids), list(self.downstream(walk_ids))
        with ThreadPoolExecutor(max_workers=1) as pool:
            levels = pool.submit(self.stored_levels, level_ids)
            edges = list(self.downstream(walk_ids))
            return levels.result(), edges

    def tags_on(self, ids: Collection[str]) -> Mapping[str, Sequence[Tag]]:
        found: dict[str, list[Tag]] = {}
        for chunk in batches(sorted(ids), _IDS):
            for doc in self.index.scan("runs", f"kind:{TAG_KIND}", fl=_TAG_FIELDS,
                                       filters=[terms_filter("tag_target", chunk)], page_size=5000):
                tag = _tag(doc)
                found.setdefault(tag.target, []).append(tag)
        return found

    def tables_of(self, columns: Collection[str]) -> Mapping[str, str]:
        if not columns:
            return {}
        return {r.endpoint2.id: r.endpoint1.id
                for r in self._store.relations(sorted(columns), (_PARENT_CHILD,), 2, ends_only=True)}

    def columns_of(self, tables: Collection[str]) -> Mapping[str, Sequence[str]]:
        found: dict[str, list[str]] = {}
        if tables:
            for r in self._store.relations(sorted(tables), (_PARENT_CHILD,), 1, far_type=_FIELD_TYPE,
                                           ends_only=True):
                found.setdefault(r.endpoint1.id, []).append(r.endpoint2.id)
        return found


class Projection:
    """Writes levels onto element documents: atomic updates guarded by `_version_: 1` (never a
    bare document for an element that is not indexed; Solr skips those), through the one
    writer's core writer."""

    def __init__(self, index: SolrIndex) -> None:
        self.writer = CoreWriter(index, "elements", params={"failOnVersionConflicts": "false"})

    def write(self, outcome: Outcome) -> int:
        written = 0
        for levels in (outcome.columns, outcome.tables):
            for identity, level in levels.items():
                self.writer.add({"identity": identity, "_version_": 1, FIELD: {"set": level}})
                written += 1
        return written

    def close(self) -> None:
        if not self.writer.close():
            raise SolrError("sensitivity: Solr did not take every level written (see the log)")


class SensitivityIndex:
    """The feature's Solr side: tags (add, clear, read), recompute and project."""

    def __init__(self, index: SolrIndex, levels: Levels, options: GraphOptions = GraphOptions()) -> None:
        self.index = index
        self.levels = levels
        self.graph = SolrSensitivityGraph(index, options)

    # -- tags --------------------------------------------------------------------------------

    def tags(self, target: str | None = None) -> list[Tag]:
        filters = [terms_filter("tag_target", [target])] if target is not None else []
        return [_tag(doc) for doc in self.index.scan("runs", f"kind:{TAG_KIND}", fl=_TAG_FIELDS, filters=filters)]

    def any_tags(self) -> bool:
        return self.index.count("runs", f"kind:{TAG_KIND}") > 0

    def put_tags(self, docs: Iterable[Mapping[str, Any]]) -> None:
        self.index.add("runs", docs)
        self.index.commit("runs", soft=True)  # the recompute that follows reads them

    def delete_tags(self, identities: Collection[str]) -> None:
        if identities:
            self.index.delete_ids("runs", sorted(identities))
            self.index.commit("runs", soft=True)

    # -- the projection ----------------------------------------------------------------------

    def apply(self, dirty: Collection[str], *, clear: bool = False, tables: Collection[str] = ()) -> Outcome:
        """recompute + write the changes; with `clear`, `dirty` is closed downstream first."""
        if clear:
            dirty = downstream_closure(self.graph, dirty)
        outcome = recompute(self.graph, self.levels, dirty, clear=clear, tables=tables)
        projection = Projection(self.index)
        try:
            projection.write(outcome)
        finally:
            projection.close()
        self.index.commit("elements", soft=True)  # `navd search 'sensitivity:pii'` right after
        return outcome

    def target_columns(self, target: str, element_type: str) -> tuple[list[str], list[str]]:
        """(columns, tables) a tag on `target` applies to: a column itself, a table's columns."""
        if element_type == _FIELD_TYPE:
            return [target], list(self.graph.tables_of([target]).values())
        return list(self.graph.columns_of([target]).get(target, ())), [target]

    # -- Hive table properties ---------------------------------------------------------------

    def hive_tags(self, table: Mapping[str, Any], key: str) -> tuple[list[Tag], list[str]]:
        return hive_tags(table, key, self.levels)

    def hive_tables(self, since: datetime | None) -> Iterator[dict[str, Any]]:
        """The Hive tables and views indexed since `since` (all: None), with their properties."""
        return self.index.scan("elements", f"sourceType:HIVE AND type:{_TABLE_TYPES}",
                               fl="identity,qualifiedName,properties", filters=_indexed_since(since))

    def hive_tag_records(self, tables: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The tag records the properties of `tables` gave, by identity."""
        return {str(doc["identity"]): doc for doc in self.index.scan(
            "runs", f"kind:{TAG_KIND} AND tag_source:{HIVE}", fl="identity,tag_target,tag_level,tag_table",
            filters=[terms_filter("tag_table", tables)])}

    def element_types(self, ids: Sequence[str]) -> dict[str, str]:
        """The element type of each indexed element among `ids`."""
        return {str(d["identity"]): str(d.get("type", "")) for d in self.index.get("elements", ids)}

    # -- what the pass finds written since its checkpoint ------------------------------------

    def checkpoint(self) -> datetime | None:
        """When the last pass began (its checkpoint record), or None before the first pass."""
        docs = self.index.get("runs", [CHECKPOINT_ID])
        return parse_solr_date(str(docs[0]["tag_time"])) if docs and docs[0].get("tag_time") else None

    def save_checkpoint(self, started: datetime) -> None:
        self.index.add("runs", [{"identity": CHECKPOINT_ID, "kind": CHECKPOINT_KIND, "component": COMPONENT,
                                 "tag_time": solr_date(started)}])

    def unlevelled_columns(self, since: datetime | None) -> Iterator[str]:
        """The columns written since `since` without a level (an extractor rewrote them)."""
        return (str(d["identity"]) for d in self.index.scan(
            "elements", f"type:{_FIELD_TYPE} AND -{FIELD}:*", fl="identity", filters=_indexed_since(since)))

    def column_flow_targets(self, since: datetime | None) -> Iterator[str]:
        """The target columns of the column relations written since `since` (new lineage)."""
        flows = " OR ".join(self.graph.options.types)
        return (str(d["endpoint2Id"]) for d in self.index.scan(
            "relations", f"type:({flows}) AND endpoint1Type:{_FIELD_TYPE} AND endpoint2Type:{_FIELD_TYPE}",
            fl="identity,endpoint2Id", filters=_indexed_since(since)))

    def unlevelled_tables(self, since: datetime | None) -> Iterator[str]:
        """The tables and views written since `since` without a level."""
        return (str(d["identity"]) for d in self.index.scan(
            "elements", f"type:{_TABLE_TYPES} AND -{FIELD}:*", fl="identity", filters=_indexed_since(since)))


def _indexed_since(since: datetime | None) -> list[str]:
    return [] if since is None else [f"lastIndexed:[{solr_date(since)} TO *]"]

"""Re-created tables: moving query lineage that named an earlier incarnation onto its own element.

The HMS extractor keeps one identity per table name, `db.t@cluster`: after `DROP TABLE t` and
`CREATE TABLE t` between two runs, the next run rewrites that element with the new table (its
create time changed, so its fingerprint did). Atlas does the same for the name but keeps the
dropped table as a DELETED entity of its own, with its lineage; navd does that too, for lineage
that says which incarnation it touched: impalad logs each table's `tableCreateTime`, which the
lineage-log extractor stores on the table's DATA_FLOW (graph.TABLE_CREATE_TIME).

When a run describes a table (new or changed) whose create time it knows, the relations on
`db.t@cluster` whose create time is earlier are moved to `db.t~<create time>@cluster`
(names.hive_incarnation_qualified_name), a TABLE (or VIEW) element flagged deleted, created at
that time, `incarnationOf` the current name. Relations with a later create time (a log ahead of
the metastore) and relations without one (Spark, Hive: their logs carry no create time) stay on
the name. Column edges stay on the name's columns: impalad logs no create time per column edge.

Spark's event logs carry no create time either, but they tell the DROP and the CREATE
themselves: `recreate` moves the relations on the name last seen before the CREATE onto the
earlier incarnation's element, deleted as of the DROP, and makes the name alive again, created at
the CREATE (the Spark extractor calls it for the tables its logs may speak for).

The relations are found by one terms query per chunk of described tables of a database (not one
request per table) and rewritten as the linker rewrites a relation (linker.plan_page: the new
document first, the old one deleted once Solr took it). The incarnation elements are posted
before the relations that point at them, so a crash in between leaves an element without
lineage, never lineage without its element; the run's state is not committed then, so the next
run describes the table again and finishes the move (moved relations are not found again).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from navd.index.client import SolrIndex
from navd.index.documents import FIRST_SEEN, element_document, endpoint_field, revival_update, stored_time
from navd.index.queries import fields_hung_under, relations_touching
from navd.lineage.stored import StoredElement
from navd.model import Element, ElementType, EntityRef, SourceType
from navd.linker.linker import plan_page, write_result
from navd.names import hive_incarnation_qualified_name, parse_hive_name

#: the relation property impalad's `tableCreateTime` is stored in (graph.TABLE_CREATE_TIME)
TABLE_CREATE_TIME = "tableCreateTime"
#: table identities per terms query
_CHUNK = 500
#: relations rewritten per request
_PAGE = 500


def create_time_of(doc: Mapping[str, Any]) -> int | None:
    """The `tableCreateTime` property of a stored relation document, or None."""
    raw = doc.get("properties")
    if not isinstance(raw, str) or TABLE_CREATE_TIME not in raw:
        return None
    try:
        value = json.loads(raw).get(TABLE_CREATE_TIME)
        return int(value) if value is not None else None
    except (ValueError, TypeError, AttributeError):
        return None


def incarnation_element(table: EntityRef, create_time: int, *, now: datetime,
                        extractor_run_id: str | None, dropped: datetime | None = None) -> Element:
    """The deleted element of the incarnation of `table` created at `create_time`, deleted when
    it was `dropped` (when a log says so; else by `now`, when the metastore showed it gone)."""
    name = parse_hive_name(table.qualified_name)
    parent = None
    if name is not None and name.table is not None:
        parent = EntityRef(SourceType.HIVE, f"{name.database}@{name.cluster}", ElementType.DATABASE)
    created = datetime.fromtimestamp(create_time, UTC)
    return Element(SourceType.HIVE, table.type, hive_incarnation_qualified_name(table.qualified_name, create_time),
                   name=name.table if name is not None and name.table else table.qualified_name, parent=parent,
                   created=created, deleted=True, delete_time=max(dropped or now, created),
                   extractor_run_id=extractor_run_id,
                   properties={"incarnationOf": table.qualified_name, TABLE_CREATE_TIME: str(create_time)})


def retire_incarnations(index: SolrIndex, tables: Mapping[str, tuple[EntityRef, int]], *, now: datetime,
                        extractor_run_id: str | None = None) -> int:
    """Move the relations of earlier incarnations of `tables` (identity -> (the current table,
    its create time in epoch seconds)) onto incarnation elements; the number of relations moved."""
    moved = 0
    written: set[str] = set()  # incarnation elements posted by this call
    ids = list(tables)
    for start in range(0, len(ids), _CHUNK):
        chunk = {i: tables[i] for i in ids[start:start + _CHUNK]}
        page: list[tuple[dict[str, Any], dict[int, StoredElement]]] = []
        elements: dict[str, Element] = {}
        for doc in _found(index, chunk):
            targets = _targets(doc, chunk, now, extractor_run_id, elements)
            if targets:
                page.append((doc, targets))
            if len(page) >= _PAGE:
                moved += _move(index, page, elements, written)
                page, elements = [], {}
        moved += _move(index, page, elements, written)
    return moved


def _targets(doc: Mapping[str, Any], tables: Mapping[str, tuple[EntityRef, int]], now: datetime,
             run_id: str | None, elements: dict[str, Element]) -> dict[int, StoredElement]:
    """The ends of `doc` that named an earlier incarnation of one of `tables`, and its element."""
    create_time = create_time_of(doc)
    targets: dict[int, StoredElement] = {}
    if create_time is None:
        return targets
    for end in (1, 2):
        found = tables.get(str(doc.get(endpoint_field(end, "Id"), "")))
        if found is None or create_time >= found[1]:
            continue  # this incarnation or a later one: stays on the name
        table = dataclasses.replace(found[0], type=ElementType(str(doc.get(endpoint_field(end, "Type"))
                                                                   or found[0].type)))
        element = incarnation_element(table, create_time, now=now, extractor_run_id=run_id)
        elements.setdefault(element.identity, element)
        targets[end] = StoredElement(element.identity, element.qualified_name, element.type.value,
                                     element.source_type.value, element.name, deleted=True)
    return targets


@dataclasses.dataclass(frozen=True)
class Recreation:
    """A table dropped and created again under its name, as a log that ran both tells it."""

    #: the name (`db.t@cluster`), which the new incarnation keeps
    table: EntityRef
    #: when the earlier incarnation was dropped, and when the new one was created
    dropped: datetime
    created: datetime
    #: when the earlier incarnation was created, if a source said so (else its first sighting)
    earlier_created: datetime | None
    #: whether the name's element is alive again (False: a later DROP, already applied, flagged
    #: it; it keeps that flag and gets this incarnation's create time)
    alive: bool


def recreate(index: SolrIndex, recreation: Recreation, *, extractor_run_id: str | None = None) -> int:
    """Record a re-creation told by a log whose lineage carries no create time (Spark): the
    relations on the name last seen before the new incarnation was created move onto the earlier
    incarnation's element (created when `earlier_created` says, else at the first of them),
    deleted when it was dropped; then the name's element is created at `recreation.created`,
    alive again unless dropped since. The number of relations moved.

    The relations a create time places (impalad's) are the metastore run's to move
    (`retire_incarnations`); undated ones (a table's columns) stay on the name, as they do there.
    """
    table = recreation.table
    query = relations_touching((table.identity,), last_seen_before=recreation.created)
    # one table's lineage before its re-creation: the incarnation's name needs the first of them
    docs = [doc for doc in index.scan("relations", filters=query.filters, params=query.params)
            if create_time_of(doc) is None]
    moved = 0
    if docs:
        earliest = min(stored_time(doc.get(FIRST_SEEN)) or recreation.dropped for doc in docs)
        born = recreation.earlier_created if recreation.earlier_created is not None else earliest
        element = incarnation_element(table, int(born.timestamp()), now=recreation.dropped,
                                      extractor_run_id=extractor_run_id, dropped=recreation.dropped)
        written: set[str] = set()
        for start in range(0, len(docs), _PAGE):
            page = []
            for doc in docs[start:start + _PAGE]:
                targets = {end: StoredElement(element.identity, element.qualified_name, element.type.value,
                                              element.source_type.value, element.name, deleted=True)
                           for end in (1, 2) if doc.get(endpoint_field(end, "Id")) == table.identity}
                page.append((doc, targets))
            moved += _move(index, page, {element.identity: element}, written)
    index.atomic_update("elements", [revival_update(table.identity, recreation.created, alive=recreation.alive)])
    if recreation.alive:
        _revive_columns(index, recreation)
    return moved


def _revive_columns(index: SolrIndex, recreation: Recreation) -> None:
    """The table's columns the DROP flagged that the new incarnation's lineage names (a
    relation last seen at or after the CREATE) are alive again with it, created at the CREATE.
    The others stay flagged: the new table may not have them (the metastore's next pass says)."""
    hung = {str(doc[endpoint_field(2, "Id")]) for doc in index.scan(
        "relations", filters=fields_hung_under([recreation.table.identity]), fl=f"identity,{endpoint_field(2, 'Id')}")}
    flagged = sorted(str(doc["identity"]) for doc in index.get("elements", sorted(hung))
                     if StoredElement.from_doc(doc).deleted_at(recreation.created))
    named: set[str] = set()
    for start in range(0, len(flagged), _CHUNK):
        chunk = set(flagged[start:start + _CHUNK])
        query = relations_touching(chunk, last_seen_since=recreation.created)
        for doc in index.scan("relations", filters=query.filters, params=query.params,
                              fl=f"identity,{endpoint_field(1, 'Id')},{endpoint_field(2, 'Id')}"):
            named.update(end for end in (str(doc.get(endpoint_field(1, "Id"))), str(doc.get(endpoint_field(2, "Id"))))
                         if end in chunk)
    if named:
        index.atomic_update("elements", [revival_update(column, recreation.created) for column in sorted(named)])


def _move(index: SolrIndex, page: list[tuple[dict[str, Any], dict[int, StoredElement]]],
          elements: Mapping[str, Element], written: set[str]) -> int:
    new = [element for identity, element in elements.items() if identity not in written]
    if new:
        # the elements first: never lineage pointing at an element not there (module docstring)
        index.add("elements", (element_document(e) for e in new))
        written.update(e.identity for e in new)
    if not page:
        return 0
    write_result(index, plan_page(page))
    return len(page)


def _found(index: SolrIndex, tables: Mapping[str, tuple[EntityRef, int]]) -> Iterator[dict[str, Any]]:
    """Relations with a create time on either end naming one of `tables`, whole (rewritten)."""
    query = relations_touching(tables, having_property=TABLE_CREATE_TIME)
    yield from index.scan("relations", filters=query.filters, params=query.params)


__all__ = ["TABLE_CREATE_TIME", "Recreation", "create_time_of", "incarnation_element", "recreate",
           "retire_incarnations"]

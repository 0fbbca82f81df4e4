"""Sensitivity levels and their propagation downstream along column lineage, the pure part.

The rule reads the index only through a `SensitivityGraph` (navd/sensitivity/store.py on Solr,
an in-memory one in the tests), so every case is testable without Solr.

- Levels are ordered (`[sensitivity] levels`, lowest first; default public < internal <
  confidential < pii).
- A tag (a user's `navd tag`, or a Hive table property) sets a level on a column or a table.
  A table's tag is the tag of each of its columns: a table marked confidential holds
  confidential data in every column, so every column carries it downstream.
- A column's level is the highest level of the tags on it, on its table, and on every column
  upstream of it along column DATA_FLOW (CONTROL_FLOW too when `control_flow` is configured:
  a filter or join key says something about the rows, not the values).
- A table's level is the highest of its own tag and its columns' levels.

The levels on elements are a projection of the tags: `recompute` brings the projection of a
set of "dirty" columns (a tag added or removed, new lineage, an element rewritten by its
extractor, which drops every field it does not write) and of everything downstream of them up
to date. It reads the dirty columns' direct upstream neighbours, whose levels are correct, and
walks downstream from the roots (tags and those neighbours) one level of the graph per request,
highest level first: a column reached by a higher level is not walked again by a lower one
(everything downstream of it already has at least that level), so each column is visited once
per pass and cycles end. Only the affected columns are held in memory, never the graph.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

from navd.errors import UsageError
from navd.names import field_qualified_name
from navd.names import identity as element_identity

DEFAULT_LEVELS = ("public", "internal", "confidential", "pii")
#: where a tag comes from: a user (`navd tag`, the API) or a Hive table property
USER, HIVE = "user", "hive"


@dataclasses.dataclass(frozen=True)
class Levels:
    """The configured levels, lowest first."""

    names: tuple[str, ...] = DEFAULT_LEVELS

    def __post_init__(self) -> None:
        if not self.names:
            raise UsageError("[sensitivity] levels: at least one level is needed")
        if len(set(self.names)) != len(self.names):
            raise UsageError(f"[sensitivity] levels: a level is named twice in {', '.join(self.names)}")

    def rank(self, level: str) -> int:
        """The level's position (0: the lowest); UsageError naming the levels for an unknown one."""
        try:
            return self.names.index(level.strip().lower())
        except ValueError:
            raise UsageError(f"sensitivity level {level!r} is not one of the levels "
                             f"{', '.join(self.names)} ([sensitivity] levels)") from None

    def known(self, level: str) -> bool:
        return level.strip().lower() in self.names

    def highest(self, levels: Iterable[str | None]) -> str | None:
        """The highest of `levels` (None and unknown levels ignored); None if there is none."""
        ranks = [self.names.index(level) for level in levels if level is not None and level in self.names]
        return self.names[max(ranks)] if ranks else None


@dataclasses.dataclass(frozen=True)
class Tag:
    """A level set on one element by one source."""

    target: str  # the element's identity (a column or a table)
    level: str
    source: str  # USER or HIVE
    name: str = ""  # the element's qualifiedName, for people


class SensitivityGraph(Protocol):
    """What the rule reads. Implementations batch (on Solr: one request per call and chunk of
    ids); none loads the whole graph."""

    def downstream(self, ids: Collection[str]) -> Iterable[tuple[str, str]]:
        """(column, column it flows into) for the column edges leaving `ids`."""

    def upstream(self, ids: Collection[str]) -> Iterable[tuple[str, str]]:
        """(column, column it comes from) for the column edges entering `ids`."""

    def stored_levels(self, ids: Collection[str]) -> Mapping[str, str]:
        """The level stored on those of `ids` that have one."""

    def levels_and_downstream(self, level_ids: Collection[str], walk_ids: Collection[str],
                              ) -> tuple[Mapping[str, str], Sequence[tuple[str, str]]]:
        """`stored_levels(level_ids)` and `downstream(walk_ids)`, asked together."""

    def tags_on(self, ids: Collection[str]) -> Mapping[str, Sequence[Tag]]:
        """The tags whose target is one of `ids`, by target."""

    def tables_of(self, columns: Collection[str]) -> Mapping[str, str]:
        """The table (PARENT_CHILD parent) of each of `columns` that has one."""

    def columns_of(self, tables: Collection[str]) -> Mapping[str, Sequence[str]]:
        """The columns of each of `tables`."""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a recompute changed: the new level (None: none) of every element whose level moved."""

    columns: Mapping[str, str | None]
    tables: Mapping[str, str | None]
    walked: int  # columns read in the walk (the affected set)


def effective_tags(graph: SensitivityGraph, columns: Collection[str],
                   tables_of: Mapping[str, str]) -> dict[str, list[Tag]]:
    """The tags that apply to each of `columns`: its own and its table's."""
    tags = graph.tags_on(set(columns) | set(tables_of.values()))
    found: dict[str, list[Tag]] = {}
    for column in columns:
        applying = [*tags.get(column, ()), *tags.get(tables_of.get(column, ""), ())]
        if applying:
            found[column] = applying
    return found


def downstream_closure(graph: SensitivityGraph, columns: Iterable[str]) -> set[str]:
    """`columns` and every column downstream of them (one read per level of the graph)."""
    closure = set(columns)
    frontier = list(closure)
    while frontier:
        onward = {far for _, far in graph.downstream(frontier)} - closure
        closure |= onward
        frontier = sorted(onward)
    return closure


def recompute(graph: SensitivityGraph, levels: Levels, dirty: Collection[str], *, clear: bool = False,
              tables: Collection[str] = ()) -> Outcome:
    """Bring the levels of the `dirty` columns and of everything downstream of them up to date.

    `clear`: the dirty columns' stored levels may be too high (a tag was withdrawn): they are
    recomputed from scratch, so `dirty` must then be closed downstream (downstream_closure),
    or a column outside it would keep a level only the withdrawn tag gave. Without `clear`,
    levels only rise (new tags, new lineage, rewritten elements). `tables`: tables whose level
    is recomputed too (a table's own tag changed), besides those of the columns that changed."""
    dirty_set = set(dirty)
    before = dict(graph.stored_levels(dirty_set))
    # rank per column known in this pass; absent: not read yet
    current: dict[str, int] = {}
    for column in dirty_set:
        stored = before.get(column)
        current[column] = -1 if clear or stored is None or not levels.known(stored) else levels.rank(stored)
    table_of = dict(graph.tables_of(dirty_set))
    roots: dict[str, int] = {}
    for column, tags in effective_tags(graph, dirty_set, table_of).items():
        roots[column] = max(levels.rank(t.level) for t in tags if levels.known(t.level))
    # The dirty columns' neighbours outside the set hold correct levels: they pass them on.
    outside = {far for _, far in graph.upstream(dirty_set)} - dirty_set
    for column, level in graph.stored_levels(outside).items():
        if levels.known(level):
            current[column] = roots[column] = max(roots.get(column, -1), levels.rank(level))
    before.update({c: levels.names[r] for c, r in current.items() if c not in dirty_set and r >= 0})

    expanded: dict[str, int] = {}  # column -> the rank it was walked from in this pass
    for rank in sorted(set(roots.values()), reverse=True):
        frontier = []
        for column, root_rank in roots.items():
            if root_rank == rank and expanded.get(column, -1) < rank:
                current[column] = max(current.get(column, -1), rank)
                expanded[column] = rank
                frontier.append(column)
        pairs = list(graph.downstream(frontier))
        while pairs:
            # The next level's edges are asked together with this level's stored levels (one
            # round trip per level, not two): for every column that may be walked on; those the
            # levels then rule out are dropped.
            unread = {far for _, far in pairs if far not in current}
            maybe = {far for _, far in pairs if expanded.get(far, -1) < rank and current.get(far, -1) < rank}
            stored, ahead = graph.levels_and_downstream(unread, maybe)
            for column in unread:
                level = stored.get(column)
                current[column] = levels.rank(level) if level is not None and levels.known(level) else -1
                if level is not None:
                    before[column] = level
            onward: set[str] = set()
            for _, far in pairs:
                if current[far] < rank and expanded.get(far, -1) < rank:
                    current[far] = rank
                    expanded[far] = rank
                    onward.add(far)
            pairs = [(near, far) for near, far in ahead if near in onward]

    changed: dict[str, str | None] = {}
    for column, rank in current.items():
        level = levels.names[rank] if rank >= 0 else None
        if level != before.get(column):
            changed[column] = level
    return Outcome(changed, _table_levels(graph, levels, changed, current, dirty_set, table_of, tables),
                   len(current))


def _table_levels(graph: SensitivityGraph, levels: Levels, changed: Mapping[str, str | None],
                  current: Mapping[str, int], dirty: set[str], table_of: Mapping[str, str],
                  tables: Collection[str]) -> dict[str, str | None]:
    """The new levels of the tables whose columns changed or were dirty, and of `tables`: the
    highest of their own tags and their columns' levels."""
    table_of = {**table_of, **graph.tables_of([c for c in changed if c not in table_of])}
    affected = {table_of[c] for c in set(changed) | dirty if c in table_of} | set(tables)
    if not affected:
        return {}
    columns_of = graph.columns_of(affected)
    all_columns = {c for cols in columns_of.values() for c in cols}
    stored = graph.stored_levels((all_columns - set(current)) | affected)
    own = graph.tags_on(affected)
    found: dict[str, str | None] = {}
    for table in affected:
        candidates: list[str | None] = [t.level for t in own.get(table, ())]
        for column in columns_of.get(table, ()):
            if column in current:
                candidates.append(levels.names[current[column]] if current[column] >= 0 else None)
            else:
                candidates.append(stored.get(column))
        level = levels.highest(candidates)
        if level != stored.get(table):
            found[table] = level
    return found


@dataclasses.dataclass(frozen=True)
class Step:
    """One element on the path that carried a level: the tag at its start, if any."""

    id: str
    tags: tuple[Tag, ...] = ()


def explain(graph: SensitivityGraph, levels: Levels, column: str) -> tuple[str | None, tuple[Step, ...]]:
    """The column's level and the path that carried it: from a tagged column (or a column of a
    tagged table) down to `column`, shortest first. Every column on such a path has exactly that
    level (it is upstream of `column` and at least the tag's), so the walk upstream follows only
    columns with that level. An empty path: the level is stored but no tag explains it any more
    (the next recompute withdraws it)."""
    level = graph.stored_levels([column]).get(column)
    if level is None:
        return None, ()
    came_from: dict[str, str | None] = {column: None}
    frontier = [column]
    while frontier:
        table_of = graph.tables_of(frontier)
        tagged = effective_tags(graph, frontier, table_of)
        for node in frontier:  # the nearest tag with the level ends the walk
            carrying = tuple(t for t in tagged.get(node, ()) if t.level == level)
            if carrying:
                path = [Step(node, carrying)]
                while came_from[path[-1].id] is not None:
                    path.append(Step(str(came_from[path[-1].id])))
                return level, tuple(path)
        pairs = [(near, far) for near, far in graph.upstream(frontier) if far not in came_from]
        same = graph.stored_levels({far for _, far in pairs})
        onward: list[str] = []
        for near, far in pairs:
            if far not in came_from and same.get(far) == level:
                came_from[far] = near
                onward.append(far)
        frontier = onward
    return level, ()


# -- tags from elements ---------------------------------------------------------------------

def hive_tags(table: Mapping[str, Any], key: str, levels: Levels) -> tuple[list[Tag], list[str]]:
    """The tags a Hive table's properties give (`<key>` on the table, `<key>.<column>` on a
    column) and one line per value that is not a level (logged and skipped)."""
    properties = table.get("properties")
    try:
        props = json.loads(properties) if isinstance(properties, str) else {}
    except ValueError:
        props = {}
    prefix = f"tblproperty.{key}"
    found: list[Tag] = []
    skipped: list[str] = []
    wanted_columns: dict[str, str] = {}
    for name, value in props.items():
        if name == prefix:
            column = None
        elif name.startswith(prefix + "."):
            column = name[len(prefix) + 1:].lower()
        else:
            continue
        if not levels.known(str(value)):
            skipped.append(f"{table.get('qualifiedName')}: property {name[len('tblproperty.'):]}={value!r} "
                           f"is not one of {', '.join(levels.names)}")
            continue
        level = str(value).strip().lower()
        if column is None:
            found.append(Tag(str(table["identity"]), level, HIVE, str(table.get("qualifiedName", ""))))
        else:
            wanted_columns[column] = level
    if wanted_columns:
        for column, level in wanted_columns.items():
            name = field_qualified_name(str(table.get("qualifiedName", "")), column)
            found.append(Tag(element_identity("HIVE", name), level, HIVE, name))
    return found, skipped


def user_tag(target: Mapping[str, Any], level: str) -> Tag:
    return Tag(str(target["identity"]), level, USER, str(target.get("qualifiedName", "")))

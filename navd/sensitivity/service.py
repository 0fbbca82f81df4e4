"""Sensitivity as `navd tag` and /api/sensitivity ask for it: a user's tag set or cleared on a
table or column and carried downstream, and a column's level explained; names resolved as
`navd entity` resolves them (navd/index/lookup.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from navd.config import NavdConfig
from navd.errors import UsageError
from navd.index.client import SolrIndex
from navd.index.lookup import Scope, resolve_one
from navd.model import ElementType
from navd.names import shown
from navd.sensitivity.component import sensitivity_index
from navd.sensitivity.rules import USER, Tag, explain, user_tag
from navd.sensitivity.store import SensitivityIndex, tag_document, tag_identity

_FIELD_TYPE = ElementType.FIELD.value
_TAGGABLE = (ElementType.FIELD.value, ElementType.TABLE.value, ElementType.VIEW.value)


# -- what the CLI and the server call ---------------------------------------------------------

def tag(index: SolrIndex, config: NavdConfig, entity: str, level: str, scope: Scope = Scope()) -> TagResult:
    """`navd tag ENTITY --sensitivity LEVEL`: the user's tag on the column or table `entity`
    stands for, propagated downstream. UsageError for an unknown level."""
    sensitivity = sensitivity_index(index, config)
    sensitivity.levels.rank(level)  # an unknown level before anything is resolved or written
    return tag_element(sensitivity, _tag_target(index, entity, scope), level)


def clear(index: SolrIndex, config: NavdConfig, entity: str, scope: Scope = Scope()) -> TagResult:
    """`navd tag ENTITY --clear`: the user's tag removed and withdrawn downstream."""
    return clear_element(sensitivity_index(index, config), _tag_target(index, entity, scope))


def explain_column(index: SolrIndex, config: NavdConfig, column: str, scope: Scope = Scope()) -> Explanation:
    """`navd tag --explain COLUMN`: the column's level and the path that carried it."""
    return explain_element(sensitivity_index(index, config), resolve_one(index, column, scope))


def _tag_target(index: SolrIndex, entity: str, scope: Scope) -> dict[str, Any]:
    doc = resolve_one(index, entity, scope)
    if doc.get("type") not in _TAGGABLE:
        raise UsageError(f"tag: {shown(entity)} is a {doc.get('type')}: sensitivity is set on a table, "
                         f"a view or a column")
    return doc


# -- on the feature's Solr side ---------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class TagResult:
    target: dict[str, Any]  # the element tagged, as users see it
    level: str | None  # the user's tag now (None: cleared)
    columns: int  # column levels changed
    tables: int  # table levels changed

    def as_dict(self) -> dict[str, Any]:
        return {"identity": self.target.get("identity"), "qualifiedName": self.target.get("qualifiedName"),
                "type": self.target.get("type"), "tag": self.level, "columnsChanged": self.columns,
                "tablesChanged": self.tables}


@dataclasses.dataclass(frozen=True)
class Explanation:
    column: dict[str, Any]
    level: str | None
    #: from the tagged element down to the column: (identity, qualifiedName, tags there)
    path: tuple[tuple[str, str, tuple[Tag, ...]], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"identity": self.column.get("identity"), "qualifiedName": self.column.get("qualifiedName"),
                "sensitivity": self.level,
                "path": [{"identity": i, "qualifiedName": name,
                          **({"tags": [{"target": t.target, "targetName": t.name, "level": t.level,
                                        "source": t.source} for t in tags]} if tags else {})}
                         for i, name, tags in self.path]}


def tag_element(sensitivity: SensitivityIndex, target: Mapping[str, Any], level: str) -> TagResult:
    """The user's tag on `target` (a column or a table) set to `level`, applied downstream; a
    lower level than before withdraws the higher one first."""
    level = sensitivity.levels.names[sensitivity.levels.rank(level)]
    identity = str(target["identity"])
    previous = [t for t in sensitivity.tags(identity) if t.source == USER]
    sensitivity.put_tags([tag_document(user_tag(target, level))])
    columns, tables = sensitivity.target_columns(identity, str(target.get("type", "")))
    lowered = any(sensitivity.levels.rank(t.level) > sensitivity.levels.rank(level) for t in previous)
    outcome = sensitivity.apply(columns, clear=lowered, tables=tables)
    return TagResult(dict(target), level, len(outcome.columns), len(outcome.tables))


def clear_element(sensitivity: SensitivityIndex, target: Mapping[str, Any]) -> TagResult:
    """The user's tag on `target` removed and withdrawn downstream (levels other tags give stay)."""
    identity = str(target["identity"])
    sensitivity.delete_tags([tag_identity(USER, identity)])
    columns, tables = sensitivity.target_columns(identity, str(target.get("type", "")))
    outcome = sensitivity.apply(columns, clear=True, tables=tables)
    return TagResult(dict(target), None, len(outcome.columns), len(outcome.tables))


def explain_element(sensitivity: SensitivityIndex, column: Mapping[str, Any]) -> Explanation:
    """The level of a column and the path that carried it (navd.sensitivity.rules.explain); a table
    is explained by its own tags and its columns' levels, not a path."""
    identity = str(column["identity"])
    if column.get("type") != _FIELD_TYPE:
        raise UsageError(f"--explain: {column.get('qualifiedName')} is a {column.get('type')}: explain a column "
                         f"(a table's level is the highest of its own tag and its columns')")
    level, steps = explain(sensitivity.graph, sensitivity.levels, identity)
    names = {str(d["identity"]): str(d.get("qualifiedName", "")) for d in
             sensitivity.index.get("elements", [s.id for s in steps])} if steps else {}
    return Explanation(dict(column), level, tuple((s.id, names.get(s.id, s.id), s.tags) for s in steps))

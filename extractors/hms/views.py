"""View SQL -> the tables a view reads and its column lineage (pure: no I/O).

A view's direct inputs are the tables and views named in its FROM clauses (CTE names are not
inputs); a view over a view reads that view, and the inner view's own lineage is the inner
view's business, so chains work without expanding anything.

Column lineage uses sqlglot's `lineage` with the input tables' columns (the `schema`): every
output column is traced through subqueries and CTEs to the input columns it is computed from.
A column that is the input column itself (possibly renamed) is SIMPLE; anything computed is
EXPRESSION with the projection's SQL text. Without the input columns (an input navd has not
described, `SELECT *` over it) column lineage is left out; the table-level lineage stays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, lineage
from sqlglot.optimizer.scope import traverse_scope

DIALECT = "spark"

#: {database: {table: [column, ...]}}, all lower case
Schema = Mapping[str, Mapping[str, Sequence[str]]]


class ViewSqlError(ValueError):
    """View SQL that cannot be parsed; the message names the view."""


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class TableName:
    database: str
    table: str


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class ColumnLineage:
    """Output column `target` (the view's column) computed from `source_table`.`source_column`."""

    target: str
    source_table: TableName
    source_column: str
    #: None when the target is the source column itself (SIMPLE)
    expression: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ViewLineage:
    inputs: tuple[TableName, ...]
    columns: tuple[ColumnLineage, ...]
    #: why column lineage is missing or partial (empty when complete)
    note: str = ""


def _parse(view: str, sql: str) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(sql, dialect=DIALECT)
    except SqlglotError as exc:
        raise ViewSqlError(f"view {view}: cannot parse its SQL: {str(exc).splitlines()[0]}") from None
    if tree is None or not isinstance(tree, exp.Query):
        raise ViewSqlError(f"view {view}: its SQL is not a query")
    return tree


def _norm(name: str) -> str:
    return name.strip().strip("`").lower()


def input_tables(view: str, sql: str, default_database: str) -> tuple[TableName, ...]:
    """The tables and views `sql` reads directly, sorted; unqualified names in `default_database`."""
    tree = _parse(view, sql)
    found: set[TableName] = set()
    try:
        scopes = traverse_scope(tree)
    except SqlglotError as exc:
        raise ViewSqlError(f"view {view}: cannot resolve its FROM clauses: {str(exc).splitlines()[0]}") from None
    for scope in scopes:
        for source in scope.sources.values():
            if isinstance(source, exp.Table) and source.name:
                found.add(TableName(_norm(source.db) if source.db else _norm(default_database), _norm(source.name)))
    return tuple(sorted(found))


def _expression_text(node: Node) -> str | None:
    """The first computed projection on the way from the output column to its source, if any."""
    for step in node.walk():
        if isinstance(step.source, exp.Table):
            continue
        projection = step.expression
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(inner, exp.Column):
            return inner.sql(dialect=DIALECT)
    return None


def _source_column(step: Node) -> str:
    """The column a source step of sqlglot's lineage reads. Its name is `table.column` in
    sqlglot's own quoting (`t."b.c"`), so it is parsed, not split at a '.': a column name may
    hold dots and spaces (flattened JSON)."""
    try:
        return _norm(exp.to_column(step.name).name)
    except SqlglotError:
        return _norm(step.name.rsplit(".", 1)[-1])


def view_lineage(view: str, sql: str, default_database: str, view_columns: Sequence[str],
                 schema: Schema) -> ViewLineage:
    """Table and column lineage of one view.

    `view_columns`: the view's own columns in order; they rename the query's outputs
    positionally (CREATE VIEW v (a, b) AS ...). Raises ViewSqlError for SQL that does not parse.
    """
    inputs = input_tables(view, sql, default_database)
    missing = [t for t in inputs if t.table not in schema.get(t.database, {})]
    if missing:
        names = ", ".join(f"{t.database}.{t.table}" for t in missing)
        return ViewLineage(inputs, (), f"columns of {names} unknown")
    sg_schema = {db: {t: {c: "string" for c in cols} for t, cols in tables.items()}
                 for db, tables in schema.items() if any(TableName(db, t) in inputs for t in tables)}
    try:
        nodes = lineage(None, sql, schema=sg_schema, dialect=DIALECT, db=default_database.lower())
    except (SqlglotError, KeyError, ValueError) as exc:
        return ViewLineage(inputs, (), f"column lineage failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    outputs = list(nodes.items())
    note = ""
    if len(outputs) != len(view_columns):
        note = f"query has {len(outputs)} output columns, the view {len(view_columns)}"
    edges: set[ColumnLineage] = set()
    for (_, node), target in zip(outputs, view_columns, strict=False):
        expression = _expression_text(node)
        for step in node.walk():
            if not isinstance(step.source, exp.Table) or step.downstream:
                continue
            table = step.source
            source = TableName(_norm(table.db) if table.db else default_database.lower(), _norm(table.name))
            edges.add(ColumnLineage(_norm(target), source, _source_column(step), expression))
    return ViewLineage(inputs, tuple(sorted(edges, key=lambda e: (e.target, e.source_table, e.source_column))), note)


__all__ = ["ColumnLineage", "Schema", "TableName", "ViewLineage", "ViewSqlError", "input_tables", "view_lineage"]

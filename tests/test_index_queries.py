"""The named queries of navd/index/queries.py: a value holding query syntax stays one value.

Each query is read back with navd's parser of Solr's grammar (query_syntax.parse): the value
must come back as one phrase (or one wildcard term) of the field it was meant for, never as
clauses of its own.
"""

from __future__ import annotations

import pytest

from navd.index.queries import (any_of, column_edges_into_view, component_runs, interrupted_runs, not_flagged_below,
                                not_flagged_children, property_is,
                                relations_between, spark_executions_writing, view_column_stubs)
from navd.index.query_syntax import Clause, Phrase, Query, Term, parse
from navd.model import SourceType

#: values that would each break out of a query pasted without quoting
HOSTILE = ['a" OR *:*', 'x\\" OR kind:*', "x) OR (kind:run", "{!join fromIndex=elements}*:*", "a AND b", "\\"]


def _fields(query: Query) -> dict[str, list[object]]:
    """field -> the nodes under it, over the top-level clauses (groups are read through)."""
    out: dict[str, list[object]] = {}
    for clause in query.clauses:
        _collect(clause, out)
    return out


def _collect(clause: Clause, out: dict[str, list[object]], field: str | None = None) -> None:
    name = clause.field or field or ""
    node = clause.node
    if hasattr(node, "query"):
        for inner in node.query.clauses:  # type: ignore[union-attr]
            _collect(inner, out, name)
    else:
        out.setdefault(name, []).append(node)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_value_is_one_phrase_of_its_field(value: str) -> None:
    for query, field in ((component_runs(value), "component"), (interrupted_runs(value), "host"),
                         (property_is("owner", value), "prop_owner"), (relations_between(value, "b"), "endpoint1Id"),
                         (spark_executions_writing([value]), "endpoint2Id")):
        fields = _fields(parse(query))
        assert fields[field] == [Phrase(fields[field][0].image)], query  # type: ignore[union-attr]
        assert fields[field][0].text == value, query  # type: ignore[union-attr]
        assert all(name for name in fields), query  # no clause without its field: nothing broke out


def test_any_of_quotes_each_value_once() -> None:
    fields = _fields(parse(any_of("identity", ["b", 'a"', "b"])))
    assert [n.text for n in fields["identity"]] == ['a"', "b"]  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="identity"):
        any_of("identity", [])


def test_a_view_name_is_literal_in_its_column_pattern() -> None:
    view = "db.v*x@c"  # a '*' in the name matches itself only; the pattern's own '*' any column
    for query in (view_column_stubs(SourceType.HIVE, view, "owner", "alice"), column_edges_into_view("e", view)):
        fields = _fields(parse(query))
        [pattern] = fields.get("qualifiedName") or fields["endpoint2QualifiedName"]
        assert isinstance(pattern, Term) and pattern.kind == "wildcard"
        assert pattern.image == "db.v\\*x.*@c", query


def test_component_runs_adds_the_state_and_the_end() -> None:
    fields = _fields(parse(component_runs("spark", state="FAILED", ended=True)))
    assert [n.text for n in fields["state"]] == ["FAILED"]  # type: ignore[attr-defined]
    assert [n.kind for n in fields["ended"]] == ["star"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("filters", "expected"), [
    (not_flagged_below("hdfs://nn:8020/data/"), ["{!prefix f=qualifiedName}hdfs://nn:8020/data/", "deleted:false"]),
    (not_flagged_below("s3a://b/k/", SourceType.S3),
     ["{!prefix f=qualifiedName}s3a://b/k/", "deleted:false", "sourceType:S3"]),
    (not_flagged_children("abc123"), ["{!term f=parentId}abc123", "deleted:false"]),
])
def test_the_file_system_extractors_filters(filters: list[str], expected: list[str]) -> None:
    assert filters == expected

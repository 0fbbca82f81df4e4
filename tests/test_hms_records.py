"""Pure tests of the HMS extractor's record building and view lineage, on DESCRIBE FORMATTED
output captured from a real Spark 4.3 Thrift Server (tests/fixtures/hms/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from navd.extractors.hms.records import (BadTable, parse_partition, parse_properties, partition_records, table_info,
                                         table_records)
from navd.extractors.hms.views import ColumnLineage, TableName, ViewSqlError, input_tables, view_lineage
from navd.model import Element, ElementType, Relation, RelationType, SourceType
from navd.names import InvalidName

FIXTURES = Path(__file__).parent / "fixtures" / "hms"


def load(table: str) -> tuple[str, str, list[list[object]]]:
    data = json.loads((FIXTURES / f"describe_{table}.json").read_text())
    return data["database"], data["table"], data["rows"]


def test_partitioned_managed_table() -> None:
    info = table_info(*load("sales"))
    assert (info.database, info.name, info.table_type, info.provider) == ("ex", "sales", "MANAGED", "parquet")
    assert [(c.name, c.data_type, c.comment, c.position, c.partition_key) for c in info.columns] == [
        ("Id", "int", "the id", 0, False), ("Amount", "double", None, 1, False), ("region", "string", None, 2, True)]
    assert info.partition_keys == ("region",)
    assert info.created == datetime(2026, 11, 22, 7, 10, 32, tzinfo=UTC)
    assert info.location == "file:/tmp/hmsx/home/warehouse/ex.db/sales"
    assert dict(info.properties) == {"k": "w"}


def test_hive_serde_table_with_comment_and_storage_properties() -> None:
    info = table_info(*load("hv"))
    assert info.provider == "hive" and info.comment == "tc"
    assert info.serde == "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
    assert dict(info.storage_properties) == {"serialization.format": "1"}


def test_external_table_records() -> None:
    info = table_info(*load("ext"))
    records = table_records(info, "c1", "hdfs://ns")
    table = records[0]
    assert isinstance(table, Element)
    assert (table.type, table.qualified_name, table.internal_type) == (ElementType.TABLE, "ex.ext@c1", "EXTERNAL")
    assert table.parent is not None and table.parent.qualified_name == "ex@c1"
    fields = [r for r in records if isinstance(r, Element) and r.type is ElementType.FIELD]
    assert [f.qualified_name for f in fields] == ["ex.ext.a@c1", "ex.ext.b@c1", "ex.ext.c@c1"]
    assert fields[0].description == "new comment" and fields[0].properties["position"] == "0"
    physical = [r for r in records if isinstance(r, Relation) and r.type is RelationType.LOGICAL_PHYSICAL]
    assert len(physical) == 1
    assert physical[0].endpoint2.qualified_name == "file:///tmp/hmsx/ext2"
    assert physical[0].endpoint2.source_type is SourceType.HDFS and physical[0].linked2 is False
    parent_child = {(r.endpoint1.qualified_name, r.endpoint2.qualified_name) for r in records
                    if isinstance(r, Relation) and r.type is RelationType.PARENT_CHILD}
    assert ("ex@c1", "ex.ext@c1") in parent_child and ("ex.ext@c1", "ex.ext.c@c1") in parent_child


def test_view_records_carry_sql_and_no_location() -> None:
    info = table_info(*load("v1"))
    assert info.is_view and info.view_default_database == "default"
    records = table_records(info, "c1", "hdfs://ns")
    view = records[0]
    assert isinstance(view, Element) and view.type is ElementType.VIEW
    assert view.query_text == "SELECT Id, Amount * 3 AS dbl, region FROM ex.sales"
    assert not any(isinstance(r, Relation) and r.type is RelationType.LOGICAL_PHYSICAL for r in records)
    # Mixed-case column names are stored lower case in qualified names (as Spark's extractor names them).
    assert "ex.v1.id@c1" in {r.qualified_name for r in records if isinstance(r, Element)}


def test_partition_records() -> None:
    records = partition_records("c1", "ex", "sales", "region=eu", "file:/w/ex.db/sales", "hdfs://ns")
    element = records[0]
    assert isinstance(element, Element) and element.type is ElementType.PARTITION
    assert element.qualified_name == "ex.sales@c1/region=eu"
    assert records[2].endpoint2.qualified_name == "file:///w/ex.db/sales/region=eu"  # type: ignore[union-attr]
    assert parse_partition("a=1/B=x%3Ay") == {"a": "1", "b": "x%3Ay"}
    with pytest.raises(BadTable, match="not k=v"):
        parse_partition("junk")


def test_properties_values_with_commas() -> None:
    assert parse_properties("[a=1, b=x, y, c=3]") == (("a", "1"), ("b", "x, y"), ("c", "3"))
    assert parse_properties("") == ()


def test_odd_describe_output_names_the_table() -> None:
    with pytest.raises(BadTable, match="ex.t"):
        table_info("ex", "t", [["# Detailed Table Information", "", ""], ["Type", "ODD", ""]])
    with pytest.raises(BadTable, match="ex.t"):
        table_info("ex", "t", [["x"]])
    # found by tests/fuzz: a row that is no list of cells escaped len() as TypeError
    with pytest.raises(BadTable, match="ex.t: DESCRIBE row is a NoneType, not a list of cells"):
        table_info("ex", "t", [["id", "int", None], None])



def test_names_navd_cannot_spell_are_invalid_names_the_extractor_skips() -> None:
    # found by tests/fuzz: these escaped the HMS extractor's per-table skip (it caught BadTable only)
    rows = [["id", "int", None], ["", "", ""], ["# Detailed Table Information", "", ""], ["Type", "MANAGED", ""]]
    with pytest.raises(BadTable, match="table name '' is not a Hive name"):
        table_info("ex", "", rows)
    with pytest.raises(BadTable, match="table name '.' is not a Hive name"):  # was the element `ex..@c`
        table_info("ex", ".", rows)
    located = [*rows, ["Location", "['file:/tmp/ex.db/t']", ""]]
    with pytest.raises(InvalidName, match="is neither absolute nor a URI"):
        table_records(table_info("ex", "t", located), "c", "hdfs://ns")


SCHEMA = {"ex": {"sales": ["id", "amount", "region"], "v1": ["id", "dbl", "region"], "ext": ["a", "b", "c"]}}


def test_view_lineage_simple_and_expression() -> None:
    _, _, rows = load("v1")
    info = table_info("ex", "v1", rows)
    assert info.view_text is not None
    result = view_lineage("ex.v1", info.view_text, "default", [c.name for c in info.columns], SCHEMA)
    assert result.inputs == (TableName("ex", "sales"),)
    assert set(result.columns) == {
        ColumnLineage("id", TableName("ex", "sales"), "id"),
        ColumnLineage("dbl", TableName("ex", "sales"), "amount", "sales.amount * 3"),
        ColumnLineage("region", TableName("ex", "sales"), "region")}


def test_view_over_view_reads_the_inner_view() -> None:
    info = table_info(*load("v2"))
    assert info.view_text is not None
    result = view_lineage("ex.v2", info.view_text, "default", ["id", "r"], SCHEMA)
    assert result.inputs == (TableName("ex", "ext"), TableName("ex", "v1"))
    assert {(c.target, c.source_table.table, c.source_column, c.expression) for c in result.columns} == {
        ("id", "v1", "id", None), ("r", "v1", "region", "UPPER(v.region)")}


def test_view_lineage_through_cte_and_default_database() -> None:
    result = view_lineage("ex.v3", "WITH c AS (SELECT id, amount + 1 AS x FROM sales) SELECT x AS y FROM c", "ex",
                          ["y"], SCHEMA)
    assert result.inputs == (TableName("ex", "sales"),)
    assert result.columns == (ColumnLineage("y", TableName("ex", "sales"), "amount", "sales.amount + 1"),)


def test_view_lineage_of_dotted_and_spaced_columns() -> None:
    """Column names with dots, spaces, backticks and unicode (flattened JSON) stay whole."""
    schema = {"ex": {"flat": ["id", "b.c", "a b", "w`x", "ünï"]}}
    result = view_lineage("ex.v5", "SELECT `b.c` AS `x.y`, upper(`a b`) AS up, `w``x`, `ünï` FROM ex.flat", "ex",
                          ["x.y", "up", "w`x", "ünï"], schema)
    assert {(c.target, c.source_column, c.expression) for c in result.columns} == {
        ("x.y", "b.c", None), ("up", "a b", "UPPER(flat.`a b`)"), ("w`x", "w`x", None), ("ünï", "ünï", None)}


def test_unknown_inputs_keep_table_lineage_only() -> None:
    result = view_lineage("ex.v4", "SELECT * FROM other.t", "ex", ["a"], SCHEMA)
    assert result.inputs == (TableName("other", "t"),) and result.columns == () and "other.t" in result.note


def test_unparseable_view_sql_names_the_view() -> None:
    with pytest.raises(ViewSqlError, match="ex.bad"):
        input_tables("ex.bad", "SELEC x FRM", "ex")

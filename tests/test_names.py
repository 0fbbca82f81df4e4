"""navd.names: every name that is built is read back to what it was built from (table-driven,
as sqlglot's fixtures), and identities stay what they were (golden hex values computed with the
code before navd.names existed: a change here would fork every indexed document)."""

from __future__ import annotations

from typing import Any

import pytest

from navd.index.documents import stored_relation_identity as document_relation_identity
from navd.model import Relation, RelationType
from navd.names import (
    ElementType,
    EntityRef,
    HiveName,
    InvalidName,
    SourceType,
    catalog_table_qualified_name,
    child_path,
    directory_ref,
    display_name,
    field_qualified_name,
    field_ref,
    field_table,
    function_qualified_name,
    hive_incarnation_qualified_name,
    hive_qualified_name,
    identity,
    is_path_name,
    lookup_name,
    parent_path,
    parse_hive_name,
    parse_partition_path,
    partition_path,
    partition_qualified_name,
    path_field_qualified_name,
    path_qualified_name,
    relation_identity,
    spark_application_ref,
    spark_execution_ref,
    spark_run_ref,
    split_field,
    split_partition,
    split_path_field,
    table_of_field,
    yarn_application_ref,
    yarn_execution_ref,
)

# --- Hive names: build -> parse -> the parts, lower case -----------------------------------

HIVE_NAMES: list[tuple[tuple[str, str, str | None, str | None], str, HiveName]] = [
    # (cluster, database, table, column), qualified name, parsed back
    (("Primary", "Sales", None, None), "sales@primary", HiveName("sales", None, None, "primary", None)),
    (("primary", "Sales", "Orders", None), "sales.orders@primary",
     HiveName("sales", "orders", None, "primary", None)),
    (("primary", "`sales`", " ORDERS ", "Amount"), "sales.orders.amount@primary",
     HiveName("sales", "orders", "amount", "primary", None)),
    (("primary", "db", "t", "col with space"), "db.t.col with space@primary",
     HiveName("db", "t", "col with space", "primary", None)),
    (("primary", "données", "Tabelle", "Spalte_ß"), "données.tabelle.spalte_ß@primary",
     HiveName("données", "tabelle", "spalte_ß", "primary", None)),
    (("prod-EU", "db", "`T`", "`Mixed Case`"), "db.t.mixed case@prod-eu",
     HiveName("db", "t", "mixed case", "prod-eu", None)),
    # a column holds what Hive and Spark allow: everything after `db.table.` is the column
    (("primary", "db", "t", "b.c"), "db.t.b.c@primary", HiveName("db", "t", "b.c", "primary", None)),
    (("primary", "db", "t", "`A.B C`"), "db.t.a.b c@primary", HiveName("db", "t", "a.b c", "primary", None)),
    (("primary", "db", "t", "x`y"), "db.t.x`y@primary", HiveName("db", "t", "x`y", "primary", None)),
    (("primary", "db", "t", "ÜNÏ.Çödé"), "db.t.ünï.çödé@primary", HiveName("db", "t", "ünï.çödé", "primary", None)),
    (("primary", "db", "t", "a@b/c.d"), "db.t.a@b/c.d@primary", HiveName("db", "t", "a@b/c.d", "primary", None)),
    (("primary", "db", "t", ".lead.trail."), "db.t..lead.trail.@primary",
     HiveName("db", "t", ".lead.trail.", "primary", None)),
]


@pytest.mark.parametrize(("parts", "expected", "parsed"), HIVE_NAMES)
def test_hive_names_round_trip(parts: tuple[str, str, str | None, str | None], expected: str,
                               parsed: HiveName) -> None:
    qualified_name = hive_qualified_name(*parts)
    assert qualified_name == expected
    assert parse_hive_name(qualified_name) == parsed


@pytest.mark.parametrize("name", ["sales", "", "@primary", "sales.orders"])
def test_names_without_a_cluster_do_not_parse(name: str) -> None:
    assert parse_hive_name(name) is None


@pytest.mark.parametrize(("qualified_name", "parsed"), [
    # a partition value's '.' and '@' are not a column's
    ("db.t@primary/k=a.b@c", HiveName("db", "t", None, "primary", "k=a.b@c")),
    ("db.t@primary/", HiveName("db", "t", None, "primary", "")),
    ("db@prod.eu", HiveName("db", None, None, "prod.eu", None)),
])
def test_hive_names_parse(qualified_name: str, parsed: HiveName) -> None:
    assert parse_hive_name(qualified_name) == parsed


# --- fields: table + column -> field -> the table ------------------------------------------

FIELDS: list[tuple[SourceType, str, str, str]] = [
    # source, table qualified name, column, field qualified name
    (SourceType.HIVE, "sales.orders@primary", "amount", "sales.orders.amount@primary"),
    (SourceType.HIVE, "sales.orders@primary", " `Amount` ", "sales.orders.amount@primary"),
    (SourceType.HIVE, "sales.orders@primary", "col with space", "sales.orders.col with space@primary"),
    (SourceType.HIVE, "données.tabelle@primary", "Größe", "données.tabelle.größe@primary"),
    (SourceType.HIVE, "sales.orders@primary", "e-mail@home", "sales.orders.e-mail@home@primary"),
    # dots in a column (flattened JSON, structs): never a table part
    (SourceType.HIVE, "sales.orders@primary", "b.c", "sales.orders.b.c@primary"),
    (SourceType.HIVE, "sales.orders@primary", "`Addr.Zip Code`", "sales.orders.addr.zip code@primary"),
    (SourceType.HIVE, "sales.orders@primary", "ünï.ß", "sales.orders.ünï.ß@primary"),
    (SourceType.HIVE, "sales.orders@primary", "a.`b`.c", "sales.orders.a.`b`.c@primary"),
    (SourceType.IMPALA, "sales.orders@primary", "x.y@z", "sales.orders.x.y@z@primary"),
    # a V2 catalog's table (SPARK): one more dotted part in front
    (SourceType.SPARK, catalog_table_qualified_name("Primary", "`Ice`", "db", "T"), "Col", "ice.db.t.col@primary"),
    (SourceType.SPARK, catalog_table_qualified_name("primary", "unknown_catalog", "default", "t"), "c",
     "unknown_catalog.default.t.c@primary"),
    (SourceType.SPARK, catalog_table_qualified_name("primary", "ice", "db", "t"), "b.c d",
     "ice.db.t.b.c d@primary"),
    (SourceType.SPARK, "spark_catalog.db.t@primary", "b.c", "spark_catalog.db.t.b.c@primary"),
]


@pytest.mark.parametrize(("source", "table", "column", "field"), FIELDS)
def test_fields_round_trip(source: SourceType, table: str, column: str, field: str) -> None:
    assert field_qualified_name(table, column) == field
    assert table_of_field(field, source) == table
    assert split_field(field, source) == (table, _hive_column(column))
    table_ref = EntityRef(source, table, ElementType.TABLE)
    assert field_ref(table_ref, column) == EntityRef(source, field, ElementType.FIELD)
    assert field_table(field_ref(table_ref, column)) == table_ref
    assert display_name(field, ElementType.FIELD, source) == _hive_column(column)


def _hive_column(column: str) -> str:
    return column.strip().strip("`").strip().lower()


def test_hive_field_is_table_plus_column() -> None:
    assert (hive_qualified_name("primary", "Sales", "Orders", "Amount")
            == field_qualified_name(hive_qualified_name("primary", "Sales", "Orders"), "Amount"))


PATH_FIELDS: list[tuple[str, str, str, str]] = [
    # directory (qualified), column, field qualified name, the column read back
    ("hdfs://ns1/data/out", "id", "hdfs://ns1/data/out#id", "id"),
    ("hdfs://ns1/data/out", " `Amount` ", "hdfs://ns1/data/out#amount", "amount"),
    # dots, spaces, '/', '@', unicode in a column: kept as they are
    ("file:///tmp/x", "b.c", "file:///tmp/x#b.c", "b.c"),
    ("file:///tmp/x", "`Addr.Zip Code`", "file:///tmp/x#addr.zip code", "addr.zip code"),
    ("hdfs://ns1/a", "x/y@z", "hdfs://ns1/a#x/y@z", "x/y@z"),
    ("hdfs://ns1/a", "ünï.ß", "hdfs://ns1/a#ünï.ß", "ünï.ß"),
    # '#' and '%' in the column are encoded; a '#' in the path stays (the last '#' separates)
    ("hdfs://ns1/a", "n#1", "hdfs://ns1/a#n%231", "n#1"),
    ("hdfs://ns1/a", "50%", "hdfs://ns1/a#50%25", "50%"),
    ("hdfs://ns1/a", "%23", "hdfs://ns1/a#%2523", "%23"),
    ("hdfs://ns1/dir#1/out.parquet", "c", "hdfs://ns1/dir#1/out.parquet#c", "c"),
]


@pytest.mark.parametrize(("directory", "column", "field", "back"), PATH_FIELDS)
def test_path_fields_round_trip(directory: str, column: str, field: str, back: str) -> None:
    assert path_field_qualified_name(directory, column) == field
    assert split_path_field(field) == (directory, back)
    dir_ref = directory_ref(directory, "")
    assert field_ref(dir_ref, column) == EntityRef(SourceType.HDFS, field, ElementType.FIELD)
    assert field_table(field_ref(dir_ref, column)) == dir_ref
    assert display_name(field, ElementType.FIELD, SourceType.HDFS) == back


@pytest.mark.parametrize(("path", "column", "message"), [
    ("hdfs://ns1/a", "``", "empty Hive column name"),
    ("/a", "c", "not a qualified name"),
])
def test_path_fields_that_cannot_be_named(path: str, column: str, message: str) -> None:
    with pytest.raises(InvalidName, match=message):
        path_field_qualified_name(path, column)


@pytest.mark.parametrize("name", ["hdfs://ns1/a", "hdfs://ns1/a#", "a#b"])
def test_split_path_field_of_what_is_not_one(name: str) -> None:
    assert split_path_field(name) is None


@pytest.mark.parametrize(("table", "column", "message"), [
    ("sales.orders@primary", "``", "empty Hive column name"),
    ("sales.orders@primary", "  ", "empty Hive column name"),
    ("sales.orders", "c", "has no @cluster"),
])
def test_fields_that_cannot_be_named(table: str, column: str, message: str) -> None:
    with pytest.raises(InvalidName, match=message):
        field_qualified_name(table, column)


@pytest.mark.parametrize("ref", [
    EntityRef(SourceType.HIVE, "sales.orders@primary", ElementType.TABLE),   # not a FIELD
    EntityRef(SourceType.HIVE, "sales@primary", ElementType.FIELD),          # no table part
    EntityRef(SourceType.HIVE, "orders", ElementType.FIELD),                 # no cluster
    EntityRef(SourceType.SPARK, "ice.db.t@primary", ElementType.FIELD),      # a V2 table: no column part
    EntityRef(SourceType.HIVE, "db..c@primary", ElementType.FIELD),          # an empty table part
])
def test_field_table_of_what_is_not_a_field(ref: EntityRef) -> None:
    assert field_table(ref) is None


def test_function_names_are_apart_from_tables() -> None:
    assert function_qualified_name("primary", "Sales", "`To_Eur`") == "sales.to_eur@primary#function"


def test_incarnation_names_are_apart_from_the_table_and_parse() -> None:
    table = hive_qualified_name("primary", "Sales", "Orders")
    old = hive_incarnation_qualified_name(table, 1700000010)
    assert old == "sales.orders~1700000010@primary" and identity(SourceType.HIVE, old) != identity(SourceType.HIVE, table)
    assert parse_hive_name(old) == HiveName("sales", "orders~1700000010", None, "primary", None)
    assert field_qualified_name(old, "id") == "sales.orders~1700000010.id@primary"
    with pytest.raises(InvalidName):
        hive_incarnation_qualified_name("sales@primary", 1)


# --- partitions: spec -> name -> spec ------------------------------------------------------

PARTITIONS: list[tuple[dict[str, str], str, dict[str, str]]] = [
    ({"DT": "2026-11-01", "country": "FR"}, "sales.orders@primary/dt=2026-11-01/country=FR",
     {"dt": "2026-11-01", "country": "FR"}),
    # values keep '=' (only the first '=' splits) and Hive's escapes of '/' and ':'
    ({"k": "a=b"}, "sales.orders@primary/k=a=b", {"k": "a=b"}),
    ({"path": "x%2Fy", "ts": "10%3A00"}, "sales.orders@primary/path=x%2Fy/ts=10%3A00",
     {"path": "x%2Fy", "ts": "10%3A00"}),
    ({"who": "a@b", "city": "Zürich Nord"}, "sales.orders@primary/who=a@b/city=Zürich Nord",
     {"who": "a@b", "city": "Zürich Nord"}),
    ({"empty": ""}, "sales.orders@primary/empty=", {"empty": ""}),
]


@pytest.mark.parametrize(("spec", "expected", "parsed"), PARTITIONS)
def test_partitions_round_trip(spec: dict[str, str], expected: str, parsed: dict[str, str]) -> None:
    qualified_name = partition_qualified_name("Primary", "Sales", "Orders", spec)
    assert qualified_name == expected
    assert split_partition(qualified_name) == ("sales.orders@primary", parsed)
    assert parse_partition_path(partition_path(spec)) == parsed
    assert display_name(qualified_name, ElementType.PARTITION) == partition_path(spec)


@pytest.mark.parametrize(("spec", "message"), [
    ({"k": "a/b"}, "escapes '/'"),
    ({"k/x": "1"}, "escapes '/'"),
    ({}, "empty partition spec"),
])
def test_partitions_that_cannot_be_named(spec: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidName, match=message):
        partition_qualified_name("primary", "db", "t", spec)


@pytest.mark.parametrize("text", ["junk", "k=v/junk", "=v"])
def test_partition_specs_that_do_not_parse(text: str) -> None:
    with pytest.raises(InvalidName, match="is not k=v/k2=v2"):
        parse_partition_path(text)


@pytest.mark.parametrize("qualified_name", ["sales.orders@primary", "sales.orders/k=v", "@primary/k=v"])
def test_partition_names_that_do_not_parse(qualified_name: str) -> None:
    with pytest.raises(InvalidName, match="is not a partition name"):
        split_partition(qualified_name)


# --- paths: directory + name -> child -> the directory ---------------------------------------

PATHS: list[tuple[str, str, str]] = [
    # directory (as given), entry name, child qualified name (default FS hdfs://ns1)
    ("hdfs://NN1:8020/data//raw/", "part-00000.snappy.parquet", "hdfs://nn1:8020/data/raw/part-00000.snappy.parquet"),
    ("hdfs://nameservice1/", "top", "hdfs://nameservice1/top"),
    ("/warehouse/sales.db/orders", "dt=2026-11-01", "hdfs://ns1/warehouse/sales.db/orders/dt=2026-11-01"),
    ("/data/with space", "ü file.csv", "hdfs://ns1/data/with space/ü file.csv"),
    ("file:///", "tmp", "file:///tmp"),
    ("file:/tmp/x/", "a.b.c", "file:///tmp/x/a.b.c"),
    ("/", "user", "hdfs://ns1/user"),
    ("hdfs://ns1/a@b", "c", "hdfs://ns1/a@b/c"),
    ("hdfs://[::1]:8020/d", "f", "hdfs://[::1]:8020/d/f"),  # an IPv6 host keeps its brackets
]


@pytest.mark.parametrize(("directory", "name", "child"), PATHS)
def test_paths_round_trip(directory: str, name: str, child: str) -> None:
    parent = path_qualified_name(directory, "hdfs://ns1")
    assert path_qualified_name(parent) == parent  # one spelling: normalising twice changes nothing
    assert child_path(parent, name) == child
    assert parent_path(child) == parent
    assert directory_ref(directory, "hdfs://ns1") == EntityRef(SourceType.HDFS, parent, ElementType.DIRECTORY)
    assert display_name(child, ElementType.FILE) == name


@pytest.mark.parametrize(("directory", "name", "child"), [
    ("/", "user", "/user"),
    ("/data/raw", "x", "/data/raw/x"),
    ("/data/raw/", "x", "/data/raw/x"),
])
def test_bare_paths_round_trip(directory: str, name: str, child: str) -> None:
    assert child_path(directory, name) == child
    assert parent_path(child) == (directory.rstrip("/") or "/")


@pytest.mark.parametrize(("path", "message"), [
    ("hdfs://[::1/x", "'hdfs://[::1/x' has a bad authority: Invalid IPv6 URL"),
    ("hdfs://h:99999/x", "'hdfs://h:99999/x' has a bad authority: Port out of range"),
    ("file://h:x/y", "'file://h:x/y' has a bad authority: Port could not be cast"),
    ("no scheme", "'no scheme' is neither absolute nor a URI"),
    ("hdfs://h:0x/" + "a" * 5000, "'hdfs://h:0x/" + "a" * 188 + "'... has a bad authority"),
])
def test_paths_that_do_not_parse_are_one_line_cut(path: str, message: str) -> None:
    with pytest.raises(InvalidName) as refused:
        path_qualified_name(path)
    assert message in str(refused.value) and len(str(refused.value)) < 300


@pytest.mark.parametrize(("name", "is_path"), [
    ("hdfs://ns1/a", True), ("file:/tmp/x", True), ("s3a://b/k", True), ("HDFS://NS/a", True),
    ("spark://My App: [v2", False), ("yarn://application_1_2", False), ("db.t@cluster", False),
    ("/bare/path", False), ("a b://x", False),
])
def test_which_names_are_paths(name: str, is_path: bool) -> None:
    assert is_path_name(name) is is_path


@pytest.mark.parametrize(("name", "message"), [
    ("", "empty name"), ("  ", "empty name"), ("a\udcffb", "name 'a\\udcffb' is not valid UTF-8"),
])
def test_lookup_names_that_no_element_has(name: str, message: str) -> None:
    with pytest.raises(InvalidName, match=message.replace("\\", "\\\\")):
        lookup_name(name)


@pytest.mark.parametrize("root", ["/", "hdfs://ns1/", "file:///", "hdfs://ns1"])
def test_roots_have_no_parent(root: str) -> None:
    assert parent_path(root) is None


# --- operations and executions: the names both sources use -----------------------------------

@pytest.mark.parametrize(("ref", "source", "qualified_name", "type_"), [
    (spark_application_ref(" nightly load "), SourceType.SPARK, "spark://nightly load", ElementType.OPERATION),
    (spark_run_ref("application_1700000000000_0001"), SourceType.SPARK, "spark://application_1700000000000_0001/1",
     ElementType.OPERATION_EXECUTION),
    (spark_run_ref("local-1700000000000", "2"), SourceType.SPARK, "spark://local-1700000000000/2",
     ElementType.OPERATION_EXECUTION),
    (spark_execution_ref("app-1", "1", 3), SourceType.SPARK, "spark://app-1/1/sql/3", ElementType.OPERATION_EXECUTION),
    (yarn_application_ref("SPARK", "nightly"), SourceType.YARN, "yarn://SPARK/nightly", ElementType.OPERATION),
    (yarn_execution_ref("application_1700000000000_0001"), SourceType.YARN, "yarn://application_1700000000000_0001",
     ElementType.OPERATION_EXECUTION),
])
def test_operation_refs(ref: EntityRef, source: SourceType, qualified_name: str, type_: ElementType) -> None:
    assert ref == EntityRef(source, qualified_name, type_)


def test_operation_names_need_every_part() -> None:
    with pytest.raises(InvalidName, match="non-empty"):
        spark_run_ref("app-1", " ")


# --- display names ---------------------------------------------------------------------------

@pytest.mark.parametrize(("qualified_name", "type_", "expected"), [
    ("sales@primary", ElementType.DATABASE, "sales"),
    ("sales.orders@primary", ElementType.TABLE, "orders"),
    ("sales.orders.amount@primary", ElementType.FIELD, "amount"),
    ("sales.orders.b.c@primary", ElementType.FIELD, "b.c"),
    ("sales.orders@primary/dt=1/country=FR", ElementType.PARTITION, "dt=1/country=FR"),
    ("hdfs://nn:8020/data/raw/file.csv", ElementType.FILE, "file.csv"),
    ("hdfs://nn:8020/a.b/c.d", ElementType.DIRECTORY, "c.d"),
    ("file:///tmp/x", ElementType.DIRECTORY, "x"),
    ("hdfs://ns1/", ElementType.DIRECTORY, "ns1"),
    ("spark://app-1/1/sql/3", ElementType.OPERATION_EXECUTION, "3"),
    ("orders", None, "orders"),
])
def test_display_names(qualified_name: str, type_: ElementType | None, expected: str) -> None:
    assert display_name(qualified_name, type_) == expected


def test_display_name_of_a_catalog_column() -> None:
    assert display_name("ice.db.t.col@primary", ElementType.FIELD, SourceType.SPARK) == "col"
    assert display_name("ice.db.t.b.c@primary", ElementType.FIELD, SourceType.SPARK) == "b.c"


# --- identities: golden values from before navd.names ----------------------------------------

@pytest.mark.parametrize(("source", "qualified_name", "expected"), [
    (SourceType.HIVE, "sales.orders@primary", "272fcfca7443528767ec30dbdf5fb646"),
    ("HDFS", "hdfs://ns1/data/raw/file.csv", "81a39e20be3be241fba478414ba34130"),
    (SourceType.SPARK, "spark://application_1700000000000_0001/1", "bdf71a6c0b40081ba395e299f4211922"),
    (SourceType.YARN, "yarn://application_1700000000000_0001", "594956e8375a0f026371fd3082f0837c"),
    (SourceType.HIVE, "données.tabelle.col with space@primary", "417bc1b380f8b21c034dc785af05e306"),
    (SourceType.HIVE, "sales.orders@primary/dt=2026-11-01/country=FR", "fe6121e7daa3311cf64ecda2f0102b71"),
])
def test_element_identity_is_stable(source: SourceType | str, qualified_name: str, expected: str) -> None:
    assert identity(source, qualified_name) == expected
    assert EntityRef(source, qualified_name, ElementType.TABLE).identity == expected  # type: ignore[arg-type]


_TABLE = EntityRef(SourceType.HIVE, "sales.orders@primary", ElementType.TABLE)
_DIRECTORY = EntityRef(SourceType.HDFS, "hdfs://ns/warehouse/sales.db/orders", ElementType.DIRECTORY)
_SOURCE = EntityRef(SourceType.HIVE, "sales.orders.amount@primary", ElementType.FIELD)
_TARGET = EntityRef(SourceType.HIVE, "sales.totals.amount@primary", ElementType.FIELD)


@pytest.mark.parametrize(("relation", "expected"), [
    (Relation(RelationType.LOGICAL_PHYSICAL, _TABLE, _DIRECTORY), "2a1adf69bbef4668b310d550f7297d09"),
    (Relation(RelationType.LOGICAL_PHYSICAL, _TABLE, _DIRECTORY, linked2=False), "2a1adf69bbef4668b310d550f7297d09"),
    (Relation(RelationType.DATA_FLOW, _SOURCE, _TARGET, discriminator="spark://app-1/1/sql/3"),
     "260c41478eb582739dd51e882d96fe46"),
    (Relation(RelationType.PARENT_CHILD, _TABLE, _SOURCE), "a600738aab876a7b4219a6cd9851527c"),
    (Relation(RelationType.CONTROL_FLOW, _SOURCE, _TARGET), "06b77af34012b9ea77678adbabddf66d"),
])
def test_relation_identity_is_stable_and_shared_with_the_linker(relation: Relation, expected: str) -> None:
    assert relation.identity == expected
    assert relation_identity(relation.type, relation.endpoint1.identity, relation.endpoint2.identity,
                             relation.discriminator) == expected
    doc: dict[str, Any] = {"type": relation.type.value, "endpoint1Id": relation.endpoint1.identity,
                           "endpoint2Id": relation.endpoint2.identity}
    if relation.discriminator:
        doc["discriminator"] = relation.discriminator
    assert document_relation_identity(doc) == expected

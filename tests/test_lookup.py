"""Finding what people type: the resolution rule as a table (pure), then the
real `navd entity` / `navd lineage` against the session Solr."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from navd.index.client import IndexWriter, SolrIndex
from navd.index.lookup import NameQuery, Scope, matches, name_queries, solr_query
from navd.model import Element, ElementType, Relation, RelationType, SourceType, hive_qualified_name
from navd.names import (
    InvalidName,
    path_qualified_name,
    spark_execution_ref,
    spark_run_ref,
    yarn_execution_ref,
)
from conftest import solr_section

SCOPE = Scope(cluster="primary", default_fs="hdfs://ns1")
APP = "application_1700000000000_0001"

# (typed, scope, the candidate queries in order: (rule, exact, like, unlike))
CASES: list[tuple[str, Scope, list[tuple[str, tuple[str, ...], str, str]]]] = [
    ("0123456789abcdef0123456789abcdef", SCOPE, [("exact", ("0123456789abcdef0123456789abcdef",), "", "")]),
    ("sales.orders@primary", SCOPE, [("exact", ("sales.orders@primary",), "", "")]),
    ("SALES.Orders@Primary", SCOPE, [("exact", ("SALES.Orders@Primary", "sales.orders@primary"), "", "")]),
    ("HDFS://NN:8020/a//b/", SCOPE, [("exact", ("HDFS://NN:8020/a//b/", "hdfs://nn:8020/a/b"), "", "")]),
    ("hdfs:///data/x", SCOPE, [("exact", ("hdfs:///data/x",), "", ""),
                               ("default-fs URI", ("hdfs://ns1/data/x",), "", "")]),
    ("hdfs:///data/x", Scope(), [("exact", ("hdfs:///data/x",), "", ""),
                                 ("default-fs URI, any authority", (), "hdfs://*/data/x", "hdfs://*/*/data/x")]),
    ("webhdfs:///data/x", SCOPE, [("exact", ("webhdfs:///data/x",), "", "")]),  # not the default fs's scheme
    ("file:///data/x", SCOPE, [("exact", ("file:///data/x",), "", "")]),  # not the default fs's scheme
    ("/data/my dir ü/", SCOPE, [("exact", ("/data/my dir ü/",), "", ""),
                                ("bare path", ("hdfs://ns1/data/my dir ü",), "", ""),
                                ("bare path, any file system", (), "*://*/data/my dir ü", "*://*/*/data/my dir ü")]),
    ("/data/x", Scope(cluster="primary"), [("exact", ("/data/x",), "", ""),
                                           ("bare path, any file system", (), "*://*/data/x", "*://*/*/data/x")]),
    ("/data/*", SCOPE, [("exact", ("/data/*",), "", ""), ("bare path", ("hdfs://ns1/data/*",), "", "")]),
    ("Sales.Orders", SCOPE, [("exact", ("Sales.Orders",), "", ""),
                             ("hive, this cluster", ("sales.orders@primary",), "", ""),
                             ("hive, any cluster", (), "sales.orders@*", "sales.orders@*/*")]),
    ("sales.orders.amount", Scope(), [("exact", ("sales.orders.amount",), "", ""),
                                      ("hive, any cluster", (), "sales.orders.amount@*", "sales.orders.amount@*/*")]),
    ("Orders", SCOPE, [("exact", ("Orders",), "", ""),
                       ("hive, this cluster", ("default.orders@primary",), "", ""),
                       ("hive, any cluster", (), "default.orders@*", "default.orders@*/*")]),
    ("orders.csv.gz", SCOPE, [("exact", ("orders.csv.gz",), "", ""),  # tried as db.table.column: harmless
                              ("hive, this cluster", ("orders.csv.gz@primary",), "", ""),
                              ("hive, any cluster", (), "orders.csv.gz@*", "orders.csv.gz@*/*")]),
    (APP, SCOPE, [("exact", (APP,), "", ""),
                  ("spark run", (), f"spark://{APP}/*", f"spark://{APP}/*/*"),
                  ("yarn application", (f"yarn://{APP}",), "", "")]),
    ("local-1700000000000", SCOPE, [("exact", ("local-1700000000000",), "", ""),
                                    ("spark run", (), "spark://local-1700000000000/*",
                                     "spark://local-1700000000000/*/*")]),
    ("app-20240101120000-0003", SCOPE, [("exact", ("app-20240101120000-0003",), "", ""),
                                        ("spark run", (), "spark://app-20240101120000-0003/*",
                                         "spark://app-20240101120000-0003/*/*")]),
    (f"{APP}/sql/3", SCOPE, [("exact", (f"{APP}/sql/3",), "", ""),
                             ("spark execution", (), f"spark://{APP}/*/sql/3", f"spark://{APP}/*/*/sql/3")]),
    (f"{APP}/2/sql/3", SCOPE, [("exact", (f"{APP}/2/sql/3",), "", ""),
                               ("spark execution", (f"spark://{APP}/2/sql/3",), "", "")]),
    (f"spark://{APP}/1", SCOPE, [("exact", (f"spark://{APP}/1",), "", "")]),  # a full name: as typed only
    # Too long for a Lucene wildcard (its automaton is capped): exact rows only.
    ("z" * 401, SCOPE, [("exact", ("z" * 401,), "", ""), ("hive, this cluster", (f"default.{'z' * 401}@primary",), "", "")]),
    ("/" + "d" * 400, SCOPE, [("exact", ("/" + "d" * 400,), "", ""), ("bare path", ("hdfs://ns1/" + "d" * 400,), "", "")]),
]


@pytest.mark.parametrize(("typed", "scope", "expected"), CASES, ids=[f"{i}-{c[0][:30]}" for i, c in enumerate(CASES)])
def test_resolution_order_is_the_table(typed: str, scope: Scope,
                                       expected: list[tuple[str, tuple[str, ...], str, str]]) -> None:
    assert name_queries(typed, scope) == tuple(NameQuery(r, tuple(dict.fromkeys(e)), l, u) for r, e, l, u in expected)


@pytest.mark.parametrize("typed", ["", "  ", "hdfs://h:99999/x"])
def test_names_no_element_can_have_are_refused(typed: str) -> None:
    with pytest.raises(InvalidName):
        name_queries(typed, SCOPE)


@pytest.mark.parametrize(("query", "qualified_name", "expected"), [
    (NameQuery("r", like="*://*/data/x", unlike="*://*/*/data/x"), "hdfs://ns9/data/x", True),
    (NameQuery("r", like="*://*/data/x", unlike="*://*/*/data/x"), "file:///data/x", True),
    (NameQuery("r", like="*://*/data/x", unlike="*://*/*/data/x"), "hdfs://ns9/old/data/x", False),
    (NameQuery("r", like="db.t@*", unlike="db.t@*/*"), "db.t@east", True),
    (NameQuery("r", like="db.t@*", unlike="db.t@*/*"), "db.t@east/day=1", False),  # a partition
    (NameQuery("r", like="db.t@*", unlike="db.t@*/*"), "db.t.c@east", False),  # a column
    (NameQuery("r", like=f"spark://{APP}/*", unlike=f"spark://{APP}/*/*"), f"spark://{APP}/1", True),
    (NameQuery("r", like=f"spark://{APP}/*", unlike=f"spark://{APP}/*/*"), f"spark://{APP}/1/sql/0", False),
    (NameQuery("r", ("db.t@east",)), "db.t@east", True),
])
def test_matches_reads_patterns_as_the_solr_query_does(query: NameQuery, qualified_name: str, expected: bool) -> None:
    assert matches(query, "some-identity", qualified_name) is expected


def test_typed_text_stays_escaped_in_the_solr_query() -> None:
    [exact, _, any_fs] = name_queries('/a b/x") OR (id:1', SCOPE)
    assert solr_query(exact) == r'identity:("/a b/x\") OR (id:1") OR qualifiedName:("/a b/x\") OR (id:1")'
    assert solr_query(any_fs) == (r'(qualifiedName:*\:\/\/*\/a\ b\/x\"\)\ OR\ \(id\:1 AND '
                                  r'-qualifiedName:*\:\/\/*\/*\/a\ b\/x\"\)\ OR\ \(id\:1)')


# -- through the real `navd` against the session Solr ----------------------------------------

def _write(index: SolrIndex, records: list[Element | Relation]) -> None:
    writer = IndexWriter(index)
    writer.write_all(records)
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core, soft=True)


@pytest.fixture
def typed(index: SolrIndex, unique: str, tmp_path: Path, solr_server) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A few real documents, and a config whose cluster is `<unique>a` and default fs `hdfs://<unique>`."""
    fs = f"hdfs://{unique}"
    app_number = random.randrange(10**12, 10**13)
    spark_app, yarn_only, local = f"application_{app_number}_0001", f"application_{app_number}_0002", \
        f"local-{app_number}"
    directory = Element(SourceType.HDFS, ElementType.DIRECTORY,
                        path_qualified_name(f"/{unique}/landing/my dir ü", fs), name="my dir ü")
    tables = [Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(f"{unique}{c}", unique, "orders"),
                      name="orders") for c in ("a", "b")]
    run = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, spark_run_ref(spark_app).qualified_name,
                  name="load orders")
    sql = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                  spark_execution_ref(spark_app, "1", 0).qualified_name, name="load orders sql 0")
    yarn = [Element(SourceType.YARN, ElementType.OPERATION_EXECUTION, yarn_execution_ref(a).qualified_name, name=a)
            for a in (spark_app, yarn_only)]
    local_run = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, spark_run_ref(local).qualified_name,
                        name="local job")
    _write(index, [directory, *tables, run, sql, *yarn, local_run,
                   Relation(RelationType.PARENT_CHILD, run.ref, sql.ref),
                   Relation(RelationType.DATA_FLOW, directory.ref, sql.ref),
                   Relation(RelationType.DATA_FLOW, sql.ref, tables[0].ref)])
    return {"fs": fs, "spark_app": spark_app, "yarn_only": yarn_only, "local": local,
            "directory": directory.qualified_name, "table_a": tables[0].qualified_name,
            "table_b": tables[1].qualified_name, "solr": solr_section(solr_server),
            "tmp": str(tmp_path)}


def _env(typed: dict[str, str], cluster: str, *, default_fs: bool = True) -> dict[str, str]:
    import os

    config = Path(typed["tmp"]) / f"navd-{cluster}-{default_fs}.toml"
    fs = f'default_fs = "{typed["fs"]}"\n' if default_fs else ""
    config.write_text(f'[cluster]\nname = "{cluster}"\n{fs}{typed["solr"]}[logging]\nformat = "json"\n')
    return {**os.environ, "NAVD_CONFIG": str(config)}


def _qualified_name(result) -> str:  # type: ignore[no-untyped-def]
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["qualifiedName"])


def test_entity_finds_what_people_type(navd, typed: dict[str, str], unique: str) -> None:  # type: ignore[no-untyped-def]
    env = _env(typed, f"{unique}a")
    bare = f"/{unique}/landing/my dir ü/"
    assert _qualified_name(navd("entity", bare, "--json", env=env)) == typed["directory"]
    assert _qualified_name(navd("entity", f"hdfs://{bare}", "--json", env=env)) == typed["directory"]
    # Without [cluster] default_fs, a bare path is looked up under any file system, hdfs:/// under any NameNode.
    no_fs = _env(typed, f"{unique}a", default_fs=False)
    assert _qualified_name(navd("entity", bare, "--json", env=no_fs)) == typed["directory"]
    assert _qualified_name(navd("entity", f"hdfs://{bare}", "--json", env=no_fs)) == typed["directory"]
    # db.table: the configured cluster's first.
    assert _qualified_name(navd("entity", f"{unique}.ORDERS", "--json", env=env)) == typed["table_a"]
    # An application id: the Spark run first, then the YARN application; a local Spark app id.
    assert _qualified_name(navd("entity", typed["spark_app"], "--json", env=env)) == f"spark://{typed['spark_app']}/1"
    assert _qualified_name(navd("entity", typed["yarn_only"], "--json", env=env)) == f"yarn://{typed['yarn_only']}"
    assert _qualified_name(navd("entity", typed["local"], "--json", env=env)) == f"spark://{typed['local']}/1"
    assert _qualified_name(navd("entity", f"{typed['spark_app']}/sql/0", "--json", env=env)) \
        == f"spark://{typed['spark_app']}/1/sql/0"


def test_several_matches_are_listed_with_exit_4(navd, typed: dict[str, str], unique: str) -> None:  # type: ignore[no-untyped-def]
    env = _env(typed, f"{unique}c")  # neither table's cluster: any cluster, two answers
    result = navd("entity", f"{unique}.orders", env=env)
    assert result.returncode == 4, result.stderr
    [error] = [line for line in result.stderr.splitlines() if line.startswith("navd:")]
    assert f"'{unique}.orders' matches 2 elements (hive, any cluster)" in error
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(f"HIVE TABLE  {typed['table_a']}") and lines[1].endswith(f"HIVE TABLE  {typed['table_b']}")
    as_json = navd("lineage", f"{unique}.orders", "--format", "json", env=env)
    assert as_json.returncode == 4
    listed = json.loads(as_json.stdout)
    assert listed["found"] == 2
    assert [c["qualifiedName"] for c in listed["candidates"]] == [typed["table_a"], typed["table_b"]]
    # Not found stays 1.
    assert navd("entity", f"{unique}.nothing", env=env).returncode == 1


def test_lineage_from_an_application_id_and_a_bare_path(navd, typed: dict[str, str], unique: str) -> None:  # type: ignore[no-untyped-def]
    env = _env(typed, f"{unique}a")
    result = navd("lineage", typed["spark_app"], "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    names = {node["qualifiedName"] for node in json.loads(result.stdout)["nodes"]}
    assert {typed["directory"], typed["table_a"]} <= names
    text = navd("lineage", f"/{unique}/landing/my dir ü", "--direction", "downstream", env=env)
    assert text.returncode == 0, text.stderr
    assert "orders" in text.stdout and "my dir ü" in text.stdout

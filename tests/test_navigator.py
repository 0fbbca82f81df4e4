"""The Navigator-compatible API (navd/navigator.py, its reads in navd/catalog/navigator.py and the
routes of navd/server/navigator_routes.py), in-process through FastAPI's TestClient with the
session Solr behind it, on documents navd's own record builders wrote: a Hive database and table
with columns (the HMS extractor's records), an HDFS directory and file (the HDFS extractor's),
and a Spark application with a CTAS and its DATA_FLOW relations (the Spark extractor on a
captured event log, with the stubs it writes)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from navd import navigator
from navd.index import query_syntax
from navd.extractors.hdfs.records import entry_from_webhdfs, records_for
from navd.extractors.hms.records import Column, TableInfo, database_records, table_records
from navd.extractors.spark.records import process_lines, stubs_for
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementStub, Record
from navd.server.navigator_routes import navigator_router

from spark_fixtures import DEFAULT_FS, fixture_lines

CLUSTER = "c" + uuid.uuid4().hex[:10]  # Hive identities of this module's run only
DB = "db_" + uuid.uuid4().hex[:10]
RUN = f"navigator-{CLUSTER}##1"
DATA = f"/data/{CLUSTER}"
#: what limits every query of these tests to this module's documents
OURS = f'extractorRunId:"{RUN}"'
CTAS = "create table sales.t as select upper(c) as u from sales.s where c is not null"


def _status(suffix: str, kind: str, length: int, permission: str) -> dict[str, Any]:
    return {"pathSuffix": suffix, "type": kind, "owner": "etl", "group": "hadoop", "permission": permission,
            "length": length, "replication": 3 if kind == "FILE" else 0, "blockSize": 134217728,
            "modificationTime": 1795324168000, "accessTime": 1795324169000}


def _records() -> tuple[list[Record], dict[str, str]]:
    """Everything this module indexes, and the identities of the entities its tests name."""
    hms: list[Record] = database_records(CLUSTER, DB, {"Owner": "hive", "Comment": "the orders data",
                                                       "Location": f"{DEFAULT_FS}/warehouse/{DB}.db"}, DEFAULT_FS, RUN)
    hms += table_records(TableInfo(DB, "orders", "MANAGED",
                                   (Column("id", "bigint", "order id", 0), Column("amount", "decimal(10,2)", None, 1)),
                                   owner="etl", comment="all orders", location=f"{DEFAULT_FS}/warehouse/{DB}.db/orders",
                                   properties=(("tier", "gold"),)),
                         CLUSTER, DEFAULT_FS, RUN)
    hdfs = records_for(entry_from_webhdfs(DATA, _status("", "DIRECTORY", 0, "755")), DEFAULT_FS, RUN)
    hdfs += records_for(entry_from_webhdfs(DATA, _status("part-00000.parquet", "FILE", 2048, "644")), DEFAULT_FS, RUN)
    _run, spark = process_lines(fixture_lines("ctas_expression"), cluster=CLUSTER, default_fs=DEFAULT_FS,
                                extractor_run_id=RUN)
    spark += list(stubs_for(spark, RUN))
    records = [*hms, *hdfs, *spark]
    elements = [r.element if isinstance(r, ElementStub) else r for r in records
                if isinstance(r, (Element, ElementStub))]
    by_name = {e.qualified_name: e.identity for e in elements}
    ctas = next(e.identity for e in elements if e.query_text == CTAS)
    ids = {"database": by_name[f"{DB}@{CLUSTER}"], "table": by_name[f"{DB}.orders@{CLUSTER}"],
           "column id": by_name[f"{DB}.orders.id@{CLUSTER}"], "column amount": by_name[f"{DB}.orders.amount@{CLUSTER}"],
           "directory": by_name[f"{DEFAULT_FS}{DATA}"], "file": by_name[f"{DEFAULT_FS}{DATA}/part-00000.parquet"],
           "ctas": ctas, "sales.s": by_name[f"sales.s@{CLUSTER}"], "sales.t": by_name[f"sales.t@{CLUSTER}"]}
    return records, ids


@pytest.fixture(scope="module")
def ids(index: SolrIndex) -> dict[str, str]:
    records, ids = _records()
    writer = IndexWriter(index)
    writer.write_all(records)
    assert writer.close()
    index.commit("elements", soft=True)
    index.commit("relations", soft=True)
    return ids


@pytest.fixture(scope="module")
def api(index: SolrIndex, ids: Mapping[str, str]) -> Iterator[TestClient]:
    app = FastAPI()
    app.include_router(navigator_router(lambda: index))
    with TestClient(app) as client:
        yield client


def _get(api: TestClient, path: str, **params: Any) -> Any:
    response = api.get(f"/api/v9/{path}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


# -- documents -> Navigator entities -----------------------------------------------------------

ENTITY_CASES: list[tuple[str, dict[str, Any]]] = [
    ("database", {"type": "DATABASE", "sourceType": "HIVE", "originalName": DB, "parentPath": None,
                  "fileSystemPath": f"{DEFAULT_FS}/warehouse/{DB}.db", "owner": "hive",
                  "originalDescription": "the orders data", "extractorRunId": RUN, "deleted": False}),
    ("table", {"type": "TABLE", "sourceType": "HIVE", "originalName": "orders", "parentPath": f"/{DB}",
               "fileSystemPath": f"{DEFAULT_FS}/warehouse/{DB}.db/orders", "owner": "etl",
               "originalDescription": "all orders", "internalType": "MANAGED", "extractorRunId": RUN,
               "deleted": False, "firstClassParentId": None, "qualifiedName": f"{DB}.orders@{CLUSTER}"}),
    ("column id", {"type": "FIELD", "sourceType": "HIVE", "originalName": "id", "parentPath": f"/{DB}/orders",
                   "dataType": "bigint", "originalDescription": "order id", "extractorRunId": RUN,
                   "firstClassParentId": "<table>"}),
    ("directory", {"type": "DIRECTORY", "sourceType": "HDFS", "originalName": CLUSTER, "parentPath": "/data",
                   "fileSystemPath": DATA, "owner": "etl", "group": "hadoop", "permissions": "rwxr-xr-x",
                   "size": None, "lastModified": "2026-11-22T05:09:28Z", "extractorRunId": RUN}),
    ("file", {"type": "FILE", "sourceType": "HDFS", "originalName": "part-00000.parquet", "parentPath": DATA,
              "fileSystemPath": f"{DATA}/part-00000.parquet", "size": 2048, "permissions": "rw-r--r--",
              "replication": 3, "blockSize": 134217728, "lastAccessed": "2026-11-22T05:09:29Z"}),
    ("ctas", {"type": "OPERATION_EXECUTION", "sourceType": "SPARK", "queryText": CTAS, "parentPath": None,
              "deleted": False}),
    ("sales.t", {"type": "TABLE", "sourceType": "HIVE", "originalName": "t", "parentPath": "/sales",
                 "extractorRunId": RUN, "deleted": False}),
]


@pytest.mark.parametrize(("label", "expected"), ENTITY_CASES, ids=[c[0] for c in ENTITY_CASES])
def test_an_element_is_a_navigator_entity(api: TestClient, ids: Mapping[str, str], label: str,
                                          expected: dict[str, Any]) -> None:
    shown = _get(api, f"entities/{ids[label]}")
    assert shown["identity"] == ids[label]
    assert {k: shown[k] for k in expected} == {k: ids["table"] if v == "<table>" else v for k, v in expected.items()}
    # Navigator's user-managed metadata: nobody annotated these, so empty as on an entity nobody edited
    assert (shown["name"], shown["description"], shown["tags"], shown["userEntity"]) == (None, None, None, False)
    assert not any(k.startswith("prop_") or k == "_version_" for k in shown)


def test_an_entity_lists_what_a_search_lists(api: TestClient, ids: Mapping[str, str]) -> None:
    [found] = _get(api, "entities", query=f'identity:"{ids["table"]}"')
    assert found == _get(api, f"entities/{ids['table']}")
    # what the metastore said is technical; `properties` are what people wrote (none here)
    assert found["technicalProperties"]["tblproperty.tier"] == "gold" and found["properties"] == {}


def test_a_relation_is_a_navigator_relation(api: TestClient, ids: Mapping[str, str]) -> None:
    lineage = _get(api, "lineage", entityIds=ids["sales.s"])
    [read] = [r for r in lineage["relations"] if r["type"] == "DATA_FLOW" and r["endpoint1Ids"] == [ids["sales.s"]]]
    assert read["endpoint2Ids"] == [ids["ctas"]]
    assert (read["endpoint1SourceType"], read["endpoint1Type"]) == ("HIVE", "TABLE")
    assert (read["endpoint2SourceType"], read["endpoint2Type"]) == ("SPARK", "OPERATION_EXECUTION")
    assert read["extractorRunId"] == RUN and read["userSpecified"] is False and len(read["identity"]) == 32


# -- Navigator queries -> navd queries ------------------------------------------------------------

TRANSLATIONS: list[tuple[str, str]] = [
    ("sourceType:HIVE AND type:TABLE", "sourceType:HIVE AND type:TABLE"),
    ("sourceType:hive AND type:(table OR view)", "sourceType:HIVE AND type:(TABLE OR VIEW)"),
    ("originalName:orders*", "originalName:orders*"),
    ("deleted:false AND queryText:*temp_table*", "deleted:false AND queryText:*temp_table*"),
    ('parentPath:"/db"', '(parentPath:"/db" OR (sourceType:HIVE AND type:(TABLE OR VIEW) AND qualifiedName:db.*))'),
    ("parentPath:\\/db\\/t", "(parentPath:\\/db\\/t OR (sourceType:HIVE AND ((type:FIELD AND qualifiedName:db.t.*) OR "
                          "(type:PARTITION AND qualifiedName:db.t@*))))"),
    ('parentPath:"/data/x.db/t"', 'parentPath:"/data/x.db/t"'),  # a dot: no Hive parent has it
    ("parentPath:\\/data*", "parentPath:\\/data*"),  # wildcards stay on the stored paths only
    ("srcId:abc", "sourceId:abc"),
    ("originalDescription:orders", "description:orders"),
    ("up_tier:gold", "(up_tier:gold OR prop_tier:gold)"),  # a person's property or an extracted one
    ("name:x OR tags:y OR description:z", "displayName:x OR tags:y OR userDescription:z"),  # what people wrote
    ("(originalName:*x*^3)OR(name:*x*^10)", "(originalName:*x*^3) OR (displayName:*x*^10)"),
    ("sales.steward:ann", "cp_sales.steward:ann"),  # a custom property, Navigator's `namespace.key`
    ("prop_tblproperty.tier:gold", "prop_tblproperty.tier:gold"),  # navd's own property field, as it is
    ('originalName:"name:x tags:y"', 'originalName:"name:x tags:y"'),  # inside a phrase: text
    ("originalName:a\\:name\\:b", "originalName:a\\:name\\:b"),
    ("fileSystemPath:\\/user\\/x AND -type:FILE", "fileSystemPath:\\/user\\/x AND -type:FILE"),
    # a bare type name also matches the type (Hue's find_entity sends `FIELD AND ...`)
    ("DATABASE AND (sourceType:HIVE)", "(DATABASE OR type:DATABASE) AND (sourceType:HIVE)"),
    ("-FILE AND +VIEW", "-(FILE OR type:FILE) AND +(VIEW OR type:VIEW)"),
    ("foo-TABLE OR TABLES OR *FIELD", "foo-TABLE OR TABLES OR *FIELD"),  # not whole terms
]


@pytest.mark.parametrize(("query", "expected"), TRANSLATIONS)
def test_a_navigator_query_becomes_navds(query: str, expected: str) -> None:
    assert navigator.translate_query(query) == expected


SEARCHES: list[tuple[str, set[str]]] = [
    ("sourceType:hive AND type:table", {"table", "sales.s", "sales.t"}),
    (f'parentPath:"/{DB}"', {"table"}),
    (f"parentPath:\\/{DB}\\/orders", {"column id", "column amount"}),
    (f'parentPath:"{DATA}"', {"file"}),
    ('parentPath:"/sales" AND type:TABLE', {"sales.s", "sales.t"}),
    ("originalName:orders", {"table"}),
    ("type:DIRECTORY AND deleted:false", {"directory"}),
    ("originalDescription:orders", {"database", "table"}),
    ("up_tblproperty.tier:gold", {"table"}),
    ("name:orders OR tags:orders OR description:orders", set()),
    (f'queryText:"{CTAS}"', {"ctas"}),
    # Hue's find_entity (desktop/libs/metadata/.../navigator_client.py), as it builds it
    (f'(type:TABLE OR type:VIEW) AND (sourceType:HIVE)AND(originalName:orders)AND(deleted:false)'
     f'AND(parentPath:"/{DB}")', {"table"}),
    # Hue's get_field and get_database through find_entity: no `type:` before FIELD, DATABASE
    (f"FIELD AND (sourceType:HIVE)AND(originalName:id)AND(deleted:false)AND(parentPath:\\/{DB}\\/orders)",
     {"column id"}),
    (f"DATABASE AND (sourceType:HIVE)AND(originalName:{DB})AND(deleted:false)", {"database"}),
    # Hue's search_entities for "orders" in SQL sources: boosted fields and presence clauses
    ("((originalName:*orders*^3)OR(originalDescription:*orders*^1)OR(name:*orders*^10)OR(description:*orders*^3)"
     "OR(tags:*orders*^5))AND((originalName:[* TO *])OR(originalDescription:[* TO *])OR(name:[* TO *])"
     "OR(description:[* TO *])OR(tags:[* TO *])) AND (*) AND ((type:TABLE)OR(type:VIEW))", {"table"}),
    # the Navigator SDK's NavApiClient.findEntity (srcId is Navigator's source id field)
    (f'+(parentPath:"/{DB}") +(originalName:orders) +(type:TABLE)', {"table"}),
]


@pytest.mark.parametrize(("query", "expected"), SEARCHES, ids=[q[:60] for q, _ in SEARCHES])
def test_a_navigator_query_finds_its_entities(api: TestClient, ids: Mapping[str, str], query: str,
                                              expected: set[str]) -> None:
    found = _get(api, "entities", query=f"({query}) AND {OURS}", limit=100)
    labels = {identity: label for label, identity in ids.items()}
    assert {labels.get(e["identity"], e["identity"]) for e in found} == expected


# -- paging ----------------------------------------------------------------------------------

def test_offset_paging_reaches_the_end(api: TestClient, ids: Mapping[str, str]) -> None:
    everything = [e["identity"] for e in _get(api, "entities", query=OURS, limit=1000)]
    assert set(ids.values()) <= set(everything) and everything == sorted(everything)
    paged: list[str] = []
    offset = 0
    while page := _get(api, "entities", query=OURS, offset=offset, limit=4):
        assert len(page) <= 4
        paged += [e["identity"] for e in page]
        offset += 4
    assert paged == everything


def test_cursor_paging_reaches_the_end(api: TestClient) -> None:
    everything = [e["identity"] for e in _get(api, "entities", query=OURS, limit=1000)]
    paged: list[str] = []
    cursor = "*"
    while True:
        response = api.post("/api/v19/entities/paging", json={"query": OURS, "limit": 4, "cursorMark": cursor})
        assert response.status_code == 200, response.text
        page = response.json()
        paged += [e["identity"] for e in page["results"]]
        if len(page["results"]) < 4:  # the Navigator SDK's end condition (MetadataResultIterator)
            break
        cursor = page["cursorMark"]
    assert paged == everything
    # After the last page: no results, the same cursorMark (Solr's end condition)
    last = api.post("/api/v19/entities/paging", json={"query": OURS, "limit": 4, "cursorMark": page["cursorMark"]})
    assert last.json() == {"results": [], "cursorMark": page["cursorMark"]}


# -- lineage -------------------------------------------------------------------------------------

def test_lineage_by_entity_ids_returns_relations_and_their_entities(api: TestClient, ids: Mapping[str, str]) -> None:
    lineage = _get(api, "lineage", entityIds=ids["sales.t"])
    entities = {e["identity"]: e for e in lineage["entities"]}
    assert {ids["sales.s"], ids["sales.t"], ids["ctas"]} <= set(entities)
    assert entities[ids["ctas"]]["queryText"] == CTAS and entities[ids["sales.t"]]["parentPath"] == "/sales"
    flows = {(r["endpoint1Ids"][0], r["endpoint2Ids"][0]) for r in lineage["relations"] if r["type"] == "DATA_FLOW"}
    assert {(ids["sales.s"], ids["ctas"]), (ids["ctas"], ids["sales.t"])} <= flows
    # every relation's ends are among the entities returned
    assert {i for r in lineage["relations"] for i in r["endpoint1Ids"] + r["endpoint2Ids"]} <= set(entities)
    # nothing of other datasets: the Hive table and the HDFS files are not in this lineage
    assert not {ids["table"], ids["file"], ids["directory"]} & set(entities)


def test_lineage_takes_several_ids_repeated_or_comma_separated(api: TestClient, ids: Mapping[str, str]) -> None:
    repeated = api.get("/api/v9/lineage", params=[("entityIds", ids["sales.s"]), ("entityIds", ids["table"])])
    assert repeated.status_code == 200, repeated.text
    assert repeated.json() == _get(api, "lineage", entityIds=f"{ids['sales.s']},{ids['table']}")
    assert ids["table"] in {e["identity"] for e in repeated.json()["entities"]}


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("method", "path", "request_args", "status", "error"), [
    ("GET", "/api/v9/entities/0123456789abcdef0123456789abcdef", {}, 404, "no entity with identity "),
    ("GET", "/api/v9/lineage", {"params": {"entityIds": "0123456789abcdef0123456789abcdef"}}, 404,
     "no element with identity or qualifiedName"),
    ("GET", "/api/v9/lineage", {}, 400, "entityIds: give at least one"),
    ("GET", "/api/v9/entities", {"params": {"limit": "-1"}}, 400, "limit: -1 is out of range (0..10000)"),
    ("GET", "/api/v9/entities", {"params": {"limit": "ten"}}, 400, "limit: 'ten' is not an integer"),
    ("GET", "/api/v9/entities", {"params": {"limit": "10001"}}, 400, "limit: 10001 is out of range"),
    ("GET", "/api/v9/entities", {"params": {"offset": "-5"}}, 400, "offset: -5 is out of range"),
    ("POST", "/api/v9/entities/paging", {"json": {"limit": 0}}, 400, "limit: 0 is out of range (1..10000)"),
    ("POST", "/api/v9/entities/paging", {"json": {"limit": "many"}}, 400, "limit: 'many' is not an integer"),
    ("POST", "/api/v9/entities/paging", {"json": {"cursorMark": "not-a-mark"}}, 400, "cursorMark: Solr refused it"),
    ("POST", "/api/v9/entities/paging", {"json": {"query": 7}}, 400, "query: must be a string"),
    ("POST", "/api/v9/entities/paging", {"content": b"{not json"}, 400, "body: not JSON"),
    # found by a fuzzing review: a body nested past the parser's depth was a 500 (RecursionError)
    ("POST", "/api/v9/entities/paging", {"content": b"[" * 100_000 + b"]" * 100_000}, 400, "body: not JSON"),
    ("GET", "/api/v9/entities", {"params": {"query": "{!join fromIndex=nav_relations from=id to=id}*:*"}}, 400,
     "query: local parameters"),
    ("GET", "/api/v9/entities", {"params": {"query": "originalName:(unclosed"}}, 400,
     "query: the '(' at character 14 is not closed"),
    ("GET", "/api/v9/entities", {"params": {"query": "nosuchfield:x"}}, 400, "query: Solr refused it"),
    ("POST", "/api/v9/interactive/entities", {"json": {"query": "*", "facets": ["type"]}}, 400,
     "facets: not a field of interactive/entities"),
    ("POST", "/api/v9/interactive/entities", {"json": {"facetRanges": [{"field": "size"}]}}, 400,
     "facetRanges: not supported"),
    ("POST", "/api/v9/interactive/entities", {"json": {"facetFields": "type"}}, 400,
     "facetFields: must be a list of strings"),
    ("POST", "/api/v9/interactive/entities", {"json": {"filterQueries": 5}}, 400,
     "filterQueries: must be a list of strings"),
    ("POST", "/api/v9/interactive/entities", {"json": {"query": ["a"]}}, 400, "query: must be a string"),
    ("POST", "/api/v9/interactive/entities", {"json": {"filterQueries": ["{!tag=a b} x"]}}, 400,
     "filterQueries: local parameters"),
    ("POST", "/api/v9/interactive/entities", {"json": {"firstClassEntitiesOnly": "yes"}}, 400,
     "firstClassEntitiesOnly: must be true or false"),
    ("POST", "/api/v9/interactive/entities", {"json": [1]}, 400, "body: must be a JSON object"),
    ("POST", "/api/v9/interactive/entities?limit=-1", {"json": {}}, 400, "limit: -1 is out of range"),
    ("GET", "/api/v9/interactive/suggestions", {"params": {"query": "x" * 201}}, 400, "query: at most 200"),
    ("POST", "/api/v9/relations/paging", {"json": {"query": "{!join from=a to=b}x"}}, 400, "query: local parameters"),
    ("GET", "/api/v9/relations", {"params": {"query": "nosuchfield:x"}}, 400, "query: Solr refused it"),
    ("GET", "/api/v9/lineage", {"params": {"entityIds": "x", "length": "21"}}, 400, "length: 21 is out of range"),
    ("GET", "/api/v8/entities", {}, 404, "version: v8 is not served"),
    ("GET", "/api/v20/entities", {}, 404, "version: v20 is not served"),
    ("GET", "/api/vX/entities", {}, 404, "version: vX is not served"),
])
def test_bad_requests_answer_4xx_naming_the_parameter(api: TestClient, method: str, path: str,
                                                       request_args: dict[str, Any], status: int, error: str) -> None:
    response = api.request(method, path, **request_args)
    assert response.status_code == status, response.text
    assert response.json()["error"].startswith(error), response.json()
    named = error.split(": ", 1)[0]  # navd's error body names the parameter the message starts with
    assert response.json()["parameter"] == (named if named.isidentifier() else None), response.json()


@pytest.mark.parametrize("version", [9, 14, 19])
def test_every_version_from_9_to_19_is_served(api: TestClient, ids: Mapping[str, str], version: int) -> None:
    assert api.get(f"/api/v{version}/entities/{ids['table']}").json()["originalName"] == "orders"


@pytest.mark.parametrize(("doc", "expected"), [
    ({"sourceType": "HIVE", "type": "PARTITION", "qualifiedName": "db.t@c/ds=2026-11-01/h=1.5"}, "/db/t"),
    ({"sourceType": "HIVE", "type": "FIELD", "qualifiedName": "db.t.a.b@c"}, "/db/t"),  # a column may hold '.'
    ({"sourceType": "HIVE", "type": "VIEW", "qualifiedName": "db.v@c"}, "/db"),
    ({"sourceType": "HIVE", "type": "DATABASE", "qualifiedName": "db@c"}, None),
    ({"sourceType": "SPARK", "type": "OPERATION_EXECUTION", "qualifiedName": "spark://app/1"}, None),
    ({"sourceType": "HDFS", "type": "FILE", "qualifiedName": "hdfs://ns/a/b", "parentPath": "/a"}, "/a"),
])
def test_parent_path(doc: dict[str, Any], expected: str | None) -> None:
    assert navigator.parent_path(doc) == expected


# -- sources, SOURCE queries, the interactive search's request --------------------------------------

@pytest.mark.parametrize(("doc", "expected"), [
    ({"sourceType": "HDFS", "type": "FILE", "qualifiedName": "hdfs://ns1/data/x"}, ("HDFS", "filesystem", "hdfs://ns1")),
    ({"sourceType": "HDFS", "type": "FIELD", "qualifiedName": "hdfs://ns1/data/x#c"}, ("HDFS", "filesystem", "hdfs://ns1")),
    ({"sourceType": "S3", "type": "S3BUCKET", "qualifiedName": "s3a://lake"}, ("S3", "filesystem", "s3a://lake")),
    ({"sourceType": "HIVE", "type": "PARTITION", "qualifiedName": "db.t@east/k=a@b"}, ("HIVE", "metastore", "east")),
    ({"sourceType": "HIVE", "type": "OPERATION", "qualifiedName": "hive://q"}, ("HIVE", "service", "primary")),
    ({"sourceType": "SPARK", "type": "OPERATION_EXECUTION", "qualifiedName": "spark://app/1"},
     ("SPARK", "service", "primary")),
    ({"sourceType": "OPENLINEAGE", "type": "OPERATION", "qualifiedName": "openlineage://ns/job",
      "properties": {"namespace": "airflow://x"}}, ("OPENLINEAGE", "namespace", "airflow://x")),
    ({"sourceType": "OPENLINEAGE", "type": "FIELD", "qualifiedName": "pg://h/t#c"}, ("OPENLINEAGE", "service", "primary")),
])
def test_each_element_has_one_source(doc: dict[str, Any], expected: tuple[str, str, str]) -> None:
    source = navigator.source_of(doc, "primary")
    assert (source.source_type, source.kind.value, source.name) == expected
    assert len(source.identity) == 32 and source.identity == navigator.source_of(doc, "primary").identity


def test_the_source_queries_find_their_own_entities(api: TestClient, ids: Mapping[str, str]) -> None:
    """`sourceId:<source>` finds every element whose source that is (source_match mirrors source_of),
    here the metastore of this module's cluster and the file system of its paths."""
    for label in ("table", "column id", "file"):
        entity = _get(api, f"entities/{ids[label]}")
        found = _get(api, "entities", query=f"sourceId:{entity['sourceId']} AND {OURS}", limit=1000)
        assert ids[label] in {e["identity"] for e in found}
        assert all(e["sourceId"] == entity["sourceId"] for e in found)
    table = _get(api, f"entities/{ids['table']}")
    assert (table["metaClassName"], table["packageName"]) == ("hv_table", "nav")


@pytest.mark.parametrize(("query", "source", "expected"), [
    ("type:SOURCE", True, True),
    ('clusterName:"east"', True, True),
    ('clusterName:"west"', True, False),
    ("type:source AND sourceType:(hive OR hdfs)", True, True),
    ("type:SOURCE -sourceType:HIVE", True, False),
    ("type:SOURCE AND originalName:ea*", True, True),
    ("type:SOURCE AND sourceUrl:[* TO *]", True, True),
    ("type:SOURCE AND nosuchfield:x", True, False),
    ("sourceType:HIVE", False, True),
])
def test_queries_over_the_source_entities(query: str, source: bool, expected: bool) -> None:
    entity = navigator.source_entity(navigator.Source("HIVE", navigator.SourceKind.METASTORE, "east"), "primary")
    parsed = query_syntax.parse(query)
    assert (navigator.is_source_query(parsed), navigator.matches(parsed, entity)) == (source, expected)


def test_cluster_name_matches_everything_or_nothing() -> None:
    context = navigator.QueryContext("east")
    assert navigator.translate_query('clusterName:"east" AND type:table', context=context) == "(*:*) AND type:TABLE"
    assert navigator.translate_query("clusterName:west", context=context) == "(*:* -*:*)"
    assert navigator.translate_query('clusterName:"east"') == "(*:* -*:*)"  # no cluster known


def test_hue_s_tagged_type_filter_is_excluded_from_the_type_facet() -> None:
    search = navigator.interactive_search(
        {"query": "*", "facetFields": ["type", "name", "owner"],
         "filterQueries": ["deleted:false", "{!tag=type} type:table OR type:VIEW"]}, "25", "0")
    assert [navigator.solr_filter(f) for f in search.filters] == ["deleted:false",
                                                                   "{!tag=type}type:TABLE OR type:VIEW"]
    tags = [f.tag for f in search.filters if f.tag]
    assert [navigator.facet_field_param(f, tags) for f in search.facet_fields] == ["{!ex=type}type", None, "owner"]
    assert (search.limit, search.offset) == (25, 0)


def test_the_interactive_search_counts_types_and_sources(api: TestClient, ids: Mapping[str, str]) -> None:
    answer = api.post("/api/v9/interactive/entities?limit=5&offset=0",
                      json={"query": "*", "facetFields": ["type", "sourceId", "name"],
                            "filterQueries": [OURS, "{!tag=type} type:TABLE"], "firstClassEntitiesOnly": True})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert {e["type"] for e in body["results"]} == {"TABLE"} and body["totalMatched"] == 3  # orders, sales.s, sales.t
    assert body["facets"]["type"]["DATABASE"] == 1 and "FIELD" not in body["facets"]["type"]  # first class only
    table = _get(api, f"entities/{ids['table']}")
    assert body["facets"]["sourceId"][table["sourceId"]] == 3 and body["facets"]["name"] == {}

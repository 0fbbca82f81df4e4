"""Atlas' own Python clients, unmodified (PyPI `apache-atlas` and `pyapacheatlas`), against a real
`navd serve` (uvicorn, HTTP basic auth) over the session Solr holding what the extractors' record
builders make of a Hive database and table (the metastore extractor's), an HDFS directory and a
Spark CTAS read from a captured event log (with its column lineage): entities by guid, by
qualifiedName and in bulk, lineage both ways, basic and DSL search, type definitions,
classifications added and removed; Atlas' error shape for what does not exist or is refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import requests
from apache_atlas.client.base_client import AtlasClient as ApacheAtlasClient
from apache_atlas.exceptions import AtlasServiceException
from pyapacheatlas.auth import BasicAuthentication
from pyapacheatlas.core import AtlasClient as PyApacheAtlasClient
from pyapacheatlas.core.util import AtlasException

from conftest import serving, write_navd_config
from navd.extractors.hdfs.records import entry_from_webhdfs, records_for
from navd.extractors.hms.records import Column, TableInfo, database_records, table_records
from navd.extractors.spark.records import process_lines, stubs_for
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementStub, Record
from navd.server.roles import Role
from navd.server.users import add_user
from navd.solr.server import EmbeddedSolr, free_port
from spark_fixtures import DEFAULT_FS, fixture_lines

CLUSTER = "c" + uuid.uuid4().hex[:10]
DB = "db_" + uuid.uuid4().hex[:10]
RUN = "atlas-clients##1"
CTAS = "create table sales.t as select upper(c) as u from sales.s where c is not null"
VIEWER, VIEWER_PASSWORD = "reader", "atlas reader pass"
EDITOR, EDITOR_PASSWORD = "steward", "atlas steward pass"


def _records() -> tuple[list[Record], dict[str, str]]:
    records: list[Record] = database_records(CLUSTER, DB, {"Owner": "hive", "Comment": "the orders data"},
                                             DEFAULT_FS, RUN)
    records += table_records(TableInfo(DB, "orders", "MANAGED",
                                       (Column("id", "bigint", "order id", 0),
                                        Column("amount", "decimal(10,2)", None, 1)),
                                       owner="etl", comment="all orders",
                                       location=f"{DEFAULT_FS}/warehouse/{DB}.db/orders"), CLUSTER, DEFAULT_FS, RUN)
    records += records_for(entry_from_webhdfs(f"/data/{CLUSTER}", {
        "pathSuffix": "", "type": "DIRECTORY", "owner": "etl", "group": "hadoop", "permission": "755", "length": 0,
        "replication": 0, "blockSize": 134217728, "modificationTime": 1795324168000,
        "accessTime": 1795324169000}), DEFAULT_FS, RUN)
    _run, spark = process_lines(fixture_lines("ctas_expression"), cluster=CLUSTER, default_fs=DEFAULT_FS,
                                extractor_run_id=RUN)
    records += spark + list(stubs_for(spark, RUN))
    elements = [r.element if isinstance(r, ElementStub) else r for r in records
                if isinstance(r, (Element, ElementStub))]
    by_name = {e.qualified_name: e.identity for e in elements}
    return records, {
        "database": by_name[f"{DB}@{CLUSTER}"], "table": by_name[f"{DB}.orders@{CLUSTER}"],
        "column id": by_name[f"{DB}.orders.id@{CLUSTER}"], "directory": by_name[f"{DEFAULT_FS}/data/{CLUSTER}"],
        "ctas": next(e.identity for e in elements if e.query_text == CTAS),
        "sales.s": by_name[f"sales.s@{CLUSTER}"], "sales.t": by_name[f"sales.t@{CLUSTER}"],
        "sales.s.c": by_name[f"sales.s.c@{CLUSTER}"], "sales.t.u": by_name[f"sales.t.u@{CLUSTER}"]}


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
def server(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr,
           ids: Mapping[str, str]) -> Iterator[str]:
    """`navd serve` with basic auth, a viewer and an editor; Atlas' clients take this URL."""
    tmp = tmp_path_factory.mktemp("atlas-clients")
    users = tmp / "users"
    add_user(users, VIEWER, VIEWER_PASSWORD)
    add_user(users, EDITOR, EDITOR_PASSWORD, Role.EDITOR)
    port = free_port()
    config = tmp / "navd.toml"
    write_navd_config(config, solr_server, f'[server]\nport = {port}\nauth = "basic"\nusers_file = "{users}"\n',
                      cluster=CLUSTER, state=tmp / "state", private=True)
    with serving(config, f"http://127.0.0.1:{port}") as served:
        yield served.url


@pytest.fixture(scope="module")
def apache(server: str) -> ApacheAtlasClient:
    return ApacheAtlasClient(server, (VIEWER, VIEWER_PASSWORD))


@pytest.fixture(scope="module")
def pyatlas(server: str) -> PyApacheAtlasClient:
    return PyApacheAtlasClient(f"{server}/api/atlas/v2", BasicAuthentication(EDITOR, EDITOR_PASSWORD))


def _get(server: str, path: str, **params: Any) -> requests.Response:
    return requests.get(f"{server}/api/atlas/v2/{path}", params=params, auth=(VIEWER, VIEWER_PASSWORD), timeout=60)


# -- entities ---------------------------------------------------------------------------------------

def test_entity_by_guid_is_atlas_hive_table(apache: ApacheAtlasClient, ids: Mapping[str, str]) -> None:
    found = apache.entity.get_entity_by_guid(ids["table"])
    entity = found.entity
    assert entity.typeName == "hive_table"
    assert entity.guid == ids["table"]
    assert entity.status == "ACTIVE"
    assert entity.attributes["qualifiedName"] == f"{DB}.orders@{CLUSTER}"
    assert entity.attributes["name"] == "orders"
    assert entity.attributes["owner"] == "etl"
    assert entity.attributes["clusterName"] == CLUSTER
    assert entity.attributes["db"]["guid"] == ids["database"]
    assert entity.attributes["db"]["typeName"] == "hive_db"


def test_entity_by_unique_attribute(apache: ApacheAtlasClient, ids: Mapping[str, str]) -> None:
    column = apache.entity.get_entity_by_attribute("hive_column", {"qualifiedName": f"{DB}.orders.id@{CLUSTER}"})
    assert column.entity.guid == ids["column id"]
    assert column.entity.attributes["type"] == "bigint"
    assert column.entity.attributes["table"]["guid"] == ids["table"]
    database = apache.entity.get_entity_by_attribute("hive_db", {"qualifiedName": f"{DB}@{CLUSTER}"})
    assert database.entity.guid == ids["database"]
    path = apache.entity.get_entity_by_attribute("hdfs_path", {"qualifiedName": f"{DEFAULT_FS}/data/{CLUSTER}"})
    assert path.entity.guid == ids["directory"]
    assert path.entity.attributes["isFile"] is False
    # a table's name under the column type is no column
    with pytest.raises(AtlasServiceException) as refused:
        apache.entity.get_entity_by_attribute("hive_column", {"qualifiedName": f"{DB}.orders@{CLUSTER}"})
    assert "failed with status 404" in str(refused.value)
    assert "ATLAS-404-00-009" in str(refused.value)


def test_entities_in_bulk_by_both_clients(apache: ApacheAtlasClient, pyatlas: PyApacheAtlasClient,
                                          ids: Mapping[str, str]) -> None:
    wanted = [ids["table"], ids["database"], ids["ctas"]]
    found = apache.entity.get_entities_by_guids(wanted)
    assert [e.guid for e in found.entities] == wanted
    assert [e.typeName for e in found.entities] == ["hive_table", "hive_db", "spark_process_execution"]
    body = pyatlas.get_entity(guid=wanted)
    assert [e["guid"] for e in body["entities"]] == wanted
    assert body["entities"][2]["attributes"]["queryText"] == CTAS


def test_unknown_guid_is_atlas_404(server: str, apache: ApacheAtlasClient) -> None:
    unknown = uuid.uuid4().hex
    answer = _get(server, f"entity/guid/{unknown}")
    assert answer.status_code == 404
    assert answer.json()["errorCode"] == "ATLAS-404-00-005"
    assert unknown in answer.json()["errorMessage"]
    with pytest.raises(AtlasServiceException) as refused:
        apache.entity.get_entity_by_guid(unknown)
    assert "failed with status 404" in str(refused.value)
    assert _get(server, "entity/bulk", guid=unknown).json()["errorCode"] == "ATLAS-404-00-005"


@pytest.mark.parametrize(("path", "params", "parameter"), [
    ("entity/uniqueAttribute/type/hive_table", {}, "attr:qualifiedName"),
    ("entity/uniqueAttribute/type/no_such_type", {"attr:qualifiedName": "x"}, "type"),
    ("entity/bulk", {}, "guid"),
    ("lineage/{table}", {"direction": "SIDEWAYS"}, "direction"),
    ("lineage/{table}", {"depth": "0"}, "depth"),
    ("lineage/{table}", {"depth": "many"}, "depth"),
    ("search/basic", {"limit": "-1"}, "limit"),
    ("search/basic", {"query": "{!join from=a to=b}x"}, "query"),
    ("search/dsl", {"query": "hive_table select name"}, "query"),
    ("search/dsl", {"query": "hive_table where nope = 'x'"}, "query"),
    ("types/typedefs", {"type": "widget"}, "type"),
])
def test_bad_parameters_are_400_naming_them(server: str, ids: Mapping[str, str], path: str,
                                            params: dict[str, str], parameter: str) -> None:
    answer = _get(server, path.format(table=ids["table"]), **params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["errorCode"] == "ATLAS-400-00-001"
    assert body["errorMessage"].startswith(f"{parameter}: "), body

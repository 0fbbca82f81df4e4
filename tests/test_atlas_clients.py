"""Atlas' own Python clients, unmodified (PyPI `apache-atlas` and `pyapacheatlas`), against a real
`navd serve` (uvicorn, HTTP basic auth) over the session Solr holding a Hive database and table
made in the real test metastore and extracted by the metastore extractor, an HDFS directory (the
HDFS extractor's records) and a Spark CTAS read from a captured event log (with its column
lineage): entities by guid, by
qualifiedName and in bulk, lineage both ways, basic and DSL search, type definitions,
classifications added and removed; Atlas' error shape for what does not exist or is refused."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
import requests
from pyhive import hive
from apache_atlas.client.base_client import AtlasClient as ApacheAtlasClient
from apache_atlas.exceptions import AtlasServiceException
from apache_atlas.model.misc import SearchFilter
from pyapacheatlas.auth import BasicAuthentication
from pyapacheatlas.core import AtlasClient as PyApacheAtlasClient
from pyapacheatlas.core.util import AtlasException

from conftest import serve_with_users
from navd.extractors.hdfs.records import entry_from_webhdfs, records_for
from navd.extractors import run_pass
from navd.extractors.hms.extractor import HmsExtractor
from navd.extractors.hms.records import Column, TableInfo, table_records
from navd.extractors.spark.records import process_lines, stubs_for
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Deletion, Element, ElementStub, Record, identity
from navd.server.roles import Role
from navd.solr.server import EmbeddedSolr
from navd_devstack.spark_thrift import SparkThriftServer
from spark_fixtures import DEFAULT_FS, fixture_lines
from test_navigator_clients import iri_to_uri

CLUSTER = "c" + uuid.uuid4().hex[:10]
DB = "db_" + uuid.uuid4().hex[:10]
RUN = "atlas-clients##1"
CAPTURED_APP = "local-1795324168272"  # ctas_expression's application id
APP = f"local-{uuid.uuid4().int % 10**13:013d}"
CTAS = "create table sales.t as select upper(c) as u from sales.s where c is not null"
VIEWER, VIEWER_PASSWORD = "reader", "atlas reader pass"
EDITOR, EDITOR_PASSWORD = "steward", "atlas steward pass"


def _spark_records() -> list[Record]:
    """A Spark CTAS with its column lineage, read from a captured event log by the Spark
    extractor's own processing."""
    # an application id of this module's own: the executions' identities derive from it, and other
    # test modules write the same captured application into the session Solr
    lines = [line.replace(CAPTURED_APP, APP) for line in fixture_lines("ctas_expression")]
    _run, spark = process_lines(lines, cluster=CLUSTER, default_fs=DEFAULT_FS, extractor_run_id=RUN)
    return [*spark, *stubs_for(spark, RUN)]


@pytest.fixture(scope="module")
def ids(index: SolrIndex, spark_thrift: SparkThriftServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The database and table made in the real metastore (through the test HiveServer2, as its
    user `etl`) and extracted by the metastore extractor; an HDFS directory as the HDFS
    extractor's records; the Spark CTAS."""
    with hive.connect("127.0.0.1", spark_thrift.port, username="etl") as connection:
        cursor = connection.cursor()
        for statement in (f"CREATE DATABASE {DB} COMMENT 'the orders data'",
                          f"CREATE TABLE {DB}.orders (id BIGINT COMMENT 'order id', amount DECIMAL(10,2)) "
                          "USING parquet COMMENT 'all orders'"):
            cursor.execute(statement)
    extractor = HmsExtractor(hive.connect("127.0.0.1", spark_thrift.port, username="navd"), index, cluster=CLUSTER,
                             default_fs=DEFAULT_FS, state_dir=tmp_path_factory.mktemp("atlas-hms"), database_regex=DB)
    writer = IndexWriter(index)
    try:
        assert run_pass(extractor, writer).complete
    finally:
        extractor.close()
    records: list[Record] = records_for(entry_from_webhdfs(f"/data/{CLUSTER}", {
        "pathSuffix": "", "type": "DIRECTORY", "owner": "etl", "group": "hadoop", "permission": "755", "length": 0,
        "replication": 0, "blockSize": 134217728, "modificationTime": 1795324168000,
        "accessTime": 1795324169000}), DEFAULT_FS, RUN)
    records += _spark_records()
    writer.write_all(records)
    assert writer.close()
    index.commit("elements", soft=True)
    index.commit("relations", soft=True)
    elements = [r.element if isinstance(r, ElementStub) else r for r in records
                if isinstance(r, (Element, ElementStub))]
    by_name = {e.qualified_name: e.identity for e in elements}
    hive_ids = {name: identity("HIVE", f"{name}@{CLUSTER}") for name in (DB, f"{DB}.orders", f"{DB}.orders.id")}
    return {
        "database": hive_ids[DB], "table": hive_ids[f"{DB}.orders"], "column id": hive_ids[f"{DB}.orders.id"],
        "directory": by_name[f"{DEFAULT_FS}/data/{CLUSTER}"],
        "ctas": next(e.identity for e in elements if e.query_text == CTAS),
        "sales.s": by_name[f"sales.s@{CLUSTER}"], "sales.t": by_name[f"sales.t@{CLUSTER}"],
        "sales.s.c": by_name[f"sales.s.c@{CLUSTER}"], "sales.t.u": by_name[f"sales.t.u@{CLUSTER}"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr,
           ids: Mapping[str, str]) -> Iterator[str]:
    """`navd serve` with basic auth, a viewer and an editor; Atlas' clients take this URL."""
    users = {VIEWER: (VIEWER_PASSWORD, Role.VIEWER), EDITOR: (EDITOR_PASSWORD, Role.EDITOR)}
    with serve_with_users(tmp_path_factory.mktemp("atlas-clients"), solr_server, users, cluster=CLUSTER) as served:
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
    assert entity.attributes["tableType"] == "MANAGED_TABLE"
    assert entity.attributes["description"] == "all orders"


def test_entity_header_by_both_clients(apache: ApacheAtlasClient, pyatlas: PyApacheAtlasClient,
                                       ids: Mapping[str, str]) -> None:
    header = apache.entity.get_entity_header_by_guid(ids["database"])
    assert (header.guid, header.typeName, header.displayText) == (ids["database"], "hive_db", DB)
    assert pyatlas.get_entity_header(ids["table"])["attributes"]["qualifiedName"] == f"{DB}.orders@{CLUSTER}"


def test_entity_by_unique_attribute(apache: ApacheAtlasClient, ids: Mapping[str, str]) -> None:
    column = apache.entity.get_entity_by_attribute("hive_column", {"qualifiedName": f"{DB}.orders.id@{CLUSTER}"})
    assert column.entity.guid == ids["column id"]
    assert column.entity.attributes["type"] == "bigint"
    assert column.entity.attributes["position"] == 0
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
    # a process names what it read and wrote, as Atlas' inputs and outputs
    ctas = body["entities"][2]["attributes"]
    assert [(i["guid"], i["typeName"]) for i in ctas["inputs"]] == [(ids["sales.s"], "hive_table")]
    assert [o["uniqueAttributes"]["qualifiedName"] for o in ctas["outputs"]] == [f"sales.t@{CLUSTER}"]


def test_entities_in_bulk_by_qualified_name(pyatlas: PyApacheAtlasClient, ids: Mapping[str, str]) -> None:
    names = [f"{DB}.orders.amount@{CLUSTER}", f"{DB}.orders.nope@{CLUSTER}", f"{DB}.orders.id@{CLUSTER}"]
    body = pyatlas.get_entity(qualifiedName=names, typeName="hive_column")
    # in the order asked; a name navd does not hold is left out, as Atlas does
    assert [e["attributes"]["qualifiedName"] for e in body["entities"]] == [names[0], names[2]]
    assert body["entities"][1]["guid"] == ids["column id"]


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


def test_a_guid_names_one_entity(server: str, ids: Mapping[str, str]) -> None:
    """Solr's real-time get splits ids at commas: two guids in one must not answer the first."""
    both = f"{ids['table']},{ids['database']}"
    for path in (f"entity/guid/{both}", f"lineage/{both}", f"entity/guid/{both}/classifications"):
        answer = _get(server, path)
        assert answer.status_code == 404, (path, answer.text[:200])
        assert answer.json()["errorCode"] == "ATLAS-404-00-005"
    assert _get(server, "entity/bulk", guid=both).status_code == 404


def test_what_navd_does_not_serve_is_404(server: str) -> None:
    for path in ("search/quick", "glossary", "relationship/guid/x"):
        assert _get(server, path).status_code == 404, path
    answer = _get(server, "types/typedef/name/no_such_type")
    assert answer.status_code == 404
    assert answer.json()["errorCode"] == "ATLAS-404-00-001"


@pytest.mark.parametrize(("path", "params", "parameter"), [
    ("entity/uniqueAttribute/type/hive_table", {}, "attr:qualifiedName"),
    ("entity/uniqueAttribute/type/no_such_type", {"attr:qualifiedName": "x"}, "type"),
    ("entity/bulk", {}, "guid"),
    ("lineage/{table}", {"direction": "SIDEWAYS"}, "direction"),
    ("lineage/{table}", {"depth": "0"}, "depth"),
    ("lineage/{table}", {"depth": "many"}, "depth"),
    ("lineage/{table}", {"includeParent": "true"}, "includeParent"),
    ("search/basic", {"limit": "-1"}, "limit"),
    ("search/basic", {"sortBy": "name"}, "sortBy"),
    ("search/basic", {"excludeDeletedEntities": "maybe"}, "excludeDeletedEntities"),
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



# -- lineage ----------------------------------------------------------------------------------------

def _path(info: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(r["fromEntityId"], r["toEntityId"]) for r in info["relations"]}


def _through(info: Mapping[str, Any], source: str, target: str) -> list[str]:
    """The guids of the processes `source` flows through to `target`, one hop each side."""
    pairs = _path(info)
    return [p for (s, p) in pairs if s == source and (p, target) in pairs]


def test_lineage_inputs_and_outputs(apache: ApacheAtlasClient, ids: Mapping[str, str]) -> None:
    inputs = apache.lineage.get_lineage_info(ids["sales.t"], "INPUT", 3)
    assert inputs.baseEntityGuid == ids["sales.t"]
    assert inputs.lineageDirection == "INPUT"
    processes = _through({"relations": [vars(r) for r in inputs.relations]}, ids["sales.s"], ids["sales.t"])
    assert len(processes) == 1
    process = inputs.guidEntityMap[processes[0]]
    assert process.typeName == "spark_process_execution"
    assert inputs.guidEntityMap[ids["sales.s"]].typeName == "hive_table"
    assert inputs.guidEntityMap[ids["sales.s"]].attributes["qualifiedName"] == f"sales.s@{CLUSTER}"
    # sales.t has no outputs: walked the other way, only sales.s's reader (the CTAS) and sales.t
    outputs = apache.lineage.get_lineage_info(ids["sales.t"], "OUTPUT", 3)
    assert outputs.relations is None or list(outputs.relations) == []
    downstream = apache.lineage.get_lineage_info(ids["sales.s"], "OUTPUT", 3)
    assert ids["sales.t"] in downstream.guidEntityMap
    # what wrote sales.s (its load) is upstream of it, not downstream
    assert not any(r.toEntityId == ids["sales.s"] for r in downstream.relations)


def test_lineage_both_ways_by_pyapacheatlas(pyatlas: PyApacheAtlasClient, ids: Mapping[str, str]) -> None:
    both = pyatlas.get_entity_lineage(ids["sales.s"], depth=3, direction="BOTH")
    pairs = _path(both)
    assert any(s == ids["sales.s"] for s, _ in pairs)  # sales.s is read
    assert any(t == ids["sales.s"] for _, t in pairs)  # and written
    assert _through(both, ids["sales.s"], ids["sales.t"])
    # every end of every relation is in the map
    assert {g for pair in pairs for g in pair} <= set(both["guidEntityMap"])


def test_lineage_by_unique_attribute(apache: ApacheAtlasClient, ids: Mapping[str, str]) -> None:
    info = apache.lineage.get_lineage_info_attr("hive_table", {"qualifiedName": f"sales.t@{CLUSTER}"}, "INPUT", 2)
    assert info.baseEntityGuid == ids["sales.t"]
    assert ids["sales.s"] in info.guidEntityMap


def test_column_lineage_is_hive_column_lineage(server: str, ids: Mapping[str, str]) -> None:
    info = _get(server, f"lineage/{ids['sales.t.u']}", direction="INPUT", depth="2").json()
    processes = _through(info, ids["sales.s.c"], ids["sales.t.u"])
    assert len(processes) == 1, info
    process = info["guidEntityMap"][processes[0]]
    assert process["typeName"] == "hive_column_lineage"
    assert process["attributes"]["depenendencyType"] == "EXPRESSION"
    assert process["attributes"]["expression"] == "upper(c)"
    assert [i["guid"] for i in process["attributes"]["inputs"]] == [ids["sales.s.c"]]
    assert [o["guid"] for o in process["attributes"]["outputs"]] == [ids["sales.t.u"]]


# -- search -----------------------------------------------------------------------------------------

def test_basic_search_by_type_and_query(apache: ApacheAtlasClient, ids: Mapping[str, str]) -> None:
    found = apache.discovery.basic_search("hive_column", None, f"qualifiedName:{DB}.orders.*", True, limit=10)
    assert found.queryType == "BASIC"
    assert sorted(e.attributes["qualifiedName"] for e in found.entities) == [
        f"{DB}.orders.amount@{CLUSTER}", f"{DB}.orders.id@{CLUSTER}"]
    assert {e.typeName for e in found.entities} == {"hive_column"}
    assert found.approximateCount == 2
    pages = [apache.discovery.basic_search("hive_column", None, f"qualifiedName:{DB}.orders.*", True, limit=1,
                                           offset=offset) for offset in (0, 1)]
    assert [len(p.entities) for p in pages] == [1, 1]
    assert {p.entities[0].guid for p in pages} == {e.guid for e in found.entities}
    # a supertype: every data set of the database
    datasets = apache.discovery.basic_search("DataSet", None, f"qualifiedName:{DB}*", False, limit=10)
    assert {e.typeName for e in datasets.entities} == {"hive_db", "hive_table", "hive_column"}


def test_basic_search_posted_as_hue_sends_it(server: str) -> None:
    body = {"typeName": "hive_table", "excludeDeletedEntities": True, "limit": 25, "offset": 0,
            "entityFilters": {"condition": "AND", "criterion": [
                {"attributeName": "qualifiedName", "operator": "contains", "attributeValue": f"@{CLUSTER}"},
                {"attributeName": "name", "operator": "startsWith", "attributeValue": "ord"}]}}
    answer = requests.post(f"{server}/api/atlas/v2/search/basic", json=body, auth=(VIEWER, VIEWER_PASSWORD),
                           timeout=60)
    assert answer.status_code == 200, answer.text
    assert [e["attributes"]["qualifiedName"] for e in answer.json()["entities"]] == [f"{DB}.orders@{CLUSTER}"]
    bad = requests.post(f"{server}/api/atlas/v2/search/basic", auth=(VIEWER, VIEWER_PASSWORD), timeout=60,
                        json={"entityFilters": {"attributeName": "secret", "operator": "=", "attributeValue": "x"}})
    assert bad.status_code == 400
    assert bad.json()["errorMessage"].startswith("entityFilters: ")


def test_dsl_search_in_the_forms_hue_sends(apache: ApacheAtlasClient, ids: Mapping[str, str]) -> None:
    exact = apache.discovery.dsl_search(f"hive_table where qualifiedName = '{DB}.orders@{CLUSTER}'")
    assert exact.queryType == "DSL"
    assert [e.guid for e in exact.entities] == [ids["table"]]
    like = apache.discovery.dsl_search(f"hive_column where qualifiedName like '{DB}.orders.*'")
    assert sorted(e.attributes["name"] for e in like.entities) == ["amount", "id"]
    limited = apache.discovery.dsl_search_with_params(f"from hive_column where qualifiedName like '{DB}.*'", 1, 0)
    assert len(limited.entities) == 1
    named = apache.discovery.dsl_search(f'hive_db where name = "{DB}" or name like \'AND\'')
    assert [e.guid for e in named.entities] == [ids["database"]]
    # a quote inside the value is a value, never syntax
    assert not apache.discovery.dsl_search("hive_table where name = 'x\\' OR *:*'").entities


# -- types ------------------------------------------------------------------------------------------

def test_typedefs(apache: ApacheAtlasClient, pyatlas: PyApacheAtlasClient) -> None:
    everything = pyatlas.get_all_typedefs()
    names = {d["name"] for d in everything["entityDefs"]}
    assert {"hive_db", "hive_table", "hive_column", "hive_process", "hive_column_lineage", "hdfs_path",
            "spark_process"} <= names
    table = pyatlas.get_typedef(name="hive_table")
    assert table["category"] == "ENTITY"
    assert table["superTypes"] == ["DataSet"]
    headers = apache.typedef.get_all_typedef_headers(SearchFilter())
    assert {"hive_table", "hive_process"} <= {h["name"] for h in headers}



# -- classifications --------------------------------------------------------------------------------

def test_classifications_added_and_removed(server: str, apache: ApacheAtlasClient, pyatlas: PyApacheAtlasClient,
                                           ids: Mapping[str, str]) -> None:
    table = ids["table"]
    added = pyatlas.classify_entity(table, {"typeName": "PII", "attributes": {"level": "high"}})
    assert added["adds"] == ["PII"]
    entity = apache.entity.get_entity_by_guid(table).entity
    assert [(c.typeName, c.attributes) for c in entity.classifications] == [("PII", {"level": "high"})]
    assert pyatlas.get_entity_classifications(table)["list"][0]["typeName"] == "PII"
    # searchable by classification, and a classification type
    found = apache.discovery.basic_search("hive_table", "PII", None, True, limit=10)
    assert ids["table"] in [e.guid for e in found.entities]
    assert next(e for e in found.entities if e.guid == table).classificationNames == ["PII"]
    tags = _get(server, "types/typedefs", type="classification").json()
    assert "PII" in [d["name"] for d in tags["classificationDefs"]]
    assert tags["entityDefs"] == []
    # the same tag as navd's own API shows it, with who wrote it
    history = requests.get(f"{server}/api/annotations/history", params={"entity": table},
                           auth=(VIEWER, VIEWER_PASSWORD), timeout=60).json()["changes"]
    assert [c["actor"] for c in history] and {c["actor"] for c in history} == {EDITOR}
    removed = pyatlas.declassify_entity(table, "PII")
    assert removed["guid"] == table
    assert not apache.entity.get_entity_by_guid(table).entity.classifications
    with pytest.raises(AtlasException) as again:
        pyatlas.declassify_entity(table, "PII")
    assert "ATLAS-400-00-001" in str(again.value)


def test_a_viewer_cannot_classify(server: str, ids: Mapping[str, str]) -> None:
    viewer = PyApacheAtlasClient(f"{server}/api/atlas/v2", BasicAuthentication(VIEWER, VIEWER_PASSWORD))
    with pytest.raises(requests.RequestException) as refused:
        viewer.classify_entity(ids["database"], {"typeName": "PII"})
    assert "needs the editor role" in str(refused.value)
    answer = requests.delete(f"{server}/api/atlas/v2/entity/guid/{ids['database']}/classification/PII",
                             auth=(VIEWER, VIEWER_PASSWORD), timeout=60)
    assert answer.status_code == 403
    # an editor's browser on another site's page: refused before the route, as every write
    foreign = requests.post(f"{server}/api/atlas/v2/entity/guid/{ids['database']}/classifications",
                            json=[{"typeName": "PII"}], auth=(EDITOR, EDITOR_PASSWORD),
                            headers={"Origin": "http://attacker.example"}, timeout=60)
    assert (foreign.status_code, foreign.json()["parameter"]) == (403, "Origin")
    form = requests.post(f"{server}/api/atlas/v2/entity/guid/{ids['database']}/classifications",
                         data="typeName=PII", auth=(EDITOR, EDITOR_PASSWORD),
                         headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=60)
    assert form.status_code == 415
    assert not PyApacheAtlasClient(f"{server}/api/atlas/v2", BasicAuthentication(EDITOR, EDITOR_PASSWORD)
                                   ).get_entity_classifications(ids["database"])["list"]


def test_classifying_an_unknown_guid_or_a_bad_body(server: str, ids: Mapping[str, str]) -> None:
    unknown = requests.post(f"{server}/api/atlas/v2/entity/guid/{uuid.uuid4().hex}/classifications",
                            json=[{"typeName": "PII"}], auth=(EDITOR, EDITOR_PASSWORD), timeout=60)
    assert unknown.status_code == 404
    assert unknown.json()["errorCode"] == "ATLAS-404-00-005"
    for body in ({"typeName": "PII"}, [{"attributes": {}}], [{"typeName": "no/slashes"}]):
        bad = requests.post(f"{server}/api/atlas/v2/entity/guid/{ids['table']}/classifications", json=body,
                            auth=(EDITOR, EDITOR_PASSWORD), timeout=60)
        assert bad.status_code == 400, (body, bad.text)
        assert bad.json()["errorCode"] == "ATLAS-400-00-001"


# -- Hue's Atlas catalogue --------------------------------------------------------------------------
#
# Hue cannot be installed here (it is not a package on PyPI), so its requests are replayed as its
# code sends them, read at cloudera/hue `desktop/libs/metadata/src/metadata/catalog/atlas_client.py`
# (ATLAS below), class `AtlasApi`: a basic-auth client on `[metadata] [[catalog]] api_url`
# (a list of servers `http://host:port`, each asked `/api/atlas/admin/status`), paths joined unencoded (`Resource(urlencode=False)`) and the URL
# passed through Django's iri_to_uri; answers >= 300 raised. Nothing of Hue is copied into navd.

class HueAtlasApi:
    def __init__(self, servers: str, username: str, password: str, cluster: str | None) -> None:
        # `api_url` lists Atlas servers; Hue asks each one's status without credentials and
        # takes the first ACTIVE one (its JSON read as is: a KeyError in Hue if "Status" is absent)
        self.api_url = ""
        for server in servers.split(","):
            status = requests.get(server.strip().strip("/") + "/api/atlas/admin/status", timeout=60).json()
            if "ACTIVE" in status["Status"]:
                self.api_url = server.strip().strip("/") + "/api/atlas"
                break
        assert self.api_url, "no Atlas server ACTIVE"
        self.session = requests.Session()
        self.session.auth = (username, password)
        self.cluster = cluster  # ATLAS `get_catalog_search_cluster()`

    def _get(self, path: str) -> Any:
        answer = self.session.get(iri_to_uri(self.api_url + path), timeout=60)
        assert answer.status_code < 300, answer.text
        return answer.json()

    def fetch_single_entity(self, dsl: str) -> dict[str, Any]:
        """ATLAS `fetch_single_entity`: the DSL in the URL as it is, the first entity; it reads
        `guid`, `typeName`, `attributes`, `classificationNames`, `meaningNames`, `meanings`."""
        entities = self._get(f"/v2/search/dsl?query={dsl}").get("entities") or []
        assert entities, f"Hue would raise CatalogEntityDoesNotExistException for {dsl}"
        entity = entities[0]
        for key in ("guid", "typeName", "attributes", "classificationNames", "meaningNames", "meanings"):
            assert key in entity, key
        return entity

    def _criteria(self, name: str) -> str:
        """ATLAS `get_database`/`get_table`/`get_field`: `qualifiedName='<name>@<cluster>'` with a
        search cluster (no spaces around `=`), `qualifiedName like '<name>@*'` without."""
        return f"qualifiedName='{name}@{self.cluster}'" if self.cluster else f"qualifiedName like '{name}@*'"

    def get_database(self, name: str) -> dict[str, Any]:
        return self.fetch_single_entity(f"hive_db where {self._criteria(name)}")

    def get_table(self, database: str, table: str) -> dict[str, Any]:
        return self.fetch_single_entity(f"hive_table where {self._criteria(f'{database}.{table}')}")

    def get_field(self, database: str, table: str, field: str) -> dict[str, Any]:
        return self.fetch_single_entity(f"hive_column where {self._criteria(f'{database}.{table}.{field}')}")

    def list_tags(self) -> list[str]:
        """ATLAS `search_entities_interactive` with no query and `facetFields` holding `tags`."""
        return [d["name"] for d in self._get("/v2/types/typedefs?type=classification")["classificationDefs"]]

    def search_interactive(self, query_s: str, limit: int = 100) -> list[dict[str, Any]]:
        """ATLAS `search_entities_interactive`: the text with `*` appended, split on spaces; a
        `type:` term picks the type, a `tag:` term searches `<tag>*` under `Asset`; the body posted
        as JSON, Hue's keys all present; of `Asset` answers it keeps Hive's types."""
        terms = (query_s.strip() + "*").split()
        query: list[str] = []
        atlas_type = None
        for term in terms:
            if ":" not in term:
                query.append(term)
                continue
            name, value = term.rstrip("*").split(":")
            if value and name.lower() == "type":
                atlas_type = {"table": "hive_table", "database": "hive_db", "field": "hive_column"}.get(value.lower())
            if value and name.lower() in ("tag", "tags", "classification"):
                atlas_type = atlas_type or "Asset"
                query.append(value + "*")
        body: dict[str, Any] = {
            "attributes": None, "classification": None, "entityFilters": None, "excludeDeletedEntities": True,
            "includeClassificationAttributes": True, "includeSubClassifications": True, "includeSubTypes": True,
            "limit": limit, "offset": 0, "query": " ".join(query), "tagFilters": None, "termName": None,
            "typeName": atlas_type or "hive_table"}
        if self.cluster:
            body["entityFilters"] = {"condition": "AND", "criterion": [
                {"attributeName": "qualifiedName", "operator": "contains", "attributeValue": "@" + self.cluster}]}
        answer = self.session.post(iri_to_uri(self.api_url + "/v2/search/basic"), data=json.dumps(body),
                                   headers={"Content-Type": "application/json"}, timeout=60)
        assert answer.status_code < 300, answer.text
        return [e for e in answer.json().get("entities", [])
                if atlas_type != "Asset" or e["typeName"].lower() in ("hive_db", "hive_table", "hive_column")]

    def search_children(self, query_s: str, limit: int = 100) -> list[dict[str, Any]]:
        """ATLAS `search_entities` (the table browser): `type:database` lists databases, a
        `parentPath:"/db"` term the tables of db, `/db/table` its columns, by DSL `like`."""
        if query_s == "type:database":
            dsl = f"from hive_db where qualifiedName like '*@{self.cluster}' limit {limit}" if self.cluster \
                else f"from hive_db limit {limit}"
        else:
            parent = query_s.split(":", 1)[1].strip('"').lstrip("/").replace("/", ".")
            atlas_type = "hive_table" if parent.count(".") == 0 else "hive_column"
            dsl = f"from {atlas_type} where qualifiedName like '{parent}*@{self.cluster}' limit {limit}" \
                if self.cluster else f"from {atlas_type} where qualifiedName like '{parent}*' limit {limit}"
        return self._get(f"/v2/search/dsl?query={dsl}").get("entities") or []


@pytest.mark.parametrize("cluster", [CLUSTER, None])
def test_hue_atlas_catalogue(server: str, ids: Mapping[str, str], cluster: str | None) -> None:
    hue = HueAtlasApi(server, VIEWER, VIEWER_PASSWORD, cluster)
    assert hue.get_database(DB)["guid"] == ids["database"]
    table = hue.get_table(DB, "orders")
    assert (table["guid"], table["typeName"], table["attributes"]["owner"]) == (ids["table"], "hive_table", "etl")
    assert hue.get_field(DB, "orders", "id")["guid"] == ids["column id"]
    # the table browser: databases, a database's tables, a table's columns
    assert ids["database"] in [e["guid"] for e in hue.search_children("type:database", limit=1000)]
    assert [e["guid"] for e in hue.search_children(f'parentPath:"/{DB}"')] == [ids["table"]]
    assert sorted(e["attributes"]["name"] for e in hue.search_children(f'parentPath:"/{DB}/orders"')) == ["amount", "id"]
    # the search box: a table by the start of its name, a type, a tag
    assert ids["table"] in [e["guid"] for e in hue.search_interactive("order")]
    assert [e["guid"] for e in hue.search_interactive(f"type:database {DB}")] == [ids["database"]]


def test_hue_lists_and_finds_tags(server: str, pyatlas: PyApacheAtlasClient, ids: Mapping[str, str]) -> None:
    hue = HueAtlasApi(server, VIEWER, VIEWER_PASSWORD, CLUSTER)
    tag = "hue_" + uuid.uuid4().hex[:8]
    pyatlas.classify_entity(ids["column id"], {"typeName": tag, "attributes": {"owner": "finance"}})
    try:
        assert tag in hue.list_tags()
        found = hue.search_interactive(f"tag:{tag}")
        assert [(e["guid"], e["classificationNames"]) for e in found] == [(ids["column id"], [tag])]
        # Hue turns classification attributes into the entity's properties
        assert found[0]["classifications"][0]["attributes"] == {"owner": "finance"}
    finally:
        pyatlas.declassify_entity(ids["column id"], tag)


def test_a_classification_defined_before_any_entity_has_it(server: str, pyatlas: PyApacheAtlasClient,
                                                            ids: Mapping[str, str]) -> None:
    name = "defined_" + uuid.uuid4().hex[:8]
    created = pyatlas.upload_typedefs(classificationDefs=[{"name": name, "description": "set by the stewards"}])
    assert [d["name"] for d in created["classificationDefs"]] == [name]
    # listed although no entity has it, with its description; Hue's tag list shows it
    assert pyatlas.get_typedef(name=name)["description"] == "set by the stewards"
    assert name in HueAtlasApi(server, VIEWER, VIEWER_PASSWORD, CLUSTER).list_tags()
    # defined again (pyapacheatlas' force_update puts what exists): the description replaced
    pyatlas.upload_typedefs(classificationDefs=[{"name": name, "description": "revised"}], force_update=True)
    assert pyatlas.get_typedef(name=name)["description"] == "revised"
    # entity types are navd's own; a viewer defines nothing
    refused = requests.post(f"{server}/api/atlas/v2/types/typedefs", json={"entityDefs": [{"name": "my_type"}]},
                            auth=(EDITOR, EDITOR_PASSWORD), timeout=60)
    assert refused.status_code == 400
    assert refused.json()["errorMessage"].startswith("entityDefs: ")
    viewer = requests.post(f"{server}/api/atlas/v2/types/typedefs", json={"classificationDefs": [{"name": "x"}]},
                           auth=(VIEWER, VIEWER_PASSWORD), timeout=60)
    assert viewer.status_code == 403


def test_a_classification_outlives_re_extraction(apache: ApacheAtlasClient, pyatlas: PyApacheAtlasClient,
                                                 index: SolrIndex, ids: Mapping[str, str]) -> None:
    """The extractors rewrite element documents whole; the classification is people's and stays."""
    tag = "kept_" + uuid.uuid4().hex[:8]
    pyatlas.classify_entity(ids["sales.t"], {"typeName": tag, "attributes": {"reason": "audit"}})
    try:
        writer = IndexWriter(index)
        writer.write_all(_spark_records())  # the Spark extractor's pass over the same event log again
        assert writer.close()
        index.commit("elements", soft=True)
        entity = apache.entity.get_entity_by_guid(ids["sales.t"]).entity
        assert [(c.typeName, c.attributes) for c in entity.classifications] == [(tag, {"reason": "audit"})]
        found = apache.discovery.basic_search("hive_table", tag, None, True, limit=10)
        assert [e.guid for e in found.entities] == [ids["sales.t"]]
    finally:
        pyatlas.declassify_entity(ids["sales.t"], tag)


def test_a_deleted_table_is_deleted_and_left_out_on_request(apache: ApacheAtlasClient, index: SolrIndex) -> None:
    database = DB + "_old"  # apart from DB: the other tests list DB's tables
    records = table_records(TableInfo(database, "gone", "EXTERNAL", (Column("x", "int", None, 0),), owner="etl",
                                      comment=None, location=f"{DEFAULT_FS}/warehouse/{database}.db/gone"),
                            CLUSTER, DEFAULT_FS, RUN)
    table = next(r for r in records if isinstance(r, Element) and r.qualified_name == f"{database}.gone@{CLUSTER}")
    for batch in (records, [Deletion(table.ref, datetime(2026, 11, 1, tzinfo=UTC))]):
        writer = IndexWriter(index)
        writer.write_all(batch)
        assert writer.close()
        index.commit("elements", soft=True)
    entity = apache.entity.get_entity_by_guid(table.identity).entity
    assert (entity.status, entity.attributes["tableType"]) == ("DELETED", "EXTERNAL_TABLE")
    query = f"qualifiedName:{database}.*"
    assert [e.guid for e in apache.discovery.basic_search("hive_table", None, query, False, limit=10).entities] == [
        table.identity]
    assert not apache.discovery.basic_search("hive_table", None, query, True, limit=10).entities

"""Navigator's real clients against a real `navd serve` (uvicorn, HTTP basic auth) over the session
Solr: the exact request sequences of Hue's Navigator client and of the Navigator SDK's paging
loop, replayed request by request.

Neither client can be installed here (docs/navigator-api.md, "Clients"): Hue is not a package on
PyPI, and the SDK's jars (`com.cloudera.navigator:navigator-sdk-client`) are not on Maven Central,
only in Cloudera's own repository. So each request below is written from the client's source, read
at cloudera/hue 96baf7e22b and cloudera/navigator-sdk 2cffe85, and cites the file and function it
comes from: the same URL (path, parameter order, Hue's own unencoded query string), headers,
body and basic auth, and the same handling of the answer (what it parses, which fields it reads,
when it stops). Nothing of either client is copied into navd.

Hue's files, under desktop/: `libs/metadata/src/metadata/catalog/navigator_client.py` (NAVIGATOR
below), `libs/metadata/src/metadata/catalog/base.py` (BASE), `libs/metadata/src/metadata/
catalog_api.py` (CATALOG_API), `core/src/desktop/lib/rest/{resource,http_client}.py` (RESOURCE,
HTTP_CLIENT). The SDK's, under client/src/main/java/com/cloudera/nav/sdk/client/:
`NavApiCient.java`, `MetadataExtractor.java`, `MetadataResultIterator.java`, `QueryUtils.java`.
"""

from __future__ import annotations

import base64
import json
import posixpath
import uuid
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

import pytest
import requests
from requests.auth import HTTPBasicAuth

from conftest import serve_with_users
from navd.extractors.hdfs.records import entry_from_webhdfs, records_for
from navd.extractors.hms.records import Column, TableInfo, database_records, table_records
from navd.extractors.spark.records import process_lines, stubs_for
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementStub, ElementType, Record, Relation, RelationType
from navd.openlineage.mapping import MappingSettings, map_event
from navd.server.roles import Role
from navd.solr.server import EmbeddedSolr
from openlineage.client.event_v2 import RunState
from openlineage_events import HIVE as OL_HIVE
from openlineage_events import JOB_NAMESPACE, as_json, job_run
from spark_fixtures import DEFAULT_FS, fixture_lines

CLUSTER = "c" + uuid.uuid4().hex[:10]
DB = "db_" + uuid.uuid4().hex[:10]
DATA = f"/data/{CLUSTER}"
#: the database of the OpenLineage task's tables (apart from the metastore's DB)
OL_DB = "ol_" + uuid.uuid4().hex[:10]
#: Navigator's extractor run ids are `<source identity>##<extraction iteration>`; the SDK's
#: incremental extraction builds them so (MetadataExtractor.getExtractorQueryList).
SOURCE = "src" + uuid.uuid4().hex[:10]
RUN = f"{SOURCE}##1"
CTAS = "create table sales.t as select upper(c) as u from sales.s where c is not null"
USER, PASSWORD = "hue", "navigator pass"
#: Hue's edits (PUT entities) need an editor
EDITOR, EDITOR_PASSWORD = "eddie", "editor passphrase"


def _status(suffix: str, kind: str, length: int, permission: str) -> dict[str, Any]:
    return {"pathSuffix": suffix, "type": kind, "owner": "etl", "group": "hadoop", "permission": permission,
            "length": length, "replication": 3 if kind == "FILE" else 0, "blockSize": 134217728,
            "modificationTime": 1795324168000, "accessTime": 1795324169000}


def _records() -> tuple[list[Record], dict[str, str]]:
    """What the extractors' record builders make of a Hive database and table, an HDFS directory and
    file, and a Spark CTAS from a captured event log; and the identities of the entities named."""
    records: list[Record] = database_records(CLUSTER, DB, {"Owner": "hive", "Comment": "the orders data"},
                                             DEFAULT_FS, RUN)
    records += table_records(TableInfo(DB, "orders", "MANAGED",
                                       (Column("id", "bigint", "order id", 0),
                                        Column("amount", "decimal(10,2)", None, 1)),
                                       owner="etl", comment="all orders",
                                       location=f"{DEFAULT_FS}/warehouse/{DB}.db/orders"), CLUSTER, DEFAULT_FS, RUN)
    records += records_for(entry_from_webhdfs(DATA, _status("", "DIRECTORY", 0, "755")), DEFAULT_FS, RUN)
    records += records_for(entry_from_webhdfs(DATA, _status("part-00000.parquet", "FILE", 2048, "644")),
                           DEFAULT_FS, RUN)
    _run, spark = process_lines(fixture_lines("ctas_expression"), cluster=CLUSTER, default_fs=DEFAULT_FS,
                                extractor_run_id=RUN)
    records += spark + list(stubs_for(spark, RUN))
    elements = [r.element if isinstance(r, ElementStub) else r for r in records
                if isinstance(r, (Element, ElementStub))]
    refs = {e.qualified_name: e.ref for e in elements}
    # the file loaded into `sales.s` (a second hop upstream of `sales.t`, for the lineage `length`)
    records.append(Relation(RelationType.DATA_FLOW, refs[f"{DEFAULT_FS}{DATA}/part-00000.parquet"],
                            refs[f"sales.s@{CLUSTER}"], extractor_run_id=RUN))
    by_name = {e.qualified_name: e.identity for e in elements}
    # a task OpenLineage told of (an Airflow job): its job and run are in their namespace's source
    mapped = map_event(as_json(job_run(str(uuid.uuid4()), f"load_{DB}", RunState.COMPLETE, database=OL_DB)),
                       "RunEvent", MappingSettings({OL_HIVE: CLUSTER}, CLUSTER))
    assert mapped.execution is not None
    records += [*mapped.records, mapped.execution]
    return records, {
        "openlineage job": next(r.identity for r in mapped.records
                                if isinstance(r, Element) and r.type is ElementType.OPERATION),
        "database": by_name[f"{DB}@{CLUSTER}"], "table": by_name[f"{DB}.orders@{CLUSTER}"],
        "column id": by_name[f"{DB}.orders.id@{CLUSTER}"], "directory": by_name[f"{DEFAULT_FS}{DATA}"],
        "file": by_name[f"{DEFAULT_FS}{DATA}/part-00000.parquet"],
        "ctas": next(e.identity for e in elements if e.query_text == CTAS),
        "sales.s": by_name[f"sales.s@{CLUSTER}"], "sales.t": by_name[f"sales.t@{CLUSTER}"]}


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
def navigator_url(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr,
                  ids: Mapping[str, str]) -> Iterator[str]:
    """`navd serve` with basic auth (as Navigator takes it), a user for the clients; Hue's
    `[metadata] [[navigator]] api_url` and the SDK's `navigator_url` are this + `/api`."""
    users = {USER: (PASSWORD, Role.VIEWER), EDITOR: (EDITOR_PASSWORD, Role.EDITOR)}
    with serve_with_users(tmp_path_factory.mktemp("navigator-clients"), solr_server, users, cluster=CLUSTER) as served:
        yield f"{served.url}/api"


# -- Hue ------------------------------------------------------------------------------------------

def iri_to_uri(iri: str) -> str:
    """Django's `django.utils.encoding.iri_to_uri` (Django 4.2, which Hue runs on), which
    HTTP_CLIENT `HttpClient._make_url` applies to the whole URL: it leaves `+ & = : ( ) [ ] *`
    and `%` as they are and percent-encodes spaces, quotes, backslashes, `^`."""
    return quote(iri, safe="/#%[]=:;$&()+,!?*@'~")


class HueNavigatorApi:
    """The HTTP side of NAVIGATOR `NavigatorApi`, request by request."""

    #: NAVIGATOR `NavigatorApi.DEFAULT_SEARCH_FIELDS`
    DEFAULT_SEARCH_FIELDS = (("originalName", 3), ("originalDescription", 1), ("name", 10), ("description", 3),
                             ("tags", 5))
    #: metadata/conf.py `NAVIGATOR.FETCH_SIZE_SEARCH` default
    FETCH_SIZE_SEARCH = 450

    def __init__(self, api_url: str, username: str, password: str) -> None:
        # NAVIGATOR `NavigatorApi.__init__`: `'%s/%s' % (API_URL.strip('/'), VERSION)`, VERSION = 'v9';
        # an UnsecureHttpClient (one requests.Session) with `set_basic_auth`, Resource(urlencode=False)
        self.api_url = "%s/%s" % (api_url.strip("/"), "v9")
        self.session = requests.Session()
        self.session.auth = HTTPBasicAuth(username, password)
        # NAVIGATOR `self.__params = {}`: one dict, updated by every call and never cleared, so a call
        # sends what earlier calls left in it (get_entity after find_entity sends query, offset, limit)
        self.params: dict[str, Any] = {}
        self.cookies: Any = None
        self.requests: list[str] = []
        # metadata_sites.get_navigator_hue_server_name(): Hue's cluster name, when configured
        self.hue_server_name: str | None = None
        self.sent_bodies: list[Any] = []

    def _url(self, relpath: str, params: Mapping[str, Any] | None) -> str:
        """RESOURCE `Resource._join_uri` and HTTP_CLIENT `HttpClient._make_url` (do_urlencode=False)."""
        path = posixpath.normpath("/" + relpath)
        url = self.api_url + posixpath.normpath("/" + path.lstrip("/"))
        if params:
            url += "?" + "&".join("%s=%s" % (k, v) for k, v in params.items())
        return iri_to_uri(url)

    def _post(self, relpath: str, data: str) -> Any:
        """RESOURCE `post(relpath, data=..., contenttype=_JSON_CONTENT_TYPE, clear_cookies=True)`:
        the body as given, `Content-Type: application/json`, no cookies; >= 300 raised."""
        url = self._url(relpath, None)
        self.requests.append(url)
        self.sent_bodies.append(json.loads(data))
        response = self.session.post(url, data=data, headers={"Content-Type": "application/json"},
                                     allow_redirects=True, timeout=120)
        if response.status_code >= 300:
            raise HueRestException(response.status_code, response.text)
        assert "application/json" in response.headers.get("content-type", ""), response.headers
        return response.json()

    def cluster_source_ids(self) -> str:
        """NAVIGATOR `get_cluster_source_ids(api)` (its cache left out): with a Hue server name,
        `NavigatorApi.get_cluster_source_ids()` asks for the sources of the cluster and every later
        query is prefixed with their ids; no source found: `sourceId:0 AND`, which matches nothing."""
        if not self.hue_server_name:
            return ""
        sources = self._get("entities", {"query": 'clusterName:"%s"' % self.hue_server_name, "limit": 200})
        if not sources:
            return "sourceId:0 AND"
        return "(" + " OR ".join("sourceId:%s" % (s.get("sourceId") or s.get("identity")) for s in sources) + ") AND "

    def _get(self, relpath: str, params: Mapping[str, Any] | None) -> Any:
        # RESOURCE `Resource._join_uri`, HTTP_CLIENT `HttpClient._make_url` with do_urlencode=False:
        # the values are joined as they are, then iri_to_uri
        url = self._url(relpath, params)
        self.requests.append(url)
        # HTTP_CLIENT `HttpClient.execute`: the session's GET, redirects followed (RESOURCE `get`),
        # the previous answer's cookies sent back, any status >= 300 raised as RestException
        response = self.session.get(url, allow_redirects=True, cookies=self.cookies, timeout=120)
        if response.status_code >= 300:
            raise HueRestException(response.status_code, response.text)
        self.cookies = response.cookies
        # RESOURCE `Resource._format_response`: JSON only when the content type says so, else bytes
        assert "application/json" in response.headers.get("content-type", ""), response.headers
        return response.json()

    def search_entities(self, query_s: str, limit: int = 100, offset: int = 0, sources: tuple[str, ...] = ()) -> Any:
        """NAVIGATOR `NavigatorApi.search_entities` (raw_query=False)."""
        default_entity_types, entity_types = self._get_types_from_sources(sources)
        query_s = (query_s.replace("{", "\\{").replace("}", "\\}").replace("(", "\\(").replace(")", "\\)")
                   .replace("[", "\\[").replace("]", "\\]"))
        query_clauses: list[str] = []
        user_filters: list[str] = []
        source_type_filter: list[str] = []
        sql = "sql" in sources or "hive" in sources or "impala" in sources
        for term in query_s.strip().split():
            if ":" not in term:
                if sql and "." in term:
                    parent, term = term.rsplit(".", 1)
                    user_filters.append('parentPath:"/%s"' % parent.replace(".", "/"))
                query_clauses.append(self._get_boosted_term(term))
            else:
                name, val = term.split(":")
                if val:
                    if name == "type":
                        term = "%s:%s" % (name, val.upper().strip("*"))
                        default_entity_types = entity_types
                    user_filters.append(term + "*")
        filter_query = "*"
        if query_clauses:
            filter_query = "OR".join("(%s)" % clause for clause in query_clauses)
        user_filter_clause = "AND ".join("(%s)" % f for f in user_filters) or "*"
        source_filter_clause = "OR".join("(%s:%s)" % ("type", entity_type) for entity_type in default_entity_types)
        if "s3" in sources:
            source_type_filter.append("sourceType:s3")
        elif sql:
            source_type_filter.append("sourceType:HIVE OR sourceType:IMPALA")
        filter_query = "%s AND (%s) AND (%s)" % (filter_query, user_filter_clause, source_filter_clause)
        if source_type_filter:
            filter_query += " AND (%s)" % "OR ".join(source_type_filter)
        source_ids = self.cluster_source_ids()
        if source_ids:
            filter_query = source_ids + "(" + filter_query + ")"
        self.params.update({"query": filter_query, "offset": offset, "limit": self.FETCH_SIZE_SEARCH})
        response = self._get("entities", self.params)
        return response[:limit]  # list(islice(self._secure_results(response), limit)), no Sentry

    def _get_types_from_sources(self, sources: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """NAVIGATOR `NavigatorApi._get_types_from_sources`."""
        default_entity_types = entity_types = ("DATABASE", "TABLE", "PARTITION", "FIELD", "FILE", "VIEW", "S3BUCKET",
                                               "OPERATION", "DIRECTORY")
        if "sql" in sources or "hive" in sources or "impala" in sources:
            entity_types = ("TABLE", "VIEW", "DATABASE", "PARTITION", "FIELD")
            default_entity_types = ("TABLE", "VIEW")
        elif "hdfs" in sources:
            entity_types = default_entity_types = ("FILE", "DIRECTORY")
        elif "s3" in sources:
            entity_types = ("FILE", "DIRECTORY", "S3BUCKET")
            default_entity_types = ("DIRECTORY", "S3BUCKET")
        return default_entity_types, entity_types

    def _get_boosted_term(self, term: str) -> str:
        """NAVIGATOR `NavigatorApi._get_boosted_term`."""
        return "AND".join([
            "(%s)" % "OR".join("(%s:%s*^%s)" % (field, term, weight) for field, weight in self.DEFAULT_SEARCH_FIELDS),
            "(%s)" % "OR".join("(%s:[* TO *])" % field for field, _weight in self.DEFAULT_SEARCH_FIELDS)])

    def find_entity(self, source_type: str, type: str, name: str, **filters: str) -> Any:  # noqa: A002 - Hue's name
        """NAVIGATOR `NavigatorApi.find_entity`."""
        query_filters = {"sourceType": source_type, "originalName": name, "deleted": "false", **filters}
        filter_query = "AND".join("(%s:%s)" % (key, value) for key, value in query_filters.items())
        filter_query = "%(type)s AND %(filter_query)s" % {
            "type": "(type:%s)" % "TABLE OR type:VIEW" if type == "TABLE" else type, "filter_query": filter_query}
        source_ids = self.cluster_source_ids()
        if source_ids:
            filter_query = source_ids + "(" + filter_query + ")"
        self.params.update({"query": filter_query, "offset": 0, "limit": 2})
        response = self._get("entities", self.params)
        # no result: CatalogEntityDoesNotExistException; several: CatalogApiException
        assert len(response) == 1, (filter_query, response)
        return response[0]

    def get_entity(self, entity_id: str) -> Any:
        """NAVIGATOR `NavigatorApi.get_entity`."""
        return self._get("entities/%s" % entity_id, self.params)

    def get_lineage(self, entity_id: str) -> Any:
        """NAVIGATOR `NavigatorApi.get_lineage`."""
        self.params.update({"entityIds": entity_id})
        return self._get("lineage", self.params)

    # BASE `Api`: the calls Hue's catalog makes through find_entity

    def get_database(self, name: str) -> Any:
        return self.find_entity(source_type="HIVE", type="DATABASE", name=name)

    def get_table(self, database_name: str, table_name: str) -> Any:
        return self.find_entity(source_type="HIVE", type="TABLE", name=table_name, parentPath=r"\/%s" % database_name)

    def get_field(self, database_name: str, table_name: str, field_name: str) -> Any:
        return self.find_entity(source_type="HIVE", type="FIELD", name=field_name,
                                parentPath=r"\/%s\/%s" % (database_name, table_name))

    def _clean_path(self, path: str) -> tuple[str, str]:
        """NAVIGATOR `_clean_path`, `_escape_slashes`."""
        return path.rstrip("/").split("/")[-1], path.rstrip("/").replace("/", r"\/")

    def get_directory(self, path: str) -> Any:
        name, escaped = self._clean_path(path)
        return self.find_entity(source_type="HDFS", type="DIRECTORY", name=name, fileSystemPath=escaped)

    def get_file(self, path: str) -> Any:
        name, escaped = self._clean_path(path)
        return self.find_entity(source_type="HDFS", type="FILE", name=name, fileSystemPath=escaped)


    #: NAVIGATOR `search_entities_interactive`'s field list `f` (its keys, in order): the facets it
    #: offers for the last term typed
    INTERACTIVE_FIELDS = ("outputFormat", "name", "lastModified", "sourceType", "parentPath", "lastAccessed", "type",
                          "sourceId", "partitionColNames", "serDeName", "created", "fileSystemPath", "compressed",
                          "clusteredByColNames", "originalName", "owner", "extractorRunId", "userEntity",
                          "sortByColNames", "inputFormat", "serDeLibName", "originalDescription", "lastModifiedBy")
    #: metadata/conf.py `NAVIGATOR.FETCH_SIZE_SEARCH_INTERACTIVE` default
    FETCH_SIZE_SEARCH_INTERACTIVE = 450

    def search_entities_interactive(self, query_s: str | None = None, limit: int = 100, offset: int = 0,
                                    facetFields: list[str] | None = None, facetPrefix: str | None = None,  # noqa: N803
                                    filterQueries: list[str] | None = None,  # noqa: N803
                                    sources: tuple[str, ...] = ()) -> Any:
        """NAVIGATOR `NavigatorApi.search_entities_interactive` (facetRanges and
        firstClassEntitiesOnly None, as CATALOG_API passes them), then the islice to `limit`."""
        pagination = {"offset": offset, "limit": self.FETCH_SIZE_SEARCH_INTERACTIVE}
        auto_field_facets = ["tags", "type", *self.INTERACTIVE_FIELDS]
        query_s = (query_s.strip() if query_s else "") + "*"
        query_s = query_s.replace("tag:", "tags:").replace("classification:", "tags:")
        last_query_term = query_s.split()[-1]
        if last_query_term and last_query_term != "*":
            last_query_term = last_query_term.rstrip("*")
            fname = last_query_term.split(":")[0] if ":" in last_query_term else last_query_term
            auto_field_facets = [f for f in auto_field_facets if f.startswith(fname)]
        facetFields = facetFields or auto_field_facets[:5]  # noqa: N806
        entity_types: tuple[str, ...] = ()
        fq_type: tuple[str, ...] = ()
        filterQueries = [] if filterQueries is None else filterQueries  # noqa: N806
        if sources:
            default_entity_types, entity_types = self._get_types_from_sources(sources)
            if "sql" in sources or "hive" in sources or "impala" in sources:
                fq_type = default_entity_types
                filterQueries.append("sourceType:HIVE OR sourceType:IMPALA")
            elif "hdfs" in sources:
                fq_type = entity_types
            elif "s3" in sources:
                fq_type = default_entity_types
                filterQueries.append("sourceType:s3")
            if query_s.strip().endswith("type:*"):
                fq_type = entity_types
        query: list[str] = []
        for term in query_s.strip().split():
            if ":" not in term:
                query.append(self._get_boosted_term(term))
            else:
                name, val = term.split(":")
                if val:
                    if name == "type":
                        term = "%s:%s" % (name, val.upper())
                        fq_type = entity_types
                    if name.lower() not in ["type", "tags", "owner", "originalname", "originaldescription",
                                            "lastmodifiedby"]:
                        query.append("up_" + term)
                    else:
                        filterQueries.append(term)
        filterQueries.append("deleted:false")
        body: dict[str, Any] = {"query": " ".join(query) or "*"}
        if fq_type:
            filterQueries += ["{!tag=type} %s" % " OR ".join(["type:%s" % fq for fq in fq_type])]
        source_ids = self.cluster_source_ids()
        if source_ids:
            body["query"] = source_ids + "(" + body["query"] + ")"
        body["facetFields"] = facetFields or []
        if facetPrefix:
            body["facetPrefix"] = facetPrefix
        if filterQueries:
            body["filterQueries"] = filterQueries
        response = self._post("interactive/entities?limit=%(limit)s&offset=%(offset)s" % pagination, json.dumps(body))
        response["results"] = response["results"][:limit]
        return response

    def suggest(self, prefix: str | None = None) -> Any:
        """NAVIGATOR `NavigatorApi.suggest`: the prefix in the path, no other parameter."""
        return self._get("interactive/suggestions?query=%s" % (prefix or "*"), None)


class HueRestException(Exception):
    def __init__(self, code: int, body: str) -> None:
        super().__init__(f"{code}: {body[:300]}")
        self.code = code


def sentry_key(result: Mapping[str, Any]) -> dict[str, str]:
    """NAVIGATOR `_secure_results.getkey`: what Hue reads of an entity to check Sentry privileges
    (the fields Hue's permission filter needs, with `apply_sentry_permissions` on)."""
    key: dict[str, str] = {}
    if result["type"] in ("TABLE", "VIEW"):
        key["db"] = result.get("parentPath", "") and result.get("parentPath", "").strip("/")
        key["table"] = result.get("originalName", "")
    elif result["type"] == "DATABASE":
        key["db"] = result.get("originalName", "")
    elif result["type"] == "FIELD":
        parents = result.get("parentPath", "").strip("/").split("/")
        if len(parents) == 2:
            key["db"], key["table"] = parents
            key["column"] = result.get("originalName", "")
    return key


@pytest.fixture
def hue(navigator_url: str) -> HueNavigatorApi:
    return HueNavigatorApi(navigator_url, USER, PASSWORD)


def test_hue_finds_databases_tables_columns_directories_and_files(hue: HueNavigatorApi,
                                                                  ids: Mapping[str, str]) -> None:
    """BASE get_database/get_table/get_field/get_directory/get_file, one NavigatorApi in a row."""
    database = hue.get_database(DB)
    table = hue.get_table(DB, "orders")
    column = hue.get_field(DB, "orders", "id")
    directory = hue.get_directory(DATA + "/")
    file = hue.get_file(f"{DATA}/part-00000.parquet")
    assert [e["identity"] for e in (database, table, column, directory, file)] == [
        ids["database"], ids["table"], ids["column id"], ids["directory"], ids["file"]]
    assert sentry_key(database) == {"db": DB}
    assert sentry_key(table) == {"db": DB, "table": "orders"}
    assert sentry_key(column) == {"db": DB, "table": "orders", "column": "id"}
    assert (directory["type"], file["type"], file["fileSystemPath"]) == ("DIRECTORY", "FILE",
                                                                         f"{DATA}/part-00000.parquet")
    # The requests as Hue sends them: its own query strings, unencoded but for iri_to_uri
    assert hue.requests[0] == iri_to_uri(
        f"{hue.api_url}/entities?query=DATABASE AND (sourceType:HIVE)AND(originalName:{DB})AND(deleted:false)"
        f"&offset=0&limit=2")
    assert hue.requests[1].endswith(iri_to_uri(f"AND(parentPath:\\/{DB})&offset=0&limit=2"))
    assert " " not in "".join(hue.requests) and "%5C/" in hue.requests[2]


def test_hue_search_entities_as_its_search_page_builds_it(hue: HueNavigatorApi, ids: Mapping[str, str]) -> None:
    """NAVIGATOR search_entities for what a user types in Hue's catalog search, then the fields
    CATALOG_API `_augment_highlighting` reads of each result."""
    # `db.table` typed with SQL sources: a parentPath filter and the boosted name
    found = hue.search_entities(f"{DB}.orders", sources=("hive",))
    assert [e["identity"] for e in found] == [ids["table"]]
    # `db.table.column`: the parentPath of the table; a `type:` filter widens the types Hue asks for
    columns = hue.search_entities(f"{DB}.orders.id type:field", sources=("sql",))
    assert ids["column id"] in {e["identity"] for e in columns}
    # no source: every default type; a `field:value` term is a filter (`owner:hive*`)
    described = hue.search_entities(f"{DB} owner:hive", sources=())
    assert [e["identity"] for e in described] == [ids["database"]]
    assert described[0]["originalDescription"] == "the orders data"  # the description Hue's results show
    for record in found + columns + described:
        # CATALOG_API `_augment_highlighting`: originalName, parentPath (None -> ''), sourceType,
        # tags (iterated when set), originalDescription, and `fname` fields of `fname:value` terms
        assert {"originalName", "parentPath", "sourceType", "tags", "originalDescription", "type"} <= set(record)
        assert record["tags"] is None or isinstance(record["tags"], list)
    table = next(e for e in found if e["identity"] == ids["table"])
    assert (table["parentPath"], table["originalName"], table["originalDescription"]) == (f"/{DB}", "orders",
                                                                                          "all orders")
    assert hue.requests[0].startswith(iri_to_uri(
        f"{hue.api_url}/entities?query=(((originalName:orders*^3)OR(originalDescription:orders*^1)OR(name:orders*^10)"))
    assert hue.requests[0].endswith("&offset=0&limit=450")


def test_hue_entity_and_lineage_with_the_parameters_earlier_calls_left(hue: HueNavigatorApi,
                                                                      ids: Mapping[str, str]) -> None:
    """CATALOG_API `get_lineage`: NavigatorApi.get_lineage(id), then get_entity(id), on an api whose
    `__params` still hold the last search (Hue sends them along: navd ignores what it does not
    take)."""
    hue.get_table(DB, "orders")  # an earlier call of the same api: leaves query, offset, limit behind
    lineage = hue.get_lineage(ids["sales.t"])
    entity = hue.get_entity(ids["sales.t"])
    assert "query=" in hue.requests[1] and hue.requests[1].endswith(f"&entityIds={ids['sales.t']}")
    assert "query=" in hue.requests[2] and "entityIds=" in hue.requests[2]
    assert entity["identity"] == ids["sales.t"] and entity["originalName"].upper() == "T"
    entities = {e["identity"]: e for e in lineage["entities"]}
    assert {ids["sales.s"], ids["ctas"], ids["sales.t"]} <= set(entities)
    assert entities[ids["ctas"]]["queryText"] == CTAS
    for e in lineage["entities"]:
        # CATALOG_API get_lineage reads e.get('outputs'), e.get('inputs'), e.get('queryText'):
        # navd's entities carry queryText; Navigator's `inputs`/`outputs` lists it does not have
        assert {"identity", "type", "sourceType", "originalName"} <= set(e)
    flows = {(r["endpoint1Ids"][0], r["endpoint2Ids"][0]) for r in lineage["relations"] if r["type"] == "DATA_FLOW"}
    assert {(ids["sales.s"], ids["ctas"]), (ids["ctas"], ids["sales.t"])} <= flows


def test_hue_without_or_with_wrong_credentials_is_refused(navigator_url: str, ids: Mapping[str, str]) -> None:
    """HTTP_CLIENT raises RestException for >= 300; NAVIGATOR maps code 401 to CatalogAuthException."""
    for password in (None, "wrong"):
        hue = HueNavigatorApi(navigator_url, USER, password or "")
        if password is None:
            hue.session.auth = None
        with pytest.raises(HueRestException) as refused:
            hue.get_entity(ids["table"])
        assert refused.value.code == 401


# -- the Navigator SDK ------------------------------------------------------------------------------

class SdkClient:
    """NavApiCient's requests (Spring RestTemplate with Jackson): `getApiUrl`, `getAuthHeaders`,
    `getAllSources`, `getEntityBatch`."""

    def __init__(self, navigator_url: str, username: str, password: str, api_version: int = 9) -> None:
        # NavApiCient.getApiUrl: joinUrlPath(navigatorUrl, "/api/v" + apiVersion); navigator_url is
        # the server's root (the SDK's config `navigator_url`)
        self.api_url = navigator_url.removesuffix("/api") + f"/api/v{api_version}"
        # NavApiCient.getAuthHeaders: the Authorization header built by hand, on every request;
        # RestTemplate's Accept lists what its Jackson converter reads
        credentials = base64.b64encode(f"{username}:{password}".encode()).decode()
        self.headers = {"Authorization": "Basic " + credentials,
                        "Accept": "application/json, application/*+json"}
        self.requests: list[tuple[str, str, Any]] = []

    def get_all_sources(self) -> list[dict[str, Any]]:
        """NavApiCient.getAllSources: GET entities?query=type:SOURCE, read as SourceAttrs[]."""
        url = f"{self.api_url}/entities?query=type:SOURCE"  # entitiesQueryUrl
        self.requests.append(("GET", url, None))
        response = requests.get(url, headers=self.headers, timeout=120)
        assert response.status_code == 200, response.text
        return response.json()

    def get_entity_batch(self, query: str, limit: int, cursor_mark: str) -> dict[str, Any]:
        """NavApiCient.getEntityBatch: POST entities/paging with the MetadataQuery as Jackson writes it
        (its getters' order: query, limit, cursorMark), read as an EntityResultsBatch."""
        url = f"{self.api_url}/entities/paging"  # pagingUrl("entities")
        body = json.dumps({"query": query, "limit": limit, "cursorMark": cursor_mark}, separators=(",", ":"))
        self.requests.append(("POST", url, json.loads(body)))
        response = requests.post(url, data=body.encode(), timeout=120,
                                 headers={**self.headers, "Content-Type": "application/json;charset=UTF-8"})
        assert response.status_code == 200, response.text
        batch = response.json()
        assert isinstance(batch["results"], list) and isinstance(batch["cursorMark"], str)
        return batch


def extract_entities(client: SdkClient, entities_query: str, limit: int, run_ids: list[str]) -> list[dict[str, Any]]:
    """MetadataExtractor.extractMetadata(startMarker, endMarker, entitiesQuery, ...).getEntities(),
    iterated to the end as MetadataResultIterator does."""
    client.get_all_sources()  # extractMetadata: getNavMarker(true) for the marker it returns
    results: list[dict[str, Any]] = []
    # MetadataResultIterator: run ids in partitions of MAX_QUERY_PARTITION_SIZE = 800, each
    # partition's query `userQuery AND extractorRunId:(a OR b ...)` (QueryUtils.conjoinSolrQueries,
    # buildConjunctiveClause), cursorMark back to "*" for each
    for start in range(0, len(run_ids), 800):
        query = f"{entities_query} AND extractorRunId:({' OR '.join(run_ids[start:start + 800])})"
        cursor_mark = "*"
        while True:  # getNextBatch, then next(): a batch shorter than `limit` is the last one
            batch = client.get_entity_batch(query, limit, cursor_mark)
            results += batch["results"]
            cursor_mark = batch["cursorMark"]
            if len(batch["results"]) < limit:
                break
    return results


@pytest.fixture
def sdk(navigator_url: str) -> SdkClient:
    return SdkClient(navigator_url, USER, PASSWORD)


def _ours(sdk: SdkClient) -> list[str]:
    """Every entity of this module's extractor run, by identity, in one big page."""
    batch = sdk.get_entity_batch(f'extractorRunId:"{RUN}"', 1000, "*")
    assert 0 < len(batch["results"]) < 1000
    return sorted(e["identity"] for e in batch["results"])


@pytest.mark.parametrize("limit", [1, 3, "all"])
def test_sdk_incremental_extraction_pages_to_the_end(sdk: SdkClient, ids: Mapping[str, str],
                                                     limit: int | str) -> None:
    """IncrementalExtraction with markers {SOURCE: 1} .. {SOURCE: 1}: the run ids `SOURCE##1`
    (MetadataExtractor.getExtractorQueryList), MetadataExtractor.DEFAULT_QUERY `identity:*`. With
    `all`, the one page is exactly full: the iterator asks once more and gets an empty page."""
    everything = _ours(sdk)
    size = len(everything) if limit == "all" else int(limit)
    sdk.requests.clear()
    extracted = extract_entities(sdk, "identity:*", size, [f"{SOURCE}##1"])
    assert [e["identity"] for e in extracted] == everything  # each once, in identity order
    assert {i for label, i in ids.items() if label != "openlineage job"} <= set(everything)  # of this run
    pages = [body for method, _url, body in sdk.requests if method == "POST"]
    assert len(pages) == len(everything) // size + 1  # the last page short (or empty)
    assert pages[0] == {"query": f"identity:* AND extractorRunId:({SOURCE}##1)", "limit": size, "cursorMark": "*"}
    assert all(page["cursorMark"] != "*" for page in pages[1:])
    # what the SDK's consumers read of each result (FilteredExtraction.getFirstResult and the like)
    assert all({"identity", "sourceType", "type", "extractorRunId"} <= set(e) for e in extracted)


@pytest.mark.parametrize(("entities_query", "expected"), [
    ("sourceType:HIVE AND type:DATABASE", {"database"}),
    ("sourceType:HIVE AND type:TABLE", {"table", "sales.s", "sales.t"}),
    ("sourceType:HIVE AND type:FIELD AND originalName:id", {"column id"}),
    ("sourceType:HDFS", {"directory", "file"}),
    ("sourceType:SPARK AND type:OPERATION_EXECUTION", {"ctas"}),
])
def test_sdk_filtered_extraction_queries(sdk: SdkClient, ids: Mapping[str, str], entities_query: str,
                                         expected: set[str]) -> None:
    """The SDK's FilteredExtraction example's entity queries (examples/.../FilteredExtraction.java),
    run as incremental extractions of this module's run."""
    extracted = extract_entities(sdk, entities_query, 100, [f"{SOURCE}##1"])
    labels = {identity: label for label, identity in ids.items()}
    assert {labels[e["identity"]] for e in extracted if e["identity"] in labels} == expected
    kinds = {(e["sourceType"], e["type"]) for e in extracted}
    assert len(kinds) >= 1 and all(e["extractorRunId"] == RUN for e in extracted)


# -- Hue: the search box, suggestions, the cluster's sources, the lineage panel -----------------------

def catalog_api_interactive(query_s: str, response: dict[str, Any]) -> dict[str, Any]:
    """What CATALOG_API `search_entities_interactive` does with the answer before Hue's search box
    shows it: every facet's `(value, count)` pairs with a count > 0, sorted by count (an empty facet
    dropped when the query names a field), and `_augment_highlighting`'s reads of each result."""
    for fname, fvalues in list(response["facets"].items()):
        pairs = sorted([(k, v) for k, v in fvalues.items() if v > 0], key=lambda n: n[1], reverse=True)
        response["facets"][fname] = dict(pairs)
        if ":" in query_s and not response["facets"][fname]:
            del response["facets"][fname]
    for record in response["results"]:
        name = record.get("originalName", "") or ""
        parent = record.get("parentPath") or ""
        if parent and record.get("sourceType", "") != "S3":
            parent = (parent.replace("/", ".") + ".").lstrip(".")
        record["hue_name"] = parent + name
        if record.get("tags"):
            assert isinstance(record["tags"], list)
        for term in query_s.split():
            if ":" in term:
                record.get(term.split(":", 1)[0], "")
        record.get("originalDescription", "")
    return response


def test_hue_search_box_finds_tables_with_facets(hue: HueNavigatorApi, ids: Mapping[str, str]) -> None:
    """CATALOG_API search_entities_interactive -> NAVIGATOR search_entities_interactive for what a
    user types in Hue's search box: `orders` with SQL sources (the `{!tag=type}` filter of TABLE and
    VIEW), then `owner:et` (a field term: a filter, the facets of fields starting `owner`)."""
    answer = catalog_api_interactive("orders", hue.search_entities_interactive("orders", limit=25, sources=("sql",)))
    sent = hue.sent_bodies[-1]
    assert sent["filterQueries"] == ["sourceType:HIVE OR sourceType:IMPALA", "deleted:false",
                                     "{!tag=type} type:TABLE OR type:VIEW"]
    assert sent["facetFields"] == []  # no field starts with `orders`: Hue asks for no facet
    found = {e["identity"]: e for e in answer["results"]}
    assert ids["table"] in found and ids["column id"] not in found  # the type filter: tables and views only
    assert answer["totalMatched"] >= 1 and isinstance(answer["totalMatched"], int)
    table = found[ids["table"]]
    assert table["hue_name"] == f"{DB}.orders" and table["sourceType"] == "HIVE"
    assert answer["facets"] == {}
    assert hue.requests[-1] == f"{hue.api_url}/interactive/entities?limit=450&offset=0"

    typed = catalog_api_interactive("owner:et", hue.search_entities_interactive("owner:et", limit=25, sources=()))
    assert typed["facets"]["owner"].get("etl", 0) >= 2  # the table and the file
    assert all(e["owner"].startswith("et") for e in typed["results"])
    assert {ids["table"], ids["file"]} <= {e["identity"] for e in
                                          hue.search_entities_interactive("owner:etl", limit=450)["results"]}


def test_hue_search_box_type_facet_counts_every_type(hue: HueNavigatorApi, ids: Mapping[str, str]) -> None:
    """Hue tags its type filter `type` and asks for the `type` facet: the facet counts the types the
    filter left out too (the filter is excluded from it), so the box can offer them."""
    answer = hue.search_entities_interactive(f"{DB}", limit=25, facetFields=["type", "tags"], sources=("sql",))
    assert ids["database"] not in {e["identity"] for e in answer["results"]}  # filtered: tables and views
    assert answer["facets"]["type"].get("DATABASE", 0) >= 1  # counted all the same
    assert isinstance(answer["facets"]["tags"], dict)  # Hue's list_tags reads data['facets']['tags']


def test_hue_tags_are_a_facet_and_a_filter_of_the_search_box(navigator_url: str, hue: HueNavigatorApi,
                                                               ids: Mapping[str, str]) -> None:
    """A tag Hue's catalog added (NAVIGATOR add_tags: PUT entities/{id} with the entity's fields as
    read, as an editor) is in the `tags` facet CATALOG_API list_tags reads (search_entities_interactive
    with facetFields ['tags'] and the prefix typed), and `tag:<name>` typed in the box finds it."""
    tag = "pii" + uuid.uuid4().hex[:8]
    editor = HueNavigatorApi(navigator_url, EDITOR, EDITOR_PASSWORD)
    entity = editor.get_entity(ids["table"])
    body = {"name": entity["name"], "description": entity["description"], "properties": entity["properties"] or {},
            "customProperties": entity["customProperties"] or {}, "tags": (entity["tags"] or []) + [tag]}
    edited = editor.session.put(editor._url(f"entities/{ids['table']}", None), data=json.dumps(body),
                                headers={"Content-Type": "application/json"}, timeout=60)
    assert edited.status_code == 200, edited.text
    listed = hue.search_entities_interactive(facetFields=["tags"], facetPrefix=tag[:6], limit=25)
    assert listed["facets"]["tags"] == {tag: 1}
    found = catalog_api_interactive(f"tag:{tag}", hue.search_entities_interactive(f"tag:{tag}", limit=25))
    assert [e["identity"] for e in found["results"]] == [ids["table"]] and found["results"][0]["tags"] == [tag]
    assert hue.sent_bodies[-1]["filterQueries"][0] == f"tags:{tag}*"


def test_hue_suggestions(hue: HueNavigatorApi) -> None:
    """CATALOG_API suggest -> NAVIGATOR suggest(prefix): GET interactive/suggestions?query=<prefix>;
    Hue hands the answer to the page as it is."""
    answer = hue.suggest(DB[:8])
    assert DB in answer["suggestions"] and all(s.startswith(DB[:8]) for s in answer["suggestions"])
    assert hue.requests[-1] == f"{hue.api_url}/interactive/suggestions?query={DB[:8]}"
    assert isinstance(hue.suggest()["suggestions"], list)  # no prefix: `*`


def test_hue_with_a_cluster_name_finds_its_sources_then_its_entities(hue: HueNavigatorApi,
                                                                     ids: Mapping[str, str]) -> None:
    """With Hue's `navigator.hue_server_name` set (navd's `[cluster] name`): GET
    entities?query=clusterName:"<name>"&limit=200 answers the cluster's SOURCE entities, and every
    later query prefixed with their `sourceId`s still finds what it finds without."""
    hue.hue_server_name = CLUSTER
    sources = hue._get("entities", {"query": 'clusterName:"%s"' % CLUSTER, "limit": 200})
    assert sources and all(s["type"] == "SOURCE" and s["clusterName"] == CLUSTER for s in sources)
    assert hue.requests[-1] == iri_to_uri(f'{hue.api_url}/entities?query=clusterName:"{CLUSTER}"&limit=200')
    table = hue.get_table(DB, "orders")
    assert table["identity"] == ids["table"]
    assert hue.requests[-1].split("query=")[1].startswith(iri_to_uri("(sourceId:"))
    assert ids["table"] in {e["identity"] for e in hue.search_entities(f"{DB}.orders", sources=("hive",))}
    assert ids["table"] in {e["identity"] for e in hue.search_entities_interactive("orders", sources=("sql",))["results"]}
    # another cluster's name: no sources, so Hue's `sourceId:0 AND` finds nothing
    hue.hue_server_name = "not-" + CLUSTER
    with pytest.raises(AssertionError):  # find_entity: no result (Hue's CatalogEntityDoesNotExistException)
        hue.get_table(DB, "orders")


def catalog_api_lineage(hue: HueNavigatorApi, entity_id: str) -> dict[str, Any]:
    """CATALOG_API `get_lineage`: the operation whose `outputs` are exactly the entity's upper-cased
    name gives the inputs and the source query; the operations reading it give the targets."""
    lineage = hue.get_lineage(entity_id)
    entity_name = hue.get_entity(entity_id)["originalName"].upper()
    response: dict[str, Any] = {"inputs": [], "source_query": "", "target_queries": [], "targets": []}
    parent = next((e for e in lineage["entities"] if e.get("outputs", []) == [entity_name]), None)
    if parent:
        response["inputs"] = [i.lower() for i in parent["inputs"]]
        response["source_query"] = parent.get("queryText", "")
    children = [e for e in lineage["entities"] if e.get("inputs") is not None and entity_name in e.get("inputs")]
    response["target_queries"] = [c["queryText"] for c in children if c.get("queryText") is not None]
    response["targets"] = [t.lower() for c in children if c.get("outputs") is not None for t in c["outputs"]]
    return response


def test_hue_lineage_panel_shows_inputs_query_and_targets(hue: HueNavigatorApi, ids: Mapping[str, str]) -> None:
    """The CTAS `sales.t` from `sales.s`: the panel of `t` shows its input `s` and the CTAS; the
    panel of `s` shows the CTAS reading it and its target `t`."""
    assert catalog_api_lineage(hue, ids["sales.t"]) == {"inputs": ["s"], "source_query": CTAS,
                                                        "target_queries": [], "targets": []}
    upstream = catalog_api_lineage(hue, ids["sales.s"])
    assert (upstream["target_queries"], upstream["targets"]) == ([CTAS], ["t"])


# -- the SDK: sources, relations -------------------------------------------------------------------

def test_sdk_sources_and_every_entity_s_source(sdk: SdkClient, ids: Mapping[str, str]) -> None:
    """NavApiCient.getAllSources (GET entities?query=type:SOURCE as SourceAttrs[]), loadAllSources
    (a source without sourceUrl skipped, by type), getHMSSource / getHiveSource; then the SDK's
    findEntity-style query by `sourceId` of the metastore finds the table."""
    sources = sdk.get_all_sources()
    sdk_types = {"NONE", "MAPREDUCE", "YARN", "HDFS", "HIVE", "PIG", "IMPALA", "OOZIE", "SDK", "SQOOP", "SPARK",
                 "S3", "CLUSTER"}  # the SDK's SourceType enum: Jackson refuses any other value
    assert all(s["type"] == "SOURCE" and s["sourceType"] in sdk_types and s["sourceUrl"] for s in sources)
    by_type: dict[str, list[dict[str, Any]]] = {}
    for source in sources:
        by_type.setdefault(source["sourceType"], []).append(source)
    hive = by_type["HIVE"]
    # getHMSSource: several Hive sources -> the one with sourceTemplate true; one -> that one
    hms = [s for s in hive if s.get("sourceTemplate") is True] if len(hive) > 1 else hive
    assert hms
    ours = next(s for s in hms if s["clusterName"] == CLUSTER)
    assert ours["originalName"] == CLUSTER and ours["sourceTemplate"] is True
    assert {"SPARK", "HDFS"} <= set(by_type)
    hdfs = next(s for s in by_type["HDFS"] if s["sourceUrl"] == DEFAULT_FS.rstrip("/"))
    batch = sdk.get_entity_batch(f"+(sourceId:{ours['identity']}) +(originalName:orders) +(extractorRunId:\"{RUN}\")",
                                 10, "*")
    assert [e["identity"] for e in batch["results"]] == [ids["table"]]
    table = batch["results"][0]
    assert (table["sourceId"], table["metaClassName"], table["packageName"]) == (ours["identity"], "hv_table", "nav")
    assert isinstance(table["technicalProperties"], dict)
    files = sdk.get_entity_batch(f'sourceId:{hdfs["identity"]} AND extractorRunId:"{RUN}"', 10, "*")["results"]
    assert {ids["directory"], ids["file"]} <= {e["identity"] for e in files}
    assert all(e["sourceId"] == hdfs["identity"] for e in files)
    # an OpenLineage namespace: an SDK source (the SDK's enum has no OPENLINEAGE)
    namespace = next(s for s in by_type["SDK"] if s["originalName"] == JOB_NAMESPACE)
    assert namespace["navdSourceType"] == "OPENLINEAGE"
    jobs = sdk.get_entity_batch(f"sourceId:{namespace['identity']} AND type:OPERATION", 1000, "*")["results"]
    assert ids["openlineage job"] in {e["identity"] for e in jobs}
    assert all(e["sourceId"] == namespace["identity"] for e in jobs)


def test_sdk_relations_extraction_pages_to_the_end(sdk: SdkClient, ids: Mapping[str, str]) -> None:
    """MetadataExtractor's relations: MetadataIterable(RELATIONS, relationsQuery `identity:*`) with
    the run ids, paged by MetadataResultIterator over NavApiCient.getRelationBatch (POST
    relations/paging, a RelationResultsBatch) until a short page."""
    relations: list[dict[str, Any]] = []
    query = f"identity:* AND extractorRunId:({SOURCE}##1)"
    cursor_mark = "*"
    pages = 0
    while True:
        url = f"{sdk.api_url}/relations/paging"  # NavApiCient.pagingUrl("relations")
        body = json.dumps({"query": query, "limit": 2, "cursorMark": cursor_mark}, separators=(",", ":"))
        response = requests.post(url, data=body.encode(), timeout=120,
                                 headers={**sdk.headers, "Content-Type": "application/json;charset=UTF-8"})
        assert response.status_code == 200, response.text
        batch = response.json()
        relations += batch["results"]
        cursor_mark = batch["cursorMark"]
        pages += 1
        if len(batch["results"]) < 2:
            break
    assert pages == len(relations) // 2 + 1 and len({r["identity"] for r in relations}) == len(relations)
    flows = {(r["endpoint1Ids"][0], r["endpoint2Ids"][0]) for r in relations if r["type"] == "DATA_FLOW"}
    assert {(ids["sales.s"], ids["ctas"]), (ids["ctas"], ids["sales.t"])} <= flows
    # the Relation attributes the SDK's model names (model/.../relations/Relation.java)
    assert all({"identity", "type", "endpoint1Ids", "endpoint2Ids", "endpoint1SourceType", "endpoint2SourceType",
                "endpoint1Type", "endpoint2Type", "userSpecified"} <= set(r) for r in relations)
    listed = requests.get(f"{sdk.api_url}/relations", headers=sdk.headers, timeout=120,
                          params={"query": f'type:data_flow AND extractorRunId:"{RUN}"', "limit": 100}).json()
    assert {(r["endpoint1Ids"][0], r["endpoint2Ids"][0]) for r in listed} == flows


def test_version_models_and_lineage_options(sdk: SdkClient, navigator_url: str, ids: Mapping[str, str]) -> None:
    """GET /api/version; GET models (the MetadataModel's fields); the lineage options Navigator
    documents: `length` honoured, `offset` other than 0 and `mergeDeletedEntities=true` refused."""
    version = requests.get(f"{navigator_url}/version", headers=sdk.headers, timeout=60)
    assert (version.status_code, version.text) == (200, "v19")
    model = requests.get(f"{sdk.api_url}/models", headers=sdk.headers, timeout=60).json()
    assert {"packages", "classes", "namespaces", "properties", "mappings"} <= set(model)
    assert {"hv_table", "hv_view", "hv_column"} <= {c["name"] for c in model["classes"]}

    def lineage(**params: Any) -> requests.Response:
        return requests.get(f"{sdk.api_url}/lineage", headers=sdk.headers, timeout=60,
                            params={"entityIds": ids["sales.t"], **params})

    # t <- CTAS <- s <- file: `s` is one hop upstream (through the execution), the file two
    near = {e["identity"] for e in lineage(length=1).json()["entities"]}
    far = {e["identity"] for e in lineage().json()["entities"]}
    assert {ids["ctas"], ids["sales.s"]} <= near and ids["file"] not in near
    assert ids["file"] in far
    assert lineage(offset=0, mergeDeletedEntities="false").status_code == 200
    for params, named in (({"offset": 5}, "offset"), ({"mergeDeletedEntities": "true"}, "mergeDeletedEntities"),
                          ({"length": 0}, "length")):
        refused = lineage(**params)
        assert refused.status_code == 400 and refused.json()["parameter"] == named, refused.text


def test_searches_sent_as_post_need_a_user_and_json(navigator_url: str) -> None:
    """POST interactive/entities and relations/paging are reads: a viewer may (the clients' user is
    one), no credentials is 401, a body that is not JSON is 415 naming Content-Type."""
    base = navigator_url + "/v9"
    for path, body in (("/interactive/entities", {"query": "*", "facetFields": ["type"]}),
                       ("/relations/paging", {"query": "*:*", "limit": 1, "cursorMark": "*"})):
        assert requests.post(base + path, json=body, auth=(USER, PASSWORD), timeout=60).status_code == 200
        assert requests.post(base + path, json=body, timeout=60).status_code == 401
        refused = requests.post(base + path, data=json.dumps(body), auth=(USER, PASSWORD), timeout=60,
                                headers={"Content-Type": "text/plain"})
        assert refused.status_code == 415 and refused.json()["parameter"] == "Content-Type"
    bad = requests.post(base + "/interactive/entities", json={"query": "{!join from=a to=b}x"},
                        auth=(USER, PASSWORD), timeout=60)
    assert bad.status_code == 400 and bad.json()["parameter"] == "query"
    tagged = requests.post(base + "/interactive/entities", json={"filterQueries": ["{!join from=a}x"]},
                           auth=(USER, PASSWORD), timeout=60)
    assert tagged.status_code == 400 and tagged.json()["parameter"] == "filterQueries"


def test_a_new_source_shows_once_it_is_indexed(sdk: SdkClient, index: SolrIndex, ids: Mapping[str, str]) -> None:
    """The server keeps the sources of an index generation: a nameservice first indexed after a
    client listed the sources is a source at the next listing."""
    before = {s["sourceUrl"] for s in sdk.get_all_sources()}
    nameservice = f"hdfs://ns{uuid.uuid4().hex[:8]}"
    assert nameservice not in before
    writer = IndexWriter(index)
    writer.write_all(records_for(entry_from_webhdfs("/data", _status("new", "DIRECTORY", 0, "755")), nameservice,
                                 f"{SOURCE}##2"))
    assert writer.close()
    index.commit("elements", soft=True)
    after = {s["sourceUrl"] for s in sdk.get_all_sources()}
    assert after == before | {nameservice}

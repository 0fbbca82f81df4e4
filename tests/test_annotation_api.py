"""Annotations over HTTP on a real `navd serve` (basic auth: a viewer and an editor) over the
session Solr, and from the `navd` command: Hue's tag, description and property edits replayed
request by request as its Navigator client sends them (PUT entities/{id}, read from cloudera/hue
desktop/libs/metadata/src/metadata/catalog/navigator_client.py: `update_entity` re-sends `name`,
`description`, `properties`, `customProperties` as `get_entity` read them, plus the keys the
call changes; `add_tags`, `delete_tags`, `update_properties` build on it), navd's own PATCH and
history, a viewer's 403 naming the role, bad input as one line naming the field."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from requests.auth import HTTPBasicAuth

from conftest import NavdRunner, serve_on_free_port, serve_with_users
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, EntityRef, SourceType
from navd.server.roles import Role
from navd.solr.server import EmbeddedSolr

CLUSTER = "c" + uuid.uuid4().hex[:10]
DB = "db_" + uuid.uuid4().hex[:10]
PASSWORDS = {"vera": "vera password 1", "eddie": "eddie password 1"}
JSON = {"Content-Type": "application/json"}


def _table(name: str) -> Element:
    database = EntityRef(SourceType.HIVE, f"{DB}@{CLUSTER}", ElementType.DATABASE)
    return Element(SourceType.HIVE, ElementType.TABLE, f"{DB}.{name}@{CLUSTER}", name, parent=database,
                   description=f"the {name} data", properties={"tblproperty.tier": "gold"})


@pytest.fixture(scope="module")
def tables(index: SolrIndex) -> dict[str, str]:
    elements = [_table("orders"), _table("customers")]
    writer = IndexWriter(index)
    writer.write_all(elements)
    assert writer.close(60)
    index.commit("elements", soft=True)
    return {e.name: e.identity for e in elements}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr,
           tables: dict[str, str]) -> Iterator[str]:
    users = {"vera": (PASSWORDS["vera"], Role.VIEWER), "eddie": (PASSWORDS["eddie"], Role.EDITOR)}
    with serve_with_users(tmp_path_factory.mktemp("annotation-api"), solr_server, users, cluster=CLUSTER) as server:
        yield server.url


def session(user: str) -> requests.Session:
    s = requests.Session()
    s.auth = HTTPBasicAuth(user, PASSWORDS[user])
    return s


class HueEdits:
    """NAVIGATOR `NavigatorApi`'s edits, as they go over the wire (api_url + '/v9')."""

    def __init__(self, url: str, user: str) -> None:
        self.api = f"{url}/api/v9"
        self.session = session(user)
        # what an earlier search left in Hue's one parameter dict, sent along with every call
        self.params = {"query": "originalName:orders", "offset": "0", "limit": "100"}

    def get_entity(self, entity_id: str) -> Any:
        answer = self.session.get(f"{self.api}/entities/{entity_id}", params=self.params, timeout=60)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def update_entity(self, entity: dict[str, Any], **metadata: Any) -> requests.Response:
        # the entity's user-managed fields as read, `or {}` for the two maps, then the call's keys
        properties = {"name": entity["name"], "description": entity["description"],
                      "properties": entity["properties"] or {}, "customProperties": entity["customProperties"] or {}}
        properties.update(metadata)
        return self.session.put(f"{self.api}/entities/{entity['identity']}", params=self.params,
                                data=json.dumps(properties), headers=JSON, allow_redirects=True, timeout=60)

    def add_tags(self, entity_id: str, tags: list[str]) -> requests.Response:
        entity = self.get_entity(entity_id)
        new_tags = entity["tags"] or []
        new_tags.extend(tags)
        return self.update_entity(entity, tags=new_tags)

    def delete_tags(self, entity_id: str, tags: list[str]) -> requests.Response:
        entity = self.get_entity(entity_id)
        new_tags = entity["tags"] or []
        for tag in tags:
            if tag in new_tags:
                new_tags.remove(tag)
        return self.update_entity(entity, tags=new_tags)

    def update_properties(self, entity_id: str, properties: dict[str, Any],
                          modified_custom_metadata: dict[str, str] | None = None) -> requests.Response:
        entity = self.get_entity(entity_id)
        if modified_custom_metadata:
            properties["properties"] = entity["properties"] or {}
            properties["properties"].update(modified_custom_metadata)
        return self.update_entity(entity, **properties)


def test_hues_edits_replayed_as_it_sends_them(served: str, tables: dict[str, str]) -> None:
    hue = HueEdits(served, "eddie")
    orders = tables["orders"]
    assert hue.add_tags(orders, ["pii", "finance"]).status_code == 200
    assert hue.update_properties(orders, {"description": "inputs of the churn model"}).status_code == 200
    answer = hue.update_properties(orders, {}, modified_custom_metadata={"owner": "bob"})
    assert answer.status_code == 200, answer.text
    assert hue.delete_tags(orders, ["finance"]).status_code == 200
    entity = hue.get_entity(orders)
    assert (entity["tags"], entity["description"], entity["properties"], entity["name"]) == \
        (["pii"], "inputs of the churn model", {"owner": "bob"}, None)
    # what the metastore said stays apart: Hue re-sending `properties` never turns it into a person's
    assert entity["technicalProperties"] == {"tblproperty.tier": "gold"}
    assert entity["originalDescription"] == "the orders data"
    # Hue's search finds it by tag and by description (Navigator's fields)
    found = hue.session.get(f"{hue.api}/entities", params={"query": "tags:pii AND description:*churn*"},
                            timeout=60).json()
    assert [e["identity"] for e in found] == [orders]

    history = session("eddie").get(f"{served}/api/annotations/history", params={"entity": f"{DB}.orders"},
                                   timeout=60).json()
    assert [(c["field"], c["actor"], c["before"], c["after"]) for c in history["changes"]] == [
        ("tags", "eddie", [], ["finance", "pii"]),
        ("description", "eddie", None, "inputs of the churn model"),
        ("properties.owner", "eddie", None, "bob"),
        ("tags", "eddie", ["finance", "pii"], ["pii"])]


def test_navds_patch_and_read(served: str, tables: dict[str, str]) -> None:
    eddie = session("eddie")
    answer = eddie.patch(f"{served}/api/annotations", params={"entity": f"{DB}.customers"}, headers=JSON, timeout=60,
                         data=json.dumps({"addTags": ["gold"], "name": "Customers",
                                          "customProperties": {"sales": {"steward": "ann"}}}))
    assert answer.status_code == 200, answer.text
    assert (answer.json()["tags"], answer.json()["name"], answer.json()["customProperties"]) == \
        (["gold"], "Customers", {"sales": {"steward": "ann"}})
    read = session("vera").get(f"{served}/api/annotations", params={"entity": tables["customers"]}, timeout=60)
    assert read.status_code == 200 and read.json()["tags"] == ["gold"]
    shown = session("vera").get(f"{served}/api/entities/{DB}.customers", timeout=60).json()
    assert shown["annotations"]["name"] == "Customers"
    found = session("vera").get(f"{served}/api/entities", params={"query": f"tags:gold AND qualifiedName:{DB}.*"},
                                timeout=60).json()
    assert [d["qualifiedName"] for d in found["docs"]] == [f"{DB}.customers@{CLUSTER}"]


@pytest.mark.parametrize(("method", "path", "body"), [
    ("PATCH", "/api/annotations?entity={db}.orders", {"addTags": ["x"]}),
    ("PUT", "/api/v9/entities/{orders}", {"tags": ["x"]}),
])
def test_a_viewer_cannot_write_and_is_told_the_role(served: str, tables: dict[str, str], method: str, path: str,
                                                   body: dict[str, Any]) -> None:
    url = served + path.format(db=DB, orders=tables["orders"])
    answer = session("vera").request(method, url, data=json.dumps(body), headers=JSON, timeout=60)
    assert answer.status_code == 403
    assert answer.json()["needed_role"] == "editor" and "needs the editor role; vera has the viewer role" in \
        answer.json()["error"]


@pytest.mark.parametrize(("method", "path", "body", "status", "error"), [
    ("PATCH", "/api/annotations?entity={db}.orders", {"addTags": ["a:b"]}, 400, "tags: tag 'a:b': use letters"),
    ("PATCH", "/api/annotations?entity={db}.orders", {"properties": {"bad key": "v"}}, 400, "properties: key 'bad key'"),
    ("PATCH", "/api/annotations?entity={db}.orders", {"tagz": []}, 400, "tagz: not a key of an annotation edit"),
    ("PATCH", "/api/annotations?entity={db}.nothing", {"addTags": ["x"]}, 404, "no element with identity or"),
    ("PUT", "/api/v9/entities/{orders}", {"tags": "pii"}, 400, "tags: a list of strings, not str"),
    ("PUT", "/api/v9/entities/{orders}", {"customProperties": {"1x": {"k": "v"}}}, 400,
     "customProperties: '1x.k' is not NAMESPACE.KEY"),
    ("PUT", "/api/v9/entities/nosuchid", {"tags": ["x"]}, 404, "no entity with identity"),
    # two identities in one: Solr's real-time get splits ids at commas, this names no entity
    ("PUT", "/api/v9/entities/{orders},{customers}", {"tags": ["x"]}, 404, "no entity with identity"),
    ("PUT", "/api/v7/entities/{orders}", {"tags": ["x"]}, 404, "version: v7 is not served"),
    ("PUT", "/api/v9/entities/{orders}", "not an object", 400, "body: must be a JSON object"),
])
def test_bad_writes_are_one_line_naming_the_field(served: str, tables: dict[str, str], method: str, path: str,
                                                 body: Any, status: int, error: str) -> None:
    url = served + path.format(db=DB, orders=tables["orders"], customers=tables["customers"])
    answer = session("eddie").request(method, url, data=json.dumps(body), headers=JSON, timeout=60)
    assert answer.status_code == status, answer.text
    assert answer.json()["error"].startswith(error) and "\n" not in answer.json()["error"]


def test_without_auth_on_loopback_edits_work_as_before_roles(tmp_path: Path, solr_server: EmbeddedSolr,
                                                             tables: dict[str, str]) -> None:
    with serve_on_free_port(tmp_path, solr_server) as server:
        answer = requests.patch(f"{server.url}/api/annotations", params={"entity": tables["orders"]}, headers=JSON,
                                data=json.dumps({"addTags": ["open"]}), timeout=60)
        assert answer.status_code == 200, answer.text
        history = requests.get(f"{server.url}/api/annotations/history", params={"entity": tables["orders"]},
                               timeout=60).json()
        assert history["changes"][-1]["actor"] == "anonymous"
        # a write from another site's page is refused, as every write is
        foreign = requests.patch(f"{server.url}/api/annotations", params={"entity": tables["orders"]},
                                 headers={**JSON, "Origin": "https://evil.example"},
                                 data=json.dumps({"addTags": ["x"]}), timeout=60)
        assert foreign.status_code == 403


def test_the_cli_annotates_shows_and_lists_the_history(navd: NavdRunner, tables: dict[str, str]) -> None:
    entity = f"{DB}.customers@{CLUSTER}"
    done = navd("annotate", entity, "--tag", "cli", "--description", "from the command line",
                "--property", "owner=carol", "--property", "sales.region=emea")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{entity}: tags, description, properties.owner, properties.sales.region"
    custom = navd("annotate", entity, "--custom", "--property", "hr.contact=dan", "--format", "json")
    assert custom.returncode == 0 and json.loads(custom.stdout)["customProperties"]["hr"] == {"contact": "dan"}
    shown = navd("entity", entity, "--json")
    assert json.loads(shown.stdout)["annotations"]["description"] == "from the command line"
    history = navd("entity", entity, "--history")
    assert history.returncode == 0 and "description: null -> \"from the command line\"" in history.stdout
    removed = navd("annotate", entity, "--untag", "cli", "--unset-property", "owner", "--description", "")
    assert removed.returncode == 0 and removed.stdout.strip() == f"{entity}: tags, description, properties.owner"


@pytest.mark.parametrize(("args", "error"), [
    (["--property", "novalue"], "--property: 'novalue' is not KEY=VALUE"),
    (["--tag", "a:b"], "annotate: tags: tag 'a:b'"),
    (["--custom", "--property", "nons=x"], "annotate: customProperties: 'nons' is not NAMESPACE.KEY"),
    ([], "annotate: nothing to change"),
])
def test_the_cli_refuses_bad_input_in_one_line(navd: NavdRunner, tables: dict[str, str], args: list[str],
                                               error: str) -> None:
    refused = navd("annotate", f"{DB}.orders@{CLUSTER}", *args)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()] and error in refused.stderr

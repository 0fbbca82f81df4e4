"""Unknown query parameters on every route of navd's server: a 400 naming the parameter and the
ones the route takes (navd/server/parameters.py), table-driven over the app's own OpenAPI
description, so a route added later is covered without a line here. And the parameters known
clients send although a route has no use for them (Hue's Navigator client, the Navigator SDK,
Marquez's web UI and marquez-python): accepted (docs/api-parameters.md).

In-process (FastAPI's TestClient on the app `navd serve` runs) over the session Solr; the
clients' own code runs against a real `navd serve` in test_navigator_clients.py and
test_openlineage_export.py.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from navd.config import DaemonConfig, NavdConfig, OpenLineageConfig, ServerConfig, SolrConfig
from navd.index.client import SolrIndex
from navd.openlineage.intake import Intake
from navd.server.app import create_app
from navd.server.roles import Role
from navd.server.users import add_user
from synthetic_sample import index_sample

BOGUS = "no_such_parameter"
#: a Host the server answers under (navd/server/request_checks.py)
BASE_URL = "http://127.0.0.1"
USER, PASSWORD = "ada", "lovelace analytical engine"
#: a value for each path parameter of the routes (what it names does not matter: the check comes
#: before the route reads anything)
PATH_VALUES = {"version": "9"}
#: the lineage page's routes: not in the OpenAPI description (they serve files, not the API)
PAGE_ROUTES = [("get", "/"), ("get", "/static/page.js")]


@dataclasses.dataclass(frozen=True)
class Served:
    client: TestClient
    app: FastAPI
    cluster: str


@pytest.fixture(scope="module")
def served(index: SolrIndex, solr_config: SolrConfig, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The app as `navd serve` makes it with basic auth and the OpenLineage intake on, so every
    router navd has is mounted."""
    tmp = tmp_path_factory.mktemp("parameters")
    cluster = f"params{os.getpid()}"
    index_sample(index, cluster)
    users = tmp / "users"
    add_user(users, USER, PASSWORD, Role.ADMIN)  # every route, writes included, reaches the check
    config = dataclasses.replace(NavdConfig(), solr=solr_config, daemon=DaemonConfig(state_dir=str(tmp / "state")),
                                 server=ServerConfig(auth="basic", users_file=str(users)),
                                 openlineage=OpenLineageConfig(enabled=True))
    config = dataclasses.replace(config, cluster=dataclasses.replace(config.cluster, name=cluster))
    app = create_app(config, index, Intake(config, index))
    with TestClient(app, base_url=BASE_URL) as client:
        client.auth = (USER, PASSWORD)
        yield Served(client, app, cluster)


def operations(app: FastAPI) -> list[tuple[str, str, list[str]]]:
    """(method, path template, query parameters) of every operation the OpenAPI description has."""
    found = []
    for path, methods in app.openapi()["paths"].items():
        for method, operation in methods.items():
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]
            found.append((method, path, names))
    return found


def concrete(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m[1], "x"), path)


def test_every_route_answers_an_unknown_parameter_with_a_400_naming_it_and_the_accepted_ones(served: Served) -> None:
    table = operations(served.app)
    covered = {(method, path) for method, path, _ in table}
    # every API navd serves is in the table: navd's, Navigator's, Marquez's, the intake, the probes
    assert {("get", "/api/entities"), ("get", "/api/lineage"), ("get", "/api/v{version}/entities"),
            ("get", "/api/v{version}/lineage"), ("post", "/api/v{version}/entities/paging"),
            ("get", "/api/v1/lineage"), ("get", "/api/v1/column-lineage"), ("post", "/api/v1/lineage"),
            ("get", "/healthz"), ("get", "/metrics"), ("put", "/api/sensitivity/tags")} <= covered
    refused = []
    for method, path, accepted in [*table, *((m, p, []) for m, p in PAGE_ROUTES)]:
        answer = served.client.request(method.upper(), concrete(path), params={BOGUS: "1"})
        body = answer.json() if answer.headers.get("content-type", "").startswith("application/json") else {}
        if (answer.status_code, body.get("parameter"), body.get("accepted")) != (400, BOGUS, sorted(accepted)) \
                or not body["error"].startswith(f"{BOGUS}: not a parameter of {method.upper()} "):
            refused.append((method, path, answer.status_code, answer.text[:300]))
    assert refused == [], refused


def test_a_misspelt_parameter_is_refused_not_taken_for_the_default(served: Served) -> None:
    """`?q=` for `?query=` answered 200 with every document in the index."""
    answer = served.client.get("/api/entities", params={"q": "country_revenue"})
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "q: not a parameter of GET /api/entities (it takes cursor, query, rows)",
        "parameter": "q", "accepted": ["cursor", "query", "rows"]}
    # several: all named, the first to blame; a declared one beside them changes nothing
    several = served.client.get("/api/lineage", params={"entity": "x", "dept": "2", "direction": "up", "colums": "1"})
    assert several.status_code == 400 and several.json()["parameter"] == "dept"
    assert several.json()["error"].startswith("dept, colums: not parameters of GET /api/lineage (it takes as_of, columns, ")


def test_the_check_comes_after_authentication(served: Served) -> None:
    """No credentials: 401, whatever the parameters (the server fails closed first)."""
    with TestClient(served.app, base_url=BASE_URL) as anonymous:
        answer = anonymous.get("/api/entities", params={BOGUS: "1"})
    assert answer.status_code == 401, answer.text


def test_a_name_no_client_would_send_is_named_within_a_line(served: Served) -> None:
    long = "p" * 5000
    answer = served.client.get("/api/status", params={long: "1"})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error.startswith("'" + "p" * 80 + "'...: not a parameter of GET /api/status") and len(error) < 300
    assert answer.json()["parameter"] == "p" * 80


# -- what known clients send ------------------------------------------------------------------

def _entity(served: Served, name: str) -> str:
    answer = served.client.get("/api/entities/" + name)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["identity"])


def _hue_calls(identity: str) -> list[tuple[str, dict[str, Any]]]:
    """Hue's NavigatorApi keeps one dict of parameters for every call (never cleared): after a
    search and a lineage call, each request carries query, offset, limit and entityIds."""
    carried = {"query": "(type:TABLE OR type:VIEW) AND (deleted:false)", "offset": "0", "limit": "2",
               "entityIds": identity}
    return [("/api/v9/entities", carried), (f"/api/v9/entities/{identity}", carried), ("/api/v9/lineage", carried)]


def test_hue_s_carried_parameters_are_accepted_on_every_navigator_route(served: Served) -> None:
    identity = _entity(served, f"sales.daily_revenue@{served.cluster}")
    for path, params in _hue_calls(identity):
        answer = served.client.get(path, params=params)
        assert answer.status_code == 200, (path, answer.text)
    lineage = served.client.get("/api/v9/lineage", params={"entityIds": identity, "query": "ignored", "limit": "1"})
    assert identity in {e["identity"] for e in lineage.json()["entities"]}, "the carried ones change nothing"


@pytest.mark.parametrize(("path", "params"), [
    # the Navigator SDK: NavApiCient.getAllSources, findEntity
    ("/api/v9/entities", {"query": "type:SOURCE"}),
    # Navigator's own lineage options (its v1 API): `length` honoured, `offset` 0 and
    # `mergeDeletedEntities` false served (other values: a 400 naming them), the last one ignored
    ("/api/v9/lineage", {"entityIds": "IDENTITY", "length": "2", "offset": "0", "mergeDeletedEntities": "false",
                         "removeUsageEndPointTypes": "true"}),
    # Hue's search box: NavigatorApi.suggest
    ("/api/v9/interactive/suggestions", {"query": "daily"}),
])
def test_navigator_client_parameters_are_accepted(served: Served, path: str, params: dict[str, str]) -> None:
    identity = _entity(served, f"sales.daily_revenue@{served.cluster}")
    answer = served.client.get(path, params={k: v.replace("IDENTITY", identity) for k, v in params.items()})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(("path", "params"), [
    # Marquez's web UI (web/src/store/requests/lineage.ts, columnlineage.ts): with a trailing
    # slash on lineage, which the server redirects
    ("/api/v1/lineage/", {"nodeId": "dataset:ns:name", "depth": "20"}),
    ("/api/v1/column-lineage", {"nodeId": "dataset:ns:name", "depth": "20", "withDownstream": "true"}),
    # marquez-python's get_column_lineage_by_*: its defaults as Python prints them
    ("/api/v1/column-lineage", {"nodeId": "datasetField:ns:name:field", "depth": "20", "withDownstream": "False"}),
])
def test_marquez_client_parameters_are_accepted(served: Served, path: str, params: dict[str, str]) -> None:
    """A node navd does not hold: 404 naming nodeId, so the route ran with what the client sent."""
    answer = served.client.get(path, params=params)
    assert answer.status_code == 404, answer.text
    assert answer.json()["parameter"] == "nodeId"


def test_the_openapi_description_lists_the_accepted_client_parameters(served: Served) -> None:
    by_route = {(m, p): names for m, p, names in operations(served.app)}
    assert set(by_route[("get", "/api/v{version}/entities/{identity}")]) == {"query", "offset", "limit", "entityIds"}
    assert set(by_route[("get", "/api/v{version}/lineage")]) == {
        "entityIds", "query", "offset", "limit", "length", "mergeDeletedEntities", "removeUsageEndPointTypes", "asOf"}


def test_the_documented_parameters_are_the_server_s(served: Served) -> None:
    """docs/api-parameters.md's table lists routes with their query parameters as the server takes
    them; the Navigator and Marquez routes, whose clients send more than they use, are in it."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "api-parameters.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+ /\S*)` \| ([^|]*) \|", doc, re.MULTILINE))
    documented = {route: sorted(re.findall(r"`(\w+)`", names)) for route, names in rows.items()}
    served_routes = {f"{m.upper()} {p}": sorted(names) for m, p, names in operations(served.app)}
    assert {route: served_routes.get(route) for route in documented} == documented
    assert {"GET /api/v{version}/entities", "GET /api/v{version}/entities/{identity}", "GET /api/v{version}/lineage",
            "GET /api/v1/lineage", "GET /api/v1/column-lineage", "POST /api/v1/lineage"} <= set(documented)

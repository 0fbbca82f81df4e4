"""The HTTP server as users run it: a real `navd serve` (uvicorn) subprocess on a free port over
the session Solr; `navd run` with `[server] enabled = true`. Every endpoint, cursor paging to the
end, 404/400 naming the parameter, basic auth with a user `navd server add-user` made, TLS with a
certificate made here, and the refusals at start."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from conftest import (NAVD, START_SECONDS, NavdRunner, Served, serve_on_free_port, serving, start_navd, stop_navd,
                      write_server_config)
from navd.config import NavdConfig, ServerConfig, SolrConfig
from navd.index.client import IndexWriter, SolrIndex, serialise
from navd.model import Element, ElementType, Relation, RelationType, SourceType, operation_qualified_name
from navd.openlineage.mapping import MappingSettings, map_event
from navd.process import pid_runs
from navd.runs import Run
from navd.solr.server import EmbeddedSolr, free_port
from net import listening_addresses
from openlineage.client.event_v2 import RunState
from openlineage_events import as_json, job_run
from synthetic_sample import index_sample
from test_daemon import Notifications

@pytest.fixture(scope="module")
def cluster(index: SolrIndex) -> str:
    """The sample pipeline under a cluster name of this module's own (its Hive names end in it)."""
    name = f"srv{os.getpid()}"
    index_sample(index, name)
    return name


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, cluster: str) -> Iterator[Served]:
    """`navd serve` on loopback without auth, as a user starts it."""
    with serve_on_free_port(tmp_path_factory.mktemp("serve"), solr_server,
                            "max_rows = 50\nmax_depth = 10\nmax_nodes = 500",
                            f'[cluster]\nname = "{cluster}"\n') as served:
        yield served


# -- every endpoint -------------------------------------------------------------------------------

def test_server_listens_on_loopback_only(served: Served) -> None:
    assert listening_addresses(int(served.url.rsplit(":", 1)[1])) == {"127.0.0.1"}


def test_entity_and_lineage_are_the_cli_documents(served: Served, navd: NavdRunner, cluster: str) -> None:
    name = f"sales.daily_revenue@{cluster}"
    cli = navd("entity", name, "--json")
    assert cli.returncode == 0, cli.stderr
    answer = served.get("/api/entities/" + quote(name, safe=""))
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert answer.json() == json.loads(cli.stdout)
    by_identity = served.get("/api/entities/" + answer.json()["identity"])
    assert by_identity.json()["qualifiedName"] == name
    # a path qualifiedName with its slashes left as they are in the URL
    directory = served.get("/api/entities/hdfs://nameservice1/data/raw/orders")
    assert directory.status_code == 200, directory.text
    assert directory.json()["type"] == "DIRECTORY"

    cli = navd("lineage", name, "--direction", "upstream", "--columns", "--operations", "--format", "json")
    assert cli.returncode == 0, cli.stderr
    graph = served.get("/api/lineage", params={"entity": name, "direction": "upstream", "columns": "true",
                                               "operations": "true"})
    assert graph.status_code == 200, graph.text
    assert graph.json() == json.loads(cli.stdout)
    assert any(node["qualifiedName"] == f"sales.orders@{cluster}" for node in graph.json()["nodes"])
    capped = served.get("/api/lineage", params={"entity": name, "columns": "true", "max_nodes": 2}).json()
    assert capped["truncated"] is True


def test_status_and_runs(served: Served, index: SolrIndex, navd: NavdRunner) -> None:
    component = f"extractor.srv{os.getpid()}"
    started = datetime(2026, 11, 1, 12, tzinfo=UTC)
    runs = [Run(f"{component}##{n}", component, started + timedelta(hours=n), counts={"elements": n})
            for n in range(3)]
    docs = [r.document("SUCCEEDED", ended=r.started + timedelta(minutes=5)) for r in runs[:2]]
    docs.append(runs[2].document("FAILED", ended=runs[2].started + timedelta(seconds=30), error="boom"))
    index.post_update("runs", serialise(docs))
    index.commit("runs", soft=True)

    status = served.get("/api/status")
    assert status.status_code == 200
    cli = navd("status", "--json")
    assert cli.returncode == 0, cli.stderr
    assert status.json() == json.loads(cli.stdout)
    assert status.json()["components"][component]["last_success"] == "2026-11-01T13:05:00Z"

    page = served.get("/api/runs", params={"component": component, "rows": 2}).json()
    assert page["numFound"] == 3 and [r["identity"] for r in page["runs"]] == [runs[2].run_id, runs[1].run_id]
    rest = served.get("/api/runs", params={"component": component, "rows": 2, "start": 2}).json()
    assert [r["identity"] for r in rest["runs"]] == [runs[0].run_id]

    metrics = served.get("/metrics")
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    mine = (("component", component),)
    assert samples[("navd_runs_total", mine)] == 3
    assert samples[("navd_run_failures_total", mine)] == 1
    assert samples[("navd_last_run_duration_seconds", mine)] == 30  # the FAILED run ended last
    assert samples[("navd_last_success_timestamp_seconds", mine)] == \
        (started + timedelta(hours=1, minutes=5)).timestamp()
    assert samples[("navd_solr_up", ())] == 1
    assert samples[("navd_index_documents", (("kind", "elements"),))] == status.json()["totals"]["elements"]
    # request latencies by route template, never by the entity asked for
    assert samples[("navd_http_request_duration_seconds_count",
                    (("method", "GET"), ("route", "/api/runs"), ("status", "200")))] == 2
    assert "daily_revenue" not in text


def test_navigators_api_is_served_next_to_navds(served: Served, cluster: str) -> None:
    """The Navigator-compatible routes (navd/server/navigator_routes.py) are mounted in the app
    `navd serve` runs, for every version from 9 to 19 and no other."""
    for version in (9, 19):
        found = served.get(f"/api/v{version}/entities", params={"query": "originalName:daily_revenue AND type:TABLE",
                                                                "limit": 10})
        assert found.status_code == 200, found.text
        names = {e["originalName"] for e in found.json()}
        assert names >= {"daily_revenue"}
    assert served.get("/api/v8/entities", params={"query": "*:*"}).status_code == 404


def test_probes_and_openapi(served: Served) -> None:
    assert served.get("/healthz").json() == {"status": "ok"}
    assert served.get("/readyz").json() == {"status": "ready"}
    spec = served.get("/openapi.json").json()
    assert {"/api/entities", "/api/entities/{name}", "/api/lineage", "/api/status", "/api/runs", "/metrics",
            "/healthz", "/readyz"} <= set(spec["paths"])
    assert spec["components"]["schemas"]["ErrorBody"]["required"] == ["error", "parameter"]
    assert "400" in spec["paths"]["/api/lineage"]["get"]["responses"]
    # The Swagger page would load its scripts from a CDN: off, as is ReDoc.
    assert served.get("/docs").status_code == 404 and served.get("/redoc").status_code == 404
    assert served.get("/nowhere").json() == {"error": "Not Found", "parameter": None}


def test_entities_pages_with_a_cursor_to_the_end(served: Served, index: SolrIndex, cluster: str) -> None:
    query = f"qualifiedName:*@{cluster}"
    expected = {d["identity"] for d in index.search("elements", query, rows=1000, fl="identity")["response"]["docs"]}
    assert len(expected) > 6
    seen: list[str] = []
    cursor = "*"
    pages = 0
    while cursor is not None:
        page = served.get("/api/entities", params={"query": query, "rows": 3, "cursor": cursor})
        assert page.status_code == 200, page.text
        body = page.json()
        assert body["numFound"] == len(expected)
        seen += [d["identity"] for d in body["docs"]]
        cursor = body["nextCursor"]
        pages += 1
        assert pages <= len(expected)  # a cursor that never ends fails here
    assert sorted(seen) == sorted(expected) and len(seen) == len(set(seen))
    # as `navd search --json` shows them: Solr's internals dropped
    assert not any(key.startswith("_") for key in served.get("/api/entities", params={"query": query}).json()["docs"][0])


def test_unknown_entity_is_404(served: Served, cluster: str) -> None:
    for path in (f"/api/entities/nope.nothing@{cluster}",):
        answer = served.get(path)
        assert answer.status_code == 404
        assert answer.json()["parameter"] == "name" and "nope.nothing" in answer.json()["error"]
    answer = served.get("/api/lineage", params={"entity": f"nope.nothing@{cluster}"})
    assert answer.status_code == 404 and answer.json()["parameter"] == "entity"


@pytest.mark.parametrize(("path", "params", "parameter"), [
    ("/api/entities", {"rows": 0}, "rows"),
    ("/api/entities", {"rows": 51}, "rows"),  # [server] max_rows = 50
    ("/api/entities", {"rows": "ten"}, "rows"),
    ("/api/entities", {"query": "{!join fromIndex=nav_relations from=id to=id}*:*"}, "query"),
    ("/api/entities", {"query": '_query_:"{!lucene}x"'}, "query"),
    ("/api/entities", {"query": "qualifiedName:(unbalanced"}, "query"),  # navd's parse
    ("/api/entities", {"query": "nosuchfield:x"}, "query"),  # Solr's own refusal
    ("/api/entities", {"cursor": "not-a-cursor"}, "cursor"),
    ("/api/lineage", {}, "entity"),
    ("/api/lineage", {"entity": "x", "depth": 0}, "depth"),
    ("/api/lineage", {"entity": "x", "depth": 11}, "depth"),  # [server] max_depth = 10
    ("/api/lineage", {"entity": "x", "max_nodes": 501}, "max_nodes"),
    ("/api/lineage", {"entity": "x", "direction": "sideways"}, "direction"),
    ("/api/lineage", {"entity": "x", "columns": "maybe"}, "columns"),
    ("/api/lineage", {"entity": "hdfs://h:99999/x"}, "entity"),  # a name no element can have
    ("/api/runs", {}, "component"),
    ("/api/executions", {}, "operation"),
    ("/api/executions", {"operation": "x", "rows": 51}, "rows"),
    ("/api/runs", {"component": "hdfs", "start": -1}, "start"),
])
def test_bad_parameters_are_400_naming_them(served: Served, path: str, params: dict[str, object],
                                            parameter: str) -> None:
    answer = served.get(path, params=params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["parameter"] == parameter and parameter in body["error"]
    assert set(body) == {"error", "parameter"} and "\n" not in body["error"] and "Traceback" not in answer.text


def test_writes_and_solr_handlers_are_not_routes(served: Served) -> None:
    for method, path in (("POST", "/api/entities"), ("DELETE", "/api/entities/x"), ("GET", "/solr/admin/cores"),
                         ("POST", "/update"), ("GET", "/api/entities/../../solr/nav_elements/update")):
        answer = requests.request(method, served.url + path, timeout=30)
        assert answer.status_code in (404, 405), (method, path, answer.status_code)
        assert answer.json()["parameter"] is None


def test_several_matches_are_300_with_the_candidates(served: Served, index: SolrIndex, unique: str) -> None:
    """One qualifiedName from two sources (two identities): the API lists both, never guesses."""
    name = f"{unique}.shared@c1"
    writer = IndexWriter(index)
    for source in (SourceType.HIVE, SourceType.IMPALA):
        writer.write(Element(source, ElementType.TABLE, name, name="shared"))
    assert writer.close()
    index.commit("elements", soft=True)
    answer = served.get("/api/entities/" + name)
    assert answer.status_code == 300
    body = answer.json()
    assert body["parameter"] == "name" and body["error"].startswith("name: ") and body["found"] == 2
    assert sorted(c["sourceType"] for c in body["candidates"]) == ["HIVE", "IMPALA"]
    graph = served.get("/api/lineage", params={"entity": name})  # lineage never guesses either
    assert graph.status_code == 300 and graph.json()["parameter"] == "entity"
    assert len(graph.json()["candidates"]) == 2


def test_an_operations_executions_newest_first_and_paged(served: Served, index: SolrIndex, unique: str,
                                                        cluster: str) -> None:
    """The run history the page shows on an operation: GET /api/executions, from the operation or
    one of its executions; another element type is a 400 naming `operation`."""
    template = Element(SourceType.SPARK, ElementType.OPERATION,
                       operation_qualified_name(SourceType.SPARK, f"{unique}_job"), name=f"{unique}_job")
    started = datetime(2026, 11, 1, 6, tzinfo=UTC)
    runs = [Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                    operation_qualified_name(SourceType.SPARK, f"application_{unique}_{n}", "1"),
                    name=f"{unique}_job run {n}", started=started + timedelta(days=n)) for n in range(3)]
    writer = IndexWriter(index)
    writer.write_all([template, *runs, *(Relation(RelationType.INSTANCE_OF, template.ref, r.ref) for r in runs)])
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core, soft=True)

    first = served.get("/api/executions", params={"operation": template.qualified_name, "rows": 2})
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["operation"] == template.identity and body["numFound"] == 3 and body["start"] == 0
    assert [e["identity"] for e in body["executions"]] == [runs[2].identity, runs[1].identity]
    rest = served.get("/api/executions", params={"operation": runs[0].identity, "rows": 2, "start": 2}).json()
    assert rest["operation"] == template.identity and [e["identity"] for e in rest["executions"]] == [runs[0].identity]
    table = served.get("/api/executions", params={"operation": f"sales.daily_revenue@{cluster}"})
    assert table.status_code == 400 and table.json()["parameter"] == "operation"
    assert "TABLE" in table.json()["error"]
    assert served.get("/api/executions", params={"operation": f"{unique}.none"}).status_code == 404


def test_names_as_people_type_them(served: Served, cluster: str) -> None:
    """The API finds what `navd entity` finds (navd/index/lookup.py): a Hive name without its
    cluster (the server's [cluster] name first) and a bare path (under any file system)."""
    table = served.get("/api/entities/sales.daily_revenue")
    assert table.status_code == 200, table.text
    assert table.json()["qualifiedName"] == f"sales.daily_revenue@{cluster}"
    directory = served.get("/api/entities//data/raw/orders")
    assert directory.status_code == 200, directory.text
    assert directory.json()["qualifiedName"] == "hdfs://nameservice1/data/raw/orders"
    graph = served.get("/api/lineage", params={"entity": "sales.daily_revenue", "direction": "upstream"})
    assert graph.status_code == 200 and any(n["qualifiedName"] == f"sales.orders@{cluster}"
                                            for n in graph.json()["nodes"])


# -- the documentation's curl examples, run -----------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
#: the pages whose examples users copy: the README and everything under docs/
DOC_PAGES = (REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")))


def documented_curl_commands() -> list[str]:
    """Every `curl` line of the documentation's sh blocks (continuation lines joined), as written,
    but the Kerberos client examples (`--negotiate`): they need a KDC and a ticket, and
    tests/test_server_kerberos.py runs the real `curl --negotiate -u :` against a real KDC."""
    commands = []
    for block in (b for page in DOC_PAGES for b in re.findall(r"```sh\n(.*?)```", page.read_text(), flags=re.S)):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("curl ") and "--negotiate" not in line:
                commands.append(line)
    return commands


#: the run of the Marquez examples of docs/sources/openlineage.md
DOCUMENTED_RUN_ID = "3f5e83fa-3480-44ff-99c5-ff943904e5e8"


def test_documented_curl_examples_answer_and_cover_every_endpoint(served: Served, cluster: str, index: SolrIndex,
                                                                   tmp_path: Path) -> None:
    """The documentation's examples (docs/operations/server.md, the Navigator-compatible API, taint,
    sensitivity, usage, OpenLineage), each run with the real curl against a real server, with its
    address and real names put in: each answers 2xx with JSON (or text where it says so). Every
    route of the OpenAPI description has one."""
    commands = documented_curl_commands()
    assert len(commands) >= 15, commands
    port = served.url.rsplit(":", 1)[1]
    [orders] = index.search("elements", f'qualifiedName:"sales.orders@{cluster}"', fl="identity")["response"]["docs"]
    first = served.get("/api/entities", params={"query": "originalName:*order*", "rows": 1}).json()
    assert first["nextCursor"], first
    # the OpenLineage job and run the Marquez examples name, as the intake's mapping writes them
    documented_run = as_json(job_run(DOCUMENTED_RUN_ID, "daily_load", RunState.COMPLETE))
    writer = IndexWriter(index)
    mapped = map_event(documented_run, "RunEvent", MappingSettings({}, cluster))
    writer.write_all([*mapped.records, *filter(None, [mapped.execution])])
    assert writer.close(60)
    index.commit("elements", soft=True)
    dataset = served.get("/api/v1/namespaces/hive:%2F%2Fmetastore:9083/datasets/sales.revenue")
    assert dataset.status_code == 200, dataset.text
    paths = []
    for command in commands:
        argv = shlex.split(command, comments=True)
        argv = [arg.replace("$N", served.url).replace("PORT", port).replace("IDENTITY", orders["identity"])
                .replace("@primary", f"@{cluster}").replace("cursor=AoE...", f"cursor={quote(first['nextCursor'])}")
                .replace("hive://primary:", f"hive://{cluster}:")  # Marquez's nodeIds (OpenLineage names)
                .replace("/versions/VERSION", f"/versions/{dataset.json()['currentVersion']}")
                for arg in argv]
        out = tmp_path / "body"
        done = subprocess.run([*argv, "--silent", "--show-error", "--output", str(out),
                               "--write-out", "%{http_code} %{content_type}"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (command, done.stderr)
        code, _, content_type = done.stdout.partition(" ")
        body = out.read_text()
        assert code.startswith("2"), (command, code, body)
        if code == "204":  # a write answered with no content (Atlas' classifications)
            assert not body, (command, body[:200])
        elif content_type.startswith("application/json"):
            json.loads(body)
        elif content_type.startswith("text/html"):  # the page: its own tests drive it in Chromium
            assert "<html" in body.lower(), (command, body[:200])
        else:
            assert content_type.startswith("text/plain") and body, (command, content_type)
        paths.append(urlsplit(next(arg for arg in argv if arg.startswith(served.url))).path)
    spec = served.get("/openapi.json").json()
    for route in [*spec["paths"], "/openapi.json"]:
        pattern = re.sub(r"\\\{(\w+)\\\}", lambda m: {"version": r"\d+", "name": r".+"}.get(m[1], r"[^/]+"),
                         re.escape(route))
        assert any(re.fullmatch(pattern, path) for path in paths), f"no curl example in the docs for {route}"


# -- auth and TLS ---------------------------------------------------------------------------------

def make_certificate(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    key.chmod(0o600)
    return cert, key


def test_basic_auth_over_tls_with_a_user_from_add_user(tmp_path: Path, solr_server: EmbeddedSolr,
                                                      cluster: str) -> None:
    cert, key = make_certificate(tmp_path)
    users = tmp_path / "users"
    port = free_port()
    config = write_server_config(tmp_path, solr_server, f'port = {port}\nauth = "basic"\nusers_file = "{users}"\n'
                                                 f'cert_file = "{cert}"\nkey_file = "{key}"')
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    added = subprocess.run([NAVD, "server", "add-user", "alice"], input="s3cret passphrase\n", env=env,
                           capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    assert oct(users.stat().st_mode & 0o777) == "0o600"
    assert "s3cret" not in users.read_text() and users.read_text().startswith("alice:scrypt$")
    bad_name = subprocess.run([NAVD, "server", "add-user", "a:b"], input="x\n", env=env, capture_output=True,
                              text=True, timeout=60)
    assert bad_name.returncode == 2 and len(bad_name.stderr.strip().splitlines()) == 1

    url = f"https://127.0.0.1:{port}"
    with serving(config, url, verify=str(cert)) as served:
        path = f"{url}/api/entities/{quote(f'sales.orders@{cluster}', safe='')}"
        refused = requests.get(path, verify=str(cert), timeout=30)
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Basic")
        assert refused.json()["error"] == "authentication required (HTTP basic)"
        wrong = requests.get(path, verify=str(cert), auth=("alice", "wrong"), timeout=30)
        assert wrong.status_code == 401
        assert requests.get(path, verify=str(cert), auth=("mallory", "s3cret passphrase"), timeout=30).status_code == 401
        assert requests.get(f"{url}/metrics", verify=str(cert), timeout=30).status_code == 401
        navigator = f"{url}/api/v9/entities"  # Navigator's API is behind the same login
        assert requests.get(navigator, verify=str(cert), timeout=30).status_code == 401
        assert requests.get(navigator, verify=str(cert), auth=("alice", "s3cret passphrase"), timeout=30,
                            params={"query": "originalName:orders", "limit": 5}).status_code == 200
        for page in (f"{url}/", f"{url}/static/page.js"):  # the lineage page too: the browser asks for the login
            refused = requests.get(page, verify=str(cert), timeout=30)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Basic")
            assert requests.get(page, verify=str(cert), auth=("alice", "s3cret passphrase"), timeout=30).status_code == 200
        accepted = requests.get(path, verify=str(cert), auth=("alice", "s3cret passphrase"), timeout=30)
        assert accepted.status_code == 200 and accepted.json()["qualifiedName"] == f"sales.orders@{cluster}"
        assert requests.get(path, verify=str(cert), auth=("alice", "s3cret"), timeout=30).status_code == 401
        # a changed password: the old one no longer logs in, whatever the server remembered
        subprocess.run([NAVD, "server", "add-user", "alice"], input="new passphrase\n", env=env, check=True,
                       capture_output=True, text=True, timeout=60)
        assert requests.get(path, verify=str(cert), auth=("alice", "s3cret passphrase"), timeout=30).status_code == 401
        assert requests.get(path, verify=str(cert), auth=("alice", "new passphrase"), timeout=30).status_code == 200
        # a user added while the server runs logs in without a restart
        subprocess.run([NAVD, "server", "add-user", "bob"], input="other password\n", env=env, check=True,
                       capture_output=True, text=True, timeout=60)
        assert requests.get(path, verify=str(cert), auth=("bob", "other password"), timeout=30).status_code == 200
        # a users file others may read is refused (fail closed), and the client is not told its path
        users.chmod(0o644)
        misconfigured = requests.get(path, verify=str(cert), auth=("bob", "other password"), timeout=30)
        users.chmod(0o600)
        assert misconfigured.status_code == 500
        assert misconfigured.json() == {"error": "the server is misconfigured (logged)", "parameter": None}
        # TLS only: the certificate is checked, plain HTTP gets no answer
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(f"{url}/healthz", timeout=30)
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=30)
    text = served.log.read_text()
    assert "s3cret" not in text and "authentication refused" in text


@pytest.mark.parametrize(("server", "expected"), [
    ('host = "0.0.0.0"', '[server] auth: "none" is allowed only on a loopback host'),
    ('host = "0.0.0.0"\nauth = "basic"', "[server] cert_file: a server on '0.0.0.0' (not loopback) needs TLS"),
    ('auth = "kerberos"', '[server] keytab: auth = "kerberos" needs the service keytab'),
    ('host = "0.0.0.0"\nauth = "kerberos"\nkeytab = "/k"', "[server] cert_file: a server on '0.0.0.0' (not loopback) needs TLS"),
    ('cert_file = "/nonexistent/cert.pem"', "[server] cert_file: TLS needs both cert_file and key_file"),
])
def test_unsafe_server_config_is_refused_at_start_with_one_line(tmp_path: Path, solr_server: EmbeddedSolr,
                                                                server: str, expected: str) -> None:
    config = write_server_config(tmp_path, solr_server, f"port = {free_port()}\n{server}")
    result = subprocess.run([NAVD, "serve"], env={**os.environ, "NAVD_CONFIG": str(config)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr


def test_serve_help_names_the_settings() -> None:
    result = subprocess.run([NAVD, "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())  # argparse wraps the text at the terminal's width
    for word in ("[server]", "host", "port", "allowed_hosts", "cert_file", "key_file", "auth", "users_file", "max_rows", "max_depth",
                 "max_nodes", "add-user", "127.0.0.1", "7187", "--background", "--host", "--port", "--auth",
                 "lineage page at /", "/api/lineage", "/api/v9/", "/healthz", "/metrics", "/openapi.json",
                 "navd server stop", "enabled", "navd run"):
        assert word in text, word
    assert "--run-dir" not in text  # the detached server's own marker, not for users


# -- inside navd run ------------------------------------------------------------------------------

def test_the_server_runs_inside_navd_run_and_is_ready_with_it(tmp_path: Path, solr_server: EmbeddedSolr,
                                                              cluster: str) -> None:
    port = free_port()
    config = write_server_config(tmp_path, solr_server, f"enabled = true\nport = {port}")
    notify = Notifications(Path(f"/tmp/navd-srv-{os.getpid()}-{time.monotonic_ns()}.sock"))
    log = tmp_path / "run.log"
    proc = start_navd(["run"], config, log, {"NOTIFY_SOCKET": str(notify.path)})
    try:
        notify.wait_for("READY=1", START_SECONDS)
        # READY came after the server listened: no waiting needed
        ready = next(m for m in notify.received if "READY=1" in m.split("\n"))
        assert f"server on http://127.0.0.1:{port}" in ready
        answer = requests.get(f"http://127.0.0.1:{port}/api/entities/{quote(f'sales.orders@{cluster}', safe='')}",
                              timeout=30)
        assert answer.status_code == 200 and answer.json()["originalName"] == "orders"
        assert requests.get(f"http://127.0.0.1:{port}/readyz", timeout=30).status_code == 200
    finally:
        code = stop_navd(proc)
        notify.close()
    assert code == 0, log.read_text()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5)


def entity_requests_counted(url: str, **kwargs: object) -> float:
    """How many GET /api/entities the app behind `url` answered 200 (its own metrics: a new app
    after a restart counts from 0)."""
    text = requests.get(url + "/metrics", timeout=30, **kwargs).text  # type: ignore[arg-type]
    key = (("method", "GET"), ("route", "/api/entities"), ("status", "200"))
    return next((s.value for family in text_string_to_metric_families(text) for s in family.samples
                 if s.name == "navd_http_request_duration_seconds_count" and tuple(sorted(s.labels.items())) == key),
                0.0)


def test_sighup_restarts_the_server_of_navd_run_only_when_its_config_changed(
        tmp_path: Path, solr_server: EmbeddedSolr, index: SolrIndex) -> None:
    first, second = free_port(), free_port()
    users = tmp_path / "users"
    subprocess.run([NAVD, "server", "add-user", "dana"], input="dana password 1\n", capture_output=True, text=True,
                   env={**os.environ, "NAVD_CONFIG": str(write_server_config(tmp_path, solr_server, f'users_file = "{users}"'))},
                   timeout=60, check=True)

    def configure(server: str, aliases: str = "") -> None:
        write_server_config(tmp_path, solr_server, f'enabled = true\nusers_file = "{users}"\n{server}',
                     f"[linker]\nfs_aliases = [{aliases}]\n")

    def reloaded(times: int) -> None:
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + START_SECONDS
        while sum(e.get("event") == "config reloaded" for e in events()) < times:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)

    def events() -> list[dict[str, object]]:
        return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]

    configure(f"port = {first}")
    config = tmp_path / "navd.toml"
    notify = Notifications(Path(f"/tmp/navd-hup-{os.getpid()}-{time.monotonic_ns()}.sock"))
    log = tmp_path / "run.log"
    proc = start_navd(["run"], config, log, {"NOTIFY_SOCKET": str(notify.path)})
    url = f"http://127.0.0.1:{first}"
    try:
        notify.wait_for("READY=1", START_SECONDS)
        for _ in range(3):
            assert requests.get(url + "/api/entities", params={"rows": 1}, timeout=30).status_code == 200
        assert entity_requests_counted(url) == 3

        # An unchanged [server] (another section changed): the same app keeps answering, and a
        # client asking all through the reload is never refused.
        answers: list[int] = []
        done = threading.Event()

        def ask() -> None:
            with requests.Session() as session:
                while not done.is_set():
                    answers.append(session.get(url + "/healthz", timeout=30).status_code)

        asker = threading.Thread(target=ask)
        asker.start()
        try:
            while len(answers) < 5:
                time.sleep(0.01)
            configure(f"port = {first}", aliases='"nn1.example.com:8020=hdfs://nameservice1"')
            reloaded(1)
            seen = len(answers)
            while len(answers) < seen + 5:
                time.sleep(0.01)
        finally:
            done.set()
            asker.join(60)
        assert set(answers) == {200} and len(answers) >= 10
        assert entity_requests_counted(url) == 3  # the same app: its request count goes on
        assert not [e for e in events() if "stopping the server" in str(e.get("event"))]

        # auth and a cap changed: a new server on the same port (the old one let go of it first)
        configure(f'port = {first}\nauth = "basic"\nmax_rows = 5')
        reloaded(2)
        assert requests.get(url + "/api/entities", timeout=30).status_code == 401
        capped = requests.get(url + "/api/entities", params={"rows": 6}, auth=("dana", "dana password 1"), timeout=30)
        assert capped.status_code == 400 and capped.json()["parameter"] == "rows" and "max_rows" in capped.json()["error"]
        assert entity_requests_counted(url, auth=("dana", "dana password 1")) == 0  # a new app

        # another port: the old one no longer answers
        configure(f"port = {second}")
        reloaded(3)
        with pytest.raises(requests.ConnectionError):
            requests.get(url + "/healthz", timeout=5)
        assert requests.get(f"http://127.0.0.1:{second}/healthz", timeout=30).status_code == 200
        assert any(f"server on http://127.0.0.1:{second}" in m for m in notify.received)

        # a new server that cannot start leaves none (fail closed), and says so once; the next
        # reload of a config that can start it does
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            busy = taken.getsockname()[1]
            configure(f"port = {busy}")
            reloaded(4)
            [failed] = [e for e in events() if e.get("level") == "error" and e.get("logger") == "navd.daemon"]
            assert str(failed["event"]).startswith("the reloaded [server] could not start, so no server runs "
                                                   f"(fail closed) until a reload starts it: [server] could not "
                                                   f"listen on http://127.0.0.1:{busy}")
            with pytest.raises(requests.ConnectionError):
                requests.get(f"http://127.0.0.1:{second}/healthz", timeout=5)
            assert any("server failed to start (see the log)" in m for m in notify.received)
        reloaded(5)  # the same file, its port free now
        assert requests.get(f"http://127.0.0.1:{busy}/healthz", timeout=30).status_code == 200
        assert proc.poll() is None
    finally:
        code = stop_navd(proc)
        notify.close()
    assert code == 0, log.read_text()[-3000:]
    assert "Traceback" not in log.read_text()


def test_navd_run_fails_closed_when_the_server_cannot_listen(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_server_config(tmp_path, solr_server, f"enabled = true\nport = {port}")
        result = subprocess.run([NAVD, "run"], env={**os.environ, "NAVD_CONFIG": str(config)},
                                capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"[server] could not listen on http://127.0.0.1:{port}" in result.stderr


# -- the app as a module extends it ---------------------------------------------------------------

def test_a_mounted_router_is_behind_auth_and_its_unexpected_error_is_a_logged_json_500(
        solr_config: SolrConfig, tmp_path: Path, log_stream: io.StringIO) -> None:
    """A module adds its routes with one `mount` line (as the Navigator-compatible API does). A bug
    in a route is logged with its traceback and answered as JSON that shows nothing of it."""
    import threading

    import uvicorn
    from fastapi import APIRouter

    from navd.server.app import create_app, mount
    from navd.server.users import add_user

    users = tmp_path / "users"
    add_user(users, "carol", "carol password")
    config = dataclasses.replace(NavdConfig(), solr=solr_config,
                                 server=ServerConfig(auth="basic", users_file=str(users)))
    extra = APIRouter()

    @extra.get("/entities")
    def broken() -> None:
        raise RuntimeError("secret internals at /opt/navd/x.py")

    with SolrIndex(solr_config) as index:
        app = create_app(config, index)
        mount(app, extra, prefix="/api/extra")
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + START_SECONDS
            while not server.started and time.monotonic() < deadline:
                time.sleep(0.05)
            url = f"http://127.0.0.1:{port}/api/extra/entities"
            assert requests.get(url, timeout=30).status_code == 401
            answer = requests.get(url, auth=("carol", "carol password"), timeout=30)
        finally:
            server.should_exit = True
            thread.join(30)
    assert answer.status_code == 500
    assert answer.json() == {"error": "internal server error (logged)", "parameter": None}
    logged = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    [failure] = [line for line in logged if line["event"].startswith("request failed with an unexpected error")]
    assert "secret internals" in failure["event"] and "RuntimeError" in failure["exception"]


def test_navd_run_with_nothing_enabled_names_the_sections_including_server(tmp_path: Path,
                                                                           solr_server: EmbeddedSolr) -> None:
    config = write_server_config(tmp_path, solr_server, "enabled = false")
    result = subprocess.run([NAVD, "run"], env={**os.environ, "NAVD_CONFIG": str(config)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "nothing to run: enable at least one of [hdfs]" in result.stderr and "[server]" in result.stderr


def test_without_solr_healthz_answers_readyz_is_503_and_requests_say_why(tmp_path: Path) -> None:
    port, nothing = free_port(), free_port()
    config = tmp_path / "navd.toml"
    config.write_text(f'[solr]\nurl = "http://127.0.0.1:{nothing}/solr"\n[logging]\nformat = "json"\n'
                      f"[server]\nport = {port}\n")
    url = f"http://127.0.0.1:{port}"
    with serving(config, url):
        ready = requests.get(url + "/readyz", timeout=30)
        assert ready.status_code == 503 and ready.json()["error"].startswith("not ready: Solr:")
        status = requests.get(url + "/api/status", timeout=30)
        assert status.status_code == 503 and "cannot reach Solr" in status.json()["error"]
        samples = {s.name: s.value for family in text_string_to_metric_families(
            requests.get(url + "/metrics", timeout=30).text) for s in family.samples}
        assert samples["navd_solr_up"] == 0


# -- navd serve --background, navd server status/stop ---------------------------------------------

def navd_command(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVD, *args], env={**os.environ, "NAVD_CONFIG": str(config)}, capture_output=True,
                          text=True, timeout=120)


def test_background_server_starts_once_answers_and_stops(tmp_path: Path, solr_server: EmbeddedSolr,
                                                         cluster: str) -> None:
    port = free_port()
    config = write_server_config(tmp_path, solr_server, f"port = {port}", f'[cluster]\nname = "{cluster}"\n')
    url = f"http://127.0.0.1:{port}"
    run_dir = tmp_path / "state" / "server"
    try:
        started = navd_command(config, "serve", "--background")
        assert started.returncode == 0, started.stderr
        # it returned once the server listens: no waiting here
        assert requests.get(url + "/healthz", timeout=30).json() == {"status": "ok"}
        answer = requests.get(f"{url}/api/entities/{quote(f'sales.orders@{cluster}', safe='')}", timeout=30)
        assert answer.status_code == 200 and answer.json()["originalName"] == "orders"
        pid = json.loads((run_dir / "navd-server.pid").read_text())["pid"]
        assert started.stdout.startswith(f"running: navd server on {url} (pid {pid}, log {run_dir / 'server.log'})")
        assert oct(run_dir.stat().st_mode & 0o777) == "0o700"
        assert {oct(f.stat().st_mode & 0o777) for f in run_dir.iterdir()} == {"0o600"}

        again = navd_command(config, "serve", "--background")
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip() == f"already running: navd server on {url} (pid {pid}, log {run_dir / 'server.log'})"
        status = navd_command(config, "server", "status")
        assert status.returncode == 0 and status.stdout.startswith(f"running: navd server on {url} (pid {pid},")
        # asked for a login or another port while one without runs: refused, never "already running"
        for other in (["--auth", "basic"], ["--port", str(free_port())]):
            refused = navd_command(config, "serve", "--background", *other)
            assert refused.returncode == 1 and refused.stderr.strip() == (
                f"navd: error: a navd server with other settings runs on {url} (auth none, Solr {solr_server.url}, "
                f"pid {pid}): stop it first with `navd server stop`")
    finally:
        stopped = navd_command(config, "server", "stop")
    assert stopped.returncode == 0 and stopped.stdout.strip() == f"stopped the navd server on {url} (pid {pid})"
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/healthz", timeout=5)
    assert not (run_dir / "navd-server.pid").exists()
    again = navd_command(config, "server", "stop")
    assert again.returncode == 0 and again.stdout.startswith("not running")
    status = navd_command(config, "server", "status")
    assert status.returncode == 3 and status.stdout.startswith("not running")
    log = (run_dir / "server.log").read_text()
    assert "Traceback" not in log and "Finished server process" in log


def test_background_server_killed_leaves_a_stale_pid_file_that_is_handled(tmp_path: Path,
                                                                          solr_server: EmbeddedSolr) -> None:
    port = free_port()
    config = write_server_config(tmp_path, solr_server, f"port = {port}")
    assert navd_command(config, "serve", "--background").returncode == 0
    pid_file = tmp_path / "state" / "server" / "navd-server.pid"
    pid = json.loads(pid_file.read_text())["pid"]
    os.kill(pid, signal.SIGKILL)
    while pid_runs(pid, "serve"):  # a zombie's command line is empty; init reaps it (its parent exited)
        time.sleep(0.05)
    status = navd_command(config, "server", "status")
    assert status.returncode == 3 and f"not running (stale pid file, pid {pid} is gone)" in status.stdout
    try:
        restarted = navd_command(config, "serve", "--background")
        assert restarted.returncode == 0 and restarted.stdout.startswith("running: "), restarted.stderr
        assert json.loads(pid_file.read_text())["pid"] != pid
        assert requests.get(f"http://127.0.0.1:{port}/healthz", timeout=30).status_code == 200
    finally:
        assert navd_command(config, "server", "stop").returncode == 0
    stale = json.dumps({"pid": pid, "url": "http://127.0.0.1:1"})
    pid_file.write_text(stale)  # a pid file left by a crash, its pid now anyone's
    stop = navd_command(config, "server", "stop")
    assert stop.returncode == 0 and stop.stdout.startswith("not running") and not pid_file.exists()


def test_background_server_on_a_taken_port_is_one_line(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_server_config(tmp_path, solr_server, f"port = {port}")
        result = navd_command(config, "serve", "--background")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip() == (f"navd: error: [server] port {port} on 127.0.0.1 is in use by another process "
                                     "(choose another with --port)")
    assert navd_command(config, "server", "status").returncode == 3


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
def test_tls_files_that_hold_no_certificate_are_one_line_naming_the_key(tmp_path: Path, solr_server: EmbeddedSolr,
                                                                        background: bool) -> None:
    """They exist, so the config loads; uvicorn would fail on them with a traceback."""
    cert, _ = make_certificate(tmp_path)
    (tmp_path / "other.key").write_text("not a key")
    (tmp_path / "other.key").chmod(0o600)
    config = write_server_config(tmp_path, solr_server, f'port = {free_port()}\ncert_file = "{cert}"\n'
                                                 f'key_file = "{tmp_path / "other.key"}"')
    result = navd_command(config, "serve", *(["--background"] if background else []))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"navd: config error: [server] cert_file: cannot load {cert} with key_file "
                                    f"{tmp_path / 'other.key'}: ") and result.stderr.count("\n") == 1
    assert navd_command(config, "server", "status").returncode == 3


def test_a_detached_server_that_exits_at_start_says_why_in_one_line(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    """What the first `navd` cannot see (here: a port bound by another process that does not
    listen, so a connection is refused, but the server cannot bind it) comes back as the
    detached server's own one-line error, with where its log is."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        config = write_server_config(tmp_path, solr_server, f"port = {port}")
        result = navd_command(config, "serve", "--background")
    lines = [line for line in result.stderr.splitlines() if line.startswith("navd:")]
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0] == (f"navd: error: the server exited during start-up: [server] could not listen on "
                        f"http://127.0.0.1:{port} (the reason is logged) "
                        f"(log: {tmp_path / 'state' / 'server' / 'server.log'})")
    assert "address already in use" in (tmp_path / "state" / "server" / "server.log").read_text()
    assert navd_command(config, "server", "status").returncode == 3

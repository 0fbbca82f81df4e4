"""YARN records (pure) and the extractor's handling of ResourceManager faults.

Faults a single real ResourceManager cannot be made to produce on demand (an RM in standby, an
HTTP 500, a body that is not the apps JSON, a malformed application record) come from a tiny
local HTTP server; an unreachable RM is a real closed port."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from navd.errors import ConfigError
from navd.extractors.yarn.extractor import YarnExtractionError, YarnExtractor, make_session
from navd.extractors.yarn.settings import YarnConfig
from navd.extractors.yarn.records import BadApplication, application_records, parse_application
from navd.model import Element, ElementType, Relation, RelationType
from navd.process import free_port

APP = {"id": "application_1795342371737_0002", "user": "ann", "name": "daily sales ü", "queue": "root.etl",
       "state": "FINISHED", "finalStatus": "SUCCEEDED", "applicationType": "SPARK",
       "startedTime": 1795342393489, "finishedTime": 1795342436278, "elapsedTime": 42789,
       "trackingUrl": "http://rm:8088/proxy/application_1795342371737_0002/", "diagnostics": ""}


def test_a_spark_application_becomes_template_execution_and_physical_link() -> None:
    records = list(application_records(parse_application(APP)))
    [template, execution] = [r for r in records if isinstance(r, Element)]
    assert template.type is ElementType.OPERATION and template.qualified_name == "yarn://SPARK/daily sales ü"
    assert execution.qualified_name == "yarn://application_1795342371737_0002"
    assert execution.principal == "ann" and execution.ended is not None
    assert execution.properties["queue"] == "root.etl" and execution.properties["elapsedMs"] == "42789"
    assert "diagnostics" not in execution.properties
    relations = {(r.type, r.endpoint1.qualified_name, r.linked1) for r in records if isinstance(r, Relation)}
    assert relations == {(RelationType.INSTANCE_OF, template.qualified_name, True),
                         (RelationType.LOGICAL_PHYSICAL, "spark://application_1795342371737_0002/1", False)}


def test_running_and_failed_applications() -> None:
    running = parse_application({**APP, "state": "RUNNING", "finalStatus": "UNDEFINED", "finishedTime": 0})
    assert running.finished is None and running.finished_ms == 0
    failed = list(application_records(parse_application(
        {**APP, "finalStatus": "FAILED", "applicationType": "MAPREDUCE", "diagnostics": "x" * 5000})))
    execution = next(r for r in failed if isinstance(r, Element) and r.type is ElementType.OPERATION_EXECUTION)
    assert len(execution.properties["diagnostics"]) == 2000
    assert not any(isinstance(r, Relation) and r.type is RelationType.LOGICAL_PHYSICAL for r in failed)


def test_a_blank_name_or_type_is_named_by_the_id() -> None:
    # found by tests/fuzz: InvalidName escaped the extractor (it skips BadApplication only) for an
    # application named " " (spark.app.name=" ")
    records = list(application_records(parse_application({**APP, "name": " ", "applicationType": "\t"})))
    template = next(r for r in records if isinstance(r, Element) and r.type is ElementType.OPERATION)
    assert template.qualified_name == "yarn://YARN/application_1795342371737_0002"


@pytest.mark.parametrize(("raw", "message"), [
    ({**APP, "id": None}, "without a valid id"),
    ({k: v for k, v in APP.items() if k != "user"}, "application_1795342371737_0002: missing user"),
    ({**APP, "startedTime": "yesterday"}, "startedTime is not epoch milliseconds"),
    # found by tests/fuzz: a time past year 9999, or an Infinity, escaped as ValueError/OverflowError
    ({**APP, "startedTime": 2**63 - 1}, "startedTime is not epoch milliseconds: 9223372036854775807"),
    ({**APP, "finishedTime": float("inf")}, "finishedTime is not epoch milliseconds: inf"),
    ("not an object", "not an object"),
])
def test_malformed_records_name_what_is_wrong(raw: Any, message: str) -> None:
    with pytest.raises(BadApplication, match=message):
        parse_application(raw)


class FakeRm(http.server.BaseHTTPRequestHandler):
    """Answers as configured in `routes`: path -> (status, body)."""

    routes: dict[str, tuple[int, str]] = {}

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        status, body = self.routes.get(self.path.split("?", 1)[0], (404, "not found"))
        payload = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_rm() -> Iterator[tuple[str, dict[str, tuple[int, str]]]]:
    routes: dict[str, tuple[int, str]] = {}
    handler = type("Handler", (FakeRm,), {"routes": routes})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", routes
    server.shutdown()


def info(state: str | None) -> tuple[int, str]:
    return 200, json.dumps({"clusterInfo": {"state": "STARTED", **({"haState": state} if state else {})}})


def test_unreachable_resourcemanager_is_one_error(tmp_path: Path) -> None:
    extractor = YarnExtractor([f"http://127.0.0.1:{free_port()}"], tmp_path)
    with pytest.raises(YarnExtractionError, match="no active ResourceManager: .*127.0.0.1"):
        list(extractor.extract())
    assert not (tmp_path / "yarn-state.json").exists()


def test_standby_is_passed_over_for_the_active(fake_rm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url, routes = fake_rm
    routes["/ws/v1/cluster/info"] = info("STANDBY")
    with pytest.raises(YarnExtractionError, match="haState STANDBY"):
        list(YarnExtractor([url, url], tmp_path).extract())
    routes["/ws/v1/cluster/info"] = info("ACTIVE")
    routes["/ws/v1/cluster/apps"] = 200, json.dumps({"apps": {"app": [APP, {**APP, "id": "bogus"}]}})
    extractor = YarnExtractor([f"http://127.0.0.1:{free_port()}", url], tmp_path)  # the first one is down
    records = list(extractor.extract())
    assert extractor.report.resourcemanager == url
    assert extractor.report.applications == 1 and extractor.report.skipped == 2  # once per list asked
    assert sum(isinstance(r, Element) for r in records) == 2


@pytest.mark.parametrize(("status", "body", "message"), [
    (500, "java.lang.NullPointerException", "answered HTTP 500"),
    (200, "<html>standby</html>", "other than JSON"),
    (200, json.dumps({"apps": {"app": "nope"}}), "not a list"),
])
def test_bad_answers_end_the_run_with_one_error(fake_rm, tmp_path: Path, status: int, body: str,  # type: ignore[no-untyped-def]
                                                message: str) -> None:
    url, routes = fake_rm
    routes["/ws/v1/cluster/info"] = info(None)
    routes["/ws/v1/cluster/apps"] = status, body
    with pytest.raises(YarnExtractionError, match=message):
        list(YarnExtractor([url], tmp_path).extract())


def test_a_keytab_without_kerberos_is_refused_and_the_session_speaks_json() -> None:
    with pytest.raises(ConfigError, match=r'\[yarn\] keytab: set only with auth = "kerberos"'):
        YarnConfig(urls=("http://rm:8088",), keytab="/etc/navd.keytab").validate()
    with pytest.raises(ConfigError, match=r'\[yarn\] principal: set only with auth = "kerberos"'):
        YarnConfig(urls=("http://rm:8088",), principal="navd@EXAMPLE.COM").validate()
    session = make_session(YarnConfig(urls=("http://rm:8088",)))
    assert session.auth is None and session.headers["Accept"] == "application/json"

"""Solr going away and coming back, and Solr with basic authentication: real servers, no mocks."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from navd.config import DaemonConfig, NavdConfig, SolrConfig
from navd.errors import SolrError, SolrUnavailable
from navd.extractors import Component
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex, give_up_seconds
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.runner import run_extraction
from navd.solr.server import EmbeddedSolr, solr_password_hash

from conftest import start_server

USER, PASSWORD = "navd", "correct horse battery staple"


@pytest.fixture(scope="module")
def secured_solr(tmp_path_factory: pytest.TempPathFactory, own_service: None) -> Iterator[EmbeddedSolr]:
    # An admin's own security.json (an external Solr's users): navd keeps it, adds none of its own.
    home = tmp_path_factory.mktemp("secured-solr")
    (home / "security.json").write_text(json.dumps({
        "authentication": {"class": "solr.BasicAuthPlugin", "blockUnknown": True,
                           "credentials": {USER: solr_password_hash(PASSWORD)}},
    }))
    server = start_server(home)
    yield server
    server.stop()


def secured_config(server: EmbeddedSolr, **extra: object) -> SolrConfig:
    settings: dict[str, Any] = {"backoff_seconds": 0.25, "max_backoff_seconds": 2.0, **extra}
    return SolrConfig(url=server.url, auth="basic", username=USER, password=PASSWORD, **settings)


def test_basic_auth_is_used_and_required(secured_solr: EmbeddedSolr) -> None:
    with SolrIndex(secured_config(secured_solr)) as index:
        assert {r.action for r in init_solr(index)} <= {"created", "unchanged"}
        assert index.count("elements") >= 0
    with SolrIndex(SolrConfig(url=secured_solr.url, retries=0)) as anonymous:
        with pytest.raises(SolrError, match="HTTP 401: authentication required") as refused:
            anonymous.count("elements")
    assert PASSWORD not in str(refused.value)


def test_writer_rides_out_a_solr_restart(secured_solr: EmbeddedSolr) -> None:
    """Solr stops mid-stream and comes back: every document arrives exactly once."""
    total = 30_000
    # The give-up time (0.25 doubling to 2 s, 40 pauses: 76 s) covers a restart on a busy host.
    with SolrIndex(secured_config(secured_solr, retries=40)) as index:
        init_solr(index)
        index.delete_query("elements", "*:*")
        index.commit("elements")
        writer = IndexWriter(index, batch_size=500, threads=2)
        outcome: dict[str, bool] = {}

        def produce() -> None:
            for number in range(total):
                writer.write(Element(SourceType.HDFS, ElementType.FILE, f"hdfs://ns/restart/{number}",
                                     name=str(number)))
                if number % 2_000 == 0:
                    time.sleep(0.2)  # a steady stream, so the outage lands in the middle
            outcome["closed"] = writer.close()

        producer = threading.Thread(target=produce)
        producer.start()
        while writer.counts["elements"] < 4_000:
            time.sleep(0.05)
        assert secured_solr.stop()
        time.sleep(3)
        secured_solr.start()
        producer.join(timeout=300)
        assert not producer.is_alive()
        assert outcome == {"closed": True}
        index.commit("elements")
        assert index.count("elements", "qualifiedName:hdfs\\://ns/restart/*") == total


def test_gives_up_with_one_clear_error_when_solr_stays_down(tmp_path: Path) -> None:
    config = SolrConfig(url="http://127.0.0.1:9/solr", retries=2, backoff_seconds=0.05)
    with SolrIndex(config) as index:
        writer = IndexWriter(index)
        writer.write(Element(SourceType.HDFS, ElementType.FILE, "hdfs://ns/x", name="x"))
        assert writer.close() is False
        with pytest.raises(SolrUnavailable, match=r"^query '\*:\*' on nav_elements: Solr unreachable for \d+ s at "
                                                  r"http://127.0.0.1:9/solr: gave up \(connection refused\)$"):
            index.count("elements")
    with SolrIndex(dataclasses.replace(config, retries=0)) as interactive:  # as the CLI reads: at once
        with pytest.raises(SolrUnavailable, match=r"^query '\*:\*' on nav_elements: cannot reach Solr at "
                                                  r"http://127.0.0.1:9/solr: connection refused$"):
            interactive.count("elements")


class CountingSession(requests.Session):
    """A real session that notes when each request was sent and what it carried."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[float, str, bytes]] = []
        self._lock = threading.Lock()

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        data = kwargs.get("data")
        with self._lock:
            self.sent.append((time.monotonic(), url, data if isinstance(data, bytes) else b""))
        return super().request(method, url, *args, **kwargs)


@dataclasses.dataclass(frozen=True)
class _NoSettings:
    enabled: bool = True


class StopsSolrMidRun:
    """An extractor whose run has Solr acknowledge a first part, stops Solr, and writes on:
    several batches are in flight, from several threads, when Solr goes."""

    def __init__(self, server: EmbeddedSolr, unique: str) -> None:
        self.server, self.unique = server, unique
        self.stopped_at = 0.0  # monotonic time Solr was down

    def run_pass(self, writer: IndexWriter, *, full: bool = False, stop: threading.Event | None = None) -> None:
        del full, stop
        for number in range(500):
            writer.write(Element(SourceType.HDFS, ElementType.FILE, f"hdfs://ns/{self.unique}/a{number}", name="a"))
        writer.flush()
        assert self.server.stop()
        self.stopped_at = time.monotonic()
        for number in range(1_000):
            writer.write(Element(SourceType.HDFS, ElementType.FILE, f"hdfs://ns/{self.unique}/b{number}", name="b"))
            writer.write(Relation(RelationType.PARENT_CHILD,
                                  EntityRef(SourceType.HDFS, f"hdfs://ns/{self.unique}", ElementType.DIRECTORY),
                                  EntityRef(SourceType.HDFS, f"hdfs://ns/{self.unique}/b{number}", ElementType.FILE)))
        writer.flush()

    def close(self) -> None:
        pass


def test_a_run_gives_up_once_at_its_one_deadline_and_leaves_no_thread_retrying(
        secured_solr: EmbeddedSolr, tmp_path: Path, unique: str, log_stream: io.StringIO) -> None:
    """Solr goes away mid-run with batches in flight on several threads: the run fails once,
    when the run's one give-up deadline passes, with how long it tried; every request of the
    run stops with it (each tried at most `retries + 1` times) and no thread retries after."""
    solr = secured_config(secured_solr, retries=3, backoff_seconds=0.5, max_backoff_seconds=1.0,
                          timeout_seconds=5.0, batch_size=100, writer_threads=3)
    deadline = give_up_seconds(solr)  # 0.5 + 1 + 1
    assert deadline == 2.5
    config = NavdConfig(solr=solr, daemon=DaemonConfig(state_dir=str(tmp_path / "state")))
    extractor = StopsSolrMidRun(secured_solr, unique)
    component = Component(name=f"outage{unique}", section="outage", settings_type=_NoSettings, mode="pull",
                          build=lambda _context: extractor, summary=str)
    with SolrIndex(secured_config(secured_solr, retries=40)) as admin:  # no 5 s timeout to create cores
        init_solr(admin)  # right after the restart of the test above: init waits for loading cores
    session = CountingSession()
    session.auth = (USER, PASSWORD)
    index = SolrIndex(solr, session)
    try:
        with pytest.raises(SolrUnavailable) as failed:
            run_extraction(index, config, component)
        ended = time.monotonic()
        message = str(failed.value)
        tried = re.fullmatch(r"update of nav_(?:elements|relations): Solr unreachable for (\d+) s at "
                             + re.escape(secured_solr.url) + r": gave up \(connection refused\)", message)
        assert tried, message
        # At least the deadline, at most what the code allows past it: one request's timeout.
        assert deadline <= int(tried.group(1)) + 0.5 <= deadline + solr.timeout_seconds + 1
        # The writers of the run (elements and relations, three threads, several batches each) and
        # its FAILED record gave up together: ~1x the deadline after Solr went, not once per
        # writer or batch one after the other (2-3x).
        assert ended - extractor.stopped_at < 2 * deadline, (ended - extractor.stopped_at, deadline)

        # Every writer thread of the run ends (the woken ones at once; a bound, not a speed check).
        for thread in threading.enumerate():
            if thread.name.startswith("solr-"):
                thread.join(timeout=solr.timeout_seconds + deadline)
        assert not [t.name for t in threading.enumerate() if t.name.startswith("solr-")]
        assert not [s for s in session.sent if s[0] > ended], "a request of the failed run was sent after it"
        attempts = Counter((url, body) for _at, url, body in session.sent if body.startswith(b"[{"))
        assert max(attempts.values()) <= solr.retries + 1  # retry rounds are bounded per batch
        # The FAILED run record is tried once, after the give-up, not through a schedule of its own.
        logged = [json.loads(line) for line in log_stream.getvalue().splitlines()]
        assert [e["state"] for e in logged if e["event"] == "run record not written"] == ["FAILED"]
        assert not [e for e in logged if e["event"].startswith("Solr request failed") and "runs" in e["what"]]
    finally:
        index.close()
        secured_solr.start()

"""Solr going away and coming back, and Solr with basic authentication: real servers, no mocks."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from navd.config import SolrConfig
from navd.errors import SolrError, SolrUnavailable
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, SourceType
from navd.solr.server import EmbeddedSolr, solr_password_hash

from conftest import start_server

USER, PASSWORD = "navd", "correct horse battery staple"


@pytest.fixture(scope="module")
def secured_solr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedSolr]:
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
    return SolrConfig(url=server.url, auth="basic", username=USER, password=PASSWORD,
                      backoff_seconds=0.25, max_backoff_seconds=2.0, **extra)  # type: ignore[arg-type]


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
    with SolrIndex(secured_config(secured_solr, retries=12)) as index:
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
        with pytest.raises(SolrUnavailable, match=r"cannot reach Solr at http://127.0.0.1:9/solr: "
                                                  r"connection refused \(gave up after 3 attempts\)"):
            index.count("elements")

"""The embedded Solr server: a real Solr 9 process on 127.0.0.1, managed through a pid file."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import requests

from navd.errors import EmbeddedSolrError
from navd.solr.server import EmbeddedSolr, free_port

from net import listening_addresses


def test_a_real_solr_9_answers(solr_server: EmbeddedSolr) -> None:
    info = requests.get(f"{solr_server.url}/admin/info/system", params={"wt": "json"}, timeout=10,
                        auth=solr_server.credentials()).json()
    assert info["lucene"]["solr-spec-version"].startswith("9.")
    assert info["mode"] == "std"
    assert Path(info["solr_home"]).resolve() == solr_server.home


def test_status_reports_the_running_server(solr_server: EmbeddedSolr) -> None:
    status = solr_server.status()
    assert status.running and status.port == solr_server.port and status.pid
    assert status.solr_version and status.solr_version.startswith("9.")


def test_it_listens_on_loopback_only(solr_server: EmbeddedSolr) -> None:
    assert listening_addresses(solr_server.port) in ({"127.0.0.1"}, {"127.0.0.1", "::1"})


def test_start_is_idempotent(solr_server: EmbeddedSolr) -> None:
    before = solr_server.status().pid
    again = EmbeddedSolr(solr_server.home, solr_server.port, "512m", solr_server.distribution).start()
    assert again.running and again.pid == before


def test_same_home_on_another_port_is_refused(solr_server: EmbeddedSolr) -> None:
    other = EmbeddedSolr(solr_server.home, free_port(), "512m", solr_server.distribution)
    with pytest.raises(EmbeddedSolrError, match=f"already runs on port {solr_server.port}"):
        other.start()


def test_a_port_taken_by_someone_else_is_refused(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        server = EmbeddedSolr(tmp_path / "home", port, "512m", solr_server.distribution)
        with pytest.raises(EmbeddedSolrError, match=f"port {port} on 127.0.0.1 is in use"):
            server.start()
    assert not (tmp_path / "home" / "navd-solr.pid").exists()


def test_status_of_a_home_without_server(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    status = EmbeddedSolr(tmp_path, free_port(), "512m", solr_server.distribution).status()
    assert not status.running and "no pid file" in status.detail
    (tmp_path / "navd-solr.pid").write_text('{"pid": 999999999, "port": 1}')
    stale = EmbeddedSolr(tmp_path, free_port(), "512m", solr_server.distribution).status()
    assert not stale.running and "stale pid file" in stale.detail
    assert EmbeddedSolr(tmp_path, free_port(), "512m", solr_server.distribution).stop() is False

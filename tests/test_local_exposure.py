"""Local exposure: the embedded Solr requires navd's credentials, and what navd keeps on
disk (state, cursors, locks, the Solr home and its credentials) is its user's alone. Real Solr,
real `navd extract`, and a second local user (`nobody`, through runuser) where the test can be one.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from navd.config import EmbeddedSolrConfig, NavdConfig, SolrConfig
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, SourceType
from navd.solr.server import ADMIN, READER, EmbeddedSolr, effective_solr_config

from conftest import start_server

EVENTS = Path(__file__).parent / "fixtures" / "spark_events"


def as_nobody(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["runuser", "-u", "nobody", "--", *cmd], capture_output=True, text=True, timeout=30)


needs_second_user = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None,
                                       reason="acting as a second local user needs root and runuser")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every local user may traverse (0755, as /var/lib or a home often is), so that
    what keeps `nobody` out below it is navd's modes and nothing above them (pytest's base
    temporary directory is 0700)."""
    base = Path(tempfile.mkdtemp(prefix="navd-exposure-", dir="/tmp"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def group_or_other_bits(root: Path) -> list[str]:
    """Every path under `root` (and root) that grants its group or others anything."""
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & 0o077:
            found.append(f"{oct(mode & 0o777)} {path}")
    return found


# -- the embedded Solr requires navd's users ----------------------------------------------------

def test_unauthenticated_requests_get_401(index: SolrIndex, solr_server: EmbeddedSolr) -> None:
    core = index.core("elements")
    url = solr_server.url
    attempts = {
        "select": requests.get(f"{url}/{core}/select", params={"q": "*:*"}, timeout=10),
        "update": requests.post(f"{url}/{core}/update", json=[{"identity": "intruder"}], timeout=10),
        "config API": requests.post(f"{url}/{core}/config", timeout=10,
                                    json={"set-property": {"updateHandler.autoCommit.maxTime": 1}}),
        "core admin": requests.get(f"{url}/admin/cores", params={"action": "STATUS"}, timeout=10),
        "wrong password": requests.get(f"{url}/{core}/select", params={"q": "*:*"}, timeout=10,
                                       auth=(ADMIN, "guessed")),
    }
    assert {what: resp.status_code for what, resp in attempts.items()} == dict.fromkeys(attempts, 401)


def test_the_reader_can_query_but_not_write_or_configure(index: SolrIndex, solr_server: EmbeddedSolr) -> None:
    reader = solr_server.credentials("reader")
    assert reader is not None and reader[0] == READER
    core = index.core("elements")
    url = solr_server.url
    assert requests.get(f"{url}/{core}/select", params={"q": "*:*", "rows": 0}, auth=reader,
                        timeout=10).status_code == 200
    refused = {
        "update": requests.post(f"{url}/{core}/update", json=[{"identity": "intruder"}], auth=reader, timeout=10),
        "config API": requests.post(f"{url}/{core}/config", auth=reader, timeout=10,
                                    json={"set-property": {"updateHandler.autoCommit.maxTime": 1}}),
        "config read": requests.get(f"{url}/{core}/config", auth=reader, timeout=10),
        "schema API": requests.post(f"{url}/{core}/schema", auth=reader, timeout=10,
                                    json={"add-field": {"name": "intruder", "type": "string"}}),
        "core admin": requests.get(f"{url}/admin/cores", params={"action": "RELOAD", "core": core},
                                   auth=reader, timeout=10),
        "security edit": requests.post(f"{url}/admin/authentication", auth=reader, timeout=10,
                                       json={"set-user": {"intruder": "secret"}}),
    }
    assert {what: resp.status_code for what, resp in refused.items()} == dict.fromkeys(refused, 403)
    admin = solr_server.credentials()
    assert requests.get(f"{url}/{core}/config", auth=admin, timeout=10).status_code == 200


@pytest.mark.services
@needs_second_user
def test_credentials_are_navds_alone_and_picked_up_for_the_embedded_default(shared_dir: Path) -> None:
    home = shared_dir / "solr"
    server = start_server(home)
    try:
        credentials = home / "navd-credentials.json"
        assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        readable = shared_dir / "public.txt"  # the control: nobody reaches files here at all
        readable.write_text("public\n")
        readable.chmod(0o644)
        assert as_nobody("cat", str(readable)).returncode == 0
        refused = as_nobody("cat", str(credentials))
        assert refused.returncode != 0 and "Permission denied" in refused.stderr
        assert json.loads(credentials.read_text())["admin"]["username"] == ADMIN

        # No [solr] url and no auth: navd logs in with the generated users by itself.
        default = SolrConfig(embedded=EmbeddedSolrConfig(home=str(home), port=server.port), retries=0)
        writer = effective_solr_config(NavdConfig(solr=default))
        reader = effective_solr_config(NavdConfig(solr=default), read_only=True)
        assert (writer.auth, writer.username, reader.username) == ("basic", ADMIN, READER)
        with SolrIndex(writer) as index:
            assert {r.action for r in init_solr(index)} == {"created"}
            records = IndexWriter(index)
            records.write(Element(SourceType.HDFS, ElementType.FILE, "hdfs://ns/exposure", name="exposure"))
            assert records.close()
        with SolrIndex(reader) as index:
            assert index.count("elements") >= 0
        # A configured auth is the user's word: not replaced by the generated credentials.
        kerberos = NavdConfig(solr=SolrConfig(embedded=default.embedded, auth="kerberos"))
        assert effective_solr_config(kerberos).auth == "kerberos"
        assert group_or_other_bits(home) == []  # the index, Solr's logs, the cores' conf
    finally:
        server.stop()


# -- state, cursors and locks are private ---------------------------------------------------------

@needs_second_user
def test_a_real_run_leaves_only_private_state_and_a_lock_nobody_can_open(
        navd, index: SolrIndex, solr_server: EmbeddedSolr, shared_dir: Path) -> None:  # type: ignore[no-untyped-def]
    from conftest import write_navd_config

    text = (EVENTS / "ctas_expression.jsonl").read_text(encoding="utf-8")
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines()
                  if '"SparkListenerApplicationStart"' in line)
    events = shared_dir / "events"
    events.mkdir()
    (events / app_id).write_text(text, encoding="utf-8")
    state = shared_dir / "state"
    config = shared_dir / "navd.toml"
    write_navd_config(config, solr_server, f'[spark]\nevent_log_dirs = ["{events}"]\n', state=state)
    extracted = navd("extract", "spark", "--once", env={**os.environ, "NAVD_CONFIG": str(config)})
    assert extracted.returncode == 0, extracted.stderr
    locks = sorted((state / "locks").glob("*.lock"))
    assert locks and any((state / "spark").iterdir())  # the run took a lock and kept its cursors
    assert group_or_other_bits(state) == []
    assert group_or_other_bits(solr_server.home) == []
    for lock in locks:
        held = as_nobody("flock", "--nonblock", str(lock), "true")
        assert held.returncode != 0 and "Permission denied" in held.stderr, held

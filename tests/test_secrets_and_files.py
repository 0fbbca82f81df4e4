"""Secrets and files: no password, token or keytab content in any log line of a
full pass at debug level (real `navd` commands, the real session Solr behind basic auth, a real
`navd serve`), and every file navd creates 0600 in a 0700 directory whatever the umask.
The config file refused when others may read it and it holds a password: tests/test_config.py
and tests/test_cli.py (one line, exit 2)."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from conftest import serving
from navd.locks import component_lock
from navd.openlineage.spool import Spool
from navd.process import free_port
from navd.server.users import add_user
from navd.solr.server import EmbeddedSolr
from navd.state import SqliteState, private_dir, write_atomically
from openlineage.client.event_v2 import RunState
from openlineage_events import as_json, job_run

NAVD = str(Path(sys.executable).parent / "navd")
EVENTS = Path(__file__).parent / "fixtures" / "spark_events"
USER_PASSWORD = "user-pw-7f3a9c1e"
TOKEN = "token-4b1d9e2a77c0"
KEYTAB_CONTENT = "keytab-content-5c2e91d8"


def modes_not_private(root: Path) -> list[str]:
    """Everything below `root` that is not a 0700 directory or a 0600 file."""
    wrong = []
    for directory, _, files in os.walk(root):
        mode = stat.S_IMODE(os.stat(directory).st_mode)
        if Path(directory) != root and mode != 0o700:
            wrong.append(f"{directory} {mode:04o}")
        for name in files:
            path = os.path.join(directory, name)
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if not os.path.islink(path) and mode != 0o600:
                wrong.append(f"{path} {mode:04o}")
    return wrong


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 000: a file navd did not make private on purpose would come out 0666."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


class _State(SqliteState):
    SCHEMA = "CREATE TABLE IF NOT EXISTS cursor (name TEXT PRIMARY KEY, value TEXT)"


def test_every_kind_of_file_navd_creates_is_private_whatever_the_umask(tmp_path: Path, open_umask: None) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o755)
    state_root = root / "state"
    # an extractor's SQLite state with its -wal and -shm files (hdfs, hms, yarn, spark, linker, purge)
    state = _State(state_root / "spark")
    state.db.execute("INSERT INTO cursor VALUES ('a', 'b')")
    state.commit()
    # a tailer's checkpoint, written atomically (spark, hive-lineage, impala)
    write_atomically(private_dir(state_root / "hive-lineage") / "cursors.json", b"{}")
    # a component's lock
    with component_lock(state_root, "spark", wait=False):
        pass
    # the OpenLineage spool, nested where nothing exists yet, and an event set aside
    spool = Spool(root / "var" / "lib" / "navd" / "openlineage-spool")
    spool.reject(spool.put(b'{"eventType": "START"}'))
    spool.put(b'{"eventType": "COMPLETE"}')
    # the server's users file
    add_user(root / "server" / "users", "alice", USER_PASSWORD)
    assert {p.name for p in (state_root / "spark").iterdir()} >= {"state.sqlite", "state.sqlite-wal"}
    assert modes_not_private(root) == []
    state.close()


def test_an_existing_spool_made_readable_by_others_is_tightened(tmp_path: Path) -> None:
    directory = tmp_path / "spool"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    Spool(directory).put(b"{}")
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700 and modes_not_private(directory) == []


# --- secrets in the logs of a full pass at debug --------------------------------------------------

def _run(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVD, "--log-level", "debug", *args], input=stdin, env=env, capture_output=True,
                          text=True, timeout=240, umask=0, check=False)


def test_a_full_pass_at_debug_logs_no_secret(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    credentials = solr_server.credentials()
    assert credentials is not None
    solr_user, solr_password = credentials
    keytab = tmp_path / "navd.keytab"  # not a keytab: its content is a secret navd must never echo
    keytab.write_text(KEYTAB_CONTENT)
    keytab.chmod(0o600)
    text = (EVENTS / "ctas_expression.jsonl").read_text(encoding="utf-8")
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines() if '"SparkListenerApplicationStart"' in line)
    events = tmp_path / "events"
    events.mkdir()
    (events / app_id).write_text(text, encoding="utf-8")
    state = tmp_path / "state"
    port = free_port()
    base = (f'[solr]\nurl = "{solr_server.url}"\nauth = "basic"\nusername = "{solr_user}"\n'
            f'password = "{solr_password}"\n'  # inline, in a 0600 file: warned about, and must not be logged
            f'[logging]\nformat = "json"\n[daemon]\nstate_dir = "{state}"\n'
            f'[cluster]\nname = "secrets"\n'  # its own names: the session's Solr is shared (sales.t@primary)
            f'[spark]\nevent_log_dirs = ["{events}"]\n[openlineage]\nenabled = true\n')
    config = tmp_path / "navd.toml"
    config.write_text(base + f'[server]\nport = {port}\nauth = "basic"\n')
    config.chmod(0o600)
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    outputs: list[str] = []

    def record(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
        outputs.extend((done.stdout, done.stderr))
        return done

    assert record(_run(["server", "add-user", "alice"], env, stdin=USER_PASSWORD + "\n")).returncode == 0
    extracted = record(_run(["extract", "spark", "--once"], env))
    assert extracted.returncode == 0, extracted.stderr[-3000:]
    assert record(_run(["status"], env)).returncode == 0

    url = f"http://127.0.0.1:{port}"
    # a bound on waiting for a start at debug level on a loaded host, not a measure
    with serving(config, url, args=("--log-level", "debug", "serve"), umask=0, within=240) as served:
        assert requests.get(f"{url}/api/status", auth=("alice", USER_PASSWORD), timeout=60).status_code == 200
        assert requests.get(f"{url}/api/status", auth=("alice", USER_PASSWORD + "x"), timeout=60).status_code == 401
        assert requests.get(f"{url}/api/status", headers={"Authorization": f"Bearer {TOKEN}"},
                            timeout=60).status_code == 401
        assert requests.get(f"{url}/api/entities", params={"query": "*:*", "token": TOKEN},
                            auth=("alice", USER_PASSWORD), timeout=60).status_code in (200, 400)
        event = as_json(job_run("0190a4e1-0b2c-7d3e-8f40-5a6b7c8d9e0f", "secrets.job", RunState.COMPLETE))
        posted = requests.post(f"{url}/api/v1/lineage", json=event, auth=("alice", USER_PASSWORD), timeout=60)
        assert posted.status_code in (200, 201), posted.text
    outputs.append(served.log.read_text())

    # the keytab: a Kerberos server whose keytab is not one fails closed, one line, no content
    kerberos = tmp_path / "navd-kerberos.toml"
    kerberos.write_text(base + f'[server]\nport = {free_port()}\nauth = "kerberos"\nkeytab = "{keytab}"\n')
    kerberos.chmod(0o600)
    refused = record(_run(["serve"], {**env, "NAVD_CONFIG": str(kerberos)}))
    assert refused.returncode != 0

    logs = "\n".join(outputs)
    assert "debug" in logs and "extract" in logs  # the pass logged at debug level
    basic = base64.b64encode(f"{solr_user}:{solr_password}".encode()).decode()
    for name, secret in (("the Solr password", solr_password), ("its basic-auth header", basic),
                         ("alice's basic-auth header", base64.b64encode(f"alice:{USER_PASSWORD}".encode()).decode()),
                         ("a server user's password", USER_PASSWORD), ("the keytab's content", KEYTAB_CONTENT)):
        leaked = [line for line in logs.splitlines() if secret in line]
        assert leaked == [], f"{name} in {len(leaked)} log lines, e.g. {leaked[0][:300]}"
    # nor a token a client sent, in a header or in the query string
    assert [line for line in logs.splitlines() if TOKEN in line] == []
    # what the pass left on disk is navd's user's alone (under umask 000, whatever navd did not make
    # private on purpose would be 0666/0777)
    assert modes_not_private(state) == []

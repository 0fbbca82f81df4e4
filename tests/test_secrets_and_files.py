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

    assert record(_run(["server", "add-user", "alice", "--role", "editor"], env, stdin=USER_PASSWORD + "\n")).returncode == 0
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


# --- no file written through a symbolic link; no key others may read ------------------------------

@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of navd's user that a link in navd's state directory points at: it must stay as it is."""
    path = tmp_path / "victim"
    path.write_text("precious\n")
    path.chmod(0o644)
    return path


def untouched(victim: Path) -> bool:
    return victim.read_text() == "precious\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644


def test_the_background_servers_log_linked_elsewhere_is_refused_and_the_target_untouched(
        tmp_path: Path, solr_server: EmbeddedSolr, victim: Path) -> None:
    from conftest import solr_section

    state = tmp_path / "state"
    (state / "server").mkdir(parents=True)
    log = state / "server" / "server.log"
    log.symlink_to(victim)
    config = tmp_path / "navd.toml"
    config.write_text(f'{solr_section(solr_server)}[daemon]\nstate_dir = "{state}"\n[server]\nport = {free_port()}\n')
    config.chmod(0o600)
    result = _run(["serve", "--background"], {**os.environ, "NAVD_CONFIG": str(config)})
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr == f"navd: error: {log}: is a symbolic link; navd does not write through one: remove it\n"
    assert untouched(victim) and log.is_symlink()
    assert _run(["server", "status"], {**os.environ, "NAVD_CONFIG": str(config)}).returncode == 3


def test_state_files_locks_and_atomic_writes_never_follow_a_link(tmp_path: Path, victim: Path) -> None:
    from navd.errors import UnsafeFile

    state_root = tmp_path / "state"
    # a component's lock file
    (state_root / "locks").mkdir(parents=True)
    (state_root / "locks" / "spark.lock").symlink_to(victim)
    with pytest.raises(UnsafeFile, match="spark.lock: is a symbolic link"):
        with component_lock(state_root, "spark", wait=False):
            pass
    # an extractor's SQLite state
    (state_root / "hms").mkdir()
    (state_root / "hms" / "state.sqlite").symlink_to(victim)
    with pytest.raises(UnsafeFile, match="state.sqlite: is a symbolic link"):
        _State(state_root / "hms")
    # an atomic write (cursors, pid files, the users file, the spool) whose temporary name is
    # taken by a link: the link is replaced, the file written, nothing written through it
    cursors = state_root / "cursors.json"
    (state_root / f".cursors.json.{os.getpid()}.tmp").symlink_to(victim)
    write_atomically(cursors, b'{"new": true}')
    assert cursors.read_bytes() == b'{"new": true}' and not cursors.is_symlink()
    # the file itself a link: replaced by the new file, the link's target left alone
    pid_file = state_root / "server.pid"
    pid_file.symlink_to(victim)
    write_atomically(pid_file, b"{}")
    assert pid_file.read_bytes() == b"{}" and not pid_file.is_symlink()
    assert untouched(victim)


def test_a_log_file_that_is_a_link_is_refused_in_one_line(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "navd.log"
    link.symlink_to(victim)
    config = tmp_path / "navd.toml"
    config.write_text(f'[solr]\nurl = "http://127.0.0.1:{free_port()}/solr"\n[logging]\nfile = "{link}"\n'
                      f'[server]\nport = {free_port()}\n')
    result = _run(["serve"], {**os.environ, "NAVD_CONFIG": str(config)})
    assert result.returncode == 2 and result.stderr == (
        f"navd: config error: [logging] file {link}: is a symbolic link; navd does not write through one: "
        "name the file itself\n"), result.stderr
    assert untouched(victim)


def test_a_tls_key_keystore_or_keytab_others_may_read_is_refused_naming_file_and_mode(
        tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    from conftest import distribution, solr_section
    from navd.errors import ConfigError
    from navd.kerberos import spnego_auth
    from navd.solr.server import EmbeddedSolr as Node, SolrTls
    from test_server import make_certificate

    cert, key = make_certificate(tmp_path)
    key.chmod(0o644)
    config = tmp_path / "navd.toml"
    config.write_text(f'{solr_section(solr_server)}[daemon]\nstate_dir = "{tmp_path / "state"}"\n'
                      f'[server]\nport = {free_port()}\ncert_file = "{cert}"\nkey_file = "{key}"\n')
    config.chmod(0o600)
    for background in ([], ["--background"]):
        result = _run(["serve", *background], {**os.environ, "NAVD_CONFIG": str(config)})
        assert result.returncode == 2 and result.stderr == (
            f"navd: config error: [server] key_file {key}: users other than its owner may read it (mode 0644): "
            "chmod 600 it\n"), result.stderr
    keystore = tmp_path / "solr.p12"
    keystore.write_bytes(b"a PKCS12 keystore")
    keystore.chmod(0o640)
    node = Node(tmp_path / "solr-home", free_port(), "512m", distribution(), tls=SolrTls(keystore))
    with pytest.raises(ConfigError, match=r"^\[solr.embedded\] keystore .*solr.p12: users other than its owner may "
                                          r"read it \(mode 0640\): chmod 600 it$"):
        node.start()
    keytab = tmp_path / "client.keytab"
    keytab.write_text(KEYTAB_CONTENT)
    keytab.chmod(0o604)
    with pytest.raises(ConfigError, match=r"^\[hdfs\] keytab .*client.keytab: users other than its owner may read "
                                          r"it \(mode 0604\): chmod 600 it$"):
        spnego_auth(keytab=str(keytab), section="[hdfs]")

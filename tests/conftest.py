"""Session fixtures: one real Solr 9, started through the same code users run (`navd solr start`),
and, for the tests that ask, a real HDFS, YARN, HiveServer2 (Spark's Thrift Server) and MIT KDC.

No service mocks. A Solr that does not start fails the run (in CI and locally alike), never skips.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
import venv
from typing import Any
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
import structlog

from hdfs import Client

from navd.config import DEFAULT_SOLR_VERSION, SolrConfig, default_solr_dist_dir
from navd.extractors.hdfs.settings import HdfsConfig
from navd.errors import NavdError
from navd.openlineage.kept import KIND as OPENLINEAGE_EVENT
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.logs import setup_logging
from navd.server.roles import Role
from navd.server.users import add_user
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port
from navd.state import write_atomically
from navd.webhdfs import make_client
from navd_devstack.hadoop import DevHdfs, HdfsPorts
from navd_devstack.kdc import DevKdc
from navd_devstack.metastore import HiveMetastore
from navd_devstack.s3 import DevS3
from navd_devstack.spark_thrift import SparkThriftServer
from navd_devstack.yarn import DevYarn, YarnPorts

REPO = Path(__file__).resolve().parent.parent
WAREHOUSE = "/user/hive/warehouse"


#: The fixtures that start a real service: the session's, and `own_service`, which a module's
#: fixture that starts a service of its own (its own Solr, a PySpark job) asks for. A test whose
#: fixture closure holds none of them, and that is not marked `services` (it starts one itself),
#: needs no service: it is marked `pure`, and `make test-fast` (`pytest -m pure`) runs exactly those.
SERVICE_FIXTURES = frozenset({"solr_server", "hdfs", "hive_metastore", "spark_thrift", "yarn", "kdc", "short_kdc",
                              "own_service"})
#: what starting a service runs: the pure tier refuses these, so a test that starts a service of
#: its own without saying so fails there instead of being counted as pure
SERVICE_EXECUTABLES = frozenset({"java", "spark-submit", "spark-class", "mvn", "chromium", "node", "krb5kdc",
                                 "kdb5_util", "kadmin.local", "kinit"})


def pytest_configure(config: pytest.Config) -> None:
    # Keep tests away from the user's own navd state and data (the "current embedded Solr"
    # record, the default Solr home); the jar cache is shared on purpose.
    base = Path(config.rootpath) / ".pytest_cache" / f"navd-xdg-{os.getpid()}"
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    os.environ["XDG_DATA_HOME"] = str(base / "data")
    os.environ.pop("NAVD_CONFIG", None)
    os.environ.pop("NAVD_SOLR_URL", None)
    if config.getoption("markexpr", "") == "pure":
        _without_services(base / "no-services")


def _without_services(stubs: Path) -> None:
    """The pure tier runs where no service can start, so a test that starts one of its own
    without saying so fails there (naming what it started) instead of passing as pure: this
    process's service starts are refused by an audit hook, and its children's find only stubs
    that refuse, first on PATH (JAVA_HOME unset: navd and PySpark look there first)."""
    stubs.mkdir(parents=True, exist_ok=True)
    for name in SERVICE_EXECUTABLES:
        stub = stubs / name
        stub.write_text(f"#!/bin/sh\necho 'the pure test tier starts no service: {name} refused' >&2\nexit 127\n")
        stub.chmod(0o755)
    os.environ["PATH"] = f"{stubs}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ.pop("JAVA_HOME", None)
    sys.addaudithook(_refuse_services)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        uses_a_service = not SERVICE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))
        if not uses_a_service and item.get_closest_marker("services") is None:
            item.add_marker(pytest.mark.pure)


@pytest.fixture(scope="session")
def own_service() -> None:
    """Asked for by a fixture that starts a service of its own, so the tests using that fixture
    are not counted as needing none (see SERVICE_FIXTURES)."""


def _refuse_services(event: str, args: tuple[Any, ...]) -> None:
    """The pure tier's guard (an audit hook): a test there that starts a service process fails."""
    if event != "subprocess.Popen":
        return
    executable, argv = args[0], args[1]
    first = argv if isinstance(argv, (str, bytes, os.PathLike)) else (argv[0] if argv else executable)
    name = os.path.basename(os.fsdecode(executable or first))
    if name in SERVICE_EXECUTABLES:
        raise RuntimeError(f"a test marked pure started {name}: give it the service's fixture, or mark it "
                           "`pytest.mark.services` if it starts the service itself")


def distribution() -> SolrDistribution:
    return SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())


def started(service: Any, what: str) -> None:
    """Start a service the session needs; one that does not start fails the run (never a skip)."""
    try:
        service.start()
    except NavdError as exc:
        # A start that timed out leaves its JVM running (the product leaves it to come up, and
        # `navd status` shows it); the session must not leak it past the failed run.
        try:
            service.stop()
        except (NavdError, OSError):
            pass
        pytest.fail(f"{what} did not start: {exc}", pytrace=False)


def start_server(home: Path, heap: str = "512m") -> EmbeddedSolr:
    server = EmbeddedSolr(home, free_port(), heap, distribution())
    started(server, "the embedded Solr")
    return server


@pytest.fixture(scope="session")
def solr_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedSolr]:
    server = start_server(tmp_path_factory.mktemp("solr-home"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def solr_config(solr_server: EmbeddedSolr) -> SolrConfig:
    return solr_server.client_config(retries=2, backoff_seconds=0.2)


@pytest.fixture(scope="session")
def index(solr_config: SolrConfig) -> Iterator[SolrIndex]:
    with SolrIndex(solr_config) as client:
        init_solr(client)
        yield client


@pytest.fixture(scope="session")
def hive_metastore(tmp_path_factory: pytest.TempPathFactory, hdfs: DevHdfs,
                   hdfs_client: Client) -> Iterator[HiveMetastore]:
    """A real standalone Hive metastore, its warehouse on the session HDFS (as on a cluster)."""
    for shared in (WAREHOUSE, "/tmp"):
        hdfs_client.makedirs(shared)
        hdfs_client.set_permission(shared, "1777")
    metastore = HiveMetastore(tmp_path_factory.mktemp("metastore"), free_port(),
                              warehouse=f"{hdfs.default_fs}{WAREHOUSE}")
    started(metastore, "the Hive metastore")
    yield metastore
    metastore.stop()


@pytest.fixture(scope="session")
def spark_thrift(tmp_path_factory: pytest.TempPathFactory, hive_metastore: HiveMetastore) -> Iterator[SparkThriftServer]:
    """A real HiveServer2 (Spark's Thrift Server) over the session metastore, started once, only
    for the tests that ask. Its own event log stays local."""
    server = SparkThriftServer(tmp_path_factory.mktemp("spark-thrift"), free_port(),
                               metastore_uri=hive_metastore.uri, warehouse=hive_metastore.warehouse)
    started(server, "the Spark Thrift Server")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def hdfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevHdfs]:
    """A real HDFS (NameNode + DataNode, WebHDFS on), started once, only for the tests that ask."""
    cluster = DevHdfs(tmp_path_factory.mktemp("hdfs"), HdfsPorts.free())
    started(cluster, "HDFS")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def yarn(tmp_path_factory: pytest.TempPathFactory, hdfs: DevHdfs) -> Iterator[DevYarn]:
    """A real YARN (ResourceManager + NodeManager) over the session HDFS, started once, only for
    the tests that ask."""
    cluster = DevYarn(tmp_path_factory.mktemp("yarn"), YarnPorts.free(), hdfs)
    started(cluster, "YARN")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevS3]:
    """A real S3-protocol server (moto's, a process of its own on 127.0.0.1), started once, only
    for the tests that ask; each test makes buckets of its own."""
    server = DevS3(tmp_path_factory.mktemp("s3"), free_port())
    started(server, "the S3 server")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevKdc]:
    """A real MIT KDC (krb5kdc) for realms NAVD.TEST and OTHER.TEST, its own krb5.conf and
    databases in a temp dir, started once, only for the tests that ask. A missing krb5kdc fails."""
    server = DevKdc(tmp_path_factory.mktemp("kdc"), free_port(), realms=("NAVD.TEST", "OTHER.TEST"))
    started(server, "the KDC")
    yield server
    server.stop()


#: the short KDC's ticket life: short enough to wait out twice, long enough for a request on a
#: loaded host to use a fresh ticket
TICKET_SECONDS = 15


@pytest.fixture(scope="module")
def short_kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevKdc]:
    """An MIT KDC whose tickets live TICKET_SECONDS and whose krb5.conf allows 1 second of clock
    skew, not 300 (so an ended ticket is refused at once), one per module that asks: a module's
    principals and waits stay its own."""
    server = DevKdc(tmp_path_factory.mktemp("kdc-short"), free_port(), realms=("NAVD.TEST", "OTHER.TEST"),
                    max_life=f"{TICKET_SECONDS}s", clockskew_seconds=1)
    try:
        started(server, "the short-ticket KDC")
        yield server
    finally:
        server.stop()


def past_a_ticket() -> None:
    """Wait until every ticket the short KDC issued before now has ended, skew included."""
    time.sleep(TICKET_SECONDS + 2)


@pytest.fixture(scope="session")
def hdfs_client(hdfs: DevHdfs) -> Client:
    """A WebHDFS client acting as the HDFS superuser, for setting up test trees."""
    return make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user=hdfs.superuser))


@pytest.fixture
def clean_index(index: SolrIndex) -> SolrIndex:
    """The session index with both data cores emptied, for tests that count everything, and the
    OpenLineage events kept of what they held (kept events outlive no run: the purge counts them)."""
    for core in ("elements", "relations"):
        index.delete_query(core, "*:*")
        index.commit(core)
    index.delete_query("runs", f"kind:{OPENLINEAGE_EVENT}")
    index.commit("runs")
    return index


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    """navd's JSON logs of the test, as an admin would see them."""
    root = logging.getLogger()
    handlers, level, config = root.handlers[:], root.level, structlog.get_config()
    stream = io.StringIO()
    setup_logging("json", "info", stream=stream)
    yield stream
    # Leave logging as the next test found it.
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)


@pytest.fixture
def unique() -> str:
    """A prefix that keeps one test's documents apart from another's."""
    return "t" + uuid.uuid4().hex[:10]


def solr_section(server: EmbeddedSolr) -> str:
    """The `[solr]` lines of a navd.toml that reach `server` by URL as navd's admin user (basic
    auth, the password in a 0600 file beside the home), as a site would configure its own Solr."""
    credentials = server.credentials()
    if credentials is None:  # a SolrCloud home, or one with a security.json of its own
        return f'[solr]\nurl = "{server.url}"\n'
    password_file = server.home.parent / f"{server.home.name}.admin-password"
    if not password_file.exists():
        write_atomically(password_file, credentials[1].encode())
    return (f'[solr]\nurl = "{server.url}"\nauth = "basic"\nusername = "{credentials[0]}"\n'
            f'password_file = "{password_file}"\n')


def write_navd_config(path: Path, solr: EmbeddedSolr, body: str = "", *, cluster: str | None = None,
                      default_fs: str | None = None, state: Path | None = None, solr_settings: str = "",
                      private: bool = False) -> Path:
    """The one way tests write a navd.toml: `[cluster] name` and `default_fs` when given, `[solr]`
    reaching `solr` as navd's admin user (`solr_section`, then `solr_settings` lines of that section), JSON logs,
    `[daemon] state_dir` when given, then `body` (the sections a test needs). `private`: mode
    0600, as a config holding the server's settings is kept."""
    path.write_text(cluster_section(cluster, default_fs) + solr_section(solr)
                    + solr_settings + '[logging]\nformat = "json"\n'
                    + (f'[daemon]\nstate_dir = "{state}"\n' if state is not None else "") + body)
    if private:
        path.chmod(0o600)
    return path


def cluster_section(name: str | None = None, default_fs: str | None = None) -> str:
    """`[cluster]` with its `name` and `default_fs` when given; "" when neither is."""
    keys = (f'name = "{name}"\n' if name is not None else "") + (f'default_fs = "{default_fs}"\n' if default_fs else "")
    return f"[cluster]\n{keys}" if keys else ""


@pytest.fixture
def navd_env(tmp_path: Path, solr_server: EmbeddedSolr) -> dict[str, str]:
    """Environment for running the `navd` command against the session Solr."""
    config = write_navd_config(tmp_path / "navd.toml", solr_server)
    return {**os.environ, "NAVD_CONFIG": str(config)}


NavdRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def navd(navd_env: dict[str, str]) -> NavdRunner:
    """Run the installed `navd` console command exactly as a user would."""
    executable = str(Path(sys.executable).parent / "navd")

    def run(*args: str, env: dict[str, str] | None = None,
            timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run([executable, *args], env=env or navd_env, capture_output=True,
                              text=True, timeout=timeout, check=False)

    return run


@dataclasses.dataclass(frozen=True)
class OwnCores:
    """A set of navd cores of its own in the session Solr (`<name>_elements`, ...): a run whose
    whole index is compared with another's, document for document."""

    index: SolrIndex
    #: the `[solr]` lines of a navd.toml naming these cores
    section: str


@pytest.fixture
def own_cores(solr_config: SolrConfig, solr_server: EmbeddedSolr) -> Iterator[Callable[[str], OwnCores]]:
    """Makes core sets for one test, unloaded (and their files removed) after it."""
    made: list[SolrIndex] = []

    def make(name: str) -> OwnCores:
        names = {f"{kind}_core": f"{name}_{kind}" for kind in ("elements", "relations", "runs")}
        index = SolrIndex(dataclasses.replace(solr_config, **names))
        made.append(index)
        init_solr(index)
        return OwnCores(index, solr_section(solr_server) + "".join(f'{k} = "{v}"\n' for k, v in names.items()))

    yield make
    for index in made:
        for kind in ("elements", "relations", "runs"):
            index.request("POST", "admin/cores", params={"action": "UNLOAD", "core": index.core(kind),
                                                         "deleteInstanceDir": "true"}, what="unload a test core")
        index.close()


@pytest.fixture(scope="session")
def dependencies_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with navd's dependencies (this venv's site-packages) but not navd itself: the
    interpreter of an executor on another host, which gets navd's code from the job."""
    home = tmp_path_factory.mktemp("deps-venv")
    venv.create(home, with_pip=False, symlinks=True)
    python = home / "bin" / "python"
    site_packages = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                                   capture_output=True, text=True, check=True).stdout.strip()
    # A path a .pth names is added to sys.path, but the .pth files in it are not run: this
    # venv's editable install of navd (a .pth and a finder) stays out.
    own = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "orjson").exists())
    Path(site_packages, "dependencies.pth").write_text(own + "\n")
    return python


# -- `navd serve`, as users start it --------------------------------------------------------------

NAVD = str(Path(sys.executable).parent / "navd")
#: how long a server subprocess may take to answer /healthz (a start timeout, not a measurement)
START_SECONDS = 60


class Served:
    """A running `navd serve`: its process, the URL it answers on, its log."""

    def __init__(self, proc: subprocess.Popen[str], url: str, log: Path) -> None:
        self.proc, self.url, self.log = proc, url, log

    def get(self, path: str, **kwargs: object) -> requests.Response:
        return requests.get(self.url + path, timeout=30, **kwargs)  # type: ignore[arg-type]


def write_server_config(directory: Path, solr: EmbeddedSolr, server: str, extra: str = "") -> Path:
    """`directory`/navd.toml for a server test (`write_navd_config`): the `[server]` lines `server`,
    then the sections `extra`, the state directory beside it, mode 0600."""
    return write_navd_config(directory / "navd.toml", solr, f"[server]\n{server}\n{extra}",
                             state=directory / "state", private=True)


def start_navd(args: Sequence[str], config: Path, log: Path,
               env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """`navd ARGS` with `config`, this process's environment plus `env`, its output in `log`."""
    with log.open("w") as out:
        return subprocess.Popen([NAVD, *args], env={**os.environ, "NAVD_CONFIG": str(config), **(env or {})},
                                stdout=out, stderr=subprocess.STDOUT, text=True)


def stop_navd(proc: subprocess.Popen[str]) -> int:
    """SIGTERM, as systemd stops it; the exit status."""
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=60)


def wait_healthy(proc: subprocess.Popen[str], url: str, log: Path, *, within: float = START_SECONDS,
                 **kwargs: object) -> None:
    """Until `url`/healthz answers 200; fails the test when the server exits or `within` passes."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited {proc.returncode}: {log.read_text()[-3000:]}")
        try:
            if requests.get(url + "/healthz", timeout=2, **kwargs).status_code == 200:  # type: ignore[arg-type]
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    pytest.fail(f"the server did not answer within {within}s: {log.read_text()[-3000:]}")


def start_serving(config: Path, url: str, *, args: Sequence[str] = ("serve",), env: Mapping[str, str] | None = None,
                  log: Path | None = None, within: float = START_SECONDS, verify: bool | str = True,
                  umask: int = -1) -> Served:
    """`navd ARGS` with `config` (this process's environment plus `env`), once `url`/healthz answers."""
    log = log or config.parent / f"serve-{urlsplit(url).port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen([NAVD, *args], env={**os.environ, "NAVD_CONFIG": str(config), **(env or {})},
                                stdout=out, stderr=subprocess.STDOUT, text=True, umask=umask)
    try:
        wait_healthy(proc, url, log, within=within, verify=verify)
    except BaseException:
        proc.kill()
        proc.wait(timeout=60)
        raise
    return Served(proc, url, log)


@contextlib.contextmanager
def serving(config: Path, url: str, **options: Any) -> Iterator[Served]:
    """The one way tests run `navd serve` (`start_serving`'s options): on leaving, SIGTERM, and it
    must exit 0 with no traceback in its log."""
    served = start_serving(config, url, **options)
    try:
        yield served
    finally:
        code = stop_navd(served.proc)
    assert code == 0, served.log.read_text()[-3000:]
    assert "Traceback" not in served.log.read_text()


def serve_with_users(directory: Path, solr: EmbeddedSolr, users: Mapping[str, tuple[str, Role]], *,
                     cluster: str) -> contextlib.AbstractContextManager[Served]:
    """`serving` navd with `[server] auth = "basic"` on a free port, its users file holding
    `users` (name -> (password, role)), naming `cluster`: the catalogue clients' server."""
    users_file = directory / "users"
    for name, (password, role) in users.items():
        add_user(users_file, name, password, role)
    port = free_port()
    config = write_navd_config(directory / "navd.toml", solr,
                               f'[server]\nport = {port}\nauth = "basic"\nusers_file = "{users_file}"\n',
                               cluster=cluster, state=directory / "state", private=True)
    return serving(config, f"http://127.0.0.1:{port}")


#: the real OpenLineage emitters' own venv (dbt-ol, Airflow: their dependency trees pin what
#: navd's venv cannot share), made by `make setup-test` from tests/emitters/requirements.txt
EMITTERS_BIN = REPO / ".venv-emitters" / "bin"


def emitter_command(name: str) -> Path:
    """An emitter's command in the emitters' venv; the test fails (never skips) when it is missing."""
    command = EMITTERS_BIN / name
    if not command.exists():
        pytest.fail(f"{command} is missing: `make setup-test` installs the emitters into {EMITTERS_BIN.parent}")
    return command


def write_emitter_transport(config: Path, events_file: Path, url: str, key: str) -> None:
    """An emitter's `openlineage.yml` sending each event to a file and to navd at `url` with the
    API key `key` (openlineage-python's composite transport). The file comes first: with
    continue_on_failure false, an event navd refused is still on file, and so missing from
    navd's answers the test compares it with."""
    config.write_text(json.dumps({"transport": {
        "type": "composite", "continue_on_failure": False, "continue_on_success": True,
        "transports": [{"type": "file", "log_file_path": str(events_file), "append": True},
                       {"type": "http", "url": url, "auth": {"type": "api_key", "apiKey": key}}]}}))


def emitted_events(events_file: Path) -> list[dict[str, Any]]:
    """The events an emitter wrote to `events_file` (one JSON document a line)."""
    return [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]


@contextlib.contextmanager
def serve_intake_with_api_key(directory: Path, solr: EmbeddedSolr, key_name: str) -> Iterator[tuple[Served, str]]:
    """`serving` navd with the OpenLineage intake on, `[server] auth = "basic"` and an API key
    `key_name` made by `navd server add-api-key` (editor): the server and the key, as an emitter
    configured with `auth.type = api_key` talks to it."""
    port = free_port()
    config = write_server_config(directory, solr,
                                 f'port = {port}\nauth = "basic"\nusers_file = "{directory / "users"}"\n'
                                 f'api_keys_file = "{directory / "keys"}"',
                                 f'[openlineage]\nenabled = true\nspool_dir = "{directory / "spool"}"\n')
    made = subprocess.run([NAVD, "server", "add-api-key", key_name], env={**os.environ, "NAVD_CONFIG": str(config)},
                          capture_output=True, text=True, timeout=60, check=False)
    assert made.returncode == 0, made.stderr
    with serving(config, f"http://127.0.0.1:{port}") as served:
        yield served, made.stdout.strip()


def serve_on_free_port(directory: Path, solr: EmbeddedSolr, server: str = "", extra: str = "", *,
                       host: str = "127.0.0.1", **options: Any) -> contextlib.AbstractContextManager[Served]:
    """`serving` a `write_server_config` in `directory` on a free port: `server` adds `[server]`
    lines, `extra` sections; `host` is the name the URL uses."""
    port = free_port()
    config = write_server_config(directory, solr, f"port = {port}\n{server}", extra)
    return serving(config, f"http://{host}:{port}", **options)

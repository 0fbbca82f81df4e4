"""Session fixtures: one real Solr 9, started through the same code users run (`navd solr start`),
and, for the tests that ask, a real HDFS, YARN, HiveServer2 (Spark's Thrift Server) and MIT KDC.

No service mocks. A Solr that does not start fails the run (in CI and locally alike), never skips.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import subprocess
import sys
import time
import uuid
import venv
from typing import Any
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from hdfs import Client

from navd.config import DEFAULT_SOLR_VERSION, SolrConfig, default_solr_dist_dir
from navd.extractors.hdfs.settings import HdfsConfig
from navd.errors import NavdError
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.logs import setup_logging
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


def pytest_configure(config: pytest.Config) -> None:
    # Keep tests away from the user's own navd state and data (the "current embedded Solr"
    # record, the default Solr home); the jar cache is shared on purpose.
    base = Path(config.rootpath) / ".pytest_cache" / f"navd-xdg-{os.getpid()}"
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    os.environ["XDG_DATA_HOME"] = str(base / "data")
    os.environ.pop("NAVD_CONFIG", None)
    os.environ.pop("NAVD_SOLR_URL", None)


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
    """The session index with both data cores emptied, for tests that count everything."""
    for core in ("elements", "relations"):
        index.delete_query(core, "*:*")
        index.commit(core)
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


@pytest.fixture
def navd_env(tmp_path: Path, solr_server: EmbeddedSolr) -> dict[str, str]:
    """Environment for running the `navd` command against the session Solr."""
    config = tmp_path / "navd.toml"
    config.write_text(f'{solr_section(solr_server)}[logging]\nformat = "json"\n')
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

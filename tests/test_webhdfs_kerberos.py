"""Kerberos for real against WebHDFS: navd's HDFS extractor with `[hdfs] auth =
"kerberos"` lists a tree on a secure NameNode (DevHdfs with `kerberos`: Kerberos RPC, SPNEGO on
every servlet) into the session Solr. The NameNode runs alone, without a DataNode: the extractor
needs metadata only (GETFILESTATUS, LISTSTATUS_BATCH), so the tree is directories. Its principals
(nn/localhost, HTTP/localhost) and keytabs, and navd's, come from conftest's `short_kdc`
(15-second tickets, 1 second of clock skew): a run after navd's ticket has ended renews it from
the keytab, a kinit ticket ends for real, and no ticket or a wrong keytab is one line."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hdfs import Client

from navd.config import load_config
from navd.extractors.hdfs.settings import HdfsConfig
from navd.index.client import SolrIndex
from navd.model import path_qualified_name
from navd.registry import component
from navd.runner import run_extraction
from navd.solr.server import EmbeddedSolr
from navd.webhdfs import make_client
from navd_devstack.hadoop import DevHdfs, HdfsKerberos, HdfsPorts
from navd_devstack.kdc import DevKdc

from conftest import NavdRunner, past_a_ticket, write_navd_config, started

NAMENODE = "nn/localhost@NAVD.TEST"
SPNEGO = "HTTP/localhost@NAVD.TEST"
NAVD = "navd@NAVD.TEST"
# Directories only (no DataNode): spaces, unicode, a percent sign, several levels.
TREE = ("raw data/2026 11", "ünïcödé/ça va", "50% off/été", "empty dir")


@dataclasses.dataclass(frozen=True)
class SecureHdfs:
    hdfs: DevHdfs
    kdc: DevKdc
    home: Path

    @property
    def navd_keytab(self) -> Path:
        return self.home / "navd.keytab"

    @property
    def other_keytab(self) -> Path:
        return self.home / "alice.keytab"

    def env(self, ccache: str = "no-such.ccache") -> dict[str, str]:
        """A process's Kerberos environment: the KDC's krb5.conf, and a ccache of the test's (none
        by default: only a keytab gives navd a ticket)."""
        return {**self.kdc.env, "KRB5CCNAME": f"FILE:{self.home / ccache}"}

    def superuser(self) -> Client:
        """WebHDFS as the NameNode's superuser (its own principal, from its keytab)."""
        return make_client(HdfsConfig(urls=(self.hdfs.webhdfs_url,), auth="kerberos",
                                      keytab=str(self.home / "nn.keytab"), principal=NAMENODE))


@pytest.fixture(scope="module")
def secure(short_kdc: DevKdc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureHdfs]:
    home = tmp_path_factory.mktemp("secure-hdfs")
    for principal in (NAMENODE, SPNEGO, NAVD, "alice@NAVD.TEST"):
        short_kdc.add_principal(principal)
    service = short_kdc.keytab(home / "nn.keytab", NAMENODE, SPNEGO)
    short_kdc.keytab(home / "navd.keytab", NAVD)
    short_kdc.keytab(home / "alice.keytab", "alice@NAVD.TEST")
    cluster = DevHdfs(home / "hdfs", HdfsPorts.free(), namenode_heap="256m", datanode=False,
                      kerberos=HdfsKerberos(short_kdc.env, service, NAMENODE, SPNEGO))
    try:
        started(cluster, "the secure NameNode")
        yield SecureHdfs(cluster, short_kdc, home)
    finally:
        cluster.stop()


@pytest.fixture
def krb5_env(secure: SecureHdfs, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's GSS-API: the short KDC, no ticket cache."""
    for key, value in secure.env().items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def tree(secure: SecureHdfs, krb5_env: None, unique: str) -> str:
    root = f"/{unique}"
    client = secure.superuser()
    for path in TREE:
        client.makedirs(f"{root}/{path}")
    return root


def write_config(secure: SecureHdfs, solr: EmbeddedSolr, root: str, cluster: str, path: Path, *,
                 credentials: str) -> Path:
    write_navd_config(path, solr, state=path.parent / "state", body=
                    f'[cluster]\nname = "{cluster}"\ndefault_fs = "{secure.hdfs.default_fs}"\n'
                    f'[hdfs]\nenabled = true\nurls = ["{secure.hdfs.webhdfs_url}"]\n'
                    f'roots = ["{root}"]\nauth = "kerberos"\n{credentials}')
    return path


def with_keytab(secure: SecureHdfs, keytab: Path | None = None) -> str:
    return f'keytab = "{keytab or secure.navd_keytab}"\nprincipal = "{NAVD}"\n'


def expected_paths(root: str) -> set[str]:
    paths = {root}
    for path in TREE:
        parts = path.split("/")
        paths |= {f"{root}/{'/'.join(parts[:n])}" for n in range(1, len(parts) + 1)}
    return paths


def indexed(index: SolrIndex, secure: SecureHdfs, root: str) -> dict[str, dict[str, object]]:
    index.commit("elements")
    prefix = path_qualified_name(root, secure.hdfs.default_fs)
    return {str(d["fileSystemPath"]): d for d in index.scan("elements", f'{{!prefix f=qualifiedName v="{prefix}"}}')}


def kdc_logins(secure: SecureHdfs, principal: str) -> int:
    """Tickets the KDC issued `principal` from its key (AS exchanges): each is a login from the
    keytab, a renewal included."""
    return sum(1 for line in (secure.kdc.home / "logs" / "kdc.log").read_text().splitlines()
               if "AS_REQ" in line and "ISSUE" in line and f" {principal} for krbtgt/" in line)


def test_navd_extract_lists_a_tree_over_spnego(navd: NavdRunner, secure: SecureHdfs, tree: str, index: SolrIndex,
                                               solr_server: EmbeddedSolr, unique: str, tmp_path: Path) -> None:
    config = write_config(secure, solr_server, tree, unique, tmp_path / "navd.toml", credentials=with_keytab(secure))
    env = {**os.environ, **secure.env(), "NAVD_CONFIG": str(config)}
    extracted = navd("extract", "hdfs", env=env)
    assert extracted.returncode == 0, extracted.stderr
    expected = expected_paths(tree)
    assert extracted.stdout.startswith(f"hdfs: {len(expected)} directories listed"), extracted.stdout
    docs = indexed(index, secure, tree)
    assert set(docs) == expected
    owner = docs[f"{tree}/ünïcödé/ça va"]
    # made by the superuser (the NameNode's principal's short name), read by navd@NAVD.TEST
    assert (owner["type"], owner["owner"], owner["deleted"]) == ("DIRECTORY", "nn", False)
    shown = navd("entity", f"{secure.hdfs.default_fs}{tree}/50% off/été", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["originalName"] == "été"


def refused(navd: NavdRunner, config: Path, env: dict[str, str]) -> str:
    """`navd extract hdfs` that must fail: its one line."""
    failed = navd("extract", "hdfs", env={**os.environ, **env, "NAVD_CONFIG": str(config)})
    assert failed.returncode != 0, failed.stdout
    assert "Traceback" not in failed.stderr and len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    print(failed.stderr.strip())  # shown by pytest -rP: what a user reads
    return failed.stderr.strip()


def test_no_ticket_a_wrong_keytab_or_address_and_simple_auth_fail_with_one_line(
        navd: NavdRunner, secure: SecureHdfs, tree: str, index: SolrIndex, solr_server: EmbeddedSolr, unique: str,
        tmp_path: Path) -> None:
    url = secure.hdfs.webhdfs_url
    no_keytab = write_config(secure, solr_server, tree, unique, tmp_path / "kinit.toml", credentials="")
    line = refused(navd, no_keytab, secure.env())
    assert line.startswith(f"navd: error: [hdfs] Kerberos login to {url} failed: ") and \
        "kinit, or set [hdfs] keytab" in line, line
    wrong = write_config(secure, solr_server, tree, unique, tmp_path / "wrong.toml",
                         credentials=with_keytab(secure, secure.other_keytab))
    line = refused(navd, wrong, secure.env())
    assert line.startswith(f"navd: error: [hdfs] keytab {secure.other_keytab}: no Kerberos credentials for {NAVD}"), line
    missing = write_config(secure, solr_server, tree, unique, tmp_path / "missing.toml",
                           credentials=with_keytab(secure, tmp_path / "no-such.keytab"))
    line = refused(navd, missing, secure.env())
    assert line.startswith(f"navd: error: [hdfs] keytab {tmp_path / 'no-such.keytab'}: no Kerberos credentials"), line
    # the NameNode by an address its HTTP/ principal is not for: the KDC knows no such service
    by_address = write_config(secure, solr_server, tree, unique, tmp_path / "address.toml",
                              credentials=with_keytab(secure))
    address = url.replace("localhost", "127.0.0.1")
    by_address.write_text(by_address.read_text().replace(url, address))
    line = refused(navd, by_address, secure.env())
    assert line == (f"navd: error: [hdfs] Kerberos login to {address} failed: Server HTTP/127.0.0.1@NAVD.TEST not "
                    "found in Kerberos database; [hdfs] urls must name the host of the NameNode's HTTP/ principal"), line
    # simple auth against a secure NameNode
    simple = write_config(secure, solr_server, tree, unique, tmp_path / "simple.toml", credentials="")
    simple.write_text(simple.read_text().replace('auth = "kerberos"', 'auth = "insecure"'))
    line = refused(navd, simple, secure.env())
    assert line == f'navd: error: [hdfs] {url} wants Kerberos (HTTP 401, Negotiate): set [hdfs] auth = "kerberos"', line


def test_a_run_after_the_ticket_ended_renews_it_from_the_keytab_and_a_kinit_ticket_expires(
        navd: NavdRunner, secure: SecureHdfs, tree: str, index: SolrIndex, solr_server: EmbeddedSolr,
        unique: str, tmp_path: Path, krb5_env: None) -> None:
    """Two runs in one process, as the daemon does them (`run_extraction`, a client per run, one
    GSS-API memory cache per process): the second, after navd's ticket has ended, logs in again
    from the keytab (a new AS exchange at the KDC) and sees the change. The same wait ends a
    kinit ticket, which then fails with one line."""
    config = load_config(str(write_config(secure, solr_server, tree, unique, tmp_path / "navd.toml",
                                          credentials=with_keytab(secure))))
    hdfs = component("hdfs")
    kinit_config = write_config(secure, solr_server, tree, unique, tmp_path / "kinit.toml", credentials="")
    secure.kdc.kinit(NAVD, secure.navd_keytab, secure.home / "kinit.ccache")
    before = kdc_logins(secure, NAVD)
    first = run_extraction(index, config, hdfs).report
    logins = kdc_logins(secure, NAVD)
    assert first.entries == len(expected_paths(tree)) and logins > before  # a login per worker starting at once
    assert navd("extract", "hdfs", env={**os.environ, **secure.env("kinit.ccache"),
                                        "NAVD_CONFIG": str(kinit_config)}).returncode == 0
    past_a_ticket()
    secure.superuser().makedirs(f"{tree}/raw data/2026 12")
    second = run_extraction(index, config, hdfs).report
    assert second.entries == 2  # the new directory and its parent
    assert kdc_logins(secure, NAVD) > logins  # the ended ticket replaced from the keytab
    assert f"{tree}/raw data/2026 12" in indexed(index, secure, tree)
    line = refused(navd, kinit_config, secure.env("kinit.ccache"))
    assert line == (f"navd: error: [hdfs] Kerberos login to {secure.hdfs.webhdfs_url} failed: Ticket expired; "
                    "kinit, or set [hdfs] keytab"), line

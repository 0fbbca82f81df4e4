"""Secured Solr for real: a Solr of its own (navd's embedded server, started by navd's
code) with basic auth (navd's security.json: BasicAuthPlugin + RuleBasedAuthorizationPlugin)
and TLS, its certificate issued by a private CA this module makes with the openssl CLI. navd
reaches it through its config only (`url`, `auth`, `username`, `password_file`, `ca_bundle`),
as a site points navd at its own secured Solr: `navd solr init`, an extraction, `navd lineage`
and `navd purge` work; a wrong password and a certificate from another CA fail closed, with one
line naming the cause.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from navd.config import parse_config
from navd.solr.server import EmbeddedSolr, SolrTls, embedded_server, free_port
from navd.state import write_atomically

from conftest import distribution, started

EVENTS = Path(__file__).parent / "fixtures" / "spark_events"
NAVD = str(Path(sys.executable).parent / "navd")
KEYSTORE_PASSWORD = "keystore-secret"


def openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"openssl {' '.join(args)}: {done.stderr}"


def make_ca(directory: Path, name: str) -> tuple[Path, Path]:
    """A private CA: (its certificate, its key)."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.pem",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
    return directory / f"{name}.pem", directory / f"{name}.key"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The CA navd trusts, a server certificate it issued for 127.0.0.1 in a PKCS12 keystore
    (what Solr reads), and a second CA that issued nothing navd talks to."""
    directory = tmp_path_factory.mktemp("pki")
    ca, ca_key = make_ca(directory, "navd-test-ca")
    rogue, _ = make_ca(directory, "other-ca")
    (directory / "server.ext").write_text("basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                                          "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "server.key", "-out", "server.csr", cwd=directory)
    openssl("x509", "-req", "-in", "server.csr", "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "2", "-extfile", "server.ext", "-out", "server.pem", cwd=directory)
    password_file = directory / "keystore.password"
    write_atomically(password_file, KEYSTORE_PASSWORD.encode())
    openssl("pkcs12", "-export", "-in", "server.pem", "-inkey", "server.key", "-certfile", str(ca),
            "-name", "solr", "-out", "solr.p12", "-passout", f"file:{password_file}", cwd=directory)
    (directory / "solr.p12").chmod(0o600)  # it holds the server's key: navd refuses one others may read
    return {"ca": ca, "rogue": rogue, "keystore": directory / "solr.p12", "keystore_password": password_file}


@pytest.fixture(scope="module")
def secured_solr(tmp_path_factory: pytest.TempPathFactory, pki: dict[str, Path],
                 own_service: None) -> Iterator[EmbeddedSolr]:
    """A separate Solr from the session's: basic auth and https only."""
    server = EmbeddedSolr(tmp_path_factory.mktemp("secured-solr-home"), free_port(), "512m", distribution(),
                          tls=SolrTls(pki["keystore"], pki["keystore_password"], str(pki["ca"])))
    try:
        started(server, "the secured Solr")
        yield server
    finally:  # also when it did not become ready: no JVM of the test left behind
        server.stop()


def write_config(directory: Path, server: EmbeddedSolr, *, ca: Path, password: str | None = None) -> Path:
    """A navd.toml that reaches `server` by its https URL as navd's admin user."""
    credentials = server.credentials()
    assert credentials is not None
    password_file = directory / "solr.password"
    write_atomically(password_file, (credentials[1] if password is None else password).encode())
    events = directory / "events"
    events.mkdir(exist_ok=True)
    text = (EVENTS / "ctas_expression.jsonl").read_text(encoding="utf-8")
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines()
                  if '"SparkListenerApplicationStart"' in line)
    (events / app_id).write_text(text, encoding="utf-8")
    config = directory / "navd.toml"
    config.write_text(f'[solr]\nurl = "{server.url}"\nauth = "basic"\nusername = "{credentials[0]}"\n'
                      f'password_file = "{password_file}"\nca_bundle = "{ca}"\nretries = 1\n'
                      f'backoff_seconds = 0.1\n[logging]\nformat = "json"\n'
                      f'[daemon]\nstate_dir = "{directory / "state"}"\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\n')
    return config


def navd(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVD, *args], env={**os.environ, "NAVD_CONFIG": str(config)}, capture_output=True,
                          text=True, timeout=240, check=False)


def test_the_server_speaks_only_https_and_only_to_navd_users(secured_solr: EmbeddedSolr, pki: dict[str, Path]) -> None:
    assert secured_solr.url.startswith("https://127.0.0.1:")
    status = secured_solr.status()
    assert status.running and status.url == secured_solr.url and status.solr_version, status
    plain = secured_solr.url.replace("https://", "http://")
    with pytest.raises(requests.ConnectionError):  # no plain-http connector answers
        requests.get(f"{plain}/admin/info/system", timeout=10)
    anonymous = requests.get(f"{secured_solr.url}/admin/info/system", verify=str(pki["ca"]), timeout=10)
    assert anonymous.status_code == 401


def test_init_extract_lineage_and_purge_through_config(secured_solr: EmbeddedSolr, pki: dict[str, Path],
                                                       tmp_path: Path) -> None:
    config = write_config(tmp_path, secured_solr, ca=pki["ca"])
    steps = {
        "init": navd(config, "solr", "init"),
        "extract": navd(config, "extract", "spark", "--once"),
        "lineage": navd(config, "lineage", "sales.t", "--direction", "upstream", "--format", "json"),
        "purge": navd(config, "purge", "--older-than-days", "1", "--json"),
    }
    assert {step: done.returncode for step, done in steps.items()} == dict.fromkeys(steps, 0), \
        {step: done.stderr[-2000:] for step, done in steps.items() if done.returncode}
    lineage = json.loads(steps["lineage"].stdout)
    assert "sales.s" in json.dumps(lineage), lineage  # the CTAS's source, upstream of its target
    assert json.loads(steps["purge"].stdout)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("navd: ")]
    assert len(errors) == 1, done.stderr
    print(errors[0])  # shown by pytest -rP: what a user reads
    return errors[0]


def test_a_wrong_password_fails_closed_with_one_line(secured_solr: EmbeddedSolr, pki: dict[str, Path],
                                                     tmp_path: Path) -> None:
    config = write_config(tmp_path, secured_solr, ca=pki["ca"], password="not-the-password")
    for command in (("solr", "init"), ("lineage", "sales.t")):
        line = one_error_line(navd(config, *command))
        assert "401" in line and "not-the-password" not in line, line


def test_an_untrusted_certificate_fails_closed_with_one_line(secured_solr: EmbeddedSolr, pki: dict[str, Path],
                                                             tmp_path: Path) -> None:
    config = write_config(tmp_path, secured_solr, ca=pki["rogue"])
    for command in (("solr", "init"), ("lineage", "sales.t")):
        line = one_error_line(navd(config, *command))
        assert "certificate verify failed" in line, line


def test_embedded_tls_comes_from_the_config(pki: dict[str, Path], tmp_path: Path) -> None:
    """`[solr.embedded] keystore`: the embedded server and navd's clients use https."""
    config = parse_config({"solr": {"ca_bundle": str(pki["ca"]), "embedded": {
        "home": str(tmp_path / "home"), "port": 18983, "keystore": str(pki["keystore"]),
        "keystore_password_file": str(pki["keystore_password"])}}})
    server = embedded_server(config)
    assert server.url == "https://127.0.0.1:18983/solr" == config.solr.base_url
    assert server.tls == SolrTls(pki["keystore"], pki["keystore_password"], str(pki["ca"]))
    assert server.tls.password() == KEYSTORE_PASSWORD

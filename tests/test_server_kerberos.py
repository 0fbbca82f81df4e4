"""`[server] auth = "kerberos"` against a real MIT KDC (the session's `kdc`, realms NAVD.TEST and
OTHER.TEST): a real `navd serve` with a keytab of HTTP/localhost@NAVD.TEST, reached at
http://localhost:<port> by real `curl --negotiate -u :` and by requests-gssapi (the library navd's
own clients use), each with a ticket `kinit` put in a ccache of the test's own."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import gssapi
import pytest
import requests
from openlineage.client.event_v2 import RunState
from requests_gssapi import OPTIONAL, REQUIRED, HTTPSPNEGOAuth

from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, free_port
from navd_devstack.errors import DevServiceError
from navd_devstack.kdc import DevKdc, krb5_tool
from openlineage_events import as_json, job_run
from test_daemon import Notifications
from conftest import (NAVD, START_SECONDS, Served, serve_on_free_port, serving, start_navd, stop_navd,
                      write_server_config)

SERVICE = "HTTP/localhost@NAVD.TEST"
SPNEGO = gssapi.OID.from_int_seq("1.3.6.1.5.5.2")
UseEnv = Callable[[dict[str, str]], None]


class Site:
    """The principals, keytabs and tickets of the tests, made once with kadmin.local and kinit."""

    def __init__(self, kdc: DevKdc, home: Path) -> None:
        self.kdc, self.home = kdc, home
        for principal in (SERVICE, "hive/localhost@NAVD.TEST", "HTTP/elsewhere@NAVD.TEST", "alice@NAVD.TEST",
                          "carol@NAVD.TEST", "HTTP/localhost@OTHER.TEST", "bob@OTHER.TEST"):
            kdc.add_principal(principal)
        # the server's keytab holds a non-HTTP principal too: "*" must not accept it
        self.keytab = kdc.keytab(home / "navd.keytab", SERVICE, "hive/localhost@NAVD.TEST")
        self.alice = kdc.kinit("alice@NAVD.TEST", kdc.keytab(home / "alice.keytab", "alice@NAVD.TEST"),
                               home / "alice.ccache")
        self.carol = kdc.kinit("carol@NAVD.TEST", kdc.keytab(home / "carol.keytab", "carol@NAVD.TEST"),
                               home / "carol.ccache")
        self.bob = kdc.kinit("bob@OTHER.TEST", kdc.keytab(home / "bob.keytab", "bob@OTHER.TEST"), home / "bob.ccache")
        self.nobody = {**kdc.env, "KRB5CCNAME": f"FILE:{home / 'no-such.ccache'}"}

    def server_env(self) -> dict[str, str]:
        """The server's environment: this KDC's krb5.conf and nothing of the caller's tickets."""
        return {k: v for k, v in os.environ.items() if not k.startswith("KRB5")} | self.kdc.env


@pytest.fixture(scope="module")
def site(kdc: DevKdc, tmp_path_factory: pytest.TempPathFactory) -> Site:
    return Site(kdc, tmp_path_factory.mktemp("kerberos"))


def serve_kerberos(tmp: Path, solr: EmbeddedSolr, site: Site,
                   principal: str) -> contextlib.AbstractContextManager[Served]:
    # the name the service principal is for: clients ask for HTTP@localhost
    return serve_on_free_port(tmp, solr, f'auth = "kerberos"\nkeytab = "{site.keytab}"\nprincipal = "{principal}"',
                              host="localhost", env=site.server_env())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex,
           site: Site) -> Iterator[Served]:
    """`navd serve` with auth = "kerberos" over the session Solr (its cores made by `index`)."""
    with serve_kerberos(tmp_path_factory.mktemp("serve-kerberos"), solr_server, site, SERVICE) as server:
        yield server


@pytest.fixture
def as_user(monkeypatch: pytest.MonkeyPatch) -> UseEnv:
    """Point this process's GSS-API (requests-gssapi) at a user's environment (undone after the test)."""

    def use(env: dict[str, str]) -> None:
        for key, value in env.items():
            monkeypatch.setenv(key, value)

    return use


def curl(url: str, env: dict[str, str], tmp: Path) -> tuple[int, str, str]:
    """Real curl with SPNEGO from the ccache of `env`: (status, response headers, body)."""
    headers, body = tmp / "curl.headers", tmp / "curl.body"
    result = subprocess.run([shutil.which("curl") or "curl", "--silent", "--show-error", "--negotiate", "-u", ":",
                             "--dump-header", str(headers), "--output", str(body), "--write-out", "%{http_code}",
                             url], env={**os.environ, **env}, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return int(result.stdout), headers.read_text(), body.read_text()


def entity_url(served: Served) -> str:
    return f"{served.url}/api/entities/{quote('no.such.table@nowhere', safe='')}"


def logged(served: Served) -> list[dict[str, object]]:
    return [json.loads(line) for line in served.log.read_text().splitlines() if line.startswith("{")]


# -- accepted -------------------------------------------------------------------------------------

def test_curl_negotiate_with_a_ticket_gets_200_and_the_mutual_auth_token(served: Served, site: Site,
                                                                          tmp_path: Path) -> None:
    status, headers, body = curl(f"{served.url}/api/status", site.alice, tmp_path)
    assert status == 200, body
    assert set(json.loads(body)) == {"components", "totals"}  # navd status --json's document
    # the answer carries the server's token (mutual authentication)
    challenges = [line.split(":", 1)[1].strip() for line in headers.splitlines()
                  if line.lower().startswith("www-authenticate:")]
    assert challenges[-1].startswith("Negotiate ") and len(challenges[-1]) > len("Negotiate ") + 10
    # past the login, the API answers as without one: an unknown entity is 404 JSON
    status, _, body = curl(entity_url(served), site.alice, tmp_path)
    assert status == 404 and json.loads(body)["parameter"] == "name"


def test_requests_gssapi_with_mutual_authentication_required(served: Served, site: Site, as_user: UseEnv) -> None:
    as_user(site.alice)
    answer = requests.get(f"{served.url}/api/status", auth=HTTPSPNEGOAuth(mutual_authentication=REQUIRED),
                          timeout=30)
    # REQUIRED: requests-gssapi itself refuses a 200 whose token does not prove the server's key
    assert answer.status_code == 200, answer.text
    # behind the same login: /metrics and Navigator's API
    assert requests.get(f"{served.url}/metrics", auth=HTTPSPNEGOAuth(mutual_authentication=REQUIRED),
                        timeout=30).status_code == 200
    navigator = requests.get(f"{served.url}/api/v9/entities", params={"query": "originalName:x", "limit": 1},
                             auth=HTTPSPNEGOAuth(mutual_authentication=REQUIRED), timeout=30)
    assert navigator.status_code == 200, navigator.text


def test_the_principal_is_the_user_in_the_servers_log(served: Served, site: Site, as_user: UseEnv) -> None:
    as_user(site.alice)
    assert requests.get(f"{served.url}/api/runs", params={"component": "hdfs"}, auth=HTTPSPNEGOAuth(),
                        timeout=30).status_code == 200
    lines = [line for line in logged(served) if line["event"] == "kerberos authenticated"]
    assert {"user": "alice@NAVD.TEST", "route": "/api/runs", "method": "GET"}.items() <= lines[-1].items()
    assert "Negotiate" not in served.log.read_text()  # no token is logged


# -- refused --------------------------------------------------------------------------------------

def test_no_ticket_is_401_negotiate_and_the_probes_stay_open(served: Served, site: Site, tmp_path: Path) -> None:
    plain = served.get("/api/status")
    assert plain.status_code == 401 and plain.headers["www-authenticate"] == "Negotiate"
    assert plain.json() == {"error": "authentication required (Kerberos SPNEGO: curl --negotiate -u :)",
                            "parameter": None}
    assert served.get("/metrics").status_code == 401
    assert served.get("/api/v9/entities").status_code == 401
    status, _, _ = curl(f"{served.url}/api/status", site.nobody, tmp_path)  # curl with an empty ccache
    assert status == 401
    assert served.get("/healthz").status_code == 200
    assert served.get("/readyz").status_code == 200


def spnego_token(env: dict[str, str], target: str, as_user: UseEnv) -> str:
    """A real SPNEGO token of `env`'s user for the service principal `target` (what a client
    sends when it asked the KDC for another service's ticket)."""
    as_user(env)
    context = gssapi.SecurityContext(name=gssapi.Name(target, gssapi.NameType.kerberos_principal),
                                     mech=SPNEGO, usage="initiate")
    return base64.b64encode(context.step()).decode()


@pytest.mark.parametrize(("user", "target", "why"), [
    ("alice", "HTTP/elsewhere@NAVD.TEST", "another HTTP service of the realm"),
    ("alice", "hive/localhost@NAVD.TEST", "another service whose key is in the keytab"),
    ("bob", "HTTP/localhost@OTHER.TEST", "the same service name in another realm"),
])
def test_a_ticket_for_another_service_or_realm_is_401_with_one_warning(served: Served, site: Site, as_user: UseEnv,
                                                                      user: str, target: str, why: str) -> None:
    token = spnego_token(getattr(site, user), target, as_user)
    answer = served.get("/api/status", headers={"Authorization": f"Negotiate {token}"})
    assert answer.status_code == 401, why
    assert answer.headers["www-authenticate"] == "Negotiate"
    assert answer.json()["error"] == "Kerberos authentication failed"
    refused = [line for line in logged(served) if str(line["event"]).startswith("kerberos authentication refused")]
    assert refused and refused[-1]["level"] == "warning" and "exception" not in refused[-1]
    assert f"kerberos authentication refused: Cannot decrypt ticket for {target}" in str(refused[-1]["event"])
    assert token not in served.log.read_text()


def test_garbage_tokens_are_401_without_a_traceback(served: Served) -> None:
    for value in ("Negotiate", "Negotiate !!!not-base64", "Negotiate " + "QUFBQQ==", "negotiate YWJj"):
        answer = served.get("/api/status", headers={"Authorization": value})
        assert answer.status_code == 401, value
    assert "Traceback" not in served.log.read_text()


def test_star_accepts_any_http_principal_of_the_keytab_and_nothing_else(tmp_path: Path, solr_server: EmbeddedSolr,
                                                                       index: SolrIndex, site: Site,
                                                                       as_user: UseEnv) -> None:
    with serve_kerberos(tmp_path, solr_server, site, "*") as server:
        as_user(site.alice)
        accepted = requests.get(f"{server.url}/api/status", auth=HTTPSPNEGOAuth(mutual_authentication=REQUIRED),
                                timeout=30)
        assert accepted.status_code == 200, accepted.text
        # hive/localhost is in the keytab, but it is not an HTTP service
        token = spnego_token(site.alice, "hive/localhost@NAVD.TEST", as_user)
        assert server.get("/api/status", headers={"Authorization": f"Negotiate {token}"}).status_code == 401
        optional = requests.get(f"{server.url}/api/status", auth=HTTPSPNEGOAuth(mutual_authentication=OPTIONAL),
                                timeout=30)
        assert optional.status_code == 200
    refused = [line for line in logged(server) if str(line["event"]).startswith("kerberos authentication refused")]
    assert len(refused) == 1 and "hive/localhost@NAVD.TEST" in str(refused[0]["event"])


# -- roles and failed logins ---------------------------------------------------------------------

def test_kerberos_roles_give_a_listed_principal_its_role_and_failed_logins_are_limited(
        tmp_path: Path, solr_server: EmbeddedSolr, index: SolrIndex, site: Site, as_user: UseEnv) -> None:
    """alice is an editor by `[server] kerberos_roles`, carol (not listed) a viewer; garbage
    tokens from one address are refused with 429 past max_login_failures, and alice, from
    another, still gets in."""
    port = free_port()
    config = write_server_config(tmp_path, solr_server, f'port = {port}\nauth = "kerberos"\nkeytab = "{site.keytab}"\n'
                                                 f'principal = "{SERVICE}"\nmax_login_failures = 3\n'
                                                 'kerberos_roles = { "alice@NAVD.TEST" = "editor" }',
                          "[openlineage]\nenabled = true\n")
    with serving(config, f"http://localhost:{port}", env=site.server_env()) as served:
        url = served.url
        event = as_json(job_run("0190a4e1-0b2c-7d3e-8f40-5a6b7c8d9e02", "kerberos.roles", RunState.COMPLETE))
        as_user(site.alice)
        posted = requests.post(f"{url}/api/v1/lineage", json=event, auth=HTTPSPNEGOAuth(), timeout=60)
        assert posted.status_code == 201, posted.text
        as_user(site.carol)
        refused = requests.post(f"{url}/api/v1/lineage", json=event, auth=HTTPSPNEGOAuth(), timeout=60)
        assert refused.status_code == 403 and refused.json() == {
            "error": "POST /api/v1/lineage needs the editor role; carol@NAVD.TEST has the viewer role",
            "parameter": None, "needed_role": "editor"}
        assert requests.get(f"{url}/api/status", auth=HTTPSPNEGOAuth(), timeout=30).status_code == 200

        def garbage() -> tuple[int, str | None]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=("127.0.0.2", 0))
            try:
                connection.request("GET", "/api/status", headers={"Authorization": "Negotiate QUFBQQ=="})
                response = connection.getresponse()
                response.read()
                return response.status, response.getheader("retry-after")
            finally:
                connection.close()

        answers = [garbage() for _ in range(5)]
        assert [status for status, _ in answers] == [401, 401, 401, 429, 429]
        assert all(int(retry or 0) > 0 for status, retry in answers if status == 429)
        as_user(site.alice)
        assert requests.get(f"{url}/api/status", auth=HTTPSPNEGOAuth(), timeout=30).status_code == 200


# -- refused at start -----------------------------------------------------------------------------

def refused_at_start(tmp_path: Path, solr: EmbeddedSolr, site: Site, server: str) -> str:
    config = write_server_config(tmp_path, solr, f"port = {free_port()}\n{server}")
    result = subprocess.run([NAVD, "serve"], env={**site.server_env(), "NAVD_CONFIG": str(config)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_a_keytab_others_may_read_is_refused_at_start(tmp_path: Path, solr_server: EmbeddedSolr, site: Site) -> None:
    readable = tmp_path / "readable.keytab"
    shutil.copyfile(site.keytab, readable)
    readable.chmod(0o644)
    stderr = refused_at_start(tmp_path, solr_server, site, f'auth = "kerberos"\nkeytab = "{readable}"\n'
                                                           f'principal = "{SERVICE}"')
    assert f"[server] keytab {readable}: users other than its owner may read it (mode 0644)" in stderr


@pytest.mark.parametrize(("server", "expected"), [
    ('keytab = "/nonexistent/navd.keytab"', "[server] keytab /nonexistent/navd.keytab: no such file"),
    ('keytab = "{keytab}"\nprincipal = "HTTP/nothere@NAVD.TEST"',
     "[server] principal: cannot accept as HTTP/nothere@NAVD.TEST with {keytab}"),
])
def test_a_keytab_or_principal_that_cannot_serve_is_refused_at_start(tmp_path: Path, solr_server: EmbeddedSolr,
                                                                    site: Site, server: str, expected: str) -> None:
    stderr = refused_at_start(tmp_path, solr_server, site,
                              'auth = "kerberos"\n' + server.format(keytab=site.keytab))
    assert expected.format(keytab=site.keytab) in stderr


def test_a_replayed_token_is_refused(served: Served, site: Site, as_user: UseEnv) -> None:
    """A token caught on the wire opens one request, not a second (MIT's replay cache, kept in
    the KRB5RCACHEDIR the server runs with)."""
    token = spnego_token(site.alice, SERVICE, as_user)
    first = served.get("/api/status", headers={"Authorization": f"Negotiate {token}"})
    assert first.status_code == 200, first.text
    again = served.get("/api/status", headers={"Authorization": f"Negotiate {token}"})
    assert again.status_code == 401
    refused = [line for line in logged(served) if str(line["event"]).startswith("kerberos authentication refused")]
    assert "replay" in str(refused[-1]["event"]).lower()


# -- inside navd run ------------------------------------------------------------------------------

def test_navd_run_serves_kerberos_and_fails_closed_on_a_readable_keytab(tmp_path: Path, solr_server: EmbeddedSolr,
                                                                       index: SolrIndex, site: Site,
                                                                       as_user: UseEnv) -> None:
    port = free_port()
    server = f'enabled = true\nport = {port}\nauth = "kerberos"\nkeytab = "{site.keytab}"\nprincipal = "{SERVICE}"'
    config = write_server_config(tmp_path, solr_server, server)
    notify = Notifications(Path(f"/tmp/navd-krb-{os.getpid()}-{time.monotonic_ns()}.sock"))
    log = tmp_path / "run.log"
    proc = start_navd(["run"], config, log, {**site.server_env(), "NOTIFY_SOCKET": str(notify.path)})
    try:
        notify.wait_for("READY=1", START_SECONDS)
        as_user(site.alice)
        url = f"http://localhost:{port}/api/status"
        assert requests.get(url, timeout=30).status_code == 401
        answer = requests.get(url, auth=HTTPSPNEGOAuth(mutual_authentication=REQUIRED), timeout=30)
        assert answer.status_code == 200, answer.text
    finally:
        code = stop_navd(proc)
        notify.close()
    assert code == 0, log.read_text()

    readable = tmp_path / "readable.keytab"
    shutil.copyfile(site.keytab, readable)
    readable.chmod(0o640)
    config = write_server_config(tmp_path, solr_server, server.replace(str(site.keytab), str(readable)))
    result = subprocess.run([NAVD, "run"], env={**site.server_env(), "NAVD_CONFIG": str(config)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    # (navd run logs its start first, JSON on stderr) then the one line saying why it stopped
    last = result.stderr.splitlines()[-1]
    assert last.startswith("navd: config error: [server] keytab") and "(mode 0640)" in last, result.stderr


def test_a_missing_krb5_tool_is_an_error_naming_the_packages() -> None:
    """What the session's `kdc` fixture fails with (never a skip) where MIT Kerberos is missing."""
    with pytest.raises(DevServiceError, match=r"krb5kdc-missing not found: .*Debian: libkrb5-dev krb5-kdc "
                                              r"krb5-admin-server krb5-user"):
        krb5_tool("krb5kdc-missing")

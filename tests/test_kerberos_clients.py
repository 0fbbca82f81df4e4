"""Kerberos for navd's clients against a real MIT KDC whose tickets live 15 seconds (and
whose krb5.conf allows 1 second of clock skew, not 300): a client with a keytab outlives its
tickets (MIT's GSS-API gets new ones from the keytab), a kinit ticket expires for real, and no
ticket, an expired one or a keytab without the principal fail with one line. The SPNEGO service
is a real `navd serve` with auth = "kerberos" (a kerberised NameNode's WebHDFS:
tests/test_webhdfs_kerberos.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from navd.config import SolrConfig
from navd.errors import KerberosError, NavdError
from navd.extractors.yarn.extractor import make_session
from navd.extractors.yarn.settings import YarnConfig
from navd.index.client import SolrIndex
from navd.kerberos import spnego_auth
from navd.solr.server import EmbeddedSolr
from navd_devstack.kdc import DevKdc
from conftest import Served
from test_server_kerberos import SERVICE, Site, serve_kerberos

from conftest import past_a_ticket


@pytest.fixture(scope="module")
def site(short_kdc: DevKdc, tmp_path_factory: pytest.TempPathFactory) -> Site:
    return Site(short_kdc, tmp_path_factory.mktemp("kerberos-short"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex,
           site: Site) -> Iterator[Served]:
    with serve_kerberos(tmp_path_factory.mktemp("serve-short"), solr_server, site, SERVICE) as server:
        yield server


def test_a_keytab_client_outlives_its_tickets_and_a_kinit_ticket_expires(
        served: Served, site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key, value in {**site.kdc.env, "KRB5CCNAME": f"FILE:{tmp_path / 'kinit.ccache'}"}.items():
        monkeypatch.setenv(key, value)  # this process's GSS-API: the short KDC, a ccache of the test
    url = f"{served.url}/api/status"
    site.kdc.kinit("alice@NAVD.TEST", site.home / "alice.keytab", tmp_path / "kinit.ccache")
    kinit_auth = spnego_auth()  # no keytab: the ticket cache, as requests-gssapi alone does
    assert requests.get(url, auth=kinit_auth, timeout=30).status_code == 200
    keytab_auth = spnego_auth(keytab=str(site.home / "alice.keytab"), principal="alice@NAVD.TEST")
    assert requests.get(url, auth=keytab_auth, timeout=30).status_code == 200
    # The YARN extractor's session, from [yarn] as the daemon makes it (a kerberised RM answers
    # SPNEGO the way this server does): the same keytab renewal, no requests-kerberos of its own.
    yarn = make_session(YarnConfig(auth="kerberos", keytab=str(site.home / "alice.keytab"),
                                   principal="alice@NAVD.TEST"))
    assert yarn.get(url, timeout=30).status_code == 200
    for _ in range(2):  # two ticket lifetimes: the first renewal is no accident
        past_a_ticket()
        answer = requests.get(url, auth=keytab_auth, timeout=30)
        assert answer.status_code == 200, answer.text
        answer = yarn.get(url, timeout=30)
        assert answer.status_code == 200, answer.text
    # the kinit ticket is gone: requests-gssapi hands the server's 401 back; navd's auth says why
    kinit_auth = spnego_auth()
    assert requests.get(url, auth=kinit_auth, timeout=30).status_code == 401
    assert kinit_auth.failure == "Ticket expired"


def solr_request(served: Served, settings: dict[str, str]) -> str:
    """One GET of navd's Solr client (the client every command uses) to an authenticated route of
    the kerberised server; the one-line error it raises."""
    config = SolrConfig(url=f"{served.url}/api", auth="kerberos", retries=0, **settings)  # type: ignore[arg-type]
    with pytest.raises(NavdError) as raised:
        with SolrIndex(config) as index:
            index.request("GET", "entities/sales.t")
    assert "\n" not in str(raised.value)
    print(raised.value)  # shown by pytest -rP: what a user reads
    return str(raised.value)


def test_no_ticket_an_expired_one_and_a_wrong_keytab_are_one_line_each(
        served: Served, site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key, value in site.kdc.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'no-such.ccache'}")
    none = solr_request(served, {})
    assert "Kerberos login" in none and "No credentials were supplied" in none, none
    expired = tmp_path / "expired.ccache"
    site.kdc.kinit("alice@NAVD.TEST", site.home / "alice.keytab", expired)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{expired}")
    past_a_ticket()
    line = solr_request(served, {})
    assert "Kerberos login" in line and "Ticket expired" in line, line
    wrong = solr_request(served, {"keytab": str(site.home / "bob.keytab"), "principal": "alice@NAVD.TEST"})
    assert "[solr] keytab" in wrong and "alice@NAVD.TEST" in wrong, wrong


def test_a_keytab_without_the_principal_raises_one_line(site: Site) -> None:
    with pytest.raises(KerberosError, match="no Kerberos credentials for nobody@NAVD.TEST") as raised:
        spnego_auth(keytab=str(site.home / "alice.keytab"), principal="nobody@NAVD.TEST")
    assert "\n" not in str(raised.value)

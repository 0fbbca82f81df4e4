"""What a web page of another site, a rebound DNS name or a careless client can send to a real
`navd serve` (loopback, the OpenLineage intake on, over the session Solr), and what reaches Solr:
writes only as JSON, no write from another origin, no answer under a host name the server does
not have (reads too; the probes excepted), `nosniff` on every answer, /openapi.json behind the
login, no traceback for a NUL byte in the path, an XML body refused before anything parses it.
The browser cases run in a real Chromium (Debian's, driven by Playwright as tests/test_page.py):
a page served from another origin, and a page at a name resolved to this machine.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import subprocess
import threading
import uuid
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from openlineage.client.event_v2 import RunState
from playwright.sync_api import Playwright, Response, sync_playwright

from navd.config import ServerConfig, parse_config
from navd.errors import ConfigError
from navd.index.client import SolrIndex
from navd.server.request_checks import server_names, split_host_header
from navd.solr.server import EmbeddedSolr, free_port
from openlineage_events import HIVE, JOB_NAMESPACE, as_json, job_run
from test_page import CHROMIUM, CHROMIUM_ARGS
from conftest import NAVD, Served, serve_on_free_port, serving, write_server_config

#: a name the server is configured to answer under ([server] allowed_hosts)
ALIAS = "navd-alias.example"
#: a name its owner points at this machine: the DNS rebinding attacker's
EVIL = "evil.example"
#: a password long enough for any minimum a users file may ask
PASSWORD = "correct horse battery staple 42"
XXE = (b'<?xml version="1.0"?><!DOCTYPE q [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
       b"<q><query>&x;</query><cursorMark>*</cursorMark></q>")


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex) -> Iterator[Served]:
    """`navd serve` on 127.0.0.1 without auth (as a user starts it), the intake on, one alias."""
    del index  # the session's cores exist before the server writes to them
    tmp = tmp_path_factory.mktemp("checks")
    with serve_on_free_port(tmp, solr_server, f'allowed_hosts = ["{ALIAS}"]',
                            f'[cluster]\nname = "rc{os.getpid()}"\n[openlineage]\nenabled = true\n'
                            f'spool_dir = "{tmp / "spool"}"\n'
                            # the events' metastore is this cluster's: their tables land as Hive tables
                            f'[openlineage.namespaces]\n"{HIVE}" = "rc{os.getpid()}"\n') as served:
        yield served


class Event:
    """One OpenLineage run event of its own (job, run and database names no other test uses)."""

    def __init__(self, job: str) -> None:
        self.job, self.run_id, self.database = job, str(uuid.uuid4()), f"db{uuid.uuid4().hex[:8]}"
        self.body = json.dumps(as_json(job_run(self.run_id, job, RunState.COMPLETE, database=self.database)),
                               separators=(",", ":"))

    def landed(self, index: SolrIndex) -> int:
        """How many of its documents Solr holds: its execution and its output table."""
        for core in ("elements", "relations"):
            index.commit(core, soft=True)
        return (index.count("elements", f'qualifiedName:"openlineage://{JOB_NAMESPACE}/{self.job}/{self.run_id}"')
                + index.count("elements", f"qualifiedName:{self.database}.revenue@*"))


def post_event(served: Served, event: Event, headers: dict[str, str], body: bytes | None = None) -> requests.Response:
    return requests.post(f"{served.url}/api/v1/lineage", data=event.body.encode() if body is None else body,
                         headers=headers, timeout=60)


def port_of(served: Served) -> int:
    return int(served.url.rsplit(":", 1)[1])


def refused(answer: requests.Response, status: int, parameter: str, *shown: str) -> None:
    """`answer` is navd's one-line refusal: `status`, naming `parameter` and quoting `shown`."""
    assert answer.status_code == status, (answer.status_code, answer.text)
    body = answer.json()
    assert body["parameter"] == parameter and body["error"].startswith(f"{parameter}: "), body
    assert "\n" not in body["error"] and all(text in body["error"] for text in shown), body


# -- writes take JSON only --------------------------------------------------------------------------

@pytest.mark.parametrize("content_type", [
    "text/plain", "text/plain; charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "application/xml", "text/xml", "application/json; charset=ISO-8859-1", None])
def test_a_write_whose_body_is_not_json_is_415_and_nothing_lands(guarded: Served, index: SolrIndex,
                                                                 content_type: str | None) -> None:
    """The intake took any body that parsed as JSON, whatever it was declared (a form, text, XML):
    what a cross-site form or no-cors fetch sends without asking the server first."""
    event = Event("declared_" + (content_type or "nothing").split("/")[-1].split(";")[0].replace("-", "_"))
    answer = post_event(guarded, event, {"Content-Type": content_type} if content_type else {})
    refused(answer, 415, "Content-Type", *([] if content_type is None else [content_type]))
    assert answer.json()["allowed"] == ["application/json"]
    assert event.landed(index) == 0


def test_the_other_writes_take_json_only_too(guarded: Served) -> None:
    """Taints and sensitivity tags as the intake: a form or text body is 415 before the route
    reads it (the routes answered 400 for a field they could not find in it)."""
    for method, path, content_type in (("POST", "/api/taints", "text/plain"),
                                       ("PUT", "/api/sensitivity/tags", "application/x-www-form-urlencoded"),
                                       ("DELETE", "/api/taints?entity=x", "multipart/form-data; boundary=b"),
                                       ("POST", "/api/v9/entities/paging", "text/plain")):
        answer = requests.request(method, guarded.url + path, data=b'{"entity": "x", "level": "internal"}',
                                  headers={"Content-Type": content_type}, timeout=60)
        refused(answer, 415, "Content-Type", content_type)


def test_json_as_the_emitters_send_it_is_taken(guarded: Served, index: SolrIndex) -> None:
    """openlineage-python (`application/json`), the Java client and Spark listener (Apache
    HttpClient's `application/json; charset=UTF-8`), Spring's RestTemplate (no space), and
    gzip-encoded JSON (both clients' `compression = gzip`)."""
    import gzip

    for content_type in ("application/json", "application/json; charset=UTF-8", "application/json;charset=utf-8"):
        event = Event("emitted")
        answer = post_event(guarded, event, {"Content-Type": content_type})
        assert answer.status_code == 201, (content_type, answer.text)
        assert event.landed(index) == 2
    event = Event("emitted_gzip")
    answer = post_event(guarded, event, {"Content-Type": "application/json", "Content-Encoding": "gzip"},
                        gzip.compress(event.body.encode()))
    assert answer.status_code == 201, answer.text
    assert event.landed(index) == 2


def test_an_xml_body_is_refused_before_anything_parses_it(guarded: Served) -> None:
    """An XXE document to the Navigator paging route, the intake and a read: 415 naming its
    type (the paging route answered it as a body that is not JSON; nothing may parse it)."""
    for method, path, content_type in (("POST", "/api/v9/entities/paging", "application/xml"),
                                       ("POST", "/api/v1/lineage", "text/xml"),
                                       ("GET", "/api/entities", "application/xml")):
        answer = requests.request(method, guarded.url + path, data=XXE, headers={"Content-Type": content_type},
                                  timeout=60)
        refused(answer, 415, "Content-Type", content_type)
        assert "passwd" not in answer.text and "root:" not in answer.text


# -- no write from another origin ---------------------------------------------------------------------

def test_a_write_from_another_origin_is_403_and_nothing_lands(guarded: Served, index: SolrIndex) -> None:
    """A browser names the page's origin on every write; the intake took one from any."""
    for headers, parameter, shown in (({"Origin": "http://evil.example"}, "Origin", "http://evil.example"),
                                      ({"Origin": "null"}, "Origin", "null"),  # a sandboxed frame, a file:// page
                                      ({"Origin": f"http://127.0.0.1:{port_of(guarded) + 1}"}, "Origin", "127.0.0.1"),
                                      ({"Origin": guarded.url.replace("http:", "https:")}, "Origin", "https:"),
                                      ({"Sec-Fetch-Site": "cross-site"}, "Sec-Fetch-Site", "cross-site"),
                                      ({"Sec-Fetch-Site": "same-site"}, "Sec-Fetch-Site", "same-site")):
        event = Event("foreign_origin")
        refused(post_event(guarded, event, {"Content-Type": "application/json", **headers}), 403, parameter, shown)
        assert event.landed(index) == 0, headers
    cleared = requests.delete(f"{guarded.url}/api/taints", params={"entity": "x"}, timeout=60,
                              headers={"Origin": "http://evil.example"})
    refused(cleared, 403, "Origin", "evil.example")
    # the server's own page writes (its origin as the browser names it), and reads are not writes
    own = Event("own_origin")
    answer = post_event(guarded, own, {"Content-Type": "application/json", "Origin": guarded.url,
                                       "Sec-Fetch-Site": "same-origin"})
    assert answer.status_code == 201, answer.text
    assert own.landed(index) == 1 + 1
    assert requests.get(f"{guarded.url}/api/status", headers={"Origin": "http://evil.example"},
                        timeout=60).status_code == 200


# -- the server's own names only ------------------------------------------------------------------------

def test_a_host_the_server_does_not_have_is_400_even_for_reads(guarded: Served, index: SolrIndex) -> None:
    """DNS rebinding: a page at evil.example:PORT, its name pointed at 127.0.0.1, read and wrote
    as any local client; every route but the probes now refuses the name."""
    port = port_of(guarded)
    for method, path in (("GET", "/api/entities"), ("GET", "/api/status"), ("GET", "/"), ("GET", "/static/page.js"),
                         ("GET", "/openapi.json"), ("GET", "/metrics"), ("GET", "/nowhere")):
        answer = requests.request(method, guarded.url + path, headers={"Host": f"{EVIL}:{port}"}, timeout=60)
        refused(answer, 400, "Host", f"{EVIL}:{port}", "[server] allowed_hosts")
    event = Event("rebound")
    refused(post_event(guarded, event, {"Content-Type": "application/json", "Host": f"{EVIL}:{port}",
                                        "Origin": f"http://{EVIL}:{port}"}), 400, "Host", EVIL)
    assert event.landed(index) == 0
    for bad in ("", "evil.example:port", "a b", "[::1", "127.0.0.1:99999"):
        refused(requests.get(f"{guarded.url}/api/status", headers={"Host": bad}, timeout=60), 400, "Host")
    # the probes answer under any name: load balancers probe by whatever address they know
    for probe in ("/healthz", "/readyz"):
        assert requests.get(guarded.url + probe, headers={"Host": f"{EVIL}:{port}"}, timeout=60).status_code == 200
    # the server's names, any port, and [server] allowed_hosts
    for host in (f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST.", f"[::1]:{port}",
                 f"{ALIAS}:{port}", ALIAS.upper(), "localhost:1"):
        answer = requests.get(f"{guarded.url}/api/status", headers={"Host": host}, timeout=60)
        assert answer.status_code == 200, (host, answer.text)


def test_the_names_a_server_answers_under() -> None:
    """Per bind: loopback names on a loopback host; the machine's names (given here) off it;
    the address a connection arrived on whatever the bind; [server] allowed_hosts on any."""
    machine = ("edge1", "Edge1.Example.COM")
    loopback = server_names(ServerConfig(allowed_hosts=("navd.example.com",)), machine)
    assert loopback.names == {"localhost", "127.0.0.1", "::1", "navd.example.com"}
    assert not loopback.accept("edge1", "127.0.0.1")
    assert loopback.accept("127.0.0.1", None) and not loopback.accept("127.0.0.2", "127.0.0.1")
    wildcard = server_names(ServerConfig(host="0.0.0.0", auth="basic", cert_file="c", key_file="k"), machine)
    assert wildcard.names == {"localhost", "edge1", "edge1.example.com"}
    assert wildcard.accept("10.0.0.5", "10.0.0.5") and wildcard.accept("10.0.0.5", "::ffff:10.0.0.5")
    assert not wildcard.accept("10.0.0.6", "10.0.0.5") and not wildcard.accept(EVIL, "10.0.0.5")
    one = server_names(ServerConfig(host="10.0.0.5", auth="basic", cert_file="c", key_file="k"), ())
    assert one.names == {"localhost", "10.0.0.5"}
    assert split_host_header("[::1]:7187") == ("::1", 7187) and split_host_header("Navd.Example.COM.") == (
        "navd.example.com", None)
    for bad in ("", "::1", "a_b c", "host:x", "[::1]x", "évil.example", "*.example.com", "h:1:2"):
        assert split_host_header(bad) is None, bad


@pytest.mark.parametrize("entry", ["http://navd.example.com", "navd.example.com:7187", "*.example.com", "",
                                   "navd example", "navd.example.com/"])
def test_allowed_hosts_takes_names_and_addresses_only(entry: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config({"server": {"allowed_hosts": ["navd.example.com", entry]}}, source="navd.toml", environ={})
    assert str(raised.value).startswith(f"navd.toml: [server] allowed_hosts: {entry!r} is not a host name")
    taken = parse_config({"server": {"allowed_hosts": ["Navd.Example.COM", "10.0.0.5", "::1"]}}, environ={})
    assert taken.server.allowed_hosts == ("Navd.Example.COM", "10.0.0.5", "::1")


# -- every answer: nosniff; the OpenAPI description behind the login; bad bytes --------------------------

def test_every_answer_says_nosniff_once(guarded: Served) -> None:
    """The page had it; the JSON API, its errors and the refusals now too."""
    for method, path, kwargs in (("GET", "/api/status", {}), ("GET", "/api/entities?rows=0", {}),
                                 ("GET", "/nowhere", {}), ("GET", "/openapi.json", {}), ("GET", "/", {}),
                                 ("GET", "/static/page.js", {}), ("GET", "/metrics", {}), ("GET", "/healthz", {}),
                                 ("POST", "/api/v1/lineage", {"data": b"x", "headers": {"Content-Type": "text/plain"}}),
                                 ("GET", "/api/status", {"headers": {"Host": EVIL}})):
        answer = requests.request(method, guarded.url + path, timeout=60, **kwargs)
        assert answer.raw.headers.getlist("X-Content-Type-Options") == ["nosniff"], (path, answer.status_code)


def test_every_answer_says_how_long_navd_took_once(guarded: Served) -> None:
    """Server-Timing `app;dur=<ms>`: a browser shows it in the request's resource timing."""
    for method, path, kwargs in (("GET", "/api/status", {}), ("GET", "/nowhere", {}), ("GET", "/", {}),
                                 ("GET", "/healthz", {}), ("GET", "/api/status", {"headers": {"Host": EVIL}})):
        answer = requests.request(method, guarded.url + path, timeout=60, **kwargs)
        timings = answer.raw.headers.getlist("Server-Timing")
        assert len(timings) == 1 and re.fullmatch(r"app;dur=\d+\.\d", timings[0]), (path, timings)


def test_the_openapi_description_needs_the_login_as_the_api(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    """It lists every route and parameter; only the probes are open (docs/operations/server.md)."""
    users = tmp_path / "users"
    port = free_port()
    config = write_server_config(tmp_path, solr_server, f'port = {port}\nauth = "basic"\nusers_file = "{users}"')
    subprocess.run([NAVD, "server", "add-user", "olga"], input=PASSWORD + "\n", capture_output=True, text=True,
                   env={**os.environ, "NAVD_CONFIG": str(config)}, timeout=60, check=True)
    url = f"http://127.0.0.1:{port}"
    with serving(config, url):
        closed = requests.get(f"{url}/openapi.json", timeout=60)
        assert closed.status_code == 401 and closed.headers["WWW-Authenticate"].startswith("Basic")
        assert "paths" not in closed.text
        spec = requests.get(f"{url}/openapi.json", auth=("olga", PASSWORD), timeout=60)
        assert spec.status_code == 200 and "/api/lineage" in spec.json()["paths"]
        assert "/openapi.json" not in spec.json()["paths"]
        assert requests.get(f"{url}/healthz", timeout=60).json() == {"status": "ok"}


def test_a_nul_byte_in_the_path_is_400_without_a_traceback(guarded: Served) -> None:
    """`/static/page.js%00.md` reached the file lookup, which raised: a 500 and a traceback."""
    for path in ("/static/page.js%00.md", "/static/%01page.js", "/api/entities/sales.t%00@x", "/%7F"):
        answer = requests.get(guarded.url + path, timeout=60)
        refused(answer, 400, "path", "control character")
    assert "Traceback" not in guarded.log.read_text()
    assert requests.get(guarded.url + "/static/page.js%2500.md", timeout=60).status_code == 404  # a name, not NUL


# -- in a real browser ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make setup` installs Debian's chromium", pytrace=False)
    with sync_playwright() as driver:
        yield driver


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


@pytest.fixture
def other_origin(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A static web server on another loopback port: the other site's URL and its directory."""
    root = tmp_path / "site"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, name="other-origin", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join(30)


def attack_page(intake: str, plain: Event, untyped: Event, form: Event) -> str:
    """A page that writes to `intake` as any site can without asking: a no-cors fetch of
    text/plain, one of an untyped Blob, and a form of enctype text/plain whose one field makes
    the body JSON (`{...,"pad":"="}`)."""
    name = form.body[:-1] + ',"pad":"'
    return f"""<!doctype html><html><head><title>other site</title></head><body>
<iframe name="sink"></iframe>
<form id="form" method="post" enctype="text/plain" action="{html.escape(intake)}" target="sink">
<input type="hidden" name="{html.escape(name)}" value='"}}'></form>
<script>
const intake = {json.dumps(intake)};
Promise.allSettled([
  fetch(intake, {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}, body: {json.dumps(plain.body)}}}),
  fetch(intake, {{method: "POST", mode: "no-cors", body: new Blob([{json.dumps(untyped.body)}])}}),
]).then(() => {{ document.getElementById("form").submit(); document.title = "sent"; }});
</script></body></html>"""


def _posted(intake: str, kind: str, content_type: str | None) -> Any:
    """A predicate for the answer to a POST to `intake` of one `kind` (fetch or document) sent
    with `content_type` (None: none; the untyped Blob's body is not shown to Playwright)."""
    def match(response: Response) -> bool:
        request = response.request
        return (request.method == "POST" and response.url == intake and request.resource_type == kind
                and request.headers.get("content-type") == content_type)
    return match


def test_a_page_of_another_origin_cannot_write(playwright: Playwright, guarded: Served, index: SolrIndex,
                                               other_origin: tuple[str, Path]) -> None:
    """Chromium on a page of another loopback port, as on any site: its fetches and its form
    reach navd (a no-cors request is sent, only its answer is hidden) and are refused; Solr holds
    nothing of them. navd's own page writes the same event as JSON, and it lands."""
    site, root = other_origin
    intake = f"{guarded.url}/api/v1/lineage"
    plain, untyped, form = Event("xsite_plain"), Event("xsite_untyped"), Event("xsite_form")
    (root / "attack.html").write_text(attack_page(intake, plain, untyped, form))
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        page = browser.new_page()
        with page.expect_response(_posted(intake, "fetch", "text/plain")) as by_fetch, \
                page.expect_response(_posted(intake, "fetch", None)) as by_blob, \
                page.expect_response(_posted(intake, "document", "text/plain")) as by_form:
            page.goto(f"{site}/attack.html")
        page.wait_for_function("() => document.title === 'sent'")
        statuses = [answer.value.status for answer in (by_fetch, by_blob, by_form)]
        assert statuses == [403, 403, 403], statuses
        origin = by_form.value.request.all_headers()["origin"]
        assert origin == site, origin  # what navd judged: the page's origin, as the browser sent it

        own = Event("own_page")
        page.goto(guarded.url + "/")
        status = page.evaluate("async ([url, body]) => (await fetch(url, {method: 'POST', body, "
                               "headers: {'Content-Type': 'application/json'}})).status", [intake, own.body])
        assert status == 201
    finally:
        browser.close()
    assert [event.landed(index) for event in (plain, untyped, form)] == [0, 0, 0]
    assert own.landed(index) == 2


def test_a_rebound_name_gets_neither_reads_nor_writes(playwright: Playwright, guarded: Served,
                                                      index: SolrIndex) -> None:
    """Chromium resolving evil.example (and the configured alias) to 127.0.0.1, as a rebinding
    DNS server answers: at http://evil.example:PORT/ the page's own same-origin requests (no CORS
    applies) read and write nothing; under the alias navd's page is served."""
    port = port_of(guarded)
    rules = f"--host-resolver-rules=MAP {EVIL} 127.0.0.1, MAP {ALIAS} 127.0.0.1"
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, rules], headless=True)
    write = Event("rebound_page")
    try:
        page = browser.new_page()
        loaded = page.goto(f"http://{EVIL}:{port}/")
        assert loaded is not None and loaded.status == 400
        read = page.evaluate("async () => { const r = await fetch('/api/entities?query=*:*&rows=5'); "
                             "return [r.status, await r.text()]; }")
        assert read[0] == 400 and json.loads(read[1])["parameter"] == "Host", read
        status = page.evaluate("async (body) => (await fetch('/api/v1/lineage', {method: 'POST', body, "
                               "headers: {'Content-Type': 'application/json'}})).status", write.body)
        assert status == 400
        alias = page.goto(f"http://{ALIAS}:{port}/")
        assert alias is not None and alias.status == 200 and "navd" in page.title()
    finally:
        browser.close()
    assert write.landed(index) == 0

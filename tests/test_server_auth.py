"""Logins and roles on a real `navd serve` with `[server] auth = "basic"` over the session Solr:
failed logins limited per client address and per user name (429 with Retry-After, the same for
names that exist and names that do not), password hashing on threads of its own so the probes
and logged-in users are answered during a flood of wrong passwords, roles (viewer, editor,
admin; a line of the users file without one is an admin) checked on every write route, and the
rules `navd server add-user` applies to names and passwords.

Clients come from several loopback addresses (127.0.0.x; the server listens on 127.0.0.1) so
one test's exhausted address is not another's."""

from __future__ import annotations

import base64
import http.client
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import RunState

from navd.index.client import SolrIndex
from navd.server.app import create_app
from navd.server.users import hash_password
from navd.solr.server import EmbeddedSolr, free_port
from openlineage_events import as_json, job_run
from conftest import NAVD, Served, serving, write_server_config

MAX_FAILURES = 5
PASSWORDS = {"vera": "vera password 1", "eddie": "eddie password 1", "ada": "ada password 11",
             "target": "target password"}


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


def ask(port: int, method: str, path: str, *, user: str | None = None, password: str | None = None,
        source: str = "127.0.0.1", body: object = None) -> Answer:
    """One request on a connection of its own from `source` (a loopback address)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120, source_address=(source, 0))
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        connection.close()


def add_users(env: dict[str, str]) -> None:
    for name, role in (("vera", None), ("eddie", "editor"), ("ada", "admin"), ("target", None)):
        added = subprocess.run([NAVD, "server", "add-user", name, *(["--role", role] if role else [])],
                               input=PASSWORDS[name] + "\n", env=env, capture_output=True, text=True, timeout=120)
        assert added.returncode == 0, added.stderr


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex) -> Iterator[Served]:
    """Basic auth, MAX_FAILURES failed logins an hour, the OpenLineage intake on; users of each
    role and a line written before roles (no role, a short password)."""
    tmp = tmp_path_factory.mktemp("auth")
    users = tmp / "users"
    port = free_port()
    config = write_server_config(tmp, solr_server, f'port = {port}\nauth = "basic"\nusers_file = "{users}"\n'
                                            f"max_login_failures = {MAX_FAILURES}\nlogin_window_seconds = 3600\n"
                                            "hash_threads = 1", "[openlineage]\nenabled = true\n")
    add_users({**os.environ, "NAVD_CONFIG": str(config)})
    with users.open("a") as out:  # as an earlier navd wrote it: NAME:HASH, no role
        out.write(f"olduser:{hash_password('pw')}\n")
    with serving(config, f"http://127.0.0.1:{port}") as served:
        yield served


def port_of(served: Served) -> int:
    return int(served.url.rsplit(":", 1)[1])


def concurrently(count: int, call: Any) -> list[Answer]:
    """`call(i)` for i in range(count), all started together on threads of their own."""
    start_together = threading.Barrier(count)
    answers: list[Answer | None] = [None] * count

    def run(i: int) -> None:
        start_together.wait()
        answers[i] = call(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert all(answer is not None for answer in answers)
    return answers  # type: ignore[return-value]


def test_failed_logins_are_limited_per_address_and_per_user_with_429_and_retry_after(limited: Served) -> None:
    port = port_of(limited)
    # target logged in before the flood: what it sent is remembered
    assert ask(port, "GET", "/api/status", user="target", password=PASSWORDS["target"],
               source="127.0.0.10").status == 200

    def wrong(user: str, source: str) -> Any:
        return lambda i: ask(port, "GET", "/api/status", user=user, password=f"wrong password {i}", source=source)

    flood = concurrently(4 * MAX_FAILURES, wrong("target", "127.0.0.11"))
    statuses = sorted(answer.status for answer in flood)
    # counted when they start, not when their hash ends: of 20 sent at once, exactly 5 were tried
    assert statuses == [401] * MAX_FAILURES + [429] * (3 * MAX_FAILURES), statuses
    limited_answers = [answer for answer in flood if answer.status == 429]
    for answer in limited_answers:
        assert 0 < int(answer.headers["retry-after"]) <= 3600
        assert answer.json()["error"].startswith("too many failed logins from this address or for this user")
        assert "www-authenticate" not in answer.headers
    # the address is limited, whoever logs in from it
    assert ask(port, "GET", "/api/status", user="eddie", password=PASSWORDS["eddie"],
               source="127.0.0.11").status == 429
    # from another address: a valid user gets in, and so does target with what it sent before
    # the flood; a guess at target's password is still refused there (the name is limited)
    assert ask(port, "GET", "/api/status", user="eddie", password=PASSWORDS["eddie"], source="127.0.0.12").status == 200
    assert ask(port, "GET", "/api/status", user="target", password=PASSWORDS["target"],
               source="127.0.0.12").status == 200
    assert ask(port, "GET", "/api/status", user="target", password="another guess 1",
               source="127.0.0.12").status == 429
    # a name that does not exist is counted and answered alike: nothing tells it from a real one
    ghost = concurrently(4 * MAX_FAILURES, wrong("ghost", "127.0.0.13"))
    assert sorted(answer.status for answer in ghost) == statuses
    assert {answer.json()["error"].split(":")[0] for answer in ghost if answer.status == 429} == \
        {answer.json()["error"].split(":")[0] for answer in limited_answers}
    text = limited.log.read_text()
    logged = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    limits = [line for line in logged if line["event"] == "failed logins limited"]
    # once per key and window, not once per refused request
    assert {line["key"] for line in limits} >= {"client 127.0.0.11", "user target", "client 127.0.0.13", "user ghost"}
    assert len(limits) == len({line["key"] for line in limits})
    assert "wrong password" not in text and PASSWORDS["target"] not in text


def test_a_user_name_is_compared_nfkc_normalised(limited: Served) -> None:
    port = port_of(limited)
    # full-width letters are vera's name; a Cyrillic look-alike is nobody's
    assert ask(port, "GET", "/api/status", user="ｖｅｒａ", password=PASSWORDS["vera"], source="127.0.0.30").status == 200
    assert ask(port, "GET", "/api/status", user="v\u0435ra", password=PASSWORDS["vera"],
               source="127.0.0.30").status == 401


def lineage_event(name: str) -> dict[str, Any]:
    return as_json(job_run("0190a4e1-0b2c-7d3e-8f40-5a6b7c8d9e01", f"roles.{name}", RunState.COMPLETE))


@pytest.mark.parametrize(("method", "path", "body", "needed"), [
    ("POST", "/api/v1/lineage", "event", "editor"),
    ("PUT", "/api/sensitivity/tags", {"entity": "sales.orders.amount", "level": "pii"}, "editor"),
    ("DELETE", "/api/sensitivity/tags?entity=sales.orders.amount", None, "editor"),
    ("POST", "/api/taints", {"entity": "sales.orders", "reason": "late"}, "editor"),
    ("DELETE", "/api/taints/no-such-taint", None, "editor"),
    ("DELETE", "/api/taints?entity=sales.orders", None, "editor"),
])
def test_a_viewer_is_refused_every_write_with_403_naming_the_role(limited: Served, method: str, path: str,
                                                                   body: object, needed: str) -> None:
    answer = ask(port_of(limited), method, path, user="vera", password=PASSWORDS["vera"], source="127.0.0.20",
                 body=lineage_event("viewer") if body == "event" else body)
    assert answer.status == 403, answer.body
    route = path.split("?")[0].replace("no-such-taint", "{taint_id}")
    assert answer.json() == {"error": f"{method} {route} needs the {needed} role; vera has the viewer role",
                             "parameter": None, "needed_role": needed}


def test_reads_need_a_viewer_and_writes_an_editor_or_a_line_without_a_role(limited: Served) -> None:
    port = port_of(limited)

    def as_user(user: str, method: str, path: str, body: object = None) -> Answer:
        password = "pw" if user == "olduser" else PASSWORDS[user]
        return ask(port, method, path, user=user, password=password, source="127.0.0.21", body=body)

    assert as_user("vera", "GET", "/api/entities?query=*:*&rows=1").status == 200
    # Navigator's paging is a read sent as POST
    paging = as_user("vera", "POST", "/api/v9/entities/paging", {"query": "*:*", "limit": 1})
    assert paging.status == 200, paging.body
    for user in ("eddie", "ada", "olduser"):
        posted = as_user(user, "POST", "/api/v1/lineage", lineage_event(user))
        assert posted.status == 201, (user, posted.body)
    assert as_user("eddie", "DELETE", "/api/taints/no-such-taint").status == 200
    # the line written before roles keeps working, as an admin, and the admin is told to give it one
    warnings = [json.loads(line)["event"] for line in limited.log.read_text().splitlines()
                if line.startswith("{") and "without a role" in line]
    assert warnings and "olduser" in warnings[0] and "navd server set-role" in warnings[0]


def test_every_write_route_has_its_role_in_the_one_table(solr_config: Any, tmp_path: Path) -> None:
    """A write route missing from WRITE_ROLES would need admin (fail closed); each one is listed
    on purpose, and the table names no route that does not exist."""
    import dataclasses

    from navd.config import NavdConfig, OpenLineageConfig
    from navd.openlineage.intake import Intake
    from navd.server.roles import WRITE_ROLES, Role, required_role

    config = dataclasses.replace(NavdConfig(), solr=solr_config,
                                 openlineage=OpenLineageConfig(enabled=True, spool_dir=str(tmp_path / "spool")))
    with SolrIndex(solr_config) as index:
        app = create_app(config, index, Intake(config, index))
    # every route of the app, as its OpenAPI description lists them (route templates)
    writes = {(method.upper(), path) for path, operations in app.openapi()["paths"].items()
              for method in operations if method.upper() not in ("GET", "HEAD", "OPTIONS")}
    assert writes == set(WRITE_ROLES)
    assert required_role("GET", "/api/anything") is Role.VIEWER
    assert required_role("POST", "/api/a/new/write") is Role.ADMIN


# -- hashing apart from the request threads --------------------------------------------------------

FLOOD = 80


@pytest.fixture(scope="module")
def flooded(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex) -> Iterator[Served]:
    """One hash thread and no practical limit on failures: every wrong password is hashed."""
    tmp = tmp_path_factory.mktemp("flood")
    users = tmp / "users"
    port = free_port()
    config = write_server_config(tmp, solr_server, f'port = {port}\nauth = "basic"\nusers_file = "{users}"\n'
                                            "max_login_failures = 100000\nhash_threads = 1")
    add_users({**os.environ, "NAVD_CONFIG": str(config)})
    with serving(config, f"http://127.0.0.1:{port}") as served:
        yield served


def test_probes_and_a_logged_in_user_are_answered_while_wrong_passwords_keep_the_hashing_busy(
        flooded: Served) -> None:
    """80 wrong passwords sent at once: twice the 40 request threads, and with one hash thread
    they are verified one after another. /healthz, /readyz and a logged-in user's search are
    answered before half of them are: they wait for no hash and no request thread the flood
    holds (by order of answers, not by time)."""
    port = port_of(flooded)
    assert ask(port, "GET", "/api/entities?rows=1", user="vera", password=PASSWORDS["vera"]).status == 200
    answered = []
    lock = threading.Lock()
    first = threading.Event()

    def guess(i: int) -> Answer:
        answer = ask(port, "GET", "/api/status", user=f"nobody{i}", password=f"wrong password {i}")
        with lock:
            answered.append(i)
        first.set()
        return answer

    flood: list[Answer] = []
    flooding = threading.Thread(target=lambda: flood.extend(concurrently(FLOOD, guess)))
    flooding.start()
    try:
        assert first.wait(300), "no wrong password was answered"
        seen = {}
        for name, path, user in (("healthz", "/healthz", None), ("readyz", "/readyz", None),
                                 ("search", "/api/entities?rows=1", "vera")):
            answer = ask(port, "GET", path, user=user, password=PASSWORDS.get(user or ""))
            assert answer.status == 200, (name, answer.body)
            with lock:
                seen[name] = len(answered)
    finally:
        flooding.join(600)
    assert sorted(answer.status for answer in flood) == [401] * FLOOD
    assert all(count < FLOOD // 2 for count in seen.values()), seen


# -- names and passwords -------------------------------------------------------------------------

def test_add_user_refuses_short_passwords_and_look_alike_names_and_sets_roles(tmp_path: Path,
                                                                             solr_server: EmbeddedSolr) -> None:
    users = tmp_path / "users"
    env = {**os.environ, "NAVD_CONFIG": str(write_server_config(tmp_path, solr_server, f'auth = "basic"\n'
                                                                                 f'users_file = "{users}"'))}

    def navd(*args: str, password: str = "a long password") -> subprocess.CompletedProcess[str]:
        return subprocess.run([NAVD, "server", *args], input=password + "\n", env=env, capture_output=True,
                              text=True, timeout=120)

    short = navd("add-user", "alice", password="x" * 11)
    assert (short.returncode, short.stderr) == (2, "navd: error: password: at least 12 characters, got 11\n")
    cyrillic = navd("add-user", "\u0430lice")  # a Cyrillic a
    assert cyrillic.returncode == 2 and cyrillic.stderr.count("\n") == 1
    assert "'\\u0430lice'" in cyrillic.stderr and "ASCII letters" in cyrillic.stderr
    assert not users.exists()
    added = navd("add-user", "ａｌｉｃｅ")  # full-width letters: NFKC makes them alice
    assert added.returncode == 0 and added.stdout.startswith(f"added alice in {users} (role viewer)"), added
    assert users.read_text().startswith("alice:scrypt$") and users.read_text().endswith(":viewer\n")
    assert navd("add-user", "alice", "--role", "editor", password="another password").returncode == 0
    assert users.read_text().endswith(":editor\n")
    assert navd("add-user", "alice", password="a third password").returncode == 0  # the role is kept
    assert users.read_text().endswith(":editor\n")
    assert navd("set-role", "alice", "admin").returncode == 0 and users.read_text().endswith(":admin\n")
    unknown = navd("set-role", "bob", "viewer")
    assert unknown.returncode == 2 and unknown.stderr.startswith("navd: error: user 'bob': not in ")
    wrong_role = navd("set-role", "alice", "root")
    assert wrong_role.returncode == 2 and "invalid choice: 'root'" in wrong_role.stderr

"""Connections of a real `navd serve`, driven with raw sockets: idle connections and slowloris
ones (a header line every half second, never the end of the head) are closed within
`[server] header_timeout_seconds` and the server's file descriptors return to what they were;
past `max_connections` a connection is answered 503 at once; a body that trickles in is answered
408 after `body_timeout_seconds`; a kept-alive connection closes after `keep_alive_seconds`; a
`max_connections` the process's open-file limit cannot hold stops the start with one line."""

from __future__ import annotations

import os
import resource
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from navd.solr.server import EmbeddedSolr, free_port
from conftest import NAVD, Served, serving, write_server_config

IDLE, SLOW = 200, 50
HEADER_SECONDS, BODY_SECONDS, KEEP_ALIVE_SECONDS = 2, 3, 2
#: how long the test waits for what the server must do within a few seconds: a bound on
#: waiting on a loaded host, not a measurement
BOUND_SECONDS = 120


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("connections")
    port = free_port()
    config = write_server_config(tmp, solr_server, f"port = {port}\nmax_connections = {IDLE + SLOW}\n"
                                            f"header_timeout_seconds = {HEADER_SECONDS}\n"
                                            f"body_timeout_seconds = {BODY_SECONDS}\n"
                                            f"keep_alive_seconds = {KEEP_ALIVE_SECONDS}")
    with serving(config, f"http://127.0.0.1:{port}") as server:
        yield server


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def settled_descriptors(pid: int) -> int:
    """The server's descriptors once two readings half a second apart agree (a probe's
    connection closing meanwhile would skew a baseline)."""
    deadline = time.monotonic() + BOUND_SECONDS
    previous = descriptors(pid)
    while True:
        time.sleep(0.5)
        current = descriptors(pid)
        if current == previous:
            return current
        assert time.monotonic() < deadline, "the server's descriptors never settled"
        previous = current


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + BOUND_SECONDS
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def connect(served: Served) -> socket.socket:
    return socket.create_connection(("127.0.0.1", int(served.url.rsplit(":", 1)[1])), timeout=BOUND_SECONDS)


def read_to_end(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def trickle_until_closed(socks: list[socket.socket], line: bytes) -> dict[socket.socket, bytes]:
    """Send `line` on every socket each half second, as a slowloris client does, until the server
    has closed each; what each received."""
    received = {sock: b"" for sock in socks}
    open_ = set(socks)
    deadline = time.monotonic() + BOUND_SECONDS
    while open_:
        assert time.monotonic() < deadline, f"{len(open_)} of {len(socks)} trickling connections still open"
        readable, _, _ = select.select(list(open_), [], [], 0.5)
        for sock in readable:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            received[sock] += chunk
            if not chunk:
                open_.discard(sock)
        for sock in list(open_):
            try:
                sock.sendall(line)
            except (BrokenPipeError, ConnectionResetError):  # closed: what it sent is still to read
                pass
    return received


def test_idle_and_slowloris_connections_are_closed_and_the_descriptors_return(served: Served) -> None:
    pid = served.proc.pid
    baseline = settled_descriptors(pid)
    idle = [connect(served) for _ in range(IDLE)]
    slow = [connect(served) for _ in range(SLOW)]
    try:
        for sock in slow:
            sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        wait_for(lambda: descriptors(pid) >= baseline + IDLE + SLOW, "the server did not accept them all")
        # one more than max_connections: answered at once, and closed
        with connect(served) as extra:
            refused = read_to_end(extra)
        assert refused.startswith(b"HTTP/1.1 503 ") and b"[server] max_connections (250)" in refused
        answers = trickle_until_closed(slow, b"X-Padding: slowloris\r\n")
        for answer in answers.values():
            assert answer.startswith(b"HTTP/1.1 408 ") and b"header_timeout_seconds (2 s)" in answer, answer
        for sock in idle:  # not a byte sent: closed without an answer
            assert read_to_end(sock) == b""
    finally:
        for sock in idle + slow:
            sock.close()
    wait_for(lambda: descriptors(pid) <= baseline, f"descriptors stayed above {baseline}")
    # a kept-alive connection: answered, then closed once idle
    with connect(served) as kept:
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = read_to_end(kept)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b'{"status":"ok"}')


def test_a_body_that_trickles_in_is_answered_408_and_the_route_sees_the_client_gone(served: Served) -> None:
    with connect(served) as sock:
        # Navigator's paging reads its body: 1000 bytes announced, one sent each half second
        sock.sendall(b"POST /api/v9/entities/paging HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        answer = trickle_until_closed([sock], b" ")[sock]
    assert answer.startswith(b"HTTP/1.1 408 ") and b"body_timeout_seconds (3 s)" in answer, answer
    wait_for(lambda: "client gone before its request was read" in served.log.read_text(),
             "the route's disconnect was not logged")


def test_max_connections_beyond_the_open_file_limit_stops_the_start_in_one_line(tmp_path: Path,
                                                                               solr_server: EmbeddedSolr) -> None:
    from navd.server.connections import RESERVED_DESCRIPTORS

    config = write_server_config(tmp_path, solr_server, f"port = {free_port()}\nmax_connections = 1000")
    limit = 1024

    def lower_the_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    result = subprocess.run([NAVD, "serve"], env={**os.environ, "NAVD_CONFIG": str(config)}, capture_output=True,
                            text=True, timeout=BOUND_SECONDS, preexec_fn=lower_the_limit)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr == (f"navd: config error: [server] max_connections: 1000 connections and "
                             f"{RESERVED_DESCRIPTORS} files of navd's own need {1000 + RESERVED_DESCRIPTORS} open "
                             f"files, above this process's limit of {limit} (systemd LimitNOFILE=, ulimit -n): "
                             "lower it or raise the limit\n")

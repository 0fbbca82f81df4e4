"""Limits on the server's connections, enforced where uvicorn reads them: a cap on connections
open at once and deadlines for a request's head and body.

uvicorn closes a connection idle after a response (`timeout_keep_alive`), but waits forever for
the first request of a new connection and for the rest of a head or body that trickles in (the
slowloris attack: a few bytes every few seconds keep a connection, and its file descriptor,
forever). Its `limit_concurrency` answers 503 to the request of a connection past the limit but
leaves the connection itself open. So navd runs uvicorn's h11 protocol with:

- `[server] max_connections`: a connection past it is answered 503 and closed at once;
- `[server] header_timeout_seconds`: the request line and headers must arrive within it, counted
  from the connection's opening or, on a kept-alive connection, from the next request's first
  byte; else 408 (or, when not a byte came, a plain close);
- `[server] body_timeout_seconds`: the body must arrive within it of the head; the clock waits
  while the server itself holds the reading back (the route has not taken what came yet); else
  408 and the connection closed, and the route sees the client gone.

The h11 protocol always (not httptools, even when installed): one parser to reason about.
TLS handshakes happen before uvicorn sees a connection and keep asyncio's own 60 s limit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import resource
from typing import ClassVar

import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

from navd.config import ServerConfig
from navd.errors import ConfigError
from navd.logs import get_logger
from navd.server.request_checks import RESPONSE_HEADERS

log = get_logger("navd.server")
#: file descriptors navd needs besides the server's connections: its listening sockets, the
#: Solr and source clients' pools, state and lock files, logs, the spool
RESERVED_DESCRIPTORS = 512
#: connections refused over max_connections are logged at most this often
REFUSALS_LOG_SECONDS = 60.0


@dataclasses.dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int
    header_seconds: float
    body_seconds: float

    @classmethod
    def of(cls, server: ServerConfig) -> ConnectionLimits:
        return cls(server.max_connections, server.header_timeout_seconds, server.body_timeout_seconds)


def limited_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with `limits` (the class uvicorn.Config takes as `http`)."""
    return type("LimitedH11Protocol", (LimitedH11Protocol,), {"limits": limits, "refusals": [-math.inf, 0]})


def _response(status: int, reason: str, message: str) -> bytes:
    """navd's error body, written before any route runs (so without Guard: its headers here)."""
    body = orjson.dumps({"error": message, "parameter": None})
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            + "".join(f"{name.decode()}: {value.decode()}\r\n" for name, value in RESPONSE_HEADERS)
            + "connection: close\r\n\r\n")
    return head.encode("latin-1") + body


class LimitedH11Protocol(H11Protocol):
    limits: ClassVar[ConnectionLimits]
    #: [when the last warning was logged, connections refused since]: one per server
    refusals: ClassVar[list[float]]
    _deadline: asyncio.TimerHandle | None = None
    #: the request whose head has arrived last (None before the first): a new one in self.cycle
    #: means a head completed
    _seen: RequestResponseCycle | None = None
    _reading_body = False
    _head_started = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._refused()
            self._close(503, "Service Unavailable",
                        f"too many connections: [server] max_connections ({self.limits.max_connections}) are open")
            return
        self._arm(self.limits.header_seconds)

    def _refused(self) -> None:
        """One warning a minute at most, with how many connections were refused since the last."""
        counter = self.refusals
        counter[1] += 1
        now = self.loop.time()
        if now - counter[0] >= REFUSALS_LOG_SECONDS:
            log.warning("connections refused: [server] max_connections are open", refused=int(counter[1]),
                        max_connections=self.limits.max_connections)
            counter[0], counter[1] = now, 0

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _answering(self) -> bool:
        """A request's head has come and its answer is not complete (a route may take long)."""
        return self.cycle is not None and not self.cycle.response_complete

    def data_received(self, data: bytes) -> None:
        if not self._answering() and self._deadline is None:
            # the next request on a kept-alive connection: its head is timed from its first byte
            # (bytes pipelined behind a request still being answered wait for its answer)
            self._arm(self.limits.header_seconds)
        self._head_started = True
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        self._disarm()
        self._reading_body = False
        self._head_started = False
        super().on_response_complete()  # arms uvicorn's keep-alive timer; may start a pipelined request
        self._follow()

    def _follow(self) -> None:
        """Move the deadline along with what has arrived: a head completed stops the head's clock
        and, with a body to come, starts the body's; a body completed stops it."""
        cycle = self.cycle
        if cycle is not None and cycle is not self._seen:
            self._seen = cycle
            self._disarm()
            self._reading_body = cycle.more_body and not cycle.response_complete
            if self._reading_body:
                self._arm(self.limits.body_seconds)
        elif self._reading_body and cycle is not None and not cycle.more_body:
            self._reading_body = False
            self._disarm()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._reading_body:
            if self.flow.read_paused:  # navd holds the reading back, not the client: wait on
                self._arm(self.limits.body_seconds)
                return
            self._close(408, "Request Timeout", "request body: not received within [server] "
                        f"body_timeout_seconds ({self.limits.body_seconds:g} s)")
        elif self._answering():  # the head came after all: the route's time is not limited here
            return
        elif self._head_started:
            self._close(408, "Request Timeout", "request head: not received within [server] "
                        f"header_timeout_seconds ({self.limits.header_seconds:g} s)")
        else:  # not a byte came: nothing to answer
            self.transport.close()

    def _close(self, status: int, reason: str, message: str) -> None:
        """Answer `status` (unless the route has started its own answer) and close."""
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(_response(status, reason, message))
        # debug: a flood of them must not flood the log (the 503s are counted and logged apart)
        log.debug("connection closed", status=status, reason=message, client=self.client[0] if self.client else "")
        self.transport.close()


def uvicorn_limits(server: ServerConfig) -> dict[str, object]:
    """The uvicorn.Config settings of `[server]`'s connection keys."""
    return {
        "http": limited_protocol(ConnectionLimits.of(server)),
        "timeout_keep_alive": server.keep_alive_seconds,
        # requests in flight (those of clients that left too): uvicorn counts the connection
        # asking among the open ones, so one more than the connections allowed
        "limit_concurrency": server.max_connections + 1,
    }


def ensure_descriptors(server: ServerConfig) -> None:
    """Raise this process's open-file limit to what `[server] max_connections` needs (up to the
    hard limit); ConfigError naming the key when even the hard limit is too low."""
    needed = server.max_connections + RESERVED_DESCRIPTORS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ConfigError(f"[server] max_connections: {server.max_connections} connections and "
                          f"{RESERVED_DESCRIPTORS} files of navd's own need {needed} open files, above this "
                          f"process's limit of {hard} (systemd LimitNOFILE=, ulimit -n): lower it or raise the limit")
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))

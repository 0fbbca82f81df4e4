"""What every request must pass before any route sees it: the checks a web page of another
site cannot pass, whatever the browser sends for it (docs/server-requests.md).

- **Host**: one of the server's own names (`[server] host`, its loopback names or this
  machine's names, `localhost`, `[server] allowed_hosts`, or the address the connection arrived
  on); otherwise 400 naming `Host`. A page at a name its owner points at this machine (DNS
  rebinding) reaches navd under that name, and is refused. The probes (`/healthz`, `/readyz`)
  are exempt: load balancers ask them by whatever address they know, and they tell only "up".
- **Origin**: a write (any method but GET, HEAD, OPTIONS) from a browser carries the page's
  origin; another origin than the server's own (scheme://Host) is 403 naming `Origin`, and so is
  `Sec-Fetch-Site: cross-site` or `same-site`. Clients other than browsers send neither.
- **Content-Type**: a body must be `application/json` (UTF-8), the type no cross-site form or
  no-cors fetch can send without a CORS preflight navd never grants; anything else (text/plain,
  forms, multipart, XML) is 415 naming `Content-Type`, before any route parses it. The
  OpenLineage intake takes that JSON gzip-encoded too (`Content-Encoding: gzip`, its own check).
- **Path**: a path with a control character (`%00`) is 400 naming `path`: no file name or
  entity name has one, and the operating system refuses them.

The checks are pure functions of the request's line and headers (`refusal`); `RequestChecks`
is the ASGI middleware that answers their refusal in navd's error body. `RESPONSE_HEADERS` go
on every answer (navd/server/app.py's Guard adds them).
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from navd.config import ServerConfig, canonical_host, is_loopback_host
from navd.logs import get_logger
from navd.server.errors import error_response

log = get_logger("navd.server")

#: methods that change nothing: no Origin or Content-Type check (a body still needs JSON)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: routes answered under any Host: load balancers probe by address, and they tell only "up"
PROBES = frozenset({"/healthz", "/readyz"})
JSON_MEDIA_TYPE = "application/json"
#: what every answer carries: no browser guesses a JSON or text answer to be HTML or script
RESPONSE_HEADERS: tuple[tuple[bytes, bytes], ...] = ((b"x-content-type-options", b"nosniff"),)
_WILDCARDS = frozenset({"0.0.0.0", "::"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: the longest header value quoted back in a refusal
_SHOWN = 100


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A request refused before any route: its status, one line, and the header to blame."""

    status: int
    message: str
    parameter: str
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ServerNames:
    """The host names (canonical: navd.config.canonical_host) a request's Host may carry."""

    names: frozenset[str]

    def accept(self, host: str, local_address: str | None) -> bool:
        """`host` (canonical) is one of the names, or the address the connection arrived on."""
        return host in self.names or (local_address is not None and host == canonical_host(local_address))


def server_names(server: ServerConfig, machine: Iterable[str]) -> ServerNames:
    """The names of a server on `[server] host`: `localhost`, the host itself (unless a
    wildcard), 127.0.0.1 and ::1 on a loopback host, the `machine`'s names off loopback (a
    wildcard or an interface's address: clients use the host's name, Kerberos needs it), and
    `[server] allowed_hosts`."""
    names = {"localhost", *server.allowed_hosts}
    if canonical_host(server.host) not in _WILDCARDS:
        names.add(server.host)
    if is_loopback_host(server.host):
        names |= {"127.0.0.1", "::1"}
    else:
        names |= set(machine)
    return ServerNames(frozenset(name for name in map(canonical_host, names) if name is not None))


def machine_names() -> tuple[str, ...]:
    """This machine's host name and fully qualified name (the FQDN may ask DNS)."""
    return socket.gethostname(), socket.getfqdn()


def split_host_header(value: str) -> tuple[str, int | None] | None:
    """The host (canonical) and port of a Host header (`name`, `name:port`, `[v6]:port`); None
    when it is no host, or its port no port."""
    host, port = value, ""
    if value.startswith("["):
        host, bracket, port = value.partition("]")
        host += bracket
        if port and not port.startswith(":"):
            return None
        port = port[1:]
    elif ":" in value:
        host, _, port = value.partition(":")
        if ":" in port:  # an IPv6 address must come in brackets
            return None
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        return None
    canonical = canonical_host(host)
    return None if canonical is None else (canonical, int(port) if port else None)


def refusal(method: str, path: str, headers: Headers, scheme: str, local_address: str | None,
            names: ServerNames) -> Refusal | None:
    """Why the request is refused, or None: its path, then Host, then a write's Origin, then its
    body's Content-Type (the order a client fixes them in)."""
    return (_path_refusal(path) or _host_refusal(path, headers, local_address, names)
            or (None if method in SAFE_METHODS else _origin_refusal(headers, scheme))
            or _content_type_refusal(method, headers))


def _shown(value: str) -> str:
    return repr(value if len(value) <= _SHOWN else value[:_SHOWN] + "...")


def _path_refusal(path: str) -> Refusal | None:
    bad = next((c for c in path if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is None:
        return None
    return Refusal(400, f"path: a control character (%{ord(bad):02X}) is not allowed in a URL path", "path")


def _host_refusal(path: str, headers: Headers, local_address: str | None, names: ServerNames) -> Refusal | None:
    if path in PROBES:
        return None
    values = headers.getlist("host")
    if len(values) != 1:
        return Refusal(400, "Host: a request names exactly one host (one Host header), "
                            f"got {len(values)}", "Host")
    parsed = split_host_header(values[0])
    if parsed is None:
        return Refusal(400, f"Host: {_shown(values[0])} is not a host name or address (with a port)", "Host")
    if names.accept(parsed[0], local_address):
        return None
    return Refusal(400, f"Host: {_shown(values[0])} is not a name of this server: to serve it under that name, "
                        "add it to [server] allowed_hosts", "Host")


def _origin_refusal(headers: Headers, scheme: str) -> Refusal | None:
    """A browser's write from a page of another origin (or of an opaque one, `null`)."""
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site in ("cross-site", "same-site"):
        return Refusal(403, f"Sec-Fetch-Site: {site!r}: a page of another site may not write here",
                       "Sec-Fetch-Site")
    origins = headers.getlist("origin")
    if not origins:
        return None
    own = _request_origin(headers.get("host", ""), scheme)
    if len(origins) == 1 and own is not None and _origin(origins[0]) == own:
        return None
    shown = f"{own[0]}://{headers.get('host', '')}" if own is not None else "none"
    return Refusal(403, f"Origin: {_shown(', '.join(origins))} is not this server's own origin ({shown}): "
                        "a page of another site may not write here", "Origin")


def _origin(value: str) -> tuple[str, str, int] | None:
    """(scheme, canonical host, port) of an Origin header; None for `null` or no origin."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    host = canonical_host(parts.hostname or "")
    if parts.scheme not in _DEFAULT_PORTS or host is None or parts.path or parts.query or parts.username:
        return None
    return parts.scheme, host, port or _DEFAULT_PORTS[parts.scheme]


def _request_origin(host_header: str, scheme: str) -> tuple[str, str, int] | None:
    """The origin a page of this server has, reached as the request's Host says."""
    parsed = split_host_header(host_header)
    if parsed is None or scheme not in _DEFAULT_PORTS:
        return None
    return scheme, parsed[0], parsed[1] or _DEFAULT_PORTS[scheme]


def _content_type_refusal(method: str, headers: Headers) -> Refusal | None:
    """A body that is not JSON; a write that declares another type even without a body."""
    length = headers.get("content-length", "").strip()
    has_body = "transfer-encoding" in headers or (length.isdigit() and int(length) > 0)
    declared = headers.getlist("content-type")
    if not has_body and (method in SAFE_METHODS or not declared):
        return None
    allowed = {"allowed": [JSON_MEDIA_TYPE]}
    need = ("a body must be application/json (UTF-8; the OpenLineage intake also takes it gzip-encoded, "
            "Content-Encoding: gzip)")
    if len(declared) != 1:
        what = "missing" if not declared else f"{len(declared)} headers"
        return Refusal(415, f"Content-Type: {what}: {need}", "Content-Type", allowed)
    media_type, *parameters = (part.strip() for part in declared[0].split(";"))
    if media_type.lower() != JSON_MEDIA_TYPE:
        return Refusal(415, f"Content-Type: {_shown(declared[0])} is not accepted: {need}", "Content-Type", allowed)
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        charset = value.strip().strip('"').lower()
        if name.strip().lower() == "charset" and charset not in ("utf-8", "utf8"):
            return Refusal(415, f"Content-Type: {_shown(declared[0])} is not accepted: JSON is UTF-8",
                           "Content-Type", allowed)
    return None


class RequestChecks:
    """ASGI middleware: answers `refusal`'s refusal in navd's error body, or passes the request
    on untouched (its body unread)."""

    def __init__(self, app: ASGIApp, names: ServerNames) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        server = scope.get("server")
        refused = refusal(scope["method"], scope["path"], Headers(scope=scope), scope.get("scheme", "http"),
                          server[0] if server else None, self.names)
        if refused is None:
            await self.app(scope, receive, send)
            return
        if refused.status == 403 or refused.parameter == "Host":  # what a hostile page sends: worth a line
            client = scope.get("client")
            log.warning(f"request refused: {refused.message}", method=scope["method"],
                        client=client[0] if client else "")
        await error_response(refused.status, refused.message, refused.parameter, **refused.extra)(scope, receive, send)

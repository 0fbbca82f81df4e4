"""Who a request is and whether it may do what it asks: the one dependency every mounted router
carries (navd/server/app.py `mount`).

- `[server] auth = "basic"`: the users file (navd/server/users.py). A password verified in the
  last minutes is recognised by a keyed digest; any other costs a scrypt, run on threads of its
  own (`[server] hash_threads`), never on the threads that answer the routes, and identical
  credentials arriving together are verified once.
- `auth = "kerberos"`: SPNEGO (navd/server/kerberos.py); the role of a principal is
  `[server] kerberos_roles`, viewer when it is not listed.
- Failed logins are limited per client address (an IPv6 client by its /64) and per user name:
  past `[server] max_login_failures` in `login_window_seconds`, 429 with Retry-After, answered
  before any hash is computed. A basic login is counted when it starts and given back when it
  succeeds, so a burst of wrong passwords sent at once is held to the limit too. Known and
  unknown names are counted alike: the answer tells nobody which names exist.
- `Authorization: Bearer KEY` with either: an API key of `navd server add-api-key`
  (navd/server/api_keys.py), with the role it was made with; failures counted per client.
- The role the route needs (navd/server/roles.py) is checked last: 403 naming it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import ipaddress
import math
import threading
import time
from collections.abc import Callable, Sequence

from fastapi import Request

from navd.config import NavdConfig, server_api_keys_path, server_users_path
from navd.logs import get_logger
from navd.server.api_keys import ApiKeys
from navd.server.errors import ApiError
from navd.server.kerberos import Acceptor, Refused
from navd.server.roles import Role, parse_role, required_role
from navd.server.threads import OwnThreads, hash_thread_count
from navd.server.users import MAX_NAME_CHARS, Users, normal_name

log = get_logger("navd.server")
REALM = "navd"
NEGOTIATE = "Negotiate"
#: keys the limiter keeps at most (a few dozen bytes each); past it the oldest windows go first
MAX_LIMITER_KEYS = 100_000


@dataclasses.dataclass
class _Window:
    start: float
    count: int = 0
    reported: bool = False


class LoginLimiter:
    """Failed logins per key (a client address, a user name) in fixed windows: a key with
    `max_failures` counted in its current window waits until that window ends."""

    def __init__(self, max_failures: int, window_seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_failures = max_failures
        self.window_seconds = window_seconds
        self.clock = clock
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()

    def _window(self, key: str, now: float, create: bool) -> _Window | None:
        window = self._windows.get(key)
        if window is not None and now - window.start >= self.window_seconds:
            del self._windows[key]
            window = None
        if window is None and create:
            if len(self._windows) >= MAX_LIMITER_KEYS:
                self._windows.pop(next(iter(self._windows)))  # the oldest: windows are made in time order
            window = self._windows[key] = _Window(now)
        return window

    def wait(self, keys: Sequence[str]) -> tuple[float, list[str]] | None:
        """None when none of `keys` is used up; else the seconds until all are free again and
        the keys refused for the first time in their window (to log once, not per request)."""
        now = self.clock()
        with self._lock:
            blocked = [(key, window) for key in keys
                       if (window := self._window(key, now, create=False)) is not None
                       and window.count >= self.max_failures]
            if not blocked:
                return None
            first = [key for key, window in blocked if not window.reported]
            for _key, window in blocked:
                window.reported = True
            return max(window.start + self.window_seconds - now for _key, window in blocked), first

    def charge(self, keys: Sequence[str]) -> None:
        """Count one failure (or one login under way) against each key."""
        now = self.clock()
        with self._lock:
            for key in keys:
                window = self._window(key, now, create=True)
                assert window is not None
                window.count += 1

    def refund(self, keys: Sequence[str]) -> None:
        """Take back what `charge` counted: the login succeeded."""
        now = self.clock()
        with self._lock:
            for key in keys:
                window = self._window(key, now, create=False)
                if window is not None and window.count > 0:
                    window.count -= 1


def client_key(host: str) -> str:
    """What the limiter counts a client by: its address; an IPv6 address by its /64, which one
    site or one host usually holds whole (counting each address would let it rotate freely)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclasses.dataclass(frozen=True)
class Identity:
    user: str
    role: Role


class Authenticator:
    """The server's authentication and role check (one per app)."""

    def __init__(self, config: NavdConfig) -> None:
        server = config.server
        self.users = Users(server_users_path(config)) if server.auth == "basic" else None
        # Kerberos: the keytab checked and the service credentials acquired now, so a bad keytab or
        # principal stops the start (fail closed) instead of refusing every request.
        self.kerberos = Acceptor(server) if server.auth == "kerberos" else None
        # API keys (Authorization: Bearer) beside either login; with auth = "none" nothing is asked
        self.api_keys = ApiKeys(server_api_keys_path(config)) if server.auth != "none" else None
        self.kerberos_roles = {principal: parse_role(role, f"[server] kerberos_roles {principal!r}")
                               for principal, role in server.kerberos_roles.items()}
        self.limiter = LoginLimiter(server.max_login_failures, server.login_window_seconds)
        self.threads = OwnThreads(hash_thread_count(server.hash_threads))
        #: basic logins being verified, by the keyed digest of their credentials: the same
        #: credentials arriving meanwhile wait for that one verification
        self._pending: dict[bytes, asyncio.Task[Role | None]] = {}

    async def __call__(self, request: Request) -> Identity | None:
        """The request's identity (None with `auth = "none"`, loopback only), checked against the
        role its route needs; 401, 403 or 429 otherwise."""
        scheme = request.headers.get("authorization", "").partition(" ")[0]
        if self.api_keys is not None and scheme.lower() == "bearer":
            identity = self._bearer(request, self.api_keys)
        elif self.kerberos is not None:
            identity = await self._negotiate(request, self.kerberos)
        elif self.users is not None:
            identity = await self._basic(request, self.users)
        else:
            return None
        request.state.user = identity.user  # for whatever a route records (a taint's author)
        request.state.role = identity.role
        route = getattr(request.scope.get("route"), "path", request.url.path)
        needed = required_role(request.method, route)
        if identity.role < needed:
            log.warning("request refused: role", user=identity.user, role=identity.role.label,
                        needed=needed.label, method=request.method, route=route)
            raise ApiError(403, f"{request.method} {route} needs the {needed.label} role; "
                                f"{identity.user} has the {identity.role.label} role", needed_role=needed.label)
        return identity

    def _limited(self, keys: Sequence[str], request: Request) -> None:
        """429 with Retry-After when one of `keys` has used up its failed logins."""
        refused = self.limiter.wait(keys)
        if refused is None:
            return
        seconds, first = refused
        retry = max(1, math.ceil(seconds))
        for key in first:
            log.warning("failed logins limited", key=key, retry_after_seconds=retry,
                        max_failures=self.limiter.max_failures, client=_client(request))
        raise ApiError(429, f"too many failed logins from this address or for this user: retry in {retry} s",
                       headers={"Retry-After": str(retry)})

    def _bearer(self, request: Request, api_keys: ApiKeys) -> Identity:
        """An API key's name and role; 401 for a key navd did not make or has revoked, the same
        answer whether or not its name exists. A SHA-256 costs nothing: no hash thread; failures
        count against the client as failed logins do."""
        keys = (f"client {client_key(_client(request))}",)
        self._limited(keys, request)
        found = api_keys.find(request.headers.get("authorization", "").partition(" ")[2].strip())
        if found is None:
            self.limiter.charge(keys)
            log.warning("API key refused", client=_client(request))  # never the key itself
            raise ApiError(401, "unknown or revoked API key", headers={"WWW-Authenticate": "Bearer"})
        return Identity(found.name, found.role)

    async def _basic(self, request: Request, users: Users) -> Identity:
        challenge = {"WWW-Authenticate": f'Basic realm="{REALM}", charset="UTF-8"'}
        scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "basic":
            raise ApiError(401, "authentication required (HTTP basic)", headers=challenge)
        try:
            name, sep, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            sep, name, password = "", "", ""
        name = normal_name(name)
        role = users.remembered(name, password) if sep else None
        if role is None and sep:
            role = await self._verify(request, users, name, password)
        if role is None:
            log.warning("authentication refused", user=name[:64], client=_client(request))
            raise ApiError(401, "wrong user name or password", headers=challenge)
        return Identity(name, role)

    async def _verify(self, request: Request, users: Users, name: str, password: str) -> Role | None:
        """scrypt on the hash threads, counted against the client and the name first."""
        tag = users.tag(name, password)
        pending = self._pending.get(tag)
        if pending is not None:  # the same credentials are being verified: no second hash
            return await asyncio.shield(pending)
        keys = (f"client {client_key(_client(request))}", f"user {name[:MAX_NAME_CHARS]}")
        self._limited(keys, request)
        self.limiter.charge(keys)

        async def verify() -> Role | None:
            failed = False
            try:
                role = await self.threads.run(users.verify, name, password)
                failed = role is None
                return role
            finally:  # only a wrong password stays counted, not an unreadable users file
                if not failed:
                    self.limiter.refund(keys)
                self._pending.pop(tag, None)

        task = self._pending[tag] = asyncio.ensure_future(verify())
        # shielded: a client that hangs up does not cancel what others wait for
        return await asyncio.shield(task)

    async def _negotiate(self, request: Request, kerberos: Acceptor) -> Identity:
        """SPNEGO: the client's principal; the mutual-authentication token goes out on the
        response (through Guard: routes may return their own Response objects). A GSS-API accept
        is cheap next to scrypt: logins under way are not counted, only the failed ones."""
        challenge = {"WWW-Authenticate": NEGOTIATE}
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != NEGOTIATE.lower():
            raise ApiError(401, "authentication required (Kerberos SPNEGO: curl --negotiate -u :)", headers=challenge)
        keys = (f"client {client_key(_client(request))}",)
        self._limited(keys, request)
        try:
            accepted = await self.threads.run(kerberos.accept, token)
        except Refused as exc:
            self.limiter.charge(keys)
            log.warning(f"kerberos authentication refused: {exc}", client=_client(request))
            raise ApiError(401, "Kerberos authentication failed", headers=challenge) from None
        if accepted.token:
            request.state.auth_response_headers = {
                "WWW-Authenticate": f"{NEGOTIATE} {base64.b64encode(accepted.token).decode()}"}
        log.info("kerberos authenticated", user=accepted.user, method=request.method,
                 route=getattr(request.scope.get("route"), "path", ""), client=_client(request))
        return Identity(accepted.user, self.kerberos_roles.get(accepted.user, Role.VIEWER))


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


async def authenticate(request: Request) -> Identity | None:
    """The FastAPI dependency of every mounted router: the app's Authenticator."""
    authenticator: Authenticator = request.app.state.auth
    return await authenticator(request)

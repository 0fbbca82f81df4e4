"""The users of `[server] auth = "basic"`: one `NAME:scrypt$N$r$p$SALT$HASH` line each (salt and
hash base64), in a file only navd's user may read. Managed with `navd server add-user NAME`.

scrypt (hashlib, OpenSSL's) is memory-hard: a stolen file costs an attacker per guess what it
costs navd per login. Comparison is constant-time, and an unknown user costs the same as a known
one, so timing tells neither the password nor which names exist.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import hmac
import os
import secrets
import stat
import threading
from pathlib import Path

from navd.config import OTHERS_BITS
from navd.errors import ConfigError, UsageError
from navd.state import private_dir, write_atomically

SCHEME = "scrypt"
#: OWASP's scrypt minimum (N=2^17, r=8, p=1) costs 128 MiB per login; 2^15 (32 MiB) keeps a
#: burst of logins on a small edge node within memory while still far from a fast hash.
N, R, P = 2 ** 15, 8, 1
SALT_BYTES, HASH_BYTES = 16, 32
MAX_PASSWORD_CHARS = 1024


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=HASH_BYTES,
                          maxmem=2 * 128 * n * r * p)


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(password, salt, N, R, P)
    return "$".join((SCHEME, str(N), str(R), str(P), base64.b64encode(salt).decode(),
                     base64.b64encode(digest).decode()))


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches the stored `scrypt$...` hash (False for a malformed one)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != SCHEME:
            return False
        expected = base64.b64decode(digest, validate=True)
        actual = _scrypt(password, base64.b64decode(salt, validate=True), int(n), int(r), int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


@functools.cache
def _dummy() -> str:
    """Verified against when the user is unknown, so an unknown name takes as long as a wrong
    password (made on first use: nothing at import)."""
    return hash_password(secrets.token_urlsafe(16))


def check_user_name(name: str) -> None:
    if not name or len(name) > 128 or not all(c.isalnum() or c in "._-@" for c in name):
        raise UsageError(f"user name {name[:40]!r}: use 1 to 128 letters, digits and . _ - @")


def check_password(password: str) -> None:
    if not password:
        raise UsageError("password: empty")
    if len(password) > MAX_PASSWORD_CHARS or "\n" in password or "\r" in password:
        raise UsageError(f"password: at most {MAX_PASSWORD_CHARS} characters on one line")


def read_users(path: Path) -> dict[str, str]:
    """{name: stored hash}; {} when the file does not exist. A file others may read is refused."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"[server] users_file {path}: cannot read it: {exc}") from None
    if mode & OTHERS_BITS:
        raise ConfigError(f"[server] users_file {path}: users other than its owner may read it "
                          f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it")
    users = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, stored = line.partition(":")
        if not sep:
            raise ConfigError(f"[server] users_file {path}: line {number} is not NAME:HASH")
        users[name] = stored
    return users


def add_user(path: Path, name: str, password: str) -> bool:
    """Add `name` or replace its password; True if it was new. The file is written 0600, atomically."""
    check_user_name(name)
    check_password(password)
    users = read_users(path)
    new = name not in users
    users[name] = hash_password(password)
    private_dir(path.parent)
    write_atomically(path, "".join(f"{n}:{h}\n" for n, h in users.items()).encode())
    return new


@dataclasses.dataclass
class Users:
    """The users file as the server reads it: reread when it changes, so `navd server add-user`
    takes effect without a restart."""

    path: Path
    _seen: tuple[int, ...] | None = None
    _users: dict[str, str] = dataclasses.field(default_factory=dict)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    #: per user, the stored hash and a keyed digest of the password last verified against it:
    #: a client repeating its credentials (every request of a session) costs an HMAC, not a
    #: scrypt; a changed hash (add-user again) or another password misses and pays scrypt
    _verified: dict[str, tuple[str, bytes]] = dataclasses.field(default_factory=dict)
    _key: bytes = dataclasses.field(default_factory=lambda: secrets.token_bytes(32))

    def _current(self) -> dict[str, str]:
        try:
            info = os.stat(self.path)
            # ctime and mode too: a chmod that lets others read the file must be noticed
            seen = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_mode)
        except FileNotFoundError:
            seen = None
        with self._lock:
            if seen != self._seen or seen is None:
                self._users = read_users(self.path)
                self._seen = seen
            return self._users

    def check(self, name: str, password: str) -> bool:
        stored = self._current().get(name)
        tag = hmac.new(self._key, password.encode(), hashlib.sha256).digest()
        with self._lock:
            known = self._verified.get(name)
        if stored is not None and known is not None and known[0] == stored and hmac.compare_digest(known[1], tag):
            return True
        ok = verify_password(password, stored or _dummy()) and stored is not None
        if ok and stored is not None:
            with self._lock:
                self._verified[name] = (stored, tag)
        return ok

"""The users of `[server] auth = "basic"`: one `NAME:scrypt$N$r$p$SALT$HASH:ROLE` line each (salt
and hash base64, ROLE viewer, editor or admin: navd/server/roles.py), in a file only navd's user
may read. Managed with `navd server add-user NAME [--role ROLE]` and `navd server set-role`.

A line without a role (written before roles existed) is read as `admin`, what its user could do
then, and a warning at each load says which users still lack one.

scrypt (hashlib, OpenSSL's) is memory-hard: a stolen file costs an attacker per guess what it
costs navd per login. Comparison is constant-time, and an unknown user costs the same as a known
one, so timing tells neither the password nor which names exist.

User names are NFKC-normalised (a full-width `ａｌｉｃｅ` is `alice`) and then must be ASCII
letters, digits and `. _ - @`: no letter of another script can pose as a Latin one (a Cyrillic
`а` in `аlice`). The strict set, rather than a confusables table, because a table has to be kept
current with Unicode and an allow-list does not; names of other scripts are refused, not
guessed at. Entries written before the rule keep working (with a warning).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import hmac
import os
import secrets
import string
import threading
import time
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from navd.config import check_owner_only
from navd.errors import ConfigError, UsageError
from navd.logs import get_logger
from navd.server.roles import ROLE_NAMES, Role, parse_role
from navd.state import private_dir, write_atomically

log = get_logger("navd.server")
SCHEME = "scrypt"
#: OWASP's scrypt minimum (N=2^17, r=8, p=1) costs 128 MiB per login; 2^15 (32 MiB) keeps a
#: burst of logins on a small edge node within memory while still far from a fast hash.
N, R, P = 2 ** 15, 8, 1
SALT_BYTES, HASH_BYTES = 16, 32
#: NIST SP 800-63B's floor for a password chosen by a person is 8; 12 because these accounts
#: reach the whole catalogue and, with a role, write to it
MIN_PASSWORD_CHARS = 12
MAX_PASSWORD_CHARS = 1024
MAX_NAME_CHARS = 128
NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "._-@")
#: the role of a line without one: such users could do everything before roles existed
LEGACY_ROLE = Role.ADMIN
#: the role of a user added without --role: least privilege
DEFAULT_ROLE = Role.VIEWER
#: how long a verified password is remembered (as a keyed digest) so a client repeating its
#: credentials on every request does not pay scrypt every time; then verified again
REMEMBER_SECONDS = 300.0


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


def normal_name(name: str) -> str:
    """A user name as navd keeps and compares it: NFKC (compatibility forms folded)."""
    return unicodedata.normalize("NFKC", name)


def is_safe_name(name: str) -> bool:
    return 0 < len(name) <= MAX_NAME_CHARS and all(c in NAME_CHARACTERS for c in name)


def check_user_name(name: str) -> str:
    """`name` normalised; UsageError (one line, the name shown escaped so a look-alike letter
    shows as what it is) unless it is 1 to 128 ASCII letters, digits and . _ - @."""
    normal = normal_name(name)
    if not is_safe_name(normal):
        raise UsageError(f"user name {ascii(name[:40])}: use 1 to {MAX_NAME_CHARS} ASCII letters, digits and "
                         ". _ - @ (letters of other scripts are refused: they can look like Latin ones)")
    return normal


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise UsageError(f"password: at least {MIN_PASSWORD_CHARS} characters, got {len(password)}")
    if len(password) > MAX_PASSWORD_CHARS or "\n" in password or "\r" in password:
        raise UsageError(f"password: at most {MAX_PASSWORD_CHARS} characters on one line")


@dataclasses.dataclass(frozen=True)
class UserEntry:
    stored: str  # scrypt$N$r$p$SALT$HASH
    #: None: a line written before roles existed (read as LEGACY_ROLE)
    role: Role | None

    @property
    def effective_role(self) -> Role:
        return LEGACY_ROLE if self.role is None else self.role


def parse_users(text: str, label: str) -> dict[str, UserEntry]:
    """{normalised name: entry} of a users file's text; ConfigError naming `label` and the line."""
    users = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, rest = line.partition(":")
        stored, with_role, role_text = rest.partition(":")
        if not sep or not name or not stored:
            raise ConfigError(f"{label}: line {number} is not NAME:HASH:ROLE")
        try:
            role = parse_role(role_text, f"line {number}") if with_role else None
        except ValueError as exc:
            raise ConfigError(f"{label}: {exc}") from None
        users[normal_name(name)] = UserEntry(stored, role)
    return users


def format_users(users: Mapping[str, UserEntry]) -> str:
    """The file's text: a line without a role stays so (its user keeps the legacy role)."""
    return "".join(f"{name}:{entry.stored}{'' if entry.role is None else ':' + entry.role.label}\n"
                   for name, entry in users.items())


def read_users(path: Path) -> dict[str, UserEntry]:
    """{name: entry}; {} when the file does not exist. A file others may read is refused."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"[server] users_file {path}: cannot read it: {exc}") from None
    check_owner_only("[server] users_file", path, mode)
    return parse_users(text, f"[server] users_file {path}")


def _write_users(path: Path, users: Mapping[str, UserEntry]) -> None:
    private_dir(path.parent)
    write_atomically(path, format_users(users).encode())


def add_user(path: Path, name: str, password: str, role: Role | None = None) -> bool:
    """Add `name` (with `role`, else viewer) or replace its password (and its role when `role`
    is given); True if it was new. The file is written 0600, atomically."""
    name = check_user_name(name)
    check_password(password)
    users = read_users(path)
    current = users.get(name)
    new = current is None
    kept = DEFAULT_ROLE if current is None else current.role
    users[name] = UserEntry(hash_password(password), role if role is not None else kept)
    _write_users(path, users)
    return new


def set_role(path: Path, name: str, role: Role) -> None:
    """Give an existing user `role` (its password unchanged); UsageError for an unknown user."""
    users = read_users(path)
    current = users.get(normal_name(name))
    if current is None:
        raise UsageError(f"user {ascii(name[:40])}: not in {path} (add it with navd server add-user)")
    users[normal_name(name)] = dataclasses.replace(current, role=role)
    _write_users(path, users)


def _load_warnings(path: Path, users: Mapping[str, UserEntry]) -> list[str]:
    """What an admin should fix in a users file the server still accepts."""
    warnings = []
    legacy = [name for name, entry in users.items() if entry.role is None]
    if legacy:
        shown = ", ".join(ascii(name)[1:-1] for name in legacy[:10]) + (" ..." if len(legacy) > 10 else "")
        warnings.append(f"[server] users_file {path}: {len(legacy)} user(s) without a role keep full access as "
                        f"{LEGACY_ROLE.label}: {shown}; give each one with `navd server set-role NAME "
                        f"{'|'.join(ROLE_NAMES)}`")
    unsafe = [name for name in users if not is_safe_name(name)]
    if unsafe:
        warnings.append(f"[server] users_file {path}: user name(s) {', '.join(ascii(n) for n in unsafe[:10])} "
                        "hold characters other than ASCII letters, digits and . _ - @ (a look-alike of another "
                        "name?); they still log in: replace them with add-user")
    return warnings


@dataclasses.dataclass
class Users:
    """The users file as the server reads it: reread when it changes, so `navd server add-user`
    and `set-role` take effect without a restart."""

    path: Path
    _seen: tuple[int, ...] | None = None
    _users: dict[str, UserEntry] = dataclasses.field(default_factory=dict)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    #: per user, the stored hash, a keyed digest of the password last verified against it and
    #: when: a client repeating its credentials (every request of a session) costs an HMAC, not
    #: a scrypt; a changed hash (add-user again), another password or an old entry misses
    _verified: dict[str, tuple[str, bytes, float]] = dataclasses.field(default_factory=dict)
    _key: bytes = dataclasses.field(default_factory=lambda: secrets.token_bytes(32))

    def _current(self) -> dict[str, UserEntry]:
        try:
            info = os.stat(self.path)
            # ctime and mode too: a chmod that lets others read the file must be noticed
            seen = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_mode)
        except FileNotFoundError:
            seen = None
        with self._lock:
            if seen != self._seen or seen is None:
                self._users = read_users(self.path)
                if seen != self._seen:
                    for warning in _load_warnings(self.path, self._users):
                        log.warning(warning)
                self._seen = seen
            return self._users

    def tag(self, name: str, password: str) -> bytes:
        """A keyed digest of the credentials (the key is this process's, never stored)."""
        return hmac.new(self._key, f"{name}\0{password}".encode(), hashlib.sha256).digest()

    def remembered(self, name: str, password: str) -> Role | None:
        """The user's role when this very password was verified for it within REMEMBER_SECONDS
        and its entry is unchanged; None otherwise (then `verify` decides, at scrypt's cost)."""
        entry = self._current().get(name)
        tag = self.tag(name, password)
        with self._lock:
            known = self._verified.get(name)
        if entry is None or known is None or known[0] != entry.stored:
            return None
        if time.monotonic() - known[2] > REMEMBER_SECONDS or not hmac.compare_digest(known[1], tag):
            return None
        return entry.effective_role

    def verify(self, name: str, password: str) -> Role | None:
        """The user's role if `password` is its password, else None; scrypt either way (an
        unknown name against a dummy hash), so both take as long."""
        entry = self._current().get(name)
        ok = verify_password(password, entry.stored if entry is not None else _dummy()) and entry is not None
        if not ok or entry is None:
            return None
        with self._lock:
            self._verified[name] = (entry.stored, self.tag(name, password), time.monotonic())
        return entry.effective_role

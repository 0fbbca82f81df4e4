"""API keys of the server's clients that send `Authorization: Bearer KEY` (OpenLineage emitters:
openlineage-python's `auth.type = api_key`, the Java client's ApiKeyTokenProvider, Trino's
event listener). One `NAME:sha256$HEXDIGEST:ROLE` line each, in a file only navd's user may
read. Managed with `navd server add-api-key NAME`, `list-api-keys`, `revoke-api-key NAME`.

A key is 32 random bytes navd makes itself, so an unsalted SHA-256 of it is enough: guessing a
256-bit key from its digest is as hopeless as guessing the key, and a fast hash keeps every
request of an emitter cheap (a password needs scrypt because people choose guessable ones; a
key is never chosen). The lookup is by digest, so neither timing nor the answer tells whether a
name or a key exists.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
import threading
from pathlib import Path

from navd.config import check_owner_only
from navd.errors import ConfigError, UsageError
from navd.server.roles import ROLE_NAMES, Role, parse_role
from navd.server.users import check_user_name
from navd.state import private_dir, write_atomically

SCHEME = "sha256"
#: a key's prefix: tells a navd key apart in a config or a secret scanner's findings
KEY_PREFIX = "navd_"


@dataclasses.dataclass(frozen=True)
class ApiKey:
    name: str
    digest: str
    role: Role


def digest_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def read_api_keys(path: Path) -> dict[str, ApiKey]:
    """{name: key}; {} when the file does not exist. A file others may read is refused."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"[server] api_keys_file {path}: cannot read it: {exc}") from None
    check_owner_only("[server] api_keys_file", path, mode)
    keys = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, stored, role = (line.split(":") + ["", ""])[:3]
        scheme, _, digest = stored.partition("$")
        if scheme != SCHEME or len(digest) != 64 or role not in ROLE_NAMES:
            raise ConfigError(f"[server] api_keys_file {path}: line {number} is not NAME:sha256$HEX:ROLE "
                              f"(ROLE {', '.join(ROLE_NAMES)})")
        keys[name] = ApiKey(name, digest, parse_role(role, "ROLE"))
    return keys


def _write(path: Path, keys: dict[str, ApiKey]) -> None:
    private_dir(path.parent)
    write_atomically(path, "".join(f"{k.name}:{SCHEME}${k.digest}:{k.role.label}\n" for k in keys.values()).encode())


def add_api_key(path: Path, name: str, role: Role) -> str:
    """A new key for `name` (replacing any it had), returned once; only its digest is kept."""
    name = check_user_name(name)
    keys = read_api_keys(path)
    key = new_key()
    keys[name] = ApiKey(name, digest_key(key), role)
    _write(path, keys)
    return key


def revoke_api_key(path: Path, name: str) -> None:
    keys = read_api_keys(path)
    if name not in keys:
        raise UsageError(f"api key {name[:40]!r}: no such key in {path}")
    del keys[name]
    _write(path, keys)


@dataclasses.dataclass
class ApiKeys:
    """The keys file as the server reads it: reread when it changes, so a key added or revoked
    takes effect without a restart."""

    path: Path
    _seen: tuple[int, ...] | None = None
    _by_digest: dict[str, ApiKey] = dataclasses.field(default_factory=dict)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def find(self, key: str) -> ApiKey | None:
        """The key's entry, or None for a key navd never made or has revoked."""
        try:
            info = os.stat(self.path)
            seen: tuple[int, ...] | None = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino,
                                            info.st_mode)
        except FileNotFoundError:
            seen = None
        with self._lock:
            if seen != self._seen or seen is None:
                self._by_digest = {k.digest: k for k in read_api_keys(self.path).values()}
                self._seen = seen
            return self._by_digest.get(digest_key(key))

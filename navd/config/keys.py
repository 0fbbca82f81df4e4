"""How a config key is declared and checked: `setting` and `number` (with its `Range`), the
bounds every interval shares, and `check_url` for every URL a section takes."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from navd.errors import ConfigError


DEFAULT_SOLR_VERSION = "9.10.1"


DEFAULT_SOLR_PORT = 8983


SectionT = TypeVar("SectionT")


#: the longest interval, timeout or cap any key takes: a year (longer is a typo, and past
#: timedelta's and the scheduler's range it would crash them)
MAX_INTERVAL_MINUTES = 366 * 24 * 60


MAX_SECONDS = MAX_INTERVAL_MINUTES * 60


#: file mode bits that let users other than the owner read or write a file
OTHERS_BITS = 0o077


@dataclasses.dataclass(frozen=True)
class Range:
    """The values a config number may take: finite, from `low` (excluded when `low_open`) to
    `high`. Declared on a field with `number(...)`; a number field without one must be finite
    and >= 0."""

    low: float
    high: float
    low_open: bool = False

    def check(self, label: str, value: float) -> None:
        """Raise ConfigError("<label>: must be ...") unless `value` is finite and in range."""
        finite = isinstance(value, int) or math.isfinite(value)
        if finite and (value > self.low if self.low_open else value >= self.low) and value <= self.high:
            return
        kind = "an integer" if isinstance(value, int) else "a number"
        low = f"> {_show(self.low)}" if self.low_open else f">= {_show(self.low)}"
        high = "" if self.high == math.inf else f" and <= {_show(self.high)}"
        raise ConfigError(f"{label}: must be {kind} {low}{high}, got {_show(value)}")


ANY_NUMBER = Range(0, math.inf)


def setting(default: Any = dataclasses.MISSING, *, help: str, default_factory: Any = dataclasses.MISSING,
            secret: bool = False) -> Any:
    """A key of a config section: its default and the help text the configuration reference
    (docs/reference/config.md, written by `navd.docs`) shows for it. `secret`: never shown,
    never echoed in an error (repr=False marks a secret for the loader)."""
    return dataclasses.field(default=default, default_factory=default_factory, repr=not secret,
                             metadata={"help": help})


def number(default: float, low: float, high: float, *, low_open: bool = False, help: str = "") -> Any:
    """A number key of a config section with the range the loader checks it against (and its
    help text, as `setting`)."""
    return dataclasses.field(default=default, metadata={"range": Range(low, high, low_open), "help": help})


def field_range(cls: type, name: str) -> Range:
    """The declared range of a number field (for a command-line flag overriding that key)."""
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    return field.metadata.get("range", ANY_NUMBER)


def _show(value: float) -> str:
    if isinstance(value, int) or (math.isfinite(value) and value == int(value) and abs(value) < 1e15):
        return str(int(value))
    return f"{value:g}"


def check_url(label: str, url: str, *, schemes: Iterable[str] | None = ("http", "https"),
              example: str = "http://solr1:8983/solr") -> None:
    """Raise ConfigError naming `label` unless `url` has one of `schemes` and a host (schemes
    None: any scheme, host optional), a port (if any) from 1 to 65535 and no credentials (those
    belong in a password file)."""
    allowed = tuple(schemes) if schemes is not None else None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # "http://[::1/x": an unclosed IPv6 bracket
        parts, host = None, None
    # hdfs:///path (any scheme allowed) names the default file system: no host needed there
    if parts is None or not parts.scheme or (allowed is not None and (parts.scheme not in allowed or not host)):
        kind = "an http(s)" if allowed == ("http", "https") else f"a {'/'.join(allowed or ('scheme://host',))}"
        raise ConfigError(f"{label}: {url!r} is not {kind} URL such as {example}")
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if at:
        raise ConfigError(f"{label}: {url!r} must not carry credentials; use auth, username and password_file")
    port = hostport.rpartition("]")[2] if hostport.startswith("[") else hostport
    port = port.rpartition(":")[2] if ":" in port else ""
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ConfigError(f"{label}: {url!r}: port {port!r} is not a number from 1 to 65535")

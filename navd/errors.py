"""The one error hierarchy of navd.

Every error a user can cause or meet (bad config, Solr down, bad query) is a NavdError whose
message is one line that names the key, object or URL involved; the CLI prints it without a
traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import re
from typing import Any

#: `scheme://user:password@host`, also without the scheme and with a misspelt one: the userinfo
#: up to the last `@` of the word (a password may hold an unescaped `@`). The user starts where
#: a run of its characters starts, and it is matched only in a word's text up to its last `@`
#: (_redact_userinfo): each failed start then costs its own run, not the rest of the text (a
#: long `x.x.x...` value took minutes in a config error; found by tests/fuzz).
_URL_USERINFO = re.compile(r"(?<![^\s/@:'\"])(?P<user>[^\s/@:'\"]+):[^\s/'\"]*@")
_WORD = re.compile(r"[^\s/'\"]+")
#: `password = value` (TOML), `password=value` (key=value logs), `"password": "value"` (JSON);
#: not `[solr] password: message`, navd's own way to name a key
_SECRET_VALUE = re.compile(
    r"(?i)\b(?P<key>password|passwd|secret|token|authorization)(?P<sep>\s*=\s*|[\"']\s*:\s*)"
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;)}\]]+)")
REDACTED = "***"


def redact(text: str) -> str:
    """`text` with credentials replaced by ***: the password of a URL's userinfo and the value
    of a password/secret/token assignment. Every error message (NavdError) and every log line
    (navd.logs) passes through it, so a value echoed back never carries a secret."""
    text = _redact_userinfo(text)
    return _SECRET_VALUE.sub(lambda m: f"{m['key']}{m['sep']}{REDACTED}", text)


def _redact_userinfo(text: str) -> str:
    if "@" not in text or ":" not in text:
        return text

    def word(match: re.Match[str]) -> str:
        found = match.group(0)
        last = found.rfind("@")
        if last < 0 or ":" not in found[:last]:
            return found
        head = _URL_USERINFO.sub(lambda m: f"{m['user']}:{REDACTED}@", found[:last + 1])
        return head + found[last + 1:]

    return _WORD.sub(word, text)


def first_line(exc: BaseException, max_chars: int | None = None) -> str:
    """An exception as the one line a log line, a run record or the CLI carries."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line[:max_chars] if max_chars else line


_TLS_REASON = re.compile(r"\[SSL(?:: [A-Z0-9_]+)?\] (.*?) \(_ssl\.c")


def tls_reason(exc: BaseException) -> str:
    """The reason of a TLS failure, e.g. "certificate verify failed: unable to get local issuer
    certificate", without urllib3's wrappers (pool, URL, retries) around it."""
    found = _TLS_REASON.search(str(exc))
    return found.group(1) if found else first_line(exc, 300)


#: How much of an error's text navd shows: one line a terminal and a log can carry, even when
#: the message echoes a value of 200,000 characters (a config value, a name out of a log).
MESSAGE_CHARS = 2000


def _shown_message(message: str) -> str:
    message = redact(message)  # first: what is cut off never held a secret either
    if len(message) <= MESSAGE_CHARS:
        return message
    return f"{message[:MESSAGE_CHARS]}... ({len(message):,} characters)"


def connection_reason(exc: BaseException) -> str:
    """Why a connection failed, in a few words ("connection refused", "timed out"), without
    urllib3's pool, URL and retry wrappers: the Solr client's and the extractors' one wording."""
    text = str(exc).lower()
    for marker in ("connection refused", "name or service not known", "timed out",
                   "no route to host", "connection reset", "remote end closed"):
        if marker in text:
            return marker
    return type(exc).__name__


def request_url(exc: BaseException, default: str) -> str:
    """`scheme://host:port` of the request a `requests` error was raised for, else `default`."""
    request = getattr(exc, "request", None)
    url = str(getattr(request, "url", "") or "")
    scheme, sep, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if sep and rest else default


class NavdError(Exception):
    """An expected failure, reported to the user as one line, credentials redacted, at most
    MESSAGE_CHARS characters of it."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(_shown_message(message) if isinstance(message, str) else message, *args)


class ConfigError(NavdError):
    """The configuration file or an environment override is wrong."""


class UsageError(NavdError):
    """A request navd refuses as asked (a query it does not allow, an argument out of range)."""


class AmbiguousEntity(NavdError):
    """A name typed to find one element matches several (navd/index/lookup.py): callers list
    `candidates` (elements as users see them, at most the first page of `found`) instead of
    picking one. The CLI exits 4 with them; a server can answer with them."""

    def __init__(self, message: str, candidates: tuple[dict[str, Any], ...], found: int) -> None:
        super().__init__(message)
        self.candidates = candidates
        self.found = found


class EntityNotFound(NavdError):
    """No indexed element answers a name or identity (a lookup, the root of a lineage walk, a
    taint's element): the CLI exits 1, the API answers 404."""


class SolrError(NavdError):
    """Solr answered with an error (bad query, bad document, missing core)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class SolrUnavailable(SolrError):
    """Solr could not be reached, or kept answering 5xx, after all retries."""


class RunStopped(NavdError):
    """navd is stopping: a run gave up at a record boundary, its state left at the last commit."""


class KerberosError(NavdError):
    """No Kerberos credentials for a client: no or an expired ticket, an unusable keytab."""


class UnsafeFile(NavdError, OSError):
    """A file navd would write or create is a symbolic link (or not a regular file): refused,
    never followed, since it could point at any file navd's user may write. An OSError too, so
    the callers that name what a failed write was for still do."""


class EmbeddedSolrError(NavdError):
    """The embedded Solr server could not be fetched, started or stopped."""

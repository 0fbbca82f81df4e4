"""The one error hierarchy of navd.

Every error a user can cause or meet (bad config, Solr down, bad query) is a NavdError whose
message is one line that names the key, object or URL involved; the CLI prints it without a
traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


def first_line(exc: BaseException, max_chars: int | None = None) -> str:
    """An exception as the one line a log line, a run record or the CLI carries."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line[:max_chars] if max_chars else line


class NavdError(Exception):
    """An expected failure, reported to the user as one line."""


class ConfigError(NavdError):
    """The configuration file or an environment override is wrong."""


class UsageError(NavdError):
    """A request navd refuses as asked (a query it does not allow, an argument out of range)."""


class SolrError(NavdError):
    """Solr answered with an error (bad query, bad document, missing core)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class SolrUnavailable(SolrError):
    """Solr could not be reached, or kept answering 5xx, after all retries."""


class RunStopped(NavdError):
    """navd is stopping: a run gave up at a record boundary, its state left at the last commit."""


class EmbeddedSolrError(NavdError):
    """The embedded Solr server could not be fetched, started or stopped."""

"""navd's one way to talk to HDFS: WebHDFS through the `hdfs` library (HdfsCLI).

`make_client` builds the client from the `[hdfs]` config: insecure (`user.name`) or Kerberos
SPNEGO (navd.kerberos, as the Solr client: a client keytab renews its tickets; needs the
`kerberos` extra), several NameNode URLs for HA (the
library fails over between them), one pooled `requests` session that counts its requests
(the HDFS benchmarks and tests prove incremental runs by those counts). `list_status_batch`
pages through a directory with LISTSTATUS_BATCH so a directory of millions of entries is never
one response in memory.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Protocol
from urllib.parse import urlsplit

import requests
from hdfs import Client, HdfsError, InsecureClient
from hdfs.client import _Request  # the library's request factory: HA failover and error mapping

from navd.errors import ConfigError, KerberosError, NavdError
from navd.http import http_session

__all__ = ["CountingSession", "HdfsError", "WebHdfsError", "hdfs_path", "list_status_batch", "make_client",
           "request_count", "snapshot_diff", "status_or_none"]

DEFAULT_TIMEOUT = (10.0, 120.0)  # (connect, read) seconds


class WebHdfsError(NavdError):
    """WebHDFS could not be reached or refused a request."""


class CountingSession(requests.Session):
    """A requests session that counts the HTTP requests sent through it (thread-safe)."""

    def __init__(self) -> None:
        super().__init__()
        self._count_lock = threading.Lock()
        self.request_count = 0

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        with self._count_lock:
            self.request_count += 1
        response = super().request(method, url, *args, **kwargs)
        if response.status_code == 401:
            # Said here, in one line: the library would log the NameNode's HTML error page and
            # raise "Authentication failure. Check your credentials."
            raise KerberosError(_refused(response, getattr(self.auth, "failure", "")))
        return response


def _refused(response: requests.Response, failure: str) -> str:
    """The one line for a NameNode's 401: the Kerberos failure when navd's SPNEGO step failed."""
    parts = urlsplit(response.url)
    where = f"{parts.scheme}://{parts.netloc}"
    if "not found in Kerberos database" in failure:  # HTTP/<host of the URL> is no principal
        return (f"[hdfs] Kerberos login to {where} failed: {failure}; [hdfs] urls must name the host of the "
                "NameNode's HTTP/ principal")
    if failure:  # no ticket, an expired one: what GSS-API said
        return f"[hdfs] Kerberos login to {where} failed: {failure}; kinit, or set [hdfs] keytab"
    negotiate = "negotiate" in response.headers.get("WWW-Authenticate", "").lower()
    if negotiate:
        return (f"[hdfs] Kerberos login to {where} refused (HTTP 401): the NameNode did not accept navd's "
                f"ticket (check [hdfs] principal and keytab, and that the URL names the host of its HTTP/ principal)"
                if response.request is not None and "Authorization" in response.request.headers else
                f"[hdfs] {where} wants Kerberos (HTTP 401, Negotiate): set [hdfs] auth = \"kerberos\"")
    return f"[hdfs] {where} refused navd (HTTP 401): check [hdfs] auth and user"


class WebHdfsSettings(Protocol):
    """What a WebHDFS client needs of `[hdfs]` (navd.extractors.hdfs.settings.HdfsConfig)."""

    urls: tuple[str, ...]
    user: str
    auth: str
    keytab: str
    principal: str


def make_client(config: WebHdfsSettings, *, timeout: tuple[float, float] = DEFAULT_TIMEOUT) -> Client:
    """The WebHDFS client for `[hdfs]`. Raises ConfigError on a config it cannot honour."""
    if not config.urls:
        raise ConfigError("[hdfs] urls: no WebHDFS URL configured (the NameNode's http(s)://host:port)")
    for url in config.urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"[hdfs] urls: {url!r} is not a WebHDFS URL (http(s)://namenode:port)")
    url = ";".join(u.rstrip("/") for u in config.urls)
    # Bounded parallel listing uses a few threads: 16 pooled connections keep one for each. With
    # kerberos, SPNEGO as the Solr client's: a keytab renews tickets as they end; raises
    # ConfigError without the kerberos extra, KerberosError when the keytab gives nothing.
    session = http_session("[hdfs]", auth=config.auth, keytab=config.keytab, principal=config.principal,
                           pool_size=16, session_class=CountingSession)
    if config.auth == "kerberos":
        return Client(url, session=session, timeout=timeout)
    return InsecureClient(url, user=config.user, session=session, timeout=timeout)


def request_count(client: Client) -> int:
    session = getattr(client, "_session", None)
    return session.request_count if isinstance(session, CountingSession) else 0


# The attribute-name convention of HdfsCLI's client class cannot spell LISTSTATUS_BATCH (it
# drops underscores), so the handler is made directly: it keeps HA failover and error mapping.
_list_status_batch = _Request("GET").to_method("LISTSTATUS_BATCH")


_get_snapshot_diff = _Request("GET").to_method("GETSNAPSHOTDIFF")


def snapshot_diff(client: Client, path: str, old: str, new: str) -> list[dict[str, Any]]:
    """The entries of `path`'s snapshot diff from snapshot `old` to `new`: dicts with `type`
    (CREATE, DELETE, MODIFY, RENAME), `sourcePath` and for renames `targetPath`, relative to
    `path` ("" is `path` itself)."""
    report = _get_snapshot_diff(client, path, oldsnapshotname=old, snapshotname=new).json()
    return list(report["SnapshotDiffReport"]["diffList"])


def list_status_batch(client: Client, path: str) -> Iterator[dict[str, Any]]:
    """FileStatus dicts of `path`'s entries, a page (dfs.ls.limit entries) per request.

    Raises HdfsError (FileNotFoundException, AccessControlException, ...) like the library."""
    start_after = ""
    while True:
        # Spelled in lower case: the NameNode matches query parameter names case-sensitively
        # after lower-casing its own, and ignores the documented "startAfter" (seen on 3.5.0).
        params = {"startafter": start_after} if start_after else {}
        listing = _list_status_batch(client, path, **params).json()["DirectoryListing"]
        statuses = listing["partialListing"]["FileStatuses"]["FileStatus"]
        yield from statuses
        if not listing.get("remainingEntries") or not statuses:
            return
        last = statuses[-1]["pathSuffix"]
        if last <= start_after:
            raise WebHdfsError(f"{path}: LISTSTATUS_BATCH did not advance past {start_after!r}")
        start_after = last


def status_or_none(client: Client, path: str) -> dict[str, Any] | None:
    """GETFILESTATUS, None if the path does not exist. (The library's `strict=False` also turns
    "permission denied" and every other refusal into None, which would read as deleted.)"""
    try:
        return dict(client.status(path))
    except HdfsError as exc:
        if getattr(exc, "exception", None) == "FileNotFoundException":
            return None
        raise


def hdfs_path(uri: str) -> str:
    """The path part of an `hdfs://authority/path` URI (or a bare absolute path)."""
    parts = urlsplit(uri)
    if parts.scheme in ("hdfs", "webhdfs", "swebhdfs", "viewfs"):
        return parts.path or "/"
    if not parts.scheme and uri.startswith("/"):
        return uri
    raise ConfigError(f"{uri!r} is not an HDFS path (hdfs://namenode/path)")

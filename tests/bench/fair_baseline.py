"""The fair baseline of the ingest benchmarks: the very documents navd wrote, posted raw.

An ingest benchmark reads its index through a `RecordingIndex` and calls `recording()` around
navd's pass: every update request navd's writers sent (the serialised body, its core and its
parameters) is kept, untouched, in the order Solr acknowledged them. Nothing is serialised or
copied on navd's clock: the bodies are the bytes navd already built.

`raw_post` then posts the same bodies into fresh cores of the same Solr (created for the
replay, unloaded after): the same batches (navd's own, so the same batch size), the same
parameters, as many concurrent requests per core as navd's writer uses (`[solr] writer_threads`),
and navd's commits where navd made them (the commit policy). Deletions navd sent are not
replayed: they are not documents, and sending them is part of what navd spends beyond the post.
The ratio navd / raw post says how close navd's ingest comes to what Solr can take here.
"""

from __future__ import annotations

import dataclasses
import http.server
import itertools
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

import requests

from navd.index.admin import init_solr
from navd.index.client import SolrIndex

CORES = ("elements", "relations", "runs")
_fresh_names = itertools.count(1)


@dataclasses.dataclass(frozen=True)
class Update:
    """One update request navd sent: `core` its configured name."""

    core: str
    body: bytes
    params: tuple[tuple[str, str], ...]

    @property
    def documents(self) -> bool:
        """A JSON array of documents (upserts, stubs, atomic updates), not a command."""
        return self.body.lstrip()[:1] == b"["

    @property
    def commit(self) -> bool:
        return any(key in ("commit", "softCommit") and value == "true" for key, value in self.params)


@dataclasses.dataclass(frozen=True)
class Recorded:
    """What navd sent in one recorded pass."""

    updates: tuple[Update, ...]

    @property
    def documents(self) -> int:
        return sum(u.body.count(b'"identity":') for u in self.updates if u.documents)

    @property
    def requests(self) -> int:
        return sum(u.documents for u in self.updates)

    @property
    def megabytes(self) -> float:
        return sum(len(u.body) for u in self.updates if u.documents) / 1e6

    @property
    def skipped(self) -> int:
        """Commands not replayed (deletions)."""
        return sum(not u.documents and not u.commit for u in self.updates)


class RecordingIndex(SolrIndex):
    """A SolrIndex that keeps every update body posted through it while `recording()` is open."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()
        self._updates: list[Update] | None = None

    def post_update(self, core: str, body: bytes, *, params: Mapping[str, Any] | None = None) -> None:
        super().post_update(core, body, params=params)
        # after Solr acknowledged it: a retried request is kept once
        if self._updates is not None:
            update = Update(self.core(core), body, tuple((str(k), str(v)) for k, v in (params or {}).items()))
            with self._lock:
                if self._updates is not None:
                    self._updates.append(update)

    @contextmanager
    def recording(self) -> Iterator[list[Update]]:
        """The list the updates posted inside the block go into (filled when the block ends)."""
        kept: list[Update] = []
        with self._lock:
            self._updates = []
        try:
            yield kept
        finally:
            with self._lock:
                kept.extend(self._updates or [])
                self._updates = None


@dataclasses.dataclass(frozen=True)
class RawPost:
    seconds: float
    documents: int
    requests: int


def raw_post(index: SolrIndex, recorded: Recorded) -> RawPost:
    """Post the recorded documents into fresh cores of `index`'s Solr, timed; the cores are
    unloaded afterwards."""
    with fresh_cores(index) as fresh:
        return post_recorded(index, fresh, recorded)


@contextmanager
def fresh_cores(index: SolrIndex) -> Iterator[SolrIndex]:
    """A client of new, empty cores of `index`'s Solr (its core names with a suffix), made from
    the same configsets; unloaded, with their data, when the block ends."""
    suffix = f"_raw{next(_fresh_names)}_{time.monotonic_ns() % 1_000_000}"
    config = index.config
    fresh_config = dataclasses.replace(config, elements_core=config.elements_core + suffix,
                                       relations_core=config.relations_core + suffix,
                                       runs_core=config.runs_core + suffix)
    with SolrIndex(fresh_config) as fresh:
        init_solr(fresh)
        try:
            yield fresh
        finally:
            for kind in CORES:
                name = fresh.core(kind)
                fresh.request("GET", "admin/cores", params={"action": "UNLOAD", "core": name,
                                                            "deleteIndex": "true", "deleteDataDir": "true",
                                                            "deleteInstanceDir": "true"},
                              what=f"unload of core {name}")


def post_recorded(index: SolrIndex, fresh: SolrIndex, recorded: Recorded) -> RawPost:
    """Post the updates `index` recorded into the cores of `fresh` (fresh_cores), timed from the
    first request to the last acknowledgement."""
    to_fresh = {index.core(kind): fresh.core(kind) for kind in CORES}
    threads = index.config.writer_threads
    pools = {name: ThreadPoolExecutor(threads, thread_name_prefix=f"raw-{name}") for name in to_fresh.values()}
    in_flight: list[Future[None]] = []
    try:
        start = time.perf_counter()
        for update in recorded.updates:
            target = to_fresh[update.core]
            if update.documents:
                in_flight.append(pools[target].submit(fresh.post_update, target, update.body,
                                                      params=dict(update.params)))
            elif update.commit:  # navd's commit, where navd made it: after what came before
                _settle(in_flight)
                fresh.post_update(target, update.body, params=dict(update.params))
        _settle(in_flight)
        seconds = time.perf_counter() - start
    finally:
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
    return RawPost(seconds, recorded.documents, recorded.requests)


def _settle(futures: list[Future[None]]) -> None:
    wait(futures)
    for future in futures:
        future.result()  # a failed post fails the baseline
    futures.clear()


def describe(recorded: Recorded) -> str:
    return (f"{recorded.documents:,} documents in {recorded.requests:,} update requests "
            f"({recorded.megabytes:.1f} MB); {recorded.skipped} deletion requests not replayed")


class RecordingProxy:
    """An HTTP proxy in front of Solr that records the update bodies a navd process posts through
    it (for navd run as its own process, `navd serve`): every request is passed on as it came,
    and the acknowledged POSTs to a core's /update are kept as `Update`s, in the order Solr
    answered them. Point the process's `[solr] url` at `url`; only a recording run goes through
    it (the hop costs time), the timed runs go to Solr directly."""

    def __init__(self, solr_url: str) -> None:
        split = urllib.parse.urlsplit(solr_url.rstrip("/"))
        self.solr_origin = f"{split.scheme}://{split.netloc}"
        self.solr_path = split.path  # kept in the proxy's URL: navd's `[solr] url` ends in /solr
        self.updates: list[Update] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
                pass  # one line per request would drown the report

            def _relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                answer = proxy.session().request(
                    self.command, proxy.solr_origin + self.path, data=body or None, timeout=600,
                    headers={k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS},
                    allow_redirects=False)
                content = answer.content
                if self.command == "POST" and answer.status_code < 300:
                    proxy.record(self.path, body)
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in _HOP_HEADERS and key.lower() != "content-encoding":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = _relay  # noqa: N815 - BaseHTTPRequestHandler's names

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="recording-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.solr_path}"

    def session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.trust_env = False
        return session

    def record(self, path: str, body: bytes) -> None:
        parsed = urllib.parse.urlsplit(path)
        parts = parsed.path.strip("/").split("/")
        if len(parts) < 2 or parts[-1] != "update":
            return
        params = tuple((k, v) for k, v in urllib.parse.parse_qsl(parsed.query) if k != "wt")
        with self._lock:
            self.updates.append(Update(parts[-2], body, params))

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "host", "content-length", "te", "trailer",
                "upgrade", "proxy-authorization", "proxy-authenticate"}

"""The one Solr client of navd: reads, writes, admin calls, retries and error messages.

Every component goes through `SolrIndex`. Writes post pre-serialised JSON with one pooled
`requests.Session` (no per-request sanitising pass, no per-request logging); bulk writes go
through `CoreWriter`/`IndexWriter`, which batch, post from a few threads with a bounded number
of batches in flight, and report in `close(timeout)` whether everything reached Solr.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import orjson
import requests

from navd.annotations.store import Carryover
from navd.config import SolrConfig
from navd.errors import KerberosError, SolrError, SolrUnavailable, connection_reason, first_line, tls_reason
from navd.index.documents import deletion_update, element_document, relation_document, stub_document
from navd.http import http_session
from navd.logs import get_logger
from navd.model import Deletion, Element, ElementStub, Record, Relation
from navd.names import shown

log = get_logger("navd.index")

# Solr answers 503 while a core loads or reloads and 502/504 behind proxies: worth retrying.
_RETRY_STATUS = frozenset({502, 503, 504})
_JSON = {"Content-Type": "application/json"}
#: The Config API property a bulk load overlays with -1 (soft commits off) and unsets afterwards.
SOFT_COMMIT_PROPERTY = "updateHandler.autoSoftCommit.maxTime"
#: The cores a bulk load writes: the ones an extraction fills.
BULK_CORES = ("elements", "relations")


def _session_for(config: SolrConfig) -> requests.Session:
    # No proxy, netrc or CA-bundle lookups in the environment on every request (measured: ~1.8 ms
    # of a ~5 ms lineage request): Solr's address, TLS and credentials come from [solr] only.
    return http_session("[solr]", auth=config.auth, username=config.username, password=config.password,
                        keytab=config.keytab, principal=config.principal,
                        verify=config.ca_bundle or config.verify_tls,
                        pool_size=max(8, config.writer_threads * 2), trust_env=False)


def _error_message(resp: requests.Response) -> str:
    try:
        error = resp.json().get("error")
    except (ValueError, AttributeError):  # not JSON, or JSON but not an object
        error = None
    # Solr's {"error": {"msg": ...}}; a proxy or another service in front may say {"error": "..."}
    msg = (error.get("msg") or error.get("trace") or "") if isinstance(error, dict) else str(error or "")
    if not msg:
        msg = resp.reason or "error"
        if resp.status_code == 404:
            msg = "not found (is the core or collection created? run `navd solr init`)"
        elif resp.status_code == 401:
            msg = "authentication required or refused (check [solr] auth, username, password)"
        elif resp.status_code == 403:
            msg = "forbidden for this user"
    # Lucene's parser appends a long "Was expecting one of: ..." list; the first part says it.
    msg = " ".join(str(msg).split()).split(". Was expecting")[0]
    return msg[:500]


#: Matches above which `SolrIndex.scan` splits its cursor by identity range.
SCAN_PARTITION_ABOVE = 20_000


def identity_ranges(matches: int, per_range: int) -> list[str]:
    """Solr range syntax covering every string, cut at hex prefixes into about
    `matches / per_range` ranges: `[* TO "08"}`, `["08" TO "10"}`, ..., `["f8" TO *]`."""
    wanted = max(1, -(-matches // per_range))
    digits = 1
    while 16 ** digits < wanted and digits < 4:
        digits += 1
    count = min(wanted, 16 ** digits)
    bounds = sorted({format(i * 16 ** digits // count, f"0{digits}x") for i in range(1, count)})
    edges = ["*", *(f'"{b}"' for b in bounds), "*"]
    return [f"[{low} TO {high}{'}' if high != '*' else ']'}" for low, high in zip(edges, edges[1:])]


def give_up_seconds(config: SolrConfig) -> float:
    """How long Solr may stay unreachable before a run gives up: the sum of the backoff
    schedule (`backoff_seconds` doubling up to `max_backoff_seconds`, `retries` pauses); 91.5 s
    with the defaults."""
    return sum(min(config.backoff_seconds * 2 ** n, config.max_backoff_seconds) for n in range(config.retries))


class GiveUp:
    """The one give-up deadline of a run, shared by every request of it: its writer threads,
    its reads, its run record.

    An outage starts with the first failed request of the run and ends when a request sent
    after that start succeeds; `seconds` after the start every request of the run gives up
    together, with one message saying how long Solr was tried. Without a shared clock each
    in-flight batch and the run record would retry the whole schedule on its own, one after
    the other (185-276 s instead of ~90 s), and threads of a failed run would keep retrying.
    `end()` (the run is over, failed or abandoned) stops every retry of the run at once.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._since: float | None = None  # monotonic time the current outage's first failed request was sent
        self._message = ""  # set when the run gave up: why, and for how long it tried
        self._ended = False
        self._wake = threading.Event()  # set on give-up or end: pausing requests return at once

    def failed(self, sent: float) -> float:
        """A request sent at `sent` (monotonic) failed: seconds left before the run gives up."""
        with self._lock:
            if self._since is None:
                self._since = sent
            return self._since + self.seconds - time.monotonic()

    def succeeded(self, sent: float) -> None:
        """A request sent at `sent` succeeded: Solr answers, the outage (if it began before) is over."""
        with self._lock:
            if self._since is not None and sent >= self._since:
                self._since = None
                self._message = ""
                if not self._ended:
                    self._wake.clear()

    def give_up(self, url: str, reason: str) -> str:
        """Give up now for every request of the run; the message (the first caller's wins)."""
        with self._lock:
            if not self._message:
                tried = time.monotonic() - (self._since if self._since is not None else time.monotonic())
                self._message = f"Solr unreachable for {tried:.0f} s at {url}: gave up ({reason})"
            self._wake.set()
            return self._message

    def end(self) -> None:
        """The run is over: requests of it still retrying stop at once."""
        with self._lock:
            self._ended = True
            self._wake.set()

    @property
    def message(self) -> str:
        """Why the run gave up ("" while it has not)."""
        return self._message

    @property
    def over(self) -> bool:
        return self._wake.is_set()

    def pause(self, seconds: float, stop: threading.Event | None) -> None:
        """Wait `seconds`, or less when the run gives up or ends or navd stops."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            # Two events cannot be waited on together: wait on the run's in short slices.
            if self._wake.wait(min(left, 0.25)) or (stop is not None and stop.is_set()):
                return


class SolrIndex:
    """Reader, writer and admin client of one Solr (standalone node or SolrCloud).

    `for_run()` gives the client a run uses: the same connection pool, with the run's one
    give-up deadline (GiveUp) shared by all its requests. Outside a run each request has its own.
    """

    def __init__(self, config: SolrConfig, session: requests.Session | None = None, *,
                 stop: threading.Event | None = None, deadline: GiveUp | None = None) -> None:
        self.config = config
        self.base_url = config.base_url
        self._owns_session = True  # False for a run's client (for_run): the pool is its parent's
        self.session = session if session is not None else _session_for(config)
        #: set when navd is stopping: retries give up instead of backing off for a minute more
        self.stop = stop
        #: the run's give-up deadline (for_run), or None: each request has its own
        self.deadline = deadline

    def for_run(self) -> SolrIndex:
        """A client for one run: this one's session and stop event, a new shared deadline.
        Call `end_run()` when the run is over."""
        run = SolrIndex(self.config, self.session, stop=self.stop, deadline=GiveUp(give_up_seconds(self.config)))
        run._owns_session = False
        return run

    def end_run(self) -> None:
        """The run of this client (for_run) is over: whatever of it still retries stops now."""
        if self.deadline is not None:
            self.deadline.end()

    def close(self) -> None:
        if self._owns_session:
            self.session.close()

    def __enter__(self) -> SolrIndex:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def core(self, name: str) -> str:
        """`elements`/`relations`/`runs` or a configured core name -> the configured name."""
        return self.config.core_name(name)

    # -- the one request path -------------------------------------------------------------

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                data: bytes | Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
                files: Any = None, retries: int | None = None, what: str = "") -> dict[str, Any]:
        """Send one request, retrying connection errors and 502/503/504 with backoff until the
        run's give-up deadline (GiveUp); return the JSON body or raise SolrError.

        At most `retries + 1` attempts: the pauses follow the backoff schedule (jittered upward
        only, cut at the deadline), whose sum is the give-up time, so a request reaches the
        deadline before it runs out of attempts. A request of a run that already gave up is
        tried once."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        query = {"wt": "json", **(params or {})}
        retries = self.config.retries if retries is None else retries
        clock = self.deadline if self.deadline is not None else GiveUp(give_up_seconds(self.config))
        if clock.over:
            retries = 0
        delay = self.config.backoff_seconds
        what = what or f"{method} {path.split('?')[0]}"
        for attempt in range(1, retries + 2):
            sent = time.monotonic()
            try:
                resp = self.session.request(method, url, params=query, data=data, headers=headers,
                                            files=files, timeout=self.config.timeout_seconds)
            except requests.exceptions.SSLError as exc:
                raise SolrError(f"{what}: TLS error talking to {self.base_url}: {tls_reason(exc)}") from None
            except (requests.ConnectionError, requests.Timeout,
                    requests.exceptions.ChunkedEncodingError) as exc:  # after SSLError, its subclass;
                # a connection broken in the middle of Solr's answer is a transport fault like a reset
                reason = connection_reason(exc)
                problem = f"cannot reach Solr at {self.base_url}: {reason}"
            except requests.RequestException as exc:  # the rest, e.g. requests-gssapi's mutual authentication
                # failure: not retried. Last: ConnectionError and Timeout are RequestExceptions too.
                raise SolrError(f"{what}: {first_line(exc, 300)}") from None
            else:
                if resp.status_code < 300:
                    clock.succeeded(sent)
                    try:
                        # orjson: a lineage level's answer is thousands of documents, and the
                        # json module took about twice as long to parse them
                        return orjson.loads(resp.content)  # type: ignore[no-any-return]
                    except ValueError:  # orjson.JSONDecodeError is one
                        raise SolrError(f"{what}: Solr sent a non-JSON answer "
                                        f"(HTTP {resp.status_code})") from None
                if resp.status_code not in _RETRY_STATUS:
                    clock.succeeded(sent)  # Solr answered: it is reachable
                    failure = getattr(self.session.auth, "failure", "")
                    if resp.status_code == 401 and failure:  # no ticket, an expired one: say so
                        raise KerberosError(f"{what}: Kerberos login to {self.base_url} failed: {failure}; "
                                            f"kinit, or set [solr] keytab")
                    raise SolrError(f"{what}: HTTP {resp.status_code}: {_error_message(resp)}",
                                    status=resp.status_code)
                reason = f"HTTP {resp.status_code}: {_error_message(resp)}"
                problem = f"HTTP {resp.status_code} from {self.base_url}: {_error_message(resp)}"
            if retries == 0:  # interactive, or the run gave up already: one line, at once
                raise SolrUnavailable(f"{what}: {clock.message or problem}")
            left = clock.failed(sent)
            if clock.over or left <= 0 or attempt > retries:
                raise SolrUnavailable(f"{what}: {clock.message or clock.give_up(self.base_url, reason)}")
            if self.stop is not None and self.stop.is_set():
                raise SolrUnavailable(f"{what}: {problem} (navd is stopping: not retried)")
            pause = min(delay * (1 + random.random() / 4), left)  # noqa: S311 - jitter only
            log.warning("Solr request failed; retrying", what=what, attempt=attempt,
                        retry_in_seconds=round(pause, 2), problem=problem)
            clock.pause(pause, self.stop)
            if clock.over:  # another request of the run gave up, or the run ended: no attempt more
                raise SolrUnavailable(f"{what}: {clock.message or problem + ' (its run ended)'}")
            delay = min(delay * 2, self.config.max_backoff_seconds)
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover

    # -- writes -----------------------------------------------------------------------------

    def post_update(self, core: str, body: bytes, *, params: Mapping[str, Any] | None = None) -> None:
        """Post a pre-serialised JSON update body (a JSON array of documents, or commands)."""
        name = self.core(core)
        self.request("POST", f"{name}/update", data=body, headers=_JSON, params=params,
                     what=f"update of {name}")

    def add(self, core: str, docs: Iterable[Mapping[str, Any]]) -> int:
        """Upsert documents synchronously in batches. Returns the number written."""
        written = 0
        for batch in batches(docs, self.config.batch_size):
            self.post_update(core, serialise(batch))
            written += len(batch)
        return written

    def atomic_update(self, core: str, updates: Iterable[Mapping[str, Any]]) -> int:
        """Partial updates, e.g. `{"identity": id, "deleted": {"set": True}}`.

        Each update must name an existing document's identity; Solr rejects the batch otherwise
        (the `_version_: 1` guard keeps a partial update from creating a stub document).
        """
        guarded = ({**u, "_version_": 1} for u in updates)
        return self.add(core, guarded)

    def delete_ids(self, core: str, ids: Iterable[str]) -> int:
        deleted = 0
        for batch in batches(ids, self.config.batch_size):
            self.post_update(core, json.dumps({"delete": batch}).encode())
            deleted += len(batch)
        return deleted

    def delete_query(self, core: str, query: str) -> None:
        self.post_update(core, json.dumps({"delete": {"query": query}}).encode())

    def commit(self, core: str, *, soft: bool = False) -> None:
        params = {"softCommit": "true"} if soft else {"commit": "true"}
        self.post_update(core, b"{}", params={**params, "waitSearcher": "true"})

    # -- bulk loading ---------------------------------------------------------------------------

    @contextmanager
    def bulk_load(self, cores: Iterable[str] = BULK_CORES, *,
                  settle_seconds: float = 300.0) -> Iterator[SolrIndex]:
        """Soft commits off on `cores` while the body writes, then one hard commit per core and
        the cores' own soft-commit interval back, also when the body fails.

        Each soft commit opens a searcher and flushes a small segment; at Solr's 1 s interval a
        load of millions of documents spends much of Solr's CPU on searchers nobody reads. The
        switch is the Config API's overlay (`configoverlay.json`, kept across restarts), so a
        load killed before it ends leaves soft commits off until `navd solr init` or
        `restore_soft_commits` removes the overlay. Hard commits (autoCommit, openSearcher
        false) keep running, so the transaction log stays short."""
        names = [self.core(core) for core in cores]
        try:
            for name in names:
                self._set_soft_commits(name, on=False, settle_seconds=settle_seconds)
        except BaseException:
            # A core switched before the one that failed must not stay without soft commits.
            self.restore_soft_commits(names, settle_seconds=settle_seconds)
            raise
        log.info("bulk load: soft commits off until the load ends", cores=names)
        try:
            yield self
        finally:
            try:
                for name in names:  # the documents become visible here, in one searcher per core
                    self.commit(name)
            finally:
                self.restore_soft_commits(names, settle_seconds=settle_seconds)

    def restore_soft_commits(self, cores: Iterable[str] = BULK_CORES, *,
                             settle_seconds: float = 300.0) -> list[str]:
        """Give `cores` back their configured soft-commit interval where a bulk load switched it
        off (a load that was killed). Returns the cores that had it switched off."""
        restored = []
        for core in cores:
            name = self.core(core)
            if self.soft_commits_off(name):
                self._set_soft_commits(name, on=True, settle_seconds=settle_seconds)
                restored.append(name)
        if restored:
            log.info("soft commits on again", cores=restored)
        return restored

    def soft_commits_off(self, core: str) -> bool:
        """Whether a bulk load's overlay switches the core's soft commits off."""
        name = self.core(core)
        overlay = self.request("GET", f"{name}/config/overlay", what=f"config overlay of {name}")
        props = overlay.get("overlay", {}).get("props", {})
        # unset-property leaves an empty {"autoSoftCommit": {}} behind
        return props.get("updateHandler", {}).get("autoSoftCommit", {}).get("maxTime") is not None

    def _set_soft_commits(self, name: str, *, on: bool, settle_seconds: float) -> None:
        command = ({"unset-property": SOFT_COMMIT_PROPERTY} if on
                   else {"set-property": {SOFT_COMMIT_PROPERTY: -1}})
        try:
            self.request("POST", f"{name}/config", data=json.dumps(command).encode(), headers=_JSON,
                         what=f"config of {name}")
        except SolrError as exc:
            # SolrCloud answers 500 when a replica has not reloaded the new overlay within 30 s
            # (a busy host); the overlay is stored in ZooKeeper already and the replica follows.
            if "within 30 seconds" not in str(exc):
                raise
        deadline = time.monotonic() + settle_seconds
        while self.soft_commits_off(name) == on:
            if time.monotonic() > deadline:
                raise SolrUnavailable(f"config of {name}: Solr did not take the soft-commit setting "
                                      f"within {settle_seconds:.0f} s")
            time.sleep(1)

    # -- reads ------------------------------------------------------------------------------

    def search(self, core: str, query: str, *, rows: int = 10, start: int = 0,
               fl: str | None = None, sort: str | None = None,
               filters: Iterable[str] = (), params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Raw Solr query syntax; returns Solr's JSON response."""
        name = self.core(core)
        query_params: dict[str, Any] = {"q": query, "rows": rows, "start": start,
                                        "fq": list(filters), **(params or {})}
        if fl:
            query_params["fl"] = fl
        if sort:
            query_params["sort"] = sort
        # Form-encoded POST: lineage queries with many ids would overflow a URL.
        return self.request("POST", f"{name}/select", data=query_params,
                            what=f"query {shown(query)} on {name}")

    def get(self, core: str, ids: Iterable[str]) -> list[dict[str, Any]]:
        """Real-time get by identity: sees documents before they are committed."""
        name = self.core(core)
        docs: list[dict[str, Any]] = []
        for batch in batches(ids, 500):
            # Form-encoded POST, as `search`: 500 identities overflow a URL (HTTP 414).
            body = self.request("POST", f"{name}/get", data={"ids": ",".join(batch)},
                                what=f"get from {name}")
            docs.extend(body.get("response", {}).get("docs", []))
        return docs

    def count(self, core: str, query: str = "*:*", filters: Iterable[str] = ()) -> int:
        return int(self.search(core, query, rows=0, filters=filters)["response"]["numFound"])

    def scan(self, core: str, query: str = "*:*", *, fl: str | None = None,
             filters: Iterable[str] = (), page_size: int = 1000,
             partition_above: int = SCAN_PARTITION_ABOVE,
             params: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every matching document in identity order, streamed page by page with cursorMark
        (stable under writes).

        Each cursorMark page costs Solr a pass over every matching document after the cursor,
        and with soft commits every second the filters are recomputed for most pages, so one
        cursor over N documents costs O(N^2 / page_size). Above `partition_above` matches the
        scan is split into identity ranges of about that many documents each (identities of
        elements and relations are uniform MD5 hex), one cursor per range, keeping each page
        cheap; the ranges cover every string, so nothing is missed. `params` go with every page
        (values a filter refers to as `$name`).
        """
        name = self.core(core)
        extra = dict(params or {})
        first = self._scan_page(name, query, fl, list(filters), page_size, "*", extra)
        matches = int(first["response"]["numFound"])
        if matches <= partition_above:
            yield from self._scan_from(name, query, fl, list(filters), page_size, first, extra)
            return
        for identity_range in identity_ranges(matches, partition_above):
            ranged = [*filters, f"identity:{identity_range}"]
            page = self._scan_page(name, query, fl, ranged, page_size, "*", extra)
            yield from self._scan_from(name, query, fl, ranged, page_size, page, extra)

    def _scan_page(self, name: str, query: str, fl: str | None, filters: list[str], page_size: int,
                   cursor: str, extra: Mapping[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {**extra, "q": query, "rows": page_size, "sort": "identity asc",
                                  "cursorMark": cursor, "fq": filters}
        if fl:
            params["fl"] = fl
        return self.request("POST", f"{name}/select", data=params, what=f"scan {shown(query)} of {name}")

    def _scan_from(self, name: str, query: str, fl: str | None, filters: list[str], page_size: int,
                   body: dict[str, Any], extra: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        cursor = "*"
        while True:
            docs = body["response"]["docs"]
            yield from docs
            next_cursor = body["nextCursorMark"]
            # A short page is the last one: asking on would only fetch an empty page (a round
            # trip per scan, most of the lineage walk's scans being one page).
            if next_cursor == cursor or len(docs) < page_size:
                return
            cursor = next_cursor
            body = self._scan_page(name, query, fl, filters, page_size, cursor, extra)

    def system_info(self) -> dict[str, Any]:
        return self.request("GET", "admin/info/system", what="Solr system info")


def serialise(docs: list[Mapping[str, Any]]) -> bytes:
    """A JSON array of documents, as Solr's /update takes it.

    orjson, not the json module: on the indexing hot path it is ~17x faster (0.4 vs 7.1 us per
    element document, measured here), which the writer benchmark needs to keep up with a raw post.
    """
    return orjson.dumps(docs)


def batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Lists of at most `size` items, streamed."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class CoreWriter:
    """Batched, threaded upserts of documents into one core.

    At most `2 * threads` batches are in memory at once, so producers are paced by Solr.
    `flush()` returns once every document added so far is acknowledged by Solr (in its
    transaction log): callers advance their own positions only after that.
    """

    def __init__(self, index: SolrIndex, core: str, *, batch_size: int | None = None,
                 threads: int | None = None, params: Mapping[str, str] | None = None,
                 before_submit: Callable[[], None] | None = None,
                 prepare: Callable[[list[Mapping[str, Any]]], None] | None = None) -> None:
        self.index = index
        self.core = index.core(core)
        self.params = dict(params or {})
        self.before_submit = before_submit
        # Completes a batch's documents just before it is posted: what needs Solr to be read
        # (the annotations carried onto element documents) then fails where a post would, and
        # is reported by flush/close like one, never by add().
        self.prepare = prepare
        self.batch_size = batch_size or index.config.batch_size
        threads = threads or index.config.writer_threads
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"solr-{self.core}")
        self._slots = threading.BoundedSemaphore(threads * 2)
        self._pending: list[Mapping[str, Any]] = []
        self._in_flight: set[Future[None]] = set()
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self.written = 0

    def add(self, doc: Mapping[str, Any]) -> None:
        self._pending.append(doc)
        if len(self._pending) >= self.batch_size:
            self._submit()

    def add_many(self, docs: Iterable[Mapping[str, Any]]) -> None:
        for doc in docs:
            self.add(doc)

    def _submit(self) -> None:
        self._raise_if_failed()
        if self.before_submit is not None:
            self.before_submit()
        if self.prepare is not None:  # before the batch is taken: if it fails, nothing is dropped
            self.prepare(self._pending)
        batch, self._pending = self._pending, []
        body = serialise(batch)
        self._slots.acquire()
        future = self._pool.submit(self._post, body, len(batch))
        with self._lock:
            self._in_flight.add(future)
        future.add_done_callback(self._done)

    def _post(self, body: bytes, count: int) -> None:
        self.index.post_update(self.core, body, params=self.params)
        with self._lock:
            self.written += count

    def _done(self, future: Future[None]) -> None:
        self._slots.release()
        problem = (SolrUnavailable(f"a batch for {self.core} was abandoned at close")
                   if future.cancelled() else future.exception())
        with self._lock:
            self._in_flight.discard(future)
        if problem is not None:
            self._fail(problem)

    def _fail(self, problem: BaseException) -> None:
        """Keep the first failure: every later submit and flush raises it."""
        with self._lock:
            if self._error is None:
                self._error = problem

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    def submit_pending(self) -> None:
        """Post what is pending without waiting for it."""
        if self._pending:
            self._submit()

    def flush(self, timeout: float | None = None) -> None:
        """Post what is pending and wait until Solr has acknowledged everything."""
        if self._pending:
            self._submit()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                waiting = list(self._in_flight)
            if not waiting:
                break
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            oldest = waiting[0]
            try:
                oldest.result(timeout=remaining)
            except TimeoutError:
                raise SolrUnavailable(f"writes to {self.core} not acknowledged within {timeout}s") from None
            except CancelledError:
                self._fail(SolrUnavailable(f"a batch for {self.core} was abandoned at close"))
                break
            except Exception as exc:  # noqa: BLE001 - raised below
                # Recorded here, not only by _done: a future wakes its waiters before it runs its
                # callbacks, so on a busy host _done may not have run yet, and a flush that
                # trusted it alone would report a failed batch as written (positions committed
                # past records Solr never got).
                self._fail(exc)
                break
            with self._lock:
                self._in_flight.discard(oldest)  # acknowledged: _done may still be on its way
        self._raise_if_failed()

    def close(self, timeout: float | None = None) -> bool:
        """Flush and stop the threads. True when every document reached Solr."""
        try:
            self.flush(timeout)
            return True
        except SolrError as exc:
            log.error("documents not written to Solr", core=self.core, error=str(exc))
            return False
        finally:
            self._pool.shutdown(wait=timeout is None, cancel_futures=True)

    def abandon(self) -> None:
        """Drop what is not sent yet and stop the threads, without waiting: for a writer whose
        run failed, whose records the next run writes again."""
        self._pending = []
        self._pool.shutdown(wait=False, cancel_futures=True)


class IndexWriter:
    """Writes Element, Relation and ElementStub records: the writer every extractor uses."""

    def __init__(self, index: SolrIndex, *, batch_size: int | None = None,
                 threads: int | None = None, carryover: Carryover | None = None) -> None:
        # What people wrote on entities (navd/annotations): put into every element document
        # this writer writes, so no extraction wipes it from search. A caller making a writer
        # per small batch (the OpenLineage intake) passes one it keeps, read once.
        self.carryover = carryover if carryover is not None else Carryover(index)
        self._reprojected_after = 0  # element documents written when it last projected again
        self.elements = CoreWriter(index, "elements", batch_size=batch_size, threads=threads,
                                   prepare=self._carry)
        self.relations = CoreWriter(index, "relations", batch_size=batch_size, threads=threads)
        # `_version_: -1` means "only if absent"; failOnVersionConflicts=false makes Solr skip
        # the stubs whose element exists instead of failing their whole batch. As many threads
        # as the other writers: Solr checks and adds each stub under its id's lock, so batches
        # racing on one id leave the first and skip the rest, and a pass that writes mostly stubs
        # (lineage logs: a query's columns and tables) is not held to one request at a time.
        self.stubs = CoreWriter(index, "elements", batch_size=batch_size, threads=threads,
                                params={"failOnVersionConflicts": "false"}, prepare=self._carry)
        # Deletions are atomic updates guarded by `_version_: 1` ("only if it exists"): flagging
        # must never create a bare document for an element that was never indexed. So they go
        # after every element and stub written before them is acknowledged (a table created and
        # dropped within one batch would otherwise be skipped as absent).
        self.deletions = CoreWriter(index, "elements", batch_size=batch_size, threads=1,
                                    params={"failOnVersionConflicts": "false"},
                                    before_submit=self._flush_elements)

    def _flush_elements(self) -> None:
        self.elements.flush()
        self.stubs.flush()

    def _carry(self, batch: list[Any]) -> None:
        """Put the annotations of the batch's annotated entities into their documents (a dict
        lookup per document; the carry-over is read from Solr at the first batch)."""
        carried = self.carryover.fields
        if carried:
            for doc in batch:
                fields = carried.get(doc["identity"])
                if fields:
                    doc.update(fields)

    def write(self, record: Record) -> None:
        if isinstance(record, Element):
            self.elements.add(element_document(record))
        elif isinstance(record, Relation):
            self.relations.add(relation_document(record))
        elif isinstance(record, ElementStub):
            self.stubs.add(stub_document(record))
        elif isinstance(record, Deletion):
            self.deletions.add(deletion_update(record))
        else:
            raise TypeError(f"cannot index {type(record).__name__}: expected Element, Relation, ElementStub "
                            f"or Deletion")

    def write_all(self, records: Iterable[Record]) -> None:
        # `write` for a stream, with the two common record types dispatched inline: on a host
        # where Solr and the extractor share the CPUs every microsecond per record is taken
        # from Solr's indexing (tests/bench/bench_writer.py). Anything else goes through write().
        add_element, add_relation, write = self.elements.add, self.relations.add, self.write
        for record in records:
            kind = type(record)
            if kind is Element:
                add_element(element_document(record))
            elif kind is Relation:
                add_relation(relation_document(record))
            else:
                write(record)

    def submit(self) -> None:
        """Post the cores' pending batches at once, without waiting for them (`flush` waits): a
        caller with more to prepare meanwhile (the OpenLineage intake's next group of events)
        overlaps it with Solr's work. Deletions are not posted here: they follow the elements'
        acknowledgement, in `flush`."""
        for writer in (self.elements, self.stubs, self.relations):
            writer.submit_pending()

    def flush(self, timeout: float | None = None, *, reproject: bool = True) -> None:
        """Wait until Solr has acknowledged every record written so far.

        The cores' last partial batches are posted at once, not one core after the other, so a
        flush costs one round trip of waiting rather than three. Deletions, which must follow
        the elements, still go after them (their writer flushes the elements first). Without
        `reproject`, the annotations are not projected again after it: only for a caller that
        has them projected after a later flush of the same carry-over (the OpenLineage intake,
        whose next group of events is in flight)."""
        self.submit()
        for writer in (self.elements, self.stubs, self.relations, self.deletions):
            writer.flush(timeout)
        if reproject:
            self._reproject()

    def _reproject(self) -> None:
        """Edits made since the carry-over was loaded may have been overwritten by the element
        documents just acknowledged: projected again, after them (when any were written)."""
        written = self.written_elements()
        if written != self._reprojected_after:
            self.carryover.reproject()
            self._reprojected_after = written

    def flush_together(self, timeout: float | None = None, *, reproject: bool = True) -> None:
        """The same as `flush` (which posts the cores' pending batches at once now); kept for
        the callers that asked for it by name (the OpenLineage intake)."""
        self.flush(timeout, reproject=reproject)

    def close(self, timeout: float | None = None) -> bool:
        # The cores' last batches go out together (as in flush) before each core is waited on.
        for writer in (self.elements, self.stubs, self.relations):
            try:
                writer.submit_pending()
            except Exception:  # noqa: BLE001, S110 - that core failed: its close() below reports it as before
                pass
        closed = all([w.close(timeout) for w in (self.elements, self.stubs, self.relations, self.deletions)])
        if closed:
            try:
                self._reproject()
            except SolrError as exc:
                log.error("annotations not projected again after the run's writes", error=str(exc))
                return False
        return closed

    def written_elements(self) -> int:
        return self.elements.written + self.stubs.written

    def abandon(self) -> None:
        for writer in (self.elements, self.stubs, self.relations, self.deletions):
            writer.abandon()

    @property
    def counts(self) -> dict[str, int]:
        return {"elements": self.elements.written, "relations": self.relations.written,
                "stubs": self.stubs.written, "deletions": self.deletions.written}

"""OpenLineage events kept as they were posted: what Marquez's `GET /api/v1/events/lineage`
returns and what `navd openlineage replay` maps again after a mapping change.

Each event taken by the intake is a document of the runs core (kind OPENLINEAGE_EVENT), written
with the event's own documents before the intake answers 2xx (so a kept event is as durable as
its lineage). The body is a stored-only field: never indexed, so no term limit applies (Solr
indexes at most 32,766 bytes as one term; an event of wide tables is megabytes). Indexed beside
it: the run's id, the execution identity the event maps to (what the purge keeps it by), its
eventTime (what the Marquez API pages by), its type, and a sequence number of its keeping (what
the bound trims by). The identity is the body's SHA-256, so a spooled event written again, or
the same event posted twice, is one kept event.

Bounded: at most `[openlineage] keep_events` are kept, the oldest kept first to go (`trim`, run
by the intake every so many events and by the purge). Purged with their runs: once an event's
time is before the purge threshold and its execution is gone from the index (the purge removed
it), the event goes too; an event of no run (a DatasetEvent, a JobEvent) goes at the threshold.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

import orjson

from navd.index.client import SolrIndex, batches
from navd.index.documents import parse_solr_date, solr_date
from navd.index.filters import terms_filter

KIND = "OPENLINEAGE_EVENT"
COMPONENT = "openlineage"
CORE = "runs"
RUN, EXECUTION, TIME, TYPE, KEPT, BODY = ("ol_event_run", "ol_event_execution", "ol_event_time", "ol_event_type",
                                          "ol_event_kept", "ol_event_json")
_OF_KIND = f"kind:{KIND}"


@dataclasses.dataclass(frozen=True)
class KeptPage:
    """One page of kept events (parsed JSON, in the order asked) and how many match in all."""

    events: tuple[dict[str, Any], ...]
    total: int


class Sequence:
    """Numbers of keeping, increasing within a process and (nanoseconds since the epoch) across
    restarts: the order the bound trims by. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, time.time_ns())
            return self._last


def event_identity(body: bytes) -> str:
    return f"olevent|{hashlib.sha256(body).hexdigest()}"


def kept_document(event: Mapping[str, Any], body: bytes, execution: str | None, sequence: int) -> dict[str, Any]:
    """The runs-core document of one taken event (`event` checked: its core fields are there).
    `body` is the event as posted (gunzipped), kept byte for byte."""
    run = event.get("run")
    run_id = run.get("runId") if isinstance(run, dict) else None
    doc: dict[str, Any] = {"identity": event_identity(body), "kind": KIND, "component": COMPONENT,
                           TIME: _solr_time(str(event["eventTime"])), KEPT: sequence,
                           BODY: body.decode("utf-8")}
    if isinstance(run_id, str):
        doc[RUN] = run_id
    if isinstance(event.get("eventType"), str):
        doc[TYPE] = event["eventType"]
    if execution is not None:
        doc[EXECUTION] = execution
    return doc


def _solr_time(text: str) -> str:
    """An eventTime (ISO 8601 with a zone, validated by the intake) in Solr's format."""
    return solr_date(parse_solr_date(text))


def keep(index: SolrIndex, docs: list[dict[str, Any]]) -> None:
    """Write kept-event documents, acknowledged (the caller answers its 2xx after this)."""
    if docs:
        index.add(CORE, docs)


def page(index: SolrIndex, *, before: datetime, after: datetime, descending: bool, limit: int,
         offset: int) -> KeptPage:
    """Marquez's paging of events: eventTime in [after, before), by eventTime (then keeping
    order) ascending or descending, `limit` from `offset`."""
    direction = "desc" if descending else "asc"
    found = index.search(CORE, _OF_KIND, rows=limit, start=offset, fl=BODY,
                         filters=[f"{TIME}:[{solr_date(after)} TO {solr_date(before)}}}"],
                         sort=f"{TIME} {direction},{KEPT} {direction}")
    response = found["response"]
    return KeptPage(tuple(orjson.loads(doc[BODY]) for doc in response["docs"]), int(response["numFound"]))


def bodies(index: SolrIndex, *, after: datetime | None = None, before: datetime | None = None) -> Iterator[bytes]:
    """The kept events' bodies, eventTime in [after, before) (either end open when None), in the
    order they were kept (what a replay maps again)."""
    window = f"{TIME}:[{solr_date(after) if after else '*'} TO {solr_date(before) if before else '*'}}}"
    last = -1
    while True:
        docs = index.search(CORE, _OF_KIND, rows=200, fl=f"{BODY},{KEPT}",
                            filters=[f"{KEPT}:{{{last} TO *]", window], sort=f"{KEPT} asc")["response"]["docs"]
        if not docs:
            return
        for doc in docs:
            yield str(doc[BODY]).encode("utf-8")
        last = int(docs[-1][KEPT])


def count(index: SolrIndex) -> int:
    """How many events are kept."""
    return index.count(CORE, _OF_KIND)


def trim(index: SolrIndex, bound: int) -> int:
    """Remove the oldest kept events past `bound` (what a search sees: committed ones); how many."""
    total = index.count(CORE, _OF_KIND)
    excess = total - bound
    if excess <= 0:
        return 0
    if bound == 0:
        index.delete_query(CORE, _OF_KIND)
        return total
    docs = index.search(CORE, _OF_KIND, rows=1, start=excess - 1, fl=KEPT, sort=f"{KEPT} asc")["response"]["docs"]
    if not docs:
        return 0
    index.delete_query(CORE, f"{_OF_KIND} AND {KEPT}:[* TO {int(docs[0][KEPT])}]")
    return excess


def purgeable(index: SolrIndex, threshold: str) -> Iterator[list[str]]:
    """Batches of kept events to purge: eventTime before `threshold` (a Solr date) and their
    execution no longer in the index, or of no run at all."""
    old = index.scan(CORE, _OF_KIND, fl=f"identity,{EXECUTION}", filters=[f"{TIME}:[* TO {threshold}]"])
    for batch in batches(old, 500):
        executions = sorted({str(d[EXECUTION]) for d in batch if EXECUTION in d})
        present = _present(index, executions)
        gone = [str(d["identity"]) for d in batch if d.get(EXECUTION) not in present]
        if gone:
            yield gone


def _present(index: SolrIndex, executions: Iterable[str]) -> set[str]:
    ids = list(executions)
    if not ids:
        return set()
    return {str(d["identity"]) for d in index.scan("elements", "*:*", fl="identity",
                                                    filters=[terms_filter("identity", ids)])}

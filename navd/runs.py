"""Run records: every extractor, linker and purge run as a document in the runs core.

A run is written RUNNING when it starts and SUCCEEDED or FAILED (with the error's first line)
when it ends, with its counts as `count_<name>` fields; its id is the extractor run id that the
run's documents carry as `extractorRunId`. `navd status` reads them back. Recording never hides
the run's own outcome: a run record Solr does not take is logged and the run goes on.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from navd.errors import NavdError, first_line
from navd.index.client import SolrIndex, serialise
from navd.index.documents import RUN_KIND, parse_solr_date, run_document, solr_date
from navd.index.queries import SCHEDULE_KIND, component_runs, interrupted_runs, runs_and_schedules
from navd.logs import get_logger

log = get_logger("navd.runs")
KIND = RUN_KIND
#: the note `recorded_run` puts on the exception that failed a run it recorded
_RECORDED_NOTE = "navd: recorded as the FAILED run "

#: the error of a RUNNING record whose process ended without saying how the run ended
INTERRUPTED = "interrupted: navd stopped before the run ended"


@dataclasses.dataclass
class Run:
    run_id: str
    component: str
    started: datetime
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    #: set by a quiet run (a push poll that found nothing new): nothing is recorded for it
    quiet: bool = False
    #: what the run refused to do and why (a report's `refused`, e.g. deletions the fail-safe held)
    refused: str = ""

    def document(self, state: str, *, ended: datetime | None = None, error: str | None = None) -> dict[str, Any]:
        return run_document(self.run_id, self.component, state, started=self.started, host=socket.gethostname(),
                            ended=ended, error=error, counts=self.counts, refused=self.refused)


def _post(index: SolrIndex, doc: Mapping[str, Any]) -> None:
    try:
        index.post_update("runs", serialise([doc]))
        index.commit("runs", soft=True)
    except NavdError as exc:
        log.warning("run record not written", run=doc["identity"], state=doc["state"], reason=str(exc))


@contextmanager
def recorded_run(index: SolrIndex, component: str, run_id: str, *, announce: bool = True) -> Iterator[Run]:
    """Record the run of the `with` body; set `counts` on the yielded Run before it ends.

    `announce=False` writes no RUNNING record first (push polls every few seconds: only their
    outcome is worth a document, and none if the body sets `quiet`)."""
    run = Run(run_id, component, datetime.now(UTC))
    if announce:
        _post(index, run.document("RUNNING"))
    try:
        yield run
    except BaseException as exc:
        _post(index, run.document("FAILED", ended=datetime.now(UTC), error=first_line(exc)))
        exc.add_note(_RECORDED_NOTE + run_id)  # so the daemon does not record it a second time
        raise
    if not run.quiet:
        _post(index, run.document("SUCCEEDED", ended=datetime.now(UTC)))


def is_recorded(exc: BaseException) -> bool:
    """Whether a recorded run already wrote `exc` into its FAILED record."""
    return any(note.startswith(_RECORDED_NOTE) for note in getattr(exc, "__notes__", ()))


def record_failure(index: SolrIndex, component: str, run_id: str, exc: BaseException) -> None:
    """A FAILED run record for a failure outside any recorded run (a lock directory that cannot
    be created, an extractor that cannot be built): `navd status` shows it like any other."""
    now = datetime.now(UTC)
    _post(index, Run(run_id, component, now).document("FAILED", ended=now, error=first_line(exc)))


def schedule_identity(component: str) -> str:
    return f"schedule#{component}"


def publish_schedule(index: SolrIndex, schedule: Mapping[str, datetime | float | None]) -> None:
    """Tell `navd status` when `navd run` starts each component next: a time, a poll interval in
    seconds (push extractors), or None (not scheduled: the daemon stopped, or the config
    disabled the component)."""
    docs = []
    for component, next_run in schedule.items():
        doc: dict[str, Any] = {"identity": schedule_identity(component), "kind": SCHEDULE_KIND,
                               "component": component, "host": socket.gethostname(), "pid": os.getpid()}
        if isinstance(next_run, datetime):
            doc.update(state="SCHEDULED", nextRun=solr_date(next_run))
        elif next_run is not None:
            doc.update(state=f"POLLING every {next_run:g}s")
        else:
            doc.update(state="NOT_SCHEDULED")
        docs.append(doc)
    if not docs:
        return
    try:
        index.post_update("runs", serialise(docs))
        index.commit("runs", soft=True)
    except NavdError as exc:
        log.warning("schedule not published", reason=str(exc))


def abandon_interrupted_runs(index: SolrIndex, is_running: Callable[[str], bool]) -> int:
    """Mark FAILED the RUNNING records of this host whose component nothing runs now: what a
    killed navd left behind. Returns how many."""
    stale = [doc for doc in index.scan("runs", interrupted_runs(socket.gethostname()))
             if not is_running(str(doc["component"]))]
    for doc in stale:
        doc = {k: v for k, v in doc.items() if k not in ("_version_", "lastIndexed")}
        doc.update(state="FAILED", ended=solr_date(datetime.now(UTC)), error=INTERRUPTED)
        _post(index, doc)
    return len(stale)


def components(index: SolrIndex) -> list[str]:
    """Every component with a run record or a published schedule, sorted."""
    facets = index.search("runs", runs_and_schedules(), rows=0, params={
        "facet": "true", "facet.field": "component", "facet.limit": "-1", "facet.mincount": "1"})
    counted = facets.get("facet_counts", {}).get("facet_fields", {}).get("component", [])
    return sorted(str(name) for name in counted[::2])


def last_run_and_success(index: SolrIndex, component: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The component's newest run record and its newest successful one ({} when none)."""
    last = _latest(index, component_runs(component))
    success = _latest(index, component_runs(component, state="SUCCEEDED"))
    return last, success


def last_started(index: SolrIndex, component: str) -> datetime | None:
    """When the component's newest recorded run began, or None if it never ran. Solr errors
    are the caller's to handle (the daemon schedules as if there were no run)."""
    last = _latest(index, component_runs(component))
    return parse_solr_date(str(last["started"])) if last.get("started") else None


def schedules(index: SolrIndex, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The published schedule records of the components `names`, by component."""
    return {str(d["component"]): d for d in index.get("runs", [schedule_identity(n) for n in names])}


def run_page(index: SolrIndex, component: str, *, rows: int, start: int) -> tuple[int, list[dict[str, Any]]]:
    """(how many, `rows` from `start`) of the component's run records, newest first."""
    body = index.search("runs", component_runs(component), rows=rows, start=start, sort="started desc")
    return int(body["response"]["numFound"]), list(body["response"]["docs"])


def run_counts(index: SolrIndex, component: str) -> tuple[int, int, dict[str, Any]]:
    """(run records, FAILED ones, the newest ended run or {}) of the component."""
    runs = index.count("runs", component_runs(component))
    if not runs:
        return 0, 0, {}
    failures = index.count("runs", component_runs(component, state="FAILED"))
    newest = index.search("runs", component_runs(component, ended=True), rows=1, sort="ended desc")["response"]["docs"]
    return runs, failures, newest[0] if newest else {}


def shown_run_ids(index: SolrIndex) -> set[str]:
    """The run records `navd status` shows (each component's last run and last success): purge
    keeps them however old."""
    shown: set[str] = set()
    for name in components(index):
        shown.update(str(doc["identity"]) for doc in last_run_and_success(index, name) if doc)
    return shown


def _latest(index: SolrIndex, query: str) -> dict[str, Any]:
    docs = index.search("runs", query, rows=1, sort="started desc")["response"]["docs"]
    if not docs:
        return {}
    return {k: v for k, v in docs[0].items() if k not in ("_version_", "lastIndexed", "kind")}

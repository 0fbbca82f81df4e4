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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from navd.errors import NavdError, first_line
from navd.index.client import SolrIndex, serialise
from navd.index.documents import solr_date
from navd.logs import get_logger
from navd.process import pid_runs

log = get_logger("navd.runs")
KIND = "run"


@dataclasses.dataclass
class Run:
    run_id: str
    component: str
    started: datetime
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    #: set by a quiet run (a push poll that found nothing new): nothing is recorded for it
    quiet: bool = False

    def document(self, state: str, *, ended: datetime | None = None, error: str | None = None) -> dict[str, Any]:
        doc: dict[str, Any] = {"identity": self.run_id, "kind": KIND, "component": self.component, "state": state,
                               "started": solr_date(self.started), "host": socket.gethostname()}
        if ended is not None:
            doc["ended"] = solr_date(ended)
        if error:
            doc["error"] = error[:2000]
        doc.update({f"count_{name}": int(value) for name, value in self.counts.items()})
        return doc


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
        raise
    if not run.quiet:
        _post(index, run.document("SUCCEEDED", ended=datetime.now(UTC)))


def schedule_identity(component: str) -> str:
    return f"schedule#{component}"


def publish_schedule(index: SolrIndex, schedule: Mapping[str, datetime | float | None]) -> None:
    """Tell `navd status` when `navd run` starts each component next: a time, a poll interval in
    seconds (push extractors), or None (not scheduled: the daemon stopped, or the config
    disabled the component)."""
    docs = []
    for component, next_run in schedule.items():
        doc: dict[str, Any] = {"identity": schedule_identity(component), "kind": "schedule",
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
    query = f'kind:{KIND} AND state:RUNNING AND host:"{socket.gethostname()}"'
    stale = [doc for doc in index.scan("runs", query) if not is_running(str(doc["component"]))]
    for doc in stale:
        doc = {k: v for k, v in doc.items() if k not in ("_version_", "lastIndexed")}
        doc.update(state="FAILED", ended=solr_date(datetime.now(UTC)),
                   error="interrupted: navd stopped before the run ended")
        _post(index, doc)
    return len(stale)


def _components(index: SolrIndex) -> list[str]:
    facets = index.search("runs", f"kind:({KIND} OR schedule)", rows=0, params={
        "facet": "true", "facet.field": "component", "facet.limit": "-1", "facet.mincount": "1"})
    counted = facets.get("facet_counts", {}).get("facet_fields", {}).get("component", [])
    return sorted(str(name) for name in counted[::2])


def _last_run_and_success(index: SolrIndex, component: str) -> tuple[dict[str, Any], dict[str, Any]]:
    last = _latest(index, f'kind:{KIND} AND component:"{component}"')
    success = _latest(index, f'kind:{KIND} AND component:"{component}" AND state:SUCCEEDED')
    return last, success


def shown_run_ids(index: SolrIndex) -> set[str]:
    """The run records `navd status` shows (each component's last run and last success): purge
    keeps them however old."""
    shown: set[str] = set()
    for name in _components(index):
        shown.update(str(doc["identity"]) for doc in _last_run_and_success(index, name) if doc)
    return shown


def status(index: SolrIndex) -> dict[str, Any]:
    """Per component the last run and the last success; totals per core."""
    components: dict[str, dict[str, Any]] = {}
    names = _components(index)
    schedules = {str(d["component"]): d for d in index.get("runs", [schedule_identity(n) for n in names])}
    for name in names:
        last, success = _last_run_and_success(index, name)
        schedule = schedules.get(name, {})
        next_run = schedule.get("nextRun") or schedule.get("state")
        if next_run != "NOT_SCHEDULED" and _publisher_gone(schedule):
            next_run = "NOT_SCHEDULED"  # a killed navd could not say so itself
        elif schedule.get("nextRun") and last.get("started") and schedule["nextRun"] <= last["started"]:
            # The schedule still names the run that began last: the daemon sets the next one when
            # it is done with that run, including the link pass that follows an extraction.
            next_run = "AFTER_CURRENT_RUN"
        components[name] = {"last_run": last, "last_success": success.get("ended") if success else None,
                            "next_run": next_run}
    totals = {"elements": index.count("elements"), "relations": index.count("relations"),
              "unlinked_relations": index.count("relations", "unlinked:true"),
              "deleted_elements": index.count("elements", "deleted:true")}
    return {"components": components, "totals": totals}


def _publisher_gone(schedule: Mapping[str, Any]) -> bool:
    """The schedule was published by a `navd run` on this host that no longer runs. Unknown
    (another host, no /proc) counts as running."""
    if schedule.get("host") != socket.gethostname() or "pid" not in schedule or not Path("/proc/self").exists():
        return False
    return not pid_runs(int(schedule["pid"]), "navd")


def _latest(index: SolrIndex, query: str) -> dict[str, Any]:
    docs = index.search("runs", query, rows=1, sort="started desc")["response"]["docs"]
    if not docs:
        return {}
    return {k: v for k, v in docs[0].items() if k not in ("_version_", "lastIndexed", "kind")}

"""What `navd status` (and /api/status, /api/runs, /metrics) tell: per component the last run,
the last success and the next run, a component's run history, and totals per core; read from
the run records (navd/runs.py) and this host's locks and processes."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from navd.index.client import SolrIndex
from navd.index.documents import DELETED_FILTER, UNLINKED_FILTER
from navd.locks import lock_held
from navd.process import pid_runs
from navd.index.documents import parse_solr_date
from navd.runs import INTERRUPTED, components, last_run_and_success, run_counts, run_page, schedules


class ComponentStatus(TypedDict):
    last_run: dict[str, Any]  # {} when never run
    last_success: str | None  # when the last successful run ended
    next_run: str | None  # a Solr date, "POLLING every Ns", NOT_SCHEDULED or AFTER_CURRENT_RUN


class Status(TypedDict):
    components: dict[str, ComponentStatus]
    totals: dict[str, int]


def status(index: SolrIndex, state_root: Path | None = None) -> Status:
    """Per component the last run, the last success and the next run; totals per core.

    With `state_root` (the state directory runs lock their component in), a RUNNING last run
    of this host whose component lock nobody holds is shown FAILED, interrupted: its process
    was killed (the daemon records it so at its next start, a next run replaces it)."""
    shown: dict[str, ComponentStatus] = {}
    names = components(index)
    published = schedules(index, names)
    for name in names:
        last, success = last_run_and_success(index, name)
        if state_root is not None and _interrupted(last, state_root):
            last = {**last, "state": "FAILED", "error": INTERRUPTED}
        schedule = published.get(name, {})
        next_run = schedule.get("nextRun") or schedule.get("state")
        if next_run != "NOT_SCHEDULED" and _publisher_gone(schedule):
            next_run = "NOT_SCHEDULED"  # a killed navd could not say so itself
        elif schedule.get("nextRun") and last.get("started") and schedule["nextRun"] <= last["started"]:
            # The schedule still names the run that began last: the daemon sets the next one when
            # it is done with that run, including the link pass that follows an extraction.
            next_run = "AFTER_CURRENT_RUN"
        shown[name] = {"last_run": last, "last_success": success.get("ended") if success else None,
                       "next_run": next_run}
    totals = {"elements": index.count("elements"), "relations": index.count("relations"),
              "unlinked_relations": index.count("relations", UNLINKED_FILTER),
              "deleted_elements": index.count("elements", DELETED_FILTER)}
    return {"components": shown, "totals": totals}


def _interrupted(run: Mapping[str, Any], state_root: Path) -> bool:
    """A RUNNING record of this host whose component's lock is free: no process runs it. A lock
    this state directory never had (another one's runs) tells nothing."""
    return (run.get("state") == "RUNNING" and run.get("host") == socket.gethostname()
            and lock_held(state_root, str(run["component"])) is False)


def _publisher_gone(schedule: Mapping[str, Any]) -> bool:
    """The schedule was published by a `navd run` on this host that no longer runs. Unknown
    (another host, no /proc) counts as running."""
    if schedule.get("host") != socket.gethostname() or "pid" not in schedule or not Path("/proc/self").exists():
        return False
    return not pid_runs(int(schedule["pid"]), "navd")


@dataclasses.dataclass(frozen=True)
class RunPage:
    found: int  # run records of the component in all
    start: int
    runs: tuple[dict[str, Any], ...]  # newest first, Solr-maintained fields dropped


def run_history(index: SolrIndex, component: str, *, rows: int = 20, start: int = 0) -> RunPage:
    """The component's run records, newest first, `rows` from `start`."""
    if rows < 0 or start < 0:
        raise ValueError(f"run history page rows={rows} start={start}: both must be >= 0")
    found, docs = run_page(index, component, rows=rows, start=start)
    runs = tuple({k: v for k, v in doc.items() if k not in ("_version_", "lastIndexed", "kind")} for doc in docs)
    return RunPage(found, start, runs)


@dataclasses.dataclass(frozen=True)
class ComponentTotals:
    runs: int  # run records (any state)
    failures: int  # FAILED ones
    last_duration_seconds: float | None  # of the newest ended run
    last_success_ended: str | None  # a Solr date


def run_totals(index: SolrIndex) -> dict[str, ComponentTotals]:
    """Per component with run records: how many runs, how many failed, the newest ended run's
    duration and when the last success ended (what /metrics exports)."""
    totals: dict[str, ComponentTotals] = {}
    for name in components(index):
        runs, failures, newest = run_counts(index, name)
        if not runs:
            continue  # only a published schedule so far
        duration = None
        if newest.get("started"):
            duration = (parse_solr_date(str(newest["ended"])) - parse_solr_date(str(newest["started"]))).total_seconds()
        _, success = last_run_and_success(index, name)
        totals[name] = ComponentTotals(runs, failures, duration, success.get("ended") if success else None)
    return totals

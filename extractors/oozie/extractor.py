"""The Oozie pull extractor: workflow, coordinator and bundle jobs from Oozie's REST API (v2).

Workflows: a run pages through `GET /v2/jobs?jobtype=wf&filter=sortby=lastModifiedTime` (newest
change first; `offset` counts from 1, `len` a page, the answer's `total` says when the list
ends) down to the jobs modified before the last run's newest change (minus a safety overlap, on
Oozie's own clock), and reads each changed job with `GET /v2/job/<id>?show=info` (its actions).
Jobs already written with the same modification time (the overlap re-reads them) are recognised
and skipped. The first run (and `--full`) reads the jobs modified in the last
`[oozie] first_run_days`.

Coordinators and bundles: Oozie's JSON for them carries no last-modified time, so every run lists
them all (they are few: one per scheduled pipeline, not one per run) and reads the ones whose
listed state (status, times, last materialised action) differs from the last run's: a
coordinator with its newest page of actions, a bundle with its coordinators.

SPNEGO with `auth = "kerberos"` through navd's one HTTP session factory, as the YARN extractor.
An unreachable server, an HTTP error or a body that is not Oozie's JSON end the run with one
OozieExtractionError line and the watermark stays; a malformed job is skipped and logged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

from navd.config import NavdConfig
from navd.errors import ConfigError, NavdError, connection_reason, first_line
from navd.extractors import CHECKPOINT, Checkpoint
from navd.http import http_session
from navd.logs import get_logger
from navd.model import Record
from navd.state import write_atomically

from .records import (BadJob, bundle_records, coordinator_records, jobs_of, parse_bundle, parse_coordinator,
                      parse_time, parse_workflow, workflow_records)
from .settings import OozieConfig, oozie_settings

log = get_logger("navd.extractor.oozie")
OVERLAP = timedelta(minutes=5)
#: coordinator actions read per changed coordinator (its newest)
COORDINATOR_ACTIONS = 100
#: `GET /v2/jobs?jobtype=...`: the key of the answer's list of jobs
JOB_LISTS = {"wf": "workflows", "coordinator": "coordinatorjobs", "bundle": "bundlejobs"}
#: what changes in a listed coordinator or bundle when it does something (their JSON has no
#: last-modified time): status, pause/end, the last and next materialised action, the kick-off
LISTED_STATE = ("status", "startTime", "endTime", "pauseTime", "kickoffTime", "lastAction", "nextMaterializedTime",
                "total")


class OozieExtractionError(NavdError):
    """An Oozie extraction run failed (no server reachable, an HTTP error, a bad body)."""


@dataclasses.dataclass
class OozieReport:
    workflows: int = 0
    actions: int = 0
    yarn_links: int = 0
    coordinators: int = 0
    bundles: int = 0
    skipped: int = 0
    records: int = 0
    requests: int = 0
    server: str = ""


def make_session(settings: OozieConfig | None = None) -> requests.Session:
    """Oozie's session: JSON answers; SPNEGO with `auth = "kerberos"` (navd's one SPNEGO auth)."""
    settings = settings or OozieConfig()
    return http_session("[oozie]", auth=settings.auth, keytab=settings.keytab, principal=settings.principal,
                        headers={"Accept": "application/json"})


class OozieExtractor:
    name = "oozie"

    def __init__(self, urls: Sequence[str], state_dir: Path, *, session: requests.Session | None = None,
                 page_size: int = 100, first_run: timedelta = timedelta(days=7), timeout: float = 30.0,
                 extractor_run_id: str | None = None) -> None:
        if not urls:
            raise ConfigError("[oozie] urls: no Oozie server configured")
        self.urls = [u.rstrip("/") for u in urls]
        self.session = session or make_session()
        self.page_size = page_size
        self.first_run = first_run
        self.timeout = timeout
        self.state_file = state_dir / "oozie-state.json"
        self.extractor_run_id = extractor_run_id or f"oozie##{datetime.now(UTC):%Y%m%dT%H%M%S}"
        self.report = OozieReport()
        self._state = self._load_state()
        self._pending: dict[str, dict[str, str]] = {}
        self._listed: dict[str, set[str]] = {}

    @classmethod
    def from_config(cls, config: NavdConfig, state_dir: Path, *, extractor_run_id: str | None = None) -> OozieExtractor:
        settings = oozie_settings(config)
        return cls(settings.urls, state_dir, session=make_session(settings), page_size=int(settings.page_size),
                   first_run=timedelta(days=settings.first_run_days), timeout=settings.timeout_seconds,
                   extractor_run_id=extractor_run_id)

    # -- one run ---------------------------------------------------------------------------------

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """The records of every changed job, and a CHECKPOINT after each kind's last one: the
        watermark is the newest change of a listing read newest first, and a coordinator or bundle
        Oozie no longer lists is forgotten, so only a whole listing may be committed."""
        self.report = OozieReport()
        self._pending = {kind: {} for kind in JOB_LISTS}
        self._listed = {}
        server = self._server()
        self.report.server = server
        for kind in JOB_LISTS:
            seen = {} if full else dict(self._state.get(kind, {}))
            if kind == "wf":
                newest = None if full else self._state.get("wf-newest")
                since = (datetime.fromisoformat(newest) - OVERLAP) if newest else datetime.now(UTC) - self.first_run
                changed = self._changed_workflows(server, since, seen)
            else:
                changed = self._changed_listed(server, kind, seen)
            read = False
            for job_id, mark in changed:
                yield from self._job(server, kind, job_id)
                self._pending[kind][job_id] = mark
                read = True
            if read:
                yield CHECKPOINT

    def commit(self) -> None:
        """Persist what the run wrote. Call only after the writer flushed every record yielded."""
        for kind, done in self._pending.items():
            if kind == "wf":
                if not done:
                    continue
                known = {**self._state.get(kind, {}), **done}
                newest = max(known.values())
                horizon = (datetime.fromisoformat(newest) - OVERLAP).isoformat()
                self._state[kind] = {job: when for job, when in known.items() if when >= horizon}
                self._state["wf-newest"] = newest
            elif kind in self._listed:
                # the jobs Oozie still lists (a purged one is forgotten), with what they were when read
                listed = self._listed[kind]
                known = {**self._state.get(kind, {}), **done}
                self._state[kind] = {job: mark for job, mark in known.items() if job in listed}
        self._pending = {kind: {} for kind in JOB_LISTS}
        self._listed = {}  # at a mark every listing begun has been read to its end
        try:
            write_atomically(self.state_file, json.dumps(self._state).encode())
        except OSError as exc:
            raise OozieExtractionError(f"{self.state_file}: cannot write the Oozie state: {exc.strerror}") from None

    def rollback(self) -> None:
        """The pass failed or was stopped: what it read since the last commit is forgotten."""
        self._pending = {kind: {} for kind in JOB_LISTS}
        self._listed = {}
        self._state = self._load_state()

    def finished(self, records: int) -> OozieReport:
        self.report.records = records
        return self.report

    def close(self) -> None:
        self.session.close()

    # -- internals ------------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        try:
            state = json.loads(self.state_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("Oozie state unreadable; the next run reads the first run's window again",
                        file=str(self.state_file), reason=str(exc))
            return {}
        return state if isinstance(state, dict) else {}

    def _get(self, url: str, params: dict[str, str]) -> Any:
        self.report.requests += 1
        try:
            response = self.session.get(url, params=params, timeout=self.timeout, allow_redirects=False)
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise OozieExtractionError(f"Oozie {url} unreachable: {connection_reason(exc)}") from None
        except requests.RequestException as exc:
            raise OozieExtractionError(f"Oozie {url}: {first_line(exc, 300)}") from None
        if response.status_code != 200:
            raise OozieExtractionError(f"Oozie {url} answered HTTP {response.status_code}: "
                                       f"{response.text.strip()[:200]!r}")
        try:
            return response.json()
        except ValueError:
            raise OozieExtractionError(f"Oozie {url} answered something other than JSON: "
                                       f"{response.text.strip()[:200]!r}") from None

    def _server(self) -> str:
        """The first of `urls` whose `/v2/admin/status` answers."""
        problems = []
        for base in self.urls:
            try:
                self._get(f"{base}/v2/admin/status", {})
                return base
            except OozieExtractionError as exc:
                problems.append(str(exc))
        raise OozieExtractionError("no Oozie server answered: " + "; ".join(problems))

    def _listing(self, server: str, kind: str, sort: str) -> Iterator[tuple[str, Any]]:
        """(job id, listed job) of every job of `kind`, as Oozie pages them: `offset` counts from
        1, `len` jobs a page, and the answer's `total` (all jobs that match) says when to stop; a
        server that leaves `total` out is read until a page comes back short."""
        key = JOB_LISTS[kind]
        offset = 1
        while True:
            url = f"{server}/v2/jobs"
            body = self._get(url, {"jobtype": kind, "offset": str(offset), "len": str(self.page_size),
                                   "filter": f"sortby={sort}", "timezone": "GMT"})
            try:
                jobs = jobs_of(body, key)
            except BadJob as exc:
                raise OozieExtractionError(f"Oozie {url}: {exc}") from None
            total = body.get("total")
            if total is not None and (not isinstance(total, int) or isinstance(total, bool) or total < 0):
                raise OozieExtractionError(f"Oozie {url}: total {total!r:.40} is not a count of jobs")
            for job in jobs:
                yield str(job.get("id") or job.get("coordJobId") or job.get("bundleJobId") or ""), job
            offset += len(jobs)
            if not jobs or (offset > total if total is not None else len(jobs) < self.page_size):
                return

    def _changed_workflows(self, server: str, since: datetime, seen: dict[str, str]) -> Iterator[tuple[str, str]]:
        """(job id, its lastModTime) of the workflows modified since `since`, newest first, not
        already written with that time."""
        for job_id, job in self._listing(server, "wf", "lastModifiedTime"):
            try:
                modified = parse_time(job.get("lastModTime"), "lastModTime", job_id or "a listed workflow")
            except BadJob as exc:
                self.report.skipped += 1
                log.warning("Oozie job skipped", reason=str(exc))
                continue
            if modified is None:
                continue
            if modified < since:
                return
            when = modified.astimezone(UTC).isoformat()
            if seen.get(job_id) != when:
                yield job_id, when

    def _changed_listed(self, server: str, kind: str, seen: dict[str, str]) -> Iterator[tuple[str, str]]:
        """(job id, a digest of its listed state) of the coordinators or bundles whose listed
        state differs from the one last written."""
        listed = self._listed.setdefault(kind, set())
        for job_id, job in self._listing(server, kind, "createdTime"):
            if not job_id:
                self.report.skipped += 1
                log.warning("Oozie job skipped", reason=f"a listed {kind} without an id")
                continue
            listed.add(job_id)
            state = json.dumps([job.get(key) for key in LISTED_STATE], default=str)
            mark = hashlib.sha256(state.encode()).hexdigest()[:16]
            if seen.get(job_id) != mark:
                yield job_id, mark

    def _job(self, server: str, kind: str, job_id: str) -> Iterator[Record]:
        params = {"show": "info", "timezone": "GMT"}
        if kind == "coordinator":
            # v2 answers no coordinator actions unless asked for a page of them
            params.update({"order": "desc", "offset": "1", "len": str(COORDINATOR_ACTIONS)})
        body = self._get(f"{server}/v2/job/{requests.utils.quote(job_id, safe='@-')}", params)
        try:
            if kind == "wf":
                workflow = parse_workflow(body)
                self.report.workflows += 1
                self.report.actions += len(workflow.actions)
                self.report.yarn_links += sum(len(a.applications) for a in workflow.actions)
                yield from workflow_records(workflow, extractor_run_id=self.extractor_run_id)
            elif kind == "coordinator":
                coordinator = parse_coordinator(body)
                self.report.coordinators += 1
                yield from coordinator_records(coordinator, extractor_run_id=self.extractor_run_id)
            else:
                bundle = parse_bundle(body)
                self.report.bundles += 1
                yield from bundle_records(bundle, extractor_run_id=self.extractor_run_id)
        except BadJob as exc:
            self.report.skipped += 1
            log.warning("Oozie job skipped", job=job_id, reason=str(exc))

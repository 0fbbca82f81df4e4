"""YARN pull extractor: applications from the ResourceManager's REST API (`/ws/v1/cluster/apps`).

A run asks for two lists: the applications that finished since the last run (`finishedTimeBegin`
= the newest finish time seen, minus a safety overlap, on the RM's own clock), and those not
finished yet (`states=NEW,...,RUNNING`). So a run costs what happened since the last one, an
application that started and ended between two runs is caught by the first list, and a running
one is written again, with its final state, once it has finished. The first run (and `--full`)
takes every application the RM remembers (`yarn.resourcemanager.max-completed-applications`).
Finished applications already written (the overlap re-reads the last minutes) are recognised by
id and finish time, kept in the state file for the overlap window only, and not written again.

RM HA: `[yarn] urls` lists every ResourceManager; a run asks each `/ws/v1/cluster/info` and uses
the one whose haState is ACTIVE (a non-HA RM reports none). SPNEGO with `auth = "kerberos"`
(navd.kerberos, the `kerberos` extra; `[yarn] keytab` renews tickets). Failures: no RM reachable, no active RM, an HTTP error
or a body that is not the apps JSON end the run with one YarnExtractionError line under
navd.extractor.yarn and the watermark stays; a malformed application record is skipped and
logged with its id.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import requests

from navd.config import NavdConfig
from navd.errors import ConfigError, NavdError, connection_reason, first_line
from navd.extractors import CHECKPOINT, Checkpoint
from navd.extractors.yarn.settings import YarnConfig, yarn_settings
from navd.http import http_session
from navd.logs import get_logger
from navd.model import Record
from navd.state import write_atomically

from .records import UNFINISHED_STATES, BadApplication, application_records, parse_application

log = get_logger("navd.extractor.yarn")
OVERLAP_MS = 5 * 60 * 1000


class YarnExtractionError(NavdError):
    """A YARN extraction run failed (RM unreachable, no active RM, an HTTP error, a bad body)."""


@dataclasses.dataclass
class YarnReport:
    applications: int = 0
    finished: int = 0
    unfinished: int = 0
    skipped: int = 0
    records: int = 0
    resourcemanager: str = ""


def make_session(yarn: YarnConfig | None = None) -> requests.Session:
    """The ResourceManager session: JSON answers; SPNEGO with `auth = "kerberos"` (navd's one
    SPNEGO auth, as the Solr and WebHDFS clients': a `[yarn] keytab` renews tickets as they end)."""
    yarn = yarn or YarnConfig()
    return http_session("[yarn]", auth=yarn.auth, keytab=yarn.keytab, principal=yarn.principal,
                        headers={"Accept": "application/json"})


class YarnExtractor:
    name = "yarn"

    def __init__(self, urls: Sequence[str], state_dir: Path, *, session: requests.Session | None = None,
                 timeout: float = 30.0, extractor_run_id: str | None = None) -> None:
        if not urls:
            raise ConfigError("[yarn] urls: no ResourceManager configured")
        self.urls = [u.rstrip("/") for u in urls]
        self.session = session or make_session()
        self.timeout = timeout
        self.state_file = state_dir / "yarn-state.json"
        self.extractor_run_id = extractor_run_id or f"yarn##{datetime.now().strftime('%Y%m%dT%H%M%S')}"
        self.report = YarnReport()
        self._watermark, self._recent = self._load_state()
        self._newest_finish = self._watermark
        self._pending: dict[str, int] = {}

    @classmethod
    def from_config(cls, config: NavdConfig, state_dir: Path, *,
                    extractor_run_id: str | None = None) -> YarnExtractor:
        yarn = yarn_settings(config)
        return cls(yarn.urls, state_dir, session=make_session(yarn),
                   extractor_run_id=extractor_run_id)

    # -- one run (navd.extractors.run_pass writes it and commits at the marks) -------------------

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """Records of the applications finished since the watermark (on the RM's clock) and of
        those still running; a CHECKPOINT after the finished ones, if any: the watermark is the
        newest finish time of a list the RM does not order, so only a whole list may be committed."""
        self.report = YarnReport()
        self._pending = {}
        self._newest_finish = self._watermark
        rm = self._active_resourcemanager()
        self.report.resourcemanager = rm
        begin = None if full or self._watermark is None else max(0, self._watermark - OVERLAP_MS)
        finished_params = {"finishedTimeBegin": str(begin)} if begin is not None else {}
        seen: set[str] = set()
        for params, counter in ((finished_params, "finished"), ({"states": ",".join(UNFINISHED_STATES)}, "unfinished")):
            for raw in self._applications(rm, params):
                try:
                    app = parse_application(raw)
                except BadApplication as exc:
                    self.report.skipped += 1
                    log.warning("YARN application skipped", reason=str(exc))
                    continue
                if app.application_id in seen or (
                        not full and app.finished_ms and self._recent.get(app.application_id) == app.finished_ms):
                    continue
                seen.add(app.application_id)
                if app.finished_ms:  # remembered at commit, once Solr has the records
                    self._pending[app.application_id] = app.finished_ms
                self.report.applications += 1
                setattr(self.report, counter, getattr(self.report, counter) + 1)
                if app.finished_ms:
                    self._newest_finish = max(self._newest_finish or 0, app.finished_ms)
                yield from application_records(app, extractor_run_id=self.extractor_run_id)
            if counter == "finished" and self._pending:
                yield CHECKPOINT

    def commit(self) -> None:
        """Persist the watermark. Call only after the writer has flushed every record yielded."""
        if self._newest_finish is None:
            return
        horizon = self._newest_finish - OVERLAP_MS
        self._recent.update(self._pending)
        self._pending = {}
        self._recent = {app: finished for app, finished in self._recent.items() if finished >= horizon}
        payload = json.dumps({"newestFinishedTime": self._newest_finish, "recent": self._recent}).encode()
        try:
            write_atomically(self.state_file, payload)
        except OSError as exc:
            raise YarnExtractionError(f"{self.state_file}: cannot write the YARN state: {exc.strerror}") from None
        self._watermark = self._newest_finish

    def rollback(self) -> None:
        """The pass failed or was stopped: what it read since the last commit is forgotten."""
        self._pending = {}
        self._watermark, self._recent = self._load_state()
        self._newest_finish = self._watermark

    def finished(self, records: int) -> YarnReport:
        self.report.records = records
        return self.report

    def close(self) -> None:
        self.session.close()

    # -- internals ------------------------------------------------------------------------------

    def _load_state(self) -> tuple[int | None, dict[str, int]]:
        try:
            state = json.loads(self.state_file.read_text(encoding="utf-8"))
            newest, recent = state.get("newestFinishedTime"), state.get("recent") or {}
        except FileNotFoundError:
            return None, {}
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("YARN state unreadable; next run reads every application", file=str(self.state_file),
                        reason=str(exc))
            return None, {}
        if not isinstance(newest, int) or not isinstance(recent, dict):
            return None, {}
        return newest, {str(k): int(v) for k, v in recent.items() if isinstance(v, int)}

    def _get(self, url: str, params: dict[str, str] | None = None) -> Any:
        response = self.session.get(url, params=params, timeout=self.timeout, allow_redirects=False)
        if response.status_code != 200:
            raise YarnExtractionError(f"ResourceManager {url} answered HTTP {response.status_code}: "
                                      f"{response.text.strip()[:200]!r}")
        try:
            return response.json()
        except ValueError:
            raise YarnExtractionError(f"ResourceManager {url} answered something other than JSON: "
                                      f"{response.text.strip()[:200]!r}") from None

    def _active_resourcemanager(self) -> str:
        problems: list[str] = []
        for base in self.urls:
            try:
                info = self._get(f"{base}/ws/v1/cluster/info").get("clusterInfo", {})
            except (requests.ConnectionError, requests.Timeout) as exc:
                problems.append(f"{base}: {connection_reason(exc)}")
                continue
            except (requests.RequestException, YarnExtractionError, AttributeError) as exc:
                problems.append(f"{base}: {first_line(exc, 300)}")
                continue
            state = info.get("haState")
            if state in (None, "", "ACTIVE", "NA") or len(self.urls) == 1 and state != "STANDBY":
                return base
            problems.append(f"{base}: haState {state}")
        message = "no active ResourceManager: " + "; ".join(problems)
        raise YarnExtractionError(message)

    def _applications(self, rm: str, params: dict[str, str]) -> list[Any]:
        try:
            body = self._get(f"{rm}/ws/v1/cluster/apps", params)
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise YarnExtractionError(f"ResourceManager {rm} unreachable: {connection_reason(exc)}") from None
        except requests.RequestException as exc:
            raise YarnExtractionError(f"ResourceManager {rm} unreachable: {first_line(exc, 300)}") from None
        apps = body.get("apps", False) if isinstance(body, dict) else False
        if apps is None or apps == {}:  # the RM's ways of saying "none": `{"apps": null}`, `{"apps": {}}`
            return []
        listed = apps.get("app") if isinstance(apps, dict) else None
        if not isinstance(listed, list):
            message = f"ResourceManager {rm} sent apps that are not a list: {str(body)[:200]!r}"
            raise YarnExtractionError(message)
        return listed


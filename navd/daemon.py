"""`navd run`: the long-running service, in the foreground (systemd Type=notify).

APScheduler starts each component; every job schedules its own next start when it ends, so a
pull extractor's run starts `interval` after the previous one *completed* and two runs of one
component never overlap (across processes too: runs take the component's lock, which a manual
`navd extract` also takes). Push components (the Spark tailer) are polled every `interval` of
their section. Components come from navd.registry and runs from navd.runner, which also runs the
after-runs components (the linker) after every extraction; a component whose first start is
"resumed" (purge, every `[purge] interval_days`, a week by default) counts from its last run's
start across restarts. The daemon schedules all of them through one contract, `Scheduled`: how
each starts, runs and retries is its own; when is the daemon's.

Signals: SIGTERM/SIGINT stop taking work, let running runs reach their next record or batch
boundary (state stays at the last checkpoint, which is what a restart continues from), and exit
0 within `[daemon] stop_timeout_seconds`; SIGHUP reloads the config (a bad file is logged and the
running config kept; a changed `[server]` restarts the server, an unchanged one is left serving).

No failure ends the service: a bad config at reload is one log line and the running config stays;
a job that raises, whatever it raises, is logged, recorded as a FAILED run and scheduled again.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from collections.abc import Callable
from types import FrameType
from typing import Any

from navd import __version__
from navd.catalog.service import lookup_scope
from navd.config import NavdConfig, extractor_state_dir, load_config
from navd.errors import ConfigError, NavdError, RunStopped, SolrError, SolrUnavailable, first_line
from navd.extractors import Component
from navd.index.client import SolrIndex
from navd.index.clients import client_for
from navd.locks import LockBusy, is_locked
from navd.logs import get_logger, setup_logging
from navd.registry import components
from navd.runner import PushTail, RunResult, new_run_id, run_extraction
from navd.runs import abandon_interrupted_runs, is_recorded, last_started, publish_schedule, record_failure
from navd.systemd import Notifier

log = get_logger("navd.daemon")

#: a failing push poll is retried with a doubling delay up to this, not every few seconds
MAX_PUSH_RETRY_SECONDS = 60.0
#: when a job's next start cannot be computed from the config, it starts again after this
FALLBACK_DELAY = timedelta(minutes=1)
#: a start skipped because the component's previous run was still finishing is tried again after this
SKIPPED_START_DELAY = timedelta(seconds=1)
#: a reload's wait for the old server's thread: uvicorn's graceful shutdown (5 s) and some
SERVER_STOP_SECONDS = 10.0


def enabled_components(config: NavdConfig) -> list[str]:
    """The ids of the registered components the config has the daemon schedule: those started
    every interval that it enables (the after-runs ones start after these)."""
    return [c.id for c in components().values() if c.trigger == "interval" and c.enabled(config)]


@dataclasses.dataclass(frozen=True)
class Scheduled:
    """One piece of work the daemon schedules: a component's runs or polls. The
    scheduling (first start, next start, retry, a reload that changes the interval) is the same
    for all; only these differ."""

    id: str
    #: a run's next start is published to the runs core (`navd status`); a push tail's is not:
    #: it is "polling" every interval
    publishes_next_run: bool
    interval: Callable[[NavdConfig], timedelta]
    #: when to start it first, at `now` (a start of navd, or a reload that enables it)
    first_start: Callable[[datetime], datetime]
    #: one run; returns the wait before the next
    run: Callable[[], timedelta]
    #: the wait after a run that raised something unexpected
    retry_delay: Callable[[], timedelta]


def _served(config: NavdConfig) -> tuple[Any, ...]:
    """What the server reads from the config: its section, the Solr it queries, what names typed
    without a cluster or file system stand for, where its users are, and the OpenLineage intake
    it runs (`[openlineage]`: enabled, namespaces, spool)."""
    from navd.config import openlineage_spool_path, server_users_path

    return (config.server, config.solr, lookup_scope(config), server_users_path(config),
            config.openlineage, openlineage_spool_path(config))


def log_run(component: Component[Any, Any], result: RunResult) -> None:
    """A run's summary under its component's logger, then a failed follow-up's (the link pass's)
    under the follower's."""
    get_logger(f"navd.{component.id}").info(component.summary(result.report))
    for follow_up in result.follow_ups:
        if follow_up.error is not None:
            get_logger(f"navd.{follow_up.component.id}").error(
                f"{follow_up.component.run_title} pass failed: {follow_up.error}")


class Daemon:
    def __init__(self, config: NavdConfig, *, config_path: str | None = None,
                 log_format: str | None = None, log_level: str | None = None,
                 notifier: Notifier | None = None) -> None:
        self.config = config
        self.config_path = config_path
        self.log_overrides = (log_format, log_level)
        self.notifier = notifier or Notifier()
        self.stop = threading.Event()
        self.reload_requested = threading.Event()
        self.wakeup = threading.Event()
        self.index = self._new_index(config)
        self.scheduler: Any = None
        self.server: Any = None  # navd.server.run.BackgroundServer with [server] enabled = true
        self.next_runs: dict[str, datetime | None] = {}
        self.running: set[str] = set()
        self._running_lock = threading.Lock()
        self._tails: dict[str, PushTail] = {}
        #: tails to rebuild from their committed positions at their next poll (config reloaded);
        #: never closed from the reload itself, which may run while they poll
        self._stale_tails: set[str] = set()
        self._busy_logged: set[str] = set()
        self._push_failures: dict[str, int] = {}

    # -- lifecycle --------------------------------------------------------------------------

    def run(self) -> int:
        enabled = enabled_components(self.config)
        adding = [c for c in components().values() if not c.upkeep]
        if not any(c.id in enabled for c in adding) and not self.config.server.enabled:
            sections = ", ".join(f"[{c.section}]" for c in adding) + ", [server]"
            raise ConfigError(f"{self.config.source}: nothing to run: enable at least one of {sections} "
                              "(enabled = true)")
        self._install_signal_handlers()
        log.info("navd starting", version=__version__, config=self.config.source, components=enabled,
                 solr=self.index.base_url, state_dir=str(extractor_state_dir(self.config)))
        self._check_solr()
        state_root = extractor_state_dir(self.config)
        try:
            abandoned = abandon_interrupted_runs(self.index, lambda c: is_locked(state_root, c))
            if abandoned:
                log.info("runs left RUNNING by a stopped navd marked FAILED", runs=abandoned)
        except (SolrError, OSError) as exc:  # a lock that cannot be opened fails its runs, not the start
            log.warning("could not check for interrupted runs", reason=first_line(exc))
        if self.config.server.enabled:
            # Listening before READY: systemd's "started" then means the API answers too. A
            # server that cannot listen fails the start (fail closed), before any run begins.
            from navd.server.run import BackgroundServer

            self.server = BackgroundServer(self.config)
            self.server.start()
        self.scheduler = self._new_scheduler()
        self.scheduler.start()
        self._reconcile(previous=[])
        serving = [f"server on {self._server_url()}"] if self.server else []
        self.notifier.notify("READY=1", f"STATUS=running: {', '.join([*enabled, *serving])}",
                             f"MAINPID={os.getpid()}")
        log.info("navd running", components=enabled)
        ping = self.notifier.watchdog_seconds / 2 if self.notifier.watchdog_seconds else None
        while not self.stop.is_set():
            self.wakeup.wait(timeout=min(ping, 5.0) if ping else 5.0)
            self.wakeup.clear()
            if ping:
                self.notifier.notify("WATCHDOG=1")
            if self.reload_requested.is_set() and not self.stop.is_set():
                self.reload_requested.clear()
                try:
                    self._reload()
                except Exception:  # applying a loaded config failed half-way: keep serving
                    log.exception("config reload failed while applying it; jobs keep their schedules")
        return self._shutdown()

    def _new_scheduler(self) -> Any:
        from apscheduler.events import EVENT_JOB_MAX_INSTANCES
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler

        # One worker per component and one for the linker a job may wait on: nothing queues.
        scheduler = BackgroundScheduler(
            timezone=UTC, executors={"default": ThreadPoolExecutor(max_workers=8)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None})
        scheduler.add_listener(self._start_skipped_again, EVENT_JOB_MAX_INSTANCES)
        return scheduler

    def _install_signal_handlers(self) -> None:
        def stop(signum: int, _frame: FrameType | None) -> None:
            self.stop.set()
            self.wakeup.set()

        def reload(signum: int, _frame: FrameType | None) -> None:
            self.reload_requested.set()
            self.wakeup.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, reload)

    def _shutdown(self) -> int:
        self.notifier.notify("STOPPING=1", "STATUS=stopping")
        with self._running_lock:
            running = sorted(self.running)
        log.info("navd stopping", running=running)
        if self.server is not None:
            self.server.stop(timeout=5.0)  # stop answering first: the index may go away with us
        self.scheduler.shutdown(wait=False)
        deadline = time.monotonic() + self.config.daemon.stop_timeout_seconds
        while time.monotonic() < deadline:
            with self._running_lock:
                if not self.running:
                    break
            time.sleep(0.05)
        with self._running_lock:
            abandoned = sorted(self.running)
        for component_id in list(self._tails):
            if component_id not in abandoned:
                self._close_tail(component_id)
        publish_schedule(self.index, {c: None for c in self.next_runs})
        if abandoned:
            # Their state is at the last checkpoint: the next start continues from there.
            log.warning("navd stopped; runs still blocked in I/O abandoned", components=abandoned)
            _flush_streams()
            os._exit(0)
        log.info("navd stopped")
        return 0

    def _server_url(self) -> str:
        from navd.server.run import url

        return url(self.server.config)

    def _apply_server(self, old: NavdConfig, new: NavdConfig) -> None:
        """A reload that changes what the server serves restarts it: the old one stops (requests
        in flight finish) before the new one binds, so the same port can be kept. Unchanged, the
        server is left alone and no request is dropped.

        A new server that cannot start (its port taken, TLS files that do not load) leaves none:
        one error line, and systemd's STATUS says so. Falling back to the old settings could
        serve with the auth or TLS the admin just replaced, which fails open; a reload that fixes
        the config starts it."""
        from navd.server.run import BackgroundServer, url

        wanted = new.server.enabled
        if _served(new) == _served(old) and (self.server is not None) == wanted:
            return
        if self.server is not None:
            log.info("[server] changed: stopping the server to restart it" if wanted
                     else "[server] enabled = false: stopping the server", url=self._server_url())
            self.server.stop(timeout=SERVER_STOP_SECONDS)
            self.server = None
        if wanted:
            try:
                server = BackgroundServer(new)
                server.start()
            except NavdError as exc:
                log.error(f"the reloaded [server] could not start, so no server runs (fail closed) until a "
                          f"reload starts it: {first_line(exc)}", url=url(new))
            else:
                self.server = server
        serving = f"server on {self._server_url()}" if self.server else (
            "server failed to start (see the log)" if wanted else "")
        self.notifier.notify(f"STATUS=running: {', '.join([*enabled_components(new), *filter(None, [serving])])}")

    def _check_solr(self) -> None:
        """Fail closed on a Solr that refuses navd (bad credentials, missing cores); a Solr that
        is down is waited for by every run's writer."""
        try:
            for core in ("elements", "relations", "runs"):
                self.index.count(core)
        except SolrUnavailable as exc:
            log.warning("Solr unreachable at start; runs retry until it is back", reason=first_line(exc))
        except SolrError as exc:
            raise SolrError(f"Solr at {self.index.base_url} refused navd: {first_line(exc)} "
                            "(check [solr] auth; create the cores with `navd solr init`)") from None

    def _new_index(self, config: NavdConfig) -> SolrIndex:
        return client_for(config, "writer", stop=self.stop)

    # -- scheduling -------------------------------------------------------------------------

    def _schedule(self, component: str, when: datetime) -> None:
        if self.stop.is_set():
            return
        self.scheduler.add_job(self._job, "date", run_date=when, id=component, args=[component],
                               replace_existing=True)
        self.next_runs[component] = when
        work = self._scheduled(self.config).get(component)
        if work is not None and work.publishes_next_run:
            publish_schedule(self.index, {component: when})

    def _scheduled(self, config: NavdConfig) -> dict[str, Scheduled]:
        """What `config` has the daemon schedule, by id: every enabled interval component."""
        by_id = {c.id: c for c in components().values()}
        return {component: self._work(by_id[component]) for component in enabled_components(config)}

    def _work(self, source: Component[Any, Any]) -> Scheduled:
        if source.mode == "pull":
            first_start = (lambda now: self._resumed_start(source, now)) if source.first_start == "resumed" else (
                lambda now: now)
            return Scheduled(source.id, publishes_next_run=True, interval=source.interval,
                             first_start=first_start, run=lambda: self._pull(source),
                             retry_delay=lambda: source.interval(self.config))
        return Scheduled(source.id, publishes_next_run=False, interval=source.interval,
                         first_start=lambda now: now, run=lambda: self._push_poll(source),
                         retry_delay=lambda: self._push_retry_delay(source))

    def _reconcile(self, previous: list[str]) -> None:
        """Schedule what the config enables and was not running; unschedule what it disabled."""
        now = datetime.now(UTC)
        current = enabled_components(self.config)
        for work in self._scheduled(self.config).values():
            if work.id not in previous:
                self._schedule(work.id, work.first_start(now))
        for component in components().values():
            if component.mode == "push" and component.id in current and component.id not in previous:
                publish_schedule(self.index, {component.id: component.interval(self.config).total_seconds()})
        for component in previous:
            if component not in current:
                if self.scheduler.get_job(component) is not None:
                    self.scheduler.remove_job(component)
                self.next_runs[component] = None
                publish_schedule(self.index, {component: None})
                log.info("component disabled by the reloaded config", component=component)

    def _resumed_start(self, component: Component[Any, Any], now: datetime) -> datetime:
        """Keep a long interval's rhythm across restarts: a week after the last purge began, not
        a week after navd last started (a service restarted weekly would never purge)."""
        interval = component.interval(self.config)
        try:
            last = last_started(self.index, component.id)
        except SolrError:
            last = None
        return now + interval if last is None else max(now, last + interval)

    def _job(self, component: str) -> None:
        with self._running_lock:
            self.running.add(component)
        delay = FALLBACK_DELAY
        try:
            work = self._scheduled(self.config).get(component)
            if work is None:  # disabled by a reload while this start was due
                return
            delay = work.run()
        except Exception as exc:  # a bug in one run must not stop the service, nor its schedule
            delay = self._retry_delay(component)
            get_logger(f"navd.{component}").exception(f"run failed with an unexpected error: {first_line(exc)}",
                                                      retry_in_seconds=delay.total_seconds())
            self._record(component, exc)
        finally:
            with self._running_lock:
                self.running.discard(component)
            self._reschedule(component, delay)

    def _start_skipped_again(self, event: Any) -> None:
        """A job schedules its next start before it returns, then publishes it to the runs core.
        When Solr is slow (cores loading after an outage) that publishing can outlast a short
        interval: the next start comes while the job still runs, APScheduler skips it, and a
        skipped date job is gone, so the component would never run again. Start it once more
        shortly (again, while the job is still finishing)."""
        if self.stop.is_set():
            return
        component = str(event.job_id)
        when = datetime.now(UTC) + SKIPPED_START_DELAY
        self.scheduler.add_job(self._job, "date", run_date=when, id=component, args=[component],
                               replace_existing=True)
        self.next_runs[component] = when

    def _reschedule(self, component: str, delay: timedelta) -> None:
        """Schedule the job's next start; it is never dropped: when that fails, log it and
        try again after FALLBACK_DELAY."""
        try:
            if component in self._scheduled(self.config):
                self._schedule(component, datetime.now(UTC) + delay)
        except Exception:
            log.exception("could not schedule the next run; trying again later", component=component,
                          retry_in_seconds=FALLBACK_DELAY.total_seconds())
            self._schedule(component, datetime.now(UTC) + FALLBACK_DELAY)

    def _retry_delay(self, component: str) -> timedelta:
        """After a failed run: the work's own retry delay (FALLBACK_DELAY if the config no longer
        schedules it)."""
        try:
            return self._scheduled(self.config)[component].retry_delay()
        except Exception:  # the delay must not fail the job's rescheduling
            return FALLBACK_DELAY

    def _push_retry_delay(self, source: Component[Any, Any]) -> timedelta:
        """A push component's poll interval doubled for each failure in a row, up to
        MAX_PUSH_RETRY_SECONDS."""
        interval = source.interval(self.config)
        failures = self._push_failures[source.id] = self._push_failures.get(source.id, 0) + 1
        return min(interval * 2 ** (failures - 1), max(timedelta(seconds=MAX_PUSH_RETRY_SECONDS), interval))

    def _record(self, component: str, exc: BaseException) -> None:
        """A FAILED run record for a failure no recorded run wrote (it happened before or
        around the run: its lock, its extractor's construction, its config check)."""
        if not is_recorded(exc):
            record_failure(self.index, component, new_run_id(component.rpartition(".")[2]), exc)

    def _apply_intervals(self, old: NavdConfig, new: NavdConfig) -> None:
        """A changed interval moves a waiting run to `last completion + new interval`."""
        now = datetime.now(UTC)
        before_reload = self._scheduled(old)
        for work in self._scheduled(new).values():
            if not work.publishes_next_run or work.id not in before_reload:
                continue  # a push tail polls at its new interval; newly enabled work starts now
            before, after = work.interval(old), work.interval(new)
            job = self.scheduler.get_job(work.id)
            if before != after and job is not None and job.next_run_time is not None:
                self._schedule(work.id, max(now, job.next_run_time - before + after))

    # -- the jobs ---------------------------------------------------------------------------

    def _pull(self, component: Component[Any, Any]) -> timedelta:
        config = self.config
        component_log = get_logger(f"navd.{component.id}")
        interval = component.interval(config)
        try:
            result = run_extraction(self.index, config, component, stop=self.stop, wait_for_lock=False)
        except LockBusy:
            component_log.info("run skipped: another navd process runs this extractor now",
                               next_run_in_minutes=interval.total_seconds() / 60)
            return interval
        except RunStopped:
            component_log.info("run abandoned: navd is stopping; the next run continues from the last checkpoint")
            return interval
        except NavdError as exc:
            component_log.error(f"run failed: {first_line(exc)}", next_run_in_minutes=interval.total_seconds() / 60)
            self._record(component.id, exc)
            return interval
        log_run(component, result)
        return interval

    def _push_poll(self, component: Component[Any, Any]) -> timedelta:
        poll = component.interval(self.config)
        component_log = get_logger(f"navd.{component.id}")
        if component.id in self._stale_tails:
            self._stale_tails.discard(component.id)
            self._close_tail(component.id)
        tail = self._tails.get(component.id)
        if tail is None:
            tail = self._tails[component.id] = PushTail(self.index, self.config, component)
        try:
            result = tail.poll(stop=self.stop, wait_for_lock=False)
        except LockBusy:
            if component.id not in self._busy_logged:
                component_log.info("polls paused: another navd process reads the logs now")
                self._busy_logged.add(component.id)
            return poll
        except RunStopped:
            return poll
        except NavdError as exc:
            retry = self._retry_delay(component.id)
            component_log.error(f"poll failed: {first_line(exc)}", retry_in_seconds=retry.total_seconds())
            self._record(component.id, exc)
            return retry
        self._busy_logged.discard(component.id)
        self._push_failures[component.id] = 0
        if result.follow_ups:  # the pass wrote something
            log_run(component, result)
        return poll

    def _close_tail(self, component_id: str) -> None:
        tail = self._tails.pop(component_id, None)
        if tail is not None:
            tail.close()

    # -- SIGHUP -----------------------------------------------------------------------------

    def _reload(self) -> None:
        """Reread the config; a bad one is refused with one line and the running config stays."""
        try:
            new = load_config(self.config_path)
            index = self._new_index(new) if new.solr != self.config.solr else self.index
        except ConfigError as exc:
            log.error(f"config reload refused, the running config stays: {exc}")
            return
        except Exception as exc:  # a crash here would end the service: refuse the file instead
            log.exception(f"config reload refused, the running config stays: {first_line(exc)}")
            return
        old, previous = self.config, enabled_components(self.config)
        log_format, log_level = self.log_overrides
        try:
            setup_logging(log_format or new.logging.format, log_level or new.logging.level, file=new.logging.file)
        except ConfigError as exc:
            log.error(f"config reload refused, the running config stays: {exc}")
            if index is not self.index:
                index.close()
            return
        for warning in new.warnings:  # [security] insecure_credentials = "warn"
            get_logger("navd.config").warning(warning)
        self.index = index
        if (new.sections, new.cluster, new.solr, new.daemon) != (old.sections, old.cluster, old.solr, old.daemon):
            # Push tails start again from their committed positions with the new config.
            self._stale_tails.update(self._tails)
        self.config = new
        self._reconcile(previous=previous)
        self._apply_intervals(old, new)
        self._apply_server(old, new)
        log.info("config reloaded", config=new.source, components=enabled_components(new))


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


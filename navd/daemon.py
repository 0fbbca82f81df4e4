"""`navd run`: the long-running service, in the foreground (systemd Type=notify).

APScheduler starts each component; every job schedules its own next start when it ends, so a
pull extractor's run starts `interval` after the previous one *completed* and two runs of one
component never overlap (across processes too: runs take the component's lock, which a manual
`navd extract` also takes). The Spark tailer polls every `[spark] poll_seconds`; the linker
follows every extraction that wrote something; purge keeps its own weekly rhythm alongside.

Signals: SIGTERM/SIGINT stop taking work, let running runs reach their next record or batch
boundary (state stays at the last checkpoint, which is what a restart continues from), and exit
0 within `[daemon] stop_timeout_seconds`; SIGHUP reloads the config (a bad file is logged and the
running config kept).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import Any

from navd import __version__
from navd.config import NavdConfig, extractor_state_dir, load_config
from navd.errors import ConfigError, NavdError, RunStopped, SolrError, SolrUnavailable, first_line
from navd.index.client import IndexWriter, SolrIndex
from navd.locks import LockBusy, component_lock, is_locked
from navd.logs import get_logger, setup_logging
from navd.runner import link, purge, run_pull, spark_extractor, spark_pass, summary
from navd.runs import abandon_interrupted_runs, publish_schedule
from navd.systemd import Notifier

log = get_logger("navd.daemon")

SPARK = "extractor.spark"
PURGE = "purge"
#: a failing Spark poll is retried with a doubling delay up to this, not every few seconds
MAX_SPARK_RETRY_SECONDS = 60.0


def enabled_components(config: NavdConfig) -> list[str]:
    components = [f"extractor.{source}" for source, section in
                  (("hdfs", config.hdfs), ("hms", config.hive), ("yarn", config.yarn)) if section.enabled]
    if config.spark.enabled:
        components.append(SPARK)
    return components


def pull_interval(config: NavdConfig, component: str) -> timedelta:
    section = {"extractor.hdfs": config.hdfs, "extractor.hms": config.hive, "extractor.yarn": config.yarn}[component]
    return timedelta(minutes=section.interval_minutes)


@dataclasses.dataclass
class _SparkTail:
    """The push extractor between polls: it holds the applications whose logs are being read."""

    extractor: Any
    writer: IndexWriter
    passes: int = 0


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
        self.next_runs: dict[str, datetime | None] = {}
        self.running: set[str] = set()
        self._running_lock = threading.Lock()
        self._spark: _SparkTail | None = None
        self._spark_reset = False
        self._spark_busy_logged = False
        self._spark_failures = 0

    # -- lifecycle --------------------------------------------------------------------------

    def run(self) -> int:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler

        components = enabled_components(self.config)
        if not components:
            raise ConfigError(f"{self.config.source}: nothing to run: enable at least one of [hdfs], [hive], "
                              "[yarn], [spark] (enabled = true)")
        self._install_signal_handlers()
        log.info("navd starting", version=__version__, config=self.config.source, components=components,
                 solr=self.index.base_url, state_dir=str(extractor_state_dir(self.config)))
        self._check_solr()
        state_root = extractor_state_dir(self.config)
        try:
            abandoned = abandon_interrupted_runs(self.index, lambda c: is_locked(state_root, c))
            if abandoned:
                log.info("runs left RUNNING by a stopped navd marked FAILED", runs=abandoned)
        except SolrError as exc:
            log.warning("could not check for interrupted runs", reason=first_line(exc))
        # One worker per component and one for the linker a job may wait on: nothing queues.
        self.scheduler = BackgroundScheduler(
            timezone=UTC, executors={"default": ThreadPoolExecutor(max_workers=8)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None})
        self.scheduler.start()
        self._reconcile(previous=[])
        self.notifier.notify("READY=1", f"STATUS=running: {', '.join(components)}", f"MAINPID={os.getpid()}")
        log.info("navd running", components=components)
        ping = self.notifier.watchdog_seconds / 2 if self.notifier.watchdog_seconds else None
        while not self.stop.is_set():
            self.wakeup.wait(timeout=min(ping, 5.0) if ping else 5.0)
            self.wakeup.clear()
            if ping:
                self.notifier.notify("WATCHDOG=1")
            if self.reload_requested.is_set() and not self.stop.is_set():
                self.reload_requested.clear()
                self._reload()
        return self._shutdown()

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
        self.scheduler.shutdown(wait=False)
        deadline = time.monotonic() + self.config.daemon.stop_timeout_seconds
        while time.monotonic() < deadline:
            with self._running_lock:
                if not self.running:
                    break
            time.sleep(0.05)
        with self._running_lock:
            abandoned = sorted(self.running)
        if SPARK not in abandoned:
            self._close_spark()
        publish_schedule(self.index, {c: None for c in self.next_runs})
        if abandoned:
            # Their state is at the last checkpoint: the next start continues from there.
            log.warning("navd stopped; runs still blocked in I/O abandoned", components=abandoned)
            _flush_streams()
            os._exit(0)
        log.info("navd stopped")
        return 0

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
        from navd.solr.server import effective_solr_config

        return SolrIndex(effective_solr_config(config.solr), stop=self.stop)

    # -- scheduling -------------------------------------------------------------------------

    def _schedule(self, component: str, when: datetime) -> None:
        if self.stop.is_set():
            return
        self.scheduler.add_job(self._job, "date", run_date=when, id=component, args=[component],
                               replace_existing=True)
        self.next_runs[component] = when
        if component != SPARK:  # the tailer polls every few seconds: its schedule is "polling"
            publish_schedule(self.index, {component: when})

    def _reconcile(self, previous: list[str]) -> None:
        """Schedule what the config enables and was not running; unschedule what it disabled."""
        now = datetime.now(UTC)
        current = enabled_components(self.config)
        for component in current:
            if component not in previous:
                self._schedule(component, now)
        if SPARK in current and SPARK not in previous:
            publish_schedule(self.index, {SPARK: self.config.spark.poll_seconds})
        for component in previous:
            if component not in current:
                if self.scheduler.get_job(component) is not None:
                    self.scheduler.remove_job(component)
                self.next_runs[component] = None
                publish_schedule(self.index, {component: None})
                log.info("component disabled by the reloaded config", component=component)
        if PURGE not in previous:
            self._schedule(PURGE, self._first_purge(now))

    def _first_purge(self, now: datetime) -> datetime:
        """Keep the weekly rhythm across restarts: a week after the last purge began, not a week
        after navd last started (a service restarted weekly would never purge)."""
        interval = timedelta(days=self.config.purge.interval_days)
        try:
            docs = self.index.search("runs", "kind:run AND component:purge", rows=1,
                                     sort="started desc")["response"]["docs"]
        except SolrError:
            docs = []
        if not docs:
            return now + interval
        last = datetime.fromisoformat(str(docs[0]["started"]).replace("Z", "+00:00"))
        return max(now, last + interval)

    def _job(self, component: str) -> None:
        with self._running_lock:
            self.running.add(component)
        delay = timedelta(seconds=self.config.spark.poll_seconds)
        try:
            if component == SPARK:
                delay = self._spark_poll()
            elif component == PURGE:
                delay = self._purge()
            else:
                delay = self._pull(component)
        except Exception:  # a bug in one run must not stop the service
            get_logger(f"navd.{component}").exception("run failed with an unexpected error")
        finally:
            with self._running_lock:
                self.running.discard(component)
            if component in enabled_components(self.config) or component == PURGE:
                self._schedule(component, datetime.now(UTC) + delay)

    def _apply_intervals(self, old: NavdConfig, new: NavdConfig) -> None:
        """A changed interval moves a waiting run to `last completion + new interval`."""
        now = datetime.now(UTC)
        for component in enabled_components(new):
            if component == SPARK or component not in enabled_components(old):
                continue
            before, after = pull_interval(old, component), pull_interval(new, component)
            job = self.scheduler.get_job(component)
            if before != after and job is not None and job.next_run_time is not None:
                self._schedule(component, max(now, job.next_run_time - before + after))
        if old.purge.interval_days != new.purge.interval_days:
            job = self.scheduler.get_job(PURGE)
            if job is not None and job.next_run_time is not None:
                delta = timedelta(days=new.purge.interval_days - old.purge.interval_days)
                self._schedule(PURGE, max(now, job.next_run_time + delta))

    # -- the jobs ---------------------------------------------------------------------------

    def _pull(self, component: str) -> timedelta:
        source = component.removeprefix("extractor.")
        config = self.config
        component_log = get_logger(f"navd.{component}")
        interval = pull_interval(config, component)
        try:
            report = run_pull(self.index, config, source, stop=self.stop, wait_for_lock=False)
        except LockBusy:
            component_log.info("run skipped: another navd process runs this extractor now",
                               next_run_in_minutes=interval.total_seconds() / 60)
            return interval
        except RunStopped:
            component_log.info("run abandoned: navd is stopping; the next run continues from the last checkpoint")
            return interval
        except NavdError as exc:
            component_log.error(f"run failed: {first_line(exc)}", next_run_in_minutes=interval.total_seconds() / 60)
            return interval
        component_log.info(summary(source, report))
        self._link()
        return interval

    def _spark_poll(self) -> timedelta:
        config = self.config
        poll = config.spark.poll_seconds
        spark_log = get_logger(f"navd.{SPARK}")
        try:
            with component_lock(extractor_state_dir(config), SPARK, wait=False) as previous_holder:
                self._spark_busy_logged = False
                if self._spark is None or self._spark_reset or previous_holder not in (None, os.getpid()):
                    # Another process read the logs since our last poll (navd extract spark), or
                    # the config changed: start again from the committed positions.
                    self._close_spark()
                    self._spark_reset = False
                    self._spark = _SparkTail(spark_extractor(config), IndexWriter(self.index))
                tail = self._spark
                tail.passes += 1
                try:
                    report = spark_pass(self.index, tail.extractor, tail.writer, tail.passes, stop=self.stop)
                except BaseException:
                    self._spark_failures += 1
                    # Positions stay at the last commit and the next poll rereads from there:
                    # what this writer still holds is written again then.
                    self._spark = None
                    tail.writer.abandon()
                    raise
                self._spark_failures = 0
        except LockBusy:
            if not self._spark_busy_logged:
                spark_log.info("polls paused: another navd process reads the event logs now")
                self._spark_busy_logged = True
            return timedelta(seconds=poll)
        except RunStopped:
            return timedelta(seconds=poll)
        except NavdError as exc:
            failures = max(self._spark_failures, 1)
            retry = min(poll * 2 ** (failures - 1), max(MAX_SPARK_RETRY_SECONDS, poll))
            spark_log.error(f"poll failed: {first_line(exc)}", retry_in_seconds=retry)
            return timedelta(seconds=retry)
        if report.records:
            spark_log.info(summary("spark", report))
            self._link()
        return timedelta(seconds=poll)

    def _close_spark(self) -> None:
        tail, self._spark = self._spark, None
        if tail is not None:
            tail.writer.close(timeout=5)

    def _link(self) -> None:
        try:
            link(self.index, self.config, stop=self.stop)  # the linker logs its own pass
        except RunStopped:
            return
        except NavdError as exc:
            get_logger("navd.linker").error(f"link pass failed: {first_line(exc)}")

    def _purge(self) -> timedelta:
        config = self.config
        interval = timedelta(days=config.purge.interval_days)
        purge_log = get_logger("navd.purge")
        try:
            report = purge(self.index, config, older_than_days=config.purge.older_than_days,
                           runtime_cap_minutes=config.purge.runtime_cap_minutes, stop=self.stop,
                           wait_for_lock=False)
        except LockBusy:
            purge_log.info("purge skipped: another navd process purges now")
            return interval
        except NavdError as exc:
            purge_log.error(f"purge failed: {first_line(exc)}")
            return interval
        if not report.complete and not self.stop.is_set():
            purge_log.warning("purge stopped at [purge] runtime_cap_minutes; the next run continues")
        return interval

    # -- SIGHUP -----------------------------------------------------------------------------

    def _reload(self) -> None:
        try:
            new = load_config(self.config_path)
        except ConfigError as exc:
            log.error(f"config reload failed; the running config stays: {exc}")
            return
        old, previous = self.config, enabled_components(self.config)
        log_format, log_level = self.log_overrides
        try:
            setup_logging(log_format or new.logging.format, log_level or new.logging.level, file=new.logging.file)
        except ConfigError as exc:
            log.error(f"config reload failed; the running config stays: {exc}")
            return
        if new.solr != old.solr:
            self.index = self._new_index(new)
        if (new.spark, new.hdfs, new.cluster, new.solr, new.daemon) != (old.spark, old.hdfs, old.cluster,
                                                                        old.solr, old.daemon):
            self._spark_reset = True
        self.config = new
        self._reconcile(previous=previous)
        self._apply_intervals(old, new)
        log.info("config reloaded", config=new.source, components=enabled_components(new))


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


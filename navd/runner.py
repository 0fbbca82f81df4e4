"""Every run's life, the same for `navd extract`/`link`/`purge` and for `navd run`.

A run takes its component's lock (so a manual run and the daemon's scheduled one never overlap),
is recorded in the runs core, writes through the one IndexWriter, gives up cleanly at the next
record or batch when `stop` is set (the daemon is stopping), and is followed by a link pass when
it wrote something the linker may resolve. Components (navd.registry) only build extractors and
summarise reports; nothing else in navd locks, records or links.

Pull components run through `run_extraction`; push components are polled through one `PushTail`
each, which the daemon schedules and `navd extract <push>` loops over.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from navd.config import NavdConfig, extractor_state_dir
from navd.errors import NavdError, RunStopped, first_line
from navd.extractors import BuildContext, Component, Extractor
from navd.index.client import IndexWriter, SolrIndex
from navd.locks import component_lock
from navd.progress import Progress
from navd.runs import recorded_run

LINKER = "linker"
PURGE = "purge"

#: called with what is waited for ("hdfs extraction", "link") when another process holds its lock
OnWait = Callable[[str], None]


def new_run_id(name: str) -> str:
    """A run's id, also the `extractorRunId` of what it writes: unique per run, sortable."""
    return f"{name}##{datetime.now(UTC):%Y%m%dT%H%M%S%f}"


def counts(report: Any) -> dict[str, int]:
    """The integer fields of a run's report dataclass, as run-record counts."""
    return {k: v for k, v in dataclasses.asdict(report).items() if isinstance(v, int) and not isinstance(v, bool)}


def written(writer: IndexWriter) -> dict[str, int]:
    """What Solr acknowledged from a writer, per kind, as run-record counts."""
    return {f"written_{kind}": number for kind, number in writer.counts.items()}


def refused(report: Any) -> str:
    """What a run refused to do, from its report's `refused` field (the deletion fail-safe's
    reasons): it goes on the run record and `navd status` shows it."""
    return str(getattr(report, "refused", "") or "")


@dataclasses.dataclass(frozen=True)
class RunResult:
    """A run's report and the link pass that followed it (None: nothing to link, or navd is
    stopping). A failed link pass does not fail the extraction: its first line is kept here."""

    report: Any
    link: Any = None
    link_error: str | None = None


def _waiter(on_wait: OnWait | None, what: str) -> Callable[[], None] | None:
    return None if on_wait is None else (lambda: on_wait(what))


def make_visible(index: SolrIndex) -> None:
    """A one-shot command is followed by queries: soft-commit now rather than at the next
    automatic soft commit."""
    for core in ("elements", "relations"):
        index.commit(core, soft=True)


def run_extraction(index: SolrIndex, config: NavdConfig, component: Component[Any, Any], *,
                   options: Mapping[str, Any] | None = None, full: bool = False,
                   stop: threading.Event | None = None, wait_for_lock: bool = True,
                   on_wait: OnWait | None = None, show_progress: bool = False,
                   visible_now: bool = False) -> RunResult:
    """One run of a pull component, then a link pass. Raises LockBusy (wait_for_lock=False) when
    another process runs it now, and whatever failed the run (recorded FAILED first)."""
    options = dict(options or {})
    component.check(config, options)  # the missing key, before anything is locked or recorded
    state_root = extractor_state_dir(config)
    with component_lock(state_root, component.id, wait=wait_for_lock, stop=stop,
                        on_wait=_waiter(on_wait, f"{component.name} extraction")), _run_client(index) as run_index:
        run_id = new_run_id(component.name)
        writer = IndexWriter(run_index)
        extractor: Extractor[Any] | None = None
        try:
            with recorded_run(run_index, component.id, run_id) as run:
                extractor = component.build(BuildContext(config, run_index, state_root, run_id, options))
                with Progress(component.name, lambda: sum(writer.counts.values()), enabled=show_progress):
                    report = extractor.run_pass(writer, full=full, stop=stop)
                run.counts = {**counts(report), **written(writer)}
                run.refused = refused(report)
        except BaseException:
            writer.abandon()  # the state is at the last checkpoint: the next run writes the rest again
            raise
        else:
            writer.close()  # run_pass flushed everything: nothing left to wait for
        finally:
            if extractor is not None:
                extractor.close()
    if visible_now:
        make_visible(index)
    return _linked(RunResult(report), index, config, stop=stop, on_wait=on_wait)


def _linked(result: RunResult, index: SolrIndex, config: NavdConfig, *, stop: threading.Event | None,
            on_wait: OnWait | None) -> RunResult:
    """The link pass after an extraction: what it wrote unlinked may resolve now."""
    try:
        report = link(index, config, stop=stop, on_wait=on_wait)
    except RunStopped:
        return result
    except NavdError as exc:
        return dataclasses.replace(result, link_error=first_line(exc))
    return dataclasses.replace(result, link=report)


class PushTail:
    """A push component between polls: its extractor holds what it has read (applications whose
    logs are still being written), so it lives across polls. The daemon schedules `poll`;
    `navd extract <push>` calls it in a loop. Each poll takes the component's lock, so a manual
    tail and the daemon's alternate; whoever polls after the other rebuilds from the committed
    positions."""

    def __init__(self, index: SolrIndex, config: NavdConfig, component: Component[Any, Any]) -> None:
        if component.mode != "push":
            raise ValueError(f"{component.name} is a {component.mode} component, not a push one")
        self.index = index
        self.config = config
        self.component = component
        self._extractor: Extractor[Any] | None = None
        self._writer: IndexWriter | None = None
        self._run_index: SolrIndex | None = None
        self._run_id = ""
        self._passes = 0

    def poll(self, *, stop: threading.Event | None = None, wait_for_lock: bool = True,
             on_wait: OnWait | None = None) -> RunResult:
        """One pass, recorded only when it read something or failed (a poll runs every few
        seconds), then a link pass if it wrote anything. Raises LockBusy (wait_for_lock=False)
        and whatever failed the pass; after a failure the next poll starts again from the last
        committed positions."""
        component = self.component
        component.check(self.config, {})
        state_root = extractor_state_dir(self.config)
        with component_lock(state_root, component.id, wait=wait_for_lock, stop=stop,
                            on_wait=_waiter(on_wait, f"{component.name} extraction")) as previous_holder:
            if previous_holder not in (None, os.getpid()):
                self._discard(abandon=False)  # another process read the logs since our last poll
            if self._extractor is None or self._writer is None or self._run_index is None:
                self._run_id = new_run_id(component.name)
                self._passes = 0
                # One give-up deadline per tail (its writer lives across polls); an outage that
                # ends in a success clears it, one that fails a poll ends it with the writer.
                self._run_index = self.index.for_run()
                self._writer = IndexWriter(self._run_index)
                self._extractor = component.build(BuildContext(self.config, self._run_index, state_root,
                                                               self._run_id))
            writer = self._writer
            self._passes += 1
            before = written(writer)
            try:
                with recorded_run(self._run_index, component.id, f"{self._run_id}#{self._passes}",
                                  announce=False) as run:
                    report = self._extractor.run_pass(writer, stop=stop)
                    wrote = {k: v - before.get(k, 0) for k, v in written(writer).items()}
                    run.counts = {**counts(report), **wrote}
                    run.refused = refused(report)
                    run.quiet = not any(counts(report).values()) and not run.refused
            except BaseException:
                # Positions stay at the last commit and the next poll rereads from there: what
                # this writer still holds is written again then.
                self._discard(abandon=True)
                raise
        result = RunResult(report)
        if any(wrote.values()):
            result = _linked(result, self.index, self.config, stop=stop, on_wait=on_wait)
        return result

    def _discard(self, *, abandon: bool) -> None:
        extractor, writer, run_index = self._extractor, self._writer, self._run_index
        self._extractor = self._writer = self._run_index = None
        if writer is not None:
            if abandon:
                writer.abandon()
            else:
                writer.close(timeout=5)
        if run_index is not None:
            run_index.end_run()
        if extractor is not None:
            extractor.close()

    def close(self) -> None:
        """After the last poll: what the writer holds was flushed by the pass that wrote it."""
        self._discard(abandon=False)


def link(index: SolrIndex, config: NavdConfig, *, full: bool = False,
         fs_aliases: Mapping[str, str] | None = None, spark: bool = False, spark_master: str | None = None,
         stop: threading.Event | None = None, on_wait: OnWait | None = None,
         show_progress: bool = False) -> Any:
    """A linker pass (after every extraction, and `navd link`); one at a time across processes,
    since each pass moves the linker's watermark. `[linker] fs_aliases` always apply;
    `fs_aliases` adds to them (`navd link --fs-alias`). `spark`: the full pass as a PySpark job
    (`navd link --spark`) on `spark_master` (None: `[spark_jobs] master`), recorded and locked like
    any other."""
    from navd.linker.linker import Linker  # noqa: PLC0415

    aliases = {**config.linker.aliases, **(fs_aliases or {})}
    default_fs = config.cluster.default_fs
    if spark:
        from navd.spark_jobs import check_job  # noqa: PLC0415

        check_job(config.spark_jobs, spark_master)  # before the lock and the run record
    with component_lock(extractor_state_dir(config), LINKER, wait=True, on_wait=_waiter(on_wait, "link"),
                        stop=stop), _run_client(index) as index:
        with recorded_run(index, LINKER, new_run_id(LINKER)) as run:
            if spark:
                from navd.linker.spark_link import spark_link  # noqa: PLC0415 - PySpark, only for --spark

                report = spark_link(index, cluster=config.cluster.name, default_fs=default_fs,
                                    fs_aliases=aliases or None, master=spark_master, jobs=config.spark_jobs)
            else:
                linker = Linker(index, cluster=config.cluster.name, default_fs=default_fs,
                                fs_aliases=aliases or None)
                with Progress("link", lambda: getattr(linker, "examined_so_far", 0), unit="relations examined",
                              enabled=show_progress):
                    report = linker.link(full=full)
            run.counts = counts(report)
    return report


def link_summary(report: Any) -> str:
    return (f"link: {report.examined} unlinked relations examined, {report.linked} linked, "
            f"{report.still_unlinked} still unlinked")


def purge(index: SolrIndex, config: NavdConfig, *, older_than_days: float, runtime_cap_minutes: float,
          dry_run: bool = False, stop: threading.Event | None = None, wait_for_lock: bool = True,
          on_wait: OnWait | None = None, show_progress: bool = False) -> Any:
    """A purge run by Navigator's rules (see purge/purge.py); a dry run is not recorded."""
    from navd.purge.purge import Purger  # noqa: PLC0415

    with _run_client(index) as index:
        purger = Purger(index, threshold=datetime.now(UTC) - timedelta(days=older_than_days), dry_run=dry_run,
                        runtime_cap_seconds=runtime_cap_minutes * 60, stop=stop,
                        keep_events=config.openlineage.keep_events)
        progress = Progress("purge", lambda: sum(purger.report.removed.values()), unit="removed",
                            enabled=show_progress)
        if dry_run:
            with progress:
                return purger.run()
        with component_lock(extractor_state_dir(config), PURGE, wait=wait_for_lock,
                            on_wait=_waiter(on_wait, "purge"), stop=stop):
            with recorded_run(index, PURGE, new_run_id(PURGE)) as run, progress:
                report = purger.run()
                run.counts = dict(report.removed)
        return report


@contextmanager
def _run_client(index: SolrIndex) -> Iterator[SolrIndex]:
    """The client of one run (SolrIndex.for_run: one give-up deadline for all its requests),
    ended with the run so nothing of it retries afterwards."""
    run_index = index.for_run()
    try:
        yield run_index
    finally:
        run_index.end_run()

"""Every run's life, the same for `navd extract`/`link`/`purge` and for `navd run`.

A run takes its component's lock (so a manual run and the daemon's scheduled one never overlap),
is recorded in the runs core, writes through the one IndexWriter, gives up cleanly at the next
record or batch when `stop` is set (the daemon is stopping), and is followed by the after-runs
components (the link pass) when it wrote something they may resolve. Components (navd.registry:
the sources, the linker, purge) only build extractors and summarise reports; nothing else in
navd locks, records or links.

Pull components run through `run_extraction`; push components are polled through one `PushTail`
each, which the daemon schedules and `navd extract <push>` loops over.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from navd.config import NavdConfig, extractor_state_dir
from navd.errors import NavdError, RunStopped, first_line
from navd.extractors import BuildContext, Checkpointed, Component, Extractor, run_pass
from navd.index.client import IndexWriter, SolrIndex
from navd.locks import component_lock
from navd.progress import Progress
from navd.registry import components
from navd.runs import recorded_run

#: called with what is waited for ("hdfs extraction", "link") when another process holds its lock
OnWait = Callable[[str], None]


def new_run_id(name: str) -> str:
    """A run's id, also the `extractorRunId` of what it writes: unique per run, sortable."""
    return f"{name}##{datetime.now(UTC):%Y%m%dT%H%M%S%f}"


def written(writer: IndexWriter) -> dict[str, int]:
    """What Solr acknowledged from a writer, per kind, as run-record counts."""
    return {f"written_{kind}": number for kind, number in writer.counts.items()}


def refused(report: Any) -> str:
    """What a run refused to do, from its report's `refused` field (the deletion fail-safe's
    reasons): it goes on the run record and `navd status` shows it."""
    return str(getattr(report, "refused", "") or "")


@dataclasses.dataclass(frozen=True)
class FollowUp:
    """A run of an after-runs component (the link pass) that followed a run: its report, or the
    first line of what failed it (a failed link pass does not fail the run it followed)."""

    component: Component[Any, Any]
    report: Any = None
    error: str | None = None

    def line(self) -> str:
        """What a command prints for it; a failure raises NavdError, after the run's own line."""
        if self.error is not None:
            raise NavdError(f"{self.component.run_title} pass failed: {self.error}")
        summary = self.component.follow_up_summary or self.component.summary
        return summary(self.report)


@dataclasses.dataclass(frozen=True)
class RunResult:
    """A run's report and the after-runs components' runs that followed it (none: nothing to
    link, or navd is stopping)."""

    report: Any
    follow_ups: tuple[FollowUp, ...] = ()


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
    """One run of a pull component (a source, the linker, purge), then the after-runs components.
    Raises LockBusy (wait_for_lock=False) when another process runs it now, and whatever failed
    the run (recorded FAILED first)."""
    options = dict(options or {})
    component.check(config, options)  # the missing key, before anything is locked or recorded
    state_root = extractor_state_dir(config)
    with component_lock(state_root, component.id, wait=wait_for_lock, stop=stop,
                        on_wait=_waiter(on_wait, component.run_title)), _run_client(index) as run_index:
        run_id = new_run_id(component.name)
        writer = IndexWriter(run_index)
        extractor: Extractor[Any] | Checkpointed[Any] | None = None
        try:
            with recorded_run(run_index, component.id, run_id) as run:
                extractor = component.build(BuildContext(config, run_index, state_root, run_id, options))
                with _progress(component, extractor, writer, enabled=show_progress):
                    report = run_pass(extractor, writer, full=full, stop=stop)
                run.counts = component.counts(report)
                if not component.upkeep:  # upkeep edits documents in place, not through the writer
                    run.counts.update(written(writer))
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
    return _followed(RunResult(report), component, index, config, stop=stop, on_wait=on_wait)


def _progress(component: Component[Any, Any], extractor: Extractor[Any] | Checkpointed[Any],
              writer: IndexWriter, *, enabled: bool) -> Progress:
    """The progress line of a run on a terminal: what its component counts, else the records written."""
    progress = component.progress
    count = (lambda: sum(writer.counts.values())) if progress is None else (lambda: progress(extractor))
    return Progress(component.run_name or component.name, count, unit=component.progress_unit, enabled=enabled)


def _followed(result: RunResult, component: Component[Any, Any], index: SolrIndex, config: NavdConfig, *,
              stop: threading.Event | None, on_wait: OnWait | None) -> RunResult:
    """The runs of the after-runs components after a run that adds to the index: what it wrote
    unlinked may resolve now."""
    if component.upkeep:
        return result
    follow_ups = []
    for follower in components().values():
        if follower.trigger != "after_runs":
            continue
        try:
            report = run_extraction(index, config, follower, stop=stop, on_wait=on_wait).report
        except RunStopped:
            continue
        except NavdError as exc:
            follow_ups.append(FollowUp(follower, error=first_line(exc)))
        else:
            follow_ups.append(FollowUp(follower, report))
    return dataclasses.replace(result, follow_ups=tuple(follow_ups))


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
        self._extractor: Extractor[Any] | Checkpointed[Any] | None = None
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
                            on_wait=_waiter(on_wait, component.run_title)) as previous_holder:
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
                    report = run_pass(self._extractor, writer, stop=stop)
                    wrote = {k: v - before.get(k, 0) for k, v in written(writer).items()}
                    run.counts = {**component.counts(report), **wrote}
                    run.refused = refused(report)
                    run.quiet = not any(component.counts(report).values()) and not run.refused
            except BaseException:
                # Positions stay at the last commit and the next poll rereads from there: what
                # this writer still holds is written again then.
                self._discard(abandon=True)
                raise
        result = RunResult(report)
        if any(wrote.values()):
            result = _followed(result, component, self.index, self.config, stop=stop, on_wait=on_wait)
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


@contextmanager
def _run_client(index: SolrIndex) -> Iterator[SolrIndex]:
    """The client of one run (SolrIndex.for_run: one give-up deadline for all its requests),
    ended with the run so nothing of it retries afterwards."""
    run_index = index.for_run()
    try:
        yield run_index
    finally:
        run_index.end_run()

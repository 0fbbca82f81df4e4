"""Purge as a registered component: `[purge]` is its section; `navd run` purges every
`interval_days`, counted from the last purge's start across restarts (first start "resumed"),
and `navd purge` runs one by hand. The runner takes its lock and records it as `purge`, as for
any component; a dry run (`navd purge --dry-run`) only counts, so it is neither locked nor
recorded.

`navd purge` gives it options: `older_than_days` and `runtime_cap_minutes` (None: the section's).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from navd.config import NavdConfig, PurgeConfig
from navd.extractors import BuildContext, Component, Extractor
from navd.index.client import IndexWriter, SolrIndex
from navd.progress import Progress
from navd.purge.purge import CATEGORIES, Purger, PurgeReport


def _limits(config: NavdConfig, options: Mapping[str, Any]) -> tuple[float, float]:
    """(older_than_days, runtime_cap_minutes): the options', else the section's."""
    days, cap = options.get("older_than_days"), options.get("runtime_cap_minutes")
    return (config.purge.older_than_days if days is None else float(days),
            config.purge.runtime_cap_minutes if cap is None else float(cap))


def purger(index: SolrIndex, config: NavdConfig, options: Mapping[str, Any], *, dry_run: bool = False,
           stop: threading.Event | None = None) -> Purger:
    """A purge by the config and options, its runtime cap counted from now."""
    days, cap = _limits(config, options)
    return Purger(index, threshold=datetime.now(UTC) - timedelta(days=days), dry_run=dry_run,
                  runtime_cap_seconds=cap * 60, stop=stop, keep_events=config.openlineage.keep_events)


class PurgeRun:
    """One recorded purge; the Purger is made when the run starts, so its cap counts from then."""

    def __init__(self, index: SolrIndex, config: NavdConfig, options: Mapping[str, Any]) -> None:
        self.index = index
        self.config = config
        self.options = dict(options)
        self.purger: Purger | None = None

    def run_pass(self, writer: IndexWriter, *, full: bool = False,
                 stop: threading.Event | None = None) -> PurgeReport:
        del writer, full  # purge removes by id; every run applies all of Navigator's rules
        self.purger = purger(self.index, self.config, self.options, stop=stop)
        return self.purger.run()

    def removed(self) -> int:
        """What was removed so far (the progress line of `navd purge`)."""
        return 0 if self.purger is None else sum(self.purger.report.removed.values())

    def close(self) -> None:
        pass


def dry_run(index: SolrIndex, config: NavdConfig, options: Mapping[str, Any], *,
            show_progress: bool = False) -> PurgeReport:
    """What a purge would remove, counted; nothing is removed, locked or recorded."""
    counting = purger(index, config, options, dry_run=True)
    with Progress("purge", lambda: sum(counting.report.removed.values()), unit="removed", enabled=show_progress):
        return counting.run()


def build(context: BuildContext) -> Extractor[PurgeReport]:
    return PurgeRun(context.index, context.config, context.options)


def summary(report: PurgeReport) -> str:
    verb = "would remove" if report.dry_run else "removed"
    return (f"purge (older than {report.threshold}): {verb} "
            + ", ".join(f"{report.removed[c]} {c.replace('_', ' ')}" for c in CATEGORIES)
            + ("" if report.complete else "; stopped at the runtime cap, run again to continue"))


def counts(report: PurgeReport) -> dict[str, int]:
    return dict(report.removed)


COMPONENT: Component[PurgeConfig, PurgeReport] = Component(
    name="purge", section="purge", settings_type=PurgeConfig, mode="pull", build=build, summary=summary,
    help="removes old executions and long-deleted entities (Navigator's rules)", upkeep=True,
    first_start="resumed", record_id="purge", run_name="purge", counts=counts, progress=PurgeRun.removed,
    progress_unit="removed")

"""One run of a component, the same for `navd extract`/`link`/`purge` and for `navd run`.

A run takes its component's lock (so a manual run and the daemon's scheduled one never overlap),
is recorded in the runs core, writes through the one IndexWriter, and gives up cleanly at the
next record or batch when `stop` is set (the daemon is stopping).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from navd.config import NavdConfig, extractor_state_dir
from navd.errors import ConfigError
from navd.index.client import IndexWriter, SolrIndex
from navd.locks import component_lock
from navd.progress import Progress
from navd.runs import recorded_run

PULL_SOURCES = ("hdfs", "hms", "yarn")


def new_run_id(name: str) -> str:
    """A run's id, also the `extractorRunId` of what it writes: unique per run, sortable."""
    return f"{name}##{datetime.now(UTC):%Y%m%dT%H%M%S%f}"


def counts(report: Any) -> dict[str, int]:
    """The integer fields of a run's report dataclass, as run-record counts."""
    return {k: v for k, v in dataclasses.asdict(report).items() if isinstance(v, int) and not isinstance(v, bool)}


def written(writer: IndexWriter) -> dict[str, int]:
    """What Solr acknowledged from a writer, per kind, as run-record counts."""
    return {f"written_{kind}": number for kind, number in writer.counts.items()}


def check_pull_config(source: str, config: NavdConfig) -> None:
    """Fail with the missing key before anything is locked or recorded."""
    if source == "hdfs":
        if not config.hdfs.default_fs:
            raise ConfigError("[hdfs] default_fs: not set (the cluster's fs.defaultFS, e.g. hdfs://nameservice1)")
        if not config.hdfs.urls:
            raise ConfigError("[hdfs] urls: no WebHDFS URL configured (the NameNode's http(s)://host:port)")
    elif source == "hms":
        if not config.hive.host:
            raise ConfigError("[hive] host: no HiveServer2 configured")
    elif source == "yarn":
        if not config.yarn.urls:
            raise ConfigError("[yarn] urls: no ResourceManager configured")
    else:
        raise ConfigError(f"unknown pull extractor {source!r}: expected one of {', '.join(PULL_SOURCES)}")


def _pull_extractor(source: str, config: NavdConfig, index: SolrIndex, run_id: str,
                    filter_file: Path | None) -> Any:
    state = extractor_state_dir(config) / source / config.cluster.name
    if source == "hdfs":
        from navd.extractors.hdfs.extractor import HdfsExtractor

        return HdfsExtractor.from_config(config, index, state, extractor_run_id=run_id)
    if source == "hms":
        from navd.extractors.hms.extractor import HmsExtractor

        return HmsExtractor.from_config(config, index, state, filter_file=filter_file, extractor_run_id=run_id)
    from navd.extractors.yarn.extractor import YarnExtractor

    return YarnExtractor.from_config(config, state, extractor_run_id=run_id)


def run_pull(index: SolrIndex, config: NavdConfig, source: str, *, full: bool = False,
             stop: threading.Event | None = None, wait_for_lock: bool = True,
             on_wait: Callable[[], None] | None = None, filter_file: Path | None = None,
             show_progress: bool = False) -> Any:
    """One run of a pull extractor; returns its report. Raises LockBusy (wait_for_lock=False)
    when another process runs it now, and whatever failed the run (recorded FAILED first)."""
    check_pull_config(source, config)
    component = f"extractor.{source}"
    with component_lock(extractor_state_dir(config), component, wait=wait_for_lock, on_wait=on_wait, stop=stop):
        run_id = new_run_id(source)
        writer = IndexWriter(index)
        extractor = None
        try:
            with recorded_run(index, component, run_id) as run:
                extractor = _pull_extractor(source, config, index, run_id, filter_file)
                with Progress(source, lambda: sum(writer.counts.values()), enabled=show_progress):
                    report = extractor.run_pass(writer, full=full, stop=stop)
                run.counts = {**counts(report), **written(writer)}
        except BaseException:
            writer.abandon()  # the state is at the last checkpoint: the next run writes the rest again
            raise
        else:
            writer.close()  # run_pass flushed everything: nothing left to wait for
        finally:
            if extractor is not None:
                extractor.close()
    return report


def summary(source: str, report: Any) -> str:
    """The one line a run ends with, on stdout for `navd extract`, in the log for `navd run`."""
    r = report
    if source == "hdfs":
        return (f"hdfs: {r.directories_listed} directories listed, {r.directories_unchanged} unchanged, "
                f"{r.entries} entries, {r.deletions} deleted, {r.skipped} skipped, {r.requests} WebHDFS requests")
    if source == "hms":
        return (f"hms: {r.databases} databases, {r.tables} tables ({r.tables_described} described, "
                f"{r.tables_unchanged} unchanged), {r.partitions} partitions, {r.deletions} deleted, "
                f"{r.skipped} skipped")
    if source == "yarn":
        return (f"yarn: {r.applications} applications ({r.finished} finished since the last run, "
                f"{r.unfinished} not finished), {r.records} records written, {r.skipped} skipped")
    if source == "spark":
        return f"spark: {r.lines} new lines, {r.records} records written, {r.warnings} warnings"
    if source == "link":
        return f"link: {r.examined} unlinked relations examined, {r.linked} linked, {r.still_unlinked} still unlinked"
    raise ValueError(f"no summary for {source!r}")


def check_spark_config(config: NavdConfig) -> None:
    if not config.spark.event_log_dirs:
        raise ConfigError("[spark] event_log_dirs: no event log directory configured")


def spark_state_dir(config: NavdConfig) -> Path:
    return Path(config.spark.state_dir).expanduser() if config.spark.state_dir else extractor_state_dir(config) / "spark"


def spark_extractor(config: NavdConfig) -> Any:
    """The push extractor: kept across passes (it holds the applications being read)."""
    from navd.extractors.spark.extractor import SparkExtractor

    check_spark_config(config)
    return SparkExtractor.from_config(config, spark_state_dir(config), extractor_run_id=new_run_id("spark"))


def spark_pass(index: SolrIndex, extractor: Any, writer: IndexWriter, number: int, *,
               stop: threading.Event | None = None) -> Any:
    """One poll of the event logs, recorded only when it read something or failed (a poll runs
    every few seconds). After a failure the extractor must be discarded (see run_pass)."""
    before = written(writer)
    with recorded_run(index, "extractor.spark", f"{extractor.extractor_run_id}#{number}", announce=False) as run:
        report = extractor.run_pass(writer, stop=stop)
        run.counts = {**counts(report), **{k: v - before[k] for k, v in written(writer).items()}}
        run.quiet = not report.lines and not report.records
    return report


def link(index: SolrIndex, config: NavdConfig, *, full: bool = False, fs_aliases: Mapping[str, str] | None = None,
         stop: threading.Event | None = None, on_wait: Callable[[], None] | None = None,
         show_progress: bool = False) -> Any:
    """A linker pass (after every extraction, and `navd link`); one at a time across processes,
    since each pass moves the linker's watermark."""
    from navd.linker.linker import Linker

    linker = Linker.from_config(index, config, fs_aliases=dict(fs_aliases) if fs_aliases else None)
    with component_lock(extractor_state_dir(config), "linker", wait=True, on_wait=on_wait, stop=stop):
        with recorded_run(index, "linker", new_run_id("linker")) as run, \
                Progress("link", lambda: getattr(linker, "examined_so_far", 0), unit="relations examined",
                         enabled=show_progress):
            report = linker.link(full=full)
            run.counts = counts(report)
    return report


def purge(index: SolrIndex, config: NavdConfig, *, older_than_days: float, runtime_cap_minutes: float,
          dry_run: bool = False, stop: threading.Event | None = None, wait_for_lock: bool = True,
          on_wait: Callable[[], None] | None = None, show_progress: bool = False) -> Any:
    """A purge run by Navigator's rules (see purge/purge.py); a dry run is not recorded."""
    from navd.purge.purge import Purger

    purger = Purger(index, threshold=datetime.now(UTC) - timedelta(days=older_than_days), dry_run=dry_run,
                    runtime_cap_seconds=runtime_cap_minutes * 60, stop=stop)
    progress = Progress("purge", lambda: sum(purger.report.removed.values()), unit="removed", enabled=show_progress)
    if dry_run:
        with progress:
            return purger.run()
    with component_lock(extractor_state_dir(config), "purge", wait=wait_for_lock, on_wait=on_wait, stop=stop):
        with recorded_run(index, "purge", new_run_id("purge")) as run, progress:
            report = purger.run()
            run.counts = dict(report.removed)
    return report

"""Extractors: one package per source, each exporting one `Component` (see navd.registry). The
linker and purge are components too (linker/component.py, purge/component.py): they keep the
index rather than add to it ("upkeep"), and the linker runs after every run instead of on an
interval of its own.

A component says what its config section is, how to check it, how to build its extractor and
how to summarise a run. The extractor is what runs. Most only yield (`Checkpointed`): `extract`
yields one pass's records and a CHECKPOINT mark wherever its state may be committed, and the
runner writes them through its IndexWriter, flushing and committing at each mark (`run_pass`,
below); the others (`Extractor`) write their pass themselves. `close` releases the clients.
Inside, an extractor is a client (I/O against WebHDFS, HiveServer2, the ResourceManager or log files; injected,
typed) plus a pure processor turning what the client returns into records.

Pull components (HDFS, HMS, YARN) are built for one run and re-run `interval` after the previous
run completed; push components (Spark event logs) are built once and polled every `interval`,
keeping what they read between polls. navd.runner owns every run's life (lock, run record,
writer, checkpoints, the link pass that follows) for every kind; a component does none of that.

To add a source: a package under extractors/ with its settings dataclass (the TOML section, a
`validate()` naming the key), its extractor, and a `component.py` exporting a `Component`; then
one entry point in pyproject.toml's `navd.components` group. Nothing else changes.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from navd.errors import RunStopped
from navd.model import Record

if TYPE_CHECKING:
    from navd.config import NavdConfig
    from navd.index.client import IndexWriter, SolrIndex

ReportT = TypeVar("ReportT")
ReportT_co = TypeVar("ReportT_co", covariant=True)
SettingsT = TypeVar("SettingsT", bound="SourceSettings")


class Extractor(Protocol[ReportT_co]):
    """What the runner drives, for `navd run` and `navd extract` alike."""

    def run_pass(self, writer: IndexWriter, *, full: bool = False,
                 stop: threading.Event | None = None) -> ReportT_co:
        """Write one pass's records itself (state commits only after Solr took what came before:
        an extractor that can say where, yields instead, as `Checkpointed`) and return the pass's
        report; its integer fields become the run
        record's counts and a `refused: str` field, if any, the record's `refused` (what the run
        would not do, e.g. flag deletions above the fail-safe). Raises RunStopped at a checkpoint
        when `stop` is set."""
        ...

    def close(self) -> None:
        """Release clients and state handles; called once, after the last pass."""
        ...


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """The mark an extractor yields where everything it yielded before may be committed: the
    writer is flushed there, then the extractor's state is committed. Where it comes is decided
    by the extractor alone (after a database, every so many directories), not by when the
    runner happens to resume it."""


#: the one mark every extractor yields
CHECKPOINT = Checkpoint()


@runtime_checkable
class Checkpointed(Protocol[ReportT_co]):
    """An extractor that only yields; `run_pass` (below) writes and checkpoints its pass."""

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """One pass's records, and a CHECKPOINT wherever the state may be committed."""
        ...

    def commit(self) -> None:
        """Persist the state; called only after Solr took everything yielded before the mark."""
        ...

    def rollback(self) -> None:
        """The pass failed or was stopped: the state goes back to its last commit."""
        ...

    def finished(self, records: int) -> ReportT_co:
        """The pass's report, once `records` records were written and the state committed."""
        ...

    def close(self) -> None:
        ...


class SourceSettings(Protocol):
    """What every component's config section has besides its own keys."""

    enabled: bool

    @property
    def interval(self) -> timedelta:
        """Pull: the wait after a completed run; push: the wait between polls."""
        ...

    def validate(self) -> None:
        """Load-time checks; raise ConfigError("[section] key: ...") naming the key."""
        ...


def check_section(section: str, settings: Any, *, required_when_enabled: Iterable[str] = (),
                  urls: Iterable[str] = ()) -> None:
    """The load-time checks most sections need, with the messages every section uses. Numbers
    are checked by the loader against each field's declared range (navd.config.number); `urls`
    names the keys (a string or a list) holding http(s) URLs (navd.config.check_url)."""
    from navd.config import check_url  # noqa: PLC0415
    from navd.errors import ConfigError  # noqa: PLC0415

    for key in urls:
        value = getattr(settings, key)
        for url in (value,) if isinstance(value, str) else value:
            check_url(f"[{section}] {key}", url, example="http://host:port")
    if settings.enabled:
        for key in required_when_enabled:
            if not getattr(settings, key):
                raise ConfigError(f"[{section}] {key}: [{section}] is enabled but has no {key}")


@dataclasses.dataclass(frozen=True)
class CliOption:
    """A flag of `navd extract` that only one component understands, e.g. HMS's --filter-file.
    Its value reaches `build` as `options[dest]` (None when not given)."""

    flag: str
    dest: str
    help: str
    metavar: str | None = None
    default: str | None = None
    #: a switch without a value (its dest is True when given)
    switch: bool = False
    #: given to a push component, `navd extract` makes one recorded run of it (as of a pull
    #: component) instead of tailing: a one-off job such as the Spark history backfill
    one_run: bool = False


#: `--master` of the components whose one-off jobs run on Spark (the fsimage load, the Spark
#: history backfill): one option, so `navd extract` lists it once
SPARK_MASTER = CliOption(
    "--master", "master", metavar="MASTER",
    help="hdfs --from-fsimage, spark --backfill: the Spark master, e.g. local[4] or yarn (default: "
         "[spark_jobs] master, local[*]; yarn: docs/operations/yarn.md)")


@dataclasses.dataclass(frozen=True)
class BuildContext:
    """What a component's `build` gets for one run (pull) or one tail (push)."""

    config: NavdConfig
    index: SolrIndex
    #: the root of every component's state (extractor_state_dir)
    state_root: Path
    #: the run's id: the `extractorRunId` of what it writes and the run record's identity
    run_id: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def state_dir(self, name: str) -> Path:
        """A pull component's own state directory: one per cluster."""
        return self.state_root / name / self.config.cluster.name


def _no_check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del config, options


def report_counts(report: Any) -> dict[str, int]:
    """The integer fields of a run's report dataclass, as run-record counts."""
    return {k: v for k, v in dataclasses.asdict(report).items() if isinstance(v, int) and not isinstance(v, bool)}


@dataclasses.dataclass(frozen=True)
class Component(Generic[SettingsT, ReportT]):
    """One source, as the registry, the runner, the daemon and the CLI see it."""

    #: the source's name: `navd extract <name>`, the run records' `extractor.<name>`, the logger
    name: str
    #: its TOML section (`hive` for the HMS extractor) and that section's dataclass
    section: str
    settings_type: type[SettingsT]
    mode: Literal["pull", "push"]
    #: the extractor for one run (pull) or for the tail's lifetime (push)
    build: Callable[[BuildContext], Extractor[ReportT] | Checkpointed[ReportT]]
    #: the one line a run ends with (stdout for `navd extract`, the log for `navd run`)
    summary: Callable[[ReportT], str]
    #: run-time check before anything is locked or recorded: raise ConfigError naming the
    #: missing key (a section need not be enabled to be run by hand, but must be complete)
    check: Callable[[NavdConfig, Mapping[str, Any]], None] = _no_check
    cli_options: tuple[CliOption, ...] = ()
    help: str = ""
    #: it derives from what the sources indexed (sensitivity propagates levels along their
    #: lineage): `navd extract all` runs it after every source, so one pass sees their writes
    derived: bool = False
    #: it keeps the index rather than adding to it (the linker, purge): it has its own command
    #: instead of `navd extract`, no run of it is followed by the after-runs components, and
    #: enabling it alone gives `navd run` nothing to do
    upkeep: bool = False
    #: when `navd run` starts it: every `interval` of its section ("interval"), or after every run
    #: of a component that is not upkeep ("after_runs": the link pass, which resolves what that
    #: run wrote)
    trigger: Literal["interval", "after_runs"] = "interval"
    #: `navd run`'s first start: "now", or "resumed": `interval` after its last recorded run began
    #: (none recorded: `interval` from now), so a weekly purge keeps its rhythm across restarts (a
    #: service restarted weekly would otherwise never purge)
    first_start: Literal["now", "resumed"] = "now"
    #: the id of its run records, lock and schedule when not `extractor.<name>` (`linker`, `purge`)
    record_id: str = ""
    #: what its runs are called in messages ("link"; default "<name> extraction")
    run_name: str = ""
    #: the run record's counts from a report (default: the report's integer fields)
    counts: Callable[[ReportT], dict[str, int]] = report_counts
    #: what the progress line of a run on a terminal counts, read from the running extractor, and
    #: its unit (default: the records written)
    progress: Callable[[Any], int] | None = None
    progress_unit: str = "records"
    #: the line an extraction's output ends with when this after-runs component followed it
    follow_up_summary: Callable[[ReportT], str] | None = None

    @property
    def id(self) -> str:
        """The component's id in run records, locks and schedules."""
        return self.record_id or f"extractor.{self.name}"

    @property
    def run_title(self) -> str:
        """What a run of it is called when waited for: "hdfs extraction", "link"."""
        return self.run_name or f"{self.name} extraction"

    def settings(self, config: NavdConfig) -> SettingsT:
        return config.section(self.section, self.settings_type)

    def enabled(self, config: NavdConfig) -> bool:
        return self.settings(config).enabled

    def interval(self, config: NavdConfig) -> timedelta:
        return self.settings(config).interval


def write_checkpointed(items: Iterable[Record | Checkpoint], writer: IndexWriter, *, commit: Callable[[], None],
                       stop: threading.Event | None = None) -> int:
    """Write the records of `items`; at each CHECKPOINT and at the end flush the writer, then
    `commit` the extractor's state, in that order: state (positions, directory times) never runs
    ahead of what Solr holds, so a crash loses nothing. Returns the number of records written;
    raises if Solr did not take them (the state then stays at the last commit).

    `stop` set (navd is stopping): a mark already reached is still flushed and committed, so the
    work up to it is kept; then RunStopped is raised before the next record."""
    count = 0
    for item in items:
        if isinstance(item, Checkpoint):
            writer.flush()
            commit()
        else:
            writer.write(item)
            count += 1
        if stop is not None and stop.is_set():
            raise RunStopped("navd is stopping: run abandoned at the last checkpoint, the next run continues")
    writer.flush()
    commit()
    return count


def run_pass(extractor: Extractor[ReportT] | Checkpointed[ReportT], writer: IndexWriter, *, full: bool = False,
             stop: threading.Event | None = None) -> ReportT:
    """One pass of an extractor, as the runner runs it: a yielding one's records written and its
    state committed at each mark (rolled back to the last commit when anything fails), or the
    pass an extractor writes itself."""
    if not isinstance(extractor, Checkpointed):
        return extractor.run_pass(writer, full=full, stop=stop)
    try:
        records = write_checkpointed(extractor.extract(full=full), writer, commit=extractor.commit, stop=stop)
    except BaseException:
        extractor.rollback()
        raise
    return extractor.finished(records)

"""The `[sensitivity]` section and the sensitivity pass, a registered pull component.

Why a pass at all: extractors rewrite element documents whole, which drops the `sensitivity`
field the projection put there, and new lineage (a new job, a relation the linker resolved)
may carry a level further. So the daemon runs this pass on its interval: it reads the Hive
tables indexed since its checkpoint (their properties give tags, and withdraw the tags a removed
property gave), then recomputes the columns and tables written since the checkpoint without a
level, and the targets of column relations written since. Its first run (and `--full`) starts
from every tag instead. The checkpoint is a record in the runs core (CHECKPOINT_ID).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number, setting
from navd.errors import ConfigError, RunStopped
from navd.extractors import BuildContext, Component, Extractor
from navd.index.client import IndexWriter, SolrIndex, batches
from navd.logs import get_logger
from navd.model import ElementType
from navd.sensitivity.rules import DEFAULT_LEVELS, HIVE, Levels, Outcome, Tag
from navd.sensitivity.store import GraphOptions, SensitivityIndex, tag_document, tag_identity

SECTION = "sensitivity"
log = get_logger("navd.sensitivity")

#: the pass re-reads what was indexed this long before its checkpoint: documents are searchable
#: only after a soft commit, so one indexed just before the last pass began may not have been seen
OVERLAP = timedelta(minutes=2)
#: dirty columns recomputed together
_CHUNK = 10_000


@dataclasses.dataclass(frozen=True)
class SensitivityConfig:
    """`[sensitivity]`: sensitivity levels and their propagation along column lineage. The pass
    re-applies levels after extractions rewrite elements: enable it wherever `navd tag` is used."""

    enabled: bool = setting(False, help="run the sensitivity pass in `navd run` (and `navd extract all`)")
    levels: tuple[str, ...] = setting(DEFAULT_LEVELS, help="the levels, lowest first (a list, or one "
                                                           "comma-separated string)")
    hive_property: str = setting("sensitivity", help="the Hive table property giving the table's level; "
                                                     "`<key>.<column>` gives a column's")
    control_flow: bool = setting(False, help="CONTROL_FLOW (join keys and filter columns) carries levels too")
    interval_minutes: float = number(5.0, 0, MAX_INTERVAL_MINUTES, low_open=True,
                                     help="`navd run` starts a pass this long after the previous one completed")

    def names(self) -> list[str]:
        """The levels, lowest first: a list, or one string `"public, internal, ..."`."""
        return [name.strip().lower() for level in self.levels for name in level.split(",")]

    def validate(self) -> None:
        names = self.names()
        if not names or any(not n or " " in n for n in names):
            raise ConfigError("[sensitivity] levels: a list of level names, lowest first, "
                              "e.g. [\"public\", \"internal\", \"confidential\", \"pii\"]")
        if len(set(names)) != len(names):
            raise ConfigError(f"[sensitivity] levels: a level is named twice in {', '.join(names)}")
        if not self.hive_property.strip() or " " in self.hive_property.strip():
            raise ConfigError("[sensitivity] hive_property: a Hive table property key, e.g. \"sensitivity\"")

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)

    @property
    def ordered(self) -> Levels:
        return Levels(tuple(self.names()))


def sensitivity_settings(config: NavdConfig) -> SensitivityConfig:
    return config.section(SECTION, SensitivityConfig)


def sensitivity_index(index: SolrIndex, config: NavdConfig) -> SensitivityIndex:
    """The feature's Solr side with the configured levels and flows."""
    settings = sensitivity_settings(config)
    return SensitivityIndex(index, settings.ordered, GraphOptions(control_flow=settings.control_flow))


@dataclasses.dataclass(frozen=True)
class SensitivityReport:
    hive_tags_added: int = 0
    hive_tags_removed: int = 0
    columns_changed: int = 0
    tables_changed: int = 0
    skipped: int = 0  # property values that are not levels (logged)


class SensitivityPass:
    def __init__(self, index: SolrIndex, config: NavdConfig) -> None:
        self.index = index
        self.settings = sensitivity_settings(config)
        self.sensitivity = sensitivity_index(index, config)

    def run_pass(self, writer: IndexWriter, *, full: bool = False,
                 stop: threading.Event | None = None) -> SensitivityReport:
        del writer  # levels are atomic updates of existing documents, not records
        started = datetime.now(UTC)
        checkpoint = None if full else self.sensitivity.checkpoint()
        since = None if checkpoint is None else checkpoint - OVERLAP
        report = self._sync_hive(since, stop)
        if checkpoint is None:
            outcomes = self._from_tags(stop)
        elif self.sensitivity.any_tags():
            outcomes = self._from_written(since, stop)
        else:
            outcomes = iter(())
        columns = tables = 0
        for outcome in outcomes:
            columns += len(outcome.columns)
            tables += len(outcome.tables)
        self.sensitivity.save_checkpoint(started)
        return dataclasses.replace(report, columns_changed=report.columns_changed + columns,
                                   tables_changed=report.tables_changed + tables)

    def close(self) -> None:
        pass

    def _sync_hive(self, since: datetime | None, stop: threading.Event | None) -> SensitivityReport:
        """Tags from the properties of the Hive tables indexed since `since`; tags a removed
        property gave are withdrawn downstream."""
        tables = self.sensitivity.hive_tables(since)
        added = removed = skipped = columns_changed = tables_changed = 0
        for batch in batches(tables, 500):
            _stop_here(stop)
            wanted: dict[str, tuple[Tag, str]] = {}
            for table in batch:
                tags, problems = self.sensitivity.hive_tags(table, self.settings.hive_property.strip())
                for problem in problems:
                    log.warning("sensitivity property skipped", problem=problem)
                skipped += len(problems)
                wanted.update((tag_identity(HIVE, t.target), (t, str(table["identity"]))) for t in tags)
            have = self.sensitivity.hive_tag_records([str(t["identity"]) for t in batch])
            new = [tag_document(tag, table=table) for key, (tag, table) in wanted.items()
                   if key not in have or have[key].get("tag_level") != tag.level]
            lowered = [str(have[key]["tag_target"]) for key, (tag, _) in wanted.items() if key in have and
                       self.settings.ordered.rank(tag.level) < self.settings.ordered.rank(str(have[key]["tag_level"]))]
            gone = [key for key in have if key not in wanted]
            withdrawn = [str(have[key]["tag_target"]) for key in gone] + lowered
            if new:
                self.sensitivity.put_tags(new)
            self.sensitivity.delete_tags(gone)
            added += len(new)
            removed += len(gone)
            raised = [str(d["tag_target"]) for d in new]
            for outcome in self._apply_targets(withdrawn, clear=True), self._apply_targets(raised, clear=False):
                if outcome is not None:
                    columns_changed += len(outcome.columns)
                    tables_changed += len(outcome.tables)
        return SensitivityReport(added, removed, columns_changed, tables_changed, skipped)

    def _apply_targets(self, targets: list[str], *, clear: bool) -> Outcome | None:
        if not targets:
            return None
        types = self.sensitivity.element_types(targets)
        columns: list[str] = []
        tables: list[str] = []
        for target in targets:
            found_columns, found_tables = self.sensitivity.target_columns(target, types.get(target, ElementType.FIELD.value))
            columns += found_columns
            tables += found_tables
        return self.sensitivity.apply(columns, clear=clear, tables=tables)

    def _from_tags(self, stop: threading.Event | None) -> Iterator[Outcome]:
        """Every tag applied again (the first pass, `--full`): the projection is a function of
        the tags."""
        for batch in batches((tag.target for tag in self.sensitivity.tags()), _CHUNK):
            _stop_here(stop)
            outcome = self._apply_targets(sorted(set(batch)), clear=False)
            if outcome is not None:
                yield outcome

    def _from_written(self, since: datetime | None, stop: threading.Event | None) -> Iterator[Outcome]:
        """Columns and tables written since `since` without a level (an extractor rewrote them),
        and the targets of column relations written since (new lineage)."""
        for batch in batches(self.sensitivity.unlevelled_columns(since), _CHUNK):
            _stop_here(stop)
            yield self.sensitivity.apply(batch)
        for batch in batches(self.sensitivity.column_flow_targets(since), _CHUNK):
            _stop_here(stop)
            yield self.sensitivity.apply(sorted(set(batch)))
        for batch in batches(self.sensitivity.unlevelled_tables(since), _CHUNK):
            _stop_here(stop)
            yield self.sensitivity.apply([], tables=batch)


def _stop_here(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise RunStopped("navd is stopping: the sensitivity pass continues from its checkpoint next time")


def build(context: BuildContext) -> Extractor[SensitivityReport]:
    return SensitivityPass(context.index, context.config)


def summary(r: SensitivityReport) -> str:
    return (f"sensitivity: {r.hive_tags_added} Hive tags added, {r.hive_tags_removed} removed, "
            f"{r.columns_changed} column and {r.tables_changed} table levels changed, {r.skipped} skipped")


COMPONENT: Component[SensitivityConfig, SensitivityReport] = Component(
    name="sensitivity", section=SECTION, settings_type=SensitivityConfig, mode="pull", build=build,
    summary=summary, help="sensitivity levels: Hive table properties, propagation along column lineage",
    derived=True)

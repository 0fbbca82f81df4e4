"""The Hive Metastore component: databases, tables, views, columns and partitions via HiveServer2."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import BuildContext, CliOption, Checkpointed, Component
from navd.extractors.hms.settings import SECTION, HiveConfig, hive_settings

if TYPE_CHECKING:
    from navd.extractors.hms.extractor import HmsReport

FILTER_FILE = "filter_file"


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del options
    if not hive_settings(config).host:
        raise ConfigError("[hive] host: no HiveServer2 configured")


def build(context: BuildContext) -> Checkpointed[HmsReport]:
    from navd.extractors.hms.extractor import HmsExtractor  # noqa: PLC0415 - PyHive, imported when run

    filter_file = context.options.get(FILTER_FILE)
    return HmsExtractor.from_config(context.config, context.index, context.state_dir("hms"),
                                    filter_file=Path(filter_file) if filter_file else None,
                                    extractor_run_id=context.run_id)


def summary(r: HmsReport) -> str:
    return (f"hms: {r.databases} databases, {r.tables} tables ({r.tables_described} described, "
            f"{r.tables_unchanged} unchanged), {r.partitions} partitions, {r.deletions} deleted, "
            f"{r.skipped} skipped"
            + (f", {r.incarnation_relations} relations moved to earlier incarnations" if r.incarnation_relations else "")
            + (f"; {r.refused}" if r.refused else ""))


COMPONENT: Component[HiveConfig, HmsReport] = Component(
    name="hms", section=SECTION, settings_type=HiveConfig, mode="pull", build=build, summary=summary,
    check=check, help="Hive Metastore through HiveServer2",
    cli_options=(CliOption("--filter-file", FILTER_FILE, metavar="FILE",
                           help="hms: only the tables of these `db:table` regex lines (as Atlas import-hive -f)"),))

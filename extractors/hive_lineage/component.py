"""The Hive lineage component: a push extractor tailing the LineageLogger hook's log."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import BuildContext, Checkpointed, Component
from navd.extractors.hive_lineage.settings import SECTION, HiveLineageConfig, hive_lineage_settings

if TYPE_CHECKING:
    from navd.extractors.hive_lineage.extractor import PassReport

NAME = "hive-lineage"


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del options
    if not hive_lineage_settings(config).log_paths:
        raise ConfigError(f"[{SECTION}] log_paths: no HiveServer2 lineage log configured")


def state_dir(context: BuildContext) -> Path:
    configured = hive_lineage_settings(context.config).state_dir
    return Path(configured).expanduser() if configured else context.state_root / SECTION


def build(context: BuildContext) -> Checkpointed[PassReport]:
    from navd.extractors.hive_lineage.extractor import LineageLogExtractor  # noqa: PLC0415 - imported when run
    from navd.extractors.hive_lineage.hook import parse_hive  # noqa: PLC0415

    settings = hive_lineage_settings(context.config)
    return LineageLogExtractor(name=NAME, cluster=context.config.cluster.name, patterns=settings.log_paths,
                               state_dir=state_dir(context), cursor_file="hive-lineage-cursors.json",
                               parse=parse_hive, multi_line=True, what="Hive lineage log",
                               extractor_run_id=context.run_id)


def summary(r: PassReport) -> str:
    return (f"{NAME}: {r.lines} new lines, {r.queries} queries, {r.records} records written, "
            f"{r.warnings} warnings")


COMPONENT: Component[HiveLineageConfig, PassReport] = Component(
    name=NAME, section=SECTION, settings_type=HiveLineageConfig, mode="push", build=build, summary=summary,
    check=check, help="HiveServer2 query lineage (push: the LineageLogger hook's log, tailed every "
                      "[hive_lineage] poll_seconds)")

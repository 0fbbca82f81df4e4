"""The Impala component: a push extractor tailing impalad's lineage event log."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import BuildContext, Checkpointed, Component
from navd.extractors.impala.settings import SECTION, ImpalaConfig, impala_settings

if TYPE_CHECKING:
    from navd.extractors.hive_lineage.extractor import PassReport

NAME = "impala"


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del options
    if not impala_settings(config).lineage_dirs:
        raise ConfigError(f"[{SECTION}] lineage_dirs: no Impala lineage log directory configured")


def state_dir(context: BuildContext) -> Path:
    configured = impala_settings(context.config).state_dir
    return Path(configured).expanduser() if configured else context.state_root / SECTION


def build(context: BuildContext) -> Checkpointed[PassReport]:
    from navd.extractors.hive_lineage.extractor import LineageLogExtractor  # noqa: PLC0415 - imported when run
    from navd.extractors.impala.lineage import FILE_PREFIX, parse_impala  # noqa: PLC0415

    settings = impala_settings(context.config)
    # impalad's own files only: `impala_lineage_log_1.0-<ms>` (its SimpleLogger's names), never
    # renamed: keyed by path, so a new file on a deleted one's inode is read from its start
    patterns = [os.path.join(d, FILE_PREFIX + "[0-9]*") for d in settings.lineage_dirs]
    return LineageLogExtractor(name=NAME, cluster=context.config.cluster.name, patterns=patterns,
                               state_dir=state_dir(context), cursor_file="impala-lineage-cursors.json",
                               parse=parse_impala, multi_line=False, what="Impala lineage log",
                               extractor_run_id=context.run_id, key_by="path")


def summary(r: PassReport) -> str:
    return (f"{NAME}: {r.lines} new lines, {r.queries} queries, {r.records} records written, "
            f"{r.warnings} warnings")


COMPONENT: Component[ImpalaConfig, PassReport] = Component(
    name=NAME, section=SECTION, settings_type=ImpalaConfig, mode="push", build=build, summary=summary,
    check=check, help="Impala query lineage (push: impalad's --lineage_event_log_dir, tailed every "
                      "[impala] poll_seconds)")

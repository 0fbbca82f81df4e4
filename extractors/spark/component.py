"""The Spark component: a push extractor tailing event logs (local or on HDFS)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import BuildContext, Component, Extractor
from navd.extractors.spark.settings import SECTION, SparkConfig, spark_settings

if TYPE_CHECKING:
    from navd.extractors.spark.extractor import PassReport


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del options
    if not spark_settings(config).event_log_dirs:
        raise ConfigError("[spark] event_log_dirs: no event log directory configured")


def state_dir(context: BuildContext) -> Path:
    configured = spark_settings(context.config).state_dir
    return Path(configured).expanduser() if configured else context.state_root / "spark"


def build(context: BuildContext) -> Extractor[PassReport]:
    from navd.extractors.spark.extractor import SparkExtractor  # noqa: PLC0415 - imported when run

    return SparkExtractor.from_config(context.config, state_dir(context), extractor_run_id=context.run_id,
                                      index=context.index)


def summary(r: PassReport) -> str:
    return f"spark: {r.lines} new lines, {r.records} records written, {r.warnings} warnings"


COMPONENT: Component[SparkConfig, PassReport] = Component(
    name="spark", section=SECTION, settings_type=SparkConfig, mode="push", build=build, summary=summary,
    check=check, help="Spark event logs (push: tailed every [spark] poll_seconds)")

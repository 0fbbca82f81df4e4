"""The YARN component: applications from the ResourceManager's REST API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import BuildContext, Checkpointed, Component
from navd.extractors.yarn.settings import SECTION, YarnConfig, yarn_settings

if TYPE_CHECKING:
    from navd.extractors.yarn.extractor import YarnReport


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del options
    if not yarn_settings(config).urls:
        raise ConfigError("[yarn] urls: no ResourceManager configured")


def build(context: BuildContext) -> Checkpointed[YarnReport]:
    from navd.extractors.yarn.extractor import YarnExtractor  # noqa: PLC0415 - imported when run

    return YarnExtractor.from_config(context.config, context.state_dir("yarn"), extractor_run_id=context.run_id)


def summary(r: YarnReport) -> str:
    return (f"yarn: {r.applications} applications ({r.finished} finished since the last run, "
            f"{r.unfinished} not finished), {r.records} records written, {r.skipped} skipped")


COMPONENT: Component[YarnConfig, YarnReport] = Component(
    name="yarn", section=SECTION, settings_type=YarnConfig, mode="pull", build=build, summary=summary,
    check=check, help="YARN applications from the ResourceManager")

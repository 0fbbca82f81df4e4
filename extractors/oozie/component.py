"""The Oozie component: workflows, coordinators and bundles from Oozie's REST API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import BuildContext, Checkpointed, Component
from navd.extractors.oozie.settings import SECTION, OozieConfig, oozie_settings

if TYPE_CHECKING:
    from navd.extractors.oozie.extractor import OozieReport


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del options
    if not oozie_settings(config).urls:
        raise ConfigError("[oozie] urls: no Oozie server configured (http(s)://host:11000/oozie)")


def build(context: BuildContext) -> Checkpointed[OozieReport]:
    from navd.extractors.oozie.extractor import OozieExtractor  # noqa: PLC0415 - imported when run

    return OozieExtractor.from_config(context.config, context.state_dir("oozie"), extractor_run_id=context.run_id)


def summary(r: OozieReport) -> str:
    return (f"oozie: {r.workflows} workflow runs ({r.actions} actions, {r.yarn_links} YARN applications), "
            f"{r.coordinators} coordinators, {r.bundles} bundles, {r.records} records written, {r.skipped} skipped, "
            f"{r.requests} Oozie requests")


COMPONENT: Component[OozieConfig, OozieReport] = Component(
    name="oozie", section=SECTION, settings_type=OozieConfig, mode="pull", build=build, summary=summary,
    check=check, help="Oozie workflows, coordinators and bundles from Oozie's REST API")

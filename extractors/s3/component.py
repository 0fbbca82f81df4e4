"""The S3 component: buckets, prefixes and objects of AWS S3 or an S3-compatible store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import BuildContext, Checkpointed, Component
from navd.extractors.s3.settings import SECTION, S3Config, s3_settings

if TYPE_CHECKING:
    from navd.extractors.s3.extractor import S3Report


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    del options
    if not s3_settings(config).roots:
        raise ConfigError("[s3] roots: nothing to list (give s3a://bucket or s3a://bucket/prefix)")


def build(context: BuildContext) -> Checkpointed[S3Report]:
    from navd.extractors.s3.extractor import S3Extractor  # noqa: PLC0415 - imported when run

    return S3Extractor.from_config(context.config, context.index, context.state_dir("s3"),
                                   extractor_run_id=context.run_id)


def summary(r: S3Report) -> str:
    return (f"s3: {r.roots} roots ({r.complete_listings} listed completely), {r.objects_listed} objects and "
            f"{r.prefixes_listed} prefixes listed, {r.entries} entries written, {r.deletions} deleted, "
            f"{r.skipped} skipped, {r.requests} S3 requests" + (f"; {r.refused}" if r.refused else ""))


COMPONENT: Component[S3Config, S3Report] = Component(
    name="s3", section=SECTION, settings_type=S3Config, mode="pull", build=build, summary=summary,
    check=check, help="S3 buckets, prefixes and objects (AWS or an S3-compatible store)")

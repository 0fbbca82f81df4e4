"""The HDFS component: WebHDFS crawls (full or incremental), or a bulk load of an fsimage dump."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError, UsageError
from navd.extractors import SPARK_MASTER, BuildContext, CliOption, Component, Extractor
from navd.extractors.hdfs.settings import SECTION, HdfsConfig, hdfs_settings
from navd.index.client import IndexWriter

if TYPE_CHECKING:
    from navd.extractors.hdfs.bulk import FsimageReport
    from navd.extractors.hdfs.extractor import HdfsReport

    Report = HdfsReport | FsimageReport

FSIMAGE = "fsimage"
MASTER = SPARK_MASTER.dest


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    settings = hdfs_settings(config)
    if not config.cluster.default_fs:
        raise ConfigError("[cluster] default_fs: not set (the cluster's fs.defaultFS, e.g. hdfs://nameservice1)")
    if options.get(MASTER) and not options.get(FSIMAGE):
        raise UsageError("--master: only with --from-fsimage (the Spark job's master)")
    if options.get(FSIMAGE):
        if len(settings.roots) > 1:
            raise ConfigError("[hdfs] roots: --from-fsimage loads one root; run it once per root with a config "
                              "naming that root")
        from navd.spark_jobs import check_job  # noqa: PLC0415

        check_job(config.spark_jobs, options.get(MASTER))
        return  # the dump replaces WebHDFS
    if not settings.urls:
        raise ConfigError("[hdfs] urls: no WebHDFS URL configured (the NameNode's http(s)://host:port)")


class FsimageLoad:
    """`navd extract hdfs --from-fsimage`: one PySpark job writes the dump's records itself (its
    executors have their own writers), so the run's writer stays unused."""

    def __init__(self, context: BuildContext) -> None:
        self.context = context

    def run_pass(self, writer: IndexWriter, *, full: bool = False,
                 stop: threading.Event | None = None) -> FsimageReport:
        from navd.extractors.hdfs.bulk import load_fsimage  # noqa: PLC0415 - PySpark, only for this path

        del writer, full, stop  # a Spark job is not stopped half-way: its upserts are idempotent
        config, options = self.context.config, self.context.options
        settings = hdfs_settings(config)
        # The executors reach Solr with the address the runner's client resolved (the embedded
        # server's port is known only at run time).
        resolved = dataclasses.replace(config, solr=self.context.index.config)
        return load_fsimage(resolved, str(options[FSIMAGE]), master=options.get(MASTER),
                            default_fs=config.cluster.default_fs, root=settings.roots[0] if settings.roots else "/",
                            extractor_run_id=self.context.run_id)

    def close(self) -> None:
        pass


def build(context: BuildContext) -> Extractor[Report]:
    if context.options.get(FSIMAGE):
        return FsimageLoad(context)
    from navd.extractors.hdfs.extractor import HdfsExtractor  # noqa: PLC0415 - imported when run

    return HdfsExtractor.from_config(context.config, context.index, context.state_dir("hdfs"),
                                     extractor_run_id=context.run_id)


def summary(report: Report) -> str:
    from navd.extractors.hdfs.bulk import FsimageReport  # noqa: PLC0415 - only the dataclass

    if isinstance(report, FsimageReport):
        return (f"hdfs fsimage: {report.elements} elements, {report.relations} relations, "
                f"{report.bad_lines} bad lines skipped")
    r = report
    return (f"hdfs: {r.directories_listed} directories listed, {r.directories_unchanged} unchanged, "
            f"{r.entries} entries, {r.deletions} deleted, {r.skipped} skipped, {r.requests} WebHDFS requests"
            + (f"; {r.refused}" if r.refused else ""))


COMPONENT: Component[HdfsConfig, Report] = Component(
    name="hdfs", section=SECTION, settings_type=HdfsConfig, mode="pull", build=build, summary=summary,
    check=check, help="HDFS namespace over WebHDFS",
    cli_options=(
        CliOption("--from-fsimage", FSIMAGE, metavar="FILE",
                  help="hdfs: bulk-load a NameNode fsimage dump (hdfs oiv -p Delimited) with PySpark"),
        SPARK_MASTER,
    ))

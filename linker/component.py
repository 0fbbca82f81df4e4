"""The linker as a registered component: `[linker]` is its section, and every run of a component
that adds to the index is followed by one of its passes (trigger "after_runs"); `navd link`
runs one by hand. A pass is one at a time across processes, since each moves the linker's
watermark: the runner takes its lock and records it as `linker`, as for any component.

`navd link` gives it options: `fs_aliases` (added to `[linker] fs_aliases` for one pass), `spark`
(the full pass as a PySpark job) and `master` (that job's Spark master; None: `[spark_jobs]
master`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from navd.config import LinkerConfig, NavdConfig
from navd.extractors import BuildContext, Component, Extractor
from navd.index.client import IndexWriter, SolrIndex
from navd.linker.linker import Linker, LinkReport


class LinkPass:
    """One link pass: in this process, or (`spark`) as a PySpark job."""

    def __init__(self, index: SolrIndex, config: NavdConfig, options: Mapping[str, Any]) -> None:
        self.config = config
        self.spark = bool(options.get("spark"))
        self.master: str | None = options.get("master")
        self.aliases = {**config.linker.aliases, **(options.get("fs_aliases") or {})}
        self.linker = Linker(index, cluster=config.cluster.name, default_fs=config.cluster.default_fs,
                             fs_aliases=self.aliases or None)

    def run_pass(self, writer: IndexWriter, *, full: bool = False,
                 stop: threading.Event | None = None) -> LinkReport:
        del writer, stop  # relinked relations are atomic updates; a pass is short and not stopped midway
        if not self.spark:
            return self.linker.link(full=full)
        from navd.linker.spark_link import spark_link  # noqa: PLC0415 - PySpark, only for --spark

        return spark_link(self.linker.index, cluster=self.config.cluster.name,
                          default_fs=self.config.cluster.default_fs, fs_aliases=self.aliases or None,
                          master=self.master, jobs=self.config.spark_jobs)

    def examined(self) -> int:
        """The relations examined so far (the progress line of `navd link`)."""
        return int(getattr(self.linker, "examined_so_far", 0))  # set once the pass began

    def close(self) -> None:
        pass


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    """A Spark pass that could not be launched is refused before the lock and the run record."""
    if options.get("spark"):
        from navd.spark_jobs import check_job  # noqa: PLC0415

        check_job(config.spark_jobs, options.get("master"))


def build(context: BuildContext) -> Extractor[LinkReport]:
    return LinkPass(context.index, context.config, context.options)


def summary(report: LinkReport) -> str:
    return (f"link: {report.examined} unlinked relations examined, {report.linked} linked, "
            f"{report.still_unlinked} still unlinked")


def follow_up_summary(report: LinkReport) -> str:
    return f"link: {report.linked} relations linked, {report.still_unlinked} still unlinked"


COMPONENT: Component[LinkerConfig, LinkReport] = Component(
    name="linker", section="linker", settings_type=LinkerConfig, mode="pull", build=build, summary=summary,
    check=check, help="resolves unlinked relations once their far end is indexed", derived=True, upkeep=True,
    trigger="after_runs", record_id="linker", run_name="link", progress=LinkPass.examined,
    progress_unit="relations examined", follow_up_summary=follow_up_summary)

"""The Spark component: a push extractor tailing event logs (local or on HDFS), and the history
backfill (`navd extract spark --backfill`): the finished logs read by a PySpark job."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navd.config import NavdConfig
from navd.errors import ConfigError, UsageError
from navd.extractors import SPARK_MASTER, BuildContext, Checkpointed, CliOption, Component, Extractor
from navd.extractors.spark.settings import SECTION, SparkConfig, spark_settings
from navd.logs import get_logger

if TYPE_CHECKING:
    from navd.extractors.spark.backfill import BackfillReport
    from navd.extractors.spark.extractor import PassReport, PostCommitHook
    from navd.index.client import SolrIndex

    Report = PassReport | BackfillReport

BACKFILL = "backfill"
MASTER = SPARK_MASTER.dest

log = get_logger("navd.extractor.spark")


def supersede_listener_lineage(index: SolrIndex, application_ids: frozenset[str]) -> None:
    """The OpenLineage Spark listener's lineage of these applications goes: the event log the
    extractor just wrote supersedes it (docs/sources/openlineage.md, one run, one lineage)."""
    from navd.openlineage.supersede import withdraw_listener_lineage  # noqa: PLC0415 - imported when run

    withdrawn = withdraw_listener_lineage(index, application_ids)
    if withdrawn:
        log.info("OpenLineage listener lineage superseded by the event log",
                 applications=sorted(application_ids), listener_runs=len(withdrawn))


#: What the Spark extractor runs at each commit, tailer and backfill alike (extractor.PostCommitHook).
POST_COMMIT_HOOKS: tuple[PostCommitHook, ...] = (supersede_listener_lineage,)


def check(config: NavdConfig, options: Mapping[str, Any]) -> None:
    if options.get(MASTER) and not options.get(BACKFILL):
        raise UsageError("--master: only with --backfill (the Spark job's master)")
    if not spark_settings(config).event_log_dirs:
        raise ConfigError("[spark] event_log_dirs: no event log directory configured")
    if options.get(BACKFILL):
        from navd.spark_jobs import check_job  # noqa: PLC0415

        check_job(config.spark_jobs, options.get(MASTER))


def state_dir(context: BuildContext) -> Path:
    configured = spark_settings(context.config).state_dir
    return Path(configured).expanduser() if configured else context.state_root / "spark"


def build(context: BuildContext) -> Extractor[Report] | Checkpointed[Report]:
    if context.options.get(BACKFILL):
        from navd.extractors.spark.backfill import SparkBackfill  # noqa: PLC0415 - PySpark, only for this path

        # The executors reach Solr with the address the runner's client resolved (the embedded
        # server's port is known only at run time).
        return SparkBackfill(context.config, state_dir(context), context.index, extractor_run_id=context.run_id,
                             master=context.options.get(MASTER))
    from navd.extractors.spark.extractor import SparkExtractor  # noqa: PLC0415 - imported when run

    return SparkExtractor.from_config(context.config, state_dir(context), extractor_run_id=context.run_id,
                                      index=context.index, post_commit=POST_COMMIT_HOOKS)


def summary(report: Report) -> str:
    from navd.extractors.spark.backfill import BackfillReport  # noqa: PLC0415 - only the dataclass

    if isinstance(report, BackfillReport):
        r = report
        return (f"spark backfill: {r.applications} finished logs read, {r.lines} lines, {r.records} records "
                f"written, {r.warnings} warnings; left to the tailer: {r.in_progress} in progress; "
                f"{r.already_read} read before" + (f", {r.owner_not_allowed} skipped for their owner"
                                                   if r.owner_not_allowed else ""))
    return f"spark: {report.lines} new lines, {report.records} records written, {report.warnings} warnings"


COMPONENT: Component[SparkConfig, Report] = Component(
    name="spark", section=SECTION, settings_type=SparkConfig, mode="push", build=build, summary=summary,
    check=check, help="Spark event logs (push: tailed every [spark] poll_seconds)",
    cli_options=(
        CliOption("--backfill", BACKFILL, switch=True, one_run=True,
                  help="spark: read the finished applications' event logs the tailer has not read with a "
                       "PySpark job (one task per log, executors writing to Solr), record their positions so "
                       "the tailer goes on after them, then exit; logs still being written are left to the "
                       "tailer"),
        SPARK_MASTER,
    ))

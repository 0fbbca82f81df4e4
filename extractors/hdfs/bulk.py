"""The bulk path of the HDFS extractor: an fsimage dump -> Solr, with PySpark.

For namespaces too big to walk over WebHDFS (10^8 inodes), an admin dumps the NameNode's fsimage
with `hdfs oiv -p Delimited` and navd reads the dump with Spark: the text is split across
partitions, every line goes through `fsimage.parse_line` and `records.records_for` (the same
documents as the WebHDFS walk), and every partition writes its own records to Solr with navd's
one writer, `IndexWriter`. Nothing but counters and a few bad-line samples reach the driver.

What the dump cannot carry, so the documents differ from the WebHDFS path's in exactly this:
- lastModified / lastAccessed are truncated to the minute (the Delimited format's precision);
- sourceId (the inode id) is absent: Delimited has no inode id column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, tzinfo
from typing import Any

from navd.config import EmbeddedSolrConfig, NavdConfig, SolrConfig
from navd.errors import NavdError
from navd.extractors.hdfs.fsimage import DEFAULT_DELIMITER, parse_line
from navd.extractors.hdfs.records import BadEntry, records_for
from navd.logs import get_logger
from navd.model import Element, Record, Relation
from navd.spark_jobs import failure_cause, spark_session

log = get_logger("navd.extractors.hdfs.bulk")
BAD_LINE_SAMPLES = 5  # bad lines the driver logs (they are all counted)


class BulkLoadError(NavdError):
    """The Spark job could not read the dump or write every document to Solr."""


@dataclasses.dataclass(frozen=True, slots=True)
class FsimageReport:
    elements: int
    relations: int
    bad_lines: int
    bad_line_samples: tuple[str, ...] = ()


def solr_config_data(config: SolrConfig) -> dict[str, Any]:
    """The Solr config as plain data, for shipping to executors (no navd objects in the closure)."""
    return dataclasses.asdict(config)


def solr_config_from_data(data: dict[str, Any]) -> SolrConfig:
    return SolrConfig(**{**data, "embedded": EmbeddedSolrConfig(**data["embedded"])})


def under_root(path: str, root: str) -> bool:
    """`path` is `root` itself or below it."""
    base = root.rstrip("/")
    return not base or path == base or path.startswith(base + "/")


def records_of_lines(lines: Iterable[str], *, default_fs: str, extractor_run_id: str, root: str = "/",
                     delimiter: str = DEFAULT_DELIMITER, tz: tzinfo = UTC,
                     on_bad: Callable[[str], None] | None = None) -> Iterator[Record]:
    """The records of dump lines below `root`; bad lines go to `on_bad(message)` (else raise)."""
    for line in lines:
        try:
            entry = parse_line(line, delimiter=delimiter, tz=tz)
        except BadEntry as exc:
            if on_bad is None:
                raise
            on_bad(str(exc))
            continue
        if entry is not None and under_root(entry.path, root):
            yield from records_for(entry, default_fs, extractor_run_id)


class _Samples:
    """Spark accumulator param (duck-typed, so importing this module starts no Spark): the first
    few bad-line messages, so the driver can say what was wrong."""

    def zero(self, value: list[str]) -> list[str]:
        return []

    def addInPlace(self, value1: list[str], value2: list[str]) -> list[str]:  # noqa: N802 - Spark's name
        return (value1 + value2)[:BAD_LINE_SAMPLES]


def load_fsimage(config: NavdConfig, dump_path: str, *, master: str | None = None, default_fs: str,
                 extractor_run_id: str, root: str = "/", delimiter: str = DEFAULT_DELIMITER,
                 tz: tzinfo = UTC, min_partitions: int | None = None) -> FsimageReport:
    """Index an `hdfs oiv -p Delimited` dump (paths at or below `root`) into Solr with Spark.

    `dump_path` is read by the executors: a local path for local[*], an hdfs:// (or other shared)
    URI on a cluster. `tz` is the zone oiv ran in (its times are local times of its JVM).
    `master`: None for `[spark_jobs] master` (navd.spark_jobs starts the session)."""
    with spark_session(config.spark_jobs, master, f"navd-hdfs-fsimage-{extractor_run_id}") as spark:
        sc = spark.sparkContext
        elements, relations, bad = sc.accumulator(0), sc.accumulator(0), sc.accumulator(0)
        samples = sc.accumulator([], _Samples())
        solr_data = solr_config_data(config.solr)

        def write_partition(rows: Iterable[Any]) -> None:
            # Runs on an executor: only plain data (solr_data, strings) comes with the closure.
            from navd.index.client import IndexWriter, SolrIndex  # noqa: PLC0415 - executor side

            bad_messages: list[str] = []
            bad_count = 0

            def on_bad(message: str) -> None:
                nonlocal bad_count
                bad_count += 1
                if len(bad_messages) < BAD_LINE_SAMPLES:
                    bad_messages.append(message)

            counts = {Element: 0, Relation: 0}
            with SolrIndex(solr_config_from_data(solr_data)) as index:
                writer = IndexWriter(index)
                try:
                    for record in records_of_lines((row.value for row in rows), default_fs=default_fs,
                                                   extractor_run_id=extractor_run_id, root=root,
                                                   delimiter=delimiter, tz=tz, on_bad=on_bad):
                        counts[type(record)] += 1
                        writer.write(record)
                finally:
                    complete = writer.close()
            if not complete:
                # Failing the task makes Spark retry it; upserts by identity make that harmless.
                raise BulkLoadError(f"not every document of this partition of {dump_path} reached Solr "
                                    f"at {index.base_url} (see the executor log)")
            elements.add(counts[Element])
            relations.add(counts[Relation])
            bad.add(bad_count)
            if bad_messages:
                samples.add(bad_messages)

        # lineSep "\n" only: oiv escapes LF in names but leaves a lone CR raw, which Spark's
        # default line splitting (CR, LF or CRLF) would cut a row at.
        try:
            lines = spark.read.option("lineSep", "\n").option("encoding", "UTF-8").text(dump_path)
            if min_partitions and lines.rdd.getNumPartitions() < min_partitions:
                lines = lines.repartition(min_partitions)
            log.info("indexing an fsimage dump with Spark", dump=dump_path, master=sc.master, root=root,
                     partitions=lines.rdd.getNumPartitions())
            lines.foreachPartition(write_partition)
        except Exception as exc:  # noqa: BLE001 - Py4J/PySpark errors: one line naming the dump
            raise BulkLoadError(f"{dump_path}: the Spark job failed: {failure_cause(exc)}") from exc
        report = FsimageReport(elements=elements.value, relations=relations.value, bad_lines=bad.value,
                               bad_line_samples=tuple(samples.value))
    for message in report.bad_line_samples:
        log.warning("bad line in the fsimage dump skipped", dump=dump_path, problem=message)
    log.info("fsimage dump indexed", dump=dump_path, elements=report.elements, relations=report.relations,
             bad_lines=report.bad_lines)
    return report

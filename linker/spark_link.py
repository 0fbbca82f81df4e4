"""`navd link --spark`: the linker's matching as a PySpark join, for large backlogs.

Always a full pass. Steps: Spark tasks read the unlinked relations and the non-stub elements
straight from Solr, one task per identity range (`client.identity_ranges`, about 20,000
documents each; relations read as the incremental linker reads them, see linker/store.py;
elements by `/export` on standalone Solr, a cursor on SolrCloud), so nothing is staged on the driver's disk and the read is as parallel as the
cluster (`--master yarn` works: executors only need to reach Solr). Spark explodes each
relation's unlinked endpoints into candidate identities with the same pure function the
incremental linker uses (`relink.endpoint_candidates`), joins them with the element identities,
keeps the best-ranked match per endpoint, and each partition writes its adds and deletes with
the same `plan_page`/`write_result` (adds, then deletes by id). So the result equals the
incremental linker's on the same data; the watermark moves as after a full pass.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson

from navd.config import SolrConfig, SparkJobsConfig
from navd.index.admin import solr_mode
from navd.index.client import SolrIndex, batches, identity_ranges
from navd.index.documents import NOT_STUB_FILTER
from navd.lineage.stored import StoredElement
from navd.logs import get_logger
from navd.spark_jobs import SparkJobError, failure_cause, spark_session

from .linker import Linker, LinkReport, plan_page, write_result
from .store import TARGET_FIELDS, UNLINKED, export_range, in_identity_range, relation_range
from .relink import Target

log = get_logger("navd.linker")

_RANGE_DOCUMENTS = 20_000


def _read_range(ranges: Iterator[str], solr: SolrConfig, core: str, filters: list[str], fl: str,
                line: Callable[[dict[str, Any]], tuple[Any, ...]], cloud: bool) -> Iterator[tuple[Any, ...]]:
    """Executor side: the rows of the documents in some identity ranges of a core: relations
    whole (`store.relation_range`); elements' `fl` by `/export` on standalone Solr, by a cursor
    on SolrCloud."""
    index = SolrIndex(solr)
    try:
        for identity_range in ranges:
            docs: Iterable[dict[str, Any]]
            if core == "relations":
                docs = relation_range(index, filters, identity_range, _RANGE_DOCUMENTS, cloud=cloud)
            elif cloud:
                docs = index.scan(core, "*:*", fl=fl, filters=[*filters, in_identity_range(identity_range)],
                                  page_size=5000, partition_above=sys.maxsize)
            else:
                docs = export_range(index, core, filters, fl, identity_range)
            for doc in docs:
                yield line(doc)
    finally:
        index.close()


def _solr_frame(spark: Any, index: SolrIndex, core: str, filters: list[str], fl: str,
                line: Callable[[dict[str, Any]], tuple[Any, ...]], schema: str, cloud: bool) -> Any:
    """A DataFrame of a core's matching documents, read by Spark tasks, one per identity range."""
    ranges = identity_ranges(index.count(core, "*:*", filters), _RANGE_DOCUMENTS)
    solr = index.config
    rows = spark.sparkContext.parallelize(ranges, len(ranges)).mapPartitions(
        lambda part: _read_range(part, solr, core, filters, fl, line, cloud))
    return spark.createDataFrame(rows, schema)


def _relation_row(doc: dict[str, Any]) -> tuple[Any, ...]:
    return (doc["identity"], orjson.dumps(doc).decode())


def _element_row(doc: dict[str, Any]) -> tuple[Any, ...]:
    element = StoredElement.from_doc(doc)
    return (element.id, element.qualified_name, element.type, element.source_type)


def _write_partition(rows: Iterator[Any], solr: SolrConfig, page_size: int) -> Iterator[tuple[int, int, int]]:
    """Executor side: rebuild documents, plan and write them page by page; yield the counts."""
    index = SolrIndex(solr)
    try:
        for chunk in batches(rows, page_size):
            resolved = []
            for row in chunk:
                targets = {int(m["end"]): Target(m["eid"], m["qn"], m["etype"], m["esource"])
                           for m in (row["matches"] or [])}
                resolved.append((orjson.loads(row["doc"]), targets))
            result = plan_page(resolved)
            write_result(index, result)
            yield result.examined, result.linked, result.still_unlinked
    finally:
        index.close()


def spark_link(index: SolrIndex, *, cluster: str, default_fs: str = "",
               fs_aliases: Mapping[str, str] | None = None, master: str | None = None,
               jobs: SparkJobsConfig | None = None, state_id: str = "linker", page_size: int = 2000) -> LinkReport:
    """A full link pass run as a Spark job; see the module docstring. `master`: None for `[spark_jobs]
    master` of `jobs` (navd.spark_jobs starts the session)."""
    from pyspark.sql import functions as F  # noqa: PLC0415 - heavy, only for --spark
    from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType  # noqa: PLC0415

    clock = time.monotonic()
    aliases = dict(fs_aliases or {})
    linker = Linker(index, cluster=cluster, default_fs=default_fs, fs_aliases=aliases, state_id=state_id)
    started, _last = linker.prepare()
    solr = index.config
    total = index.count("relations", "*:*", [UNLINKED])
    jobs = jobs or SparkJobsConfig()
    with spark_session(jobs, master, "navd-link") as spark:
        if "spark.sql.shuffle.partitions" not in jobs.conf:
            spark.conf.set("spark.sql.shuffle.partitions", "8")
        try:
            examined, linked, still = _job(spark, F, ArrayType, IntegerType, StringType, StructField, StructType,
                                           index, cluster, default_fs, aliases, solr, page_size)
        except Exception as exc:  # noqa: BLE001 - Py4J/PySpark errors: one line; the watermark stays
            raise SparkJobError(f"the Spark link job failed: {failure_cause(exc)}") from exc
    if examined != total:  # relations written unlinked during the pass are left to the next one
        log.info("spark link examined a different number of relations than were unlinked at its start",
                 unlinked_at_start=total, examined=examined)
    report = LinkReport(examined, linked, still, True, round(time.monotonic() - clock, 3))
    linker.finish(started, report)
    log.info("spark link pass done", **report.as_dict())
    return report


def _job(spark: Any, F: Any, ArrayType: Any, IntegerType: Any, StringType: Any, StructField: Any,  # noqa: N803
         StructType: Any, index: SolrIndex, cluster: str, default_fs: str,
         aliases: dict[str, str], solr: SolrConfig, page_size: int) -> tuple[int, int, int]:
    candidate_type = ArrayType(StructType([StructField("end", IntegerType()), StructField("rank", IntegerType()),
                                           StructField("cid", StringType())]))

    def candidates_of(doc: str) -> list[tuple[int, int, str]]:
        # Imported on the executor: the same pure functions as the incremental linker.
        from navd.linker.aliases import AliasRules  # noqa: PLC0415
        from navd.linker.relink import endpoint_candidates  # noqa: PLC0415
        rules = AliasRules(cluster=cluster, default_fs=default_fs, fs_aliases=aliases)
        return [(end, rank, candidate.id) for end, found in endpoint_candidates(orjson.loads(doc), rules).items()
                for rank, candidate in enumerate(found)]

    # Persisted: the explode and the final join both need it, and it must be read once, before
    # any partition writes (the writes delete the unlinked documents being read).
    cloud = solr_mode(index) == "cloud"
    rels = _solr_frame(spark, index, "relations", [UNLINKED], "*", _relation_row,
                       "identity string, doc string", cloud).persist()
    elements = _solr_frame(spark, index, "elements", [NOT_STUB_FILTER], TARGET_FIELDS, _element_row,
                           "eid string, qn string, etype string, esource string", cloud)
    exploded = (rels.select(F.col("identity").alias("rid"), F.explode(F.udf(candidates_of, candidate_type)("doc"))
                            .alias("c"))
                .select("rid", "c.end", "c.rank", "c.cid"))
    best = (exploded.join(elements, exploded.cid == elements.eid)
            .groupBy("rid", "end")
            .agg(F.min(F.struct("rank", "eid", "qn", "etype", "esource")).alias("m"))
            .groupBy("rid")
            .agg(F.collect_list(F.struct("end", "m.eid", "m.qn", "m.etype", "m.esource")).alias("matches")))
    joined = rels.join(best, rels.identity == best.rid, "left").select("doc", "matches")
    rels.count()  # materialise the read before the join's writes start
    counts = joined.rdd.mapPartitions(lambda rows: _write_partition(rows, solr, page_size)).collect()
    rels.unpersist()
    return (sum(c[0] for c in counts), sum(c[1] for c in counts), sum(c[2] for c in counts))

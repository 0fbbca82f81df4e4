"""`navd link --spark`: the linker's matching as a PySpark join, for large backlogs.

Always a full pass. Steps: the unlinked relations and the non-stub elements are exported with
cursorMark scans to JSON lines in a temporary directory; Spark explodes each relation's unlinked
endpoints into candidate identities with the same pure function the incremental linker uses
(`relink.endpoint_candidates`), joins them with the element identities, keeps the best-ranked
match per endpoint, and each partition writes its adds and deletes with the same
`plan_page`/`write_result` (adds, then deletes by id). So the result equals the incremental
linker's on the same data; the watermark moves as after a full pass.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from navd.config import SolrConfig
from navd.index.client import SolrIndex, batches
from navd.logs import get_logger

from .linker import Linker, LinkReport, plan_page, write_result
from .relink import ELEMENT_FIELDS, Target

log = get_logger("navd.linker")

_EXPORT_FILE_ROWS = 200_000


def _export(docs: Iterator[dict[str, Any]], directory: Path, line: Any) -> int:
    """JSON lines, several files so Spark reads them in parallel."""
    directory.mkdir(parents=True)
    count = 0
    for number, chunk in enumerate(batches(docs, _EXPORT_FILE_ROWS)):
        with open(directory / f"part-{number:05d}.json", "wb") as out:
            out.write(b"\n".join(orjson.dumps(line(doc)) for doc in chunk) + b"\n")
        count += len(chunk)
    return count


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
               fs_aliases: Mapping[str, str] | None = None, master: str = "local[*]",
               state_id: str = "linker", page_size: int = 2000, workdir: Path | None = None) -> LinkReport:
    """A full link pass run as a Spark job; see the module docstring."""
    from pyspark.sql import SparkSession, functions as F  # noqa: PLC0415 - heavy, only for --spark
    from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType  # noqa: PLC0415

    clock = time.monotonic()
    aliases = dict(fs_aliases or {})
    linker = Linker(index, cluster=cluster, default_fs=default_fs, fs_aliases=aliases, state_id=state_id)
    started, _last = linker.prepare()
    solr = index.config
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="navd-link-", dir=workdir) as tmp:
        rel_dir, el_dir = Path(tmp) / "relations", Path(tmp) / "elements"
        total = _export(index.scan("relations", "*:*", filters=["unlinked:true"], page_size=5000), rel_dir,
                        lambda d: {"identity": d["identity"], "doc": orjson.dumps(d).decode()})
        _export(index.scan("elements", "*:*", fl=ELEMENT_FIELDS, filters=["-prop_knownFrom:*"], page_size=5000),
                el_dir, lambda d: {"eid": d["identity"], "qn": d["qualifiedName"], "etype": d["type"],
                                   "esource": d["sourceType"]})
        spark = (SparkSession.builder.master(master).appName("navd-link")
                 .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "8")
                 .getOrCreate())
        try:
            examined, linked, still = _job(spark, F, ArrayType, IntegerType, StringType, StructField, StructType,
                                           rel_dir, el_dir, cluster, default_fs, aliases, solr, page_size)
        finally:
            spark.stop()
    if examined != total:  # every exported relation is planned exactly once
        log.warning("spark link examined a different number of relations than exported",
                    exported=total, examined=examined)
    report = LinkReport(examined, linked, still, True, round(time.monotonic() - clock, 3))
    linker.finish(started, report)
    log.info("spark link pass done", **report.as_dict())
    return report


def _job(spark: Any, F: Any, ArrayType: Any, IntegerType: Any, StringType: Any, StructField: Any,  # noqa: N803
         StructType: Any, rel_dir: Path, el_dir: Path, cluster: str, default_fs: str,
         aliases: dict[str, str], solr: SolrConfig, page_size: int) -> tuple[int, int, int]:
    candidate_type = ArrayType(StructType([StructField("end", IntegerType()), StructField("rank", IntegerType()),
                                           StructField("cid", StringType())]))

    def candidates_of(doc: str) -> list[tuple[int, int, str]]:
        # Imported on the executor: the same pure functions as the incremental linker.
        from navd.linker.aliases import AliasRules  # noqa: PLC0415
        from navd.linker.relink import endpoint_candidates  # noqa: PLC0415
        rules = AliasRules(cluster=cluster, default_fs=default_fs, fs_aliases=aliases)
        return [(end, rank, cid) for end, ids in endpoint_candidates(orjson.loads(doc), rules).items()
                for rank, cid in enumerate(ids)]

    rels = spark.read.schema("identity string, doc string").json(str(rel_dir))
    elements = spark.read.schema("eid string, qn string, etype string, esource string").json(str(el_dir))
    exploded = (rels.select(F.col("identity").alias("rid"), F.explode(F.udf(candidates_of, candidate_type)("doc"))
                            .alias("c"))
                .select("rid", "c.end", "c.rank", "c.cid"))
    best = (exploded.join(elements, exploded.cid == elements.eid)
            .groupBy("rid", "end")
            .agg(F.min(F.struct("rank", "eid", "qn", "etype", "esource")).alias("m"))
            .groupBy("rid")
            .agg(F.collect_list(F.struct("end", "m.eid", "m.qn", "m.etype", "m.esource")).alias("matches")))
    joined = rels.join(best, rels.identity == best.rid, "left").select("doc", "matches")
    counts = joined.rdd.mapPartitions(lambda rows: _write_partition(rows, solr, page_size)).collect()
    return (sum(c[0] for c in counts), sum(c[1] for c in counts), sum(c[2] for c in counts))

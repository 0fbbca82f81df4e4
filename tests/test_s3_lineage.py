"""S3 across sources: a real PySpark job writes and reads `s3a://` through Hadoop's S3A connector
(hadoop-aws, the version of PySpark's Hadoop, from Maven Central) on the dev S3 server; the
Spark extractor reads its event log, the S3 extractor lists the bucket, the linker joins them:
the job's lineage reaches the objects listed. A Hive table located on S3 (`s3://`, as EMR spells
it) gets its LOGICAL_PHYSICAL to the listed directory, and `navd unused` shows its size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from navd.extractors.hms.records import Column, TableInfo, table_records
from navd.extractors.s3.client import S3Credentials, make_client
from navd.extractors.s3.extractor import S3Extractor
from navd.extractors.s3.settings import S3Config
from navd.extractors.spark.extractor import SparkExtractor
from navd.index.client import IndexWriter, SolrIndex
from navd.linker.linker import Linker
from navd.model import SourceType, identity
from navd.solr.server import EmbeddedSolr
from navd_devstack.s3 import DevS3, hadoop_aws_jars
from navd.extractors import run_pass
from conftest import solr_section

NAVD = str(Path(sys.executable).parent / "navd")
#: a directory whose name needs encoding on the wire and in a URI
WRITTEN = "out dir/x%y+z ü"


@dataclass(frozen=True)
class Pipeline:
    bucket: str
    cluster: str
    env: dict[str, str]

    def navd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([NAVD, *args], env=self.env, capture_output=True, text=True, timeout=240, check=False)


def write(index: SolrIndex, records: object) -> None:
    writer = IndexWriter(index)
    try:
        for record in records:  # type: ignore[attr-defined]
            writer.write(record)
    finally:
        assert writer.close()


def run_job(s3: DevS3, bucket: str, events: Path, tmp: Path) -> None:
    conf = {**s3.spark_conf(), "spark.jars": ",".join(str(j) for j in hadoop_aws_jars())}
    script = textwrap.dedent(f"""
        import json, sys
        from pyspark.sql import SparkSession
        builder = (SparkSession.builder.master("local[1]").appName("s3_lineage_job")
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", {events.as_uri()!r})
                   .config("spark.eventLog.compress", "false")
                   .config("spark.sql.warehouse.dir", {(tmp / 'warehouse').as_uri()!r}))
        for key, value in json.loads(sys.argv[1]).items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        written = "s3a://{bucket}/{WRITTEN}"
        spark.range(50).selectExpr("id as k", "id * 2 as v").coalesce(2).write.parquet(written)
        spark.read.parquet(written).selectExpr("k", "v + 1 as w").write.parquet("s3a://{bucket}/derived")
        spark.stop()
    """)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    ran = subprocess.run([sys.executable, "-c", script, json.dumps(conf)], cwd=tmp, env=env, capture_output=True,
                         text=True, timeout=900, check=False)
    assert ran.returncode == 0, ran.stderr[-4000:]


@pytest.fixture(scope="module")
def pipeline(s3_server: DevS3, index: SolrIndex, solr_server: EmbeddedSolr,
             tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    tmp = tmp_path_factory.mktemp("s3-lineage")
    cluster = "s" + os.urandom(4).hex()
    bucket = f"navd-lineage-{cluster}"
    s3_server.client().create_bucket(Bucket=bucket)
    events = tmp / "events"
    events.mkdir()
    run_job(s3_server, bucket, events, tmp)
    spark = SparkExtractor(cluster=cluster, directories=[str(events)], state_dir=tmp / "spark-state",
                           default_fs="hdfs://nameservice1")
    write(index, spark.extract())
    settings = S3Config(roots=(f"s3a://{bucket}",), endpoint_url=s3_server.endpoint_url, path_style=True)
    client, counter = make_client(settings, S3Credentials(*s3_server.credentials()))
    lister = S3Extractor(client, index, roots=settings.parsed_roots, state_dir=tmp / "s3-state", counter=counter)
    writer = IndexWriter(index)
    try:
        run_pass(lister, writer)
    finally:
        assert writer.close()
        lister.close()
    # Tables over what the job wrote, as the metastore describes EXTERNAL tables on S3: `scores`
    # the job read back, `derived` nothing read.
    for name, location in (("scores", f"s3://{bucket}/{WRITTEN}"), ("derived", f"s3n://{bucket}/derived/")):
        table = TableInfo(database=f"{cluster}_db", name=name, table_type="EXTERNAL", owner="alice",
                          columns=(Column("k", "bigint", None, 0), Column("v", "bigint", None, 1)), location=location)
        write(index, table_records(table, cluster, "hdfs://nameservice1"))
    for core in ("elements", "relations"):
        index.commit(core)
    Linker(index, cluster=cluster, state_id=f"linker-{cluster}").link()
    for core in ("elements", "relations"):
        index.commit(core)
    config = tmp / "navd.toml"
    config.write_text(f'[cluster]\nname = "{cluster}"\n{solr_section(solr_server)}[logging]\nformat = "json"\n')
    return Pipeline(bucket, cluster, {**os.environ, "NAVD_CONFIG": str(config)})


def listed_files(index: SolrIndex, directory: str) -> dict[str, int]:
    return {d["qualifiedName"]: int(d["size"]) for d in index.scan(
        "elements", "*:*", filters=[f'parentId:"{identity(SourceType.S3, directory)}"', "type:FILE", "deleted:false"],
        fl="qualifiedName,size")}


def test_the_jobs_lineage_reaches_the_objects_the_s3_extractor_listed(pipeline: Pipeline, index: SolrIndex) -> None:
    written, derived = f"s3a://{pipeline.bucket}/{WRITTEN}", f"s3a://{pipeline.bucket}/derived"
    parts = listed_files(index, written)
    assert parts and all(name.startswith(written + "/part-") or name.endswith("/_SUCCESS") for name in parts), parts
    assert any(size > 0 for size in parts.values())
    # asked with s3:// (one object, three spellings): upstream of the derived data is what the job wrote
    shown = pipeline.navd("lineage", f"s3://{pipeline.bucket}/derived", "--direction", "upstream", "--format", "json")
    assert shown.returncode == 0, shown.stderr[-2000:]
    graph = json.loads(shown.stdout)
    nodes = {n["qualifiedName"]: n for n in graph["nodes"]}
    assert nodes[derived]["sourceType"] == "S3" and nodes[written]["sourceType"] == "S3", nodes
    assert "unlinked" not in nodes[written] and "unlinked" not in nodes[derived]
    # the node is the S3 extractor's directory, not a stub: its children are the listed part files
    [element] = index.get("elements", [nodes[written]["id"]])
    assert element["type"] == "DIRECTORY" and "knownFrom" not in element.get("properties", "")
    assert element["identity"] == identity(SourceType.S3, written)


def test_hive_tables_on_s3_have_their_directories_and_unused_shows_their_size(pipeline: Pipeline,
                                                                             index: SolrIndex) -> None:
    for name, directory in (("scores", WRITTEN), ("derived", "derived")):
        table = f"{pipeline.cluster}_db.{name}@{pipeline.cluster}"
        [relation] = list(index.scan("relations", "*:*", filters=[
            "type:LOGICAL_PHYSICAL", f'endpoint1Id:"{identity(SourceType.HIVE, table)}"']))
        assert relation["endpoint2Id"] == identity(SourceType.S3, f"s3a://{pipeline.bucket}/{directory}")
        assert relation["unlinked"] is False, relation
    shown = pipeline.navd("unused", "--database", f"{pipeline.cluster}_db", "--days", "30", "--format", "json")
    assert shown.returncode == 0, shown.stderr[-2000:]
    # the job read `scores` through its directory; nothing read `derived`
    [unused] = [json.loads(line) for line in shown.stdout.splitlines()]
    assert unused["table"] == f"{pipeline.cluster}_db.derived@{pipeline.cluster}" and unused["owner"] == "alice"
    assert unused["size"] == sum(listed_files(index, f"s3a://{pipeline.bucket}/derived").values()) > 0

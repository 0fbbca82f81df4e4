"""The Oozie extractor's links checked against real YARN applications: a PySpark job runs on the
dev YARN (spark-submit --master yarn), an Oozie Spark action naming its application (the golden
response of tests/fixtures/oozie with the real id) is written beside what the YARN and Spark
extractors wrote, and the linker joins them: from the workflow's action, lineage with
operations goes through the YARN application and the Spark run to the data it wrote, and from
the data it climbs back to the workflow."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hdfs import Client

from navd.extractors.oozie.records import parse_workflow, workflow_records
from navd.index.client import IndexWriter, SolrIndex
from navd.model import SourceType, identity
from navd.solr.server import EmbeddedSolr
from navd_devstack.hadoop import DevHdfs
from navd_devstack.yarn import DevYarn
from conftest import solr_section
from test_yarn_extractor import rm_apps, submit

FIXTURES = Path(__file__).parent / "fixtures" / "oozie"
RUN = "0000001-140324163709596-oozie-chit-W"


def test_an_oozie_action_leads_to_the_yarn_application_and_the_data_it_wrote(
        navd: Any, yarn: DevYarn, hdfs: DevHdfs, hdfs_client: Client, solr_server: EmbeddedSolr,
        index: SolrIndex, unique: str, tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    output = f"/{unique}/out/daily_sales"
    name = f"{unique}_oozie_spark"
    ran = submit(yarn, hdfs, events, name, f"""
        spark.range(10).selectExpr("id % 3 as k").groupBy("k").count().write.parquet({hdfs.default_fs + output!r})
        spark.stop()
    """)
    assert ran.returncode == 0, ran.stderr[-3000:]
    application = rm_apps(yarn)[name]["id"]

    # The Spark action of the golden workflow started this application (the launcher id stays the
    # documented one: no such application exists here, its link stays unlinked).
    body = json.loads((FIXTURES / "workflow_spark_hive.json").read_text(encoding="utf-8"))
    body["id"] = RUN.replace("chit", unique[:8])
    for action in body["actions"]:
        action["id"] = action["id"].replace(RUN, body["id"])
        if action["name"] == "aggregate":
            action["externalChildIDs"] = application
    writer = IndexWriter(index)
    try:
        for record in workflow_records(parse_workflow(body)):
            writer.write(record)
    finally:
        assert writer.close()

    config = tmp_path / "navd.toml"
    config.write_text(f'[cluster]\nname = "{unique}"\n{solr_section(solr_server)}[logging]\nformat = "json"\n'
                      f'[yarn]\nurls = ["{yarn.rm_url}"]\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp_path / "spark-state"}"\n')
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(tmp_path / "state")}
    for command in (("extract", "yarn"), ("extract", "spark", "--once"), ("link",)):
        done = navd(*command, env=env)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    index.commit("relations")

    action = f"oozie://{body['id']}@aggregate"
    links = {doc["endpoint1QualifiedName"]: doc for doc in index.scan(
        "relations", "type:LOGICAL_PHYSICAL", fl="endpoint1QualifiedName,endpoint1Id,unlinked",
        filters=[f"endpoint2Id:{identity(SourceType.OOZIE, action)}"])}
    real = links[f"yarn://{application}"]
    assert real["unlinked"] is False and real["endpoint1Id"] == identity(SourceType.YARN, f"yarn://{application}")
    assert links["yarn://application_1395703212345_0007"]["unlinked"] is True  # the documented launcher id

    lineage = navd("lineage", action, "--operations", "--direction", "downstream", "--format", "json", env=env)
    assert lineage.returncode == 0, lineage.stderr[-2000:]
    names = {node["qualifiedName"] for node in json.loads(lineage.stdout)["nodes"]}
    assert {f"yarn://{application}", f"spark://{application}/1", f"{hdfs.default_fs}{output}"} <= names, names

    # and from the data back: the workflow that produced it, through the Spark run and its application
    upstream = navd("lineage", f"{hdfs.default_fs}{output}", "--operations", "--direction", "upstream",
                    "--format", "json", env=env)
    assert upstream.returncode == 0, upstream.stderr[-2000:]
    names = {node["qualifiedName"] for node in json.loads(upstream.stdout)["nodes"]}
    assert {f"spark://{application}/1", f"yarn://{application}", action, f"oozie://{body['id']}",
            "oozie://workflow/daily-sales"} <= names, names

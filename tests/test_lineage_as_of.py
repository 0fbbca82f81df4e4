"""Lineage as of a moment, each dataset's latest run, and what changed between two moments, end
to end: a pipeline over days in impalad's lineage log (controlled timestamps) read by the real
lineage-log extractor into the session Solr, the table drop as the metastore extractor records
it; asked through `navd lineage` and /api/lineage (the rules themselves: tests/test_lineage_rules.py)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from conftest import NavdRunner, write_navd_config
from lineage_logs import impala_line
from navd.config import ClusterConfig, DaemonConfig, NavdConfig, SolrConfig
from navd.extractors.hive_lineage.extractor import LineageLogExtractor
from navd.extractors.impala.lineage import FILE_PREFIX, parse_impala
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Deletion, Element, ElementType, SourceType, hive_qualified_name
from navd.server.app import create_app
from navd.solr.server import EmbeddedSolr
from test_lineage_across_sources import run_job

#: the pipeline's days: day 1 and day 2 `b` is written from `a`; day 3 the job reads `c`; day 4
#: `a` is dropped
DAY = tuple(datetime(2026, 10, d, 8, tzinfo=UTC) for d in range(1, 6))
RUN_SECONDS = 90
#: the tables' create times: `c` made on day 3 for the rewritten job
CREATED = {"a": DAY[0] - timedelta(days=30), "b": DAY[0] - timedelta(days=30), "c": DAY[2] - timedelta(hours=1)}


def noon(day: int) -> str:
    return DAY[day - 1].replace(hour=12).isoformat()


def _insert(db: str, source: str, day: int) -> dict[str, Any]:
    """impalad's lineage graph of `INSERT INTO b SELECT x FROM <source>` run on `day`."""
    return {"queryText": f"insert into {db}.b select x from {db}.{source}", "operationType": "QUERY",
            "hash": f"{source}0000000000000000000000000000000"[:32], "user": "etl",
            "timestamp": int(DAY[day - 1].timestamp()),
            "edges": [{"sources": [1], "targets": [0], "edgeType": "PROJECTION"}],
            "vertices": [{"id": 0, "vertexType": "COLUMN", "vertexId": f"{db}.b.y",
                          "metadata": {"tableName": f"{db}.b", "tableType": "hive", "tableCreateTime": 1}},
                         {"id": 1, "vertexType": "COLUMN", "vertexId": f"{db}.{source}.x",
                          "metadata": {"tableName": f"{db}.{source}", "tableType": "hive", "tableCreateTime": 1}}]}


@dataclasses.dataclass(frozen=True)
class Pipeline:
    cluster: str
    db: str

    def table(self, name: str) -> str:
        return hive_qualified_name(self.cluster, self.db, name)


@pytest.fixture(scope="module")
def pipeline(index: SolrIndex, tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    tmp = tmp_path_factory.mktemp("as_of")
    cluster, db = f"asof{tmp.name[-6:].replace('_', '')}", "sales"
    logs = tmp / "lineage"
    logs.mkdir()
    lines = [impala_line(_insert(db, source, day), query_id=f"q{day}:1",
                         end_time=int(DAY[day - 1].timestamp()) + RUN_SECONDS)
             for day, source in ((1, "a"), (2, "a"), (3, "c"))]
    (logs / f"{FILE_PREFIX}1790000000000").write_text("\n".join(lines) + "\n")
    extractor = LineageLogExtractor(name="impala", cluster=cluster, patterns=[str(logs / f"{FILE_PREFIX}*")],
                                    state_dir=tmp / "state", cursor_file="c.json", parse=parse_impala,
                                    multi_line=False, what="Impala lineage log", key_by="path")
    writer = IndexWriter(index)
    writer.write_all(extractor.extract())
    # the tables as the metastore extractor describes them (with their create times), and the drop of `a`
    tables = {name: Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(cluster, db, name), name=name,
                            created=created) for name, created in CREATED.items()}
    writer.write_all([*tables.values(), Deletion(tables["a"].ref, DAY[3])])
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)
    return Pipeline(cluster, db)


def _upstream(navd: NavdRunner, pipeline: Pipeline, *options: str) -> set[tuple[str, str]]:
    result = navd("lineage", pipeline.table("b"), "--direction", "upstream", "--format", "json", *options)
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    names = {n["id"]: n["qualifiedName"].split(".")[-1].split("@")[0] for n in graph["nodes"]}
    return {(names[e["source"]], names[e["target"]]) for e in graph["edges"]}


@pytest.mark.parametrize(("options", "expected"), [
    ((), {("c", "b")}),  # now: `a` is dropped
    (("--deleted",), {("a", "b"), ("c", "b")}),
    (("--as-of", "2026-10-01"), set()),  # before the first run (a date: midnight UTC)
    (("--as-of", noon(1)), {("a", "b")}),
    (("--as-of", noon(3)), {("a", "b"), ("c", "b")}),  # `a` not yet dropped
    (("--as-of", noon(5)), {("c", "b")}),
    (("--as-of", noon(3), "--latest"), {("c", "b")}),
    (("--as-of", noon(2), "--latest"), {("a", "b")}),
    (("--latest", "--deleted"), {("c", "b")}),
])
def test_as_of_and_latest(navd: NavdRunner, pipeline: Pipeline, options: tuple[str, ...],
                          expected: set[tuple[str, str]]) -> None:
    assert _upstream(navd, pipeline, *options) == expected


def test_as_of_shows_a_table_dropped_later_alive(navd: NavdRunner, pipeline: Pipeline) -> None:
    result = navd("lineage", pipeline.table("b"), "--direction", "upstream", "--as-of", noon(3))
    assert result.returncode == 0, result.stderr
    assert f"{pipeline.table('a')} (HIVE TABLE) -> {pipeline.table('b')} (HIVE TABLE)" in result.stdout
    assert "[deleted]" not in result.stdout


def test_changes(navd: NavdRunner, pipeline: Pipeline) -> None:
    result = navd("lineage", pipeline.table("b"), "--direction", "upstream", "--changes", "--since", noon(2),
                  "--until", noon(5), "--format", "json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    qualified = {n["id"]: n["qualifiedName"] for n in found["nodes"]}
    assert [(qualified[e["source"]], qualified[e["target"]]) for e in found["appeared"]] == [
        (pipeline.table("c"), pipeline.table("b"))]
    assert [(qualified[e["source"]], qualified[e["target"]]) for e in found["disappeared"]] == [
        (pipeline.table("a"), pipeline.table("b"))]
    [appeared], [gone] = found["appeared"], found["disappeared"]
    assert appeared["firstSeen"] == DAY[2].isoformat()
    assert [e["qualifiedName"] for e in appeared["executions"]] == [f"impala://{pipeline.cluster}/execution/q3:1"]
    assert gone["lastSeen"] == (DAY[1] + timedelta(seconds=RUN_SECONDS)).isoformat()
    assert [qualified[n] for n in found["deleted"]] == [pipeline.table("a")]
    assert [qualified[n] for n in found["created"]] == [pipeline.table("c")]
    text = navd("lineage", pipeline.table("b"), "--direction", "upstream", "--changes", "--since", noon(2),
                "--until", noon(5))
    assert f"  + {pipeline.table('c')} -> {pipeline.table('b')}" in text.stdout
    assert f"  - {pipeline.table('a')} -> {pipeline.table('b')}" in text.stdout
    assert f"  deleted {pipeline.table('a')}" in text.stdout
    assert f"  created {pipeline.table('c')}" in text.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--as-of", "last tuesday"), "argument --as-of: 'last tuesday' is not an ISO 8601 time"),
    (("--changes",), "--changes needs --since T1"),
    (("--since", "2026-10-01"), "--since and --until go with --changes"),
    (("--changes", "--since", "2026-10-02", "--until", "2026-10-01"), "--until 2026-10-01T00:00:00+00:00 is before "
                                                                       "--since 2026-10-02T00:00:00+00:00"),
])
def test_bad_times_are_one_line(navd: NavdRunner, pipeline: Pipeline, args: tuple[str, ...], message: str) -> None:
    result = navd("lineage", pipeline.table("b"), *args)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr, result.stderr


@pytest.fixture(scope="module")
def client(index: SolrIndex, solr_config: SolrConfig, tmp_path_factory: pytest.TempPathFactory,
           pipeline: Pipeline) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("as_of_api")
    config = dataclasses.replace(NavdConfig(), solr=solr_config, daemon=DaemonConfig(state_dir=str(tmp / "state")),
                                 cluster=ClusterConfig(name=pipeline.cluster))  # Marquez's hive://<cluster> names
    with TestClient(create_app(config, index), base_url="http://127.0.0.1") as served:
        yield served


def test_api(client: TestClient, pipeline: Pipeline) -> None:
    graph = client.get("/api/lineage", params={"entity": pipeline.table("b"), "direction": "upstream",
                                               "as_of": noon(1)})
    assert graph.status_code == 200, graph.text
    names = {n["id"]: n["qualifiedName"] for n in graph.json()["nodes"]}
    assert {(names[e["source"]], names[e["target"]]) for e in graph.json()["edges"]} == {
        (pipeline.table("a"), pipeline.table("b"))}
    latest = client.get("/api/lineage", params={"entity": pipeline.table("b"), "direction": "upstream",
                                                "latest": "true", "deleted": "true"}).json()
    assert len(latest["edges"]) == 1
    found = client.get("/api/lineage/changes", params={"entity": pipeline.table("b"), "direction": "upstream",
                                                       "since": noon(2), "until": noon(5)})
    assert found.status_code == 200, found.text
    assert len(found.json()["appeared"]) == 1 and len(found.json()["disappeared"]) == 1
    for path, params, parameter in [("/api/lineage", {"as_of": "yesterday"}, "as_of"),
                                    ("/api/lineage/changes", {"since": "soon"}, "since"),
                                    ("/api/lineage/changes", {"since": noon(2), "until": "x"}, "until"),
                                    ("/api/lineage/changes", {"since": noon(3), "until": noon(2)}, "until")]:
        refused = client.get(path, params={"entity": pipeline.table("b"), **params})
        assert refused.status_code == 400, refused.text
        assert refused.json()["parameter"] == parameter and refused.json()["error"].startswith(f"{parameter}: ")


def test_an_as_of_older_than_the_history_kept_says_so(navd: NavdRunner, pipeline: Pipeline) -> None:
    old = navd("lineage", pipeline.table("b"), "--as-of", "1900-01-01", "--format", "json")
    assert old.returncode == 0, old.stderr
    note = json.loads(old.stdout)["note"]
    assert note.startswith("as of 1900-01-01T00:00:00+00:00 is before the oldest execution kept (")
    kept = navd("lineage", pipeline.table("b"), "--as-of", noon(1), "--format", "json")
    assert "note" not in json.loads(kept.stdout)


def test_the_catalogue_apis_take_as_of(client: TestClient, pipeline: Pipeline) -> None:
    """Atlas', Navigator's and Marquez's lineage routes take navd's `asOf` (their own APIs have no
    such parameter): the same graph as /api/lineage's as_of, in their shapes."""
    def atlas_tables(**params: str) -> set[str]:
        answer = client.get("/api/atlas/v2/lineage/uniqueAttribute/type/hive_table",
                            params={"attr:qualifiedName": pipeline.table("b"), "direction": "INPUT", **params})
        assert answer.status_code == 200, answer.text
        return {e["attributes"]["qualifiedName"] for e in answer.json()["guidEntityMap"].values()
                if e["typeName"] == "hive_table"}

    def navigator_tables(**params: str) -> set[str]:
        answer = client.get("/api/v9/lineage", params={"entityIds": pipeline.table("b"), **params})
        assert answer.status_code == 200, answer.text
        return {e["qualifiedName"] for e in answer.json()["entities"] if e["type"] == "TABLE"}

    def marquez_datasets(**params: str) -> set[str]:
        answer = client.get("/api/v1/lineage", params={"nodeId": f"dataset:hive://{pipeline.cluster}:{pipeline.db}.b",
                                                       **params})
        assert answer.status_code == 200, answer.text
        return {f"{n['data']['name'].rsplit('.', 1)[-1]}" for n in answer.json()["graph"] if n["type"] == "DATASET"}

    a, b, c = (pipeline.table(t) for t in "abc")
    assert atlas_tables(asOf=noon(1)) == navigator_tables(asOf=noon(1)) == {a, b}
    assert atlas_tables(asOf=noon(3)) == navigator_tables(asOf=noon(3)) == {a, b, c}
    assert c in atlas_tables() and c in navigator_tables()
    assert marquez_datasets(asOf=noon(1)) == {"a", "b"} and marquez_datasets(asOf=noon(3)) == {"a", "b", "c"}
    for path, params in [("/api/atlas/v2/lineage/uniqueAttribute/type/hive_table",
                          {"attr:qualifiedName": pipeline.table("b")}),
                         ("/api/v9/lineage", {"entityIds": pipeline.table("b")}),
                         ("/api/v1/lineage", {"nodeId": f"dataset:hive://{pipeline.cluster}:{pipeline.db}.b"})]:
        refused = client.get(path, params={**params, "asOf": "last tuesday"})
        assert refused.status_code == 400, refused.text
        assert refused.json()["parameter"] == "asOf" and refused.json()["error"].startswith("asOf: ")


def test_a_pyspark_job_rewritten_to_read_another_input(navd: NavdRunner, solr_server: EmbeddedSolr,
                                                        index: SolrIndex, tmp_path: Path) -> None:
    """A real PySpark application writes `b` from `a`, then (the job rewritten) from `c`; its event
    log through navd's Spark extractor: the execution times Spark recorded decide the graph at
    each moment the job noted between the writes."""
    base = tmp_path / "data"
    moments = tmp_path / "moments.json"
    events = run_job("rewritten_job", f"""
        import json, time
        base = {base.as_uri()!r}
        for name in ("a", "c"):
            spark.createDataFrame([(1,)], "x long").write.parquet(base + "/" + name)
        time.sleep(1.5)
        before = time.time()
        time.sleep(1.5)
        spark.read.parquet(base + "/a").write.mode("overwrite").parquet(base + "/b")
        time.sleep(1.5)
        between = time.time()
        time.sleep(1.5)
        spark.read.parquet(base + "/c").write.mode("overwrite").parquet(base + "/b")
        time.sleep(1.5)
        after = time.time()
        open({str(moments)!r}, "w").write(json.dumps({{"before": before, "between": between, "after": after}}))
    """, None, tmp_path)
    at = {name: datetime.fromtimestamp(t, UTC).isoformat() for name, t in json.loads(moments.read_text()).items()}
    cluster = f"asofspark{tmp_path.name[-6:].replace('_', '')}"
    config = write_navd_config(tmp_path / "navd.toml", solr_server, cluster=cluster, body=(
        f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp_path / "spark-state"}"\n'))
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    extracted = navd("extract", "spark", "--once", env=env)
    assert extracted.returncode == 0, extracted.stderr[-2000:]

    def upstream(*options: str) -> set[str]:
        result = navd("lineage", (base / "b").as_uri(), "--direction", "upstream", "--format", "json", *options,
                      env=env)
        assert result.returncode == 0, result.stderr
        graph = json.loads(result.stdout)
        names = {n["id"]: n["qualifiedName"].rstrip("/").rsplit("/", 1)[-1] for n in graph["nodes"]}
        return {names[e["source"]] for e in graph["edges"] if names[e["target"]] == "b"}

    assert upstream("--as-of", at["before"]) == set()
    assert upstream("--as-of", at["between"]) == {"a"}
    assert upstream("--as-of", at["after"]) == upstream() == {"a", "c"}
    assert upstream("--latest") == upstream("--as-of", at["after"], "--latest") == {"c"}
    assert upstream("--as-of", at["between"], "--latest") == {"a"}
    changes = navd("lineage", (base / "b").as_uri(), "--direction", "upstream", "--changes",
                   "--since", at["between"], "--format", "json", env=env)
    assert changes.returncode == 0, changes.stderr
    found = json.loads(changes.stdout)
    named = {n["id"]: n["qualifiedName"].rstrip("/").rsplit("/", 1)[-1] for n in found["nodes"]}
    # both graphs by the latest run: the rewritten job's new input appeared, its old one is gone
    assert [named[e["source"]] for e in found["appeared"]] == ["c"], found
    assert [named[e["source"]] for e in found["disappeared"]] == ["a"], found


#: the PySpark pipeline over catalog tables: `b` written from `a`, the job rewritten to read `c`,
#: `a` dropped, then created again and written from `c`; the moments noted between the steps
_FIRST_JOB = """
    import json, time
    def note(name):
        time.sleep(1.5)
        moments[name] = time.time()
        time.sleep(1.5)
    moments = {{}}
    spark.sql("CREATE DATABASE sales LOCATION '{database}'")
    for name in ("a", "c"):
        spark.createDataFrame([(1,)], "x long").write.saveAsTable("sales." + name)
    spark.sql("CREATE TABLE sales.b (x BIGINT) USING parquet")
    note("before")
    spark.sql("INSERT INTO sales.b SELECT x FROM sales.a")
    note("read_a")
    spark.sql("INSERT INTO sales.b SELECT x FROM sales.c")
    note("read_c")
    spark.sql("DROP TABLE sales.a")
    note("dropped")
"""
_SECOND_JOB = """
    spark.sql("CREATE TABLE sales.a (x BIGINT) USING parquet")
    spark.sql("INSERT INTO sales.a SELECT x FROM sales.c")
    note("recreated")
    open({moments!r}, "w").write(json.dumps(moments))
"""
#: the second application's catalog knows nothing of the first's (Spark's in-memory catalog):
#: the database and `c` registered again over their files (a CREATE of a name not dropped: no
#: re-creation)
_SECOND_APP_PROLOGUE = """
    import json, time
    def note(name):
        time.sleep(1.5)
        moments[name] = time.time()
        time.sleep(1.5)
    moments = json.loads(open({moments!r}).read())
    time.sleep(1.5)
    spark.sql("CREATE DATABASE sales LOCATION '{database}'")
    spark.sql("CREATE TABLE sales.c USING parquet LOCATION '{database}/c'")
"""


@pytest.mark.parametrize("one_application", [True, False], ids=["same-application", "later-application"])
def test_a_table_spark_dropped_and_created_again(navd: NavdRunner, solr_server: EmbeddedSolr, index: SolrIndex,
                                                  tmp_path: Path,
                                                  one_application: bool) -> None:
    """Real PySpark over catalog tables: INSERT from `a` into `b`; the job rewritten to read `c`;
    `a` dropped, created again (by the same application or a later one) and written from `c`.
    The Spark extractor keeps the dropped incarnation's lineage under `sales.a~<create time>`,
    deleted as of the DROP, and `sales.a` is alive with the new incarnation's lineage only."""
    database, moments = tmp_path / "warehouse" / "sales.db", tmp_path / "moments.json"
    conf = {"spark.sql.warehouse.dir": (tmp_path / "warehouse").as_uri()}
    values = {"database": database.as_uri(), "moments": str(moments)}
    first, second = _FIRST_JOB.format(**values), _SECOND_JOB.format(**values)
    runs = [tmp_path / "first", tmp_path / "second"]
    for run in runs:
        run.mkdir()
    if one_application:
        logs = [run_job("pipeline_of_b", first + second, None, runs[0], conf)]
    else:
        first += f"    open({str(moments)!r}, 'w').write(json.dumps(moments))\n"
        logs = [run_job("pipeline_of_b", first, None, runs[0], conf),
                run_job("recreate_a", _SECOND_APP_PROLOGUE.format(**values) + second, None, runs[1], conf)]
    at = {name: datetime.fromtimestamp(t, UTC).isoformat() for name, t in json.loads(moments.read_text()).items()}
    cluster = f"recreate{tmp_path.name[-6:].replace('_', '')}"
    config = write_navd_config(tmp_path / "navd.toml", solr_server, cluster=cluster, body=(
        f'[spark]\nevent_log_dirs = {json.dumps([str(d) for d in logs])}\n'
        f'state_dir = "{tmp_path / "spark-state"}"\n'))
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    extracted = navd("extract", "spark", "--once", env=env)
    assert extracted.returncode == 0, extracted.stderr[-2000:]

    def graph(table: str, *options: str, direction: str = "upstream") -> dict[str, Any]:
        result = navd("lineage", hive_qualified_name(cluster, "sales", table), "--direction", direction,
                      "--format", "json", *options, env=env)
        assert result.returncode == 0, result.stderr
        return dict(json.loads(result.stdout))

    def named(node: dict[str, Any]) -> str:
        """`a`, `c`, ...; `a~` for the dropped incarnation of `a`; `[deleted]` when flagged so."""
        table = node["qualifiedName"].split("@")[0].split(".", 1)[1]
        return table.split("~")[0] + ("~" if "~" in table else "") + (" [deleted]" if node["deleted"] else "")

    def edges(table: str, *options: str, direction: str = "upstream") -> set[tuple[str, str]]:
        found = graph(table, *options, direction=direction)
        names = {n["id"]: named(n) for n in found["nodes"]}
        return {(names[e["source"]], names[e["target"]]) for e in found["edges"]}

    old = {("a~", "b")}
    assert edges("b", "--as-of", at["before"]) == set()
    assert edges("b", "--as-of", at["read_a"]) == edges("b", "--as-of", at["read_a"], "--latest") == old
    assert edges("b", "--as-of", at["read_c"]) == old | {("c", "b")}
    assert edges("b", "--as-of", at["read_c"], "--latest") == {("c", "b")}
    # between the DROP and the CREATE: `a` is gone, shown only with --deleted, flagged deleted
    assert edges("b", "--as-of", at["dropped"]) == {("c", "b")}
    assert edges("b", "--as-of", at["dropped"], "--deleted") == {("a~ [deleted]", "b"), ("c", "b")}
    assert edges("b", "--as-of", at["read_c"], "--deleted") == old | {("c", "b")}  # alive before the DROP
    for moment in (("--as-of", at["recreated"]), ()):
        assert edges("b", *moment) == edges("b", *moment, "--latest") == {("c", "b")}
        assert edges("b", *moment, "--deleted") == {("a~ [deleted]", "b"), ("c", "b")}
        # the name is the new incarnation: alive, its lineage only the write from `c`
        assert edges("a", *moment) == edges("a", *moment, "--latest") == {("c", "a")}
        assert edges("a", *moment, direction="downstream") == set()
    now = graph("a")
    root = {n["id"]: n for n in now["nodes"]}[now["root"]]
    assert root["qualifiedName"] == hive_qualified_name(cluster, "sales", "a") and not root["deleted"]
    # its column the new incarnation's lineage writes is alive again with it (the DROP flagged
    # it: the first application's lineage named it), so the column edge shows without --deleted
    columns = graph("a", "--columns")
    shown = {n["id"]: n["qualifiedName"].split("@")[0] for n in columns["nodes"]}
    assert {(shown[e["source"]], shown[e["target"]]) for e in columns["edges"]
            if shown[e["target"]].count(".") == 2} == {("sales.c.x", "sales.a.x")}
    # the dropped incarnation keeps its lineage, answerable as of a moment before the DROP
    incarnation = next(n["qualifiedName"] for n in graph("b", "--deleted")["nodes"] if "~" in n["qualifiedName"])
    assert incarnation.startswith("sales.a~") and incarnation.endswith(f"@{cluster}")
    before_drop = navd("lineage", incarnation, "--direction", "downstream", "--as-of", at["read_c"], "--format",
                       "json", env=env)
    assert before_drop.returncode == 0, before_drop.stderr
    shown = json.loads(before_drop.stdout)
    names = {n["id"]: named(n) for n in shown["nodes"]}
    assert {(names[e["source"]], names[e["target"]]) for e in shown["edges"]} == old

    changes = navd("lineage", hive_qualified_name(cluster, "sales", "b"), "--direction", "upstream", "--changes",
                   "--since", at["read_a"], "--until", at["recreated"], "--format", "json", env=env)
    assert changes.returncode == 0, changes.stderr
    found = json.loads(changes.stdout)
    qualified = {n["id"]: n["qualifiedName"] for n in found["nodes"]}
    table = {n["id"]: named(n) for n in found["nodes"]}
    assert [(table[e["source"]], table[e["target"]]) for e in found["appeared"]] == [("c", "b")]
    # the gone edge's nodes as they stood at `since`: the incarnation alive then
    assert [(table[e["source"]], table[e["target"]]) for e in found["disappeared"]] == [("a~", "b")]
    assert [qualified[n] for n in found["deleted"]] == [incarnation]
    of_a = navd("lineage", hive_qualified_name(cluster, "sales", "a"), "--direction", "upstream", "--changes",
                "--since", at["dropped"], "--until", at["recreated"], "--format", "json", env=env)
    assert of_a.returncode == 0, of_a.stderr
    found = json.loads(of_a.stdout)
    table = {n["id"]: named(n) for n in found["nodes"]}
    assert [(table[e["source"]], table[e["target"]]) for e in found["appeared"]] == [("c", "a")]
    assert found["disappeared"] == []
    assert [table[n] for n in found["created"]] == ["a"]

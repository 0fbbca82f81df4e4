"""One property-based target per parser of outside input (tests/fuzz/README.md): structured
mutations of the captured inputs in tests/fixtures. Property: no exception but the parser's
named bad-input error (or the documented logged skip inside it), no hang, and every record's
qualified name non-empty and normalised (fuzzing.check_records)."""

from __future__ import annotations

import functools
import json
import tomllib
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from fuzz.fuzzing import (check_records, fuzz_settings, json_text, mutated_json, mutated_lines, query_texts, run_target,
                          string_variant)
from lineage_logs import HIVE, hive_golden, impala_cases
from navd.config import load_config, parse_config
from navd.errors import ConfigError
from navd.extractors.hdfs.records import BadEntry, entry_from_webhdfs, records_for
from navd.extractors.hive_lineage.graph import BadLineage, records as lineage_records
from navd.extractors.hive_lineage.hook import RecordAssembler, parse_hive
from navd.extractors.hms.records import BadTable, table_info, table_records
from navd.extractors.impala.lineage import parse_impala
from navd.extractors.spark.plan.model import PlanError
from navd.extractors.spark.plan.tables import plan_io
from navd.extractors.spark.records import process_lines, stubs_for
from navd.extractors.yarn.records import BadApplication, application_records, parse_application
from navd.index.documents import oversized_term
from navd.index.query_syntax import QuerySyntaxError, parse, write
from navd.names import InvalidName
from navd.openlineage.limits import EventLimits, EventTooLarge, check_names, check_size
from navd.openlineage.mapping import MappingSettings, map_event
from navd.openlineage.schema import InvalidEvent, check_event
from spark_fixtures import CLUSTER, DEFAULT_FS, fixture_lines

FIXTURES = Path(__file__).parent.parent / "fixtures"
REPO = Path(__file__).parent.parent.parent

# --- Spark event logs --------------------------------------------------------------------------

#: small captured applications covering SQL, catalog, view, path, streaming and Delta events
SPARK_CASES = ("catalog_ops", "ctas_expression", "streaming_writes", "dotted_columns", "create_view",
               "dataframe_paths", "delta_commands", "path_columns", "insert_overwrite_join")
#: per-task events carry no lineage: left out so an input is one application's interesting lines
_NOISE = ("TaskStart", "TaskEnd", "StageSubmitted", "StageCompleted", "BlockManager", "ExecutorAdded",
          "ExecutorRemoved", "TaskGettingResult", "ExecutorMetricsUpdate", "StageExecutorMetrics",
          "SQLAdaptiveSQLMetricUpdates", "DriverAccumUpdates")


@functools.cache
def spark_lines(case: str) -> list[str]:
    return [line for line in fixture_lines(case) if not any(f"Listener{noise}" in line for noise in _NOISE)]


@st.composite
def spark_logs(draw: st.DrawFn) -> list[str]:
    return draw(mutated_lines(spark_lines(draw(st.sampled_from(SPARK_CASES))), mutated_json))


@fuzz_settings()
@given(spark_logs())
def test_spark_event_log_lines(lines: list[str]) -> None:
    # No named error here: the processor turns a bad line or event into a logged skip (`_skip`).
    def parse() -> None:
        _, emitted = process_lines(lines, cluster=CLUSTER, default_fs=DEFAULT_FS, source_name="fuzz")
        check_records(emitted)
        check_records(list(stubs_for(emitted, None)))

    run_target("spark event-log lines", (), parse)


@functools.cache
def spark_plans() -> list[tuple[Any, str]]:
    plans = []
    for case in SPARK_CASES:
        for line in spark_lines(case):
            event = json.loads(line)
            if event["Event"].endswith("SparkListenerSQLExecutionStart"):
                plans.append((event.get("sparkPlanInfo"), event.get("physicalPlanDescription") or ""))
    return plans


@st.composite
def plan_texts(draw: st.DrawFn, description: str) -> str:
    lines = description.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(0, len(lines) - 1)))
        op = draw(st.integers(0, 4))
        if not lines:
            break
        if op == 0:
            lines[at] = draw(string_variant(lines[at]))
        elif op == 1:
            del lines[at]
        elif op == 2:
            lines.insert(at, lines[at])
        elif op == 3:
            lines[at] = lines[at][:draw(st.integers(0, len(lines[at])))]
        else:
            lines = lines[:at]
    return "\n".join(lines)


@st.composite
def spark_plan_inputs(draw: st.DrawFn) -> tuple[Any, str]:
    info, description = draw(st.sampled_from(spark_plans()))
    if draw(st.booleans()):
        info = draw(mutated_json(info))
    if draw(st.booleans()):
        description = draw(plan_texts(description))
    return info, description


@fuzz_settings()
@given(spark_plan_inputs())
def test_spark_plan_text(plan: tuple[Any, str]) -> None:
    info, description = plan
    # PlanError (a ValueError) is the plan parser's named error; ApplicationProcessor logs it as a skip.
    run_target("spark plan text", (PlanError,), lambda: plan_io(info, description))


# --- WebHDFS and YARN JSON ---------------------------------------------------------------------

#: a FileStatus as Hadoop 3.5.0's WebHDFS returned it (tests/test_hdfs_records.py), and a directory's
FILE_STATUS = {"accessTime": 1795327009013, "blockSize": 134217728, "childrenNum": 0, "fileId": 16388,
               "group": "supergroup", "length": 3, "modificationTime": 1795327009590, "owner": "root",
               "pathSuffix": "a b ü.csv", "permission": "644", "replication": 1, "storagePolicy": 0, "type": "FILE"}
DIRECTORY_STATUS = {**FILE_STATUS, "pathSuffix": "warehouse", "type": "DIRECTORY", "length": 0, "permission": "1777",
                    "childrenNum": 3, "blockSize": 0, "replication": 0}


@fuzz_settings()
@given(st.sampled_from(("/", "/data", "/data/a b", "/user/ü/x")), st.sampled_from((FILE_STATUS, DIRECTORY_STATUS))
       .flatmap(mutated_json), st.sampled_from((DEFAULT_FS, "hdfs://NN:8020/", "file:///")))
def test_webhdfs_file_status(directory: str, status: Any, default_fs: str) -> None:
    def parse() -> None:
        check_records(list(records_for(entry_from_webhdfs(directory, status), default_fs)))

    # BadEntry: the extractor's "HDFS entry skipped" (it catches nothing else)
    run_target("webhdfs FileStatus", (BadEntry,), parse)


#: an application as the dev YARN's ResourceManager listed it (tests/test_yarn_records.py)
YARN_APP = {"id": "application_1795342371737_0002", "user": "ann", "name": "daily sales ü", "queue": "root.etl",
            "state": "FINISHED", "finalStatus": "SUCCEEDED", "applicationType": "SPARK",
            "startedTime": 1795342393489, "finishedTime": 1795342436278, "elapsedTime": 42789,
            "trackingUrl": "http://rm:8088/proxy/application_1795342371737_0002/", "diagnostics": ""}


@fuzz_settings()
@given(mutated_json(YARN_APP))
def test_yarn_application_json(raw: Any) -> None:
    def parse() -> None:
        check_records(list(application_records(parse_application(raw))))

    run_target("yarn application JSON", (BadApplication,), parse)


# --- HiveServer2 rows --------------------------------------------------------------------------

@functools.cache
def describe_outputs() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((FIXTURES / "hms").glob("describe_*.json"))]


@st.composite
def describe_rows(draw: st.DrawFn) -> tuple[str, str, Any]:
    captured = draw(st.sampled_from(describe_outputs()))
    database, table = captured["database"], captured["table"]
    if draw(st.integers(0, 4)) == 0:
        database = draw(string_variant(database))
    if draw(st.integers(0, 4)) == 0:
        table = draw(string_variant(table))
    return database, table, draw(mutated_json(captured["rows"]))


@fuzz_settings()
@given(describe_rows())
def test_hiveserver2_describe_rows(captured: tuple[str, str, Any]) -> None:
    database, table, rows = captured

    def parse() -> None:
        check_records(list(table_records(table_info(database, table, rows), CLUSTER, DEFAULT_FS)))

    # BadTable and InvalidName: the extractor's "Hive table skipped"
    run_target("hiveserver2 DESCRIBE rows", (BadTable, InvalidName), parse)


# --- Hive and Impala lineage JSON ---------------------------------------------------------------

@functools.cache
def hive_log_lines() -> list[str]:
    return [*(HIVE / "hiveserver2-lineage.log").read_text().splitlines(),
            *(HIVE / "hiveserver2-lineage-pretty.log").read_text().splitlines()]


@st.composite
def hive_lineage_records(draw: st.DrawFn) -> list[str]:
    """Whole records (mutated, as JSON text) and log lines around them, fed through the hook's
    assembler as the extractor feeds a log file."""
    if draw(st.booleans()):
        return draw(mutated_lines(hive_log_lines(), mutated_json))
    record = draw(mutated_json(draw(st.sampled_from(sorted(hive_golden().values(), key=lambda r: r["queryText"])))))
    return ["2023-11-14T22:13:25,422 INFO  [HiveServer2-Background-Pool: Thread-52] hooks.LineageLogger: "
            + draw(json_text(record)).replace("\n", " ")]


@fuzz_settings()
@given(hive_lineage_records())
def test_hive_lineage_json(lines: list[str]) -> None:
    def parse() -> None:
        assembler = RecordAssembler(max_record_bytes=1 << 20)
        for line in lines:
            record = assembler.feed(line)
            if record is None:
                continue
            # as LineageLogExtractor._records: not JSON, BadLineage and InvalidName are its logged skips
            try:
                raw = orjson.loads(record)
            except orjson.JSONDecodeError:
                continue
            try:
                check_records(list(lineage_records(parse_hive(raw), cluster=CLUSTER)))
            except (BadLineage, InvalidName):
                continue

    run_target("hive lineage JSON", (), parse)


@fuzz_settings()
@given(st.sampled_from(sorted(impala_cases().values(), key=lambda r: r["queryText"])).flatmap(mutated_json))
def test_impala_lineage_json(raw: Any) -> None:
    def parse() -> None:
        check_records(list(lineage_records(parse_impala(raw), cluster=CLUSTER)))

    run_target("impala lineage JSON", (BadLineage, InvalidName), parse)


# --- OpenLineage events ---------------------------------------------------------------------------

@functools.cache
def openlineage_events() -> list[dict[str, Any]]:
    from openlineage.client.event_v2 import RunState

    from openlineage_events import as_json, job_run

    captured = json.loads((FIXTURES / "openlineage" / "ctas_expression.complete.json").read_text())
    built = as_json(job_run("0190a4e1-0b2c-7d3e-8f40-5a6b7c8d9e0f", "etl.revenue", RunState.COMPLETE,
                            parent=("daily", "0190a4e1-0b2c-7d3e-8f40-5a6b7c8d9e10")))
    return [captured, built]


OPENLINEAGE_SETTINGS = MappingSettings({"hive://metastore:9083": CLUSTER}, CLUSTER)
OPENLINEAGE_LIMITS = EventLimits(10_000, 100_000, 100_000)


@fuzz_settings()
@given(st.tuples(st.sampled_from((0, 1)), st.booleans()).flatmap(
    lambda c: mutated_json(openlineage_events()[c[0]], strings_only=c[1])))
def test_openlineage_events(event: Any) -> None:
    def parse() -> None:
        # the intake's checks, in its order: the counts (413), the schema and the names (400
        # naming the field), then the documents against Solr's term limit
        check_size(event, OPENLINEAGE_LIMITS)
        checked = check_event(event)
        check_names(checked.mappable)
        records = list(map_event(checked.mappable, checked.kind, OPENLINEAGE_SETTINGS).records)
        check_records(records)
        for record in records:
            oversized_term(record)

    # EventTooLarge: 413; InvalidEvent: 400; InvalidName: 400 naming the dataset
    run_target("openlineage events", (EventTooLarge, InvalidEvent, InvalidName), parse)


# --- config files --------------------------------------------------------------------------------

@functools.cache
def config_texts() -> list[str]:
    return [(REPO / "deploy" / "navd.toml").read_text(), (REPO / "deploy" / "navd-server.toml").read_text()]


@fuzz_settings()
@given(st.tuples(st.sampled_from((0, 1)), st.booleans()).flatmap(
    lambda c: mutated_json(tomllib.loads(config_texts()[c[0]]), strings_only=c[1])))
def test_config_tables(raw: Any) -> None:
    run_target("config tables", (ConfigError,), lambda: parse_config(raw, source="fuzz.toml", environ={}))


@st.composite
def config_files(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(config_texts())).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        op = draw(st.integers(0, 3))
        if op == 0:
            lines[at] = draw(string_variant(lines[at]))
        elif op == 1:
            lines.insert(at, lines[at])
        elif op == 2:
            del lines[at]
        else:
            lines[at] = lines[at][:draw(st.integers(0, len(lines[at])))]
    return "\n".join(lines)


@fuzz_settings()
@given(text=config_files())
def test_config_files(text: str, tmp_path_factory: Any) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz-navd.toml"

    def load() -> None:
        try:
            path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
        except UnicodeEncodeError:
            path.write_bytes(text.encode("utf-8", errors="replace"))
        path.chmod(0o600)
        load_config(str(path), environ={})

    run_target("config files", (ConfigError,), load)


# --- Solr query text ----------------------------------------------------------------------------

@fuzz_settings()
@given(query_texts())
def test_lucene_query_syntax(text: str) -> None:
    def parse_and_write() -> None:
        tree = parse(text)
        try:
            write(tree)  # what the parse took is written back unchanged, or navd has a bug
        except QuerySyntaxError as exc:
            raise AssertionError(f"parsed but not written back: {exc}") from None

    run_target("lucene query syntax", (QuerySyntaxError,), parse_and_write)

"""The HMS extractor against a real Spark Thrift Server (HiveServer2) and a real Solr."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyhive import hive
from pyhive.exc import OperationalError
from TCLIService.ttypes import TCloseOperationResp, TStatus, TStatusCode
from thrift.transport.TTransport import TTransportException

from navd.extractors.hms.settings import HiveConfig
from navd.extractors.common.deletions import DeletionsConfig
from navd.extractors.hms.extractor import HmsExtractionError, HmsExtractor, connect
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Deletion, ElementType, EntityRef, SourceType, identity
from navd_devstack.spark_thrift import SparkThriftServer
from navd.extractors import run_pass

CLUSTER = "hmstest"


class CountingCursor:
    """Passes statements through and remembers them: the tests count what the extractor sends."""

    def __init__(self, cursor: Any, log: list[str]) -> None:
        self.cursor, self.log = cursor, log

    def execute(self, sql: str) -> None:
        self.log.append(sql)
        self.cursor.execute(sql)

    def fetchall(self) -> list[Any]:
        return self.cursor.fetchall()

    def close(self) -> None:
        self.cursor.close()


class CountingConnection:
    def __init__(self, connection: Any) -> None:
        self.connection, self.statements = connection, []  # type: ignore[var-annotated]

    def cursor(self) -> CountingCursor:
        return CountingCursor(self.connection.cursor(), self.statements)

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def sql(spark_thrift: SparkThriftServer) -> Iterator[Any]:
    connection = hive.connect("127.0.0.1", spark_thrift.port, username="navd")
    cursor = connection.cursor()

    def run(*statements: str) -> None:
        for statement in statements:
            cursor.execute(statement)

    yield run
    cursor.close()
    connection.close()


@pytest.fixture
def extractor(spark_thrift: SparkThriftServer, index: SolrIndex) -> Iterator[Any]:
    """Makes HMS extractors on their own HiveServer2 sessions and closes each one at teardown.

    An unclosed session is closed by the server when the client's socket goes away, at the same
    time as the `sql` fixture's own CloseSession: the Thrift Server then sometimes drops that
    connection ("TSocket read 0 bytes"). Closing every session in turn keeps teardown ordered.
    """
    made: list[HmsExtractor] = []

    def make(state: Path, db_regex: str, **kwargs: Any) -> tuple[HmsExtractor, CountingConnection]:
        connection = CountingConnection(hive.connect("127.0.0.1", spark_thrift.port, username="navd"))
        made.append(HmsExtractor(connection, index, cluster=CLUSTER, default_fs="hdfs://ns", state_dir=state,
                                 database_regex=db_regex, **kwargs))
        return made[-1], connection

    yield make
    for ex in made:
        ex.close()


def run(ex: HmsExtractor, index: SolrIndex, full: bool = False) -> Any:
    writer = IndexWriter(index)
    report = run_pass(ex, writer, full=full)
    assert writer.close(60)
    index.commit("elements")
    index.commit("relations")
    return report


def doc(index: SolrIndex, qn: str) -> dict[str, Any] | None:
    docs = index.get("elements", [identity("HIVE", qn)])
    return docs[0] if docs else None


def relations(index: SolrIndex, query: str) -> list[dict[str, Any]]:
    return list(index.scan("relations", query))


def qn(*parts: str) -> str:
    return ".".join(parts) + "@" + CLUSTER


def test_full_then_incremental(index: SolrIndex, sql: Any, extractor: Any, unique: str, tmp_path: Path) -> None:
    db = f"{unique}_sales"
    ext_dir = tmp_path / "ext"
    sql(f"CREATE DATABASE {db} COMMENT 'sales data'",
        f"CREATE TABLE {db}.Orders (Id INT COMMENT 'order id', Amount DOUBLE, Region STRING) USING parquet "
        f"PARTITIONED BY (Region) TBLPROPERTIES ('team'='shop')",
        f"INSERT INTO {db}.orders VALUES (1, 2.0, 'eu'), (2, 3.0, 'us')",
        f"CREATE TABLE {db}.ext (a INT, b STRING) USING parquet LOCATION '{ext_dir.as_uri()}'",
        f"CREATE VIEW {db}.big AS SELECT Id, Amount * 2 AS dbl, region FROM {db}.orders WHERE Id > 0",
        f"CREATE VIEW {db}.joined AS SELECT b.id, upper(b.region) AS r FROM {db}.big b JOIN {db}.ext e ON b.id = e.a")
    ex, conn = extractor(tmp_path / "state", f"{unique}_.*")
    report = run(ex, index)
    assert report.complete and report.skipped == 0 and report.tables == 4 and report.tables_described == 4

    database = doc(index, qn(db))
    assert database is not None and database["type"] == "DATABASE"
    orders = doc(index, qn(db, "orders"))
    assert orders is not None and orders["type"] == "TABLE" and orders["originalName"] == "orders"
    assert orders["internalType"] == "MANAGED"
    assert orders["parentId"] == identity("HIVE", qn(db))
    field = doc(index, qn(db, "orders", "id"))
    assert field is not None and field["type"] == "FIELD" and field.get("description") == "order id"
    region = doc(index, qn(db, "orders", "region"))
    assert region is not None and region["dataType"] == "string" and "true" in str(region)  # partitionKey
    for value in ("eu", "us"):
        partition = doc(index, qn(db, "orders") + f"/region={value}")
        assert partition is not None and partition["type"] == "PARTITION"
    ext = doc(index, qn(db, "ext"))
    assert ext is not None and ext["internalType"] == "EXTERNAL"
    physical = relations(index, f"type:LOGICAL_PHYSICAL AND endpoint1Id:{identity('HIVE', qn(db, 'ext'))}")
    assert [r["endpoint2QualifiedName"] for r in physical] == [f"file://{ext_dir}"]
    assert physical[0]["endpoint2Linked"] is False

    big = doc(index, qn(db, "big"))
    assert big is not None and big["type"] == "VIEW" and "Amount * 2" in big["queryText"]
    flows = relations(index, f"type:DATA_FLOW AND endpoint2Id:{identity('HIVE', qn(db, 'big'))}")
    assert [r["endpoint1QualifiedName"] for r in flows] == [qn(db, "orders")]
    dbl = relations(index, f"type:DATA_FLOW AND endpoint2Id:{identity('HIVE', qn(db, 'big', 'dbl'))}")
    assert [(r["endpoint1QualifiedName"], r["dependencyType"]) for r in dbl] == [(qn(db, "orders", "amount"),
                                                                                 "EXPRESSION")]
    assert "* 2" in dbl[0]["expression"]
    joined = relations(index, f"type:DATA_FLOW AND endpoint2Id:{identity('HIVE', qn(db, 'joined'))}")
    assert sorted(r["endpoint1QualifiedName"] for r in joined) == [qn(db, "big"), qn(db, "ext")]
    r_col = relations(index, f"type:DATA_FLOW AND endpoint2Id:{identity('HIVE', qn(db, 'joined', 'r'))}")
    assert [r["endpoint1QualifiedName"] for r in r_col] == [qn(db, "big", "region")]

    # Unchanged metastore: no DESCRIBE FORMATTED, (almost) nothing written.
    conn.statements.clear()
    report = run(ex, index)
    assert not [s for s in conn.statements if s.startswith("DESCRIBE FORMATTED")]
    assert report.tables_unchanged == 4 and report.records == 0 and report.deletions == 0

    # ALTER TABLE ADD COLUMNS: only that table is described again.
    sql(f"ALTER TABLE {db}.ext ADD COLUMNS (c INT)")
    conn.statements.clear()
    report = run(ex, index)
    assert [s for s in conn.statements if s.startswith("DESCRIBE FORMATTED")] == [f"DESCRIBE FORMATTED `{db}`.`ext`"]
    assert doc(index, qn(db, "ext", "c")) is not None

    # A new partition: its table's one SHOW PARTITIONS finds it, no DESCRIBE.
    sql(f"INSERT INTO {db}.orders VALUES (3, 1.0, 'asia')")
    conn.statements.clear()
    run(ex, index)
    assert not [s for s in conn.statements if s.startswith("DESCRIBE FORMATTED")]
    assert doc(index, qn(db, "orders") + "/region=asia") is not None

    # Dropped and re-created with other columns: old column flagged deleted, table live again.
    sql(f"DROP TABLE {db}.ext", f"CREATE TABLE {db}.ext (z STRING) USING parquet")
    report = run(ex, index)
    assert doc(index, qn(db, "ext"))["deleted"] is False  # type: ignore[index]
    assert doc(index, qn(db, "ext", "z"))["deleted"] is False  # type: ignore[index]
    assert doc(index, qn(db, "ext", "a"))["deleted"] is True  # type: ignore[index]

    # A dropped table: it and its columns are flagged deleted.
    sql(f"DROP VIEW {db}.joined")
    run(ex, index)
    assert doc(index, qn(db, "joined"))["deleted"] is True  # type: ignore[index]
    assert doc(index, qn(db, "joined", "r"))["deleted"] is True  # type: ignore[index]
    assert doc(index, qn(db, "big"))["deleted"] is False  # type: ignore[index]

    # Flagged deleted by another source (an old Spark log's DROP read late) though the metastore
    # has it: the next incremental run describes it again and it is live, columns too.
    writer = IndexWriter(index)
    for name in (qn(db, "big"), qn(db, "big", "dbl")):
        writer.write(Deletion(EntityRef(SourceType.HIVE, name, ElementType.TABLE), datetime.now(UTC)))
    assert writer.close(60)
    index.commit("elements")
    assert doc(index, qn(db, "big"))["deleted"] is True  # type: ignore[index]
    conn.statements.clear()
    report = run(ex, index)
    assert [s for s in conn.statements if s.startswith("DESCRIBE FORMATTED")] == [f"DESCRIBE FORMATTED `{db}`.`big`"]
    assert doc(index, qn(db, "big"))["deleted"] is False  # type: ignore[index]
    assert doc(index, qn(db, "big", "dbl"))["deleted"] is False  # type: ignore[index]

    # full=True describes everything again.
    conn.statements.clear()
    report = run(ex, index, full=True)
    assert report.tables_described == 3


def test_dropped_database_and_filters(index: SolrIndex, sql: Any, extractor: Any, unique: str,
                                      tmp_path: Path) -> None:
    keep, drop = f"{unique}_keep", f"{unique}_gone"
    sql(f"CREATE DATABASE {keep}", f"CREATE DATABASE {drop}",
        f"CREATE TABLE {keep}.t1 (a INT) USING parquet", f"CREATE TABLE {keep}.skipme (a INT) USING parquet",
        f"CREATE TABLE {drop}.t2 (b INT) USING parquet")
    ex, _ = extractor(tmp_path / "state", f"{unique}_.*", table_regex="t[0-9]+")
    report = run(ex, index)
    assert report.tables == 2
    assert doc(index, qn(keep, "skipme")) is None and doc(index, qn(drop, "t2", "b")) is not None

    sql(f"DROP DATABASE {drop} CASCADE")
    run(ex, index)
    for name in (qn(drop), qn(drop, "t2"), qn(drop, "t2", "b")):
        assert doc(index, name)["deleted"] is True, name  # type: ignore[index]
    assert doc(index, qn(keep, "t1"))["deleted"] is False  # type: ignore[index]

    # A filter file selects db:table pairs.
    rules = tmp_path / "filter.txt"
    rules.write_text(f"# only skipme\n{keep}:skip.*\n")
    ex2, _ = extractor(tmp_path / "state2", ".*", filter_file=rules)
    report = run(ex2, index)
    assert report.tables == 1 and doc(index, qn(keep, "skipme")) is not None


def test_deletion_fail_safe_refuses_a_mass_drop_and_an_empty_listing(index: SolrIndex, sql: Any, extractor: Any,
                                                                      unique: str, tmp_path: Path) -> None:
    keep, gone = f"{unique}_keep", f"{unique}_gone"
    sql(f"CREATE DATABASE {keep}", f"CREATE DATABASE {gone}",
        f"CREATE TABLE {gone}.t1 (a INT, b INT) USING parquet", f"CREATE TABLE {gone}.t2 (c INT) USING parquet")
    ex, _ = extractor(tmp_path / "state", f"{unique}_.*")
    run(ex, index)
    scope = f"deletions under the selected Hive databases of cluster {CLUSTER} refused"

    sql(f"DROP DATABASE {gone} CASCADE")  # 6 of the 7 elements in scope (86%)
    report = run(ex, index)
    assert report.deletions == 0 and report.deletions_refused == 6
    assert report.refused == (f"{scope}: would flag 6 of 7 indexed entities (86%) deleted, above "
                              "[deletions] max_share_percent = 75; nothing flagged")
    assert doc(index, qn(gone, "t1", "a"))["deleted"] is False  # type: ignore[index]

    allowed, _ = extractor(tmp_path / "state", f"{unique}_.*", deletions=DeletionsConfig(max_share_percent=90))
    report = run(allowed, index)
    assert report.deletions == 6 and report.refused == ""
    assert doc(index, qn(gone, "t1", "a"))["deleted"] is True  # type: ignore[index]

    sql(f"DROP DATABASE {keep}")  # nothing selected is listed any more: an empty listing
    report = run(ex, index)
    assert report.deletions == 0 and report.deletions_refused == 1
    assert report.refused == (f"{scope}: its listing came back empty while 1 entities are indexed under it; "
                              "nothing flagged")
    assert doc(index, qn(keep))["deleted"] is False  # type: ignore[index]


def test_a_hiveserver2_that_stops_answering_fails_the_run_after_the_timeout(
        index: SolrIndex, spark_thrift: SparkThriftServer, unique: str, tmp_path: Path) -> None:
    """The real Thrift Server frozen with SIGSTOP: the kernel still accepts connections and
    nothing answers, as with a server in a long GC. The run must fail, not hang the extractor
    (whose run lock would then block every later HMS run)."""
    config = HiveConfig(enabled=True, host="127.0.0.1", port=spark_thrift.port, timeout_seconds=3.0)
    healthy = HmsExtractor(connect(config), index, cluster=CLUSTER, default_fs="hdfs://ns",
                           state_dir=tmp_path / "healthy", database_regex=f"{unique}_none")
    try:
        assert run(healthy, index).complete  # connect() builds a working transport (auth NONE)
    finally:
        healthy.close()

    pid = spark_thrift.process.running_pid()
    assert pid is not None
    frozen = HmsExtractor(connect(config), index, cluster=CLUSTER, default_fs="hdfs://ns",
                          state_dir=tmp_path / "frozen", database_regex=f"{unique}_none")
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            run(frozen, index)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    os.killpg(os.getpgid(pid), signal.SIGSTOP)
    try:
        worker = threading.Thread(target=attempt, daemon=True)
        worker.start()
        worker.join(120)  # a hang guard far above the 3 s timeout, not a speed check
        assert not worker.is_alive(), "the HMS run hung on a silent HiveServer2"
        with pytest.raises(HmsExtractionError, match=f"cannot connect to HiveServer2 at 127.0.0.1:{spark_thrift.port}"):
            connect(config).close()  # the SASL handshake meets the same silence
    finally:
        os.killpg(os.getpgid(pid), signal.SIGCONT)
    frozen.close()
    assert len(outcome) == 1 and isinstance(outcome[0], HmsExtractionError), outcome
    assert "timeout" in str(outcome[0]) and "nothing flagged deleted" in str(outcome[0])

    recovered = HmsExtractor(connect(config), index, cluster=CLUSTER, default_fs="hdfs://ns",
                             state_dir=tmp_path / "frozen", database_regex=f"{unique}_none")
    try:
        assert run(recovered, index).complete
    finally:
        recovered.close()


class ServerGoneCursor(CountingCursor):
    """The real cursor until HiveServer2 goes away after `answered` statements: then the next
    statement meets a closed socket and PyHive's close raises the CloseOperation response, as in
    a run caught by a HiveServer2 restart. (A real outage hits this order only by chance.)"""

    def __init__(self, cursor: Any, log: list[str], answered: int) -> None:
        super().__init__(cursor, log)
        self.answered = answered

    def execute(self, sql: str) -> None:
        if len(self.log) >= self.answered:
            raise TTransportException(TTransportException.NOT_OPEN, "Could not connect to any of [('127.0.0.1', 1)]")
        super().execute(sql)

    def close(self) -> None:
        super().close()
        raise OperationalError(TCloseOperationResp(status=TStatus(
            statusCode=TStatusCode.ERROR_STATUS, errorMessage="Could not connect to any of [('127.0.0.1', 1)]")))


def test_a_hiveserver2_gone_mid_run_fails_it_in_one_line_even_when_closing_fails_too(
        index: SolrIndex, sql: Any, extractor: Any, unique: str, tmp_path: Path) -> None:
    sql(f"CREATE DATABASE {unique}_gone", f"CREATE TABLE {unique}_gone.t (a INT) USING parquet")
    ex, conn = extractor(tmp_path / "state", f"{unique}_gone")
    real = conn.connection
    conn.cursor = lambda: ServerGoneCursor(real.cursor(), conn.statements, answered=1)  # type: ignore[method-assign]
    with pytest.raises(HmsExtractionError) as failed:
        run(ex, index)
    message = str(failed.value)
    assert "Could not connect" in message and "nothing flagged deleted" in message, message
    assert "TCloseOperationResp" not in message and "\n" not in message, message
    assert conn.statements == ["SHOW DATABASES"]

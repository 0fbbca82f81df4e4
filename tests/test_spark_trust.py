"""The trust model of event-log directories (docs/sources/spark.md, "Trust model of event-log directories").

Anyone who can write the event-log directory can put a log there, so a DROP in a log flags only
what that log's owner may speak for: never a table the HMS extractor (a real one, over the real
Thrift Server) or another owner's log knows. Logs are real captured ones, edited the way a forger
would; owners are real file owners (the tests run as root and chown to `nobody`).
"""

from __future__ import annotations

import io
import json
import os
import pwd
import re
from pathlib import Path
from typing import Any

import pytest
from pyhive import hive

from navd.extractors import run_pass
from navd.extractors.hms.extractor import HmsExtractor
from navd.extractors.spark.extractor import PassReport, SparkExtractor
from navd.index.client import IndexWriter, SolrIndex
from navd.model import identity
from navd_devstack.spark_thrift import SparkThriftServer

FIXTURES = Path(__file__).parent / "fixtures" / "spark_events"
#: create_view.jsonl's application: creates vw.src and vw.dim, writes them, and in execution 12
#: drops and re-creates the view vw.v_plain (the DropTableEvent a forger edits)
APP_ID = "local-1795416200239"
DROP = re.compile(r'(catalog\.DropTable(?:Pre)?Event","database":)"vw","name":"v_plain"')


def nobody() -> tuple[int, int]:
    """The uid and gid of `nobody`: files chowned to it are another user's. Not skipped when the
    tests do not run as root: chown then fails the test (the test machines run as root)."""
    user = pwd.getpwnam("nobody")
    return user.pw_uid, user.pw_gid


def write_log(events: Path, *, drop: tuple[str, str] | None = None, app_id: str = APP_ID,
              owner: tuple[int, int] | None = None) -> Path:
    """create_view.jsonl under its application id (or `app_id`), its DropTableEvent edited to
    drop `drop` (database, table), owned by `owner` (uid, gid; default: the test's user)."""
    text = (FIXTURES / "create_view.jsonl").read_text(encoding="utf-8")
    if drop is not None:
        text, edited = DROP.subn(rf'\1"{drop[0]}","name":"{drop[1]}"', text)
        assert edited == 2  # the PreEvent and the event
    text = text.replace(APP_ID, app_id)
    events.mkdir(parents=True, exist_ok=True)
    path = events / app_id
    path.write_text(text, encoding="utf-8")
    if owner is not None:
        os.chown(path, *owner)
    return path


def spark_pass(index: SolrIndex, events: Path, state: Path, cluster: str, **kwargs: Any) -> PassReport:
    extractor = SparkExtractor(cluster=cluster, directories=[str(events)], state_dir=state, index=index, **kwargs)
    writer = IndexWriter(index)
    report = run_pass(extractor, writer)
    assert writer.close(60)
    for core in ("elements", "relations"):
        index.commit(core)
    return report


def element(index: SolrIndex, source_type: str, qualified_name: str) -> dict[str, Any] | None:
    docs = index.get("elements", [identity(source_type, qualified_name)])
    return docs[0] if docs else None


def properties(doc: dict[str, Any] | None) -> dict[str, str]:
    assert doc is not None
    return json.loads(doc.get("properties") or "{}")


def logged(stream: io.StringIO, level: str) -> list[dict[str, Any]]:
    return [r for r in (json.loads(line) for line in stream.getvalue().splitlines() if line.strip())
            if r["level"] == level]


def warnings(stream: io.StringIO) -> list[dict[str, Any]]:
    return logged(stream, "warning")


def test_a_drop_flags_the_logs_own_table_and_the_owner_is_recorded(
        index: SolrIndex, tmp_path: Path, unique: str, log_stream: io.StringIO) -> None:
    write_log(tmp_path / "events", drop=("vw", "src"))  # a table this application created and wrote
    report = spark_pass(index, tmp_path / "events", tmp_path / "state", unique)
    assert report.warnings == 0 and warnings(log_stream) == []
    src = element(index, "HIVE", f"vw.src@{unique}")
    assert src is not None and src["deleted"] is True
    me = pwd.getpwuid(os.geteuid()).pw_name
    assert properties(src)["logOwner"] == me  # the stub says whose log first named it
    run = element(index, "SPARK", f"spark://{APP_ID}/1")
    assert properties(run)["logOwner"] == me
    executions = list(index.scan("elements", f'parentId:"{run["identity"]}"', fl="properties"))  # type: ignore[index]
    assert executions and {properties(e)["logOwner"] for e in executions} == {me}


def test_a_drop_in_another_owners_log_does_not_flag_a_table_a_log_of_its_owner_named(
        index: SolrIndex, tmp_path: Path, unique: str, log_stream: io.StringIO) -> None:
    events = tmp_path / "events"
    write_log(events)  # root's job: vw.src first named by root's log
    spark_pass(index, events, tmp_path / "state", unique)
    # A forged log by another local user, under another application id, drops vw.src. It also
    # "creates" vw.src first, as the real log does: claiming to have created it gains nothing.
    write_log(events, drop=("vw", "src"), app_id="local-1795416200999", owner=nobody())
    report = spark_pass(index, events, tmp_path / "state", unique)

    src = element(index, "HIVE", f"vw.src@{unique}")
    assert src is not None and src["deleted"] is False
    (warned,) = warnings(log_stream)
    assert warned["entity"] == f"vw.src@{unique}" and warned["log_owner"] == "nobody"
    assert warned["known_from"] == f"first named by a log of {pwd.getpwuid(os.geteuid()).pw_name}"
    assert report.warnings == 1
    # What it produced says who wrote it, whatever user the log claims.
    forged = element(index, "SPARK", "spark://local-1795416200999/1")
    assert properties(forged)["logOwner"] == "nobody"


def test_allowed_log_owners_skips_a_log_of_another_owner_once(
        index: SolrIndex, tmp_path: Path, unique: str, log_stream: io.StringIO) -> None:
    events = tmp_path / "events"
    path = write_log(events, owner=nobody())
    me = pwd.getpwuid(os.geteuid()).pw_name
    extractor = SparkExtractor(cluster=unique, directories=[str(events)], state_dir=tmp_path / "state",
                               index=index, allowed_log_owners=[me])
    writer = IndexWriter(index)
    first = run_pass(extractor, writer)
    again = run_pass(extractor, writer)
    assert (first.records, first.lines, first.warnings) == (0, 0, 1)
    assert (again.records, again.warnings) == (0, 0)
    (warned,) = warnings(log_stream)
    assert warned["event"] == "event log skipped: its owner is not in [spark] allowed_log_owners"
    assert (warned["owner"], warned["file"]) == ("nobody", str(path))
    os.chown(path, os.geteuid(), os.getegid())  # the admin vouches for it
    assert run_pass(extractor, writer).records > 0
    assert writer.close(60)


@pytest.fixture
def hms_table(spark_thrift: SparkThriftServer, index: SolrIndex, unique: str, tmp_path: Path) -> str:
    """A real table created through the Thrift Server and indexed by the HMS extractor: its
    qualified name."""
    db = f"{unique}_trust"
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        cursor.execute(f"CREATE DATABASE {db}")
        cursor.execute(f"CREATE TABLE {db}.orders (id INT, amount DOUBLE) USING parquet")
        cursor.close()
    connection = hive.connect("127.0.0.1", spark_thrift.port, username="navd")
    extractor = HmsExtractor(connection, index, cluster=unique, default_fs="hdfs://ns",
                             state_dir=tmp_path / "hms-state", database_regex=db)
    try:
        writer = IndexWriter(index)
        assert run_pass(extractor, writer).complete
        assert writer.close(60)
    finally:
        extractor.close()
    index.commit("elements")
    return f"{db}.orders@{unique}"


def test_a_drop_in_a_log_does_not_flag_a_table_the_hms_extractor_indexed(
        index: SolrIndex, hms_table: str, tmp_path: Path, unique: str, log_stream: io.StringIO) -> None:
    table = element(index, "HIVE", hms_table)
    assert table is not None and table["deleted"] is False and "knownFrom" not in properties(table)
    db, name = hms_table.split("@")[0].split(".")
    write_log(tmp_path / "events", drop=(db, name))  # the log's own owner, but HMS knows the table
    report = spark_pass(index, tmp_path / "events", tmp_path / "state", unique)
    table = element(index, "HIVE", hms_table)
    assert table is not None and table["deleted"] is False
    # The everyday DROP of a table the HMS extractor knows: left to it, said at info, no warning.
    assert warnings(log_stream) == [] and report.warnings == 0
    (left,) = [r for r in logged(log_stream, "info") if r["event"].startswith("DROP in an event log")]
    assert (left["entity"], left["known_from"]) == (hms_table, "indexed by the hive extractor")
    column = element(index, "HIVE", hms_table.replace("@", ".id@"))
    assert column is not None and column["deleted"] is False

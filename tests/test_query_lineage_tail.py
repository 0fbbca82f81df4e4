"""`navd extract hive-lineage|impala --once` against the session Solr: each run is a new process
(a restart), so these are the restart tests; plus log4j's rotation, impalad's new files and its
retention deleting old ones, and partial last lines (a compact line, a pretty-printed record)
never parsed until complete. Nothing lost, nothing read twice."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lineage_logs import HIVE, impala_cases, impala_line
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from conftest import NavdRunner, write_navd_config

CTAS = "create table lineage_test_tbl as select int_col, tinyint_col from functional.alltypes"
VIEW = "create view test_view_lineage as select id from functional.alltypestiny"


def _config(tmp_path: Path, solr_server: EmbeddedSolr, cluster: str, body: str) -> dict[str, str]:
    config = write_navd_config(tmp_path / "navd.toml", solr_server, body, cluster=cluster, state=tmp_path / "state")
    return {**os.environ, "NAVD_CONFIG": str(config)}


def _extract(navd: NavdRunner, env: dict[str, str], source: str) -> str:
    result = navd("extract", source, "--once", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    [summary] = [line for line in result.stdout.splitlines() if line.startswith(f"{source}:")]
    return summary


def _executions(index: SolrIndex, cluster: str, scheme: str) -> list[str]:
    index.commit("elements")
    docs = index.scan("elements", f'qualifiedName:{scheme}\\://{cluster}/execution/*', fl="qualifiedName")
    return sorted(str(d["qualifiedName"]) for d in docs)


def _hive_lines() -> list[str]:
    return (HIVE / "hiveserver2-lineage.log").read_text().splitlines(keepends=True)


def test_hive_log_restart_rotation_and_partial_lines(navd: NavdRunner, solr_server: EmbeddedSolr, index: SolrIndex,
                                                     unique: str, tmp_path: Path) -> None:
    logs = tmp_path / "hive"
    logs.mkdir()
    live = logs / "lineage.log"
    env = _config(tmp_path, solr_server, unique, f'[hive_lineage]\nlog_paths = ["{logs}/lineage.log*"]\n')
    first, noise, second = _hive_lines()[1], _hive_lines()[2], _hive_lines()[3]
    live.write_text(first + noise + second[:200])  # the second record is still being written
    assert _extract(navd, env, "hive-lineage").startswith("hive-lineage: 2 new lines, 1 queries")
    src2 = f"hive://{unique}/execution/87921246fb098d44c05e0ccd9ecb0676/1700000000/hive"
    dest = f"hive://{unique}/execution/d3d379a20e27c1618037bd6b8e840b13/1700000060/etl"
    assert _executions(index, unique, "hive") == [src2]
    # the line completes, then log4j rolls the file over and opens a new one
    with live.open("a") as fh:
        fh.write(second[200:])
    live.rename(logs / "lineage.log.1")
    # Hive 1.x's form of the first query, run again later
    pretty = (HIVE / "hiveserver2-lineage-pretty.log").read_text().replace("1700000000", "1700000300")
    cut = pretty.index('"edges"')
    live.write_text(pretty[:cut])  # a pretty-printed record half written
    summary = _extract(navd, env, "hive-lineage")
    # the rest of the renamed file (its inode's cursor goes on) and the new file's lines so far
    assert summary.startswith("hive-lineage: ") and " 1 queries" in summary, summary
    assert _executions(index, unique, "hive") == sorted([src2, dest])
    with live.open("a") as fh:
        fh.write(pretty[cut:])
    assert " 1 queries" in _extract(navd, env, "hive-lineage")
    old = f"hive://{unique}/execution/87921246fb098d44c05e0ccd9ecb0676/1700000300/hive"
    assert _executions(index, unique, "hive") == sorted([src2, dest, old])
    # an old rotation deleted: its cursor goes; nothing else is read again
    (logs / "lineage.log.1").unlink()
    assert _extract(navd, env, "hive-lineage").startswith("hive-lineage: 0 new lines, 0 queries")
    state = json.loads((tmp_path / "state" / "hive_lineage" / "hive-lineage-cursors.json").read_text())
    assert [c["path"] for c in state["cursors"]] == [str(live)]


def test_impala_new_files_retention_and_restart(navd: NavdRunner, solr_server: EmbeddedSolr, index: SolrIndex,
                                                unique: str, tmp_path: Path) -> None:
    logs = tmp_path / "impala"
    logs.mkdir()
    env = _config(tmp_path, solr_server, unique, f'[impala]\nlineage_dirs = ["{logs}"]\n')
    cases = impala_cases()
    one = logs / "impala_lineage_log_1.0-1700000000000"
    lines = [impala_line(cases[CTAS], query_id=f"{unique}:1"), impala_line(cases[VIEW], query_id=f"{unique}:2")]
    one.write_text(lines[0] + "\n" + lines[1][:50])
    (logs / "impala_profile_log_1.1-1700000000000").write_text("not lineage\n")  # impalad's other logs
    assert _extract(navd, env, "impala").startswith("impala: 1 new lines, 1 queries")
    with one.open("a") as fh:
        fh.write(lines[1][50:] + "\n")
    # impalad starts a new file after --max_lineage_log_file_size queries
    two = logs / "impala_lineage_log_1.0-1700000100000"
    two.write_text(impala_line(cases[CTAS], query_id=f"{unique}:3", timestamp=1700000100) + "\n")
    assert _extract(navd, env, "impala").startswith("impala: 2 new lines, 2 queries")
    assert _executions(index, unique, "impala") == [f"impala://{unique}/execution/{unique}:{n}" for n in (1, 2, 3)]
    one.unlink()  # --max_lineage_log_files retention
    assert _extract(navd, env, "impala").startswith("impala: 0 new lines, 0 queries")
    index.commit("elements")
    [doc] = index.scan("elements", f'qualifiedName:"impala://{unique}/execution/{unique}:3"',
                       fl="queryText,principal,sourceType")
    assert (doc["queryText"], doc["principal"], doc["sourceType"]) == (CTAS, "dummy_user", "IMPALA")


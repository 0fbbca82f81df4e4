"""The Hive and Impala lineage fixtures (tests/fixtures/hive_lineage, impala_lineage) as the
tests use them: Hive's golden records, Impala's planner-test cases, and impalad's log line form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
HIVE = FIXTURES / "hive_lineage"
IMPALA = FIXTURES / "impala_lineage"


def hive_golden() -> dict[str, dict[str, Any]]:
    """The LineageLogger records of lineage2.q.out's excerpt by query text (test mode)."""
    records = [json.loads(line) for line in (HIVE / "lineage2.q.out.excerpt").read_text().splitlines()
               if line.startswith('{"version"')]
    return {r["queryText"]: r for r in records}


def impala_cases() -> dict[str, dict[str, Any]]:
    """The `---- LINEAGE` graphs of lineage.test's excerpt by query text."""
    cases: dict[str, dict[str, Any]] = {}
    for block in (IMPALA / "lineage.test.excerpt").read_text().split("====\n"):
        _, marker, graph = block.partition("---- LINEAGE\n")
        if marker:
            parsed = json.loads(graph)
            cases[parsed["queryText"]] = parsed
    return cases


def impala_line(case: dict[str, Any], *, query_id: str, end_time: int | None = None,
                **override: Any) -> str:
    """One line of `impala_lineage_log_1.0-<n>` for a planner-test graph, written as impalad's
    LineageUtil::TLineageToJSON writes it: its key order, compact, `endTime` after `timestamp`
    (the planner test has none: `end_time`, else the start), the planner's "0:0" query id replaced."""
    graph = {**case, **override}
    out: dict[str, Any] = {"queryText": graph["queryText"], "operationType": graph["operationType"],
                           "queryId": query_id, "hash": graph["hash"], "user": graph["user"],
                           "timestamp": graph["timestamp"],
                           "endTime": end_time if end_time is not None else graph["timestamp"],
                           "edges": [{"sources": e["sources"], "targets": e["targets"], "edgeType": e["edgeType"]}
                                     for e in graph["edges"]],
                           "vertices": []}
    for vertex in graph["vertices"]:
        written: dict[str, Any] = {"id": vertex["id"], "vertexType": "COLUMN", "vertexId": vertex["vertexId"]}
        if "metadata" in vertex:
            meta = vertex["metadata"]
            written["metadata"] = {"tableName": meta["tableName"], "tableType": meta["tableType"],
                                   "tableCreateTime": meta["tableCreateTime"]}
        out["vertices"].append(written)
    if graph.get("tableLocation"):
        out["tableLocation"] = graph["tableLocation"]
    return json.dumps(out, separators=(",", ":"))

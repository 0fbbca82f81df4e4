"""docs/spark-conformance.md cannot rot: every test it names is collected by pytest, every name
it says navd matches occurs in the Spark extractor's source, every node name it lists is read
there (or, for a pass-through row, occurs in a captured event log), and every
`columnLineageSkipped` reason it quotes is one the extractor sets.

Pure: reads files and asks pytest (in a subprocess, `--collect-only`) for the test ids."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "spark-conformance.md"
SOURCES = (*sorted((ROOT / "extractors" / "spark" / "plan").glob("*.py")),
           *(ROOT / "extractors" / "spark" / f"{name}.py"
             for name in ("events", "executions", "datasets", "application_run", "replaced_views")))
FIXTURES = ROOT / "tests" / "fixtures" / "spark_events"
_CODE = re.compile(r"`([^`]+)`")
_TEST_ID = re.compile(r"^tests/test_\w+\.py::\w+(\[.*\])?$")


@dataclasses.dataclass(frozen=True)
class Row:
    table: str          # the heading above the table
    cells: dict[str, str]   # header (lower case) -> cell text


def doc_rows(text: str) -> list[Row]:
    """The rows of every Markdown table of the page, each keyed by its table's headers."""
    rows: list[Row] = []
    heading, headers = "", None
    for line in text.splitlines():
        if line.startswith("#"):
            heading, headers = line.lstrip("#").strip(), None
            continue
        if not line.startswith("|"):
            headers = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if headers is None:
            headers = [c.lower() for c in cells]
        elif not all(set(c) <= set("-: ") for c in cells):
            assert len(cells) == len(headers), f"{heading}: row with {len(cells)} cells, not {len(headers)}: {line}"
            rows.append(Row(heading, dict(zip(headers, cells))))
    return rows


def code(cell: str) -> list[str]:
    return _CODE.findall(cell)


def node_names(cell: str) -> list[str]:
    """The node names of a "Spark node" cell: its code spans outside parentheses (inside them,
    `df.coalesce(n)` or `PersistedView` say what the node is for; brackets inside a code span
    do not count)."""
    outside, depth = [], 0
    for index, part in enumerate(cell.split("`")):
        if index % 2:   # a code span
            if depth == 0:
                outside.append(part)
            continue
        depth = max(0, depth + part.count("(") - part.count(")"))
    return outside


@cache
def collected_ids() -> frozenset[str]:
    files = sorted({i.split("::")[0] for row in doc_rows(DOC.read_text(encoding="utf-8"))
                    for i in code(row.cells.get("covered by", "")) if _TEST_ID.match(i)})
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return frozenset(line.strip() for line in result.stdout.splitlines() if "::" in line)


@cache
def source_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in SOURCES)


@cache
def fixture_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.jsonl")))


ROWS = doc_rows(DOC.read_text(encoding="utf-8"))


def _id(row: Row) -> str:
    first = next(iter(row.cells.values()))
    return f"{row.table[:20]}: {first[:60]}"


def test_the_page_has_its_tables() -> None:
    tables = {row.table for row in ROWS}
    assert {"Physical nodes (sparkPlanInfo and physicalPlanDescription)", "Write commands",
            "Catalog and view commands", "Logical nodes read for views (and CTAS sources)", "Known gaps",
            "`columnLineageSkipped` reasons"} <= tables
    gaps = " ".join(next(iter(r.cells.values())) for r in ROWS if r.table == "Known gaps")
    for gap in ("MERGE INTO on Delta", "Iceberg", "Streaming writes", "V2 writes", "pandas UDFs",
                "cut by Spark", "nested namespaces", "count(distinct ...)", "Hive-format CTAS", "HDFS deletion"):
        assert gap in gaps


@pytest.mark.parametrize("row", [r for r in ROWS if "covered by" in r.cells], ids=_id)
def test_every_named_test_is_collected(row: Row) -> None:
    cell = row.cells["covered by"]
    named = [i for i in code(cell) if i.startswith("tests/")]
    assert named or cell.startswith("none"), f"no test and not `none`: {cell}"
    missing = [i for i in named if i not in collected_ids()]
    assert not missing, f"not collected by pytest: {missing}"


@pytest.mark.parametrize("row", [r for r in ROWS if "navd matches" in r.cells], ids=_id)
def test_every_node_is_read_by_the_extractor(row: Row) -> None:
    matched = code(row.cells["navd matches"])
    nodes = node_names(row.cells["spark node"])
    assert nodes, f"no node name in: {row.cells['spark node']}"
    if not matched:
        # pass-through: navd does not look at the node; it must be one Spark really logs
        assert row.cells["navd matches"].startswith("pass-through"), row.cells["navd matches"]
        missing = [n for n in nodes if f'"{n}' not in fixture_text() and n not in source_text()]
        assert not missing, f"in no captured event log: {missing}"
        return
    unknown = [m for m in matched if m not in source_text()]
    assert not unknown, f"not in the Spark extractor's source: {unknown}"
    unread = [n for n in nodes if n not in source_text() and not any(m in n for m in matched)]
    assert not unread, f"neither in the Spark extractor's source nor matched by {matched}: {unread}"


@pytest.mark.parametrize("row", [r for r in ROWS if "reason" in r.cells], ids=_id)
def test_quoted_column_lineage_skipped_reasons_are_the_extractor_s(row: Row) -> None:
    [reason] = code(row.cells["reason"])
    # the reasons are set where an execution is read (events.py) and built (executions.py)
    setters = [ROOT / "extractors" / "spark" / f"{name}.py" for name in ("events", "executions")]
    assert any(f'"{reason}"' in p.read_text(encoding="utf-8") for p in setters)

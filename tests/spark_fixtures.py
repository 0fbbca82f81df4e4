"""The captured Spark event logs under tests/fixtures/spark_events, shared by the golden tests."""

from __future__ import annotations

import os
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "spark_events"
CASES = sorted(p.stem for p in FIXTURES.glob("*.jsonl"))
CLUSTER = "primary"
DEFAULT_FS = "hdfs://nameservice1"
#: NAVD_UPDATE_GOLDEN=1 rewrites the expected files (then review the diff by hand)
UPDATE = os.environ.get("NAVD_UPDATE_GOLDEN") == "1"


def fixture_lines(case: str) -> list[str]:
    return (FIXTURES / f"{case}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)

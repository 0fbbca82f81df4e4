"""The fuzz targets' counts, printed after the run: `make fuzz` reports them (tests/fuzz/README.md)."""

from __future__ import annotations

from typing import Any

import pytest

from fuzzing import COUNTS, FULL_EXAMPLES, SLICE_EXAMPLES


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not COUNTS:
        return
    mode = f"FUZZ_EXAMPLES={FULL_EXAMPLES}" if FULL_EXAMPLES else f"fixed-seed slice, {SLICE_EXAMPLES} per target"
    terminalreporter.section(f"fuzz targets ({mode})")
    terminalreporter.write_line(f"{'target':<28} {'examples run':>12} {'refused':>9} {'failures':>9}")
    for target, count in sorted(COUNTS.items()):
        terminalreporter.write_line(f"{target:<28} {count.examples:>12,} {count.refused:>9,} {count.failures:>9,}")

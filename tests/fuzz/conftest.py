"""The fuzz targets' counts, printed after each target and at the end of the run: `make fuzz`
reports them (tests/fuzz/README.md)."""

from __future__ import annotations

from typing import Any

import pytest

from fuzz.fuzzing import COUNTS, FULL_EXAMPLES, SLICE_EXAMPLES

#: cheapest inputs first: on a busy host a long campaign stopped early still has whole targets
ORDER = ("test_lucene_query_syntax", "test_yarn_application_json", "test_webhdfs_file_status",
         "test_impala_lineage_json", "test_cli_arguments", "test_config_tables", "test_hiveserver2_describe_rows",
         "test_hive_lineage_json", "test_config_files", "test_openlineage_events", "test_spark_plan_text",
         "test_solr_reads_the_written_query_as_typed", "test_api_query_parameters", "test_spark_event_log_lines")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return ORDER.index(item.name) if item.name in ORDER else len(ORDER)

    items.sort(key=rank)


_printed: set[str] = set()
_config: list[pytest.Config] = []


def pytest_configure(config: pytest.Config) -> None:
    _config.append(config)


def _line(target: str) -> str:
    count = COUNTS[target]
    return f"{target:<28} {count.examples:>12,} {count.refused:>9,} {count.failures:>9,}"


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if not FULL_EXAMPLES:
        return
    for target in sorted(set(COUNTS) - _printed):  # the target just finished, as soon as it has
        _printed.add(target)
        reporter = _config[0].pluginmanager.get_plugin("terminalreporter") if _config else None
        if reporter is not None:
            reporter.write_line(f"fuzz: {_line(target)}")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not COUNTS:
        return
    mode = f"FUZZ_EXAMPLES={FULL_EXAMPLES}" if FULL_EXAMPLES else f"fixed-seed slice, {SLICE_EXAMPLES} per target"
    terminalreporter.section(f"fuzz targets ({mode})")
    terminalreporter.write_line(f"{'target':<28} {'examples run':>12} {'refused':>9} {'failures':>9}")
    for target in sorted(COUNTS):
        terminalreporter.write_line(_line(target))

"""The benchmark summary (tests/bench/summary.py) and the soak's slope, without services: the summary
reads what the benchmarks write (the same keys, bench_linker.py's printed lines) and says "not run"
for what is missing or unreadable, never a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
import summary  # noqa: E402 - a module of the benchmarks' directory, not a package
from soak import slope_per_hour  # noqa: E402


def write(directory: Path, name: str, data: object) -> None:
    (directory / name).write_text(json.dumps(data))


def by_pipeline(directory: Path) -> dict[str, summary.Row]:
    return {row.pipeline.split(",")[0].split(" (")[0]: row for row in summary.rows(directory)}


def test_an_empty_directory_gives_every_row_not_run_with_the_reason(tmp_path: Path) -> None:
    table = summary.rows(tmp_path)
    assert len(table) == 11 and {row.status for row in table} == {"not run"}
    assert all(row.note for row in table)
    assert summary.main(["--bench-dir", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "summary.json").read_text())["rows"][0]["status"] == "not run"


def test_writer_and_spark_rows_read_the_keys_their_benchmarks_write(tmp_path: Path) -> None:
    write(tmp_path, "writer.json", {"setup": {"when": "2026-11-23T17:00:00+00:00", "pinned": False},
                                    "paths": {"raw": {"best_docs_per_s": 20000.0}, "navd": {"best_docs_per_s": 18600.0}},
                                    "verdict": {"ratio": 0.93, "goal": 0.9, "met": True}})
    write(tmp_path, "spark.json", {"throughput": {"ratio": 0.31, "best_mb_per_s": {"baseline": 40.0, "navd": 12.4}}})
    rows = by_pipeline(tmp_path)
    assert rows["index writer"].status == "met" and "0.93" in rows["index writer"].now
    assert "20,000 docs/s" in rows["index writer"].baseline
    assert rows["Spark event logs into Solr"].status == "NOT met" and "0.31" in rows["Spark event logs into Solr"].now


def test_the_first_start_row_reads_bench_spark_history(tmp_path: Path) -> None:
    history = {"rows": [{"applications": 25, "max_rss_mb": 70.5, "checkpoints": 10},
                        {"applications": 100, "max_rss_mb": 80.0, "checkpoints": 31}],
               "rss_growth": 80.0 / 70.5, "bounded": True, "checkpointed": True}
    write(tmp_path, "spark.json", {"history": history})
    row = by_pipeline(tmp_path)["first start over a large Spark history"]
    assert row.status == "met" and "100 apps 80 MB" in row.now and "checkpoints during the pass: 10, 31" in row.now
    write(tmp_path, "spark.json", {"history": {**history, "rss_growth": 2.2, "bounded": False}})
    assert by_pipeline(tmp_path)["first start over a large Spark history"].status == "NOT met"
    write(tmp_path, "spark.json", {"history": {**history, "checkpointed": False}})
    assert by_pipeline(tmp_path)["first start over a large Spark history"].status == "NOT met"


def test_the_linker_row_from_the_lines_bench_linker_prints(tmp_path: Path) -> None:
    (tmp_path / "linker.log").write_text(
        "incremental (first pass: full): n=200000 load 12.0s; linked 200000 of 200000 in 4.00s = 50,000 "
        "relations/s; unlinked left 0\n"
        "spark local[*]: n=200000 load 11.0s; linked 200000 of 200000 in 8.00s = 25,000 relations/s; unlinked left 0\n"
        "baseline: raw post of the 200000 linked relation documents 60,000/s\n")
    row = by_pipeline(tmp_path)["linker"]
    assert row.status == "met", row
    assert "50,000 relations/s" in row.now and "0.83 of the post" in row.now and row.note == "n=200,000"


def test_the_fair_baseline_rows_read_navd_over_the_raw_post_of_each_ingest_benchmark(tmp_path: Path) -> None:
    write(tmp_path, "spark.json", {"throughput": {"ratio": 0.05, "raw_post": {"ratio": 0.31, "documents": 161380}}})
    write(tmp_path, "lineage_logs.json", {"lines": 3000, "raw_post": {"ratio": 0.75}})
    write(tmp_path, "openlineage.json", {"events": 500, "raw_post": {"ratio": 0.7}})
    (tmp_path / "linker.log").write_text(
        "incremental (first pass: full): n=50000 load 11.7s; linked 50000 of 50000 in 7.33s = 6,819 relations/s; "
        "unlinked left 0\n"
        "baseline: raw post of what the linker wrote for 50000 relations, fresh cores, 17,454/s\n")
    rows = by_pipeline(tmp_path)
    spark = rows["Spark event logs vs raw post"]
    assert spark.status == "NOT met" and spark.now == "0.31 (161,380 documents)"
    assert rows["Hive/Impala lineage logs vs raw post"].status == "met"
    assert rows["Hive/Impala lineage logs vs raw post"].now == "0.75 (3,000 lines)"
    assert rows["OpenLineage intake vs raw post"].status == "met"  # the goal is >= 0.7, met at 0.7
    linker = rows["linker vs raw post"]
    assert linker.status == "NOT met" and linker.now == "0.39 (n=50,000)", linker
    assert rows["linker"].baseline == "raw post 17,454/s"


def test_a_fair_baseline_row_without_its_figure_is_not_run_naming_the_key(tmp_path: Path) -> None:
    write(tmp_path, "spark.json", {"throughput": {"ratio": 0.05}})
    row = by_pipeline(tmp_path)["Spark event logs vs raw post"]
    assert row.status == "not run" and "throughput.raw_post.ratio" in row.note


def test_the_lineage_row_takes_the_worst_depth_5_p95_at_the_largest_size(tmp_path: Path) -> None:
    case = {"p50_ms": 20.0, "max_ms": 300.0, "nodes": 40, "requests": 12}
    write(tmp_path, "lineage.json", {"sizes": {
        "1000000": {"standalone": {"depth 5 upstream columns": {**case, "p95_ms": 400.0}}},
        "10000000": {"standalone": {"depth 5 upstream": {**case, "p95_ms": 80.0},
                                    "depth 1 upstream": {**case, "p95_ms": 500.0}},
                     "cloud": [{"depth": 5, "direction": "downstream", **case, "p95_ms": 95.0}]}}})
    row = by_pipeline(tmp_path)["lineage query"]
    assert row.status == "met", row
    assert row.now.startswith("10M elements") and "95 ms" in row.now and "80 ms" in row.now


def test_the_lineage_row_is_not_met_below_the_goal_size(tmp_path: Path) -> None:
    write(tmp_path, "lineage.json", {"1000000": {"standalone": {"depth 5 downstream": {"p95_ms": 50.0}}}})
    row = by_pipeline(tmp_path)["lineage query"]
    assert row.status == "NOT met" and row.note == "goal size not reached"


def test_the_moments_row_takes_the_worst_p95_ratio_to_the_plain_walk_at_the_largest_size(tmp_path: Path) -> None:
    def case(p95: float) -> dict[str, float]:
        return {"p50_ms": p95 / 2, "p95_ms": p95}

    write(tmp_path, "lineage.json", {"sizes": {
        "100000": {"standalone": {"cases": {"in-process random depth 5 downstream tables": case(100.0),
                                            "in-process random depth 5 downstream tables latest": case(400.0)}}},
        "1000000": {"standalone": {"cases": {"in-process hub depth 3 upstream columns": case(200.0),
                                             "in-process hub depth 3 upstream columns as-of": case(220.0),
                                             "in-process hub depth 3 upstream columns latest": case(280.0)}}}}})
    row = by_pipeline(tmp_path)["lineage --as-of / --latest vs plain"]
    assert row.status == "met", row
    assert row.now.startswith("1M elements: worst p95 1.40x") and "0 of 2 above" in row.now
    lineage = by_pipeline(tmp_path)["lineage query"]  # a moment is not a plain walk's case
    assert "worst p95 100 ms" in lineage.now and "400" not in lineage.now, lineage


def test_the_moments_row_is_not_run_without_moments(tmp_path: Path) -> None:
    write(tmp_path, "lineage.json", {"sizes": {"100000": {"standalone": {"cases": {
        "in-process random depth 5 downstream tables": {"p95_ms": 10.0}}}}}})
    assert by_pipeline(tmp_path)["lineage --as-of / --latest vs plain"].status == "not run"


def test_the_daemon_row_needs_an_hour_under_300_mb_and_flat(tmp_path: Path) -> None:
    soak = {"setup": {"minutes_sampled": 60.0, "debug": False}, "rss_max_mb": 120.0,
            "slopes_per_hour": {"rss_mb": 2.0}, "samples": [{"rss_mb": 80.0}]}
    write(tmp_path, "soak.json", soak)
    assert by_pipeline(tmp_path)["daemon"].status == "met"
    write(tmp_path, "soak.json", {**soak, "slopes_per_hour": {"rss_mb": 40.0}})
    assert by_pipeline(tmp_path)["daemon"].status == "NOT met"
    # A warm-up ramp tilts the whole run's slope; a flat second half is what "flat" means.
    write(tmp_path, "soak.json", {**soak, "slopes_per_hour": {"rss_mb": 40.0},
                                  "slopes_per_hour_second_half": {"rss_mb": 0.5}})
    assert by_pipeline(tmp_path)["daemon"].status == "met"
    write(tmp_path, "soak.json", {**soak, "setup": {"minutes_sampled": 15.0}})
    row = by_pipeline(tmp_path)["daemon"]
    assert row.status == "NOT met" and "only 15 of 60 min" in row.note


def test_an_unreadable_file_is_a_row_not_run_naming_it(tmp_path: Path) -> None:
    (tmp_path / "soak.json").write_text("{not json")
    row = by_pipeline(tmp_path)["daemon"]
    assert row.status == "not run" and row.note.startswith("soak.json unreadable")


def test_the_soak_slope_is_least_squares_per_hour() -> None:
    assert slope_per_hour([(0.0, 100.0), (30.0, 105.0), (60.0, 110.0)]) == 10.0
    assert abs(slope_per_hour([(0.0, 100.0), (1.0, 103.0), (2.0, 100.0), (3.0, 103.0)]) - 36.0) < 1e-9  # type: ignore[operator]
    assert slope_per_hour([(5.0, 1.0)]) is None

"""Every pipeline against its goal, from the figures the benchmarks wrote: run last by `make bench`.

Run: python tests/bench/summary.py [--bench-dir .bench]

Reads `.bench/writer.json`, `spark.json`, `linker.json` (or `linker.log`, bench_linker.py's printed
lines, which `make bench` saves), `lineage.json`, `lineage_logs.json`, `openlineage.json` and
`soak.json` and prints one row per pipeline:
the baseline measured in the same run, the figure now, the figure the work started from, the goal,
and met / NOT met / not run. A file that is missing or does not hold what a row needs makes that
row "not run" with the reason; nothing here measures anything. Also written to `.bench/summary.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

WRITER_GOAL = 0.9
SPARK_GOAL = 0.5
LINKER_RATE_GOAL = 50_000.0
LINKER_RATIO_GOAL = 0.7  # of a raw post of what the linker wrote
#: navd's ingest against a raw post of the very documents it wrote (tests/bench/fair_baseline.py)
RAW_POST_GOAL = 0.7
LINEAGE_P95_GOAL_MS = 100.0
LINEAGE_GOAL_ELEMENTS = 10_000_000
#: `--as-of` and `--latest` against the plain walk of the same case and roots (bench_lineage.py --moments)
MOMENTS_RATIO_GOAL = 1.5
MOMENTS = ("as-of", "latest")
SOAK_RSS_GOAL_MB = 300.0
SOAK_MINUTES_GOAL = 60.0
#: "flat": the least-squares RSS slope after the warm-up, at most this many MB per hour
SOAK_FLAT_MB_PER_HOUR = 10.0


@dataclasses.dataclass(frozen=True)
class Row:
    pipeline: str
    baseline: str
    now: str
    before: str  # where the work started
    goal: str
    status: str  # met / NOT met / not run
    note: str = ""


def load(path: Path) -> tuple[Any, str]:
    """The parsed JSON, or None and why not."""
    if not path.exists():
        return None, f"no {path.name}"
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except (OSError, ValueError) as exc:
        return None, f"{path.name} unreadable: {exc}"


def dig(data: Any, *keys: str) -> Any:
    """data[k1][k2]... or None when any step is missing or not a mapping."""
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def status(ok: bool) -> str:
    return "met" if ok else "NOT met"


def when(data: Any) -> str:
    stamp = dig(data, "setup", "when")
    return f"run {stamp}" if isinstance(stamp, str) else ""


# --- rows ----------------------------------------------------------------------------------------


def writer_row(bench: Path) -> Row:
    name, before, goal = "index writer", "0.86-0.95 (two runs)", f"navd/raw >= {WRITER_GOAL}"
    data, why = load(bench / "writer.json")
    ratio = number(dig(data, "verdict", "ratio"))
    if ratio is None:
        return Row(name, "raw JSON /update", "-", before, goal, "not run", why or "writer.json has no verdict.ratio")
    raw = number(dig(data, "paths", "raw", "best_docs_per_s"))
    navd = number(dig(data, "paths", "navd", "best_docs_per_s"))
    baseline = f"raw JSON /update {raw:,.0f} docs/s" if raw else "raw JSON /update"
    now = f"{ratio:.2f} ({navd:,.0f} docs/s)" if navd else f"{ratio:.2f}"
    pinned = " pinned" if dig(data, "setup", "pinned") else ""
    return Row(name, baseline, now, before, goal, status(ratio >= WRITER_GOAL), f"{when(data)}{pinned}")


def spark_row(bench: Path) -> Row:
    name, before, goal = "Spark event logs into Solr", "0.09-0.16", f"navd/baseline >= {SPARK_GOAL}"
    data, why = load(bench / "spark.json")
    ratio = number(dig(data, "throughput", "ratio"))
    if ratio is None:
        return Row(name, "zstd + json.loads", "-", before, goal, "not run", why or "spark.json has no throughput.ratio")
    best = dig(data, "throughput", "best_mb_per_s") or {}
    base, navd = number(best.get("baseline")), number(best.get("navd"))
    baseline = f"zstd + json.loads {base:.1f} MB/s" if base else "zstd + json.loads"
    now = f"{ratio:.2f} ({navd:.1f} MB/s)" if navd else f"{ratio:.2f}"
    return Row(name, baseline, now, before, goal, status(ratio >= SPARK_GOAL), when(data))


def fair_row(pipeline: str, before: str, ratio: float | None, why: str, detail: str = "", note: str = "") -> Row:
    """A row of navd's ingest against the raw post of the documents it wrote."""
    goal = f"navd / raw post >= {RAW_POST_GOAL}"
    baseline = "raw post of the documents navd wrote"
    if ratio is None:
        return Row(pipeline, baseline, "-", before, goal, "not run", why)
    now = f"{ratio:.2f}" + (f" ({detail})" if detail else "")
    return Row(pipeline, baseline, now, before, goal, status(ratio >= RAW_POST_GOAL), note)


def spark_raw_post_row(bench: Path) -> Row:
    data, why = load(bench / "spark.json")
    ratio = number(dig(data, "throughput", "raw_post", "ratio"))
    documents = number(dig(data, "throughput", "raw_post", "documents"))
    return fair_row("Spark event logs vs raw post", "0.31 (--captured 20)", ratio,
                    why or "spark.json has no throughput.raw_post.ratio",
                    f"{documents:,.0f} documents" if documents else "", when(data))


def lineage_logs_raw_post_row(bench: Path) -> Row:
    data, why = load(bench / "lineage_logs.json")
    ratio = number(dig(data, "raw_post", "ratio"))
    lines = number(dig(data, "lines"))
    return fair_row("Hive/Impala lineage logs vs raw post", "0.51-0.57 (3,000 lines)", ratio,
                    why or "lineage_logs.json has no raw_post.ratio", f"{lines:,.0f} lines" if lines else "")


def openlineage_raw_post_row(bench: Path) -> Row:
    data, why = load(bench / "openlineage.json")
    ratio = number(dig(data, "raw_post", "ratio"))
    events = number(dig(data, "events"))
    return fair_row("OpenLineage intake vs raw post", "0.34 (500 events)", ratio,
                    why or "openlineage.json has no raw_post.ratio", f"{events:,.0f} events" if events else "")


def linker_raw_post_row(bench: Path) -> Row:
    """The incremental linker (whose writes bench_linker.py records) against the raw post."""
    runs, raw, n, source = linker_figures(bench)
    incremental = next((rate for label, rate in runs.items() if "incremental" in label), None)
    ratio = incremental / raw if incremental and raw else None
    return fair_row("linker vs raw post", "0.39 (n=50,000)", ratio,
                    source if not runs else "no incremental run or no raw post line",
                    f"n={n:,}" if n else "")


def first_start_row(bench: Path) -> Row:
    """bench_spark.py's first start over a generated history (`history` in spark.json): peak RSS of
    `navd extract spark --once` at N and 4N applications, and whether positions were committed
    during the pass."""
    name, before = "first start over a large Spark history", "memory grows with the history"
    goal = "RSS bounded by the largest application, checkpoints during the pass"
    data, why = load(bench / "spark.json")
    history = dig(data, "history")
    rows = history.get("rows") if isinstance(history, dict) else None
    growth = number(dig(data, "history", "rss_growth"))
    if not rows or growth is None or not all(isinstance(r, dict) for r in rows):
        return Row(name, "-", "-", before, goal, "not run", why or "spark.json has no history figures")
    peaks = ", ".join(f"{r.get('applications')} apps {number(r.get('max_rss_mb')) or 0:.0f} MB" for r in rows)
    checkpoints = ", ".join(str(r.get("checkpoints")) for r in rows)
    now = f"peak RSS {peaks} (x{growth:.2f}); checkpoints during the pass: {checkpoints}"
    met = bool(history.get("bounded")) and bool(history.get("checkpointed"))
    return Row(name, "-", now, before, goal, status(met), when(data))


def linker_row(bench: Path) -> Row:
    name, before = "linker, unlinked vs elements", "3,100-8,700 relations/s"
    goal = f">= {LINKER_RATE_GOAL:,.0f} relations/s and >= {LINKER_RATIO_GOAL} of the post"
    runs, raw, n, source = linker_figures(bench)
    if not runs:
        return Row(name, "raw bulk post of the linked docs", "-", before, goal, "not run", source)
    label, rate = max(runs.items(), key=lambda item: item[1])
    baseline = f"raw post {raw:,.0f}/s" if raw else "raw bulk post of the linked docs"
    ratio = rate / raw if raw else None
    now = f"{rate:,.0f} relations/s" + (f", {ratio:.2f} of the post" if ratio is not None else "") + f" ({label})"
    ok = rate >= LINKER_RATE_GOAL and ratio is not None and ratio >= LINKER_RATIO_GOAL
    return Row(name, baseline, now, before, goal, status(ok), f"n={n:,}" if n else source)


_LINKER_RUN = re.compile(r"^(?P<label>.+?): n=(?P<n>\d+) .* = (?P<rate>[\d,]+) relations/s", re.M)
_LINKER_RAW = re.compile(r"^baseline: raw post .* (?P<rate>[\d,]+)/s", re.M)


def linker_figures(bench: Path) -> tuple[dict[str, float], float | None, int | None, str]:
    """(rate per run label, raw post rate, n, where from): linker.json when bench_linker.py writes
    one (a `runs` mapping or list with a rate, and a raw rate), else the lines it printed."""
    data, _ = load(bench / "linker.json")
    if isinstance(data, dict):
        runs: dict[str, float] = {}
        for key, value in flat(data):
            if re.search(r"(relations_per_s|rate)$", key) and "raw" not in key and "baseline" not in key:
                rate = number(value)
                if rate:
                    runs[key] = rate
        raw = next((number(v) for k, v in flat(data) if re.search(r"(raw|baseline)", k) and number(v)
                    and re.search(r"(per_s|rate)", k)), None)
        n = next((int(v) for k, v in flat(data) if k.split(".")[-1] == "n" and number(v)), None)
        if runs:
            return runs, raw, n, "linker.json"
    log = bench / "linker.log"
    if not log.exists():
        return {}, None, None, "no linker.json or linker.log"
    text = log.read_text(encoding="utf-8", errors="replace")
    runs = {m["label"]: float(m["rate"].replace(",", "")) for m in _LINKER_RUN.finditer(text)}
    ns = [int(m["n"]) for m in _LINKER_RUN.finditer(text)]
    raw_match = _LINKER_RAW.search(text)
    raw = float(raw_match["rate"].replace(",", "")) if raw_match else None
    return runs, raw, (ns[0] if ns else None), ("linker.log" if runs else "linker.log has no run lines")


def lineage_row(bench: Path) -> Row:
    """The worst depth-5 p95 at the largest size bench_lineage.py reached, per mode."""
    name, before = "lineage query, depth 5", "500k elements: p50 123 ms, p95 181 ms upstream"
    goal = f"p95 <= {LINEAGE_P95_GOAL_MS:.0f} ms at {LINEAGE_GOAL_ELEMENTS // 1_000_000}M elements"
    data, why = load(bench / "lineage.json")
    cases = list(lineage_cases(data)) if data is not None else []
    deep = [c for c in cases if c["depth"] == 5 and not c["label"].endswith(MOMENTS)]
    if not deep:
        return Row(name, "-", "-", before, goal, "not run", why or "lineage.json has no depth-5 case with p95_ms")
    sized = [c for c in deep if c["size"]]
    largest = max((c["size"] for c in sized), default=None)
    at = [c for c in deep if c["size"] == largest] if largest else deep
    parts, worst_all = [], 0.0
    for mode in sorted({c["mode"] for c in at}):
        worst = max(at, key=lambda c: c["p95"] if c["mode"] == mode else -1.0)
        worst_all = max(worst_all, worst["p95"])
        parts.append(f"{mode or 'all'}: worst p95 {worst['p95']:.0f} ms ({worst['label']})")
    size = f"{largest / 1e6:g}M elements: " if largest else ""
    ok = bool(largest and largest >= LINEAGE_GOAL_ELEMENTS) and worst_all <= LINEAGE_P95_GOAL_MS
    note = "" if largest and largest >= LINEAGE_GOAL_ELEMENTS else "goal size not reached"
    return Row(name, "-", size + "; ".join(parts), before, goal, status(ok), note)


def moments_row(bench: Path) -> Row:
    """The worst p95 of `--as-of` and `--latest` as a ratio of the plain walk's, over every case of
    the largest size bench_lineage.py --moments measured."""
    name, before = "lineage --as-of / --latest vs plain", "latest downstream depth 5: p95 1.81x (17 requests vs 12)"
    goal = f"p95 <= {MOMENTS_RATIO_GOAL:g}x the plain walk"
    data, why = load(bench / "lineage.json")
    ratios: list[tuple[float, float, str]] = []  # (elements, ratio, case)
    for size, modes in (dig(data, "sizes") or {}).items():
        for mode, measured in (modes or {}).items():
            cases = measured.get("cases") if isinstance(measured, dict) else None
            for key, case in (cases or {}).items():
                plain = next((cases.get(key.removesuffix(" " + m)) for m in MOMENTS if key.endswith(" " + m)), None)
                ratio = (number(case.get("p95_ms")) or 0.0) / (number(plain.get("p95_ms")) or 0.0) \
                    if isinstance(plain, dict) and number(plain.get("p95_ms")) else None
                if ratio is not None and size.isdigit():
                    ratios.append((float(size), ratio, f"{mode} {key}"))
    if not ratios:
        return Row(name, "-", "-", before, goal, "not run", why or "lineage.json has no --moments cases")
    largest = max(elements for elements, _, _ in ratios)
    at = [(ratio, case) for elements, ratio, case in ratios if elements == largest]
    worst, case = max(at)
    over = sum(1 for ratio, _ in at if ratio > MOMENTS_RATIO_GOAL)
    return Row(name, "-", f"{largest / 1e6:g}M elements: worst p95 {worst:.2f}x ({case[-60:]}); "
               f"{over} of {len(at)} above {MOMENTS_RATIO_GOAL:g}x", before, goal,
               status(worst <= MOMENTS_RATIO_GOAL))


def lineage_cases(data: Any, path: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Every mapping holding a p95_ms, with its size (elements), mode and depth taken from its own
    fields or the keys above it: bench_lineage.py's layout is read, not assumed."""
    if isinstance(data, list):
        for i, item in enumerate(data):
            yield from lineage_cases(item, path + (str(i),))
        return
    if not isinstance(data, dict):
        return
    if number(data.get("p95_ms")) is not None:
        words = list(path) + [str(v) for k, v in data.items() if isinstance(v, str | int) and not k.endswith("_ms")
                              and k not in ("nodes", "requests")]
        text = " ".join(words)
        depth = number(data.get("depth"))
        if depth is None:
            found = re.search(r"depth[ _:=-]*(\d+)", text, re.I)
            depth = float(found.group(1)) if found else None
        size = number(data.get("elements")) or number(data.get("size"))
        if size is None:
            sizes = [int(w) for w in path if w.isdigit() and int(w) >= 1000]
            size = float(sizes[0]) if sizes else None
        mode = next((m for m in ("cloud", "standalone", "http", "in-process", "inprocess", "facade")
                     if m in text.lower()), "")
        yield {"depth": int(depth) if depth is not None else None, "size": size, "mode": mode,
               "p95": float(data["p95_ms"]), "label": " ".join(p for p in path if not p.isdigit())[-60:]}
        return
    for key, value in data.items():
        yield from lineage_cases(value, path + (str(key),))


def soak_row(bench: Path) -> Row:
    name, before = "daemon (soak, all extractors)", "not measured"
    goal = f"RSS < {SOAK_RSS_GOAL_MB:.0f} MB, flat over {SOAK_MINUTES_GOAL:.0f} min"
    data, why = load(bench / "soak.json")
    rss = number(dig(data, "rss_max_mb"))
    if rss is None:
        return Row(name, "-", "-", before, goal, "not run", why or "soak.json has no rss_max_mb")
    minutes = number(dig(data, "setup", "minutes_sampled")) or 0.0
    slope = number(dig(data, "slopes_per_hour", "rss_mb"))
    late = number(dig(data, "slopes_per_hour_second_half", "rss_mb"))
    first = (dig(data, "samples") or [{}])[0]
    start = number(first.get("rss_mb")) if isinstance(first, dict) else None
    now = (f"RSS {start:.0f} -> max {rss:.0f} MB" if start else f"RSS max {rss:.0f} MB") + (
        f", slope {slope:+.1f} MB/h" if slope is not None else "") + (
        f" ({late:+.1f} MB/h in the second half)" if late is not None else "") + f" over {minutes:.0f} min"
    # Flat: the second half's slope when the soak recorded it (a warm-up ramp is no leak), else the
    # slope after the warm-up minutes.
    judged = late if late is not None else slope
    flat_enough = judged is not None and judged <= SOAK_FLAT_MB_PER_HOUR
    ok = rss < SOAK_RSS_GOAL_MB and flat_enough and minutes >= SOAK_MINUTES_GOAL - 0.5
    notes = [f"flat: {'second-half ' if late is not None else ''}slope <= {SOAK_FLAT_MB_PER_HOUR:g} MB/h"]
    if minutes < SOAK_MINUTES_GOAL - 0.5:
        notes.append(f"only {minutes:.0f} of {SOAK_MINUTES_GOAL:.0f} min: run soak.py --minutes 60")
    if dig(data, "setup", "debug"):
        notes.append("under tracemalloc")
    return Row(name, "-", now, before, goal, status(ok), "; ".join(notes))


# --- helpers -------------------------------------------------------------------------------------


def flat(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, leaf) of a nested mapping; lists are not entered."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from flat(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, data


def rows(bench: Path) -> list[Row]:
    return [lineage_row(bench), moments_row(bench), writer_row(bench), spark_row(bench), spark_raw_post_row(bench),
            lineage_logs_raw_post_row(bench), openlineage_raw_post_row(bench), linker_row(bench),
            linker_raw_post_row(bench), first_start_row(bench), soak_row(bench)]


def render(table: list[Row]) -> str:
    """The table in Markdown (it pastes into the bench README's notes as it is)."""
    header = ("pipeline", "baseline in the same run", "now", "before", "goal", "status")
    body = [(r.pipeline, r.baseline, r.now, r.before, r.goal, r.status) for r in table]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell.replace("|", "/") for cell in line) + " |" for line in body]
    notes = [f"- {r.pipeline}: {r.note}" for r in table if r.note]
    return "\n".join(out + (["", "notes:", *notes] if notes else []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--bench-dir", type=Path, default=REPO / ".bench",
                        help="where the benchmarks wrote their JSON (default .bench)")
    args = parser.parse_args(argv)
    table = rows(args.bench_dir)
    sys.stdout.write(f"\nevery pipeline against its goal (figures from {args.bench_dir})\n")
    sys.stdout.write(render(table) + "\n")
    met = sum(r.status == "met" for r in table)
    missing = sum(r.status == "not run" for r in table)
    sys.stdout.write(f"{met} of {len(table)} goals met, {missing} not run\n")
    if args.bench_dir.is_dir():
        (args.bench_dir / "summary.json").write_text(json.dumps(
            {"when": datetime.now(UTC).isoformat(timespec="seconds"), "rows": [dataclasses.asdict(r) for r in table]},
            indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

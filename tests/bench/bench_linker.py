"""Linker benchmark: N unlinked relations (Spark DATA_FLOW into paths spelled with an aliased
NameNode authority) against N HDFS elements under the nameservice; relations/s of the
incremental linker's first (full) pass and of the Spark mode.

Run: python tests/bench/bench_linker.py [--n 1000000] [--master local[*]] [--skip-spark] [--profile | --profile-cpu]
Starts its own embedded Solr (temporary home, free port). Goal: >= 50,000 relations/s.

Baseline, in the same process against the same Solr: a raw post of the very update bodies the
incremental linker posted (recorded as sent, tests/bench/fair_baseline.py) into fresh cores:
the same batches, parameters, threads and commits, without the linker's reads and deletions.
Linking a relation costs Solr at least that write, so the ratio linker / raw post says how close
the linker comes to what Solr can take here; the goal is >= 0.7.

`--profile`: the incremental pass under cProfile (every thread; the top functions printed, all
saved to .bench/linker-navd.prof) and its Solr requests per kind: count, wall seconds and Solr's
own QTime where Solr reports one. `--profile-cpu`: the same, the profile in each thread's CPU
time (time.thread_time), so that neither waiting on Solr nor waiting for a CPU counts.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.linker.linker import Linker
from navd.linker.spark_link import spark_link
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_writer import _cpu_snapshot  # noqa: E402  (same directory)
from fair_baseline import Recorded, RecordingIndex, describe, fresh_cores, post_recorded  # noqa: E402

ALIASES = {"nn1:8020": "hdfs://ns1"}
PROFILE_FILE = Path(__file__).resolve().parents[2] / ".bench" / "linker-navd.prof"


def request_kind(method: str, path: str, data: object) -> str:
    """What a linker request is, for the per-kind table of `--profile`."""
    core, _, handler = path.rpartition("/")
    core = core.rsplit("_", 1)[-1] if "_" in core else core
    if handler == "update":
        body = data if isinstance(data, bytes) else b""
        if body.lstrip()[:1] == b"[":
            return f"{core}: add/update documents"
        if b'"delete"' in body[:20]:
            return f"{core}: delete by id"
        return f"{core}: commit"
    if handler == "select" and isinstance(data, Mapping):
        query = str(data.get("q", ""))
        fl = str(data.get("fl", ""))
        return f"{core}: select {'rows=0 count' if data.get('rows') == 0 else (query[:28] + ' fl=' + fl[:40])}"
    return f"{core}: {method} {handler}"


class ProfilingIndex(RecordingIndex):
    """A RecordingIndex that also times its requests per kind while `timing()` is open."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._times: dict[str, list[float]] | None = None
        self._times_lock = threading.Lock()

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        if self._times is None:
            return super().request(method, path, **kwargs)
        t0 = time.perf_counter()
        body = super().request(method, path, **kwargs)
        wall = time.perf_counter() - t0
        qtime = body.get("responseHeader", {}).get("QTime") if isinstance(body, dict) else None
        kind = request_kind(method, path, kwargs.get("data"))
        with self._times_lock:
            if self._times is not None:
                row = self._times.setdefault(kind, [0, 0.0, 0.0, 0])
                row[0] += 1
                row[1] += wall
                if qtime is not None:
                    row[2] += qtime / 1000
                    row[3] += 1
        return body

    @contextmanager
    def timing(self) -> Iterator[dict[str, list[float]]]:
        times: dict[str, list[float]] = {}
        self._times = times
        try:
            yield times
        finally:
            self._times = None


def print_request_times(times: Mapping[str, list[float]]) -> None:
    print("  Solr requests of the pass, per kind: count, wall s (summed over threads), QTime s (of n)")
    for kind, (count, wall, qtime, with_qtime) in sorted(times.items(), key=lambda kv: -kv[1][1]):
        shown_q = f"{qtime:8.2f} ({int(with_qtime)})" if with_qtime else "       -"
        print(f"    {kind:<80} {int(count):5d} {wall:8.2f} {shown_q}")


@contextmanager
def profiled_threads(cpu: bool = False) -> Iterator[list[cProfile.Profile]]:
    """cProfile in this thread and in every thread started inside the block (the linker works
    its pages on a pool): one profiler per thread, all returned for pstats to merge. `cpu`:
    each thread's CPU time (`time.thread_time`) instead of the wall clock, so neither waiting
    on Solr nor waiting for a CPU on a loaded host counts."""
    profilers: list[cProfile.Profile] = []
    lock = threading.Lock()

    def new_profiler() -> cProfile.Profile:
        return cProfile.Profile(time.thread_time) if cpu else cProfile.Profile()

    def start(*_args: object) -> None:
        profiler = new_profiler()
        with lock:
            profilers.append(profiler)
        sys.setprofile(None)
        profiler.enable()

    main = new_profiler()
    profilers.append(main)
    threading.setprofile(start)
    main.enable()
    try:
        yield profilers
    finally:
        main.disable()
        threading.setprofile(None)  # type: ignore[arg-type]


def print_profile(profilers: list[cProfile.Profile], top: int = 25, cpu: bool = False) -> None:
    stats = pstats.Stats(profilers[0])
    for profiler in profilers[1:]:
        profiler.create_stats()
        stats.add(profiler)
    print("  cProfile of the pass, every thread, in CPU time of each thread:" if cpu else
          "  cProfile of the pass, every thread (threads waiting on Solr count as time in their socket reads):")
    stats.sort_stats("tottime").print_stats(top)
    PROFILE_FILE.parent.mkdir(exist_ok=True)
    stats.dump_stats(PROFILE_FILE)
    print(f"  (saved to {PROFILE_FILE}: python -m pstats)")


def load(index: SolrIndex, n: int) -> None:
    exe = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, "spark://bench/1", name="1")
    writer = IndexWriter(index)
    writer.write(exe)
    for i in range(n):
        writer.write(Element(SourceType.HDFS, ElementType.DIRECTORY, f"hdfs://ns1/wh/d{i}", name=f"d{i}"))
        seen = EntityRef(SourceType.HDFS, f"hdfs://nn1:8020/wh/d{i}", ElementType.DIRECTORY)
        writer.write(Relation(RelationType.DATA_FLOW, exe.ref, seen, linked2=False))
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)


def settle(solr_pid: int | None, quiet_cpu: float = 0.2, interval: float = 2.0, most: float = 120.0) -> float:
    """Wait until Solr is idle (under `quiet_cpu` CPU-seconds per `interval`, at most `most`
    seconds): the load's merges, run in the background after its commits, must not be counted
    as the pass's CPU. Returns the seconds waited."""
    start = time.monotonic()
    before = _cpu_snapshot(solr_pid)
    while before is not None and time.monotonic() - start < most:
        time.sleep(interval)
        after = _cpu_snapshot(solr_pid)
        if after is None or after[2] - before[2] < quiet_cpu:
            break
        before = after
    return time.monotonic() - start


def cpu_split(before: tuple[float, float, float] | None, after: tuple[float, float, float] | None,
              seconds: float) -> tuple[str, float | None]:
    """(`navd X s / Solr Y s / other Z s of C` CPU-seconds over a run (C = CPUs x wall), the
    CPU-seconds of navd and Solr together), or no split where /proc is missing."""
    if before is None or after is None:
        return "CPU split unavailable (no /proc)", None
    host, own, solr = (a - b for a, b in zip(after, before))
    cpus = os.cpu_count() or 1
    return (f"CPU-seconds: navd {own:.1f} / Solr {solr:.1f} / other {host - own - solr:.1f} "
            f"of {cpus * seconds:.1f} ({cpus} CPUs x {seconds:.1f} s)"), own + solr


def raw_post_rate(index: RecordingIndex, recorded: Recorded, linked: int,
                  solr_pid: int | None) -> tuple[float, tuple[str, float | None]]:
    """Relations/s of a raw post of what the linker wrote (`linked` relations), into fresh cores."""
    with fresh_cores(index) as fresh:
        before = _cpu_snapshot(solr_pid)
        seconds = post_recorded(index, fresh, recorded).seconds
        return linked / seconds, cpu_split(before, _cpu_snapshot(solr_pid), seconds)


@contextmanager
def _nothing() -> Iterator[list[cProfile.Profile]]:
    yield []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--profile", action="store_true",
                        help="the incremental pass under cProfile, and its Solr requests per kind")
    parser.add_argument("--profile-cpu", action="store_true",
                        help="as --profile, the profile in each thread's CPU time instead of wall time")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="navd-bench-linker-"))
    server = EmbeddedSolr(home, free_port(), args.heap, SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir()))
    solr_pid = server.start().pid
    try:
        with ProfilingIndex(server.client_config()) as index:
            init_solr(index)
            runs = [("incremental (first pass: full)", lambda: Linker(
                index, cluster="bench", default_fs="hdfs://ns1", fs_aliases=ALIASES, state_id="bench-a").link())]
            if not args.skip_spark:
                runs.append((f"spark {args.master}", lambda: spark_link(
                    index, cluster="bench", default_fs="hdfs://ns1", fs_aliases=ALIASES, master=args.master,
                    state_id="bench-b")))
            rates: list[tuple[str, float, float | None]] = []
            recorded, linked = Recorded(()), 0
            for label, run in runs:
                for core in ("elements", "relations"):
                    index.delete_query(core, "*:*")
                    index.commit(core)
                t0 = time.monotonic()
                load(index, args.n)
                loaded = time.monotonic() - t0
                settled = settle(solr_pid)
                before = _cpu_snapshot(solr_pid)
                t0 = time.monotonic()
                profile = (args.profile or args.profile_cpu) and not recorded.updates  # the incremental pass
                with index.recording() as updates, index.timing() as times, \
                        (profiled_threads(args.profile_cpu) if profile else _nothing()) as profilers:
                    report = run()
                    seconds = time.monotonic() - t0
                if not recorded.updates:  # the first run's: the one whose writes this process sends
                    recorded, linked = Recorded(tuple(updates)), report.linked
                split, cpu = cpu_split(before, _cpu_snapshot(solr_pid), seconds)
                index.commit("relations")
                left = index.count("relations", "unlinked:true")
                rates.append((label, report.linked / seconds, cpu))
                print(f"{label}: n={args.n} load {loaded:.1f}s (Solr idle {settled:.0f}s after); linked {report.linked} of {report.examined} in "
                      f"{seconds:.2f}s = {rates[-1][1]:,.0f} relations/s; unlinked left {left}", flush=True)
                print(f"  {split}", flush=True)
                if profile:
                    print_request_times(times)
                    print_profile(profilers, cpu=args.profile_cpu)
            # The baseline once, last, after Solr settled (merges after a big pass skew a post made
            # right after it), against the same index state for every ratio.
            index.commit("relations")
            time.sleep(10)
            raw, (split, raw_cpu) = raw_post_rate(index, recorded, linked, solr_pid)
            print(f"  what the linker wrote: {describe(recorded)}")
            print(f"baseline: raw post of what the linker wrote for {linked} relations, fresh cores, {raw:,.0f}/s")
            print(f"  {split}")
            for label, rate, cpu in rates:
                print(f"ratio {label} / raw post: {rate / raw:.3f} (goal >= 0.7)")
                # Under other processes' load the wall-clock ratio is noise; CPU-seconds spent by
                # navd and Solr for the same N relations much less so.
                if cpu and raw_cpu:
                    print(f"  by CPU-seconds of navd + Solr (raw / {label}): {raw_cpu / cpu:.3f}")
        print("load: " + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Lineage latency at scale: `navd lineage` in-process (navd.lineage.service.lineage) and end to
end over HTTP (`GET /api/lineage` of a real `navd serve`) on a generated graph
(tests/bench/lineage_graph.py), on one Solr node and on a 2-shard SolrCloud, at one or more sizes.

Run: python tests/bench/bench_lineage.py [--elements 1000000[,3000000]] [--modes standalone,cloud]
     [--roots 20] [--hubs 4] [--repeat 1] [--depths 1,3,5] [--heap auto] [--producers 2]

Each size and mode is loaded once into a cached Solr home under `.bench/` (lineage_index.py;
reruns skip loading). Per case (depth x upstream/downstream x columns off/on) and root kind
(random non-temporary tables with a fixed seed; hub tables, read by hundreds of jobs, apart):
every root once in-process untimed (Solr's caches; its node count), then `--repeat` timed passes
over the roots, each root in-process then over HTTP (alternating which goes first). Solr requests
per query are counted in-process by wrapping SolrIndex.request (the HTTP side runs the same walk).
The hub roots are asked once more in-process through the hub cache (navd/lineage/hub_cache.py,
`[lineage]` defaults; "hub cached", after two untimed queries that tell the hub and store its
graph), with the ratio of its p50/p95 to the uncached hub case of the same run; the server runs
with the cache off, so its HTTP figures stay those of the walk.
Then a table of p50/p95 by depth and size, Solr's index on disk and heap in use, written with
every case to `.bench/lineage.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

from navd.config import LineageConfig, load_config
from navd.index.client import SolrIndex
from navd.catalog.service import lookup_scope
from navd.lineage.hub_cache import HubCache
from navd.lineage.responsibility import ExtractedNamespaces, extracted_namespaces
from navd.lineage.rules import LineageOptions
from navd.lineage.service import lineage
from navd.solr.server import effective_solr_config, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lineage_graph  # noqa: E402 - sibling modules of this script, not a package
from lineage_index import (  # noqa: E402
    BENCH,
    LoadSettings,
    Manifest,
    cache_dir,
    cached_solr,
    navd_serve,
    percentile,
    pick_roots,
    solr_footprint,
    timed_load,
    write_config,
)

MODES = {"standalone": 0, "cloud": 2}  # mode -> shards (0: a standalone core)
DIRECTIONS = ("upstream", "downstream")
RESULTS = BENCH / "lineage.json"
#: the moment of the --moments cases: the bench's start (every relation of the generated graph
#: is older, so the graphs are the plain walk's and the timings compare like with like)
AS_OF = datetime.now(UTC)


class CountingIndex(SolrIndex):
    """The CLI's Solr client, counting the requests a lineage walk sends."""

    requests_sent = 0

    def request(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.requests_sent += 1
        return super().request(*args, **kwargs)


@dataclasses.dataclass(frozen=True)
class Case:
    depth: int
    direction: str
    columns: bool
    #: "" (lineage now), "as-of" (as of the bench's start) or "latest" (as of it, latest runs only)
    moment: str = ""

    @property
    def name(self) -> str:
        return f"depth {self.depth} {self.direction} {'columns' if self.columns else 'tables'}" + \
            (f" {self.moment}" if self.moment else "")


def default_heap(elements: int) -> str:
    """Solr's heap for a size: about 2 GB were in use at 5M elements (perf-findings), so 2 GB
    up to 2M elements, 4 GB up to 10M, 8 GB above."""
    return "2g" if elements <= 2_000_000 else "4g" if elements <= 10_000_000 else "8g"


def hub_roots(count: int, seed: int) -> list[str]:
    rng = random.Random(f"hubs/{seed}")
    hubs = rng.sample(range(lineage_graph.HUBS), min(count, lineage_graph.HUBS))
    return [lineage_graph.table_ref(seed, t).identity for t in hubs]


def random_roots(manifest: Manifest, count: int, seed: int) -> list[str]:
    """Random tables, neither temporaries (deleted) nor hubs (measured apart)."""
    hubs = {lineage_graph.table_ref(manifest.seed, t).identity for t in range(lineage_graph.HUBS)}
    roots = [r for r in pick_roots(manifest, count + lineage_graph.HUBS, seed) if r not in hubs]
    return roots[:count]


def summary(seconds: list[float], nodes: list[int], sent: list[int]) -> dict[str, Any]:
    return {"n": len(seconds), "p50_ms": round(percentile(seconds, 50) * 1000, 2),
            "p95_ms": round(percentile(seconds, 95) * 1000, 2), "max_ms": round(max(seconds) * 1000, 2),
            "nodes": percentile([float(n) for n in nodes], 50), "nodes_max": max(nodes),
            "requests": percentile([float(s) for s in sent], 50), "requests_max": max(sent)}


def line(label: str, s: dict[str, Any]) -> str:
    return (f"{label}: p50 {s['p50_ms']:.1f} ms p95 {s['p95_ms']:.1f} ms max {s['max_ms']:.1f} ms "
            f"nodes {s['nodes']:.0f} (max {s['nodes_max']}) requests/query {s['requests']:.0f} "
            f"(max {s['requests_max']}) n={s['n']}")


def run_cases(config_path: Path, url: str | None, root_sets: dict[str, list[str]], cases: list[Case],
              repeat: int, prefix: str) -> dict[str, dict[str, Any]]:
    config = load_config(str(config_path), environ={})
    # As `navd lineage` opens Solr (a "reader" client: navd/index/clients.py): no retries for an interactive read.
    solr = dataclasses.replace(effective_solr_config(config, read_only=True), retries=0)
    scope = lookup_scope(config)
    results: dict[str, dict[str, Any]] = {}
    # The moments of one case (plain, --as-of, --latest) are timed interleaved, root by root, so
    # the load of a shared host falls on each alike and their ratios compare like with like.
    groups: dict[tuple[int, str, bool], list[Case]] = {}
    for case in cases:
        groups.setdefault((case.depth, case.direction, case.columns), []).append(case)
    with CountingIndex(solr) as index, requests.Session() as session:
        session.trust_env = False
        for group in groups.values():
            for kind, roots in root_sets.items():
                if roots:
                    run_group(index, session, config.server.max_nodes, scope, extracted_namespaces(config), url,
                              kind, roots, group, repeat,
                              prefix, results)
    return results


def options_of(case: Case, max_nodes: int, extracted: ExtractedNamespaces) -> LineageOptions:
    return LineageOptions(direction=case.direction, depth=case.depth,  # type: ignore[arg-type]
                          columns=case.columns, max_nodes=max_nodes, extracted=extracted,
                          as_of=AS_OF if case.moment else None, latest=case.moment == "latest")


def run_group(index: CountingIndex, session: requests.Session, max_nodes: int, scope: Any,
              extracted: ExtractedNamespaces, url: str | None,
              kind: str, roots: list[str], group: list[Case], repeat: int, prefix: str,
              results: dict[str, dict[str, Any]]) -> None:
    """Time the cases of one group (the moments of one depth, direction and columns) over `roots`."""
    cached = kind.endswith(" cached")
    hubs = HubCache(LineageConfig()) if cached else None  # the server's defaults

    def facade(case: Case) -> Callable[[str], int | bytes]:
        options = options_of(case, max_nodes, extracted)
        return lambda root: len(lineage(index, root, options, scope, hubs).as_dict()["nodes"])

    def http(case: Case) -> Callable[[str], int | bytes]:
        def call(root: str) -> bytes:
            response = session.get(f"{url}/api/lineage", params={
                "entity": root, "direction": case.direction, "depth": case.depth,
                "columns": str(case.columns).lower(),
                **({"as_of": AS_OF.isoformat(), "latest": str(case.moment == "latest").lower()}
                   if case.moment else {})})
            body = response.content  # the whole answer read: what a client waits for
            if response.status_code != 200:
                raise SystemExit(f"GET /api/lineage {root}: {response.status_code} {body[:300]!r}")
            return body
        return call

    sizes: dict[tuple[str, str], int] = {}
    sent: dict[tuple[str, str], int] = {}
    for case in group:
        walk = facade(case)
        for root in roots:  # warm-up, untimed; a walk's requests do not depend on timing
            if cached:  # the first query tells the hub, the second stores its graph
                walk(root)
                walk(root)
            before = index.requests_sent
            answered = walk(root)
            assert isinstance(answered, int)
            sizes[case.name, root] = answered
            sent[case.name, root] = index.requests_sent - before
        if url is not None and not cached:
            http(case)(roots[0])  # the server's code paths; Solr is warm from the facade
    calls: list[tuple[Case, str, Callable[[str], int | bytes]]] = []
    for case in group:
        calls.append((case, "in-process", facade(case)))
        if url is not None and not cached:
            calls.append((case, "http", http(case)))
    times: dict[tuple[str, str], list[float]] = {(case.name, side): [] for case, side, _ in calls}
    nodes: dict[tuple[str, str], list[int]] = {(case.name, side): [] for case, side, _ in calls}
    for n in range(repeat):
        for i, root in enumerate(roots):
            turn = (i + n) % len(calls)  # which call goes first rotates from root to root
            for case, side, call in calls[turn:] + calls[:turn]:
                started = time.perf_counter()
                answer = call(root)
                times[case.name, side].append(time.perf_counter() - started)
                # The body is parsed after the clock: parsing is the client's work.
                count = len(json.loads(answer)["nodes"]) if isinstance(answer, bytes) else answer
                if count != sizes[case.name, root]:
                    raise SystemExit(f"{root} {case.name}: {side} answered {count} nodes, "
                                     f"{sizes[case.name, root]} before")
                nodes[case.name, side].append(count)
    for case, side, _ in calls:
        # The HTTP side runs the same walk in the server: the in-process count is its.
        s = summary(times[case.name, side], nodes[case.name, side],
                    [sent[case.name, r] for r in roots for _ in range(repeat)])
        results[f"{side} {kind} {case.name}"] = s
        print(line(f"{prefix} {side} {kind} {case.name}", s), flush=True)
    plain = next((case for case in group if not case.moment), None)
    for case, side, _ in calls:
        if case.moment and plain is not None and (base := results.get(f"{side} {kind} {plain.name}")):
            mine = results[f"{side} {kind} {case.name}"]
            print(f"{prefix} {side} {kind} {case.name}: p50 {mine['p50_ms'] / base['p50_ms']:.3f} "
                  f"p95 {mine['p95_ms'] / base['p95_ms']:.3f} of the plain walk (timed interleaved)", flush=True)
    if cached and hubs is not None:
        for case in group:
            walked = results.get(f"in-process {kind.removesuffix(' cached')} {case.name}")
            mine = results.get(f"in-process {kind} {case.name}")
            if walked and mine:
                print(f"{prefix} in-process {kind} {case.name}: p50 {mine['p50_ms'] / walked['p50_ms']:.3f} "
                      f"p95 {mine['p95_ms'] / walked['p95_ms']:.3f} of the uncached walk; "
                      f"{hubs.hits} hits, {hubs.misses} misses", flush=True)


def host_load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(shape: lineage_graph.Shape, mode: str, args: argparse.Namespace,
            cases: list[Case]) -> dict[str, Any]:
    shards = MODES[mode]
    heap = args.heap if args.heap != "auto" else default_heap(shape.elements)
    settings = LoadSettings(args.producers, args.batch_size, args.writer_threads)
    prefix = f"{mode} {shape.elements / 1e6:g}M"
    with cached_solr(shape, heap, shards, settings) as (server, manifest):
        print(f"{prefix} index: {manifest.indexed_elements:,} elements, {manifest.indexed_relations:,} "
              f"relations, {manifest.jobs:,} jobs (loaded in {manifest.load_seconds:.0f}s: "
              f"{manifest.docs_per_second:,.0f} docs/s, {manifest.producers} producers); home "
              f"{cache_dir(shape, shards)}; Solr heap {heap}", flush=True)
        result: dict[str, Any] = {"manifest": dataclasses.asdict(manifest), "heap": heap,
                                  "home": str(cache_dir(shape, shards)),
                                  "load_docs_per_second": round(manifest.docs_per_second)}
        if args.load_only:
            return result
        directory = Path(tempfile.mkdtemp(prefix="navd-bench-lineage-"))
        try:
            port = free_port()
            config = write_config(server, directory, port, shards)
            hubs = hub_roots(args.hubs, args.seed)
            root_sets = {"random": random_roots(manifest, args.roots, args.seed), "hub": hubs,
                         "hub cached": [] if args.no_hub_cache else hubs}
            print(f"{prefix}: {len(root_sets['random'])} random roots, {len(root_sets['hub'])} hub roots, "
                  f"{args.repeat} timed pass(es); {host_load()}", flush=True)
            if args.no_http:
                result["cases"] = run_cases(config, None, root_sets, cases, args.repeat, prefix)
            else:
                with navd_serve(config, directory, port) as url:
                    result["cases"] = run_cases(config, url, root_sets, cases, args.repeat, prefix)
            with SolrIndex(server.client_config()) as admin:
                result["solr"] = solr_footprint(admin)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    per_million = manifest.indexed_elements / 1e6
    solr = result["solr"]
    result["per_million_elements"] = {
        "documents": round((manifest.indexed_elements + manifest.indexed_relations) / per_million),
        "index_bytes": round(solr["index_bytes"] / per_million)}
    result["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    result["host"] = host_load()
    print(f"{prefix} Solr: index {solr['index_bytes'] / 2**30:.2f} GB on disk, heap in use "
          f"{solr['heap_used_bytes'] / 2**30:.2f} of {solr['heap_max_bytes'] / 2**30:.2f} GB; per million "
          f"elements: {result['per_million_elements']['documents']:,} documents, "
          f"{result['per_million_elements']['index_bytes'] / 2**30:.2f} GB on disk; {host_load()}",
          flush=True)
    return result


def growth_table(sizes: dict[str, dict[str, Any]], cases: list[Case]) -> list[str]:
    """p50/p95 (ms) of the in-process random-root cases by depth and size, per mode."""
    out: list[str] = []
    for mode in MODES:
        measured = sorted((int(e), runs[mode]) for e, runs in sizes.items() if "cases" in runs.get(mode, {}))
        if not measured:
            continue
        out.append(f"{mode}: p50 / p95 ms, in-process, random roots")
        out.append(f"  {'case':<40}" + "".join(f"{format(e / 1e6, 'g') + 'M':>18}" for e, _ in measured))
        for kind in ("random", "hub", "hub cached"):
            for case in cases:
                key = f"in-process {kind} {case.name}"
                cells = [run["cases"].get(key) for _, run in measured]
                if not any(cells):
                    continue
                out.append(f"  {kind + ' ' + case.name:<40}" + "".join(
                    f"{(format(c['p50_ms'], '.0f') + ' / ' + format(c['p95_ms'], '.0f')) if c else '-':>18}"
                    for c in cells))
        out.append(f"  {'index GB on disk':<40}" + "".join(
            f"{run['solr']['index_bytes'] / 2**30:>18.2f}" for _, run in measured))
        out.append(f"  {'heap GB in use':<40}" + "".join(
            f"{run['solr']['heap_used_bytes'] / 2**30:>18.2f}" for _, run in measured))
        out.append(f"  {'documents per 1M elements':<40}" + "".join(
            f"{run['per_million_elements']['documents']:>18,}" for _, run in measured))
        out.append(f"  {'load docs/s':<40}" + "".join(
            f"{run['load_docs_per_second']:>18,}" for _, run in measured))
    return out


def compare_loads(shape: lineage_graph.Shape, args: argparse.Namespace) -> dict[str, Any]:
    """Load the same graph twice into throwaway homes, with plain writes (Solr's 1 s soft commits
    on) and inside SolrIndex.bulk_load, and print each one's time and documents per second."""
    heap = args.heap if args.heap != "auto" else default_heap(shape.elements)
    result: dict[str, Any] = {}
    for bulk in (False, True):
        settings = LoadSettings(args.producers, args.batch_size, args.writer_threads, bulk)
        manifest = timed_load(shape, heap, settings)
        label = "bulk" if bulk else "plain"
        docs = manifest.indexed_elements + manifest.indexed_relations
        print(f"load {shape.elements / 1e6:g}M {label}: {docs:,} documents in {manifest.load_seconds:.0f}s, "
              f"{manifest.docs_per_second:,.0f} docs/s ({manifest.producers} producers, batches of "
              f"{manifest.batch_size}, {manifest.writer_threads} writer threads each; {host_load()})", flush=True)
        result[label] = {"documents": docs, "seconds": manifest.load_seconds,
                         "docs_per_second": round(manifest.docs_per_second)}
    print(f"load {shape.elements / 1e6:g}M bulk / plain docs/s: "
          f"{result['bulk']['docs_per_second'] / max(result['plain']['docs_per_second'], 1):.2f}", flush=True)
    return result


def stored_sizes() -> dict[str, dict[str, Any]]:
    try:
        sizes: dict[str, dict[str, Any]] = json.loads(RESULTS.read_text()).get("sizes", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", default="1000000", help="sizes, comma-separated (e.g. 1000000,3000000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", default="standalone,cloud", help="standalone and/or cloud (2 shards)")
    parser.add_argument("--roots", type=int, default=20, help="random tables asked, per case")
    parser.add_argument("--hubs", type=int, default=4, help="hub tables asked, per case (reported apart)")
    parser.add_argument("--repeat", type=int, default=1, help="timed passes over the roots, per case")
    parser.add_argument("--depths", default="1,3,5")
    parser.add_argument("--heap", default="auto", help="Solr's heap (auto: by size)")
    parser.add_argument("--producers", type=int, default=2, help="loading processes")
    parser.add_argument("--batch-size", type=int, default=5000, help="loading: documents per update")
    parser.add_argument("--writer-threads", type=int, default=2, help="loading: writer threads per core")
    parser.add_argument("--compare-load", action="store_true",
                        help="only load each size twice into throwaway homes, with and without bulk "
                             "loading, and report both load times")
    parser.add_argument("--no-http", action="store_true", help="in-process only (no navd serve)")
    parser.add_argument("--no-hub-cache", action="store_true", help="without the hub cached cases")
    parser.add_argument("--load-only", action="store_true", help="load (or find) the cached indexes and stop")
    parser.add_argument("--moments", action="store_true",
                        help="each case also --as-of and --latest (the lineage as of a moment, the latest runs)")
    args = parser.parse_args()
    try:
        sizes = [int(e.replace("_", "")) for e in args.elements.split(",") if e.strip()]
        depths = [int(d) for d in args.depths.split(",") if d.strip()]
    except ValueError:
        raise SystemExit("--elements and --depths take comma-separated whole numbers") from None
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := [m for m in modes if m not in MODES]:
        raise SystemExit(f"unknown mode(s) {', '.join(unknown)}: expected standalone and/or cloud")
    cases = [Case(d, direction, columns, moment) for d in depths for direction in DIRECTIONS for columns in (False, True)
             for moment in (("", "as-of", "latest") if args.moments else ("",))]
    BENCH.mkdir(exist_ok=True)
    all_sizes = stored_sizes()
    if args.compare_load:
        for elements in sizes:
            compared = compare_loads(lineage_graph.Shape(elements, args.seed), args)
            all_sizes = stored_sizes()
            all_sizes.setdefault(str(elements), {})["load_compared"] = {
                **compared, "measured_at": datetime.now(UTC).isoformat(timespec="seconds")}
            RESULTS.write_text(json.dumps({"seed": args.seed, "sizes": all_sizes}, indent=1))
        return
    for elements in sizes:
        for mode in modes:
            result = measure(lineage_graph.Shape(elements, args.seed), mode, args, cases)
            if args.load_only:
                continue
            # Read again before writing: results of other sizes and modes, measured before or by
            # another run meanwhile, are kept (the growth table spans them; measured_at says when).
            all_sizes = stored_sizes()
            all_sizes.setdefault(str(elements), {})[mode] = {**result, "roots": args.roots, "hubs": args.hubs,
                                                            "repeat": args.repeat}
            RESULTS.write_text(json.dumps({"seed": args.seed, "sizes": all_sizes}, indent=1))
    if not args.load_only:
        print("\n".join(growth_table(all_sizes, cases)))
        print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()

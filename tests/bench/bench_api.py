"""API lineage latency: GET /api/lineage of a real `navd serve` against the facade call `navd
lineage` makes (navd.lineage.service.lineage), in the same run, on the same random roots of a generated
index (tests/bench/lineage_graph.py), depth 5, upstream and downstream, with and without columns.

Run: python tests/bench/bench_api.py [--elements 1000000] [--seed 1] [--roots 40] [--repeat 3]

The index is loaded once into a cached Solr home, `.bench/solr-lineage-<elements>-<seed>/`
(`manifest.json` marks it complete; delete the directory to load it again). Each run starts that
Solr (embedded, through navd's own code), `navd serve` in a subprocess on a free loopback port
(auth none), and stops both.

Per case, every root is asked once on both sides untimed (warm-up: Solr's caches and the
server's code paths), then `--repeat` timed passes over the roots, each root on both sides one
right after the other, in alternating order. The facade side is what `navd lineage --format
json` does minus printing: `lineage(...).as_dict()` with the CLI's Solr client; the HTTP side
is one keep-alive `requests.Session` until the whole body is read. Both answers must have the
same nodes. The ratio HTTP / facade of p50 (and p95) is the HTTP overhead; the goal is
<= 1.2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import requests

from navd.config import load_config
from navd.index.client import SolrIndex
from navd.catalog.service import lookup_scope
from navd.lineage.rules import LineageOptions
from navd.lineage.service import lineage
from navd.solr.server import effective_solr_config, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lineage_graph  # noqa: E402 - sibling modules of this script, not a package
from lineage_index import BENCH, cached_solr, navd_serve, percentile, pick_roots, write_config  # noqa: E402

DEPTH = 5
CASES = [(direction, columns) for direction in ("upstream", "downstream") for columns in (False, True)]


def timed(call: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    answer = call()
    return time.perf_counter() - started, answer


def node_count(answer: object) -> int:
    """Nodes of a lineage answer: the facade's document, or the HTTP body (parsed here, after
    the clock: parsing is the client's work, not the server's)."""
    document = json.loads(answer) if isinstance(answer, bytes) else answer
    return len(document["nodes"])  # type: ignore[index]


def run_cases(config_path: Path, url: str, roots: list[str], repeat: int) -> list[dict[str, object]]:
    config = load_config(str(config_path), environ={})
    # As `navd lineage` opens Solr (a "reader" client: navd/index/clients.py): no retries for an interactive read.
    solr = dataclasses.replace(effective_solr_config(config, read_only=True), retries=0)
    scope = lookup_scope(config)
    results: list[dict[str, object]] = []
    with SolrIndex(solr) as index, requests.Session() as session:
        for direction, columns in CASES:
            options = LineageOptions(direction=direction, depth=DEPTH, columns=columns,
                                     max_nodes=config.server.max_nodes)

            def facade(root: str) -> dict[str, object]:
                return lineage(index, root, options, scope).as_dict()

            def http(root: str) -> bytes:
                response = session.get(f"{url}/api/lineage", params={
                    "entity": root, "direction": direction, "depth": DEPTH, "columns": str(columns).lower()})
                body = response.content  # the whole answer read: what a client waits for
                if response.status_code != 200:
                    raise SystemExit(f"GET /api/lineage {root}: {response.status_code} {body[:300]!r}")
                return body

            sizes: dict[str, int] = {}
            for root in roots:  # warm-up, untimed, both sides alike
                sizes[root] = node_count(facade(root))
                if node_count(http(root)) != sizes[root]:
                    raise SystemExit(f"{root}: the API and the facade disagree on the nodes")
            times: dict[str, list[float]] = {"facade": [], "http": []}
            for n in range(repeat):
                for i, root in enumerate(roots):
                    order: list[tuple[str, Callable[[str], object]]] = [("facade", facade), ("http", http)]
                    if (i + n) % 2:
                        order.reverse()
                    for side, call in order:
                        seconds, answer = timed(lambda: call(root))
                        nodes = node_count(answer)
                        if nodes != sizes[root]:
                            raise SystemExit(f"{root}: {side} answered {nodes} nodes, {sizes[root]} before")
                        times[side].append(seconds)
            summary = {side: {"p50": percentile(v, 50), "p95": percentile(v, 95), "max": max(v)}
                       for side, v in times.items()}
            node_counts = sorted(sizes.values())
            result = {"direction": direction, "columns": columns, "depth": DEPTH, "requests": len(times["http"]),
                      "nodes_p50": percentile([float(c) for c in node_counts], 50), "nodes_max": node_counts[-1],
                      **summary, "ratio_p50": summary["http"]["p50"] / summary["facade"]["p50"],
                      "ratio_p95": summary["http"]["p95"] / summary["facade"]["p95"]}
            results.append(result)
            print(line(result), flush=True)
    return results


def line(r: dict[str, object]) -> str:
    def ms(side: str) -> str:
        s: dict[str, float] = r[side]  # type: ignore[assignment]
        return f"p50 {s['p50'] * 1000:7.1f} p95 {s['p95'] * 1000:7.1f} max {s['max'] * 1000:7.1f} ms"

    case = f"{r['direction']:<10} depth {r['depth']} {'columns   ' if r['columns'] else 'no columns'}"
    return (f"{case} (n={r['requests']}, nodes p50 {r['nodes_p50']:.0f} max {r['nodes_max']}): "
            f"facade {ms('facade')} | HTTP {ms('http')} | HTTP overhead p50 {r['ratio_p50']:.2f}x "
            f"p95 {r['ratio_p95']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--roots", type=int, default=40, help="random tables asked, per case")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes over the roots, per case")
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--load-only", action="store_true", help="load (or find) the cached index and stop")
    args = parser.parse_args()
    shape = lineage_graph.Shape(args.elements, args.seed)
    with cached_solr(shape, args.heap) as (server, manifest):
        print(f"index: {manifest.indexed_elements:,} elements, {manifest.indexed_relations:,} relations, "
              f"{manifest.jobs:,} jobs (loaded in {manifest.load_seconds:.0f}s)", flush=True)
        if args.load_only:
            return
        directory = Path(tempfile.mkdtemp(prefix="navd-bench-api-"))
        try:
            port = free_port()
            config = write_config(server, directory, port)
            with navd_serve(config, directory, port) as url:
                roots = pick_roots(manifest, args.roots, args.seed)
                results = run_cases(config, url, roots, args.repeat)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    worst = max(float(r["ratio_p50"]) for r in results)  # type: ignore[arg-type]
    print(f"HTTP overhead (p50 ratio, worst case): {worst:.2f}x; goal <= 1.2: {'met' if worst <= 1.2 else 'NOT met'}")
    BENCH.mkdir(exist_ok=True)
    (BENCH / "api.json").write_text(json.dumps({"manifest": dataclasses.asdict(manifest), "roots": args.roots,
                                                "repeat": args.repeat, "cases": results}, indent=1))


if __name__ == "__main__":
    main()

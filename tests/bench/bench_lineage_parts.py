"""A level read in parts against the one-read walk, on the cached index of bench_lineage.py.

Run: python tests/bench/bench_lineage_parts.py [--elements 10000000] [--roots 20] [--hubs 4]
     [--caps 400,3000] [--repeat 4]

The walk takes each level in the parts the store reads (`LineageStore.related_pages`): on Solr
a level over one page is read in the walk's order and only as far as the node cap goes
(navd/lineage/store.py). The one-read walk is the same walk given each level whole
(`related`, as before the change). Per root (hubs and random tables, bench_lineage.py's fixed
seed), direction, tables or columns and node cap, both walks alternately `--repeat` times after
one untimed pair: the graphs must be identical (JSON), and each side's best time is kept. Then
p50 / p95 of the best times and the ratio of the summed times, parts / one read, per root kind
and case. Nothing is written to the index.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from navd.index.lookup import Scope, resolve_one
from navd.lineage.rules import LineageOptions, lineage
from navd.lineage.store import SolrLineageStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lineage_graph  # noqa: E402 - sibling modules of this script, not a package
from bench_lineage import CountingIndex, default_heap, hub_roots, random_roots  # noqa: E402
from lineage_index import cached_solr, percentile  # noqa: E402


def walk(index: CountingIndex, root: str, options: LineageOptions, one_read: bool) -> tuple[float, str, int]:
    """(milliseconds, the graph as JSON, Solr requests) of one walk, as the service runs it."""
    index.requests_sent = 0
    started = time.perf_counter()
    store = SolrLineageStore(index, known=[resolve_one(index, root, Scope())])
    if one_read:  # every level whole, in one part
        store.related_pages = lambda asks: iter([list(store.related(asks))])  # type: ignore[method-assign]
    graph = json.dumps(lineage(store, root, options).as_dict(), sort_keys=True)
    return (time.perf_counter() - started) * 1000, graph, index.requests_sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elements", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--roots", type=int, default=20, help="random tables")
    parser.add_argument("--hubs", type=int, default=4)
    parser.add_argument("--caps", default="400,3000", help="node caps (the page's 400, the API's 3,000)")
    parser.add_argument("--repeat", type=int, default=4, help="timed pairs per case")
    args = parser.parse_args()
    shape = lineage_graph.Shape(args.elements, args.seed)
    with cached_solr(shape, default_heap(args.elements)) as (server, manifest):
        index = CountingIndex(server.client_config())
        roots = [("hub", r) for r in hub_roots(args.hubs, args.seed)] + \
            [("random", r) for r in random_roots(manifest, args.roots, args.seed)]
        best: dict[tuple[str, str], list[tuple[float, float]]] = {}
        differ = 0
        for kind, root in roots:
            for cap in (int(c) for c in args.caps.split(",")):
                for direction in ("upstream", "downstream"):
                    for columns in (False, True):
                        options = LineageOptions(direction=direction, columns=columns, max_nodes=cap)
                        case = f"cap {cap} {direction} {'columns' if columns else 'tables'}"
                        times: dict[bool, list[float]] = {True: [], False: []}
                        graphs: dict[bool, str] = {}
                        sent: dict[bool, int] = {}
                        for rep in range(args.repeat + 1):
                            for one_read in ((True, False) if rep % 2 else (False, True)):
                                ms, graphs[one_read], sent[one_read] = walk(index, root, options, one_read)
                                if rep:
                                    times[one_read].append(ms)
                        if graphs[True] != graphs[False]:
                            differ += 1
                            print(f"DIFFERENT GRAPHS: {kind} {root} {case}", flush=True)
                        best.setdefault((kind, case), []).append((min(times[True]), min(times[False])))
                        if kind == "hub":
                            print(f"hub {root[:8]} {case}: one read {min(times[True]):.0f} ms ({sent[True]} requests),"
                                  f" in parts {min(times[False]):.0f} ms ({sent[False]})", flush=True)
        print(f"{args.elements / 1e6:g}M, best of {args.repeat} per root, p50 / p95 ms; graphs identical: "
              f"{sum(len(v) for v in best.values()) - differ} of {sum(len(v) for v in best.values())}")
        for (kind, case), pairs in best.items():
            whole, parts = [p[0] / 1000 for p in pairs], [p[1] / 1000 for p in pairs]
            print(f"  {kind:6} {case:32} one read {percentile(whole, 50) * 1000:7.1f} / "
                  f"{percentile(whole, 95) * 1000:7.1f}   in parts {percentile(parts, 50) * 1000:7.1f} / "
                  f"{percentile(parts, 95) * 1000:7.1f}   parts / one read {sum(parts) / sum(whole):.3f}  n={len(pairs)}")
        if differ:
            raise SystemExit(f"{differ} cases gave different graphs")


if __name__ == "__main__":
    main()

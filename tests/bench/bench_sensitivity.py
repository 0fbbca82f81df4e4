"""Propagating one new sensitivity level through a column lineage of 100k columns, against the
lineage walk that finds the same columns, in the same run (goal: <= 2x).

The graph (generated, loaded once through navd's IndexWriter into a cached Solr home under
.bench/solr-sensitivity-<columns>-<width>/, `manifest.json` marking it complete): one source
column feeding every column of the first of `columns / width` layers of tables (10 columns
each); column i of a layer flows into columns i and i + 1 of the next (DATA_FLOW, as the Spark
extractor writes column edges). So every column is downstream of the source.

Per round, a higher level each time (internal, confidential, pii): the walk (navd.lineage with
columns, downstream, no depth or node cap in the way), then the tag on the source and its
propagation (navd.sensitivity: reads, atomic updates of every column and table reached, the
soft commits that make them searchable). Before the rounds the previous run's levels are
withdrawn (timed and printed too: it reads the affected set and recomputes it).

    .venv/bin/python tests/bench/bench_sensitivity.py [--columns 100000] [--width 5000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lineage_index import BENCH, client_config, solr_for  # noqa: E402 - a sibling module of this script

from navd.index.admin import init_solr  # noqa: E402
from navd.index.client import IndexWriter, SolrIndex  # noqa: E402
from navd.lineage.rules import LineageOptions, lineage  # noqa: E402
from navd.lineage.store import SolrLineageStore  # noqa: E402
from navd.model import Element, ElementType, Record, Relation, RelationType, SourceType  # noqa: E402
from navd.names import hive_qualified_name, identity  # noqa: E402
from navd.sensitivity.rules import USER, Levels, Tag  # noqa: E402
from navd.sensitivity.store import SensitivityIndex, tag_document, tag_identity  # noqa: E402

CLUSTER = "bench"
COLUMNS_PER_TABLE = 10
GENERATOR_VERSION = 1


def column_name(layer: int, i: int) -> str:
    return hive_qualified_name(CLUSTER, "sens", f"t{layer}_{i // COLUMNS_PER_TABLE}", f"c{i % COLUMNS_PER_TABLE}")


def records(layers: int, width: int) -> Iterator[Record]:
    db = Element(SourceType.HIVE, ElementType.DATABASE, hive_qualified_name(CLUSTER, "sens"), name="sens")
    yield db
    source_table = Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(CLUSTER, "sens", "source"),
                           name="source", parent=db.ref)
    source = Element(SourceType.HIVE, ElementType.FIELD, hive_qualified_name(CLUSTER, "sens", "source", "secret"),
                     name="secret", parent=source_table.ref)
    yield from (source_table, source, Relation(RelationType.PARENT_CHILD, source_table.ref, source.ref))
    for layer in range(layers):
        columns: list[Element] = []
        for t in range(width // COLUMNS_PER_TABLE):
            table = Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(CLUSTER, "sens", f"t{layer}_{t}"),
                            name=f"t{layer}_{t}", parent=db.ref)
            yield table
            for c in range(COLUMNS_PER_TABLE):
                column = Element(SourceType.HIVE, ElementType.FIELD, column_name(layer, t * COLUMNS_PER_TABLE + c),
                                 name=f"c{c}", parent=table.ref)
                columns.append(column)
                yield column
                yield Relation(RelationType.PARENT_CHILD, table.ref, column.ref)
        for i, column in enumerate(columns):
            if layer == 0:
                yield Relation(RelationType.DATA_FLOW, source.ref, column.ref, discriminator="job0")
            else:
                for j in (i, (i - 1) % width):
                    upstream = Element(SourceType.HIVE, ElementType.FIELD, column_name(layer - 1, j), name="")
                    yield Relation(RelationType.DATA_FLOW, upstream.ref, column.ref, discriminator=f"job{layer}")


def load(index: SolrIndex, layers: int, width: int) -> float:
    began = time.perf_counter()
    writer = IndexWriter(index, batch_size=5000)
    writer.write_all(records(layers, width))
    if not writer.close():
        raise SystemExit("the load did not reach Solr")
    for core in ("elements", "relations"):
        index.commit(core)
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--columns", type=int, default=100_000)
    parser.add_argument("--width", type=int, default=5_000, help="columns per layer (a multiple of 10)")
    parser.add_argument("--heap", default="1g")
    args = parser.parse_args()
    layers = max(1, args.columns // args.width)
    cache = BENCH / f"solr-sensitivity-{args.columns}-{args.width}"
    manifest_path = cache / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else None
    if manifest is not None and manifest.get("generator_version") != GENERATOR_VERSION:
        manifest = None
    if manifest is None:
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
    server = solr_for(cache, args.heap)
    server.start()
    try:
        index = SolrIndex(client_config(server))
        init_solr(index)
        if manifest is None:
            print(f"loading {layers} layers x {args.width:,} columns into {cache} ...", flush=True)
            seconds = load(index, layers, args.width)
            manifest = {"generator_version": GENERATOR_VERSION, "columns": layers * args.width + 1,
                        "load_seconds": round(seconds, 1)}
            manifest_path.write_text(json.dumps(manifest))
            print(f"loaded in {seconds:.0f}s", flush=True)
        else:
            print(f"cached index {cache}", flush=True)
        return run(index, layers, args.width)
    finally:
        server.stop()


def run(index: SolrIndex, layers: int, width: int) -> int:
    levels = Levels()
    sensitivity = SensitivityIndex(index, levels)
    source_name = hive_qualified_name(CLUSTER, "sens", "source", "secret")
    source = identity(SourceType.HIVE, source_name)
    expected = layers * width + 1

    began = time.perf_counter()  # the previous run's levels withdrawn
    sensitivity.delete_tags([tag_identity(USER, source)])
    withdrawn = sensitivity.apply([source], clear=True)
    print(f"withdrawal of the previous run's level: {time.perf_counter() - began:.2f}s "
          f"({len(withdrawn.columns):,} columns, {len(withdrawn.tables):,} tables changed)", flush=True)

    options = LineageOptions(direction="downstream", depth=layers + 2, columns=True, max_nodes=10 * expected)
    ratios: list[float] = []
    rounds: list[dict[str, object]] = []
    for level in ("internal", "confidential", "pii"):
        began = time.perf_counter()
        graph = lineage(SolrLineageStore(index), source, options)
        walk = time.perf_counter() - began
        found = sum(1 for node in graph.nodes if node.type == ElementType.FIELD.value)

        began = time.perf_counter()
        sensitivity.put_tags([tag_document(Tag(source, level, USER, source_name))])
        outcome = sensitivity.apply([source])
        propagate = time.perf_counter() - began

        tagged = index.count("elements", f"type:FIELD AND sensitivity:{level}")
        if not (found == len(outcome.columns) == tagged == expected):
            print(f"MISMATCH: walk found {found:,} columns, propagation changed {len(outcome.columns):,}, "
                  f"{tagged:,} carry {level}, expected {expected:,}", flush=True)
            return 1
        ratios.append(propagate / walk)
        rounds.append({"level": level, "walk_seconds": round(walk, 3), "propagate_seconds": round(propagate, 3),
                       "columns": len(outcome.columns), "tables": len(outcome.tables)})
        print(f"{level:>12}: walk {walk:.2f}s ({found:,} columns), propagate {propagate:.2f}s "
              f"({len(outcome.columns):,} columns, {len(outcome.tables):,} tables): ratio {propagate / walk:.2f}",
              flush=True)
    median = statistics.median(ratios)
    (BENCH / "sensitivity.json").write_text(json.dumps({"columns": expected, "rounds": rounds,
                                                         "median_ratio": round(median, 3)}, indent=1))
    print(f"sensitivity propagation / lineage walk over {expected:,} columns: median ratio {median:.2f} "
          f"(goal <= 2.0): {'met' if median <= 2.0 else 'NOT met'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

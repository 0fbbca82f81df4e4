"""Where a lineage walk's level spends its time, and what other readings of the same index would
cost: a prototype measurement on the cached generated index of bench_lineage.py.

Run: python tests/bench/bench_walk_representation.py [--elements 100000] [--roots 10] [--hubs 4]
     [--depth 5] [--repeat 3]

Each case (random roots upstream / downstream with columns, hub roots downstream with tables and
with columns) is walked once through navd's lineage service while every relations-core request
the walk sends is recorded (its form: the OR of terms clauses, the `$idsN` parameters, `fl`, the
cursor). Then every recorded request is replayed, `--repeat` times each (the median kept), in
each representation, on one HTTP session, in the same run:

- select cursor: the request as navd's store sent it before (/select, cursorMark paging sorted
  by identity, `fl` of every relation field or of the endpoints only);
- select unsorted: the same `fl`, one page of `rows` = the answer's size, no sort, no cursor
  (navd's store now, which orders the page by identity in Python);
- select docValues: unsorted, `fl` of docValues fields only (no `expression`), which lets Solr
  read docValues instead of decompressing stored documents;
- select aliased: unsorted, every field under a one-letter alias in `fl` (`a:identity`), as
  the JSON repeats each field name in each document;
- export: Solr's /export handler (docValues only, streamed, sorted by identity);
- adjacency: one document per element with its out- and in-neighbours as one multi-valued
  docValues field of compact `type|subtype|farId|farType|firstSeen` strings, built by this script
  from the relations core into a throwaway core (removed at the end), read by a terms filter on
  the element ids; the types of an ask are filtered in Python.

Per representation and case: the summed wall time of the requests, Solr's QTime, bytes received
and Python's work (JSON parse, StoredRelation.from_doc or splitting the strings), and each one's
ratio to the select as recorded. Before that, per case, whole walks (`lineage(...)`) timed
root by root with the store's reads and with the cursor reads it made before, in turn.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from navd.catalog.service import lookup_scope
from navd.config import load_config
from navd.index.client import SolrIndex, batches, serialise
from navd.lineage.rules import LineageOptions
from navd.lineage.service import lineage
from navd.lineage.store import SolrLineageStore
from navd.lineage.stored import RELATION_FIELDS, StoredRelation
from navd.solr.server import effective_solr_config, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lineage_graph  # noqa: E402 - sibling modules of this script, not a package
from bench_lineage import hub_roots, random_roots  # noqa: E402
from lineage_index import cached_solr, percentile, write_config  # noqa: E402

#: the relation fields with docValues (every relation field but `expression`, a text field)
#: rows per page of the cursor scan (navd's store)
PAGE = 5000
DOCVALUE_FIELDS = ",".join(f for f in RELATION_FIELDS.split(",") if f != "expression")
#: one ask of a recorded request: its near end, its ids parameter and its relation types
_ASK = re.compile(r'\{!terms f=endpoint(\d)Id v=\$(ids\d+)\}" AND type:\(([^)]*)\)')


@dataclasses.dataclass(frozen=True)
class Recorded:
    """One relations /select the walk sent (one page of a scan)."""

    data: dict[str, Any]


class RecordingIndex(SolrIndex):
    """navd's Solr client, keeping every relations-core /select it sends."""

    relations_core = ""
    recorded: list[Recorded] = []

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        if path == f"{self.relations_core}/select" and isinstance(kwargs.get("data"), dict):
            self.recorded.append(Recorded(dict(kwargs["data"])))
        return super().request(method, path, **kwargs)


@dataclasses.dataclass
class Cost:
    wall: float = 0.0
    qtime: float = 0.0
    bytes: int = 0
    python: float = 0.0
    rows: int = 0

    def add(self, other: Cost) -> None:
        self.wall += other.wall
        self.qtime += other.qtime
        self.bytes += other.bytes
        self.python += other.python
        self.rows += other.rows


def median_cost(costs: list[Cost]) -> Cost:
    return Cost(statistics.median(c.wall for c in costs), statistics.median(c.qtime for c in costs),
                costs[0].bytes, statistics.median(c.python for c in costs), costs[0].rows)


class Replayer:
    def __init__(self, index: SolrIndex, relations: str, adjacency: str) -> None:
        self.index = index
        self.session = index.session
        self.base = index.base_url
        self.relations = relations
        self.adjacency = adjacency

    def _post(self, path: str, data: dict[str, Any]) -> tuple[float, bytes]:
        started = time.perf_counter()
        response = self.session.post(f"{self.base}/{path}", data={"wt": "json", **data},
                                     timeout=120)
        body = response.content
        wall = time.perf_counter() - started
        if response.status_code != 200:
            raise SystemExit(f"{path}: HTTP {response.status_code}: {body[:500]!r}")
        return wall, body

    def _relations(self, path: str, data: dict[str, Any], names: dict[str, str] | None = None,
                   keep: bool = False) -> Any:
        wall, body = self._post(path, data)
        started = time.perf_counter()
        parsed = json.loads(body)
        docs = parsed["response"]["docs"]
        for doc in docs:
            StoredRelation.from_doc({names[k]: v for k, v in doc.items()} if names else doc)
        python = time.perf_counter() - started
        cost = Cost(wall, float(parsed.get("responseHeader", {}).get("QTime", 0)), len(body), python, len(docs))
        return (cost, parsed) if keep else cost

    def cursor(self, ask: Recorded) -> Cost:
        """As the store read before: sorted by identity, paged with cursorMark until a short page."""
        data = {**ask.data, "sort": "identity asc", "rows": PAGE}
        total, cursor = Cost(), "*"
        while True:
            cost, body = self._relations(f"{self.relations}/select", {**data, "cursorMark": cursor}, keep=True)
            total.add(cost)
            if body["nextCursorMark"] == cursor or cost.rows < PAGE:
                return total
            cursor = body["nextCursorMark"]

    def unsorted(self, page: Recorded, rows: int, fl: str | None = None) -> Cost:
        data = {k: v for k, v in page.data.items() if k not in ("sort", "cursorMark")}
        data["rows"] = max(rows, 1)
        if fl is not None:
            data["fl"] = fl
        return self._relations(f"{self.relations}/select", data)

    def aliased(self, page: Recorded, rows: int) -> Cost:
        """Unsorted, each field under a short alias in `fl` (`a:endpoint1Id`): the JSON repeats
        every field name in every document."""
        data = {k: v for k, v in page.data.items() if k not in ("sort", "cursorMark")}
        data["rows"] = max(rows, 1)
        names = {_alias(n): field for n, field in enumerate(str(data["fl"]).split(","))}
        data["fl"] = ",".join(f"{alias}:{field}" for alias, field in names.items())
        return self._relations(f"{self.relations}/select", data, names)

    def export(self, page: Recorded) -> Cost:
        data = {k: v for k, v in page.data.items() if k not in ("rows", "cursorMark")}
        data["sort"] = "identity asc"
        data["fl"] = DOCVALUE_FIELDS if data["fl"] == RELATION_FIELDS else data["fl"]
        return self._relations(f"{self.relations}/export", data)

    def adjacent(self, page: Recorded) -> Cost:
        """The same asks answered from the adjacency documents."""
        by_end: dict[int, list[tuple[list[str], set[str]]]] = defaultdict(list)
        for ask in _ASK.finditer(str(page.data["fq"][0])):
            by_end[int(ask.group(1))].append((str(page.data[ask.group(2)]).split(","),
                                              set(ask.group(3).split(" OR "))))
        if not by_end:
            raise SystemExit(f"no ask read from {page.data['fq'][0][:300]}")
        total = Cost()
        for end, asks in by_end.items():
            field = "out" if end == 1 else "in"
            ids = sorted({i for chunk, _ in asks for i in chunk})
            wall, body = self._post(f"{self.adjacency}/select", {
                "q": "*:*", "fq": "{!terms f=id v=$ids}", "ids": ",".join(ids), "rows": len(ids),
                "fl": f"id,{field}"})
            started = time.perf_counter()
            parsed = json.loads(body)
            wanted = {i: types for chunk, types in asks for i in chunk}
            rows = 0
            for doc in parsed["response"]["docs"]:
                types = wanted.get(doc["id"], set())
                for value in doc.get(field, ()):
                    kind, subtype, far, far_type, first = value.split("|")
                    if kind in types:
                        rows += 1
            python = time.perf_counter() - started
            total.add(Cost(wall, float(parsed["responseHeader"]["QTime"]), len(body), python, rows))
        return total


def _alias(n: int) -> str:
    return chr(ord("a") + n) if n < 26 else f"z{n}"


# -- the adjacency core ----------------------------------------------------------------------------

_ADJACENCY_SCHEMA = """<?xml version="1.0" encoding="UTF-8" ?>
<schema name="bench_adjacency" version="1.6">
  <uniqueKey>id</uniqueKey>
  <field name="_version_" type="plong" indexed="false" stored="false"/>
  <field name="id" type="string" indexed="true" stored="true" required="true"/>
  <field name="out" type="string" indexed="false" stored="false" multiValued="true"/>
  <field name="in" type="string" indexed="false" stored="false" multiValued="true"/>
  <fieldType name="string" class="solr.StrField" docValues="true"/>
  <fieldType name="plong" class="solr.LongPointField" docValues="true"/>
</schema>
"""


def adjacency_value(kind: str, subtype: str, far: str, far_type: str, first: str) -> str:
    return "|".join((kind, subtype, far, far_type, first))


def build_adjacency(index: SolrIndex, home: Path, name: str) -> float:
    """Create the throwaway core `name` and fill it from the relations core; seconds taken."""
    started = time.perf_counter()
    status = index.request("GET", "admin/cores", params={"action": "STATUS", "core": name}, what="core status")
    if status.get("status", {}).get(name):  # left by an interrupted run
        drop_adjacency(index, name)
    instance = home / name
    shutil.rmtree(instance, ignore_errors=True)
    (instance / "conf").mkdir(parents=True)
    (instance / "conf" / "schema.xml").write_text(_ADJACENCY_SCHEMA)
    relations_conf = home / index.core("relations") / "conf" / "solrconfig.xml"
    shutil.copy(relations_conf, instance / "conf" / "solrconfig.xml")
    index.request("GET", "admin/cores", params={"action": "CREATE", "name": name, "instanceDir": str(instance)},
                  what="create the adjacency core")
    out: dict[str, list[str]] = defaultdict(list)
    into: dict[str, list[str]] = defaultdict(list)
    # The prototype groups in memory (200k relations at 100k elements); a real rebuild streams
    # the relations sorted by endpoint instead.
    body = index.request("POST", f"{index.core('relations')}/export", data={
        "q": "*:*", "sort": "identity asc",
        "fl": "type,endpoint1Id,endpoint2Id,endpoint1Type,endpoint2Type,prop_subtype,firstSeen"},
        what="export relations")
    for doc in body["response"]["docs"]:
        subtype = str(doc.get("prop_subtype", ""))
        first = str(doc.get("firstSeen", ""))
        out[doc["endpoint1Id"]].append(adjacency_value(doc["type"], subtype, doc["endpoint2Id"],
                                                       str(doc.get("endpoint2Type", "")), first))
        into[doc["endpoint2Id"]].append(adjacency_value(doc["type"], subtype, doc["endpoint1Id"],
                                                        str(doc.get("endpoint1Type", "")), first))
    docs = ({"id": element, **({"out": out[element]} if element in out else {}),
             **({"in": into[element]} if element in into else {})} for element in set(out) | set(into))
    for batch in batches(docs, 5000):
        index.request("POST", f"{name}/update", data=serialise(batch),
                      headers={"Content-Type": "application/json"}, what="add adjacency documents")
    index.request("GET", f"{name}/update", params={"commit": "true"}, what="commit the adjacency core")
    return time.perf_counter() - started


def drop_adjacency(index: SolrIndex, name: str) -> None:
    index.request("GET", "admin/cores", params={"action": "UNLOAD", "core": name, "deleteInstanceDir": "true"},
                  what="unload the adjacency core")


# -- the cases ---------------------------------------------------------------------------------------

def asks(recorded: list[Recorded]) -> list[Recorded]:
    """The walk's relation reads: the store's first request of each (a larger page or a cursor
    scan that follows it, when the first page did not hold the answer, reads the same again)."""
    return [page for page in recorded if "cursorMark" not in page.data and int(page.data["rows"]) <= PAGE]


def measure_case(replay: Replayer, recorded: list[Recorded], repeat: int) -> dict[str, Cost]:
    variants: dict[str, Callable[[Recorded, int], Cost]] = {
        "select cursor": lambda ask, rows: replay.cursor(ask),
        "select unsorted": lambda ask, rows: replay.unsorted(ask, rows),
        "select docValues": lambda ask, rows: replay.unsorted(ask, rows, DOCVALUE_FIELDS
                                                              if ask.data["fl"] == RELATION_FIELDS else None),
        "select aliased": lambda ask, rows: replay.aliased(ask, rows),
        "export": lambda ask, rows: replay.export(ask),
        "adjacency": lambda ask, rows: replay.adjacent(ask),
    }
    totals = {name: Cost() for name in variants}
    for ask in asks(recorded):
        rows = replay.cursor(ask).rows
        for name, variant in variants.items():
            totals[name].add(median_cost([variant(ask, rows) for _ in range(repeat)]))
    return totals


def cursor_reads(store: SolrLineageStore, fields: str, filters: list[str],
                 params: dict[str, str]) -> list[dict[str, Any]]:
    """The store's relation reads as they were: a cursor scan sorted by identity."""
    return list(store.index.scan("relations", "*:*", fl=fields, filters=filters, page_size=PAGE, params=params))


def walks(index: RecordingIndex, roots: list[str], options: LineageOptions, scope: Any,
          repeat: int) -> dict[str, list[float]]:
    """Whole walks, timed root by root with the cursor reads and the store's reads in turn
    (which first alternating): the same roots, the same moment of the host's load."""
    unsorted = SolrLineageStore._relation_docs
    seconds: dict[str, list[float]] = {"cursor": [], "unsorted": []}
    for n in range(repeat):
        for i, root in enumerate(roots):
            order = [("cursor", cursor_reads), ("unsorted", unsorted)]
            for name, reads in (order if (i + n) % 2 else order[::-1]):
                SolrLineageStore._relation_docs = reads  # type: ignore[method-assign]
                try:
                    started = time.perf_counter()
                    lineage(index, root, options, scope).as_dict()
                    seconds[name].append(time.perf_counter() - started)
                finally:
                    SolrLineageStore._relation_docs = unsorted  # type: ignore[method-assign]
    return seconds


def _sum(costs: Any) -> Cost:
    total = Cost()
    for cost in costs:
        total.add(cost)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=100000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--roots", type=int, default=10)
    parser.add_argument("--hubs", type=int, default=4)
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--walks-only", action="store_true",
                        help="only the whole walks, cursor against unsorted reads (no adjacency core)")
    args = parser.parse_args()
    shape = lineage_graph.Shape(args.elements, args.seed)
    adjacency = "bench_adjacency"
    with cached_solr(shape, "2g") as (server, manifest):
        directory = Path(tempfile.mkdtemp(prefix="navd-bench-walk-"))
        try:
            config = load_config(str(write_config(server, directory, free_port())), environ={})
            scope = lookup_scope(config)
            with SolrIndex(server.client_config()) as admin:
                try:
                    if not args.walks_only:
                        built = build_adjacency(admin, server.home, adjacency)
                        print(f"adjacency core built in {built:.1f} s", flush=True)
                    solr = dataclasses.replace(effective_solr_config(config, read_only=True), retries=0)
                    with RecordingIndex(solr) as index:
                        index.relations_core = index.core("relations")
                        replay = Replayer(admin, index.core("relations"), adjacency)
                        cases = [("random", "upstream", True), ("random", "downstream", True),
                                 ("hub", "downstream", False), ("hub", "downstream", True)]
                        roots = {"random": random_roots(manifest, args.roots, args.seed),
                                 "hub": hub_roots(args.hubs, args.seed)}
                        for kind, direction, columns in cases:
                            options = LineageOptions(direction=direction, depth=args.depth,  # type: ignore[arg-type]
                                                     columns=columns, max_nodes=config.server.max_nodes)
                            label = f"{kind} depth {args.depth} {direction} {'columns' if columns else 'tables'}"
                            index.recorded = []
                            for root in roots[kind]:
                                lineage(index, root, options, scope).as_dict()
                            recorded = list(index.recorded)
                            timed = walks(index, roots[kind], options, scope, args.repeat)
                            p = {name: (percentile(t, 50) * 1000, percentile(t, 95) * 1000) for name, t in timed.items()}
                            print(f"{label} walks: cursor p50 {p['cursor'][0]:.1f} p95 {p['cursor'][1]:.1f} ms, "
                                  f"unsorted p50 {p['unsorted'][0]:.1f} p95 {p['unsorted'][1]:.1f} ms, ratio p50 "
                                  f"{p['unsorted'][0] / p['cursor'][0]:.2f} p95 {p['unsorted'][1] / p['cursor'][1]:.2f} "
                                  f"(n={len(timed['unsorted'])})", flush=True)
                            if args.walks_only:
                                continue
                            totals = measure_case(replay, recorded, args.repeat)
                            base = totals["select cursor"]
                            print(f"{label}: {len(asks(recorded))} relation reads over {len(roots[kind])} roots, "
                                  f"{base.rows:,} relations", flush=True)
                            for name, cost in totals.items():
                                print(f"  {name:<17} wall {cost.wall * 1000:8.1f} ms ({cost.wall / base.wall:5.2f})  "
                                      f"QTime {cost.qtime:7.0f} ms ({cost.qtime / max(base.qtime, 1):5.2f})  "
                                      f"python {cost.python * 1000:7.1f} ms ({cost.python / base.python:5.2f})  "
                                      f"bytes {cost.bytes / 1e6:6.2f} MB  rows {cost.rows:,}", flush=True)
                finally:
                    if not args.walks_only:
                        drop_adjacency(admin, adjacency)
        finally:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

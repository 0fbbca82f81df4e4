"""The lineage rules without Solr: each case of tests/lineage_cases.py walked over the in-memory
store, asserting every node and edge shown; the relation table the walk reads; and the store
itself built the way the index writer writes."""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import datetime, timedelta

import pytest
from lineage_cases import CASES, DAY, Case, Graph, at, expected_nodes, history, shown, start_name, tree

from navd.errors import EntityNotFound, UsageError
from navd.lineage.memory_store import MemoryLineageStore
from navd.lineage.rules import (
    LineageGraph,
    LineageOptions,
    changes,
    lineage,
    render_changes,
    render_text,
    walked_queries,
)

DB = "rules"


@pytest.mark.parametrize("part", [None, 1], ids=["one-read", "relation-by-relation"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule(case: Case, part: int | None) -> None:
    graph = case.graph(DB)
    store = MemoryLineageStore.of(graph.records)
    store.part = part  # a store reading each answer in parts (Solr, a hub's level) shows the same
    result = lineage(store, start_name(case, graph, DB), case.options)
    nodes, edges = shown(result, graph.labels)
    assert edges == case.edges
    assert nodes == expected_nodes(case)
    assert result.truncated is case.truncated
    assert graph.labels[result.root] == case.start


@pytest.mark.parametrize("part", [1, 2, 5])
@pytest.mark.parametrize("max_nodes", [4, 9, 3000])
@pytest.mark.parametrize("columns", [False, True])
def test_the_walk_is_the_same_whatever_parts_the_store_reads_in(part: int, max_nodes: int, columns: bool) -> None:
    """A store reads a large answer in parts (a hub's level on Solr, page by page) so the walk
    can stop at its cap without the rest: the graph, cut nodes included, is the one-read walk's."""
    from lineage_cases import fan_out  # noqa: PLC0415

    graph = fan_out(DB, 12)
    options = LineageOptions(direction="downstream", columns=columns, max_nodes=max_nodes)
    whole = lineage(MemoryLineageStore.of(graph.records), graph.identity("root"), options)
    parts = MemoryLineageStore.of(graph.records)
    parts.part = part
    assert lineage(parts, graph.identity("root"), options) == whole
    assert whole.truncated is (max_nodes < 3000)


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 25
    assert len({c.id for c in CASES}) == len(CASES)


def test_missing_start_entity() -> None:
    with pytest.raises(EntityNotFound, match="no element with identity or qualifiedName 'nope@primary'"):
        lineage(MemoryLineageStore(), "nope@primary")


def test_walked_queries_follow_the_relation_table() -> None:
    def shape(direction: str, **flags: bool) -> list[tuple[tuple[str, ...], int, str | None]]:
        return [(q.types, q.near_end, q.both_ends) for q in walked_queries(direction, **flags)]

    assert shape("upstream", columns=False, operations=False) == [
        (("DATA_FLOW",), 2, None), (("LOGICAL_PHYSICAL",), 2, None), (("PARENT_CHILD",), 1, "OPERATION_EXECUTION")]
    assert shape("downstream", columns=False, operations=True) == [
        (("DATA_FLOW",), 1, None), (("LOGICAL_PHYSICAL",), 2, None), (("PARENT_CHILD",), 1, "OPERATION_EXECUTION"),
        (("INSTANCE_OF",), 2, None)]
    assert shape("upstream", columns=True, operations=True) == [(("DATA_FLOW", "CONTROL_FLOW"), 2, None)]


def test_the_walk_does_not_change_the_store() -> None:
    graph = CASES[0].graph(DB)
    store = MemoryLineageStore.of(graph.records)
    before = (dict(store.elements(graph.labels)), sorted(r.id for r in store.relations(
        graph.labels, ("DATA_FLOW", "PARENT_CHILD", "INSTANCE_OF", "CONTROL_FLOW"), 1)))
    lineage(store, graph.identity("t"), LineageOptions(columns=True, operations=True, deleted=True))
    after = (dict(store.elements(graph.labels)), sorted(r.id for r in store.relations(
        graph.labels, ("DATA_FLOW", "PARENT_CHILD", "INSTANCE_OF", "CONTROL_FLOW"), 1)))
    assert before == after


def test_render_text() -> None:
    graph = CASES[0].graph(DB)
    store = MemoryLineageStore.of(graph.records)
    text = render_text(lineage(store, graph.identity("t"), LineageOptions(direction="upstream")))
    assert text.splitlines() == [
        f"{DB}.t@primary (HIVE TABLE)",
        f"  {DB}.s@primary (HIVE TABLE) -> {DB}.t@primary (HIVE TABLE)  [DATA_FLOW]"]
    alone = render_text(lineage(store, graph.identity("s"), LineageOptions(direction="upstream")))
    assert alone.splitlines() == [f"{DB}.s@primary (HIVE TABLE)", "  (no lineage)"]


@pytest.mark.parametrize("operations", [False, True])
@pytest.mark.parametrize("max_nodes", [3, 5, 8, 11])
def test_the_node_cap_marks_the_nodes_it_cut(max_nodes: int, operations: bool) -> None:
    """Every shown node with a neighbour the cap left out says `cut` (the page offers "show
    more" on it); a node whose neighbours were all walked does not."""
    graph = tree(DB)
    store = MemoryLineageStore.of(graph.records)
    options = LineageOptions(direction="upstream", operations=operations)
    whole = lineage(store, graph.identity("root"), options)
    capped = lineage(store, graph.identity("root"), dataclasses.replace(options, max_nodes=max_nodes))
    assert not any(n.cut for n in whole.nodes) and not whole.truncated
    assert capped.truncated

    def neighbours(result: LineageGraph) -> dict[str, set[str]]:
        around: dict[str, set[str]] = {n.id: set() for n in result.nodes}
        for edge in result.edges:
            around[edge.source].add(edge.target)
            around[edge.target].add(edge.source)
        return around

    complete, partial = neighbours(whole), neighbours(capped)
    missing = {graph.labels[n] for n in partial if partial[n] != complete[n]}
    cut = {graph.labels[n.id] for n in capped.nodes if n.cut}
    assert missing and missing <= cut
    assert "root" not in cut or max_nodes < 5  # the root's own inputs fit from 5 nodes on
    assert all(n.as_dict().get("cut") is (True if n.cut else None) for n in capped.nodes)


def test_a_cap_reached_while_columns_are_queued_marks_only_shown_nodes() -> None:
    """Columns queued for the walk but reached by no relation before the cap are not nodes."""
    from lineage_cases import pipeline  # noqa: PLC0415

    graph = pipeline(DB)
    store = MemoryLineageStore.of(graph.records)
    for max_nodes in (1, 2, 3):
        capped = lineage(store, graph.identity("u"), LineageOptions(columns=True, max_nodes=max_nodes))
        assert capped.truncated and {n.id for n in capped.nodes if n.cut} <= {n.id for n in capped.nodes}


def test_the_root_is_not_cut_once_its_inputs_are_walked() -> None:
    graph = tree(DB)
    store = MemoryLineageStore.of(graph.records)
    capped = lineage(store, graph.identity("root"), LineageOptions(direction="upstream", max_nodes=6))
    cut = {graph.labels[n.id] for n in capped.nodes if n.cut}
    shown_labels = {graph.labels[n.id] for n in capped.nodes}
    assert {"a", "b", "c"} <= shown_labels and "root" not in cut and cut <= {"a", "b", "c", "a1", "a2", "b1", "b2"}
    assert cut


def test_columns_name_their_dataset() -> None:
    """The page draws a column inside its table: column nodes carry `parent`, others do not."""
    from lineage_cases import pipeline  # noqa: PLC0415

    graph = pipeline(DB)
    store = MemoryLineageStore.of(graph.records)
    result = lineage(store, graph.identity("t"), LineageOptions(direction="upstream", columns=True))
    parents = {graph.labels[n.id]: graph.labels.get(n.parent or "") for n in result.nodes}
    assert parents == {"t": None, "s": None, "t.u": "t", "s.c": "s", "s.k": "s"}
    assert result.as_dict()["nodes"][0].get("parent") is None
    assert {n["parent"] for n in result.as_dict()["nodes"] if n["type"] == "FIELD"} == {graph.identity("t"),
                                                                                       graph.identity("s")}


class CountingStore:
    """A store that counts what the walk asks of it: each call is one round trip on Solr."""

    def __init__(self, store: MemoryLineageStore) -> None:
        self.store = store
        self.calls = 0

    def find(self, entity: str):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.store.find(entity)

    def elements(self, ids):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.store.elements(ids)

    def relations(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.store.relations(*args, **kwargs)

    def related(self, asks):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.store.related(asks)

    def related_pages(self, asks):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.store.related_pages(asks)


@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize("direction", ["upstream", "downstream"])
def test_round_trips_grow_with_levels_not_with_width(columns: bool, direction: str) -> None:
    """The walk asks the store once per level (and once more per level for the columns of the
    level's new tables), however many nodes the level holds."""
    from lineage_cases import fan_out  # noqa: PLC0415

    calls = {}
    for width in (2, 20):
        graph = fan_out(DB, width)
        store = CountingStore(MemoryLineageStore.of(graph.records))
        start = "root" if direction == "downstream" else f"l3_{width - 1}"
        result = lineage(store, graph.identity(start), LineageOptions(direction=direction, columns=columns))
        assert len(result.nodes) > (3 * width if direction == "downstream" else 3)
        calls[width] = store.calls
    # 3 layers of table -> execution -> table: 6 levels and the last, empty one; with columns
    # each level also asks for the columns of the tables it reached, and the root's columns
    # are asked first; then the nodes' elements (and the columns' tables).
    levels = 7
    assert calls[2] == calls[20] <= 1 + levels * (2 if columns else 1) + (1 if columns else 0) + 2


class RoundCountingStore(CountingStore):
    """Counts round trips as a reader waits for them: calls in flight at the same time (each
    held `hold` seconds, as a request to Solr takes time) count as one round."""

    def __init__(self, store: MemoryLineageStore, hold: float = 0.1) -> None:
        super().__init__(store)
        self.rounds = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._hold = hold

    def _timed(self, call):  # type: ignore[no-untyped-def]
        with self._lock:
            if self._in_flight == 0:
                self.rounds += 1
            self._in_flight += 1
        try:
            time.sleep(self._hold)
            return call()
        finally:
            with self._lock:
                self._in_flight -= 1

    def elements(self, ids):  # type: ignore[no-untyped-def]
        return self._timed(lambda: super(RoundCountingStore, self).elements(ids))

    def relations(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return self._timed(lambda: list(super(RoundCountingStore, self).relations(*args, **kwargs)))

    def related(self, asks):  # type: ignore[no-untyped-def]
        return self._timed(lambda: list(super(RoundCountingStore, self).related(asks)))

    def related_pages(self, asks):  # type: ignore[no-untyped-def]
        return self._timed(lambda: list(super(RoundCountingStore, self).related_pages(asks)))


@pytest.mark.parametrize("columns", [False, True])
def test_latest_downstream_waits_for_no_more_round_trips_than_the_plain_walk(columns: bool) -> None:
    """The one ask more of `latest` downstream (the writers of the datasets reached) is in
    flight together with the read of the nodes' elements, which the plain walk waits for after
    its last level: the reader waits for as many round trips either way."""
    from lineage_cases import fan_out  # noqa: PLC0415

    graph = fan_out(DB, 3)
    rounds, calls = {}, {}
    for latest in (False, True):
        store = RoundCountingStore(MemoryLineageStore.of(graph.records))
        lineage(store, graph.identity("root"), LineageOptions(direction="downstream", columns=columns, latest=latest))
        rounds[latest], calls[latest] = store.rounds, store.calls
    # the writers' ask: made, and counted (with columns, in the request of the columns' datasets)
    assert calls[True] == calls[False] + (0 if columns else 1)
    assert rounds[True] == rounds[False]


@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize("direction", ["upstream", "downstream"])
def test_latest_asks_the_store_at_most_once_more_than_the_plain_walk(columns: bool, direction: str) -> None:
    """Only each dataset's latest run: walking downstream, a level's writes come from the
    executions of the level before, so the other writers of the datasets reached are asked for
    once for the whole walk, not once per level; walking upstream they are among the hops."""
    from lineage_cases import fan_out  # noqa: PLC0415

    graph = fan_out(DB, 5)
    start = "root" if direction == "downstream" else "l3_4"
    calls, shown_graphs = {}, {}
    for latest in (False, True):
        store = CountingStore(MemoryLineageStore.of(graph.records))
        result = lineage(store, graph.identity(start), LineageOptions(direction=direction, columns=columns,
                                                                      latest=latest))
        calls[latest], shown_graphs[latest] = store.calls, result
    assert shown_graphs[True] == shown_graphs[False]  # no run is older than another here
    assert calls[True] <= calls[False] + 1


# -- what changed between two moments ---------------------------------------------------------

def _changes(start: str, since: datetime, until: datetime, **options: object) -> tuple[dict[str, object], Graph]:
    graph = history(DB)
    found = changes(MemoryLineageStore.of(graph.records), graph.identity(start), since, until,
                    LineageOptions(**options))  # type: ignore[arg-type]
    return found.as_dict(), graph


def _edges(shown: list[dict[str, object]], graph: Graph) -> set[str]:
    return {f"{graph.labels[str(e['source'])]} -> {graph.labels[str(e['target'])]}" for e in shown}


@pytest.mark.parametrize(("since", "until", "appeared", "disappeared", "deleted"), [
    (at(1, 9), at(1), {"a -> b"}, set(), set()),  # the first run
    (at(1), at(2), set(), set(), set()),  # run2 ran the same job again
    (at(2), at(3), {"c -> b"}, {"a -> b"}, set()),  # the job rewritten to read c
    (at(3), at(5), set(), set(), {"a"}),  # a dropped: no longer an input of b's latest run anyway
    (at(1, 9), at(5), {"c -> b"}, set(), {"a"}),
    (at(2), at(2), set(), set(), set()),
])
def test_changes_between_two_moments(since: datetime, until: datetime, appeared: set[str], disappeared: set[str],
                                     deleted: set[str]) -> None:
    found, graph = _changes("b", since, until, direction="upstream")
    assert _edges(found["appeared"], graph) == appeared  # type: ignore[arg-type]
    assert _edges(found["disappeared"], graph) == disappeared  # type: ignore[arg-type]
    assert {graph.labels[n] for n in found["deleted"]} == deleted  # type: ignore[union-attr]


def test_changes_name_the_executions_and_times_of_each_edge() -> None:
    found, graph = _changes("b", at(2), at(3), direction="upstream")
    [gone] = found["disappeared"]  # type: ignore[misc]
    # a -> b was last seen with run2's end, shown by run1 and run2
    assert gone["lastSeen"] == (DAY[1] + timedelta(minutes=5)).isoformat()
    assert {graph.labels[e["id"]] for e in gone["executions"]} == {"run1", "run2"}
    [new] = found["appeared"]  # type: ignore[misc]
    assert new["firstSeen"] == DAY[2].isoformat()
    assert [graph.labels[e["id"]] for e in new["executions"]] == ["run3"]
    assert "+ " in render_changes(changes(MemoryLineageStore.of(graph.records), graph.identity("b"), at(2), at(3)))


def test_changes_until_before_since_is_refused() -> None:
    graph = history(DB)
    with pytest.raises(UsageError, match="until 2026-11-01T12:00:00[+]00:00 is before since"):
        changes(MemoryLineageStore.of(graph.records), graph.identity("b"), at(2), at(1))


def test_the_columns_datasets_are_asked_while_the_nodes_elements_are_read() -> None:
    """After the last level, the nodes' elements and the columns' datasets are two asks in
    flight at once: the reader waits for one round trip, not two."""
    from lineage_cases import fan_out  # noqa: PLC0415

    graph = fan_out(DB, 3)
    store = RoundCountingStore(MemoryLineageStore.of(graph.records))
    result = lineage(store, graph.identity("root"), LineageOptions(direction="downstream", columns=True))
    assert sum(1 for n in result.nodes if n.parent) > 9
    # every call is a round trip but the root's `find` (not timed here) and the one in flight
    # beside another
    assert store.rounds == store.calls - 2

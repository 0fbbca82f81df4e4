"""The hub cache of lineage graphs (navd/lineage/hub_cache.py) over the real Solr: the same answers
as without it, a written edge shown at once, fewer requests for a repeated hub query."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest
from lineage_cases import CASES, Case, fan_out, start_name
from test_lineage import index_all

from navd.config import LineageConfig
from navd.index.client import SolrIndex
from navd.lineage.hub_cache import HubCache
from navd.lineage.rules import LineageGraph, LineageOptions, Node
from navd.model import Deletion, Element, ElementType, Relation, RelationType, SourceType, hive_qualified_name, \
    operation_qualified_name
from navd.lineage.service import lineage

DOWNSTREAM = LineageOptions(direction="downstream", columns=True)


class Requests:
    """Counts the Solr requests a query sends (each one a round trip)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent = 0
        send = SolrIndex.request

        def counted(client: SolrIndex, method: str, path: str, **kwargs: object) -> dict[str, object]:
            self.sent += 1
            return send(client, method, path, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(SolrIndex, "request", counted)

    def of(self, call: object) -> tuple[LineageGraph, int]:
        before = self.sent
        graph = call()  # type: ignore[operator]
        return graph, self.sent - before


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_cases_answer_the_same_from_the_cache(index: SolrIndex, unique: str, case: Case) -> None:
    """Every rule case, with every root a hub (hub_min_degree 1): the walk once without the
    cache, then three times with it (the first tells the hub, the second stores, the third reads)."""
    graph = case.graph(unique)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    start = start_name(case, graph, unique)
    walked = lineage(index, start, case.options)
    hubs = HubCache(LineageConfig(hub_min_degree=1))
    answers = [lineage(index, start, case.options, hubs=hubs) for _ in range(3)]
    assert answers == [walked] * 3
    if walked.edges:  # a root with relations of its own is a hub here: the third answer was cached
        assert hubs.hits == 1 and len(hubs) == 1


def test_a_written_edge_of_a_hub_is_shown_at_once(index: SolrIndex, unique: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    graph = fan_out(unique, 12)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    hubs = HubCache(LineageConfig(hub_min_degree=10))
    root = graph.identity("root")
    first = [lineage(index, root, DOWNSTREAM, hubs=hubs) for _ in range(3)][-1]
    assert hubs.hits == 1

    # One more job reads the hub and writes a new table: its next answer shows it.
    source = next(r for r in graph.records if isinstance(r, Element) and r.identity == root)
    target = Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name("primary", unique, "late"), name="late")
    job = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                  operation_qualified_name(SourceType.SPARK, f"{unique}_late", "1"), name="late")
    index_all(index, [target, job, Relation(RelationType.DATA_FLOW, source.ref, job.ref),
                      Relation(RelationType.DATA_FLOW, job.ref, target.ref)])
    after = lineage(index, root, DOWNSTREAM, hubs=hubs)
    assert target.identity in {n.id for n in after.nodes} - {n.id for n in first.nodes}
    assert hubs.hits == 1  # walked again, not read from the cache
    assert after == lineage(index, root, DOWNSTREAM)


def test_an_element_flagged_deleted_in_a_hub_graph_is_shown_at_once(index: SolrIndex, unique: str) -> None:
    """An atomic update (the deletion flag) changes no document count: the highest `_version_`
    tells the cache."""
    graph = fan_out(unique, 12)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    hubs = HubCache(LineageConfig(hub_min_degree=10))
    root = graph.identity("root")
    first = [lineage(index, root, DOWNSTREAM, hubs=hubs) for _ in range(3)][-1]
    assert hubs.hits == 1
    gone = graph.identity("l1_0")
    element = next(r for r in graph.records if isinstance(r, Element) and r.identity == gone)
    index_all(index, [Deletion(element.ref, datetime.now(UTC))])
    after = lineage(index, root, DOWNSTREAM, hubs=hubs)
    assert gone in {n.id for n in first.nodes} and gone not in {n.id for n in after.nodes}
    assert hubs.hits == 1 and after == lineage(index, root, DOWNSTREAM)


def test_a_repeated_hub_query_sends_fewer_requests(index: SolrIndex, unique: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    graph = fan_out(unique, 12)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    hubs = HubCache(LineageConfig(hub_min_degree=10))
    counter = Requests(monkeypatch)
    root = graph.identity("root")
    uncached, walk = counter.of(lambda: lineage(index, root, DOWNSTREAM))
    (told, first), (stored, second), (read, third) = [
        counter.of(lambda: lineage(index, root, DOWNSTREAM, hubs=hubs)) for _ in range(3)]
    assert told == stored == read == uncached
    assert first == walk  # the first query only tells that the root is a hub: no extra request
    assert second == walk + 2  # the generation (both cores) is read before the walk
    assert third == 3 < walk  # the root's name, the generation: no walk
    # A table that is no hub (read by one job) is walked every time, at no extra cost.
    leaf = graph.identity("l1_0")
    assert [counter.of(lambda: lineage(index, leaf, DOWNSTREAM, hubs=hubs))[1] for _ in range(3)] == \
        [counter.of(lambda: lineage(index, leaf, DOWNSTREAM))[1]] * 3
    assert hubs.hits == 1


def graph_of(root: str, size: int) -> LineageGraph:
    nodes = tuple(Node(f"{root}{i}", f"q{i}", "TABLE", "HIVE", f"n{i}", False, True) for i in range(size))
    return LineageGraph(root, nodes, ())


def test_the_cache_is_bounded_by_entries_items_and_age() -> None:
    now = [0.0]
    hubs = HubCache(LineageConfig(hub_cache_entries=2, hub_cache_items=10, hub_min_degree=5, hub_cache_seconds=60),
                    clock=lambda: now[0])
    options = LineageOptions()
    generation = ((1, 1), (1, 1))
    assert hubs.get("a", options, generation) is None
    for root, size in (("a", 4), ("b", 4), ("c", 4)):
        hubs.put(root, options, 5, graph_of(root, size), generation)
    assert len(hubs) == 2 and hubs.get("a", options, generation) is None  # the oldest went first
    hubs.put("d", options, 5, graph_of("d", 11), generation)  # larger than every item allowed
    assert hubs.get("d", options, generation) is None and hubs.is_hub("d", options)
    hubs.put("e", options, 4, graph_of("e", 1), generation)  # below hub_min_degree: not even a hub
    assert not hubs.is_hub("e", options) and hubs.get("e", options, generation) is None
    assert hubs.get("c", options, generation) == graph_of("c", 4)
    now[0] = 61
    assert hubs.get("c", options, generation) is None  # too old
    hubs.put("c", options, 5, graph_of("c", 4), generation)
    assert hubs.get("c", options, ((1, 1), (2, 2))) is None and len(hubs) == 0  # the index changed
    hubs.put("c", options, 5, graph_of("c", 4), generation)  # read before the change: not stored
    assert len(hubs) == 0


def test_no_cache_when_switched_off(index: SolrIndex, unique: str) -> None:
    graph = fan_out(unique, 12)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    hubs = HubCache(dataclasses.replace(LineageConfig(), hub_cache_entries=0, hub_min_degree=1))
    for _ in range(3):
        lineage(index, graph.identity("root"), DOWNSTREAM, hubs=hubs)
    assert len(hubs) == 0 and hubs.hits == 0 and not hubs.enabled


def test_the_server_keeps_one_cache_for_its_requests(index: SolrIndex, unique: str) -> None:
    """`[lineage]` configures the server's cache; `/api/lineage` answers a hub's third query from it."""
    from fastapi.testclient import TestClient  # noqa: PLC0415

    from navd.config import parse_config  # noqa: PLC0415
    from navd.server.app import create_app  # noqa: PLC0415

    graph = fan_out(unique, 12)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    config = parse_config({"lineage": {"hub_min_degree": 10, "hub_cache_entries": 8}})
    app = create_app(config, index)
    params = {"entity": graph.identity("root"), "direction": "downstream", "columns": "true"}
    with TestClient(app, base_url="http://127.0.0.1") as client:  # a Host the server has
        answers = [client.get("/api/lineage", params=params) for _ in range(3)]
    assert [a.status_code for a in answers] == [200] * 3
    assert answers[0].json() == answers[2].json() == lineage(index, graph.identity("root"), DOWNSTREAM).as_dict()
    assert app.state.hubs.hits == 1 and app.state.hubs.settings.hub_cache_entries == 8

"""The benchmarks' generated lineage graph (tests/bench/lineage_graph.py), without Solr: what a
seed makes is always the same, the counts the benchmark relies on match the records, and the
graph has the shape the API benchmark's figures depend on (hubs, temporaries, unlinked inputs)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
import lineage_graph as graph  # noqa: E402 - a module of the benchmarks' directory, not a package

from navd.model import Element, ElementType, Relation, RelationType  # noqa: E402

SHAPE = graph.Shape(elements=30_000, seed=7)


def _all() -> list[object]:
    return list(graph.records(SHAPE))


def test_a_seed_always_makes_the_same_graph_and_another_seed_another() -> None:
    first = [r.identity for r in _all() if isinstance(r, (Element, Relation))]
    again = [r.identity for r in graph.records(SHAPE) if isinstance(r, (Element, Relation))]
    other = [r.identity for r in graph.records(graph.Shape(SHAPE.elements, seed=8))
             if isinstance(r, (Element, Relation))]
    assert first == again and first != other


def test_counts_without_records_match_the_records() -> None:
    records = _all()
    elements = sum(isinstance(r, Element) for r in records)
    relations = sum(isinstance(r, Relation) for r in records)
    jobs = graph.jobs_for(SHAPE)
    assert sum(graph.job_counts(SHAPE.seed, t)[0] for t in range(jobs)) == elements >= SHAPE.elements
    assert sum(graph.job_counts(SHAPE.seed, t)[1] for t in range(jobs)) == relations
    assert elements - SHAPE.elements < 60  # the last job completes, no more
    # every element once: identities are unique
    assert len({r.identity for r in records if isinstance(r, Element)}) == elements


def test_the_graph_has_hubs_temporaries_unlinked_inputs_and_column_lineage() -> None:
    records = _all()
    elements = {r.identity: r for r in records if isinstance(r, Element)}
    flows = [r for r in records if isinstance(r, Relation) and r.type == RelationType.DATA_FLOW]
    read_by = Counter(r.endpoint1.identity for r in flows if r.endpoint1.type == ElementType.TABLE)
    hub = graph.table_ref(SHAPE.seed, 0).identity
    assert read_by[hub] >= 15  # ~1/40 of the ~900 jobs read each hub; at 1M elements, hundreds
    temporaries = [e for e in elements.values() if e.type == ElementType.TABLE and e.deleted]
    assert temporaries and all(e.delete_time is not None for e in temporaries)
    # a temporary is read by the job after the one that wrote it
    for table in temporaries:
        t = int(table.name.removeprefix("tmp_"))
        assert table.identity in {graph.table_ref(SHAPE.seed, s).identity for s in graph.inputs(SHAPE.seed, t + 1)[0]}
    unlinked = [r for r in flows if r.unlinked]
    assert unlinked and all(r.endpoint1.identity not in elements for r in unlinked)
    # every linked relation end is an element of the graph
    assert all(r.endpoint1.identity in elements and r.endpoint2.identity in elements
               for r in records if isinstance(r, Relation) and not r.unlinked)
    columns = [r for r in flows if r.endpoint1.type == ElementType.FIELD]
    assert columns and all(r.dependency_type is not None and r.discriminator for r in columns)
    widths = Counter(e.parent.identity for e in elements.values() if e.type == ElementType.FIELD and e.parent)
    assert 10 <= min(widths.values()) and max(widths.values()) <= 50
    inputs = Counter(r.endpoint2.identity for r in flows if r.endpoint2.type == ElementType.OPERATION_EXECUTION
                     and not r.unlinked)
    assert max(inputs.values()) <= 5  # 1-5 tables, counting the hub and the previous job's temporary

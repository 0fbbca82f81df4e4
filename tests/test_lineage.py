"""Lineage queries over the real Solr: what is walked, what is shown, and the JSON shape."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from lineage_cases import CASES, Case, expected_nodes, shown, start_name

from navd.index.client import IndexWriter, SolrIndex
from navd.errors import EntityNotFound
from navd.lineage.memory_store import MemoryLineageStore
from navd.lineage.rules import LineageGraph, LineageOptions, render_text
from navd.lineage.rules import lineage as walk
from navd.lineage.service import lineage
from navd.model import (
    DependencyType,
    Element,
    ElementType,
    EntityRef,
    Relation,
    RelationType,
    SourceType,
    hive_qualified_name,
    operation_qualified_name,
)

CLUSTER = "primary"
DROPPED = datetime(2026, 11, 20, tzinfo=UTC)


def table(db: str, name: str, *, deleted: bool = False) -> Element:
    return Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(CLUSTER, db, name), name=name,
                   deleted=deleted, delete_time=DROPPED if deleted else None)


def column(parent: Element, name: str) -> Element:
    return Element(SourceType.HIVE, ElementType.FIELD, parent.qualified_name.replace("@", f".{name}@"),
                   name=name, parent=parent.ref)


def execution(name: str) -> Element:
    return Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                   operation_qualified_name(SourceType.SPARK, name, "1"), name=name)


def flow(source: Element | EntityRef, target: Element | EntityRef, **extra: object) -> Relation:
    one = source.ref if isinstance(source, Element) else source
    two = target.ref if isinstance(target, Element) else target
    return Relation(RelationType.DATA_FLOW, one, two, **extra)  # type: ignore[arg-type]


def index_all(index: SolrIndex, records: list[Element | Relation]) -> None:
    writer = IndexWriter(index)
    writer.write_all(records)
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core, soft=True)


def names(graph: LineageGraph) -> set[str]:
    return {n.qualified_name for n in graph.nodes}


def edges(graph: LineageGraph) -> set[tuple[str, str, str]]:
    by_id = {n.id: n.qualified_name for n in graph.nodes}
    return {(by_id[e.source], by_id[e.target], e.type) for e in graph.edges}


@pytest.fixture
def pipeline(index: SolrIndex, unique: str) -> dict[str, Element]:
    """s --(job1)--> t --(job2)--> u, with columns, an input nobody indexed, and a template."""
    s, t, u = table(unique, "s"), table(unique, "t"), table(unique, "u")
    s_c, s_k, t_u = column(s, "c"), column(s, "k"), column(t, "u")
    job1, job2 = execution(f"{unique}-job1"), execution(f"{unique}-job2")
    template = Element(SourceType.SPARK, ElementType.OPERATION,
                       operation_qualified_name(SourceType.SPARK, f"{unique}-ctas"), name="ctas")
    never_seen = EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, unique, "ghost"), ElementType.TABLE)
    records: list[Element | Relation] = [s, t, u, s_c, s_k, t_u, job1, job2, template]
    records += [Relation(RelationType.PARENT_CHILD, p.ref, c.ref) for p, c in ((s, s_c), (s, s_k), (t, t_u))]
    records += [flow(s, job1), flow(job1, t), flow(t, job2), flow(job2, u),
                flow(never_seen, job1, linked1=False),
                Relation(RelationType.INSTANCE_OF, template.ref, job1.ref),
                flow(s_c, t_u, dependency_type=DependencyType.EXPRESSION, expression="upper(c)",
                     discriminator=job1.qualified_name, properties={"subtype": "TRANSFORMATION"}),
                Relation(RelationType.CONTROL_FLOW, s_k.ref, t_u.ref, discriminator=job1.qualified_name,
                         properties={"subtype": "FILTER,JOIN"})]
    index_all(index, records)
    return {"s": s, "t": t, "u": u, "job1": job1, "template": template, "s_c": s_c, "s_k": s_k, "t_u": t_u}


def test_upstream_collapses_executions(index: SolrIndex, pipeline: dict[str, Element]) -> None:
    graph = lineage(index, pipeline["t"].qualified_name, LineageOptions(direction="upstream"))
    assert graph.root == pipeline["t"].identity
    assert edges(graph) == {(pipeline["s"].qualified_name, pipeline["t"].qualified_name, "DATA_FLOW")}


def test_operations_show_executions_templates_and_unresolved_inputs(
        index: SolrIndex, pipeline: dict[str, Element], unique: str) -> None:
    graph = lineage(index, pipeline["t"].qualified_name, LineageOptions(direction="upstream", operations=True))
    job1, ghost = pipeline["job1"].qualified_name, hive_qualified_name(CLUSTER, unique, "ghost")
    assert edges(graph) == {
        (pipeline["s"].qualified_name, job1, "DATA_FLOW"),
        (ghost, job1, "DATA_FLOW"),
        (job1, pipeline["t"].qualified_name, "DATA_FLOW"),
        (pipeline["template"].qualified_name, job1, "INSTANCE_OF"),
    }
    [unresolved] = [n for n in graph.nodes if n.qualified_name == ghost]
    assert unresolved.as_dict()["unlinked"] is True and unresolved.type == "TABLE"


def test_columns_add_field_edges_with_dependency_types(index: SolrIndex, pipeline: dict[str, Element]) -> None:
    graph = lineage(index, pipeline["t"].qualified_name, LineageOptions(direction="upstream", columns=True))
    document = graph.as_dict()
    by_id = {n["id"]: n["qualifiedName"] for n in document["nodes"]}
    column_edges = {(by_id[e["source"]], by_id[e["target"]], e["type"], e.get("dependencyType"), e.get("expression"),
                     e.get("subtype")) for e in document["edges"] if e["type"] != "DATA_FLOW" or e.get("dependencyType")}
    assert column_edges == {
        (pipeline["s_c"].qualified_name, pipeline["t_u"].qualified_name, "DATA_FLOW", "EXPRESSION", "upper(c)",
         "TRANSFORMATION"),
        (pipeline["s_k"].qualified_name, pipeline["t_u"].qualified_name, "CONTROL_FLOW", None, None, "FILTER,JOIN"),
    }
    text = render_text(graph)
    assert "[DATA_FLOW EXPRESSION (TRANSFORMATION): upper(c)]" in text
    assert "[CONTROL_FLOW (FILTER,JOIN)]" in text
    assert {"id", "qualifiedName", "type", "sourceType", "name", "deleted"} <= set(document["nodes"][0])


def test_downstream_and_depth(index: SolrIndex, pipeline: dict[str, Element]) -> None:
    one = lineage(index, pipeline["s"].qualified_name, LineageOptions(direction="downstream", depth=1))
    assert names(one) == {pipeline["s"].qualified_name, pipeline["t"].qualified_name}
    two = lineage(index, pipeline["s"].qualified_name, LineageOptions(direction="downstream", depth=2))
    assert edges(two) == {(pipeline["s"].qualified_name, pipeline["t"].qualified_name, "DATA_FLOW"),
                          (pipeline["t"].qualified_name, pipeline["u"].qualified_name, "DATA_FLOW")}
    both = lineage(index, pipeline["t"].qualified_name, LineageOptions(direction="both", depth=1))
    assert names(both) == {pipeline[k].qualified_name for k in ("s", "t", "u")}


def test_deleted_temporaries_are_hidden_but_keep_the_connection(index: SolrIndex, unique: str) -> None:
    """Lineage across temporary tables: sample_07 -> temp (dropped) -> sample_merge."""
    source, temp, merged = table(unique, "sample_07"), table(unique, "temp_sample_07", deleted=True), \
        table(unique, "sample_merge")
    create, insert = execution(f"{unique}-create"), execution(f"{unique}-insert")
    index_all(index, [source, temp, merged, create, insert,
                      flow(source, create), flow(create, temp), flow(temp, insert), flow(insert, merged)])
    default = lineage(index, merged.qualified_name, LineageOptions(direction="upstream"))
    assert edges(default) == {(source.qualified_name, merged.qualified_name, "DATA_FLOW")}
    shown = lineage(index, merged.qualified_name, LineageOptions(direction="upstream", deleted=True))
    assert edges(shown) == {(source.qualified_name, temp.qualified_name, "DATA_FLOW"),
                            (temp.qualified_name, merged.qualified_name, "DATA_FLOW")}
    assert [n.deleted for n in shown.nodes if n.qualified_name == temp.qualified_name] == [True]


def test_a_path_read_leads_to_the_table_it_backs(index: SolrIndex, unique: str) -> None:
    """A job reads a table's directory by path: upstream of its output lists the table."""
    orders = table(unique, "orders")
    directory = Element(SourceType.HDFS, ElementType.DIRECTORY,
                        f"hdfs://ns1/warehouse/{unique}.db/orders", name="orders")
    report, job = table(unique, "report"), execution(f"{unique}-report")
    index_all(index, [orders, directory, report, job,
                      Relation(RelationType.LOGICAL_PHYSICAL, orders.ref, directory.ref),
                      flow(directory, job), flow(job, report)])
    graph = lineage(index, report.qualified_name, LineageOptions(direction="upstream"))
    assert orders.qualified_name in names(graph)
    assert (orders.qualified_name, directory.qualified_name, "LOGICAL_PHYSICAL") in edges(graph)
    # Seen from the table (the logical end), its directory is not lineage.
    assert names(lineage(index, orders.qualified_name)) == {orders.qualified_name}


def test_unknown_entity(index: SolrIndex) -> None:
    with pytest.raises(EntityNotFound, match="no element with identity or qualifiedName 'nope@primary'"):
        lineage(index, "nope@primary")


def test_cli_json_shape(navd, index: SolrIndex, pipeline: dict[str, Element]) -> None:  # type: ignore[no-untyped-def]
    result = navd("lineage", pipeline["t"].qualified_name.upper(), "--direction", "upstream", "--columns",
                  "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document) == {"root", "nodes", "edges"}
    by_id = {n["id"]: n["qualifiedName"] for n in document["nodes"]}
    assert {"source", "target", "type"} <= set(document["edges"][0])
    assert any(by_id[e["source"]] == pipeline["s_c"].qualified_name and e.get("dependencyType") == "EXPRESSION"
               for e in document["edges"])
    text = navd("lineage", pipeline["t"].qualified_name, "--direction", "upstream")
    assert f"{pipeline['s'].qualified_name} (HIVE TABLE) -> {pipeline['t'].qualified_name} (HIVE TABLE)" in text.stdout


@pytest.mark.parametrize(("page", "hub_piece"), [(None, 10), (2, 10), (2, 0)],
                         ids=["one-read", "in-parts-hub-first", "in-parts-by-identity"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_cases_on_solr(index: SolrIndex, unique: str, case: Case, page: int | None, hub_piece: int,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule cases (tests/test_lineage_rules.py runs them in memory) show the same through
    Solr, also when every level is larger than a page (read in parts, as a hub's level), its
    first page sorted with the first piece's answers first or by identity alone."""
    from navd.lineage import store  # noqa: PLC0415

    graph = case.graph(unique)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    if page is not None:
        monkeypatch.setattr(store, "_PAGE", page)
        monkeypatch.setattr(store, "_PIECE_PAGE", 1)
        monkeypatch.setattr(store, "_HUB_PIECE", hub_piece)
    result = lineage(index, start_name(case, graph, unique), case.options)
    nodes, edges = shown(result, graph.labels)
    assert (edges, nodes, result.truncated) == (case.edges, expected_nodes(case), case.truncated)
    assert graph.labels[result.root] == case.start


@pytest.mark.parametrize("columns", [False, True])
def test_solr_requests_grow_with_levels_not_with_width(index: SolrIndex, unique: str, columns: bool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """On Solr a level of the walk is one request (two with columns: the new tables' columns),
    whatever the level's width: a table read by 2 jobs and one read by 40 cost the same."""
    from lineage_cases import fan_out  # noqa: PLC0415

    sent: list[str] = []
    send = SolrIndex.request

    def counted(self: SolrIndex, method: str, path: str, **kwargs: object) -> dict[str, object]:
        sent.append(path)
        return send(self, method, path, **kwargs)  # type: ignore[arg-type]

    requests, answers = {}, {}
    for width in (2, 40):
        graph = fan_out(f"{unique}_{width}", width)
        index_all(index, list(graph.records))  # type: ignore[arg-type]
        with monkeypatch.context() as patch:
            patch.setattr(SolrIndex, "request", counted)
            sent.clear()
            result = lineage(index, graph.identity("root"), LineageOptions(direction="downstream", columns=columns))
            requests[width] = len(sent)
        answers[width] = len(result.nodes)
    assert answers[40] > answers[2] > 3
    # the root's lookup, 7 levels (6 with relations, the last asking for nothing new), the columns
    # of each level's new tables and of the root, the nodes' elements, the columns' tables
    assert requests[2] == requests[40] <= 1 + 7 * (2 if columns else 1) + 2


@pytest.mark.parametrize(("page", "one_read"), [(3, 100_000), (3, 10)], ids=["read-again-whole", "cursor"])
def test_a_level_larger_than_a_page_is_read_whole(index: SolrIndex, unique: str, monkeypatch: pytest.MonkeyPatch,
                                                  page: int, one_read: int) -> None:
    """A level's relations are read unsorted in one page; a level over the page is read again in
    one page of its size, and one over the most read at once with the cursor: the same graph."""
    from lineage_cases import fan_out  # noqa: PLC0415

    from navd.lineage import store  # noqa: PLC0415

    graph = fan_out(unique, 40)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    options = LineageOptions(direction="downstream", columns=True)
    expected = lineage(index, graph.identity("root"), options).as_dict()
    monkeypatch.setattr(store, "_PAGE", page)
    monkeypatch.setattr(store, "_ONE_READ", one_read)
    assert lineage(index, graph.identity("root"), options).as_dict() == expected
    assert len(expected["nodes"]) > 40 and len(expected["edges"]) > 40


@pytest.mark.parametrize("max_nodes", [7, 30, 3000])
def test_a_level_larger_than_a_page_is_walked_in_parts_up_to_the_cap(
        index: SolrIndex, unique: str, monkeypatch: pytest.MonkeyPatch, max_nodes: int) -> None:
    """A level over one page (a hub's) is walked piece by piece in identity order, a cursor page
    at a time: the graph is the memory store's (cap and cut nodes included), and a walk the cap
    stops reads only the pages it needs, not the rest of the level."""
    from lineage_cases import fan_out  # noqa: PLC0415

    from navd.lineage import store  # noqa: PLC0415

    graph = fan_out(unique, 40)
    index_all(index, list(graph.records))  # type: ignore[arg-type]
    options = LineageOptions(direction="downstream", columns=True, max_nodes=max_nodes)
    expected = walk(MemoryLineageStore.of(graph.records), graph.identity("root"), options)
    read: list[int] = []
    send = SolrIndex.request

    def counted(self: SolrIndex, method: str, path: str, **kwargs: object) -> dict[str, object]:
        body = send(self, method, path, **kwargs)  # type: ignore[arg-type]
        if "relations" in path:
            read.append(len(body.get("response", {}).get("docs", [])))  # type: ignore[attr-defined]
        return body

    monkeypatch.setattr(store, "_PAGE", 10)
    monkeypatch.setattr(store, "_PIECE_PAGE", 3)
    monkeypatch.setattr(SolrIndex, "request", counted)
    result = lineage(index, graph.identity("root"), options)
    assert (result.as_dict(), result.truncated) == (expected.as_dict(), max_nodes < 3000)
    root_level = 40 + 3 * 40  # the root's 40 readers, its 3 columns' 40 copies each
    assert (sum(read) < root_level) is (max_nodes < 3000)

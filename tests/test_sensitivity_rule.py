"""The sensitivity rule (navd/sensitivity), table-driven over an in-memory graph: levels, the
highest wins, CONTROL_FLOW on/off, table tags, cycles, withdrawal, explain."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Iterable, Mapping, Sequence

import pytest

from navd.errors import UsageError
from navd.sensitivity.rules import HIVE, USER, Levels, Tag, downstream_closure, explain, recompute

LEVELS = Levels()


@dataclasses.dataclass
class Graph:
    """Columns `t.c` (table `t`), edges (source, target, kind), tags, stored levels."""

    edges: list[tuple[str, str, str]]
    tags: list[Tag] = dataclasses.field(default_factory=list)
    control_flow: bool = False
    levels: dict[str, str] = dataclasses.field(default_factory=dict)

    def _flows(self) -> list[tuple[str, str]]:
        kinds = {"DATA_FLOW", "CONTROL_FLOW"} if self.control_flow else {"DATA_FLOW"}
        return [(s, t) for s, t, kind in self.edges if kind in kinds]

    def downstream(self, ids: Collection[str]) -> Iterable[tuple[str, str]]:
        return [(s, t) for s, t in self._flows() if s in ids]

    def upstream(self, ids: Collection[str]) -> Iterable[tuple[str, str]]:
        return [(t, s) for s, t in self._flows() if t in ids]

    def stored_levels(self, ids: Collection[str]) -> Mapping[str, str]:
        return {i: self.levels[i] for i in ids if i in self.levels}

    def levels_and_downstream(self, level_ids: Collection[str], walk_ids: Collection[str],
                              ) -> tuple[Mapping[str, str], Sequence[tuple[str, str]]]:
        return self.stored_levels(level_ids), list(self.downstream(walk_ids))

    def tags_on(self, ids: Collection[str]) -> Mapping[str, Sequence[Tag]]:
        found: dict[str, list[Tag]] = {}
        for tag in self.tags:
            if tag.target in ids:
                found.setdefault(tag.target, []).append(tag)
        return found

    def _columns(self) -> set[str]:
        return {c for s, t, _ in self.edges for c in (s, t)} | {t.target for t in self.tags if "." in t.target}

    def tables_of(self, columns: Collection[str]) -> Mapping[str, str]:
        return {c: c.split(".")[0] for c in columns if "." in c}

    def columns_of(self, tables: Collection[str]) -> Mapping[str, Sequence[str]]:
        found: dict[str, list[str]] = {}
        for column in sorted(self._columns()):
            if column.split(".")[0] in tables:
                found.setdefault(column.split(".")[0], []).append(column)
        return found

    def tag(self, target: str, level: str, source: str = USER) -> set[str]:
        """Add a tag and apply it as navd does: the target's columns, raised."""
        self.tags.append(Tag(target, level, source))
        columns = [target] if "." in target else list(self.columns_of([target]).get(target, ()))
        return self.apply(columns, tables=[target] if "." not in target else [])

    def untag(self, target: str, source: str = USER) -> set[str]:
        self.tags = [t for t in self.tags if not (t.target == target and t.source == source)]
        columns = [target] if "." in target else list(self.columns_of([target]).get(target, ()))
        return self.apply(downstream_closure(self, columns), clear=True,
                          tables=[target] if "." not in target else [])

    def apply(self, dirty: Iterable[str], *, clear: bool = False, tables: Iterable[str] = ()) -> set[str]:
        outcome = recompute(self, LEVELS, list(dirty), clear=clear, tables=list(tables))
        for levels in (outcome.columns, outcome.tables):
            for element, level in levels.items():
                if level is None:
                    self.levels.pop(element, None)
                else:
                    self.levels[element] = level
        return set(outcome.columns)


DF, CF = "DATA_FLOW", "CONTROL_FLOW"
CHAIN = [("a.x", "b.x", DF), ("b.x", "c.x", DF), ("a.y", "b.y", DF)]


@pytest.mark.parametrize(("edges", "tags", "control_flow", "expected"), [
    # one tag flows down a chain; the sibling column stays untagged
    (CHAIN, [("a.x", "pii")], False, {"a.x": "pii", "b.x": "pii", "c.x": "pii"}),
    # the highest wins where two flows meet
    ([("a.x", "c.z", DF), ("b.x", "c.z", DF), ("c.z", "d.z", DF)], [("a.x", "internal"), ("b.x", "confidential")],
     False, {"a.x": "internal", "b.x": "confidential", "c.z": "confidential", "d.z": "confidential"}),
    # a lower tag downstream of a higher one changes nothing
    (CHAIN, [("a.x", "pii"), ("b.x", "public")], False, {"a.x": "pii", "b.x": "pii", "c.x": "pii"}),
    # a lower tag upstream keeps the higher one downstream
    (CHAIN, [("a.x", "public"), ("b.x", "confidential")], False, {"a.x": "public", "b.x": "confidential",
                                                                  "c.x": "confidential"}),
    # CONTROL_FLOW (a join key, a filter) carries nothing unless configured
    ([("a.k", "b.v", CF), ("a.v", "b.v", DF)], [("a.k", "pii")], False, {"a.k": "pii"}),
    ([("a.k", "b.v", CF), ("a.v", "b.v", DF)], [("a.k", "pii")], True, {"a.k": "pii", "b.v": "pii"}),
    # a cycle ends
    ([("a.x", "b.x", DF), ("b.x", "a.x", DF), ("b.x", "c.x", DF)], [("a.x", "internal")], False,
     {"a.x": "internal", "b.x": "internal", "c.x": "internal"}),
    # a table's tag is each of its columns' tag; the table's level is its columns' highest
    (CHAIN, [("a", "confidential")], False, {"a.x": "confidential", "a.y": "confidential", "b.x": "confidential",
                                             "b.y": "confidential", "c.x": "confidential", "a": "confidential",
                                             "b": "confidential", "c": "confidential"}),
])
def test_levels_propagate(edges: list[tuple[str, str, str]], tags: list[tuple[str, str]], control_flow: bool,
                          expected: dict[str, str]) -> None:
    graph = Graph(edges, control_flow=control_flow)
    for target, level in tags:
        graph.tag(target, level)
    columns_only = {k: v for k, v in graph.levels.items() if "." in k}
    assert columns_only == {k: v for k, v in expected.items() if "." in k}
    tables = {k: v for k, v in expected.items() if "." not in k}
    if tables:
        assert {k: v for k, v in graph.levels.items() if "." not in k} == tables
    # The same levels whatever the order of tagging (the projection is a function of the tags).
    again = Graph(edges, control_flow=control_flow)
    for target, level in reversed(tags):
        again.tag(target, level)
    assert again.levels == graph.levels


def test_table_level_is_highest_of_columns() -> None:
    graph = Graph(CHAIN)
    graph.tag("a.x", "pii")
    assert graph.levels["a"] == "pii" and graph.levels["b"] == "pii" and graph.levels["c"] == "pii"
    graph.tag("a.y", "internal")
    assert graph.levels["a"] == "pii"


@pytest.mark.parametrize(("tags", "withdraw", "expected"), [
    # the only tag withdrawn: nothing left
    ([("a.x", "pii", USER)], ("a.x", USER), {}),
    # a level another source still gives stays
    ([("a.x", "pii", USER), ("a.x", "pii", HIVE)], ("a.x", USER), {"a.x": "pii", "b.x": "pii", "c.x": "pii"}),
    # a lower tag downstream shows once the higher one upstream is gone
    ([("a.x", "pii", USER), ("b.x", "internal", USER)], ("a.x", USER), {"b.x": "internal", "c.x": "internal"}),
    # a second flow into the same column keeps its level
    ([("a.x", "pii", USER), ("z.q", "confidential", USER)], ("a.x", USER),
     {"z.q": "confidential", "b.x": "confidential", "c.x": "confidential"}),
])
def test_withdrawal(tags: list[tuple[str, str, str]], withdraw: tuple[str, str], expected: dict[str, str]) -> None:
    graph = Graph([*CHAIN, ("z.q", "b.x", DF)])
    for target, level, source in tags:
        graph.tag(target, level, source)
    graph.untag(*withdraw)
    assert {k: v for k, v in graph.levels.items() if "." in k} == expected


def test_rewritten_columns_get_their_level_back() -> None:
    """An extractor rewrote b and c (their levels gone): recomputing them alone restores them."""
    graph = Graph(CHAIN)
    graph.tag("a.x", "pii")
    for column in ("b.x", "c.x"):
        del graph.levels[column]
    changed = graph.apply(["c.x", "b.x"])
    assert changed == {"b.x", "c.x"} and graph.levels["c.x"] == "pii"


def test_new_lineage_carries_levels() -> None:
    graph = Graph(list(CHAIN))
    graph.tag("a.x", "confidential")
    graph.edges.append(("c.x", "d.x", DF))
    assert graph.apply(["d.x"]) == {"d.x"} and graph.levels["d.x"] == "confidential"


def test_explain_gives_the_carrying_path() -> None:
    graph = Graph([*CHAIN, ("q.x", "b.x", DF)])
    graph.tag("q.x", "internal")
    graph.tag("a", "pii", HIVE)
    level, path = explain(graph, LEVELS, "c.x")
    assert level == "pii"
    assert [step.id for step in path] == ["a.x", "b.x", "c.x"]
    assert path[0].tags == (Tag("a", "pii", HIVE),)
    assert explain(graph, LEVELS, "nothing.here") == (None, ())


@pytest.mark.parametrize(("names", "level", "rank"), [
    (("public", "internal", "confidential", "pii"), "PII", 3),
    (("low", "high"), " high ", 1),
])
def test_levels(names: tuple[str, ...], level: str, rank: int) -> None:
    assert Levels(names).rank(level) == rank
    assert Levels(names).highest([None, names[0], level.strip().lower(), "unknown"]) == names[rank]


def test_unknown_level_is_one_line() -> None:
    with pytest.raises(UsageError, match="sensitivity level 'secret' is not one of the levels public, internal"):
        LEVELS.rank("secret")
    with pytest.raises(UsageError, match="named twice"):
        Levels(("a", "a"))


@pytest.mark.parametrize(("properties", "tags", "skipped"), [
    ({"tblproperty.sensitivity": "Confidential"}, [("db.t@c", "confidential")], 0),
    ({"tblproperty.sensitivity.SSN": "pii", "tblproperty.other": "x"}, [("db.t.ssn@c", "pii")], 0),
    ({"tblproperty.sensitivity.ssn": "secret", "tblproperty.sensitivityx": "pii"}, [], 1),
    ({}, [], 0),
])
def test_hive_properties_give_tags(properties: dict[str, str], tags: list[tuple[str, str]], skipped: int) -> None:
    from navd.names import identity
    from navd.sensitivity.rules import hive_tags

    table = {"identity": identity("HIVE", "db.t@c"), "qualifiedName": "db.t@c", "properties": json.dumps(properties)}
    found, problems = hive_tags(table, "sensitivity", LEVELS)
    assert [(t.name, t.level) for t in found] == tags
    assert all(t.target == identity("HIVE", t.name) and t.source == HIVE for t in found)
    assert len(problems) == skipped


@pytest.mark.parametrize(("section", "levels"), [
    ({}, ("public", "internal", "confidential", "pii")),
    ({"levels": ["Low", "high"]}, ("low", "high")),
    ({"levels": "public, internal, pii"}, ("public", "internal", "pii")),
])
def test_configured_levels(section: dict[str, object], levels: tuple[str, ...]) -> None:
    from navd.config import parse_config
    from navd.sensitivity.component import sensitivity_settings

    assert sensitivity_settings(parse_config({"sensitivity": section})).ordered.names == levels


def test_bad_levels_are_one_line_naming_the_key() -> None:
    from navd.config import parse_config
    from navd.errors import ConfigError

    with pytest.raises(ConfigError, match=r"\[sensitivity\] levels: a level is named twice"):
        parse_config({"sensitivity": {"levels": ["a", "A"]}})

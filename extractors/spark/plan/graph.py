"""The column graph of one plan, and what a written column is made of.

Column lineage (columns.py) reads every node of a plan into one graph over expression ids:
where an id comes from (a scanned column: `origins`), what it is computed from (`defs`), what
else is copied into it (`copies`, Union branches), what controls its rows (`controls`). A
written column's sources, expression, subtypes and controls are then what one depth-first
search reaches from its id, each walk asking its own question.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping

from .model import AGGREGATION, CONDITIONAL, IDENTITY, MAX_EXPRESSION_CHARS, TRANSFORMATION, ColumnSource
from .text import ATTR, NAMED_ATTR, PLAN_ID, REF_TOKEN, bounded, branch_ids, closing


@dataclasses.dataclass(slots=True)
class ColumnGraph:
    origins: dict[int, ColumnSource] = dataclasses.field(default_factory=dict)
    #: id -> (data ids, expression or None for a plain copy)
    defs: dict[int, tuple[tuple[int, ...], str | None]] = dataclasses.field(default_factory=dict)
    #: id -> more data ids copied into it (Union branches)
    copies: dict[int, set[int]] = dataclasses.field(default_factory=dict)
    #: id -> ids controlling it -> how (CONTROL_SUBTYPES)
    controls: dict[int, dict[int, set[str]]] = dataclasses.field(default_factory=dict)
    #: ids whose definition aggregates (an aggregate result; an aggregating window function)
    aggregates: set[int] = dataclasses.field(default_factory=set)
    names: dict[int, str] = dataclasses.field(default_factory=dict)
    #: the write goes to an existing table: Spark's store assignment casts the written columns
    store_assignment: bool = False
    #: ids made by Python code from whole rows or groups (PANDAS_NODES) -> the node's name
    python_outputs: dict[int, str] = dataclasses.field(default_factory=dict)
    #: what `resolve` found, by id: asked only once the graph is complete (columns._flows), for
    #: every written column and every id its expression names
    resolved: dict[int, tuple[frozenset[ColumnSource], str | None]] = dataclasses.field(default_factory=dict)
    #: what `_control_path` found, by id (same: once the graph is complete)
    control_paths: dict[int, tuple[tuple[ColumnSource, ...], tuple[tuple[int, str], ...]]] = dataclasses.field(
        default_factory=dict)

    def define(self, attr_id: int, deps: Iterable[int], expression: str | None) -> None:
        """`attr_id` is computed from `deps` by `expression` (None: a copy). The first
        definition of an id is kept: ids are unique in a plan, and an AQE description repeats
        its plans."""
        if attr_id not in self.defs and attr_id not in self.origins:
            deps = [d for d in deps if d != attr_id]
            if expression is not None and ("CASE WHEN " in expression or "if (" in expression):
                # A column that only decides a branch is not a data source of the result: it
                # controls it (CONDITIONAL). One also in a branch value is both.
                deciding, valued = branch_ids(expression)
                self.control([attr_id], sorted(deciding), CONDITIONAL)
                deps = [d for d in deps if d in valued or d not in deciding]
            self.defs[attr_id] = (tuple(deps), expression)

    def control(self, targets: Iterable[int], by: list[int] | tuple[int, ...], subtype: str) -> None:
        if by:
            for target in targets:
                controlling = self.controls.setdefault(target, {})
                for control_id in by:
                    controlling.setdefault(control_id, set()).add(subtype)

    def deps(self, attr_id: int) -> tuple[int, ...]:
        found = self.defs.get(attr_id)
        return found[0] if found is not None else ()


# Each walk below is a depth-first search from the column's id, each id (or state) once, the last
# one pushed taken first, with its own step written inline: they run for every written column of
# every plan, and a generator and a step call per state cost more than the dict lookups they do.


def resolve(attr_id: int, graph: ColumnGraph) -> tuple[frozenset[ColumnSource], str | None]:
    """(scanned columns, the outermost expression other than a copy or rename, if any).
    Remembered in `graph.resolved`: ask once the graph is complete."""
    known = graph.resolved.get(attr_id)
    if known is not None:
        return known
    copies, origins, defs = graph.copies, graph.origins, graph.defs
    sources: set[ColumnSource] = set()
    outermost: str | None = None
    stack = [attr_id]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        copied = copies.get(current)
        origin = origins.get(current)
        if origin is not None:
            sources.add(origin)
            if copied:
                stack.extend(copied)
            continue
        found = defs.get(current)
        if found is not None and outermost is None:
            expression = found[1]
            if expression is not None and not is_copy(expression, graph):
                outermost = expression
        if copied:
            stack.extend(copied)
        if found is not None:
            stack.extend(found[0])
    known = graph.resolved[attr_id] = (frozenset(sources), outermost)
    return known


def data_subtypes(attr_id: int, graph: ColumnGraph) -> dict[ColumnSource, str]:
    """How each scanned column flows into `attr_id` (DATA_SUBTYPES): the strongest over the
    paths from it, a path being as strong as the strongest step on it (a copy or rename, an
    expression, an aggregate)."""
    strength = (IDENTITY, TRANSFORMATION, AGGREGATION)
    copies, origins, defs, aggregates = graph.copies, graph.origins, graph.defs, graph.aggregates
    found: dict[ColumnSource, int] = {}
    # (id, level): the level of the strongest step so far on the path (an aggregate id is 2)
    stack = [(attr_id, 2 if attr_id in aggregates else 0)]
    seen: set[tuple[int, int]] = set()
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        current, level = state
        origin = origins.get(current)
        if origin is not None:
            found[origin] = max(found.get(origin, 0), level)
        copied = copies.get(current)
        if copied:
            stack.extend((c, 2 if c in aggregates else level) for c in copied)
        if origin is not None or current not in defs:
            continue
        deps, expression = defs[current]
        if expression is not None and level == 0 and not is_copy(expression, graph):
            level = 1
        stack.extend((d, 2 if d in aggregates else level) for d in deps)
    return {source: strength[level] for source, level in found.items()}


def resolve_controls(attr_id: int, graph: ColumnGraph) -> dict[ColumnSource, set[str]]:
    """Scanned columns that control `attr_id`, each with how (CONTROL_SUBTYPES): those of every
    control id met on its data path, with everything (data and control) they depend on in turn.
    A column a control is computed from controls as that control does; a control of a control
    (a filter under a join key) as its own."""
    sources: dict[ColumnSource, set[str]] = {}
    if not graph.controls:
        return sources
    # the data path (copies and definitions, through scanned columns too): the controls of
    # every id on it, each (control id, how) once
    _, starts = _behind(attr_id, graph, through_scanned=True)
    # A control (id, how) controls as `how` through the scanned columns its id is copied or
    # computed from, and brings the controls of every id on that path, each with its own how
    # (a control of a control). The path of an id does not depend on how it controls: it is
    # found once a graph (`_control_path`), and each control met once a column.
    pending = list(starts)
    met = set(starts)
    while pending:
        control_id, subtype = pending.pop()
        scanned, more = _control_path(control_id, graph)
        for origin in scanned:
            sources.setdefault(origin, set()).add(subtype)
        for control in more:
            if control not in met:
                met.add(control)
                pending.append(control)
    return sources


def _control_path(attr_id: int, graph: ColumnGraph) -> tuple[tuple[ColumnSource, ...], tuple[tuple[int, str], ...]]:
    """(the scanned columns `attr_id` is copied or computed from, the controls (id, how) of the
    ids on the way); remembered in `graph.control_paths`."""
    known = graph.control_paths.get(attr_id)
    if known is not None:
        return known
    scanned, met = _behind(attr_id, graph, through_scanned=False)
    known = graph.control_paths[attr_id] = (tuple(scanned), tuple(met))
    return known


def _behind(attr_id: int, graph: ColumnGraph, *, through_scanned: bool,
            ) -> tuple[dict[ColumnSource, None], dict[tuple[int, str], None]]:
    """Walking `attr_id`'s copies and definitions: the scanned columns met (the walk stops at
    them unless `through_scanned`) and the controls (id, how) of every id on the way, in the
    order met. Plain loops: this runs for every written column of every plan."""
    copies, controls, origins, defs = graph.copies, graph.controls, graph.origins, graph.defs
    scanned: dict[ColumnSource, None] = {}
    met: dict[tuple[int, str], None] = {}
    stack = [attr_id]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        controlling = controls.get(current)
        if controlling:
            for control_id, subtypes in controlling.items():
                for subtype in subtypes:
                    met[(control_id, subtype)] = None
        copied = copies.get(current)
        if copied:
            stack.extend(copied)
        if not through_scanned:
            origin = origins.get(current)
            if origin is not None:
                scanned[origin] = None
                continue  # a scanned column is not computed from anything
        found = defs.get(current)
        if found is not None:
            stack.extend(found[0])
    return scanned, met


def unknown_on_path(attr_id: int, graph: ColumnGraph, unknown: Mapping[int, str]) -> set[str]:
    """The labels (`unknown`) of the unknown ids `attr_id` is computed or controlled from."""
    copies, controls, defs = graph.copies, graph.controls, graph.defs
    labels: set[str] = set()
    stack = [attr_id]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        label = unknown.get(current)
        if label is not None:
            labels.add(label)
        copied = copies.get(current)
        if copied:
            stack.extend(copied)
        controlling = controls.get(current)
        if controlling:
            stack.extend(controlling)
        found = defs.get(current)
        if found is not None:
            stack.extend(found[0])
    return labels


def is_copy(expression: str, graph: ColumnGraph) -> bool:
    """Whether `expression` is a bare reference `name#7` (a copy or rename, SIMPLE). Spark prints
    a reference as its raw name, so `a b#10` or `b.c#9` is one when the plan named #10 `a b`
    (a scan's or a projection's output); `NOT x#10` is not, #10 being `x`."""
    text = expression.strip()
    if ATTR.fullmatch(text):
        return True
    named = NAMED_ATTR.match(text)
    return named is not None and graph.names.get(int(named.group(2))) == named.group(1)


_CAST = re.compile(r"^(?:ansi_)?cast\((.*) as [\w(), <>:]+\)$", re.S)
#: Spark's cast of a view's column to the type the view stored (`cast(x#21 as int)`)
VIEW_UPCAST = re.compile(r"^cast\([^\s(),]+#\d+L? as [^#]+\)$")


def strip_store_assignment_cast(attr_id: int, graph: ColumnGraph) -> None:
    """A written column's own `cast(x as T)`: Spark's store assignment (TableOutputResolver)
    casts a value to its column's type on INSERT into an existing table; the user's expression
    is `x`. (A cast the user wrote to exactly the column's type reads the same in the plan,
    and writes the same value: it is taken for Spark's.)"""
    if attr_id not in graph.defs:
        return
    deps, expression = graph.defs[attr_id]
    text = (expression or "").strip()
    match = _CAST.match(text)
    # one cast around the whole expression, not `cast(a#1 as int) + cast(b#2 as int)`
    if match is not None and closing(text, text.index("(")) == len(text) - 1:
        graph.defs[attr_id] = (deps, match.group(1).strip())


def _substitute(text: str, graph: ColumnGraph, replace: Callable[[str | None, int], str]) -> str:
    """`text` with each reference `name#id` replaced by `replace(name, id)`. The name is the
    plan's own for that id when the text spells it before the '#' (names may hold spaces, dots,
    unicode: `a b#10`, `b.c#9`, `ünï#11`); else the identifier there, or None (`sum(w#1)#50`,
    an aggregate result's id; `[id=#852]`)."""
    out, last = [], 0
    for match in REF_TOKEN.finditer(text):
        attr_id, hash_at = int(match.group(2)), match.start(2) - 1
        start, name = match.start(), match.group(1)
        known = graph.names.get(attr_id)
        if known and hash_at - len(known) >= last and text.startswith(known, hash_at - len(known)):
            start, name = hash_at - len(known), known
        out.append(text[last:start])
        out.append(replace(name, attr_id))
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _source_label(source: ColumnSource) -> str:
    if source.table is not None:
        return f"{source.table.name}.{source.column}"
    if source.paths:
        return source.paths[0].rstrip("/").rsplit("/", 1)[-1] + "." + source.column
    return source.column


def render(expression: str, graph: ColumnGraph, sources: Iterable[ColumnSource]) -> str:
    """The expression in source-column names: `upper(k#12)` -> `upper(k)`, where each reference
    is replaced by the scanned column it copies (`extra_v#30` -> `v`), or by its own expression
    when it is computed (`w#45` -> `(v + extra_v)` -> `(v + v)`). Columns of the same name from
    two sources are qualified by their table (or last path segment): `(events.v + extra.v)`.
    Bounded to MAX_EXPRESSION_CHARS."""
    budget = [MAX_EXPRESSION_CHARS * 4]
    by_name: dict[str, set[ColumnSource]] = {}
    for source in sources:
        by_name.setdefault(source.column, set()).add(source)
    ambiguous = {name for name, group in by_name.items() if len(group) > 1}

    def expand(name: str | None, attr_id: int, depth: int) -> str:
        if name is None:
            return ""   # `sum(w#1)#50`: the id of an aggregate result; `[id=#852]`
        found, outer = resolve(attr_id, graph)   # (remembered: an expression repeats its columns)
        if outer is None:
            if len(found) == 1:
                (source,) = found
                return _source_label(source) if source.column in ambiguous else source.column
            return name
        if depth >= 8 or budget[0] <= 0:
            return name
        budget[0] -= len(outer)
        return _substitute(outer, graph, lambda n, i: expand(n, i, depth + 1))

    return bounded(_substitute(PLAN_ID.sub("", expression), graph, lambda n, i: expand(n, i, 0)))

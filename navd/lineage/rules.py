"""Lineage: walk relations from one entity, upstream and/or downstream. Pure: the walk reads the
index only through a `LineageStore` (navd/lineage/store.py: SolrLineageStore in production;
navd/lineage/memory_store.py: MemoryLineageStore in tests), so every rule is testable without Solr.
The stored elements and relations it reads are navd/lineage/stored.py.

The walk is a breadth-first search asking the store once per level for every relation group
of the level's nodes (`LineageStore.related`; on Solr one request, an OR of `{!terms
f=endpoint2Id}` ... clauses), and with `columns` once more for the columns of the tables the
level reached: the round trips grow with the depth, not with the width. It works the same on
one core and on a sharded SolrCloud collection (Solr's `{!graph}` parser silently returns
partial results across shards); it never loads the whole graph.

What is walked, as in Navigator (the table is model.RELATION_SEMANTICS):
- DATA_FLOW (and CONTROL_FLOW for columns): dataset -> execution -> dataset;
- LOGICAL_PHYSICAL only from the physical end to the logical one: a directory leads to the table
  it backs, a YARN application to the Spark execution it ran; seen from the logical end the
  physical one is not lineage;
- PARENT_CHILD from an execution down to the executions inside it (a Spark run's SQL
  executions), so a YARN application reaches the datasets its Spark work read and wrote;
- INSTANCE_OF from an execution to its operation template, shown with `operations`.

With `operations`, the executions in the graph also show the Oozie workflow that started them
(navd/lineage/schedulers.py): a job manager's action is the physical end of what it triggered,
so the walk itself never climbs to it.

What is shown: without `operations`, executions and templates are contracted away (dataset ->
execution -> dataset becomes dataset -> dataset), and so are endpoints no extractor has indexed
(unlinked); without `deleted`, deleted entities are contracted away too, so the connection
through a dropped temporary table stays. `columns` adds FIELD nodes and column edges; a FIELD
root implies it (a column's lineage is column lineage: without it a column has none).

As of a moment (`as_of`): only relations whose first execution ran by then (StoredRelation.
first_seen; relations no execution dated count from always), and entities deleted only if deleted
by then. `latest`: of the executions writing a dataset, only the newest (at or before `as_of`).
`changes` compares the graphs at two moments.

A stub (an element known only from a job's reference, see model.ElementStub) counts as an entity
when something proves it existed: an operation wrote it (it is the target of a DATA_FLOW) or
dropped it (flagged deleted), or when no extractor navd runs is responsible for its namespace
(navd/lineage/responsibility.py, `LineageOptions.extracted`): nothing will ever index it, so the
reference is all there is. A stub only ever read of a namespace an extractor crawls (a Hive table
of the extracted metastore, a path of the crawled file system) is an unresolved reference, shown
like an unlinked endpoint (Navigator shows such an input only with operations on) until indexed.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Literal, Protocol

from navd.errors import EntityNotFound, UsageError
from navd.lineage.responsibility import EVERYTHING_EXTRACTED, ExtractedNamespaces, responsible
from navd.lineage.schedulers import scheduler_relations
from navd.lineage.stored import StoredElement, StoredRelation
from navd.model import RELATION_SEMANTICS, ElementType, RelationType
from navd.names import display_name, shown

Direction = Literal["upstream", "downstream", "both"]

_OPERATION_TYPES = frozenset({ElementType.OPERATION.value, ElementType.OPERATION_EXECUTION.value})
_FIELD = ElementType.FIELD.value
_EXECUTION = ElementType.OPERATION_EXECUTION.value
_PARENT_CHILD = RelationType.PARENT_CHILD.value
_DATA_FLOW = RelationType.DATA_FLOW.value
#: (near node, relation, far end): one step of the walk
_Hop = tuple[str, StoredRelation, int]


@dataclasses.dataclass(frozen=True)
class RelationAsk:
    """Relations of `types` whose endpoint `near_end` is one of `ids`; with `near_type` /
    `far_type`, only those whose near / far endpoint has that element type."""

    ids: tuple[str, ...]
    types: tuple[str, ...]
    near_end: int
    near_type: str | None = None
    far_type: str | None = None
    #: the caller reads only the relations' endpoint ids and types: a store may leave the rest out
    ends_only: bool = False
    #: only relations that existed then: their first execution ran by `as_of` (StoredRelation.seen_by)
    as_of: datetime | None = None

    def matches(self, relation: StoredRelation) -> bool:
        """Whether `relation` answers this ask, its near endpoint's id aside."""
        return relation.type in self.types \
            and self.near_type in (None, relation.endpoint(self.near_end).type) \
            and self.far_type in (None, relation.endpoint(3 - self.near_end).type) \
            and (self.as_of is None or relation.seen_by(self.as_of))


class LineageStore(Protocol):
    """What the walk reads. Implementations batch as they need; none loads the whole graph."""

    def find(self, entity: str) -> StoredElement | None:
        """The element whose identity or qualifiedName (or its normalised spelling) is `entity`."""

    def elements(self, ids: Collection[str]) -> Mapping[str, StoredElement]:
        """The indexed elements among `ids`, by identity."""

    def relations(self, ids: Collection[str], types: Collection[str], near_end: int, *,
                  near_type: str | None = None, far_type: str | None = None,
                  ends_only: bool = False, as_of: datetime | None = None) -> Iterable[StoredRelation]:
        """Relations of `types` whose endpoint `near_end` is one of `ids`; with `near_type` /
        `far_type`, only those whose near / far endpoint has that element type; with `ends_only`,
        only their endpoints' ids and types need be read (RelationAsk.ends_only); with `as_of`,
        only those that existed then (RelationAsk.as_of)."""

    def related(self, asks: Sequence[RelationAsk]) -> Iterable[tuple[int, StoredRelation]]:
        """(number of the ask, relation) for every relation answering each of `asks`, in the
        order `relations` would give them asked one after the other; a store answers them
        together (on Solr: in one request), which is what makes a level of the walk one round trip."""

    def related_pages(self, asks: Sequence[RelationAsk]) -> Iterable[Sequence[tuple[int, StoredRelation]]]:
        """`related`'s answers in its order, in the parts the store reads at once, read as they
        are asked for: a caller that stops early (the walk at its node cap, in a hub's level)
        saves the reads of the rest. An ordinary answer is one part."""


#: Ids per piece of an ask: a store answers an ask piece by piece, each piece's relations in
#: identity order (on Solr: a terms clause of this many ids, its answer sorted by identity).
#: The order matters to the walk: of two relations reaching one node, the first sets its depth.
ANSWER_CHUNK = 500


class RelationsByAsk:
    """`LineageStore.relations` as one ask of the store's `related`: a store writes only `related`."""

    def related(self, asks: Sequence[RelationAsk]) -> Iterable[tuple[int, StoredRelation]]:
        raise NotImplementedError

    def relations(self, ids: Collection[str], types: Collection[str], near_end: int, *,
                  near_type: str | None = None, far_type: str | None = None,
                  ends_only: bool = False, as_of: datetime | None = None) -> Iterable[StoredRelation]:
        ask = RelationAsk(tuple(ids), tuple(types), near_end, near_type, far_type, ends_only, as_of)
        return [relation for _, relation in self.related([ask])]

    def related_pages(self, asks: Sequence[RelationAsk]) -> Iterator[Sequence[tuple[int, StoredRelation]]]:
        yield list(self.related(asks))


class RelationPool(RelationsByAsk):
    """Relations held in memory, answering asks as a store does (LineageStore.relations and
    .related), in a store's order (`ANSWER_CHUNK`)."""

    def __init__(self, relations: Iterable[StoredRelation] = ()) -> None:
        self._relations: dict[str, StoredRelation] = {}
        self._by_end: tuple[dict[str, list[str]], dict[str, list[str]]] = ({}, {})
        for relation in relations:
            self.add(relation)

    def add(self, relation: StoredRelation, *, ends_only: bool = False) -> None:
        """Hold `relation` (read `ends_only`: its endpoints only, kept only until it is read whole)."""
        if relation.id in self._relations:
            if not ends_only:
                self._relations[relation.id] = relation
            return
        self._relations[relation.id] = relation
        for end in (1, 2):
            self._by_end[end - 1].setdefault(relation.endpoint(end).id, []).append(relation.id)

    def related(self, asks: Sequence[RelationAsk]) -> list[tuple[int, StoredRelation]]:
        answered: list[tuple[int, StoredRelation]] = []
        for n, ask in enumerate(asks):
            ids = list(ask.ids)
            for start in range(0, len(ids), ANSWER_CHUNK):
                found = {r.id: r for i in ids[start:start + ANSWER_CHUNK]
                         for r in map(self._relations.__getitem__, self._by_end[ask.near_end - 1].get(i, ()))
                         if ask.matches(r)}
                answered.extend((n, found[identity]) for identity in sorted(found))
        return answered


class _CachedStore(RelationsByAsk):
    """A store in front of another that asks it only what it was not asked before (the same ids
    for the same kind of relations), answering the rest from memory, in the store's order."""

    def __init__(self, store: LineageStore) -> None:
        self.store = store
        self._pool = RelationPool()
        self._asked: set[tuple[str, tuple[object, ...]]] = set()
        self._elements: dict[str, StoredElement] = {}
        self._elements_read: set[str] = set()  # asked for, whether found or not

    @staticmethod
    def _kind(ask: RelationAsk) -> tuple[object, ...]:
        return ask.types, ask.near_end, ask.near_type, ask.far_type, ask.ends_only, ask.as_of

    def find(self, entity: str) -> StoredElement | None:
        return self.store.find(entity)

    def elements(self, ids: Collection[str]) -> Mapping[str, StoredElement]:
        self._read_elements(ids)
        return {i: self._elements[i] for i in ids if i in self._elements}

    def _read_elements(self, ids: Collection[str]) -> None:
        unread = [i for i in ids if i not in self._elements_read]
        if unread:
            self._elements.update(self.store.elements(unread))
            self._elements_read.update(unread)

    def read_ahead(self, asks: Sequence[RelationAsk], element_ids: Collection[str]) -> None:
        """Hold the answers to `asks` and the elements of `element_ids`, read at the same time:
        two requests in flight at once (on Solr, one to each core), so the slower sets the pace."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lineage-read-ahead") as pool:
            elements = pool.submit(self._read_elements, list(element_ids))
            self.related(asks)
            elements.result()

    def related(self, asks: Sequence[RelationAsk]) -> list[tuple[int, StoredRelation]]:
        unasked = [dataclasses.replace(ask, ids=ids) for ask in asks
                   if (ids := tuple(i for i in ask.ids if (i, self._kind(ask)) not in self._asked))]
        if not unasked:
            return self._pool.related(asks)
        # in one request, as the asks would have been
        answered = list(self.store.related(unasked))
        for n, relation in answered:
            self._pool.add(relation, ends_only=unasked[n].ends_only)
        self._asked.update((i, self._kind(ask)) for ask in unasked for i in ask.ids)
        if unasked == list(asks):  # nothing was held: the store's answer is the answer
            return answered
        return self._pool.related(asks)


@dataclasses.dataclass(frozen=True)
class LineageOptions:
    direction: Direction = "both"
    depth: int = 5
    columns: bool = False
    operations: bool = False
    deleted: bool = False
    max_nodes: int = 3000  # Navigator's UI capped lineage at 400-3,000 entities
    #: the graph as it stood then: relations whose first execution ran by then, entities deleted
    #: only if deleted by then
    as_of: datetime | None = None
    #: of the executions that wrote a dataset, only those of its latest run (at or before `as_of`):
    #: the job as it was last run, not every run ever seen
    latest: bool = False
    #: the namespaces the extractors navd runs index (responsibility.extracted_namespaces of the
    #: config): a reference outside them is an entity; the default is Navigator's rule, every
    #: reference waits for an extractor
    extracted: ExtractedNamespaces = EVERYTHING_EXTRACTED


@dataclasses.dataclass(frozen=True)
class Node:
    id: str
    qualified_name: str
    type: str
    source_type: str
    name: str
    deleted: bool
    indexed: bool  # False: only known from a relation's unlinked endpoint
    #: the node cap stopped the walk before all of this node's neighbours were walked: its own
    #: lineage has more (the page's "show more" asks for it)
    cut: bool = False
    #: a column's dataset (its PARENT_CHILD parent): the page draws the column inside it
    parent: str | None = None

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"id": self.id, "qualifiedName": self.qualified_name, "type": self.type,
                                 "sourceType": self.source_type, "name": self.name, "deleted": self.deleted}
        if not self.indexed:
            shown["unlinked"] = True
        if self.cut:
            shown["cut"] = True
        if self.parent:
            shown["parent"] = self.parent
        return shown


@dataclasses.dataclass(frozen=True)
class Edge:
    source: str
    target: str
    type: str
    dependency_type: str | None = None
    expression: str | None = None
    #: how a column is used (column edges: IDENTITY, TRANSFORMATION, AGGREGATION; FILTER, ...)
    subtype: str | None = None
    # Not part of what the edge is (two walks' edges compare without them): when the executions
    # behind it ran, and those executions when contracted away (what `changes` reports).
    first_seen: datetime | None = dataclasses.field(default=None, compare=False)
    last_seen: datetime | None = dataclasses.field(default=None, compare=False)
    via: frozenset[str] = dataclasses.field(default=frozenset(), compare=False)

    def merged(self, other: Edge) -> Edge:
        """This edge seen once more (through another execution): the earliest first time, the
        latest last time, both executions."""
        return dataclasses.replace(self, first_seen=_earliest(self.first_seen, other.first_seen),
                                   last_seen=_latest(self.last_seen, other.last_seen), via=self.via | other.via)

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"source": self.source, "target": self.target, "type": self.type}
        if self.dependency_type:
            shown["dependencyType"] = self.dependency_type
        if self.subtype:
            shown["subtype"] = self.subtype
        if self.expression:
            shown["expression"] = self.expression
        return shown


@dataclasses.dataclass(frozen=True)
class LineageGraph:
    root: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    truncated: bool = False
    #: what the reader should know about the answer (an `as_of` older than the history kept)
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"root": self.root, "nodes": [n.as_dict() for n in self.nodes],
                                 "edges": [e.as_dict() for e in self.edges]}
        if self.truncated:
            shown["truncated"] = True
        if self.note:
            shown["note"] = self.note
        return shown


# -- the walk ---------------------------------------------------------------------------------

def lineage(store: LineageStore, entity: str, options: LineageOptions = LineageOptions()) -> LineageGraph:
    """The lineage graph of `entity` as shown with `options`. Reads the store, changes nothing."""
    root = store.find(entity)
    if root is None:
        raise EntityNotFound(f"no element with identity or qualifiedName {shown(entity)}")
    if root.type == _FIELD and not options.columns:
        # A column's only lineage is column edges: asked for a column, the user asks for them.
        options = dataclasses.replace(options, columns=True)
    directions: tuple[str, ...] = ("upstream", "downstream") if options.direction == "both" \
        else (options.direction,)

    if options.latest and "downstream" in directions:
        store = _CachedStore(store)  # _walked reads ahead into it what the nodes need
    relations: dict[str, StoredRelation] = {}
    node_ids: set[str] = {root.id}
    truncated = False
    cut: set[str] = set()
    for direction in directions:
        progress = _Progress()
        for relation in _walked(store, root, direction, options, progress):
            relations[relation.id] = relation
            node_ids.update((relation.endpoint1.id, relation.endpoint2.id))
            if len(node_ids) > options.max_nodes:
                truncated = True
                cut |= progress.cut_by(relation)
                break
    if options.operations and not truncated:
        executions = {end.id for r in relations.values() for end in (r.endpoint1, r.endpoint2)
                      if end.type == _EXECUTION} | ({root.id} if root.type == _EXECUTION else set())
        for relation in scheduler_relations(store, executions):
            relations[relation.id] = relation
            node_ids.update((relation.endpoint1.id, relation.endpoint2.id))
    # Without operations an execution is never shown, whatever its document says (`_contract`):
    # its endpoint is all the graph needs of it, so its element is not read (a hub's level is
    # thousands of executions).
    unshown = set() if options.operations else \
        {end.id for r in relations.values() for end in (r.endpoint1, r.endpoint2) if end.type in _OPERATION_TYPES}
    read = node_ids - (unshown - {root.id})
    fields = _fields_of(relations.values(), root)
    if not fields:  # no column: nothing to ask beside the elements (a thread costs ~3 ms a query)
        nodes = _load_nodes(store, read, relations.values(), options.as_of, options.extracted)
    else:
        # The columns' datasets are asked while the nodes' elements are read: two requests in
        # flight (on Solr, one to each core), where they were the walk's last two round trips.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lineage-parents") as pool:
            asked = pool.submit(_parents_of, store, fields)

            def parents(of: list[str]) -> Mapping[str, str]:
                unasked = sorted(set(of) - set(fields))
                return {**asked.result(), **(_parents_of(store, unasked) if unasked else {})}

            loaded = _load_nodes(store, read, relations.values(), options.as_of, options.extracted, parents)
            parent_of = asked.result()
        nodes = {n: dataclasses.replace(node, parent=parent_of[n]) if node.type == _FIELD and n in parent_of
                 else node for n, node in loaded.items()}
    edges = [Edge(r.endpoint1.id, r.endpoint2.id, r.type, r.dependency_type, r.expression, r.subtype,
                  r.first_seen, r.last_seen) for r in relations.values()]
    return _contract(root.id, nodes, edges, options, truncated, frozenset(cut))


@dataclasses.dataclass(frozen=True)
class _Progress:
    """What one direction's walk has done so far, to tell which nodes the node cap cut: those
    queued for walking whose level was not finished, and the new far end of the relation that
    reached the cap (walked to, never from). Nodes left at the depth limit are not cut."""

    seen: set[str] = dataclasses.field(default_factory=set)  # reached (queued or at the depth limit)
    pending: set[str] = dataclasses.field(default_factory=set)  # queued, their level not finished

    def cut_by(self, last: StoredRelation) -> set[str]:
        return self.pending | ({last.endpoint1.id, last.endpoint2.id} - self.seen)


def _walked(store: LineageStore, root: StoredElement, direction: str, options: LineageOptions,
            progress: _Progress) -> Iterator[StoredRelation]:
    """`_walk`, with `latest` downstream in about a plain walk's requests and one more.

    Walking downstream, the writes that reach a dataset come from the executions of the level
    before (their near end), so the other writers of the datasets a level reached are asked for
    level by level: one request more per level. Instead, through a cache of the store's answers:
    the plain walk (every run, up to the node cap), then the writers of every dataset it saw
    written, in one request, then the walk with `latest`, which finds (nearly) all it asks in
    the cache, as it reaches no node the plain walk did not. Whatever the cache does not hold is
    asked of the store, so the answer is the level-by-level walk's, relation for relation."""
    if not (options.latest and direction == "downstream"):
        yield from _walk(store, root, direction, options, progress)
        return
    cached = store if isinstance(store, _CachedStore) else _CachedStore(store)
    reached = {root.id}
    read = {root.id}  # the elements `lineage` will read (executions only with operations)
    walked: list[StoredRelation] = []
    written: dict[str, None] = {}
    for relation in _walk(cached, root, direction, dataclasses.replace(options, latest=False)):
        walked.append(relation)
        if _is_write(relation):
            written[relation.endpoint2.id] = None
        reached.update((relation.endpoint1.id, relation.endpoint2.id))
        read.update(end.id for end in (relation.endpoint1, relation.endpoint2)
                    if options.operations or end.type not in _OPERATION_TYPES)
        if len(reached) > options.max_nodes:
            break
    # The nodes the latest walk shows are among those the plain walk reached: their elements (and
    # their columns' datasets) are read while the writers are asked for, not in requests of their
    # own after the walk.
    writers = [RelationAsk(tuple(sorted(written)), (_DATA_FLOW,), 2, far_type=_EXECUTION, as_of=options.as_of)] \
        if written else []
    fields = _fields_of(walked, root)
    cached.read_ahead(writers + ([_parents_ask(fields)] if fields else []), sorted(read))
    yield from _walk(cached, root, direction, options, progress)


def _walk(store: LineageStore, root: StoredElement, direction: str,
          options: LineageOptions, progress: _Progress | None = None) -> Iterator[StoredRelation]:
    """Relations reachable from the root in one direction, level by level.

    Depth counts dataset hops: passing through an execution does not use up a level, so
    `depth=1` upstream of a table reaches the tables its producing jobs read. `progress`
    (updated as the walk goes) says which nodes were walked from when the caller stops early.
    """
    progress = _Progress() if progress is None else progress
    root_is_field = root.type == _FIELD
    seen = progress.seen
    seen.add(root.id)
    frontier: deque[tuple[str, int, bool]] = deque([(root.id, 0, root_is_field)])
    if options.columns and not root_is_field:
        for field_id in _field_ids(store, [root.id], options.as_of).get(root.id, ()):
            seen.add(field_id)
            frontier.append((field_id, 0, True))
    progress.pending.update(node for node, _, _ in frontier)
    dataset_queries = walked_queries(direction, columns=False, operations=options.operations)
    field_queries = walked_queries(direction, columns=True, operations=False) if options.columns else ()
    while frontier:
        level = list(frontier)
        frontier.clear()
        depth_of = {node: depth for node, depth, _ in level}
        datasets = tuple(node for node, _, is_field in level if not is_field)
        fields = tuple(node for node, _, is_field in level if is_field)
        # The whole level in one request: every query of its datasets, then of its columns. Read
        # in the parts the store reads at once (one, but for a hub's level), each part's new
        # tables' columns asked before it is walked: a caller stopping at the node cap leaves
        # the rest of a hub's level unread. Parts or not, the same relations in the same order.
        pages = _hop_pages(store, [(datasets, query) for query in dataset_queries] +
                           [(fields, query) for query in field_queries], options.as_of)
        if options.latest:  # a dataset's writers are compared over the whole level
            pages = iter([_latest_runs(store, [hop for page in pages for hop in page], options.as_of)])
        for hops in pages:
            fields_of = _field_ids(store, _queued_datasets(hops, seen, depth_of, options), options.as_of) \
                if options.columns else {}
            for near, relation, far_end in hops:
                yield relation
                far = relation.endpoint(far_end)
                if far.id in seen:
                    continue
                seen.add(far.id)
                depth = depth_of[near] + (0 if far.type in _OPERATION_TYPES else 1)
                if depth >= options.depth and far.type not in _OPERATION_TYPES:
                    continue
                if not RELATION_SEMANTICS[RelationType(relation.type)].onward:
                    continue
                frontier.append((far.id, depth, far.type == _FIELD))
                progress.pending.add(far.id)
                for field_id in fields_of.get(far.id, ()):
                    if field_id not in seen:
                        seen.add(field_id)
                        frontier.append((field_id, depth, True))
                        progress.pending.add(field_id)
        progress.pending.difference_update(node for node, _, _ in level)  # all their hops walked


def _queued_datasets(hops: list[_Hop], seen: set[str], depth_of: Mapping[str, int],
                     options: LineageOptions) -> list[str]:
    """The datasets (not executions, not columns) this level's hops may queue: whose columns
    join the walk with them. Those the walk will skip (seen, at the depth limit, reached by a
    relation not walked on) are left out, so their columns are not fetched for nothing."""
    queued: dict[str, None] = {}
    for near, relation, far_end in hops:
        far = relation.endpoint(far_end)
        if far.type in _OPERATION_TYPES or far.type == _FIELD or far.id in seen or far.id in queued:
            continue
        if depth_of[near] + 1 >= options.depth or not RELATION_SEMANTICS[RelationType(relation.type)].onward:
            continue
        queued[far.id] = None
    return list(queued)


@dataclasses.dataclass(frozen=True)
class _Query:
    """Relation types the walk asks the store for together."""

    types: tuple[str, ...]
    near_end: int
    both_ends: str | None
    flow: bool = False  # walked in the direction asked


def walked_queries(direction: str, *, columns: bool, operations: bool) -> tuple[_Query, ...]:
    """What the walk asks the store for at each level, from model.RELATION_SEMANTICS, in its
    order; the flow types (walked in the direction asked) share one query."""
    flow_near = 2 if direction == "upstream" else 1  # upstream: relations whose target is the node
    queries: list[_Query] = []
    for relation_type, semantics in RELATION_SEMANTICS.items():
        if not (semantics.columns if columns else semantics.datasets):
            continue
        if semantics.only_with_operations and not operations:
            continue
        near = flow_near if semantics.from_end is None else semantics.from_end
        both_ends = semantics.both_ends.value if semantics.both_ends is not None else None
        if semantics.from_end is None and queries and queries[-1].flow:
            queries[-1] = dataclasses.replace(queries[-1], types=(*queries[-1].types, relation_type.value))
        else:
            queries.append(_Query((relation_type.value,), near, both_ends, flow=semantics.from_end is None))
    return tuple(queries)


def _hop_pages(store: LineageStore, asked: list[tuple[tuple[str, ...], _Query]],
               as_of: datetime | None = None) -> Iterator[list[_Hop]]:
    """(near node, relation, far end) for every lineage relation of each (nodes, query) of
    `asked`, in that order, asked of the store together, in the parts the store reads them."""
    asks = [(nodes, query) for nodes, query in asked if nodes]
    if not asks:
        return
    near_ends = [query.near_end for _, query in asks]
    for page in store.related_pages([RelationAsk(nodes, query.types, query.near_end, query.both_ends,
                                                 query.both_ends, as_of=as_of) for nodes, query in asks]):
        yield [(relation.endpoint(near_ends[n]).id, relation, 3 - near_ends[n]) for n, relation in page]


def _latest_runs(store: LineageStore, hops: list[_Hop], as_of: datetime | None) -> list[_Hop]:
    """The hops without the writes of a dataset by executions older than its latest writer (at
    or before `as_of`). Walking upstream, a dataset's writers are all among the hops (its
    DATA_FLOW in); walking downstream, the writers of the datasets reached are asked for, in one ask."""
    writes = [relation for _, relation, _ in hops if _is_write(relation)]
    if not writes:
        return hops
    written = {relation.endpoint2.id for relation in writes}
    writers = {relation.id: relation for relation in writes}
    # upstream, a write's near end is the dataset: all its writers were asked for
    walked_into = {near for near, relation, _ in hops if _is_write(relation)}
    unseen = sorted(written - walked_into)
    if unseen:
        for relation in store.relations(unseen, (_DATA_FLOW,), 2, far_type=ElementType.OPERATION_EXECUTION.value,
                                        as_of=as_of):
            writers[relation.id] = relation
    newest: dict[str, datetime] = {}
    for relation in writers.values():
        if relation.first_seen is not None:
            dataset = relation.endpoint2.id
            newest[dataset] = max(newest.get(dataset, relation.first_seen), relation.first_seen)
    # A write with no time (a source that tells none) is never dropped: nothing says it is older.
    return [(near, relation, far) for near, relation, far in hops
            if not _is_write(relation) or relation.first_seen is None
            or relation.first_seen >= newest.get(relation.endpoint2.id, relation.first_seen)]


def _is_write(relation: StoredRelation) -> bool:
    """An execution writing a dataset (a DATA_FLOW from an execution to what is not one)."""
    return relation.type == _DATA_FLOW and relation.endpoint1.type == ElementType.OPERATION_EXECUTION.value \
        and relation.endpoint2.type not in _OPERATION_TYPES


def _field_ids(store: LineageStore, dataset_ids: Collection[str],
               as_of: datetime | None = None) -> dict[str, list[str]]:
    """The FIELD children of datasets (columns of tables and views), by dataset, in one ask:
    with `columns`, they join the walk at their dataset's depth."""
    if not dataset_ids:
        return {}
    fields: dict[str, list[str]] = {}
    for r in store.relations(dataset_ids, (_PARENT_CHILD,), 1, far_type=_FIELD, ends_only=True, as_of=as_of):
        fields.setdefault(r.endpoint1.id, []).append(r.endpoint2.id)
    return fields


def _load_nodes(store: LineageStore, node_ids: set[str], relations: Iterable[StoredRelation],
                as_of: datetime | None = None, extracted: ExtractedNamespaces = EVERYTHING_EXTRACTED,
                parents: Callable[[list[str]], Mapping[str, str]] | None = None) -> dict[str, Node]:
    """The nodes of `node_ids`; with `as_of`, deleted only if deleted by then (a table dropped
    later was alive at `as_of`). A dataset no extractor indexed counts as indexed when no
    extractor in `extracted` is responsible for it. `parents`: the datasets of columns (by
    default asked of the store)."""
    nodes: dict[str, Node] = {}
    live_stubs: dict[str, StoredElement] = {}
    for element in store.elements(sorted(node_ids)).values():
        deleted = element.deleted if as_of is None else element.deleted_at(as_of)
        nodes[element.id] = Node(element.id, element.qualified_name, element.type, element.source_type,
                                 element.name, deleted, indexed=True)
        if not deleted and element.stub:
            live_stubs[element.id] = element
    for node_id in _unresolved(store, live_stubs, as_of, extracted,
                               parents or (lambda fields: _parents_of(store, fields))):
        nodes[node_id] = dataclasses.replace(nodes[node_id], indexed=False)
    for relation in relations:  # endpoints no extractor has indexed: known from the relation only
        for endpoint in (relation.endpoint1, relation.endpoint2):
            if endpoint.id not in nodes:
                entity = endpoint.type not in _OPERATION_TYPES and \
                    not responsible(extracted, endpoint.source_type, endpoint.qualified_name)
                nodes[endpoint.id] = Node(endpoint.id, endpoint.qualified_name, endpoint.type, endpoint.source_type,
                                          display_name(endpoint.qualified_name, endpoint.type, endpoint.source_type),
                                          deleted=False, indexed=entity)
    return nodes


def _fields_of(relations: Iterable[StoredRelation], root: StoredElement) -> list[str]:
    """The columns among the relations' endpoints and the root."""
    return sorted({end.id for r in relations for end in (r.endpoint1, r.endpoint2) if end.type == _FIELD}
                  | ({root.id} if root.type == _FIELD else set()))


def _parents_ask(fields: Sequence[str]) -> RelationAsk:
    """The PARENT_CHILD relations of `fields` (columns) from their datasets: endpoints only."""
    return RelationAsk(tuple(fields), (_PARENT_CHILD,), 2, ends_only=True)


def _parents_of(store: LineageStore, fields: Sequence[str]) -> Mapping[str, str]:
    """The dataset of each of `fields` (columns) that has one, in one ask (none without columns)."""
    if not fields:
        return {}
    ask = _parents_ask(fields)
    return {r.endpoint2.id: r.endpoint1.id for r in store.relations(ask.ids, ask.types, ask.near_end, ends_only=True)}


def _unresolved(store: LineageStore, live_stubs: Mapping[str, StoredElement],
                as_of: datetime | None, extracted: ExtractedNamespaces,
                parents: Callable[[list[str]], Mapping[str, str]]) -> set[str]:
    """The live (not deleted) stubs nothing proves existed: datasets no operation wrote of a
    namespace an extractor in `extracted` is responsible for, and columns of such a dataset (a
    column is as real as its table)."""
    fields = [n for n, element in live_stubs.items() if element.type == _FIELD]
    parent_of = {f: p for f, p in parents(fields).items() if f in live_stubs} if fields else {}
    stub_datasets = {n: e for n, e in live_stubs.items() if e.type != _FIELD}
    other_parents = set(parent_of.values()) - set(stub_datasets)
    proven_parents: set[str] = set()  # real elements, or deleted ones: they existed
    for element in store.elements(sorted(other_parents)).values() if other_parents else ():
        if not (element.deleted if as_of is None else element.deleted_at(as_of)) and element.stub:
            stub_datasets[element.id] = element
        else:
            proven_parents.add(element.id)
    # a reference no extractor will ever index is all there is of it: an entity as it stands
    waiting = {n for n, e in stub_datasets.items()
               if e.type in _OPERATION_TYPES or responsible(extracted, e.source_type, e.qualified_name)}
    unproven = waiting - _written(store, sorted(waiting), as_of)
    unresolved = {n for n in stub_datasets if n in live_stubs and n in unproven}
    unresolved.update(f for f in fields if parent_of.get(f) not in proven_parents and
                      (parent_of[f] in unproven if f in parent_of else
                       responsible(extracted, live_stubs[f].source_type, live_stubs[f].qualified_name)))
    return unresolved


def _written(store: LineageStore, element_ids: list[str], as_of: datetime | None = None) -> set[str]:
    """Those of `element_ids` that some DATA_FLOW leads into (an operation wrote them, by `as_of`)."""
    if not element_ids:
        return set()
    return {r.endpoint2.id for r in store.relations(element_ids, (_DATA_FLOW,), 2, ends_only=True, as_of=as_of)}


# -- what is shown ----------------------------------------------------------------------------

#: Relation types along which a hidden node is passed through (model.RELATION_SEMANTICS).
_CONTRACTED = frozenset(t.value for t, semantics in RELATION_SEMANTICS.items() if semantics.contracted)


def _contract(root: str, nodes: Mapping[str, Node], edges: list[Edge], options: LineageOptions,
              truncated: bool, cut: frozenset[str] = frozenset()) -> LineageGraph:
    """Drop hidden nodes and connect what was connected through them. A hidden node the cap cut
    passes its mark to the shown nodes next to it: their lineage continues through it."""
    def hidden(node_id: str) -> bool:
        if node_id == root:
            return False
        node = nodes[node_id]
        if node.type in _OPERATION_TYPES or not node.indexed:
            return not options.operations
        return node.deleted and not options.deleted

    outgoing: dict[str, list[Edge]] = {}
    for edge in edges:
        outgoing.setdefault(edge.source, []).append(edge)
    shown_edges: dict[tuple[str, str, str, str | None, str | None, str | None], Edge] = {}
    for edge in edges:
        if hidden(edge.source):
            continue
        if not hidden(edge.target):
            _put(shown_edges, (edge.source, edge.target, edge.type, edge.dependency_type, edge.expression,
                               edge.subtype), edge)
            continue
        via = frozenset({edge.target}) if nodes[edge.target].type in _OPERATION_TYPES else frozenset()
        # Follow the flow through hidden nodes to the next shown ones.
        stack, visited = [edge.target], {edge.target}
        while stack:
            for onward in outgoing.get(stack.pop(), []):
                if onward.type not in _CONTRACTED:
                    continue
                if hidden(onward.target):
                    if onward.target not in visited:
                        visited.add(onward.target)
                        stack.append(onward.target)
                elif onward.target != edge.source:
                    key = (edge.source, onward.target, edge.type, None, None, None)
                    _put(shown_edges, key, Edge(edge.source, onward.target, edge.type,
                                                first_seen=_earliest(edge.first_seen, onward.first_seen),
                                                last_seen=_latest(edge.last_seen, onward.last_seen), via=via))
    used = {root} | {e.source for e in shown_edges.values()} | {e.target for e in shown_edges.values()}
    cut = frozenset(n for n in cut if n in nodes)  # queued columns no relation reached are not in the graph
    marked = {n for n in cut if not hidden(n)}
    for edge in edges:
        for near, far in ((edge.source, edge.target), (edge.target, edge.source)):
            if near in cut and hidden(near) and not hidden(far):
                marked.add(far)
    shown_nodes = tuple(sorted((dataclasses.replace(nodes[n], cut=n in marked) for n in used if n in nodes),
                               key=lambda n: (n.id != root, n.type, n.qualified_name)))
    ordered_edges = tuple(sorted(shown_edges.values(),
                                 key=lambda e: (nodes[e.source].qualified_name, nodes[e.target].qualified_name, e.type)))
    return LineageGraph(root, shown_nodes, ordered_edges, truncated)


_EdgeKey = tuple[str, str, str, str | None, str | None, str | None]


def _put(edges: dict[_EdgeKey, Edge], key: _EdgeKey, edge: Edge) -> None:
    edges[key] = edges[key].merged(edge) if key in edges else edge


def _earliest(one: datetime | None, two: datetime | None) -> datetime | None:
    return two if one is None else one if two is None else min(one, two)


def _latest(one: datetime | None, two: datetime | None) -> datetime | None:
    return two if one is None else one if two is None else max(one, two)


# -- what changed between two moments -----------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class LineageChanges:
    """What changed in an entity's lineage between `since` and `until`: the edges of its graph
    (each dataset's latest run, as `latest`) at `until` that were not there at `since`, those
    gone, and the entities of its lineage up to `until` (every run) created or deleted in between."""

    root: str
    since: datetime
    until: datetime
    appeared: tuple[Edge, ...]
    disappeared: tuple[Edge, ...]
    created: tuple[Node, ...]
    deleted: tuple[Node, ...]
    #: every node the edges and entities name, by id
    nodes: Mapping[str, Node]

    def as_dict(self) -> dict[str, Any]:
        def edge(e: Edge, when: str, moment: datetime | None) -> dict[str, Any]:
            shown = e.as_dict()
            if moment is not None:
                shown[when] = moment.isoformat()
            if e.via:
                shown["executions"] = [self.nodes[n].as_dict() if n in self.nodes else {"id": n}
                                       for n in sorted(e.via)]
            return shown

        used = {self.root} | {n for e in (*self.appeared, *self.disappeared) for n in (e.source, e.target)} \
            | {n.id for n in (*self.created, *self.deleted)}
        return {"root": self.root, "since": self.since.isoformat(), "until": self.until.isoformat(),
                "appeared": [edge(e, "firstSeen", e.first_seen) for e in self.appeared],
                "disappeared": [edge(e, "lastSeen", e.last_seen) for e in self.disappeared],
                "created": [n.id for n in self.created], "deleted": [n.id for n in self.deleted],
                "nodes": [self.nodes[n].as_dict() for n in sorted(used) if n in self.nodes]}


def changes(store: LineageStore, entity: str, since: datetime, until: datetime,
            options: LineageOptions = LineageOptions()) -> LineageChanges:
    """The changes of `entity`'s lineage between `since` and `until` (see LineageChanges). Each
    edge comes with when it was first and last seen up to `until`, and the executions that showed it."""
    if until < since:
        raise UsageError(f"until {until.isoformat()} is before since {since.isoformat()}")
    walk_options = dataclasses.replace(options, latest=True, operations=False)
    before = lineage(store, entity, dataclasses.replace(walk_options, as_of=since))
    after = lineage(store, entity, dataclasses.replace(walk_options, as_of=until))
    old, new = set(before.edges), set(after.edges)
    # Every run up to `until`, dropped entities too: when an edge was first and last seen, and
    # by which executions (the graphs above know only each dataset's latest run).
    every_run = lineage(store, entity, dataclasses.replace(walk_options, as_of=until, latest=False, deleted=True))
    seen = {e: e for e in every_run.edges}
    nodes = {n.id: n for n in every_run.nodes} | {n.id: n for n in before.nodes} | {n.id: n for n in after.nodes}
    appeared = [seen.get(e, e) for e in after.edges if e not in old]
    disappeared = [seen.get(e, e) for e in before.edges if e not in new]
    executions = {n for e in (*appeared, *disappeared) for n in e.via}
    for element in store.elements(sorted(executions)).values():
        nodes.setdefault(element.id, Node(element.id, element.qualified_name, element.type, element.source_type,
                                          element.name, element.deleted, indexed=True))
    created: list[Node] = []
    deleted: list[Node] = []
    for element in store.elements(sorted(nodes)).values():
        if element.created is not None and since < element.created <= until:
            created.append(nodes[element.id])
        if element.deleted and element.delete_time is not None and since < element.delete_time <= until:
            deleted.append(nodes[element.id])

    def order(edges: Iterable[Edge]) -> tuple[Edge, ...]:
        return tuple(sorted(edges, key=lambda e: (nodes[e.source].qualified_name, nodes[e.target].qualified_name,
                                                  e.type)))

    return LineageChanges(after.root, since, until, order(appeared), order(disappeared),
                          tuple(sorted(created, key=lambda n: n.qualified_name)),
                          tuple(sorted(deleted, key=lambda n: n.qualified_name)), nodes)


def render_changes(found: LineageChanges) -> str:
    """The changes as text: `+ source -> target` for an edge that appeared, `- ` for one gone."""
    def label(node_id: str) -> str:
        node = found.nodes.get(node_id)
        return node.qualified_name if node is not None else node_id

    def executions(edge: Edge) -> str:
        return f" (by {', '.join(label(n) for n in sorted(edge.via))})" if edge.via else ""

    root = found.nodes.get(found.root)
    lines = [f"{root.qualified_name if root else found.root}: changes from {found.since.isoformat()} to "
             f"{found.until.isoformat()}"]
    for edge in found.appeared:
        when = f" first seen {edge.first_seen.isoformat()}" if edge.first_seen else ""
        lines.append(f"  + {label(edge.source)} -> {label(edge.target)}  [{edge.type}]{when}{executions(edge)}")
    for edge in found.disappeared:
        when = f" last seen {edge.last_seen.isoformat()}" if edge.last_seen else ""
        lines.append(f"  - {label(edge.source)} -> {label(edge.target)}  [{edge.type}]{when}{executions(edge)}")
    lines.extend(f"  created {node.qualified_name}" for node in found.created)
    lines.extend(f"  deleted {node.qualified_name}" for node in found.deleted)
    if len(lines) == 1:
        lines.append("  (no changes)")
    return "\n".join(lines)


def render_text(graph: LineageGraph) -> str:
    """Edges as `source -> target`, one a line, after the root."""
    by_id = {n.id: n for n in graph.nodes}

    def label(node_id: str) -> str:
        node = by_id[node_id]
        flags = "".join([" [deleted]" if node.deleted else "", "" if node.indexed else " [unlinked]"])
        return f"{node.qualified_name} ({node.source_type} {node.type}){flags}"

    lines = [label(graph.root)]
    for edge in graph.edges:
        detail = edge.type + (f" {edge.dependency_type}" if edge.dependency_type else "") + \
            (f" ({edge.subtype})" if edge.subtype else "") + (f": {edge.expression}" if edge.expression else "")
        lines.append(f"  {label(edge.source)} -> {label(edge.target)}  [{detail}]")
    if len(graph.edges) == 0:
        lines.append("  (no lineage)")
    if graph.truncated:
        lines.append("  ... truncated: more entities than the node limit")
    if graph.note:
        lines.append(f"  note: {graph.note}")
    return "\n".join(lines)

"""The read facade: what `navd search/entity/lineage/status` (and any future server) ask of the
index. Typed results, no printing, no argument parsing: callers format them.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import socket
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from navd import navigator
from navd.config import NavdConfig
from navd.errors import AmbiguousEntity, SolrError, UsageError, first_line
from navd.index.client import SolrIndex, batches
from navd.index.documents import RUN_KIND, display_document, endpoint_field
from navd.index.hub_cache import Generation, HubCache, generation
from navd.index.lineage_store import SolrLineageStore, terms_filter
from navd.index.lookup import Scope, resolve
from navd.index.query_syntax import lucene_query, quote, sort_spec
from navd.lineage import EntityNotFound, LineageGraph, LineageOptions, Node
from navd.lineage import lineage as walk_lineage
from navd.locks import lock_held
from navd.model import ElementType, RelationType
from navd.names import shown as shown_name  # status() calls its result `shown`
from navd.process import pid_runs
from navd.runs import INTERRUPTED, components, last_run_and_success, parse_solr_date, schedule_identity

__all__ = ["AmbiguousEntity", "ComponentStatus", "ComponentTotals", "EntityNotFound", "RunPage", "Scope",
           "SearchPage", "SearchResult", "Status", "ExecutionPage", "entity", "executions",
           "export_openlineage", "lineage", "lookup_scope", "marquez_column_lineage", "marquez_lineage",
           "navigator_entities", "navigator_entity", "navigator_entity_page", "navigator_lineage", "run_history",
           "run_totals", "search", "search_page", "status", "usage", "unused", "deps", "impact"]


# -- search and entity ------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SearchResult:
    found: int  # numFound: all matches, not only those returned
    millis: int | None  # Solr's QTime, when it said
    docs: tuple[dict[str, Any], ...]  # as users see them (documents.display_document)


def search(index: SolrIndex, core: str, query: str, *, rows: int = 20, sort: str | None = None) -> SearchResult:
    """A Solr query in the Lucene syntax on one core, sorted by fields only. Solr reads the query
    as navd parsed and wrote it back (navd/index/query_syntax.py: what is refused, a
    QuerySyntaxError naming `query` or `--sort`)."""
    solr_query = lucene_query(query)
    solr_sort = sort_spec(sort) if sort is not None else None
    # defType fixed: a core's defaults cannot swap the parser the query was parsed for.
    body = _user_search(index, core, solr_query, rows=rows, sort=solr_sort, params={"defType": "lucene"})
    return SearchResult(int(body["response"]["numFound"]), body.get("responseHeader", {}).get("QTime"),
                        tuple(display_document(d) for d in body["response"]["docs"]))


@dataclasses.dataclass(frozen=True)
class SearchPage:
    found: int  # numFound: all matches
    docs: tuple[dict[str, Any], ...]  # as users see them (documents.display_document)
    cursor: str  # the cursor this page was asked from ("*": the first page)
    next_cursor: str | None  # None: this was the last page


#: the first page of a cursor walk (Solr's cursorMark)
FIRST_CURSOR = "*"


def search_page(index: SolrIndex, core: str, query: str, *, rows: int = 20,
                cursor: str = FIRST_CURSOR) -> SearchPage:
    """One page of a query walked with Solr's cursorMark: stable however far the walk goes
    (start=N gets slower and shifts under writes). The sort is the unique key, as cursorMark
    requires. An invalid cursor is Solr's 400 (SolrError, status 400); a refused query a
    QuerySyntaxError naming `query` (as search())."""
    body = _user_search(index, core, lucene_query(query), rows=rows, sort="identity asc",
                        params={"defType": "lucene", "cursorMark": cursor})
    docs = tuple(display_document(d) for d in body["response"]["docs"])
    following = str(body.get("nextCursorMark", cursor))
    # Solr says the end by returning the cursor it was given; a short page is the end too.
    done = following == cursor or len(docs) < rows
    return SearchPage(int(body["response"]["numFound"]), docs, cursor, None if done else following)


#: Lucene's TooComplexToDeterminizeException, which Solr answers with HTTP 500: a wildcard or a
#: regular expression whose automaton is too large to build (`*a?*a?*...`, `/a{99999}/`)
_TOO_COMPLEX = re.compile(r"Determinizing .* would require more than \d+ effort")


def _user_search(index: SolrIndex, core: str, query: str, **kwargs: Any) -> dict[str, Any]:
    """index.search() of a user's query: Solr's 500 for a pattern too complex to build is the
    query's fault, a UsageError naming `query` (a 400, exit 2), not a failure of Solr's."""
    try:
        return index.search(core, query, **kwargs)
    except SolrError as exc:
        if exc.status == 500 and _TOO_COMPLEX.search(str(exc)):
            raise UsageError(f"query: too complex for Solr: {first_line(exc, 200)}") from None
        raise


def lookup_scope(config: NavdConfig) -> Scope:
    """What names typed without a cluster or file system stand for: `[cluster] name`, `[hdfs]
    default_fs` (navd/index/lookup.py)."""
    from navd.extractors.hdfs.settings import hdfs_settings  # noqa: PLC0415 - a registered component's section

    return Scope(cluster=config.cluster.name, default_fs=hdfs_settings(config).default_fs)


def _resolve(index: SolrIndex, name: str, scope: Scope) -> dict[str, Any]:
    """The one element `name` stands for (navd/index/lookup.py's rules); EntityNotFound if none,
    AmbiguousEntity (with the candidates) if several."""
    docs = resolve(index, name, scope)
    if not docs:
        raise EntityNotFound(f"no element with identity or qualifiedName {shown_name(name)}")
    return docs[0]


def entity(index: SolrIndex, name: str, scope: Scope = Scope()) -> tuple[dict[str, Any], ...]:
    """The element `name` stands for: an identity, a qualifiedName, or a shorter spelling
    resolved in `scope` (a bare path, `db.table`, an application id: navd/index/lookup.py), as
    users see it (a tuple of one). EntityNotFound if none; AmbiguousEntity, with the
    candidates, if several."""
    return (display_document(_resolve(index, name, scope)),)


# -- lineage ----------------------------------------------------------------------------------

def lineage(index: SolrIndex, entity: str, options: LineageOptions = LineageOptions(),
            scope: Scope = Scope(), hubs: HubCache | None = None) -> LineageGraph:
    """The lineage graph (navd/lineage.py) of the element `entity` stands for (as `entity()`).
    With `hubs` (the server's), a hub's graph comes from the cache while the index is unchanged."""
    root = _resolve(index, entity, scope)
    identity = str(root["identity"])
    read_at: Generation | None = None
    if hubs is not None and hubs.enabled and hubs.is_hub(identity, options):
        read_at = generation(index)  # before the walk: what it reads is at least this new
        cached = hubs.get(identity, options, read_at)
        if cached is not None:
            return cached
    store = SolrLineageStore(index, known=[root])
    graph = walk_lineage(store, identity, options)
    if hubs is not None:
        hubs.put(identity, options, store.known_degree, graph, read_at)
    return graph


# -- an operation's executions ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ExecutionPage:
    operation: str  # the identity of the operation (template) whose runs these are
    found: int  # its executions in all
    start: int
    executions: tuple[dict[str, Any], ...]  # newest first (by `started`), as users see them


_OPERATION = ElementType.OPERATION.value
_EXECUTION = ElementType.OPERATION_EXECUTION.value


def executions(index: SolrIndex, operation: str, scope: Scope = Scope(), *, rows: int = 20,
               start: int = 0) -> ExecutionPage:
    """The run history of an operation: its executions (INSTANCE_OF relations from the template)
    newest first, `rows` from `start`. `operation` is anything `entity()` resolves; an execution
    stands for its operation. A name of another type is a UsageError naming `operation`."""
    if rows < 0 or start < 0:
        raise ValueError(f"executions page rows={rows} start={start}: both must be >= 0")
    element = _resolve(index, operation, scope)
    template = str(element["identity"])
    instance_of = f"type:{RelationType.INSTANCE_OF.value}"
    if element.get("type") == _EXECUTION:
        templates = [str(doc[endpoint_field(1, "Id")]) for doc in index.scan(
            "relations", "*:*", fl=endpoint_field(1, "Id"),
            filters=[instance_of, terms_filter(endpoint_field(2, "Id"), [template])])]
        if not templates:  # an execution of no known operation: its own history is itself
            return ExecutionPage(template, 1, start, (display_document(element),) if start == 0 and rows else ())
        template = templates[0]
    elif element.get("type") != _OPERATION:
        raise UsageError(f"operation: {shown_name(operation)} is a {element.get('type')}, not an operation "
                         f"or an execution")
    runs = sorted({str(doc[endpoint_field(2, "Id")]) for doc in index.scan(
        "relations", "*:*", fl=endpoint_field(2, "Id"),
        filters=[instance_of, terms_filter(endpoint_field(1, "Id"), [template])])})
    if not runs:
        return ExecutionPage(template, 0, start, ())
    # A POST with the ids as one terms filter (thousands of runs of a daily job fit); the order is
    # Solr's, newest first, executions with no start time last, ties by identity.
    body = index.search("elements", "*:*", rows=rows, start=start, sort="started desc, identity asc",
                        filters=[f"type:{_EXECUTION}", terms_filter("identity", runs)])
    return ExecutionPage(template, int(body["response"]["numFound"]), start,
                         tuple(display_document(d) for d in body["response"]["docs"]))


# -- OpenLineage out (navd/openlineage/export.py) ----------------------------------------------

def export_openlineage(index: SolrIndex, config: NavdConfig, *, since: datetime | None = None,
                       entity: str | None = None, scope: Scope = Scope(),
                       validate: bool = False) -> Iterator[dict[str, Any]]:
    """The OpenLineage RunEvents of the executions in the index and of the Hive views' definitions
    (README "OpenLineage"), streamed: those started or ended (views: created or changed) at or
    after `since`; with `entity`, those of that element (an execution and the executions under
    it, an operation's executions, the executions that read or wrote a dataset, a view and the
    views reading a dataset). With `validate`, each event is checked against the vendored schema
    first (InvalidEvent naming the field: navd wrote something the spec refuses)."""
    from navd.openlineage.export import (
        ExportSettings,
        execution_events,
        execution_filters,
        executions_of,
        view_events,
        view_filters,
        views_of,
    )
    from navd.openlineage.schema import validate as validate_event

    settings = ExportSettings(dict(config.openlineage.namespaces))
    if entity is None:
        events = itertools.chain(execution_events(index, settings, execution_filters(since)),
                                 view_events(index, settings, view_filters(since)))
    else:
        # an entity's runs by identity, in sorted chunks: a busy table's thousands of runs would
        # overflow Solr's form body as one filter; sorted, the chunks keep the identity order
        doc = _resolve(index, entity, scope)
        events = itertools.chain(
            *(execution_events(index, settings, execution_filters(since, chunk))
              for chunk in batches(executions_of(index, doc), _EXPORT_IDS)),
            *(view_events(index, settings, view_filters(since, chunk))
              for chunk in batches(views_of(index, doc), _EXPORT_IDS)))
    for event in events:
        if validate:
            validate_event(event)
        yield event


#: identities per filter when exporting an entity's runs
_EXPORT_IDS = 1000


def marquez_lineage(index: SolrIndex, config: NavdConfig, node_id: str, *, depth: int,
                    max_nodes: int) -> dict[str, Any]:
    """Marquez's `GET /api/v1/lineage` of a `dataset:`/`job:` node (navd/openlineage/marquez.py):
    UsageError naming `nodeId` for a malformed one, EntityNotFound for one navd does not hold."""
    from navd.openlineage import marquez
    from navd.openlineage.export import ExportSettings

    return marquez.lineage(index, ExportSettings(dict(config.openlineage.namespaces)), config.cluster.name,
                           node_id, depth, max_nodes)


def marquez_column_lineage(index: SolrIndex, config: NavdConfig, node_id: str, *, depth: int,
                           with_downstream: bool, max_nodes: int) -> dict[str, Any]:
    """Marquez's `GET /api/v1/column-lineage` of a `datasetField:` (or `dataset:`) node."""
    from navd.openlineage import marquez
    from navd.openlineage.export import ExportSettings

    return marquez.column_lineage(index, ExportSettings(dict(config.openlineage.namespaces)), config.cluster.name,
                                  node_id, depth, with_downstream, max_nodes)


# -- Navigator-compatible reads (navd/navigator.py: the vocabulary; docs/navigator-api.md) --------

#: Solr's order for Navigator's pages: cursorMark needs the unique key, and offset pages need a
#: total order, or an entity could show on two pages and another on none.
_PAGE_ORDER = "identity asc"


def navigator_entities(index: SolrIndex, query: str = "*:*", *, offset: int = 0,
                       limit: int = navigator.DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """GET entities: the elements matching Navigator's `query`, `limit` from `offset`, in
    identity order, as Navigator entities."""
    offset = navigator.bounded_int("offset", offset, 0, navigator.MAX_OFFSET)
    limit = navigator.bounded_int("limit", limit, 0, navigator.MAX_LIMIT)
    body = _navigator_search(index, query, rows=limit, start=offset)
    return [navigator.entity(doc) for doc in body["response"]["docs"]]


def navigator_entity_page(index: SolrIndex, query: str = "*:*", *, limit: int = navigator.DEFAULT_LIMIT,
                          cursor_mark: str = navigator.FIRST_CURSOR) -> navigator.CursorPage:
    """POST entities/paging: one page from `cursor_mark` (`*` first). The last page is the one
    shorter than `limit`; a request after it gets no results and the same cursorMark."""
    limit = navigator.bounded_int("limit", limit, 1, navigator.MAX_LIMIT)
    cursor_mark = navigator.check_cursor_mark(cursor_mark)
    body = _navigator_search(index, query, rows=limit, cursor_mark=cursor_mark)
    return navigator.CursorPage(tuple(navigator.entity(doc) for doc in body["response"]["docs"]),
                                str(body["nextCursorMark"]))


def _navigator_search(index: SolrIndex, query: str, *, rows: int, start: int = 0,
                      cursor_mark: str | None = None) -> dict[str, Any]:
    # parsed (refusals: QuerySyntaxError naming `query`), rewritten as a tree, written back
    translated = navigator.translate_query(query)
    params: dict[str, Any] = {"defType": "lucene"}  # as search(): the parser the query was parsed for
    if cursor_mark is not None:
        params["cursorMark"] = cursor_mark
    try:
        return _user_search(index, "elements", translated, rows=rows, start=start, sort=_PAGE_ORDER, params=params)
    except SolrError as exc:
        if exc.status != 400:
            raise
        # Solr's 400 is the request's fault (a bad query or cursorMark): the caller's to fix.
        parameter = "cursorMark" if "cursorMark" in str(exc) else "query"
        raise UsageError(f"{parameter}: Solr refused it: {first_line(exc, 300)}") from None


def navigator_entity(index: SolrIndex, identity: str) -> dict[str, Any]:
    """GET entities/{identity}: the element with that identity as a Navigator entity."""
    docs = index.get("elements", [identity]) if identity else []
    if not docs:
        raise EntityNotFound(f"no entity with identity {shown_name(identity)}")
    return navigator.entity(docs[0])


#: What GET lineage walks: Navigator's lineage shows operations and deleted entities.
_NAVIGATOR_LINEAGE = LineageOptions(direction="both", operations=True, deleted=True)


def navigator_lineage(index: SolrIndex, entity_ids: Sequence[str], hubs: HubCache | None = None) -> dict[str, Any]:
    """GET lineage: the relations of the lineage of each entity (navd's walk, with operations
    and deleted entities) and the entities they connect, as Navigator relations and entities.
    An entity that is not indexed: EntityNotFound."""
    nodes: dict[str, Node] = {}
    walked: set[tuple[str, frozenset[str]]] = set()
    truncated = False
    for entity_id in entity_ids:
        graph = lineage(index, entity_id, _NAVIGATOR_LINEAGE, hubs=hubs)
        nodes.update((node.id, node) for node in graph.nodes)
        walked.update((edge.type, frozenset((edge.source, edge.target))) for edge in graph.edges)
        truncated = truncated or graph.truncated
    relations = _relations_walked(index, walked)
    stored = {str(doc["identity"]): doc for doc in index.get("elements", sorted(nodes))}
    entities = [navigator.entity(stored[i]) if i in stored else
                navigator.placeholder(i, n.qualified_name, n.type, n.source_type, n.name)
                for i, n in sorted(nodes.items())]
    answer: dict[str, Any] = {"entities": entities, "relations": relations}
    if truncated:
        answer["truncated"] = True  # navd's: the walk stopped at LineageOptions.max_nodes
    return answer


def _relations_walked(index: SolrIndex, walked: set[tuple[str, frozenset[str]]]) -> list[dict[str, Any]]:
    """The stored relations behind the walk's edges (type and the two ends; an edge does not
    say which end is endpoint 1), as Navigator relations in identity order."""
    if not walked:
        return []
    ends = sorted({end for _type, pair in walked for end in pair})
    types = sorted({relation_type for relation_type, _pair in walked})
    found: dict[str, dict[str, Any]] = {}
    for chunk in batches(ends, 500):
        filters = [f"type:({' OR '.join(types)})", terms_filter(endpoint_field(1, "Id"), chunk)]
        for doc in index.scan("relations", "*:*", filters=filters):
            key = (str(doc["type"]), frozenset((str(doc[endpoint_field(1, "Id")]), str(doc[endpoint_field(2, "Id")]))))
            if key in walked:
                found[str(doc["identity"])] = doc
    return [navigator.relation(found[identity]) for identity in sorted(found)]


# -- runs -------------------------------------------------------------------------------------

class ComponentStatus(TypedDict):
    last_run: dict[str, Any]  # {} when never run
    last_success: str | None  # when the last successful run ended
    next_run: str | None  # a Solr date, "POLLING every Ns", NOT_SCHEDULED or AFTER_CURRENT_RUN


class Status(TypedDict):
    components: dict[str, ComponentStatus]
    totals: dict[str, int]


def status(index: SolrIndex, state_root: Path | None = None) -> Status:
    """Per component the last run, the last success and the next run; totals per core.

    With `state_root` (the state directory runs lock their component in), a RUNNING last run
    of this host whose component lock nobody holds is shown FAILED, interrupted: its process
    was killed (the daemon records it so at its next start, a next run replaces it)."""
    shown: dict[str, ComponentStatus] = {}
    names = components(index)
    schedules = {str(d["component"]): d for d in index.get("runs", [schedule_identity(n) for n in names])}
    for name in names:
        last, success = last_run_and_success(index, name)
        if state_root is not None and _interrupted(last, state_root):
            last = {**last, "state": "FAILED", "error": INTERRUPTED}
        schedule = schedules.get(name, {})
        next_run = schedule.get("nextRun") or schedule.get("state")
        if next_run != "NOT_SCHEDULED" and _publisher_gone(schedule):
            next_run = "NOT_SCHEDULED"  # a killed navd could not say so itself
        elif schedule.get("nextRun") and last.get("started") and schedule["nextRun"] <= last["started"]:
            # The schedule still names the run that began last: the daemon sets the next one when
            # it is done with that run, including the link pass that follows an extraction.
            next_run = "AFTER_CURRENT_RUN"
        shown[name] = {"last_run": last, "last_success": success.get("ended") if success else None,
                       "next_run": next_run}
    totals = {"elements": index.count("elements"), "relations": index.count("relations"),
              "unlinked_relations": index.count("relations", "unlinked:true"),
              "deleted_elements": index.count("elements", "deleted:true")}
    return {"components": shown, "totals": totals}


def _interrupted(run: Mapping[str, Any], state_root: Path) -> bool:
    """A RUNNING record of this host whose component's lock is free: no process runs it. A lock
    this state directory never had (another one's runs) tells nothing."""
    return (run.get("state") == "RUNNING" and run.get("host") == socket.gethostname()
            and lock_held(state_root, str(run["component"])) is False)


def _publisher_gone(schedule: Mapping[str, Any]) -> bool:
    """The schedule was published by a `navd run` on this host that no longer runs. Unknown
    (another host, no /proc) counts as running."""
    if schedule.get("host") != socket.gethostname() or "pid" not in schedule or not Path("/proc/self").exists():
        return False
    return not pid_runs(int(schedule["pid"]), "navd")


@dataclasses.dataclass(frozen=True)
class RunPage:
    found: int  # run records of the component in all
    start: int
    runs: tuple[dict[str, Any], ...]  # newest first, Solr-maintained fields dropped


def run_history(index: SolrIndex, component: str, *, rows: int = 20, start: int = 0) -> RunPage:
    """The component's run records, newest first, `rows` from `start`."""
    if rows < 0 or start < 0:
        raise ValueError(f"run history page rows={rows} start={start}: both must be >= 0")
    body = index.search("runs", f"kind:{RUN_KIND} AND component:{quote(component)}", rows=rows,
                        start=start, sort="started desc")
    runs = tuple({k: v for k, v in doc.items() if k not in ("_version_", "lastIndexed", "kind")}
                 for doc in body["response"]["docs"])
    return RunPage(int(body["response"]["numFound"]), start, runs)


@dataclasses.dataclass(frozen=True)
class ComponentTotals:
    runs: int  # run records (any state)
    failures: int  # FAILED ones
    last_duration_seconds: float | None  # of the newest ended run
    last_success_ended: str | None  # a Solr date


def run_totals(index: SolrIndex) -> dict[str, ComponentTotals]:
    """Per component with run records: how many runs, how many failed, the newest ended run's
    duration and when the last success ended (what /metrics exports)."""
    totals: dict[str, ComponentTotals] = {}
    for name in components(index):
        where = f"kind:{RUN_KIND} AND component:{quote(name)}"
        runs = index.count("runs", where)
        if not runs:
            continue  # only a published schedule so far
        failures = index.count("runs", f"{where} AND state:FAILED")
        newest = index.search("runs", f"{where} AND ended:*", rows=1, sort="ended desc")["response"]["docs"]
        duration = None
        if newest and newest[0].get("started"):
            duration = (parse_solr_date(str(newest[0]["ended"]))
                        - parse_solr_date(str(newest[0]["started"]))).total_seconds()
        _, success = last_run_and_success(index, name)
        totals[name] = ComponentTotals(runs, failures, duration, success.get("ended") if success else None)
    return totals


# --- taint and reprocess (issue 23) ---

def taint(index: SolrIndex, name: str, scope: Scope = Scope(), *, start: datetime | None = None,
          end: datetime | None = None, reason: str = "", user: str | None = None) -> dict[str, Any]:
    """Record a taint on the dataset or partition `name` stands for (as `entity()`), over
    [start, end) or all of it (a partition: its own period); the record as shown."""
    from navd.index.taints import add_taint

    return add_taint(index, _resolve(index, name, scope), start, end, reason, user)


def clear_taints(index: SolrIndex, name: str | None = None, scope: Scope = Scope(), *,
                 taint_id: str | None = None) -> list[dict[str, Any]]:
    """Remove the taint `taint_id`, or every taint recorded on `name`; those removed."""
    from navd.index.taints import clear_taints as clear

    if taint_id is not None:
        return clear(index, taint_id=taint_id)
    if name is None:
        raise UsageError("taint --clear: name the entity or give --id")
    return clear(index, target=_resolve(index, name, scope))


def taints(index: SolrIndex, name: str | None = None, scope: Scope = Scope(), *,
           rows: int = 1000) -> list[dict[str, Any]]:
    """The taints (newest first); with `name`, those covering that element."""
    from navd.index.taints import list_taints

    return list_taints(index, None if name is None else _resolve(index, name, scope), rows=rows)


def entity_taints(index: SolrIndex, doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The taints covering an element `entity()` returned (its `tainted` section)."""
    from navd.index.taints import list_taints

    return list_taints(index, doc)


def reprocess(index: SolrIndex, name: str | None = None, scope: Scope = Scope(), *,
              start: datetime | None = None, end: datetime | None = None,
              taint_id: str | None = None) -> Any:  # (navd.index.taints.Plan)
    """What to reprocess downstream of `name` over [start, end) (or all of it), or of the taint
    `taint_id`: the datasets and partitions touched, in dependency order, and the runs to redo."""
    from navd.index.taints import get_taint
    from navd.index.taints import reprocess as plan
    from navd.taint import taint_range

    if taint_id is not None:
        if name is not None or start is not None or end is not None:
            raise UsageError("reprocess: give an entity (with --from/--to) or --taint, not both")
        record = get_taint(index, taint_id)
        if record is None:
            raise EntityNotFound(f"no taint {shown_name(taint_id)}")
        docs = index.get("elements", [str(record["taint_target"])])
        if not docs:
            raise EntityNotFound(f"the element of taint {taint_id} is no longer indexed")
        start = parse_solr_date(record["taint_from"]) if record.get("taint_from") else None
        end = parse_solr_date(record["taint_to"]) if record.get("taint_to") else None
        return plan(index, docs[0], taint_range(start, end))
    if name is None:
        raise UsageError("reprocess: name the entity (or --taint ID)")
    return plan(index, _resolve(index, name, scope), taint_range(start, end))

# --- sensitivity (issue 23) ---

def sensitivity_tag(index: SolrIndex, config: NavdConfig, entity: str, level: str,
                    scope: Scope = Scope()) -> Any:  # -> navd.sensitivity.store.TagResult
    """`navd tag ENTITY --sensitivity LEVEL`: the user's tag on the column or table `entity`
    stands for, propagated downstream (navd/sensitivity). UsageError for an unknown level."""
    from navd.sensitivity.component import sensitivity_index
    from navd.sensitivity.store import tag_element

    sensitivity = sensitivity_index(index, config)
    sensitivity.levels.rank(level)  # an unknown level before anything is resolved or written
    return tag_element(sensitivity, _tag_target(index, entity, scope), level)


def sensitivity_clear(index: SolrIndex, config: NavdConfig, entity: str,
                      scope: Scope = Scope()) -> Any:  # -> navd.sensitivity.store.TagResult
    """`navd tag ENTITY --clear`: the user's tag removed and withdrawn downstream."""
    from navd.sensitivity.component import sensitivity_index
    from navd.sensitivity.store import clear_element

    return clear_element(sensitivity_index(index, config), _tag_target(index, entity, scope))


def sensitivity_explain(index: SolrIndex, config: NavdConfig, column: str,
                        scope: Scope = Scope()) -> Any:  # -> navd.sensitivity.store.Explanation
    """`navd tag --explain COLUMN`: the column's level and the path that carried it."""
    from navd.sensitivity.component import sensitivity_index
    from navd.sensitivity.store import explain_element

    return explain_element(sensitivity_index(index, config), _resolve(index, column, scope))


def _tag_target(index: SolrIndex, entity: str, scope: Scope) -> dict[str, Any]:
    doc = _resolve(index, entity, scope)
    if doc.get("type") not in (ElementType.FIELD.value, ElementType.TABLE.value, ElementType.VIEW.value):
        raise UsageError(f"tag: {shown_name(entity)} is a {doc.get('type')}: sensitivity is set on a table, "
                         f"a view or a column")
    return doc

# --- usage, unused, deps and impact (issue 23) ---
# navd/usage.py reads executions' DATA_FLOW; these resolve what users type and pass the clock.

def usage(index: SolrIndex, entity: str, scope: Scope = Scope(), *, days: int = 30,
          now: datetime | None = None) -> Any:  # navd.usage.Usage
    """Reads and writes per day of a table, directory, file or column in the last `days` days,
    its last read and write and when it was generated (navd/usage.py)."""
    from navd import usage as rules

    _check_days(days)
    return rules.usage(index, _resolve(index, entity, scope), days=days, now=now or _now())


def unused(index: SolrIndex, *, days: int = 30, database: str | None = None, after: str | None = None,
           now: datetime | None = None) -> Iterator[Any]:  # of navd.usage.UnusedTable
    """The tables no execution read in the last `days` days (in `database`), streamed in
    identity order (`after`: from the table after that identity)."""
    from navd import usage as rules

    _check_days(days)
    return rules.unused(index, days=days, database=database, after=after, now=now or _now())


def deps(index: SolrIndex, job: str, scope: Scope = Scope()) -> Any:  # navd.usage.Deps
    """The operations producing what the job (an operation or an execution) read in its last run."""
    from navd import usage as rules

    doc = _resolve(index, job, scope)
    if doc.get("type") not in (_OPERATION, _EXECUTION):
        raise UsageError(f"job: {shown_name(job)} is a {doc.get('type')}, not an operation or an execution")
    return rules.deps(index, doc)


def impact(index: SolrIndex, entity: str, scope: Scope = Scope(), *, depth: int = 5,
           max_nodes: int = 3000) -> Any:  # navd.usage.Impact
    """The downstream datasets of `entity`, the jobs reading it or them, their users and owners."""
    from navd import usage as rules

    return rules.impact(index, _resolve(index, entity, scope), depth=depth, max_nodes=max_nodes)


def _check_days(days: int) -> None:
    if days < 1:
        raise UsageError(f"days: {days} is not a number of days >= 1")


def _now() -> datetime:
    from datetime import UTC

    return datetime.now(UTC)

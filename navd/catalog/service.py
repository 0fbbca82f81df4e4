"""What `navd search` and `navd entity` (and /api/entities, /api/executions) ask of the index:
typed results, no printing, no argument parsing; callers format them."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from navd.annotations import store as annotation_store
from navd.annotations.rules import widened
from navd.catalog import store
from navd.config import NavdConfig
from navd.errors import SolrError, UsageError, first_line
from navd.index.client import SolrIndex
from navd.index.documents import display_document
from navd.index.lookup import Scope, resolve_one
from navd.index.query_syntax import parse, sort_spec, write
from navd.model import ElementType
from navd.names import shown
from navd.taint.store import list_taints

_OPERATION = ElementType.OPERATION.value
_EXECUTION = ElementType.OPERATION_EXECUTION.value
#: the first page of a cursor walk (Solr's cursorMark)
FIRST_CURSOR = "*"


def lookup_scope(config: NavdConfig) -> Scope:
    """What names typed without a cluster or file system stand for: `[cluster] name` and
    `default_fs` (navd/index/lookup.py)."""
    return Scope(cluster=config.cluster.name, default_fs=config.cluster.default_fs)


# -- search -----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SearchResult:
    found: int  # numFound: all matches, not only those returned
    millis: int | None  # Solr's QTime, when it said
    docs: tuple[dict[str, Any], ...]  # as users see them (documents.display_document)


def search(index: SolrIndex, core: str, query: str, *, rows: int = 20, sort: str | None = None) -> SearchResult:
    """A Solr query in the Lucene syntax on one core, sorted by fields only. Solr reads the query
    as navd parsed and wrote it back (navd/index/query_syntax.py: what is refused, a
    QuerySyntaxError naming `query` or `--sort`)."""
    solr_query = user_query(query, core)
    solr_sort = sort_spec(sort) if sort is not None else None
    # defType fixed: a core's defaults cannot swap the parser the query was parsed for.
    body = user_search(index, core, solr_query, rows=rows, sort=solr_sort, params={"defType": "lucene"})
    return SearchResult(int(body["response"]["numFound"]), body.get("responseHeader", {}).get("QTime"),
                        tuple(display_document(d) for d in body["response"]["docs"]))


@dataclasses.dataclass(frozen=True)
class SearchPage:
    found: int  # numFound: all matches
    docs: tuple[dict[str, Any], ...]  # as users see them (documents.display_document)
    cursor: str  # the cursor this page was asked from ("*": the first page)
    next_cursor: str | None  # None: this was the last page


def search_page(index: SolrIndex, core: str, query: str, *, rows: int = 20,
                cursor: str = FIRST_CURSOR) -> SearchPage:
    """One page of a query walked with Solr's cursorMark: stable however far the walk goes
    (start=N gets slower and shifts under writes). The sort is the unique key, as cursorMark
    requires. An invalid cursor is Solr's 400 (SolrError, status 400); a refused query a
    QuerySyntaxError naming `query` (as search())."""
    body = user_search(index, core, user_query(query, core), rows=rows, sort="identity asc",
                       params={"defType": "lucene", "cursorMark": cursor})
    docs = tuple(display_document(d) for d in body["response"]["docs"])
    following = str(body.get("nextCursorMark", cursor))
    # Solr says the end by returning the cursor it was given; a short page is the end too.
    done = following == cursor or len(docs) < rows
    return SearchPage(int(body["response"]["numFound"]), docs, cursor, None if done else following)


def user_query(query: str, core: str) -> str:
    """A user's query as navd sends it: parsed (refusals: QuerySyntaxError naming `query`), on
    the elements `description:` also searching what people wrote (navd/annotations), written
    back."""
    parsed = parse(query, "query")
    return write(widened(parsed) if core == "elements" else parsed, "query")


#: Lucene's TooComplexToDeterminizeException, which Solr answers with HTTP 500: a wildcard or a
#: regular expression whose automaton is too large to build (`*a?*a?*...`, `/a{99999}/`)
_TOO_COMPLEX = re.compile(r"Determinizing .* would require more than \d+ effort")


def user_search(index: SolrIndex, core: str, query: str, **kwargs: Any) -> dict[str, Any]:
    """index.search() of a user's query: Solr's 500 for a pattern too complex to build is the
    query's fault, a UsageError naming `query` (a 400, exit 2), not a failure of Solr's."""
    try:
        return index.search(core, query, **kwargs)
    except SolrError as exc:
        if exc.status == 500 and _TOO_COMPLEX.search(str(exc)):
            raise UsageError(f"query: too complex for Solr: {first_line(exc, 200)}") from None
        raise


# -- one element ------------------------------------------------------------------------------

def entity(index: SolrIndex, name: str, scope: Scope = Scope()) -> tuple[dict[str, Any], ...]:
    """The element `name` stands for: an identity, a qualifiedName, or a shorter spelling
    resolved in `scope` (a bare path, `db.table`, an application id: navd/index/lookup.py), as
    users see it (a tuple of one). EntityNotFound if none; AmbiguousEntity, with the
    candidates, if several."""
    return (display_document(resolve_one(index, name, scope)),)


def shown_entity(index: SolrIndex, name: str, scope: Scope = Scope()) -> dict[str, Any]:
    """The element `name` stands for as `navd entity` and /api/entities/{name} show it: as
    `entity()` finds it, with `annotations` when people wrote some (navd/annotations) and a
    `tainted` section when taints cover it (navd/taint)."""
    (doc,) = entity(index, name, scope)
    # what people wrote, from its records (the copy on the document may lag an edit made while
    # an extractor was writing it: navd/annotations/store.py)
    annotation = annotation_store.current(index, str(doc["identity"]))[0]
    doc.pop("annotations", None)
    if not annotation.empty:
        doc["annotations"] = annotation.as_dict()
    tainted = list_taints(index, doc)
    return {**doc, "tainted": tainted} if tainted else doc


# -- an operation's executions ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ExecutionPage:
    operation: str  # the identity of the operation (template) whose runs these are
    found: int  # its executions in all
    start: int
    executions: tuple[dict[str, Any], ...]  # newest first (by `started`), as users see them


def executions(index: SolrIndex, operation: str, scope: Scope = Scope(), *, rows: int = 20,
               start: int = 0) -> ExecutionPage:
    """The run history of an operation: its executions (INSTANCE_OF relations from the template)
    newest first, `rows` from `start`. `operation` is anything `entity()` resolves; an execution
    stands for its operation. A name of another type is a UsageError naming `operation`."""
    if rows < 0 or start < 0:
        raise ValueError(f"executions page rows={rows} start={start}: both must be >= 0")
    element = resolve_one(index, operation, scope)
    template = str(element["identity"])
    if element.get("type") == _EXECUTION:
        templates = store.templates_of(index, template)
        if not templates:  # an execution of no known operation: its own history is itself
            return ExecutionPage(template, 1, start, (display_document(element),) if start == 0 and rows else ())
        template = templates[0]
    elif element.get("type") != _OPERATION:
        raise UsageError(f"operation: {shown(operation)} is a {element.get('type')}, not an operation "
                         f"or an execution")
    runs = store.instances_of(index, template)
    if not runs:
        return ExecutionPage(template, 0, start, ())
    found, page = store.execution_page(index, runs, rows=rows, start=start)
    return ExecutionPage(template, found, start, page)

"""Finding elements by what users type: an identity, a qualified name, or one of the shorter
spellings people use (a bare path, a Hive name without its cluster, an application id).

The rule is a table (`RULES`) read by one pure function, `name_queries`: typed text -> ordered
candidate queries. `resolve` runs them in order against the index and stops at the first that
finds anything: one element is the answer; several are listed (AmbiguousEntity), never guessed
between. The rows, in order:

| rule               | typed                                   | looked up                                    |
|--------------------|-----------------------------------------|----------------------------------------------|
| exact              | anything                                | identity or qualifiedName as typed; a name   |
|                    |                                         | with '@' also lower case; a file system URI  |
|                    |                                         | normalised (`HDFS://NN/a/` -> `hdfs://nn/a`) |
| default-fs URI     | `hdfs:///data/x` (no authority)         | `[cluster] default_fs` + `/data/x`;          |
|                    |                                         | without it, `hdfs://<any authority>/data/x`  |
| bare path          | `/data/x`                               | `[cluster] default_fs` + `/data/x`           |
| bare path, any fs  | `/data/x`                               | `<any scheme>://<any authority>/data/x`      |
| hive, this cluster | `db.table`, `db.table.col` (no '@', '/')| `db.table@<[cluster] name>`, lower case      |
|                    | `table` (a word)                        | `default.table@<[cluster] name>`             |
| hive, any cluster  | same                                    | `db.table@<any cluster>` (not a partition)   |
| spark run          | `application_1_0001`, `local-1`, `app-..`| `spark://<id>/<any attempt>`                |
| yarn application   | `application_1_0001`                    | `yarn://<id>`                                |
| spark execution    | `<app id>/sql/3`, `<app id>/1/sql/3`    | `spark://<id>/<attempt or any>/sql/3`        |

A Spark run comes before its YARN application: the run is what its SQL executions and their
datasets hang under (the YARN application reaches them only through it).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from navd.errors import AmbiguousEntity, EntityNotFound
from navd.index.client import SolrIndex
from navd.index.documents import display_document, element_field, stored_time
from navd.index.query_syntax import escape, quote
from navd.model import ElementType
from navd.names import InvalidName, is_path_name, lookup_name, path_qualified_name, shown

#: candidates shown when a name matches several elements
MAX_CANDIDATES = 50
#: longer typed names are looked up exactly only (no pattern rows): see name_queries
MAX_PATTERN_CHARS = 400


@dataclasses.dataclass(frozen=True)
class Scope:
    """What a name typed without its cluster or file system stands for here: `[cluster] name`
    and `[cluster] default_fs`. Empty: those rules are skipped."""

    cluster: str = ""
    default_fs: str = ""


@dataclasses.dataclass(frozen=True)
class NameQuery:
    """One candidate query: elements whose identity or qualifiedName is one of `exact`, or whose
    qualifiedName matches the pattern `like` and not `unlike` ('*': any characters)."""

    rule: str
    exact: tuple[str, ...] = ()
    like: str = ""
    unlike: str = ""


# -- the rule table (pure) --------------------------------------------------------------------

_IDENTITY = re.compile(r"[0-9a-f]{32}")  # an MD5 (model.identity): exact only
_HIVE_WORD = re.compile(r"\w+")  # a table without its database
_HIVE_SHORT = re.compile(r"[^.@/:\s]+\.[^.@/:\s]+(?:\..+)?", re.S)  # db.table[.column], no cluster
_APP_ID = r"(?:application_\d+_\d+|local-\d+|app-\d+-\d+)"
_APPLICATION = re.compile(_APP_ID)
_EXECUTION = re.compile(rf"({_APP_ID})(?:/([^/]+))?/sql/(\d+)")


def _exact(text: str, scope: Scope) -> Iterable[NameQuery]:
    names = [lookup_name(text)]
    if "@" in text and "://" not in text:
        names.append(text.lower())  # Hive names are lower case
    if is_path_name(text):
        names.append(path_qualified_name(text))
    yield NameQuery("exact", tuple(dict.fromkeys(names)))


def _default_fs_uri(text: str, scope: Scope) -> Iterable[NameQuery]:
    scheme, sep, rest = text.partition(":///")
    if not sep or not is_path_name(text) or scheme.lower() == "file":  # file:/// is complete as it is
        return
    if scope.default_fs.lower().startswith(scheme.lower() + "://"):
        yield NameQuery("default-fs URI", (path_qualified_name("/" + rest, scope.default_fs),))
    elif not scope.default_fs:
        path = path_qualified_name(text).removeprefix(f"{scheme.lower()}://")
        yield NameQuery("default-fs URI, any authority", like=f"{scheme.lower()}://*{path}",
                        unlike=f"{scheme.lower()}://*/*{path}")


def _bare_path(text: str, scope: Scope) -> Iterable[NameQuery]:
    if not text.startswith("/"):
        return
    if scope.default_fs:
        yield NameQuery("bare path", (path_qualified_name(text, scope.default_fs),))
    path = posixpath.normpath("/" + text.lstrip("/"))
    # Any file system: an authority holds no '/', so `*://*/data/x` minus `*://*/*/data/x` is
    # `/data/x` right after the authority, whatever the scheme (file:///data/x included).
    yield NameQuery("bare path, any file system", like=f"*://*{path}", unlike=f"*://*/*{path}")


def _hive(text: str, scope: Scope) -> Iterable[NameQuery]:
    if _APPLICATION.match(text) or _IDENTITY.fullmatch(text):
        return
    if _HIVE_WORD.fullmatch(text):
        name = f"default.{text.lower()}"  # a table named without its database is in `default`, as in Hive
    elif _HIVE_SHORT.fullmatch(text):
        name = text.strip().lower()
    else:
        return
    if scope.cluster:
        yield NameQuery("hive, this cluster", (f"{name}@{scope.cluster.strip().lower()}",))
    yield NameQuery("hive, any cluster", like=f"{name}@*", unlike=f"{name}@*/*")  # not a partition


def _application(text: str, scope: Scope) -> Iterable[NameQuery]:
    if not _APPLICATION.fullmatch(text):
        return
    yield NameQuery("spark run", like=f"spark://{text}/*", unlike=f"spark://{text}/*/*")
    if text.startswith("application_"):
        yield NameQuery("yarn application", (f"yarn://{text}",))


def _execution(text: str, scope: Scope) -> Iterable[NameQuery]:
    match = _EXECUTION.fullmatch(text)
    if match is None:
        return
    app, attempt, number = match.groups()
    if attempt:
        yield NameQuery("spark execution", (f"spark://{app}/{attempt}/sql/{number}",))
    else:
        yield NameQuery("spark execution", like=f"spark://{app}/*/sql/{number}",
                        unlike=f"spark://{app}/*/*/sql/{number}")


#: The resolution order: each row turns the typed text into zero or more candidate queries.
RULES: tuple[Callable[[str, Scope], Iterable[NameQuery]], ...] = (
    _exact, _default_fs_uri, _bare_path, _hive, _application, _execution)


def name_queries(text: str, scope: Scope = Scope()) -> tuple[NameQuery, ...]:
    """The candidate queries for `text`, in the order they are tried (the table above). Pure.
    InvalidName (one line) for a name no element can have: empty, not UTF-8, or a file system
    URI that does not parse (`hdfs://h:99999/x`)."""
    lookup_name(text)
    queries = (query for rule in RULES for query in rule(text, scope))
    # A '*' typed is a character of the name (a path may hold one), not a pattern: the pattern
    # rules, which cannot tell the two apart, are left out for it. So are they for a very long
    # name: Lucene refuses a wildcard query whose automaton passes 1,000 states (HTTP 500).
    return tuple(q for q in queries if not (q.like and ("*" in text or len(text) > MAX_PATTERN_CHARS)))


def matches(query: NameQuery, identity: str, qualified_name: str) -> bool:
    """Whether an element answers `query` (what the Solr query of `resolve` asks, in Python)."""
    if identity in query.exact or qualified_name in query.exact:
        return True
    return bool(query.like) and _glob(query.like).fullmatch(qualified_name) is not None \
        and not (query.unlike and _glob(query.unlike).fullmatch(qualified_name))


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.S)


# -- against Solr -----------------------------------------------------------------------------

def resolve(index: SolrIndex, text: str, scope: Scope = Scope()) -> list[dict[str, Any]]:
    """The elements (raw documents) of the first candidate query of `text` that finds any; []
    when none does. Several: AmbiguousEntity, its candidates sorted by qualifiedName."""
    for query in name_queries(text, scope):
        body = index.search("elements", solr_query(query), rows=MAX_CANDIDATES, sort="qualifiedName asc",
                            params={"defType": "lucene"})
        docs = list(body["response"]["docs"])
        found = int(body["response"]["numFound"])
        if found > 1:
            raise AmbiguousEntity(
                f"{shown(text)} matches {found} elements ({query.rule}): give the qualifiedName or "
                f"identity of one", tuple(display_document(d) for d in docs), found)
        if docs:
            return docs
    return []


def resolve_one(index: SolrIndex, text: str, scope: Scope = Scope()) -> dict[str, Any]:
    """The one element (raw document) `text` stands for: EntityNotFound if none, AmbiguousEntity
    (with the candidates) if several."""
    docs = resolve(index, text, scope)
    if not docs:
        raise EntityNotFound(f"no element with identity or qualifiedName {shown(text)}")
    return docs[0]


def find_entity(index: SolrIndex, name: str) -> list[dict[str, Any]]:
    """Elements whose identity or qualifiedName is `name` (or its normalised spelling): the
    `exact` rule only, for callers that already hold a full name (the lineage walk's root)."""
    [query] = [q for q in name_queries(name) if q.rule == "exact"]
    body = index.search("elements", solr_query(query), rows=MAX_CANDIDATES, params={"defType": "lucene"})
    return list(body["response"]["docs"])


def solr_query(query: NameQuery) -> str:
    """The Lucene query of a NameQuery: typed text only ever inside quotes or escaped."""
    parts = []
    if query.exact:
        terms = " OR ".join(quote(v) for v in query.exact)
        parts.append(f"identity:({terms}) OR qualifiedName:({terms})")
    if query.like:
        like = f"qualifiedName:{wildcard(query.like)}"
        if query.unlike:
            like = f"({like} AND -qualifiedName:{wildcard(query.unlike)})"
        parts.append(like)
    if not parts:
        raise InvalidName(f"name query {query.rule!r} asks for nothing")
    return " OR ".join(parts)


def wildcard(pattern: str) -> str:
    """A Lucene wildcard term: every character literal (escaped) but '*'."""
    return "*".join(escape(part) for part in pattern.split("*"))


def oldest_execution_facet() -> dict[str, Any]:
    """A JSON facet (`json.facet`) answering what oldest_execution_start does, over every
    execution whatever the request's query: a request on the elements core that is sent anyway
    carries it, and the answer needs no round trip of its own (oldest_execution_from_facets)."""
    kind, started = element_field("type"), element_field("started")
    return {"oldest_execution": {"type": "query", "q": f"{kind}:{ElementType.OPERATION_EXECUTION.value}",
                                 "domain": {"query": f"{started}:[* TO *]"}, "facet": {"start": f"min({started})"}}}


def oldest_execution_from_facets(body: dict[str, Any]) -> datetime | None:
    """The oldest execution's start from a response that asked oldest_execution_facet."""
    found = body.get("facets", {}).get("oldest_execution", {})
    return stored_time(found.get("start")) if found.get("count") else None


def oldest_execution_start(index: SolrIndex) -> datetime | None:
    """The start of the oldest execution indexed (purge removes older ones: the lineage history
    kept begins there); None when no execution tells its start."""
    kind, started = element_field("type"), element_field("started")
    docs = index.search("elements", f"{kind}:{ElementType.OPERATION_EXECUTION.value}", rows=1, fl=started,
                        sort=f"{started} asc", filters=[f"{started}:[* TO *]"])["response"]["docs"]
    return stored_time(docs[0].get(started)) if docs else None

"""The read facade: what `navd search/entity/lineage/status` (and any future server) ask of the
index. Typed results, no printing, no argument parsing: callers format them.
"""

from __future__ import annotations

import dataclasses
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from navd.config import NavdConfig
from navd.errors import AmbiguousEntity, UsageError
from navd.index.client import SolrIndex
from navd.index.documents import RUN_KIND, display_document
from navd.index.lineage_store import SolrLineageStore
from navd.index.lookup import Scope, resolve, solr_quote
from navd.lineage import EntityNotFound, LineageGraph, LineageOptions
from navd.lineage import lineage as walk_lineage
from navd.locks import lock_held
from navd.names import shown as shown_name  # status() calls its result `shown`
from navd.process import pid_runs
from navd.runs import INTERRUPTED, components, last_run_and_success, schedule_identity

__all__ = ["AmbiguousEntity", "ComponentStatus", "EntityNotFound", "RunPage", "Scope", "SearchResult", "Status",
           "check_search", "entity", "lineage", "lookup_scope", "run_history", "search", "status"]


# -- search and entity ------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SearchResult:
    found: int  # numFound: all matches, not only those returned
    millis: int | None  # Solr's QTime, when it said
    docs: tuple[dict[str, Any], ...]  # as users see them (documents.display_document)


#: Lucene's "magic" fields: `_query_:"{!...}"` runs any query parser, `_val_:"..."` a function.
_MAGIC_FIELD = re.compile(r"(?<![\w.*?])(_query_|_val_)\s*:")
_SHOWN_CHARS = 80


def _unquoted(text: str) -> str:
    """`text` without its quoted phrases and with backslash escapes resolved: what Solr's
    Lucene parser reads as syntax (field names, local parameters). A phrase is only text."""
    out: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            escaped = False
            if not quoted:
                out.append(char)
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
            out.append(" ")
        elif not quoted:
            out.append(char)
    return "".join(out)


def check_search(query: str, sort: str | None = None) -> None:
    """Refuse what reaches past the Lucene query syntax: local parameters (`{!join
    fromIndex=<other core>}` reads any core on the node, `{!func}` and other parsers) and the
    magic fields `_query_`/`_val_` that carry them. Inside a quoted phrase `{!` is only text.
    UsageError names the parameter and the piece refused."""
    for parameter, text in (("query", query), ("--sort", sort or "")):
        syntax = _unquoted(text)
        start = syntax.find("{!")
        if start >= 0:
            end = syntax.find("}", start)
            piece = syntax[start:end + 1 if end >= 0 else len(syntax)][:_SHOWN_CHARS]
            raise UsageError(f"search {parameter}: local parameters {piece!r} are not allowed: navd search "
                             f"takes the Lucene query syntax only (no other query parsers, no cross-core joins)")
        magic = _MAGIC_FIELD.search(syntax)
        if magic:
            raise UsageError(f"search {parameter}: the field {magic.group(1)} is not allowed: it runs other "
                             f"query parsers or functions; navd search takes the Lucene query syntax only")


def search(index: SolrIndex, core: str, query: str, *, rows: int = 20, sort: str | None = None) -> SearchResult:
    """A raw Solr query in the Lucene syntax on one core (check_search says what is refused)."""
    check_search(query, sort)
    # defType fixed: a core's defaults cannot swap the parser the check above was made for.
    body = index.search(core, query, rows=rows, sort=sort, params={"defType": "lucene"})
    return SearchResult(int(body["response"]["numFound"]), body.get("responseHeader", {}).get("QTime"),
                        tuple(display_document(d) for d in body["response"]["docs"]))


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
            scope: Scope = Scope()) -> LineageGraph:
    """The lineage graph (navd/lineage.py) of the element `entity` stands for (as `entity()`)."""
    root = _resolve(index, entity, scope)
    return walk_lineage(SolrLineageStore(index), str(root["identity"]), options)


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
    body = index.search("runs", f"kind:{RUN_KIND} AND component:{solr_quote(component)}", rows=rows,
                        start=start, sort="started desc")
    runs = tuple({k: v for k, v in doc.items() if k not in ("_version_", "lastIndexed", "kind")}
                 for doc in body["response"]["docs"])
    return RunPage(int(body["response"]["numFound"]), start, runs)

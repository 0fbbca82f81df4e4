"""`navd search`, `navd entity`, `navd lineage`, `navd status`: reading what navd knows."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from navd.annotations.service import AnnotationService
from navd.catalog.service import lookup_scope, search, shown_entity
from navd.cli.common import Commands, Outcome, iso_time, print_json, summary_line
from navd.config import NavdConfig, extractor_state_dir
from navd.errors import ConfigError
from navd.index.clients import client_for
from navd.lineage.responsibility import extracted_namespaces
from navd.lineage.rules import LineageOptions, render_changes, render_text
from navd.lineage.service import lineage, lineage_changes
from navd.status import status


def register(commands: Commands) -> None:
    search_parser = commands.add_parser("search", help="raw Solr query, e.g. 'queryText:*temp_table*'")
    search_parser.add_argument("query", help="Solr (Lucene) query syntax")
    search_parser.add_argument("--core", default="elements", choices=["elements", "relations", "runs"])
    search_parser.add_argument("--rows", type=int, default=20, metavar="N")
    search_parser.add_argument("--sort", metavar="SPEC", help="Solr sort, e.g. 'lastModified desc'")
    search_parser.add_argument("--json", action="store_true", help="print JSON")
    search_parser.set_defaults(handler=cmd_search)

    entity_parser = commands.add_parser("entity", help="show one element by qualifiedName, identity, path, "
                                                       "db.table or application id (several matches: listed, exit 4)")
    entity_parser.add_argument("name", metavar="NAME",
                               help="identity, qualifiedName, /path, hdfs:///path, db.table[.column], application "
                                    "or Spark app id, <app id>/sql/<n>")
    entity_parser.add_argument("--json", action="store_true", help="print JSON")
    entity_parser.add_argument("--history", action="store_true",
                               help="list every change of what people wrote on it (navd annotate): who, when, "
                                    "what, before and after")
    entity_parser.set_defaults(handler=cmd_entity)

    lineage_parser = commands.add_parser("lineage", help="where an entity came from and what depends on it")
    lineage_parser.add_argument("entity", metavar="ENTITY",
                                help="as for `navd entity`: identity, qualifiedName, /path, db.table[.column], "
                                     "application id, ...")
    lineage_parser.add_argument("--direction", choices=["upstream", "downstream", "both"], default="both")
    lineage_parser.add_argument("--depth", type=int, default=5, metavar="N",
                                help="dataset hops per direction (executions do not count); default 5")
    lineage_parser.add_argument("--columns", action="store_true",
                                help="add columns and column edges (implied for a column)")
    lineage_parser.add_argument("--operations", action="store_true",
                                help="show executions, operations and unresolved (unlinked) inputs")
    lineage_parser.add_argument("--deleted", action="store_true", help="show deleted entities")
    lineage_parser.add_argument("--as-of", type=iso_time, metavar="T",
                                help="the graph as it stood at T (ISO 8601 or a date, UTC unless a zone is "
                                     "given): relations from the first execution that made them, entities "
                                     "deleted only if deleted by T")
    lineage_parser.add_argument("--latest", action="store_true",
                                help="of each dataset's writers, only its latest run (at or before --as-of)")
    lineage_parser.add_argument("--changes", action="store_true",
                                help="the edges that appeared and disappeared between --since and --until, and "
                                     "the entities created or deleted")
    lineage_parser.add_argument("--since", type=iso_time, metavar="T1", help="with --changes: the window's start")
    lineage_parser.add_argument("--until", type=iso_time, metavar="T2",
                                help="with --changes: the window's end; default now")
    lineage_parser.add_argument("--format", choices=["text", "json"], default="text")
    lineage_parser.set_defaults(handler=cmd_lineage)

    status_parser = commands.add_parser("status", help="last run and last success per component; totals per core")
    status_parser.add_argument("--json", action="store_true")
    status_parser.set_defaults(handler=cmd_status)


def cmd_search(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    if args.rows < 0:
        raise ConfigError("--rows must be >= 0")
    with client_for(config, "reader") as index:
        result = search(index, args.core, args.query, rows=args.rows, sort=args.sort)
    if args.json:
        print_json({"numFound": result.found, "docs": list(result.docs)})
        return Outcome.DONE
    millis = "?" if result.millis is None else result.millis
    print(f"{result.found} found ({millis} ms), showing {len(result.docs)}")
    for doc in result.docs:
        print(summary_line(args.core, doc))
    return Outcome.DONE


def cmd_entity(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    with client_for(config, "reader") as index:
        doc = shown_entity(index, args.name, lookup_scope(config))
        changes = AnnotationService(index).history(str(doc["identity"])) if args.history else None
    if changes is not None:
        if args.json:
            print_json({"identity": doc["identity"], "qualifiedName": doc.get("qualifiedName"),
                        "changes": [c.as_dict() for c in changes]})
            return Outcome.DONE
        print(f"{doc.get('qualifiedName')}: {len(changes)} change{'' if len(changes) == 1 else 's'}")
        for change in changes:
            print(f"{change.at.isoformat(timespec='seconds')}  {change.actor}  {change.field}: "
                  f"{json.dumps(change.before, ensure_ascii=False)} -> {json.dumps(change.after, ensure_ascii=False)}")
        return Outcome.DONE
    if args.json:
        print_json(doc)
        return Outcome.DONE
    width = max(len(k) for k in doc)
    for key, value in doc.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
        # A multi-line value (an execution's plan, a view's text) stays in the value column.
        print(f"{key.ljust(width)}  " + shown.replace("\n", "\n" + " " * (width + 2)))
    return Outcome.DONE


def cmd_lineage(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    if args.depth < 1:
        raise ConfigError("--depth must be >= 1")
    if args.changes:
        if args.since is None:
            raise ConfigError("--changes needs --since T1")
        if args.as_of is not None or args.latest:
            raise ConfigError("--changes compares two moments: --as-of and --latest do not apply")
    elif args.since is not None or args.until is not None:
        raise ConfigError("--since and --until go with --changes")
    options = LineageOptions(direction=args.direction, depth=args.depth, columns=args.columns,
                             operations=args.operations, deleted=args.deleted, as_of=args.as_of, latest=args.latest,
                             extracted=extracted_namespaces(config))
    if args.changes:
        until = args.until if args.until is not None else datetime.now(UTC)
        if until < args.since:
            raise ConfigError(f"--until {until.isoformat()} is before --since {args.since.isoformat()}")
        with client_for(config, "reader") as index:
            found = lineage_changes(index, args.entity, args.since, until, options, lookup_scope(config))
        if args.format == "json":
            print_json(found.as_dict())
        else:
            print(render_changes(found))
        return Outcome.DONE
    with client_for(config, "reader") as index:
        graph = lineage(index, args.entity, options, lookup_scope(config))
    if args.format == "json":
        print_json(graph.as_dict())
    else:
        print(render_text(graph))
    return Outcome.DONE


_NEXT_RUN_SHOWN = {
    "NOT_SCHEDULED": "not scheduled (navd run is stopped)",
    "AFTER_CURRENT_RUN": "interval after the run in progress (and its link pass)",
}


def cmd_status(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    # Only reads: with Solr down an admin (or a monitoring check) is told so at once, in one
    # line, rather than after the writers' minute and a half of backing off.
    with client_for(config, "admin") as index:
        current = status(index, extractor_state_dir(config))
    if args.json:
        print_json(current)
        return Outcome.DONE
    for name, info in current["components"].items():
        last = info["last_run"]
        if last:
            counts = ", ".join(f"{k[len('count_'):]} {v}" for k, v in sorted(last.items()) if k.startswith("count_"))
            line = f"{name}: last run {last.get('state')} {last.get('started')} -> {last.get('ended', '...')}"
            line += f" ({counts})" if counts else ""
        else:
            line = f"{name}: not run yet"
        line += f"; last success {info['last_success'] or 'never'}"
        next_run = info.get("next_run")
        if next_run:
            line += "; next run " + _NEXT_RUN_SHOWN.get(next_run, next_run)
        if last.get("error"):
            line += f"; error: {last['error']}"
        if last.get("refused"):
            line += f"; refused: {last['refused']}"
        print(line)
    if not current["components"]:
        print("no runs recorded yet")
    print("totals: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in current["totals"].items()))
    return Outcome.DONE

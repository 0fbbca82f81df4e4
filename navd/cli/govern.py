"""`navd taint`, `navd reprocess`, `navd tag`, `navd annotate`: marking data as bad or sensitive,
and what follows downstream (navd/taint, navd/sensitivity); writing tags, descriptions and
properties on it (navd/annotations)."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
from typing import Any

from navd.annotations.rules import KEEP, Annotation, Edit, apply, parse_property
from navd.annotations.service import AnnotationService
from navd.catalog.service import lookup_scope
from navd.cli.common import Commands, Outcome, iso_time, print_json
from navd.config import NavdConfig
from navd.errors import UsageError
from navd.index.clients import client_for
from navd.sensitivity import service as sensitivity
from navd.taint.service import clear_taints, reprocess, taint, taints


def register(commands: Commands) -> None:
    taint_parser = commands.add_parser(
        "taint", help="mark a dataset or its partitions in a time range as tainted (--clear, --list)",
        description="Record a taint on a table, a directory or a partition (its partitions in [--from, --to), or "
                    "all of it); `navd reprocess` then lists what to redo downstream. --clear removes the "
                    "taints of ENTITY (or --id); --list shows them (all, or those covering ENTITY).")
    taint_parser.add_argument("entity", metavar="ENTITY", nargs="?", help="as for `navd entity`")
    taint_parser.add_argument("--from", dest="start", metavar="TIME", type=iso_time,
                              help="start of the bad range (ISO 8601; UTC without a zone), with --to")
    taint_parser.add_argument("--to", dest="end", metavar="TIME", type=iso_time,
                              help="end of the range (excluded)")
    taint_parser.add_argument("--reason", default="", metavar="TEXT", help="why (shown with the taint)")
    taint_parser.add_argument("--clear", action="store_true",
                              help="remove the taints of ENTITY (or the one of --id)")
    taint_parser.add_argument("--id", dest="taint_id", metavar="ID", help="with --clear: one taint by its id")
    taint_parser.add_argument("--list", action="store_true", help="list the taints (of ENTITY, when given)")
    taint_parser.add_argument("--format", choices=["text", "json"], default="text")
    taint_parser.set_defaults(handler=cmd_taint)

    reprocess_parser = commands.add_parser(
        "reprocess", help="what to redo downstream of a taint: datasets, partitions and runs, in dependency order")
    reprocess_parser.add_argument("entity", metavar="ENTITY", nargs="?",
                                  help="the tainted table, directory or partition")
    reprocess_parser.add_argument("--from", dest="start", metavar="TIME", type=iso_time,
                                  help="start of the bad range (ISO 8601; UTC without a zone), with --to")
    reprocess_parser.add_argument("--to", dest="end", metavar="TIME", type=iso_time,
                                  help="end of the range (excluded)")
    reprocess_parser.add_argument("--taint", dest="taint_id", metavar="ID",
                                  help="the range and entity of a recorded taint")
    reprocess_parser.add_argument("--format", choices=["text", "json"], default="text")
    reprocess_parser.set_defaults(handler=cmd_reprocess)

    annotate = commands.add_parser(
        "annotate", help="write tags, a description, a display name or properties on an entity (recorded)",
        description="Edit what people write on an entity: tags, a description, a display name, user properties "
                    "and namespaced custom properties. Extraction never changes them; every change is recorded "
                    "(navd entity ENTITY --history).")
    annotate.add_argument("entity", metavar="ENTITY", help="as for `navd entity`")
    annotate.add_argument("--tag", action="append", default=[], metavar="TAG", help="add a tag (repeatable)")
    annotate.add_argument("--untag", action="append", default=[], metavar="TAG", help="remove a tag (repeatable)")
    annotate.add_argument("--description", metavar="TEXT", help='set the description ("" clears it)')
    annotate.add_argument("--name", metavar="TEXT", help='set the display name ("" clears it)')
    annotate.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                          help="set a user property; NAMESPACE.KEY=VALUE with --custom (repeatable)")
    annotate.add_argument("--unset-property", action="append", default=[], metavar="KEY",
                          help="remove a user property (repeatable)")
    annotate.add_argument("--custom", action="store_true",
                          help="--property and --unset-property name custom properties, NAMESPACE.KEY")
    annotate.add_argument("--format", choices=["text", "json"], default="text")
    annotate.set_defaults(handler=cmd_annotate)

    tag = commands.add_parser("tag", help="set, clear or explain the sensitivity level of a table or column")
    tag.add_argument("entity", metavar="ENTITY", nargs="?", help="a table, view or column, as for `navd entity`")
    tag_action = tag.add_mutually_exclusive_group(required=True)
    tag_action.add_argument("--sensitivity", metavar="LEVEL",
                            help="tag ENTITY with LEVEL ([sensitivity] levels); it flows downstream")
    tag_action.add_argument("--clear", action="store_true",
                            help="remove your tag on ENTITY and withdraw it downstream")
    tag_action.add_argument("--explain", metavar="COLUMN", help="the column's level and the path that carried it")
    tag.add_argument("--format", choices=["text", "json"], default="text")
    tag.set_defaults(handler=cmd_tag)


# -- taint and reprocess ----------------------------------------------------------------------

def cmd_taint(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    scope = lookup_scope(config)
    if args.list:
        with client_for(config, "reader") as index:
            shown = taints(index, args.entity, scope)
        if args.format == "json":
            print_json(shown)
        else:
            for record in shown:
                print(_taint_line(record))
            if not shown:
                print("no taints")
        return Outcome.DONE
    if args.clear:
        if args.start or args.end:
            raise UsageError("taint --clear removes whole taints: no --from/--to")
        with client_for(config, "admin") as index:
            removed = clear_taints(index, args.entity, scope, taint_id=args.taint_id)
        if args.format == "json":
            print_json(removed)
        else:
            print(f"cleared {len(removed)} taint{'' if len(removed) == 1 else 's'}")
            for record in removed:
                print(_taint_line(record))
        return Outcome.DONE
    if args.entity is None:
        raise UsageError("taint: name the ENTITY (or --list, or --clear --id ID)")
    if args.taint_id:
        raise UsageError("taint: --id goes with --clear")
    with client_for(config, "admin") as index:
        record = taint(index, args.entity, scope, start=args.start, end=args.end, reason=args.reason,
                       user=getpass.getuser())
    if args.format == "json":
        print_json(record)
    else:
        print(_taint_line(record))
    return Outcome.DONE


def _taint_line(record: dict[str, Any]) -> str:
    span = f"{record['from']} -> {record['to']}" if record.get("from") else "all of it"
    reason = f"  ({record['reason']})" if record.get("reason") else ""
    return f"{record['id']}  {record['qualifiedName']}  {span}{reason}"


def cmd_reprocess(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    with client_for(config, "reader") as index:
        plan = reprocess(index, args.entity, lookup_scope(config), start=args.start, end=args.end,
                         taint_id=args.taint_id)
    if args.format == "json":
        print_json(plan.as_dict())
        return Outcome.DONE
    print(f"reprocess downstream of {plan.root}"
          + ("" if plan.periods.everything else ", " + ", ".join(f"{p['from']} -> {p['to']}"
                                                                  for p in plan.periods.as_list() or [])))
    for number, dataset in enumerate(plan.datasets, 1):
        role = "tainted" if dataset.tainted else "affected"
        print(f"{number}. {dataset.name} ({role}, {len(dataset.partitions)} partitions)")
        for partition in dataset.partitions:
            run = "" if dataset.tainted else f"  run {partition.run}" if partition.run else "  no recorded run"
            print(f"     {partition.name}{run}")
        for run in dataset.runs:
            print(f"     (whole dataset)  run {run}")
    print("runs to redo, in order:" if plan.runs else "no runs to redo")
    for number, rerun in enumerate(plan.runs, 1):
        period = f"  data {rerun.period[0]} -> {rerun.period[1]}" if rerun.period else ""
        print(f"{number}. {rerun.qualified_name or rerun.identity}  ({rerun.started} -> {rerun.ended}){period}  "
              f"writes {rerun.dataset} {' '.join(rerun.partitions)}".rstrip())
    if plan.truncated:
        print("(truncated: more datasets downstream than one plan holds)")
    return Outcome.DONE


# -- sensitivity ------------------------------------------------------------------------------

def cmd_tag(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    if args.explain is not None:
        if args.entity is not None:
            raise UsageError("tag --explain COLUMN takes no ENTITY")
        with client_for(config, "reader") as index:
            explanation = sensitivity.explain_column(index, config, args.explain, lookup_scope(config))
        if args.format == "json":
            print_json(explanation.as_dict())
            return Outcome.DONE
        print(f"{explanation.column.get('qualifiedName')}: {explanation.level or 'no sensitivity level'}")
        for number, (_, name, tags) in enumerate(explanation.path):
            origin = "; ".join(f"tagged {t.level} by {t.source}" + (f" on {t.name}" if t.name and t.name != name else "")
                               for t in tags)
            print(f"  {'  ' * number}{'-> ' if number else ''}{name}" + (f"  ({origin})" if origin else ""))
        if explanation.level and not explanation.path:
            print("  (no tag explains it any more: the next sensitivity pass withdraws it)")
        return Outcome.DONE
    if args.entity is None:
        raise UsageError("tag: ENTITY is required with --sensitivity and --clear")
    with client_for(config, "admin") as index:
        if args.clear:
            result = sensitivity.clear(index, config, args.entity, lookup_scope(config))
        else:
            result = sensitivity.tag(index, config, args.entity, args.sensitivity, lookup_scope(config))
    if args.format == "json":
        print_json(result.as_dict())
    else:
        what = f"tagged {result.level}" if result.level else "tag cleared"
        print(f"{result.target.get('qualifiedName')}: {what}; {result.columns} column and {result.tables} table "
              f"levels changed")
    return Outcome.DONE


# -- annotate --------------------------------------------------------------------------------

def annotate_edit(args: argparse.Namespace) -> Edit:
    """The edit `navd annotate`'s options ask for (UsageError naming the option for a bad one)."""
    pairs: dict[str, str] = {}
    for text in args.property:
        key, value = parse_property(text)
        pairs[key] = value
    if args.custom:
        edit = Edit(set_custom=pairs, unset_custom=tuple(args.unset_property))
    else:
        edit = Edit(set_properties=pairs, unset_properties=tuple(args.unset_property))
    edit = dataclasses.replace(edit, add_tags=tuple(args.tag), remove_tags=tuple(args.untag),
                               description=KEEP if args.description is None else args.description,
                               display_name=KEEP if args.name is None else args.name)
    if edit.empty:
        raise UsageError("annotate: nothing to change: give --tag, --untag, --description, --name, --property "
                         "or --unset-property")
    try:
        apply(Annotation(""), edit)
    except UsageError as exc:  # the option, not the field of the API's body
        raise UsageError(f"annotate: {exc}") from None
    return edit


def cmd_annotate(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    edit = annotate_edit(args)
    with client_for(config, "admin") as index:
        service = AnnotationService(index)
        target = service.resolve(args.entity, lookup_scope(config))
        annotation, changes = service.edit(str(target["identity"]), edit, getpass.getuser())
    if args.format == "json":
        print_json({**annotation.as_dict(), "qualifiedName": target.get("qualifiedName"),
                    "changes": [c.as_dict() for c in changes]})
        return Outcome.DONE
    what = ", ".join(c.field for c in changes) if changes else "nothing changed"
    print(f"{target.get('qualifiedName')}: {what}")
    return Outcome.DONE

"""`navd extract`, `navd link`, `navd purge`: the runs that write the index, as `navd run`
schedules them (navd/runner.py): recorded, locked against each other, waiting for Solr."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import Any

from navd.cli.common import Commands, Outcome, print_json, waiting
from navd.config import NavdConfig, PurgeConfig, field_range, parse_fs_aliases
from navd.errors import ConfigError, NavdError, UsageError
from navd.extractors import Component
from navd.index.clients import client_for
from navd.purge.purge import CATEGORIES
from navd.registry import components, run_order
from navd.runner import PushTail, RunResult, link, link_summary, make_visible, purge, run_extraction


def register(commands: Commands) -> None:
    extract = commands.add_parser("extract", help="run an extractor now")
    registered = components()
    extract.add_argument("source", choices=[*registered, "all"],
                         help="which extractor (" + "; ".join(f"{c.name}: {c.help}" for c in registered.values())
                              + "); all: every configured one once")
    extract.add_argument("--once", action="store_true",
                         help="push extractors (" + ", ".join(c.name for c in registered.values() if c.mode == "push")
                              + "): one pass, then exit (default: keep polling)")
    extract.add_argument("--full", action="store_true",
                         help="hdfs: list every directory, not only the changed ones; hms: describe every "
                              "table (the first run is full)")
    # An option several components share (--master) is listed once.
    for option in dict.fromkeys(o for c in registered.values() for o in c.cli_options):
        if option.switch:
            extract.add_argument(option.flag, dest=option.dest, action="store_true", help=option.help)
        else:
            extract.add_argument(option.flag, dest=option.dest, metavar=option.metavar, default=option.default,
                                 help=option.help)
    extract.set_defaults(handler=cmd_extract)

    link_parser = commands.add_parser("link", help="resolve unlinked relations whose far end is indexed now")
    link_parser.add_argument("--full", action="store_true", help="every unlinked relation, not only what changed")
    link_parser.add_argument("--spark", action="store_true",
                             help="run the full pass as a PySpark job (large backlogs)")
    link_parser.add_argument("--master", help="--spark: the Spark master, e.g. local[4] or yarn (default: "
                                              "[spark_jobs] master, local[*]; yarn: docs/operations/yarn.md)")
    link_parser.add_argument("--fs-alias", action="append", default=[], metavar="AUTHORITY=FS", dest="fs_aliases",
                             help="a NameNode address that names the default file system, e.g. "
                                  "nn1:8020=hdfs://nameservice1 (repeatable; adds to [linker] fs_aliases)")
    link_parser.set_defaults(handler=cmd_link)

    purge_parser = commands.add_parser("purge",
                                       help="remove old executions and long-deleted entities (Navigator's rules)")
    purge_parser.add_argument("--older-than-days", type=float, default=None, metavar="N",
                              help="threshold age (default [purge] older_than_days, 60)")
    purge_parser.add_argument("--dry-run", action="store_true", help="count what would be removed, remove nothing")
    purge_parser.add_argument("--runtime-cap-minutes", type=float, default=None, metavar="M",
                              help="stop after M minutes; the next run continues (default [purge] "
                                   "runtime_cap_minutes)")
    purge_parser.add_argument("--json", action="store_true", help="print the report as JSON")
    purge_parser.set_defaults(handler=cmd_purge)


def cmd_extract(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    if args.source != "all":
        _extract(args, config, components()[args.source])
        return Outcome.DONE
    # `all`: every configured extractor once (push ones: one pass), each failure reported and the
    # others still run; non-zero when any failed.
    failed = 0
    ran = 0
    for component in run_order():
        try:
            component.check(config, {})
        except ConfigError:
            continue  # not configured here
        ran += 1
        try:
            _extract(argparse.Namespace(**{**vars(args), "once": True}), config, component)
        except NavdError as exc:
            failed += 1
            print(f"navd: error: {component.name}: {exc}", file=sys.stderr)
    if not ran:
        sections = ", ".join(f"[{c.section}]" for c in components().values())
        raise ConfigError(f"no extractor configured: set {sections} in the config")
    return Outcome.FAILED if failed else Outcome.DONE


def _print_run(component: Component[Any, Any], result: RunResult) -> None:
    """The run's summary, then its link pass (whose failure fails the command, after the summary)."""
    print(component.summary(result.report), flush=True)
    if result.link_error:
        raise NavdError(f"link pass failed: {result.link_error}")
    if result.link is not None:
        print(f"link: {result.link.linked} relations linked, {result.link.still_unlinked} still unlinked", flush=True)


def _extract(args: argparse.Namespace, config: NavdConfig, component: Component[Any, Any]) -> None:
    """One run of a pull component, or the tail of a push one (one pass with --once)."""
    options = {o.dest: getattr(args, o.dest, None) for o in component.cli_options}
    for option in dict.fromkeys(o for c in components().values() for o in c.cli_options):
        if option not in component.cli_options and getattr(args, option.dest, None) not in (None, False,
                                                                                           option.default):
            raise UsageError(f"{option.flag}: not an option of navd extract {component.name}")
    component.check(config, options)  # the missing key, before waiting for a lock
    # An option such as --backfill makes a push component's command one recorded run.
    one_run = any(o.one_run and options.get(o.dest) for o in component.cli_options)
    with client_for(config, "writer") as index:
        if component.mode == "pull" or one_run:
            result = run_extraction(index, config, component, options=options, full=args.full,
                                    on_wait=waiting, show_progress=True, visible_now=True)
            _print_run(component, result)
            return
        tail = PushTail(index, config, component)
        try:
            while True:
                result = tail.poll(on_wait=waiting)
                if args.once or result.link is not None or result.link_error:
                    _print_run(component, result)
                if args.once:
                    make_visible(index)
                    return
                time.sleep(component.interval(config).total_seconds())
        finally:
            tail.close()


def cmd_link(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    aliases = parse_fs_aliases(args.fs_aliases, "--fs-alias")
    if args.master and not args.spark:
        raise UsageError("--master: only with --spark (the Spark job's master)")
    with client_for(config, "writer") as index:
        report = link(index, config, full=args.full, fs_aliases=aliases, on_wait=waiting, show_progress=True,
                      spark=args.spark, spark_master=args.master)
    print(link_summary(report))
    return Outcome.DONE


def cmd_purge(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    days = config.purge.older_than_days if args.older_than_days is None else args.older_than_days
    cap = config.purge.runtime_cap_minutes if args.runtime_cap_minutes is None else args.runtime_cap_minutes
    # The keys' ranges, from 0 on: by hand, `--older-than-days 0` purges everything deleted now.
    for flag, value, key in (("--older-than-days", days, "older_than_days"),
                             ("--runtime-cap-minutes", cap, "runtime_cap_minutes")):
        dataclasses.replace(field_range(PurgeConfig, key), low_open=False).check(flag, value)
    with client_for(config, "writer") as index:
        report = purge(index, config, older_than_days=days, runtime_cap_minutes=cap, dry_run=args.dry_run,
                       on_wait=waiting, show_progress=not args.json)
    if args.json:
        print_json(report.as_dict())
        return Outcome.DONE
    verb = "would remove" if args.dry_run else "removed"
    print(f"purge (older than {report.threshold}): {verb} "
          + ", ".join(f"{report.removed[c]} {c.replace('_', ' ')}" for c in CATEGORIES)
          + ("" if report.complete else "; stopped at the runtime cap, run again to continue"))
    return Outcome.DONE

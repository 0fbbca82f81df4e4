"""`navd extract`, `navd link`, `navd purge`: the runs that write the index, as `navd run`
schedules them (navd/runner.py): recorded, locked against each other, waiting for Solr."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from contextlib import nullcontext
from typing import Any

from navd.cli.common import Commands, Outcome, print_json, waiting
from navd.config import NavdConfig, PurgeConfig, field_range, parse_fs_aliases
from navd.errors import ConfigError, NavdError, UsageError
from navd.extractors import Component
from navd.index.clients import client_for
from navd.registry import component, components, run_order
from navd.runner import PushTail, RunResult, make_visible, run_extraction


def extractable() -> dict[str, Component[Any, Any]]:
    """The components `navd extract` runs: all but the upkeep ones, which have their own command."""
    return {name: c for name, c in components().items() if not c.upkeep}


def register(commands: Commands) -> None:
    extract = commands.add_parser("extract", help="run an extractor now")
    registered = extractable()
    extract.add_argument("source", choices=[*registered, "all"],
                         help="which extractor (" + "; ".join(f"{c.name}: {c.help}" for c in registered.values())
                              + "); all: every configured one once")
    extract.add_argument("--once", action="store_true",
                         help="push extractors (" + ", ".join(c.name for c in registered.values() if c.mode == "push")
                              + "): one pass, then exit (default: keep polling)")
    extract.add_argument("--full", action="store_true",
                         help="hdfs: list every directory, not only the changed ones; hms: describe every "
                              "table (the first run is full)")
    extract.add_argument("--bulk", action="store_true",
                         help="a big site's first extraction: Solr's soft commits off while the run writes, one "
                              "commit at the end, so its documents appear when it ends (a killed run: `navd solr "
                              "init` switches them back on); for a pull extractor's run or a one-run option such "
                              "as --backfill or --from-fsimage")
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
    if args.bulk and args.source == "all":
        raise UsageError("--bulk: name the extractor of the big first load, not all")
    if args.source != "all":
        _extract(args, config, extractable()[args.source])
        return Outcome.DONE
    # `all`: every configured extractor once (push ones: one pass), each failure reported and the
    # others still run; non-zero when any failed.
    failed = 0
    ran = 0
    for source in run_order():
        try:
            source.check(config, {})
        except ConfigError:
            continue  # not configured here
        ran += 1
        try:
            _extract(argparse.Namespace(**{**vars(args), "once": True}), config, source)
        except NavdError as exc:
            failed += 1
            print(f"navd: error: {source.name}: {exc}", file=sys.stderr)
    if not ran:
        sections = ", ".join(f"[{c.section}]" for c in extractable().values())
        raise ConfigError(f"no extractor configured: set {sections} in the config")
    return Outcome.FAILED if failed else Outcome.DONE


def _print_run(component: Component[Any, Any], result: RunResult) -> None:
    """The run's summary, then its link pass (whose failure fails the command, after the summary)."""
    print(component.summary(result.report), flush=True)
    for follow_up in result.follow_ups:
        print(follow_up.line(), flush=True)


def _extract(args: argparse.Namespace, config: NavdConfig, component: Component[Any, Any]) -> None:
    """One run of a pull component, or the tail of a push one (one pass with --once)."""
    options = {o.dest: getattr(args, o.dest, None) for o in component.cli_options}
    for option in dict.fromkeys(o for c in extractable().values() for o in c.cli_options):
        if option not in component.cli_options and getattr(args, option.dest, None) not in (None, False,
                                                                                           option.default):
            raise UsageError(f"{option.flag}: not an option of navd extract {component.name}")
    # An option such as --backfill makes a push component's command one recorded run.
    one_run = any(o.one_run and options.get(o.dest) for o in component.cli_options)
    bulk = getattr(args, "bulk", False)
    if bulk and not (component.mode == "pull" or one_run):
        raise UsageError(f"--bulk: navd extract {component.name} tails its source and keeps soft commits; "
                         f"--bulk is for one run (a pull extractor, or a one-run option such as --backfill)")
    component.check(config, options)  # the missing key, before waiting for a lock
    with client_for(config, "writer") as index:
        if component.mode == "pull" or one_run:
            # Bulk: the cores' soft commits are off for every writer of the run (the PySpark
            # jobs' executors too: the switch is the cores' config), back on when it ends.
            with index.bulk_load() if bulk else nullcontext(index):
                result = run_extraction(index, config, component, options=options, full=args.full,
                                        on_wait=waiting, show_progress=True, visible_now=True)
            _print_run(component, result)
            return
        tail = PushTail(index, config, component)
        try:
            while True:
                result = tail.poll(on_wait=waiting)
                if args.once or result.follow_ups:
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
    linker = component("linker")
    with client_for(config, "writer") as index:
        result = run_extraction(index, config, linker, full=args.full, on_wait=waiting, show_progress=True,
                                options={"fs_aliases": aliases, "spark": args.spark, "master": args.master})
    print(linker.summary(result.report))
    return Outcome.DONE


def cmd_purge(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    options = {"older_than_days": config.purge.older_than_days if args.older_than_days is None
               else args.older_than_days,
               "runtime_cap_minutes": config.purge.runtime_cap_minutes if args.runtime_cap_minutes is None
               else args.runtime_cap_minutes}
    # The keys' ranges, from 0 on: by hand, `--older-than-days 0` purges everything deleted now.
    for flag, key in (("--older-than-days", "older_than_days"), ("--runtime-cap-minutes", "runtime_cap_minutes")):
        dataclasses.replace(field_range(PurgeConfig, key), low_open=False).check(flag, options[key])
    purge = component("purge")
    with client_for(config, "writer") as index:
        if args.dry_run:
            from navd.purge.component import dry_run  # noqa: PLC0415 - counting only, no run to record

            report = dry_run(index, config, options, show_progress=not args.json)
        else:
            report = run_extraction(index, config, purge, options=options, on_wait=waiting,
                                    show_progress=not args.json).report
    if args.json:
        print_json(report.as_dict())
        return Outcome.DONE
    print(purge.summary(report))
    return Outcome.DONE

"""`navd usage`, `navd unused`, `navd deps`, `navd impact`: who reads and writes what
(navd/usage)."""

from __future__ import annotations

import argparse
import json

from navd.catalog.service import lookup_scope
from navd.cli.common import Commands, Outcome, print_json
from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.index.clients import client_for
from navd.usage.service import deps, impact, unused, usage


def register(commands: Commands) -> None:
    usage_parser = commands.add_parser("usage", help="reads and writes per day of a table or column, last "
                                                     "read/write, generation time")
    usage_parser.add_argument("entity", metavar="ENTITY",
                              help="as for `navd entity`: a table, directory, file or column")
    usage_parser.add_argument("--days", type=int, default=30, metavar="N",
                              help="the window: the last N days (default 30)")
    usage_parser.add_argument("--format", choices=["text", "json"], default="text")
    usage_parser.set_defaults(handler=cmd_usage)

    unused_parser = commands.add_parser("unused", help="tables no job read in the last N days, with size and owner")
    unused_parser.add_argument("--days", type=int, default=30, metavar="N", help="the window (default 30)")
    unused_parser.add_argument("--database", metavar="D", help="only the tables of this database")
    unused_parser.add_argument("--format", choices=["text", "json"], default="text")
    unused_parser.set_defaults(handler=cmd_unused)

    deps_parser = commands.add_parser("deps", help="the jobs producing a job's inputs, with their last producing run")
    deps_parser.add_argument("job", metavar="JOB",
                             help="an operation or one of its executions (application id, ...)")
    deps_parser.add_argument("--format", choices=["text", "json"], default="text")
    deps_parser.set_defaults(handler=cmd_deps)

    impact_parser = commands.add_parser("impact", help="downstream datasets, the jobs reading them and their users")
    impact_parser.add_argument("entity", metavar="ENTITY", help="as for `navd entity`")
    impact_parser.add_argument("--depth", type=int, default=5, metavar="N",
                               help="dataset hops downstream (default 5)")
    impact_parser.add_argument("--format", choices=["text", "json"], default="text")
    impact_parser.set_defaults(handler=cmd_impact)


def cmd_usage(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    with client_for(config, "reader") as index:
        found = usage(index, args.entity, lookup_scope(config), days=args.days)
    if args.format == "json":
        print_json(found.as_dict())
        return Outcome.DONE
    print(f"{found.qualified_name} ({found.type}): {found.reads} reads, {found.writes} writes in {found.days} days "
          f"since {found.since}")
    print(f"last read {found.last_read or '-'}, last write {found.last_write or '-'}, "
          f"generated {found.generated or '-'}")
    for day in found.by_day:
        print(f"  {day.day}  reads {day.reads}  writes {day.writes}")
    for column in found.columns:
        print(f"  column {column.column}: reads {column.reads}, writes {column.writes}")
    for partition in found.partitions:
        print(f"  partition {partition.partition}: generated {partition.generated or '-'}")
    return Outcome.DONE


def cmd_unused(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    with client_for(config, "reader") as index:
        tables = unused(index, days=args.days, database=args.database)
        if args.format == "json":
            # one JSON document per line: the list is streamed, never held whole
            for table in tables:
                print(json.dumps(table.as_dict(), ensure_ascii=False))
            return Outcome.DONE
        for table in tables:
            print(f"{table.table}\towner={table.owner or '-'}\tsize={'-' if table.size is None else table.size}"
                  f"\tlast_read={table.last_read or 'never'}")
    return Outcome.DONE


def cmd_deps(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    with client_for(config, "reader") as index:
        found = deps(index, args.job, lookup_scope(config))
    if args.format == "json":
        print_json(found.as_dict())
        return Outcome.DONE
    print(f"{found.qualified_name}: reads {', '.join(found.inputs) or 'nothing'}")
    for producer in found.producers:
        run = producer.last_run
        print(f"  {producer.qualified_name} writes {', '.join(producer.datasets)}"
              + (f"; last run {run.qualified_name} ended {run.ended or '-'} by {run.user or '-'}" if run else "")
              + (f"; started by {', '.join(producer.workflows)}" if producer.workflows else ""))
    return Outcome.DONE


def cmd_impact(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    if args.depth < 1:
        raise ConfigError("--depth must be >= 1")
    with client_for(config, "reader") as index:
        found = impact(index, args.entity, lookup_scope(config), depth=args.depth)
    if args.format == "json":
        print_json(found.as_dict())
        return Outcome.DONE
    print(f"{found.qualified_name}: {len(found.datasets)} downstream datasets, {len(found.jobs)} jobs reading")
    for dataset in found.datasets:
        print(f"  dataset {dataset['qualifiedName']} owner={dataset['owner'] or '-'}")
    for job in found.jobs:
        print(f"  job {job.qualified_name} reads {', '.join(job.datasets)} users={','.join(job.users) or '-'}"
              + (f" workflows={','.join(job.workflows)}" if job.workflows else ""))
    if found.truncated:
        print("  (truncated at the node cap)")
    return Outcome.DONE

"""`navd export openlineage`: what navd knows, written in another format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from navd.catalog.service import lookup_scope
from navd.cli.common import Commands, Outcome, iso_time
from navd.config import NavdConfig
from navd.errors import UsageError
from navd.index.clients import client_for


def register(commands: Commands) -> None:
    export = commands.add_parser("export", help="write what navd knows in another format")
    formats = export.add_subparsers(dest="export_format", required=True, metavar="FORMAT")
    openlineage = formats.add_parser(
        "openlineage", help="OpenLineage RunEvents as NDJSON: one line per event, START and its end per execution")
    openlineage.add_argument("--since", metavar="TIME", type=iso_time,
                             help="executions started or ended at or after TIME (ISO 8601; UTC without a zone)")
    openlineage.add_argument("--entity", metavar="ENTITY",
                             help="only this element's executions (an execution, an operation, a dataset read or "
                                  "written)")
    openlineage.add_argument("--output", metavar="FILE", help="write to FILE instead of standard output")
    openlineage.add_argument("--validate", action="store_true",
                             help="check each event against the vendored OpenLineage schema before writing it")
    openlineage.set_defaults(handler=cmd_export_openlineage)


def cmd_export_openlineage(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    # the export loads jsonschema and the Spark plan parser (about half a second): imported by
    # this command, not by every `navd` command
    from navd.openlineage.service import export_openlineage  # noqa: PLC0415

    with client_for(config, "reader") as index:
        events = export_openlineage(index, config, since=args.since, entity=args.entity,
                                    scope=lookup_scope(config), validate=args.validate)
        if args.output is None:
            for event in events:
                sys.stdout.buffer.write(orjson.dumps(event) + b"\n")
            sys.stdout.flush()
            return Outcome.DONE
        # into a temporary file renamed at the end: a failed export leaves no partial file behind
        target = Path(args.output)
        partial = target.with_name(f".{target.name}.partial")
        try:
            with partial.open("wb") as out:
                for event in events:
                    out.write(orjson.dumps(event) + b"\n")
            partial.replace(target)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise UsageError(f"--output: {target}: {exc.strerror or exc}") from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return Outcome.DONE

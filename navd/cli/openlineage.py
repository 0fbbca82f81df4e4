"""`navd openlineage replay`: the OpenLineage events kept as posted, mapped again."""

from __future__ import annotations

import argparse

from navd.cli.common import Commands, Outcome, iso_time, print_json
from navd.config import NavdConfig
from navd.index.clients import client_for


def register(commands: Commands) -> None:
    openlineage = commands.add_parser("openlineage", help="the OpenLineage events navd kept as they were posted")
    actions = openlineage.add_subparsers(dest="openlineage_action", required=True, metavar="ACTION")
    replay = actions.add_parser(
        "replay", help="map every kept event again (after an upgrade that maps more of them) and write the result; "
                       "run while no server with [openlineage] enabled uses the same state directory")
    replay.add_argument("--from", dest="after", metavar="TIME", type=iso_time,
                        help="only events whose eventTime is at or after TIME (ISO 8601; UTC without a zone)")
    replay.add_argument("--to", dest="before", metavar="TIME", type=iso_time,
                        help="only events whose eventTime is before TIME")
    replay.add_argument("--json", action="store_true", help="print the counts as JSON")
    replay.set_defaults(handler=cmd_openlineage_replay)


def cmd_openlineage_replay(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    # the intake loads the OpenLineage schemas (jsonschema): imported by this command only
    from navd.openlineage.intake import Intake  # noqa: PLC0415

    with client_for(config, "admin") as index:
        report = Intake(config, index).replay(after=args.after, before=args.before)
    if args.json:
        print_json({"replayed": report.replayed, "refused": report.refused})
    else:
        print(f"replayed {report.replayed} kept OpenLineage events"
              + (f"; {report.refused} refused by the checks now (logged)" if report.refused else ""))
    return Outcome.DONE

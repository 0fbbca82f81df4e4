"""`navd quickstart`: the embedded Solr, the cores, a small PySpark pipeline extracted and linked,
its lineage, and the server in the background (navd/sample.py runs the steps)."""

from __future__ import annotations

import argparse
from pathlib import Path

from navd.cli.common import Commands, Outcome
from navd.cli.solr import start_embedded
from navd.config import NavdConfig, default_quickstart_dir
from navd.index.clients import client_for
from navd.sample import QUICKSTART_STEPS, quickstart


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "quickstart", help="start the embedded Solr, create the cores, run a small PySpark pipeline, extract and "
                           "link it, show the lineage of its sample_merge table, start the server in the "
                           "background and print the URL of that lineage's page")
    parser.add_argument("--dir", metavar="DIR",
                        help="the pipeline's warehouse, event logs and extractor state "
                             "(default ~/.local/share/navd/quickstart)")
    parser.set_defaults(handler=cmd_quickstart)


def cmd_quickstart(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    if config.solr.is_embedded:
        # its own home (the config's [solr.embedded], else the default), never the Solr another
        # `navd solr start --home` left remembered; started, it is the one later commands reach
        start_embedded(config, remembered=False)
    root = Path(args.dir) if args.dir else default_quickstart_dir()
    with client_for(config, "writer") as index:
        run = quickstart(config, index, root, log_format=args.log_format, log_level=args.log_level)
        for step in QUICKSTART_STEPS:
            for line in step(run):
                print(line, flush=True)
    return Outcome.DONE

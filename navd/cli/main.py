"""The `navd` command: its parser, assembled from the command modules, and `main`, the one place
that turns how a command ended into an exit code.

Output for people goes to stdout; logs go to stderr (JSON lines, or human-readable on a TTY).
Every expected failure (bad config, Solr unreachable, a bad query) exits non-zero with one line
on stderr and no traceback.

| exit | when                                                                             |
|------|----------------------------------------------------------------------------------|
| 0    | done (and `navd server stop` when nothing ran)                                   |
| 1    | a failure: Solr, a source, an element not found, some of `extract all` failed    |
| 2    | bad input: the config, an argument, a name typed wrong, a refused query          |
| 3    | `navd solr status`, `navd server status`: not running                            |
| 4    | a name that matches several elements: the candidates listed on stdout            |
| 130  | interrupted (Ctrl-C)                                                             |
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from navd import __version__
from navd.cli import export, extract, govern, openlineage, quickstart, read, server, solr, usage
from navd.cli.common import Handler, Outcome, print_json, summary_line
from navd.config import load_config
from navd.errors import AmbiguousEntity, ConfigError, NavdError, UsageError
from navd.logs import get_logger, setup_logging
from navd.names import InvalidName

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NOT_RUNNING, EXIT_AMBIGUOUS, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
_EXIT_OF: dict[Outcome, int] = {Outcome.DONE: EXIT_OK, Outcome.FAILED: EXIT_FAILURE,
                                Outcome.NOT_RUNNING: EXIT_NOT_RUNNING}
#: the command modules, in the order `navd --help` lists their commands
COMMAND_GROUPS = (solr, read, extract, govern, usage, export, openlineage, server, quickstart)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="navd", description="Metadata and lineage for Hadoop/Spark, in Solr.")
    parser.add_argument("--version", action="version", version=f"navd {__version__}")
    parser.add_argument("--config", metavar="FILE",
                        help="config file (default: $NAVD_CONFIG, else /etc/navd/navd.toml)")
    parser.add_argument("--log-format", choices=["auto", "json", "console"],
                        help="override [logging] format")
    parser.add_argument("--log-level", choices=["debug", "info", "warning", "error"],
                        help="override [logging] level")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()  # lists the registered components: a broken registration is one line
    except ConfigError as exc:
        print(f"navd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"navd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        setup_logging(args.log_format or config.logging.format, args.log_level or config.logging.level,
                      file=config.logging.file if getattr(args, "log_to_file", False) else "")
    except ConfigError as exc:
        print(f"navd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in config.warnings:  # [security] insecure_credentials = "warn"
        get_logger("navd.config").warning(warning)
    handler: Handler = args.handler
    try:
        return _EXIT_OF[handler(args, config)]
    except ConfigError as exc:
        print(f"navd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (InvalidName, UsageError) as exc:  # a name typed wrong or a refused query is bad input
        print(f"navd: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except AmbiguousEntity as exc:
        _print_candidates(args, exc)
        return EXIT_AMBIGUOUS
    except NavdError as exc:
        print(f"navd: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("navd: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


def _print_candidates(args: argparse.Namespace, exc: AmbiguousEntity) -> None:
    """A name that matches several elements: the one-line error on stderr, the candidates on
    stdout (one line each, as `navd search` prints elements, or JSON), exit 4: scripts tell it
    from "not found" (1)."""
    print(f"navd: error: {exc}", file=sys.stderr)
    if getattr(args, "json", False) or getattr(args, "format", "") == "json":
        print_json({"found": exc.found, "candidates": list(exc.candidates)})
    else:
        for doc in exc.candidates:
            print(summary_line("elements", doc))
        if exc.found > len(exc.candidates):
            print(f"... and {exc.found - len(exc.candidates)} more")

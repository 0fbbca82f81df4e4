"""What the command modules of the CLI share: how a command ends, JSON on stdout, the argparse
type of a time, one line per stored document, and the line a command prints while it waits for
another run's lock."""

from __future__ import annotations

import argparse
import datetime
import enum
import json
import sys
from collections.abc import Callable
from typing import Any

from navd.config import NavdConfig


class Outcome(enum.Enum):
    """How a command that did not raise ended; navd/cli/main.py maps it to the exit code."""

    DONE = "done"
    #: some of the work failed, each failure printed on stderr already
    FAILED = "failed"
    #: the service asked about (the embedded Solr, the background server) does not run
    NOT_RUNNING = "not running"


#: a command: its parsed arguments and the loaded config in, its outcome out
Handler = Callable[[argparse.Namespace, NavdConfig], Outcome]
#: what `register(commands)` of a command module adds its subcommands to
Commands = argparse._SubParsersAction  # noqa: SLF001 - argparse names no public type for it


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")


def iso_time(text: str) -> datetime.datetime:
    """--since, --from, --to: an ISO 8601 time; one without a zone is UTC."""
    try:
        at = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (2026-11-23T08:00:00Z)") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=datetime.timezone.utc)


def summary_line(core: str, doc: dict[str, Any]) -> str:
    """One stored document as `navd search` lists it (and the candidates of an ambiguous name)."""
    if core == "relations":
        flags = " [unlinked]" if doc.get("unlinked") else ""
        dep = f" {doc['dependencyType']}" if doc.get("dependencyType") else ""
        return (f"{doc.get('identity')}  {doc.get('type')}{dep}  {doc.get('endpoint1QualifiedName')} -> "
                f"{doc.get('endpoint2QualifiedName')}{flags}")
    if core == "runs":
        return f"{doc.get('identity')}  {doc.get('component')}  {doc.get('state')}  {doc.get('started')}"
    flags = " [deleted]" if doc.get("deleted") else ""
    return f"{doc.get('identity')}  {doc.get('sourceType')} {doc.get('type')}  {doc.get('qualifiedName')}{flags}"


def waiting(what: str) -> None:
    """Said once when a run waits for the lock another run holds (runner's `on_wait`)."""
    print(f"navd: waiting for the {what} run in progress (navd run or another navd) to finish", file=sys.stderr)

"""The `navd` command line.

Output for people goes to stdout; logs go to stderr (JSON lines, or human-readable on a TTY).
Every expected failure (bad config, Solr unreachable, a bad query) exits non-zero with one line
on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from navd import __version__
from navd.config import NavdConfig, load_config
from navd.errors import AmbiguousEntity, ConfigError, NavdError, UsageError
from navd.logs import get_logger, setup_logging
from navd.names import InvalidName
from navd.registry import components, run_order
from navd.server.roles import ROLE_NAMES

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NOT_RUNNING, EXIT_AMBIGUOUS = 0, 1, 2, 3, 4


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

    solr = commands.add_parser("solr", help="the embedded Solr server and the cores")
    solr_commands = solr.add_subparsers(dest="solr_command", metavar="ACTION", required=True)
    for name, text in (("start", "start the embedded Solr (idempotent)"),
                       ("stop", "stop the embedded Solr"),
                       ("status", "is the embedded Solr running (exit 3 if not)")):
        sub = solr_commands.add_parser(name, help=text)
        sub.add_argument("--home", metavar="DIR", help="Solr home (data, logs, pid file)")
        sub.add_argument("--port", type=int, metavar="N", help="port on 127.0.0.1")
        if name == "start":
            sub.add_argument("--heap", metavar="SIZE", help="JVM heap, e.g. 512m (default from config)")
            sub.add_argument("--cloud", action="store_true",
                             help="set a new home up as a one-node SolrCloud with an embedded ZooKeeper "
                                  "on 127.0.0.1, port + 1000 (that home then always starts so)")
        if name == "status":
            sub.add_argument("--json", action="store_true", help="print JSON")
        sub.set_defaults(handler={"start": cmd_solr_start, "stop": cmd_solr_stop,
                                  "status": cmd_solr_status}[name])
    fetch = solr_commands.add_parser("fetch", help="fetch the Solr jars from Maven Central (idempotent)")
    fetch.set_defaults(handler=cmd_solr_fetch)
    init = solr_commands.add_parser("init", help="create or update the cores/collections (idempotent)")
    init.set_defaults(handler=cmd_solr_init)

    search = commands.add_parser("search", help="raw Solr query, e.g. 'queryText:*temp_table*'")
    search.add_argument("query", help="Solr (Lucene) query syntax")
    search.add_argument("--core", default="elements", choices=["elements", "relations", "runs"])
    search.add_argument("--rows", type=int, default=20, metavar="N")
    search.add_argument("--sort", metavar="SPEC", help="Solr sort, e.g. 'lastModified desc'")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(handler=cmd_search)

    entity = commands.add_parser("entity", help="show one element by qualifiedName, identity, path, "
                                                "db.table or application id (several matches: listed, exit 4)")
    entity.add_argument("name", metavar="NAME",
                        help="identity, qualifiedName, /path, hdfs:///path, db.table[.column], application or "
                             "Spark app id, <app id>/sql/<n>")
    entity.add_argument("--json", action="store_true", help="print JSON")
    entity.set_defaults(handler=cmd_entity)

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

    link = commands.add_parser("link", help="resolve unlinked relations whose far end is indexed now")
    link.add_argument("--full", action="store_true", help="every unlinked relation, not only what changed")
    link.add_argument("--spark", action="store_true", help="run the full pass as a PySpark job (large backlogs)")
    link.add_argument("--master", help="--spark: the Spark master, e.g. local[4] or yarn (default: [spark_jobs] "
                                       "master, local[*]; yarn: docs/operations/yarn.md)")
    link.add_argument("--fs-alias", action="append", default=[], metavar="AUTHORITY=FS", dest="fs_aliases",
                      help="a NameNode address that names the default file system, e.g. "
                           "nn1:8020=hdfs://nameservice1 (repeatable; adds to [linker] fs_aliases)")
    link.set_defaults(handler=cmd_link)

    purge = commands.add_parser("purge", help="remove old executions and long-deleted entities (Navigator's rules)")
    purge.add_argument("--older-than-days", type=float, default=None, metavar="N",
                       help="threshold age (default [purge] older_than_days, 60)")
    purge.add_argument("--dry-run", action="store_true", help="count what would be removed, remove nothing")
    purge.add_argument("--runtime-cap-minutes", type=float, default=None, metavar="M",
                       help="stop after M minutes; the next run continues (default [purge] runtime_cap_minutes)")
    purge.add_argument("--json", action="store_true", help="print the report as JSON")
    purge.set_defaults(handler=cmd_purge)

    status_parser = commands.add_parser("status", help="last run and last success per component; totals per core")
    status_parser.add_argument("--json", action="store_true")
    status_parser.set_defaults(handler=cmd_status)

    lineage = commands.add_parser("lineage", help="where an entity came from and what depends on it")
    lineage.add_argument("entity", metavar="ENTITY", help="as for `navd entity`: identity, qualifiedName, /path, "
                                                          "db.table[.column], application id, ...")
    lineage.add_argument("--direction", choices=["upstream", "downstream", "both"], default="both")
    lineage.add_argument("--depth", type=int, default=5, metavar="N",
                         help="dataset hops per direction (executions do not count); default 5")
    lineage.add_argument("--columns", action="store_true", help="add columns and column edges (implied for a column)")
    lineage.add_argument("--operations", action="store_true",
                         help="show executions, operations and unresolved (unlinked) inputs")
    lineage.add_argument("--deleted", action="store_true", help="show deleted entities")
    lineage.add_argument("--format", choices=["text", "json"], default="text")
    lineage.set_defaults(handler=cmd_lineage)

    taint = commands.add_parser(
        "taint", help="mark a dataset or its partitions in a time range as tainted (--clear, --list)",
        description="Record a taint on a table, a directory or a partition (its partitions in [--from, --to), or "
                    "all of it); `navd reprocess` then lists what to redo downstream. --clear removes the "
                    "taints of ENTITY (or --id); --list shows them (all, or those covering ENTITY).")
    taint.add_argument("entity", metavar="ENTITY", nargs="?", help="as for `navd entity`")
    taint.add_argument("--from", dest="start", metavar="TIME", type=_since,
                       help="start of the bad range (ISO 8601; UTC without a zone), with --to")
    taint.add_argument("--to", dest="end", metavar="TIME", type=_since, help="end of the range (excluded)")
    taint.add_argument("--reason", default="", metavar="TEXT", help="why (shown with the taint)")
    taint.add_argument("--clear", action="store_true", help="remove the taints of ENTITY (or the one of --id)")
    taint.add_argument("--id", dest="taint_id", metavar="ID", help="with --clear: one taint by its id")
    taint.add_argument("--list", action="store_true", help="list the taints (of ENTITY, when given)")
    taint.add_argument("--format", choices=["text", "json"], default="text")
    taint.set_defaults(handler=cmd_taint)

    reprocess = commands.add_parser(
        "reprocess", help="what to redo downstream of a taint: datasets, partitions and runs, in dependency order")
    reprocess.add_argument("entity", metavar="ENTITY", nargs="?", help="the tainted table, directory or partition")
    reprocess.add_argument("--from", dest="start", metavar="TIME", type=_since,
                           help="start of the bad range (ISO 8601; UTC without a zone), with --to")
    reprocess.add_argument("--to", dest="end", metavar="TIME", type=_since, help="end of the range (excluded)")
    reprocess.add_argument("--taint", dest="taint_id", metavar="ID", help="the range and entity of a recorded taint")
    reprocess.add_argument("--format", choices=["text", "json"], default="text")
    reprocess.set_defaults(handler=cmd_reprocess)

    tag = commands.add_parser("tag", help="set, clear or explain the sensitivity level of a table or column")
    tag.add_argument("entity", metavar="ENTITY", nargs="?", help="a table, view or column, as for `navd entity`")
    tag_action = tag.add_mutually_exclusive_group(required=True)
    tag_action.add_argument("--sensitivity", metavar="LEVEL",
                            help="tag ENTITY with LEVEL ([sensitivity] levels); it flows downstream")
    tag_action.add_argument("--clear", action="store_true", help="remove your tag on ENTITY and withdraw it downstream")
    tag_action.add_argument("--explain", metavar="COLUMN", help="the column's level and the path that carried it")
    tag.add_argument("--format", choices=["text", "json"], default="text")
    tag.set_defaults(handler=cmd_tag)

    usage = commands.add_parser("usage", help="reads and writes per day of a table or column, last read/write, "
                                              "generation time")
    usage.add_argument("entity", metavar="ENTITY", help="as for `navd entity`: a table, directory, file or column")
    usage.add_argument("--days", type=int, default=30, metavar="N", help="the window: the last N days (default 30)")
    usage.add_argument("--format", choices=["text", "json"], default="text")
    usage.set_defaults(handler=cmd_usage)

    unused = commands.add_parser("unused", help="tables no job read in the last N days, with size and owner")
    unused.add_argument("--days", type=int, default=30, metavar="N", help="the window (default 30)")
    unused.add_argument("--database", metavar="D", help="only the tables of this database")
    unused.add_argument("--format", choices=["text", "json"], default="text")
    unused.set_defaults(handler=cmd_unused)

    deps = commands.add_parser("deps", help="the jobs producing a job's inputs, with their last producing run")
    deps.add_argument("job", metavar="JOB", help="an operation or one of its executions (application id, ...)")
    deps.add_argument("--format", choices=["text", "json"], default="text")
    deps.set_defaults(handler=cmd_deps)

    impact = commands.add_parser("impact", help="downstream datasets, the jobs reading them and their users")
    impact.add_argument("entity", metavar="ENTITY", help="as for `navd entity`")
    impact.add_argument("--depth", type=int, default=5, metavar="N", help="dataset hops downstream (default 5)")
    impact.add_argument("--format", choices=["text", "json"], default="text")
    impact.set_defaults(handler=cmd_impact)

    export = commands.add_parser("export", help="write what navd knows in another format")
    export_commands = export.add_subparsers(dest="export_format", required=True, metavar="FORMAT")
    openlineage = export_commands.add_parser(
        "openlineage", help="OpenLineage RunEvents as NDJSON: one line per event, START and its end per execution")
    openlineage.add_argument("--since", metavar="TIME", type=_since,
                             help="executions started or ended at or after TIME (ISO 8601; UTC without a zone)")
    openlineage.add_argument("--entity", metavar="ENTITY",
                             help="only this element's executions (an execution, an operation, a dataset read or written)")
    openlineage.add_argument("--output", metavar="FILE", help="write to FILE instead of standard output")
    openlineage.add_argument("--validate", action="store_true",
                             help="check each event against the vendored OpenLineage schema before writing it")
    openlineage.set_defaults(handler=cmd_export_openlineage)

    run = commands.add_parser(
        "run", help="the daemon, in the foreground (systemd Type=notify): scheduled extraction, linking, purge")
    run.set_defaults(handler=cmd_run)

    serve = commands.add_parser(
        "serve", help="the HTTP server: lineage page and API ([server]: host, port, TLS, auth); --background",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Serve, with the [server] settings of the config:
  the lineage page at /
  navd's JSON API: /api/entities, /api/entities/{name}, /api/lineage, /api/status, /api/runs,
    /api/taints, /api/reprocess
  Cloudera Navigator's read API under /api/v9/ to /api/v19/
  /healthz and /readyz (no login), /metrics (Prometheus), /openapi.json

[server] keys (deploy/navd.toml; a ready file with the server on: deploy/navd-server.toml):
  host        default 127.0.0.1; off loopback navd needs auth = "basic" and TLS
  port        default 7187
  allowed_hosts
              more names clients reach it by; a request under a Host the server does not
              have is refused (400), a write from another site's page too (403)
  cert_file   PEM certificate (chain) and key_file its key: TLS
  auth        "none" (loopback only) | "basic": users added with `navd server add-user NAME`,
              kept in users_file (default: server-users in the state dir) | "kerberos" (SPNEGO)
  keytab, principal
              with auth = "kerberos": the service keytab (0600) and principal (default HTTP/_HOST)
  max_rows, max_depth, max_nodes
              caps on one request (400 naming the parameter above them)
  kerberos_roles
              with auth = "kerberos": principal -> viewer | editor | admin (unlisted: viewer)
  max_login_failures, login_window_seconds, hash_threads
              failed logins per address and user name before 429; threads hashing passwords
  max_connections, keep_alive_seconds, header_timeout_seconds, body_timeout_seconds
              connections at once (503 past it); idle, slow-head and slow-body connections closed
  enabled     serve inside `navd run` too

In the foreground until SIGTERM or Ctrl-C. With --background: detached, returns once it
listens; its pid file and log in the state dir; `navd server status`, `navd server stop`.
""")
    serve.add_argument("--host", metavar="ADDR", help="override [server] host (off loopback: auth and TLS needed)")
    serve.add_argument("--port", type=int, metavar="N", help="override [server] port")
    serve.add_argument("--auth", choices=["none", "basic", "kerberos"], help="override [server] auth")
    serve.add_argument("--background", action="store_true",
                       help="start detached and return once it listens; when it runs already, say so (exit 0)")
    # Set by --background on the detached server: its pid file's directory, in its command line so
    # that `navd server stop/status` tell it from a process that reused its pid (navd/process.py).
    serve.add_argument("--run-dir", help=argparse.SUPPRESS)
    serve.set_defaults(handler=cmd_serve)

    server = commands.add_parser("server", help="the background server (status, stop) and its users")
    server_commands = server.add_subparsers(dest="server_command", metavar="ACTION", required=True)
    add_user = server_commands.add_parser(
        "add-user", help="add a user of [server] auth = basic, or change its password",
        description="The password is read from the terminal (twice), or as one line from stdin when "
                    "it is not a terminal; never from the command line, which other users can see.")
    add_user.add_argument("name", metavar="NAME",
                          help="ASCII letters, digits and . _ - @ (NFKC-normalised first)")
    add_user.add_argument("--role", choices=ROLE_NAMES,
                          help="viewer reads; editor also posts OpenLineage events, tags and taints; admin may do "
                               "everything (default: viewer for a new user, unchanged for an existing one)")
    add_user.set_defaults(handler=cmd_server_add_user)
    add_key = server_commands.add_parser(
        "add-api-key", help="make an API key (Authorization: Bearer) for NAME, printed once; replaces NAME's key",
        description="The key is printed once and only its SHA-256 digest is kept ([server] api_keys_file). "
                    "Keys are accepted with [server] auth = basic or kerberos; with auth = none nothing is asked.")
    add_key.add_argument("name", metavar="NAME")
    add_key.add_argument("--role", choices=ROLE_NAMES, default="editor",
                         help="viewer reads; editor also posts OpenLineage events, tags and taints; admin may do "
                              "everything (default: editor, what an emitter needs)")
    add_key.set_defaults(handler=cmd_server_add_api_key)
    list_keys = server_commands.add_parser("list-api-keys", help="the API keys' names and roles")
    list_keys.set_defaults(handler=cmd_server_list_api_keys)
    revoke_key = server_commands.add_parser("revoke-api-key", help="revoke NAME's API key (the server stops "
                                                                   "accepting it at its next request)")
    revoke_key.add_argument("name", metavar="NAME")
    revoke_key.set_defaults(handler=cmd_server_revoke_api_key)
    set_role = server_commands.add_parser(
        "set-role", help="change the role of a user of [server] auth = basic (its password unchanged)")
    set_role.add_argument("name", metavar="NAME")
    set_role.add_argument("role", metavar="ROLE", choices=ROLE_NAMES, help=" | ".join(ROLE_NAMES))
    set_role.set_defaults(handler=cmd_server_set_role)
    server_status = server_commands.add_parser(
        "status", help="does the server `navd serve --background` started run, and its URL (exit 3 if not)")
    server_status.set_defaults(handler=cmd_server_status)
    server_stop = server_commands.add_parser(
        "stop", help="stop the server `navd serve --background` started (SIGTERM; not running: exit 0)")
    server_stop.set_defaults(handler=cmd_server_stop)

    quickstart = commands.add_parser(
        "quickstart", help="start the embedded Solr, create the cores, run a small PySpark pipeline, extract and "
                           "link it, show the lineage of its sample_merge table, start the server in the "
                           "background and print the URL of that lineage's page")
    quickstart.add_argument("--dir", metavar="DIR",
                            help="the pipeline's warehouse, event logs and extractor state "
                                 "(default ~/.local/share/navd/quickstart)")
    quickstart.set_defaults(handler=cmd_quickstart)
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
                      file=config.logging.file if args.handler in (cmd_run, cmd_serve) else "")
    except ConfigError as exc:
        print(f"navd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in config.warnings:  # [security] insecure_credentials = "warn"
        get_logger("navd.config").warning(warning)
    handler: Callable[[argparse.Namespace, NavdConfig], int] = args.handler
    try:
        return handler(args, config)
    except ConfigError as exc:
        print(f"navd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (InvalidName, UsageError) as exc:  # a name typed wrong or a refused query is bad input
        print(f"navd: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except AmbiguousEntity as exc:
        return _print_candidates(args, exc)
    except NavdError as exc:
        print(f"navd: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("navd: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


# -- helpers ----------------------------------------------------------------------------------

def _print_candidates(args: argparse.Namespace, exc: AmbiguousEntity) -> int:
    """A name that matches several elements: the one-line error on stderr, the candidates on
    stdout (one line each, as `navd search` prints elements, or JSON), exit 4: scripts tell it
    from "not found" (1)."""
    print(f"navd: error: {exc}", file=sys.stderr)
    if getattr(args, "json", False) or getattr(args, "format", "") == "json":
        _print_json({"found": exc.found, "candidates": list(exc.candidates)})
    else:
        for doc in exc.candidates:
            print(_summary_line("elements", doc))
        if exc.found > len(exc.candidates):
            print(f"... and {exc.found - len(exc.candidates)} more")
    return EXIT_AMBIGUOUS


def _index(config: NavdConfig, *, interactive: bool = True, read_only: bool = False):  # -> SolrIndex
    """The Solr client for a command. Interactive reads fail at once with one line instead of
    backing off for a minute as the daemon's writers do. `read_only` commands (search, entity,
    lineage) log in to the embedded Solr as its query-only user."""
    import dataclasses

    from navd.index.client import SolrIndex
    from navd.solr.server import effective_solr_config

    solr = effective_solr_config(config, read_only=read_only)
    if interactive:
        solr = dataclasses.replace(solr, retries=0)
    return SolrIndex(solr)


def _embedded(args: argparse.Namespace, config: NavdConfig):
    from navd.solr.server import embedded_server

    if not config.solr.is_embedded:
        raise ConfigError(f"[solr] url is set ({config.solr.url}): navd uses that Solr, not an "
                          "embedded one; `navd solr start/stop/status` manage only the embedded server")
    server = embedded_server(config, home=getattr(args, "home", None), port=getattr(args, "port", None),
                             remembered=getattr(args, "remembered", True))
    if getattr(args, "heap", None):
        server.heap = args.heap
    if getattr(args, "cloud", False):
        server.cloud = True
    return server


def _print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")


# -- solr -------------------------------------------------------------------------------------

def cmd_solr_fetch(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.solr.server import SolrDistribution

    dist = SolrDistribution(config.solr.embedded.version, config.solr.embedded.dist_path)
    root = dist.ensure()
    print(f"Solr {dist.version} ready in {root}")
    return EXIT_OK


def cmd_solr_start(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.solr.server import remember_current

    server = _embedded(args, config)
    status = server.start()
    remember_current(config, server)
    print(f"running: Solr {status.solr_version} on {status.url} (pid {status.pid}, home {status.home})")
    return EXIT_OK


def cmd_solr_stop(args: argparse.Namespace, config: NavdConfig) -> int:
    server = _embedded(args, config)
    stopped = server.stop()
    print(f"stopped Solr (home {server.home})" if stopped else f"not running (home {server.home})")
    return EXIT_OK


def cmd_solr_status(args: argparse.Namespace, config: NavdConfig) -> int:
    status = _embedded(args, config).status()
    if args.json:
        _print_json(status.as_dict())
    elif status.running:
        print(f"running: Solr {status.solr_version or '?'} on {status.url} "
              f"(pid {status.pid}, home {status.home})")
    else:
        print(f"{status.detail} (home {status.home})")
    return EXIT_OK if status.running else EXIT_NOT_RUNNING


def cmd_solr_init(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.index.admin import init_solr

    with _index(config) as index:
        for result in init_solr(index):
            print(f"{result.core}: {result.action} ({result.detail})")
    return EXIT_OK


# -- search and entity ------------------------------------------------------------------------

def cmd_search(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import search

    if args.rows < 0:
        raise ConfigError("--rows must be >= 0")
    with _index(config, read_only=True) as index:
        result = search(index, args.core, args.query, rows=args.rows, sort=args.sort)
    if args.json:
        _print_json({"numFound": result.found, "docs": list(result.docs)})
        return EXIT_OK
    millis = "?" if result.millis is None else result.millis
    print(f"{result.found} found ({millis} ms), showing {len(result.docs)}")
    for doc in result.docs:
        print(_summary_line(args.core, doc))
    return EXIT_OK


def _summary_line(core: str, doc: dict[str, Any]) -> str:
    if core == "relations":
        flags = " [unlinked]" if doc.get("unlinked") else ""
        dep = f" {doc['dependencyType']}" if doc.get("dependencyType") else ""
        return (f"{doc.get('identity')}  {doc.get('type')}{dep}  {doc.get('endpoint1QualifiedName')} -> "
                f"{doc.get('endpoint2QualifiedName')}{flags}")
    if core == "runs":
        return f"{doc.get('identity')}  {doc.get('component')}  {doc.get('state')}  {doc.get('started')}"
    flags = " [deleted]" if doc.get("deleted") else ""
    return f"{doc.get('identity')}  {doc.get('sourceType')} {doc.get('type')}  {doc.get('qualifiedName')}{flags}"


def cmd_entity(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import entity, lookup_scope

    with _index(config, read_only=True) as index:
        docs = entity(index, args.name, lookup_scope(config))
        if len(docs) == 1:
            docs = (_with_taints(index, docs[0]),)
    if args.json:
        _print_json(docs[0] if len(docs) == 1 else docs)
        return EXIT_OK
    for number, doc in enumerate(docs):
        if number:
            print()
        width = max(len(k) for k in doc)
        for key, value in doc.items():
            shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
            # A multi-line value (an execution's plan, a view's text) stays in the value column.
            print(f"{key.ljust(width)}  " + shown.replace("\n", "\n" + " " * (width + 2)))
    return EXIT_OK


def _with_taints(index: Any, doc: dict[str, Any]) -> dict[str, Any]:
    """The element with its `tainted` section when a taint covers it (navd taint)."""
    from navd.query import entity_taints

    tainted = entity_taints(index, doc)
    return {**doc, "tainted": tainted} if tainted else doc


def cmd_extract(args: argparse.Namespace, config: NavdConfig) -> int:
    if args.source != "all":
        _extract(args, config, components()[args.source])
        return EXIT_OK
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
    return EXIT_FAILURE if failed else EXIT_OK


def _waiting(what: str) -> None:
    print(f"navd: waiting for the {what} run in progress (navd run or another navd) to finish", file=sys.stderr)


def _print_run(component: Any, result: Any) -> None:  # (Component, RunResult)
    """The run's summary, then its link pass (whose failure fails the command, after the summary)."""
    print(component.summary(result.report), flush=True)
    if result.link_error:
        raise NavdError(f"link pass failed: {result.link_error}")
    if result.link is not None:
        print(f"link: {result.link.linked} relations linked, {result.link.still_unlinked} still unlinked", flush=True)


def _extract(args: argparse.Namespace, config: NavdConfig, component: Any) -> None:
    """One run of a pull component, or the tail of a push one (one pass with --once)."""
    import time

    from navd.runner import PushTail, make_visible, run_extraction

    options = {o.dest: getattr(args, o.dest, None) for o in component.cli_options}
    for option in dict.fromkeys(o for c in components().values() for o in c.cli_options):
        if option not in component.cli_options and getattr(args, option.dest, None) not in (None, False,
                                                                                           option.default):
            raise UsageError(f"{option.flag}: not an option of navd extract {component.name}")
    component.check(config, options)  # the missing key, before waiting for a lock
    one_run = any(o.one_run and options.get(o.dest) for o in component.cli_options)
    with _index(config, interactive=False) as index:
        if component.mode == "pull" or one_run:
            result = run_extraction(index, config, component, options=options, full=args.full,
                                    on_wait=_waiting, show_progress=True, visible_now=True)
            _print_run(component, result)
            return
        tail = PushTail(index, config, component)
        try:
            while True:
                result = tail.poll(on_wait=_waiting)
                if args.once or result.link is not None or result.link_error:
                    _print_run(component, result)
                if args.once:
                    make_visible(index)
                    return
                time.sleep(component.interval(config).total_seconds())
        finally:
            tail.close()


def cmd_status(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import extractor_state_dir
    from navd.query import status

    # Only reads: with Solr down an admin (or a monitoring check) is told so at once, in one
    # line, rather than after the writers' minute and a half of backing off.
    with _index(config) as index:
        current = status(index, extractor_state_dir(config))
    if args.json:
        _print_json(current)
        return EXIT_OK
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
            line += "; next run " + {
                "NOT_SCHEDULED": "not scheduled (navd run is stopped)",
                "AFTER_CURRENT_RUN": "interval after the run in progress (and its link pass)",
            }.get(next_run, next_run)
        if last.get("error"):
            line += f"; error: {last['error']}"
        if last.get("refused"):
            line += f"; refused: {last['refused']}"
        print(line)
    if not current["components"]:
        print("no runs recorded yet")
    print("totals: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in current["totals"].items()))
    return EXIT_OK


def cmd_purge(args: argparse.Namespace, config: NavdConfig) -> int:
    import dataclasses

    from navd.config import PurgeConfig, field_range
    from navd.purge.purge import CATEGORIES
    from navd.runner import purge

    days = config.purge.older_than_days if args.older_than_days is None else args.older_than_days
    cap = config.purge.runtime_cap_minutes if args.runtime_cap_minutes is None else args.runtime_cap_minutes
    # The keys' ranges, from 0 on: by hand, `--older-than-days 0` purges everything deleted now.
    for flag, value, key in (("--older-than-days", days, "older_than_days"),
                             ("--runtime-cap-minutes", cap, "runtime_cap_minutes")):
        dataclasses.replace(field_range(PurgeConfig, key), low_open=False).check(flag, value)
    with _index(config, interactive=False) as index:
        report = purge(index, config, older_than_days=days, runtime_cap_minutes=cap, dry_run=args.dry_run,
                       on_wait=_waiting, show_progress=not args.json)
    if args.json:
        _print_json(report.as_dict())
        return EXIT_OK
    verb = "would remove" if args.dry_run else "removed"
    print(f"purge (older than {report.threshold}): {verb} "
          + ", ".join(f"{report.removed[c]} {c.replace('_', ' ')}" for c in CATEGORIES)
          + ("" if report.complete else "; stopped at the runtime cap, run again to continue"))
    return EXIT_OK


def cmd_link(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import parse_fs_aliases
    from navd.runner import link, link_summary

    aliases = parse_fs_aliases(args.fs_aliases, "--fs-alias")
    if args.master and not args.spark:
        raise UsageError("--master: only with --spark (the Spark job's master)")
    with _index(config, interactive=False) as index:
        report = link(index, config, full=args.full, fs_aliases=aliases, on_wait=_waiting, show_progress=True,
                      spark=args.spark, spark_master=args.master)
    print(link_summary(report))
    return EXIT_OK


def cmd_run(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.daemon import Daemon

    return Daemon(config, config_path=args.config, log_format=args.log_format, log_level=args.log_level).run()


def cmd_lineage(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.lineage import LineageOptions, render_text
    from navd.query import lineage, lookup_scope

    if args.depth < 1:
        raise ConfigError("--depth must be >= 1")
    options = LineageOptions(direction=args.direction, depth=args.depth, columns=args.columns,
                             operations=args.operations, deleted=args.deleted)
    with _index(config, read_only=True) as index:
        graph = lineage(index, args.entity, options, lookup_scope(config))
    if args.format == "json":
        _print_json(graph.as_dict())
    else:
        print(render_text(graph))
    return EXIT_OK


def cmd_tag(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import lookup_scope, sensitivity_clear, sensitivity_explain, sensitivity_tag

    if args.explain is not None:
        if args.entity is not None:
            raise UsageError("tag --explain COLUMN takes no ENTITY")
        with _index(config, read_only=True) as index:
            explanation = sensitivity_explain(index, config, args.explain, lookup_scope(config))
        if args.format == "json":
            _print_json(explanation.as_dict())
            return EXIT_OK
        print(f"{explanation.column.get('qualifiedName')}: {explanation.level or 'no sensitivity level'}")
        for number, (_, name, tags) in enumerate(explanation.path):
            origin = "; ".join(f"tagged {t.level} by {t.source}" + (f" on {t.name}" if t.name and t.name != name else "")
                               for t in tags)
            print(f"  {'  ' * number}{'-> ' if number else ''}{name}" + (f"  ({origin})" if origin else ""))
        if explanation.level and not explanation.path:
            print("  (no tag explains it any more: the next sensitivity pass withdraws it)")
        return EXIT_OK
    if args.entity is None:
        raise UsageError("tag: ENTITY is required with --sensitivity and --clear")
    with _index(config) as index:
        if args.clear:
            result = sensitivity_clear(index, config, args.entity, lookup_scope(config))
        else:
            result = sensitivity_tag(index, config, args.entity, args.sensitivity, lookup_scope(config))
    if args.format == "json":
        _print_json(result.as_dict())
    else:
        what = f"tagged {result.level}" if result.level else "tag cleared"
        print(f"{result.target.get('qualifiedName')}: {what}; {result.columns} column and {result.tables} table "
              f"levels changed")

def cmd_usage(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import lookup_scope, usage

    with _index(config, read_only=True) as index:
        found = usage(index, args.entity, lookup_scope(config), days=args.days)
    if args.format == "json":
        _print_json(found.as_dict())
        return EXIT_OK
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
    return EXIT_OK


def cmd_unused(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import unused

    with _index(config, read_only=True) as index:
        tables = unused(index, days=args.days, database=args.database)
        if args.format == "json":
            # one JSON document per line: the list is streamed, never held whole
            for table in tables:
                print(json.dumps(table.as_dict(), ensure_ascii=False))
            return EXIT_OK
        for table in tables:
            print(f"{table.table}\towner={table.owner or '-'}\tsize={'-' if table.size is None else table.size}"
                  f"\tlast_read={table.last_read or 'never'}")
    return EXIT_OK


def cmd_deps(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import deps, lookup_scope

    with _index(config, read_only=True) as index:
        found = deps(index, args.job, lookup_scope(config))
    if args.format == "json":
        _print_json(found.as_dict())
        return EXIT_OK
    print(f"{found.qualified_name}: reads {', '.join(found.inputs) or 'nothing'}")
    for producer in found.producers:
        run = producer.last_run
        print(f"  {producer.qualified_name} writes {', '.join(producer.datasets)}"
              + (f"; last run {run.qualified_name} ended {run.ended or '-'} by {run.user or '-'}" if run else ""))
    return EXIT_OK


def cmd_impact(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import impact, lookup_scope

    if args.depth < 1:
        raise ConfigError("--depth must be >= 1")
    with _index(config, read_only=True) as index:
        found = impact(index, args.entity, lookup_scope(config), depth=args.depth)
    if args.format == "json":
        _print_json(found.as_dict())
        return EXIT_OK
    print(f"{found.qualified_name}: {len(found.datasets)} downstream datasets, {len(found.jobs)} jobs reading")
    for dataset in found.datasets:
        print(f"  dataset {dataset['qualifiedName']} owner={dataset['owner'] or '-'}")
    for job in found.jobs:
        print(f"  job {job.qualified_name} reads {', '.join(job.datasets)} users={','.join(job.users) or '-'}")
    if found.truncated:
        print("  (truncated at the node cap)")
    return EXIT_OK


def _since(text: str) -> datetime.datetime:
    """--since: an ISO 8601 time; one without a zone is UTC."""
    try:
        at = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (2026-11-23T08:00:00Z)") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=datetime.timezone.utc)


def cmd_export_openlineage(args: argparse.Namespace, config: NavdConfig) -> int:
    import orjson

    from navd.query import export_openlineage, lookup_scope

    with _index(config, read_only=True) as index:
        events = export_openlineage(index, config, since=args.since, entity=args.entity,
                                    scope=lookup_scope(config), validate=args.validate)
        if args.output is None:
            for event in events:
                sys.stdout.buffer.write(orjson.dumps(event) + b"\n")
            sys.stdout.flush()
            return EXIT_OK
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
    return EXIT_OK


# -- taint and reprocess (issue 23) ------------------------------------------------------------

def cmd_taint(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import clear_taints, lookup_scope, taint, taints

    scope = lookup_scope(config)
    if args.list:
        with _index(config, read_only=True) as index:
            shown = taints(index, args.entity, scope)
        if args.format == "json":
            _print_json(shown)
        else:
            for record in shown:
                print(_taint_line(record))
            if not shown:
                print("no taints")
        return EXIT_OK
    if args.clear:
        if args.start or args.end:
            raise UsageError("taint --clear removes whole taints: no --from/--to")
        with _index(config) as index:
            removed = clear_taints(index, args.entity, scope, taint_id=args.taint_id)
        if args.format == "json":
            _print_json(removed)
        else:
            print(f"cleared {len(removed)} taint{'' if len(removed) == 1 else 's'}")
            for record in removed:
                print(_taint_line(record))
        return EXIT_OK
    if args.entity is None:
        raise UsageError("taint: name the ENTITY (or --list, or --clear --id ID)")
    if args.taint_id:
        raise UsageError("taint: --id goes with --clear")
    import getpass

    with _index(config) as index:
        record = taint(index, args.entity, scope, start=args.start, end=args.end, reason=args.reason,
                       user=getpass.getuser())
    if args.format == "json":
        _print_json(record)
    else:
        print(_taint_line(record))
    return EXIT_OK


def _taint_line(record: dict[str, Any]) -> str:
    span = f"{record['from']} -> {record['to']}" if record.get("from") else "all of it"
    reason = f"  ({record['reason']})" if record.get("reason") else ""
    return f"{record['id']}  {record['qualifiedName']}  {span}{reason}"


def cmd_reprocess(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.query import lookup_scope, reprocess

    with _index(config, read_only=True) as index:
        plan = reprocess(index, args.entity, lookup_scope(config), start=args.start, end=args.end,
                         taint_id=args.taint_id)
    if args.format == "json":
        _print_json(plan.as_dict())
        return EXIT_OK
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
    for number, run in enumerate(plan.runs, 1):
        period = f"  data {run.period[0]} -> {run.period[1]}" if run.period else ""
        print(f"{number}. {run.qualified_name or run.identity}  ({run.started} -> {run.ended}){period}  "
              f"writes {run.dataset} {' '.join(run.partitions)}".rstrip())
    if plan.truncated:
        print("(truncated: more datasets downstream than one plan holds)")
    return EXIT_OK


# -- server -----------------------------------------------------------------------------------

def cmd_serve(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import ServerConfig, field_range, with_server
    from navd.server.run import serve

    if args.port is not None:
        field_range(ServerConfig, "port").check("--port", args.port)
    overrides = {key: value for key, value in (("host", args.host), ("port", args.port), ("auth", args.auth))
                 if value is not None}
    if overrides:
        config = with_server(config, **overrides)
    if not args.background:
        return serve(config)
    from navd.server import background
    from navd.solr.server import effective_solr_config

    running, started = background.start(config, effective_solr_config(config).base_url,
                                         log_format=args.log_format, log_level=args.log_level)
    if started:
        print(f"running: navd server on {running.url} (pid {running.pid}, log {running.log_file}); "
              "stop it with `navd server stop`")
    else:
        print(f"already running: navd server on {running.url} (pid {running.pid}, log {running.log_file})")
    return EXIT_OK


def cmd_server_status(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.server import background

    current = background.status(config)
    if current.running:
        print(f"running: navd server on {current.url} (pid {current.pid}, log {current.log_file})")
        return EXIT_OK
    print(f"{current.detail} (state {current.log_file.parent})")
    return EXIT_NOT_RUNNING


def cmd_server_stop(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.server import background

    current = background.status(config)
    if background.stop(config):
        print(f"stopped the navd server on {current.url} (pid {current.pid})")
    else:
        print(f"not running (state {current.log_file.parent})")
    return EXIT_OK


def cmd_server_add_user(args: argparse.Namespace, config: NavdConfig) -> int:
    import getpass

    from navd.config import server_users_path
    from navd.server.roles import parse_role
    from navd.server.users import add_user, check_password, check_user_name

    name = check_user_name(args.name)
    if sys.stdin.isatty():
        password = getpass.getpass(f"password for {name}: ")
        check_password(password)  # before asking again
        if getpass.getpass("again: ") != password:
            raise UsageError("password: the two entries differ")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    path = server_users_path(config)
    role = parse_role(args.role, "--role") if args.role else None
    new = add_user(path, name, password, role)
    print(f"{'added' if new else 'changed the password of'} {name} in {path}"
          + (f" (role {role.label})" if role else " (role viewer)" if new else ""))
    if config.server.auth != "basic":
        print(f'note: [server] auth is "{config.server.auth}"; set auth = "basic" for users to log in')
    return EXIT_OK


def cmd_server_add_api_key(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import server_api_keys_path
    from navd.server.api_keys import add_api_key
    from navd.server.roles import parse_role

    path = server_api_keys_path(config)
    key = add_api_key(path, args.name, parse_role(args.role, "--role"))
    print(key)
    print(f"the API key of {args.name} (role {args.role}), kept as a digest in {path}: it is not shown again",
          file=sys.stderr)
    if config.server.auth == "none":
        print('note: [server] auth is "none": the server asks for no key', file=sys.stderr)
    return EXIT_OK


def cmd_server_list_api_keys(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import server_api_keys_path
    from navd.server.api_keys import read_api_keys

    for key in read_api_keys(server_api_keys_path(config)).values():
        print(f"{key.name}\t{key.role.label}")
    return EXIT_OK


def cmd_server_revoke_api_key(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import server_api_keys_path
    from navd.server.api_keys import revoke_api_key

    path = server_api_keys_path(config)
    revoke_api_key(path, args.name)
    print(f"revoked the API key of {args.name} in {path}")
    return EXIT_OK


def cmd_server_set_role(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import server_users_path
    from navd.server.roles import parse_role
    from navd.server.users import set_role

    path = server_users_path(config)
    set_role(path, args.name, parse_role(args.role, "ROLE"))
    print(f"set the role of {args.name} to {args.role} in {path}")
    return EXIT_OK


# -- quickstart -------------------------------------------------------------------------------

def cmd_quickstart(args: argparse.Namespace, config: NavdConfig) -> int:
    from navd.config import default_quickstart_dir
    from navd.sample import QUICKSTART_STEPS, quickstart

    if config.solr.is_embedded:
        # its own home (the config's [solr.embedded], else the default), never the Solr another
        # `navd solr start --home` left remembered; started, it is the one later commands reach
        cmd_solr_start(argparse.Namespace(home=None, port=None, heap=None, remembered=False), config)
    root = Path(args.dir) if args.dir else default_quickstart_dir()
    with _index(config, interactive=False) as index:
        run = quickstart(config, index, root, log_format=args.log_format, log_level=args.log_level)
        for step in QUICKSTART_STEPS:
            for line in step(run):
                print(line, flush=True)
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

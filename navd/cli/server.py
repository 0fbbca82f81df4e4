"""`navd run`, `navd serve`, `navd server add-user|status|stop`: the daemon and the HTTP server."""

from __future__ import annotations

import argparse
import getpass
import sys

from navd.cli.common import Commands, Outcome
from navd.config import NavdConfig, ServerConfig, field_range, server_api_keys_path, server_users_path, with_server
from navd.daemon import Daemon
from navd.errors import UsageError
from navd.server.api_keys import add_api_key, read_api_keys, revoke_api_key
from navd.server.roles import ROLE_NAMES, parse_role
from navd.server.users import add_user, check_password, check_user_name, set_role
from navd.solr.server import effective_solr_config


def register(commands: Commands) -> None:
    run = commands.add_parser(
        "run", help="the daemon, in the foreground (systemd Type=notify): scheduled extraction, linking, purge")
    # the long-running commands log to [logging] file too
    run.set_defaults(handler=cmd_run, log_to_file=True)

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
    serve.set_defaults(handler=cmd_serve, log_to_file=True)

    server = commands.add_parser("server", help="the background server (status, stop) and its users")
    actions = server.add_subparsers(dest="server_command", metavar="ACTION", required=True)
    add_user_parser = actions.add_parser(
        "add-user", help="add a user of [server] auth = basic, or change its password",
        description="The password is read from the terminal (twice), or as one line from stdin when "
                    "it is not a terminal; never from the command line, which other users can see.")
    add_user_parser.add_argument("name", metavar="NAME",
                                 help="ASCII letters, digits and . _ - @ (NFKC-normalised first)")
    add_user_parser.add_argument("--role", choices=ROLE_NAMES,
                                 help="viewer reads; editor also posts OpenLineage events, tags and taints; admin "
                                      "may do everything (default: viewer for a new user, unchanged for an "
                                      "existing one)")
    add_user_parser.set_defaults(handler=cmd_server_add_user)
    add_key = actions.add_parser(
        "add-api-key", help="make an API key (Authorization: Bearer) for NAME, printed once; replaces NAME's key",
        description="The key is printed once and only its SHA-256 digest is kept ([server] api_keys_file). "
                    "Keys are accepted with [server] auth = basic or kerberos; with auth = none nothing is asked.")
    add_key.add_argument("name", metavar="NAME")
    add_key.add_argument("--role", choices=ROLE_NAMES, default="editor",
                         help="viewer reads; editor also posts OpenLineage events, tags and taints; admin may do "
                              "everything (default: editor, what an emitter needs)")
    add_key.set_defaults(handler=cmd_server_add_api_key)
    list_keys = actions.add_parser("list-api-keys", help="the API keys' names and roles")
    list_keys.set_defaults(handler=cmd_server_list_api_keys)
    revoke_key = actions.add_parser("revoke-api-key", help="revoke NAME's API key (the server stops "
                                                           "accepting it at its next request)")
    revoke_key.add_argument("name", metavar="NAME")
    revoke_key.set_defaults(handler=cmd_server_revoke_api_key)
    set_role_parser = actions.add_parser(
        "set-role", help="change the role of a user of [server] auth = basic (its password unchanged)")
    set_role_parser.add_argument("name", metavar="NAME")
    set_role_parser.add_argument("role", metavar="ROLE", choices=ROLE_NAMES, help=" | ".join(ROLE_NAMES))
    set_role_parser.set_defaults(handler=cmd_server_set_role)
    status = actions.add_parser(
        "status", help="does the server `navd serve --background` started run, and its URL (exit 3 if not)")
    status.set_defaults(handler=cmd_server_status)
    stop = actions.add_parser(
        "stop", help="stop the server `navd serve --background` started (SIGTERM; not running: exit 0)")
    stop.set_defaults(handler=cmd_server_stop)


def cmd_run(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    daemon = Daemon(config, config_path=args.config, log_format=args.log_format, log_level=args.log_level)
    return Outcome.DONE if daemon.run() == 0 else Outcome.FAILED


def cmd_serve(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    # FastAPI and uvicorn load in about half a second: imported by the commands that serve, not
    # by every `navd` command
    from navd.server import background  # noqa: PLC0415
    from navd.server.run import serve  # noqa: PLC0415

    if args.port is not None:
        field_range(ServerConfig, "port").check("--port", args.port)
    overrides = {key: value for key, value in (("host", args.host), ("port", args.port), ("auth", args.auth))
                 if value is not None}
    if overrides:
        config = with_server(config, **overrides)
    if not args.background:
        return Outcome.DONE if serve(config) == 0 else Outcome.FAILED
    running, started = background.start(config, effective_solr_config(config).base_url,
                                        log_format=args.log_format, log_level=args.log_level)
    if started:
        print(f"running: navd server on {running.url} (pid {running.pid}, log {running.log_file}); "
              "stop it with `navd server stop`")
    else:
        print(f"already running: navd server on {running.url} (pid {running.pid}, log {running.log_file})")
    return Outcome.DONE


def cmd_server_status(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    from navd.server import background  # noqa: PLC0415 - FastAPI and uvicorn, as in cmd_serve

    current = background.status(config)
    if current.running:
        print(f"running: navd server on {current.url} (pid {current.pid}, log {current.log_file})")
        return Outcome.DONE
    print(f"{current.detail} (state {current.log_file.parent})")
    return Outcome.NOT_RUNNING


def cmd_server_stop(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    from navd.server import background  # noqa: PLC0415 - FastAPI and uvicorn, as in cmd_serve

    current = background.status(config)
    if background.stop(config):
        print(f"stopped the navd server on {current.url} (pid {current.pid})")
    else:
        print(f"not running (state {current.log_file.parent})")
    return Outcome.DONE


def cmd_server_add_user(args: argparse.Namespace, config: NavdConfig) -> Outcome:
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
    return Outcome.DONE


def cmd_server_add_api_key(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    path = server_api_keys_path(config)
    key = add_api_key(path, args.name, parse_role(args.role, "--role"))
    print(key)
    print(f"the API key of {args.name} (role {args.role}), kept as a digest in {path}: it is not shown again",
          file=sys.stderr)
    if config.server.auth == "none":
        print('note: [server] auth is "none": the server asks for no key', file=sys.stderr)
    return Outcome.DONE


def cmd_server_list_api_keys(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    for key in read_api_keys(server_api_keys_path(config)).values():
        print(f"{key.name}\t{key.role.label}")
    return Outcome.DONE


def cmd_server_revoke_api_key(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    path = server_api_keys_path(config)
    revoke_api_key(path, args.name)
    print(f"revoked the API key of {args.name} in {path}")
    return Outcome.DONE


def cmd_server_set_role(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    path = server_users_path(config)
    set_role(path, args.name, parse_role(args.role, "ROLE"))
    print(f"set the role of {args.name} to {args.role} in {path}")
    return Outcome.DONE

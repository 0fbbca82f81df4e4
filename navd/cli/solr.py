"""`navd solr start|stop|status|fetch|init`: the embedded Solr server and the cores."""

from __future__ import annotations

import argparse

from navd.cli.common import Commands, Outcome, print_json
from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.index.admin import init_solr
from navd.index.clients import client_for
from navd.solr.server import EmbeddedSolr, SolrDistribution, embedded_server, remember_current


def register(commands: Commands) -> None:
    solr = commands.add_parser("solr", help="the embedded Solr server and the cores")
    actions = solr.add_subparsers(dest="solr_command", metavar="ACTION", required=True)
    for name, text in (("start", "start the embedded Solr (idempotent)"),
                       ("stop", "stop the embedded Solr"),
                       ("status", "is the embedded Solr running (exit 3 if not)")):
        sub = actions.add_parser(name, help=text)
        sub.add_argument("--home", metavar="DIR", help="Solr home (data, logs, pid file)")
        sub.add_argument("--port", type=int, metavar="N", help="port on 127.0.0.1")
        if name == "start":
            sub.add_argument("--heap", metavar="SIZE", help="JVM heap, e.g. 512m (default from config)")
            sub.add_argument("--cloud", action="store_true",
                             help="set a new home up as a one-node SolrCloud with an embedded ZooKeeper "
                                  "on 127.0.0.1, port + 1000 (that home then always starts so)")
        if name == "status":
            sub.add_argument("--json", action="store_true", help="print JSON")
        sub.set_defaults(handler={"start": cmd_start, "stop": cmd_stop, "status": cmd_status}[name])
    fetch = actions.add_parser("fetch", help="fetch the Solr jars from Maven Central (idempotent)")
    fetch.set_defaults(handler=cmd_fetch)
    init = actions.add_parser("init", help="create or update the cores/collections and switch soft commits back on "
                                 "after a killed bulk load (idempotent)")
    init.set_defaults(handler=cmd_init)


def cmd_fetch(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    dist = SolrDistribution(config.solr.embedded.version, config.solr.embedded.dist_path)
    root = dist.ensure()
    print(f"Solr {dist.version} ready in {root}")
    return Outcome.DONE


def cmd_start(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    start_embedded(config, home=args.home, port=args.port, heap=args.heap, cloud=args.cloud)
    return Outcome.DONE


def start_embedded(config: NavdConfig, *, home: str | None = None, port: int | None = None,
                   heap: str | None = None, cloud: bool = False, remembered: bool = True) -> None:
    """Start the embedded Solr (idempotent) and say where it runs; with `remembered`, with no
    flags and no `[solr.embedded]` home, the one last started with this configuration."""
    server = _embedded(config, home, port, remembered=remembered)
    if heap:
        server.heap = heap
    if cloud:
        server.cloud = True
    status = server.start()
    remember_current(config, server)
    print(f"running: Solr {status.solr_version} on {status.url} (pid {status.pid}, home {status.home})")


def cmd_stop(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    server = _embedded(config, args.home, args.port)
    stopped = server.stop()
    print(f"stopped Solr (home {server.home})" if stopped else f"not running (home {server.home})")
    return Outcome.DONE


def cmd_status(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    status = _embedded(config, args.home, args.port).status()
    if args.json:
        print_json(status.as_dict())
    elif status.running:
        print(f"running: Solr {status.solr_version or '?'} on {status.url} "
              f"(pid {status.pid}, home {status.home})")
    else:
        print(f"{status.detail} (home {status.home})")
    return Outcome.DONE if status.running else Outcome.NOT_RUNNING


def cmd_init(args: argparse.Namespace, config: NavdConfig) -> Outcome:
    with client_for(config, "admin") as index:
        for result in init_solr(index):
            print(f"{result.core}: {result.action} ({result.detail})")
        # A bulk load that was killed leaves its cores' soft commits off: init puts them back.
        for name in index.restore_soft_commits():
            print(f"{name}: soft commits on again (a bulk load had switched them off)")
    return Outcome.DONE


def _embedded(config: NavdConfig, home: str | None, port: int | None, *, remembered: bool = True) -> EmbeddedSolr:
    if not config.solr.is_embedded:
        raise ConfigError(f"[solr] url is set ({config.solr.url}): navd uses that Solr, not an "
                          "embedded one; `navd solr start/stop/status` manage only the embedded server")
    return embedded_server(config, home=home, port=port, remembered=remembered)

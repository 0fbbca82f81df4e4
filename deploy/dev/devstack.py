"""The local development services under .dev/, and .dev/navd.toml pointing navd at them.

    python deploy/dev/devstack.py up     # start (idempotent) and write .dev/navd.toml
    python deploy/dev/devstack.py down   # stop

For now the stack is Solr; the HDFS, HiveServer2/metastore and YARN services join it here.
Ports default to 8984 (Solr) so the stack does not clash with `navd quickstart` on 8983;
override with DEV_SOLR_PORT.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from navd.config import load_config
from navd.errors import NavdError
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.logs import setup_logging
from navd.solr.server import EmbeddedSolr, SolrDistribution, effective_solr_config

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / ".dev"
CONFIG = DEV / "navd.toml"


def solr_server() -> EmbeddedSolr:
    defaults = load_config(None, environ={}).solr.embedded
    port = int(os.environ.get("DEV_SOLR_PORT", "8984"))
    return EmbeddedSolr(DEV / "solr", port, defaults.heap,
                        SolrDistribution(defaults.version, defaults.dist_path))


def write_config(solr: EmbeddedSolr) -> None:
    CONFIG.write_text(
        "# Written by `make dev-up`: navd pointed at the development services under .dev/.\n"
        "# Use it with: export NAVD_CONFIG=$PWD/.dev/navd.toml\n\n"
        "[cluster]\nname = \"primary\"\n\n"
        "[logging]\nformat = \"auto\"\n\n"
        f"[solr.embedded]\nhome = \"{solr.home}\"\nport = {solr.port}\n"
    )


def up() -> None:
    DEV.mkdir(exist_ok=True)
    solr = solr_server()
    status = solr.start()
    print(f"solr: running {status.solr_version} on {status.url} (home {status.home})")
    write_config(solr)
    config = load_config(str(CONFIG), environ={})
    with SolrIndex(effective_solr_config(config.solr, solr)) as index:
        for result in init_solr(index):
            print(f"solr: {result.core} {result.action}")
    print(f"config: {CONFIG}  (export NAVD_CONFIG={CONFIG})")


def down() -> None:
    solr = solr_server()
    print("solr: stopped" if solr.stop() else "solr: was not running")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["up", "down"])
    args = parser.parse_args()
    setup_logging("console" if sys.stderr.isatty() else "json", "warning")
    try:
        up() if args.action == "up" else down()
    except NavdError as exc:
        print(f"devstack: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

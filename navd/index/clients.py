"""The Solr clients navd opens, by role: the one place that decides who a caller logs in as
and how long it waits for a Solr that does not answer.

| role   | logs in as (embedded Solr) | retries | for                                               |
|--------|----------------------------|---------|---------------------------------------------------|
| reader | navd-reader (query only)   | none    | the reading commands (search, entity, lineage,    |
|        |                            |         | usage, ...) and the HTTP server's reads           |
| admin  | navd-admin                 | none    | interactive writes and admin calls (solr init,    |
|        |                            |         | status, taint, tag), the OpenLineage intake and   |
|        |                            |         | the server's writes                               |
| writer | navd-admin                 | backoff | runs that write the index (extract, link, purge,  |
|        |                            |         | the daemon): they wait for a Solr that restarts   |

No retries: a person or an HTTP client waiting is told at once, in one line, rather than after
the writers' minute and a half of backing off. With `[solr] url` set, every role uses that
Solr's `[solr] auth`.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Literal

from navd.config import NavdConfig
from navd.index.client import SolrIndex
from navd.solr.server import effective_solr_config

Role = Literal["reader", "admin", "writer"]
ROLES: tuple[Role, ...] = ("reader", "admin", "writer")


def client_for(config: NavdConfig, role: Role, *, stop: threading.Event | None = None) -> SolrIndex:
    """A new Solr client for `role` (the table above); `stop` (the daemon's) makes a writer's
    retries give up when navd is stopping. The caller closes it (it is a context manager)."""
    if role not in ROLES:
        raise ValueError(f"Solr client role {role!r}: expected one of {', '.join(ROLES)}")
    solr = effective_solr_config(config, read_only=role == "reader")
    if role != "writer":
        solr = dataclasses.replace(solr, retries=0)
    return SolrIndex(solr, stop=stop)

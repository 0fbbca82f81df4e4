"""The `navd` command line: one module per group of commands, each registering its parser beside
its handlers (`register(commands)`); navd/cli/main.py assembles them and maps how a command
ended to its exit code.

| module        | commands                                             |
|---------------|------------------------------------------------------|
| solr.py       | solr start, stop, status, fetch, init                |
| read.py       | search, entity, lineage, status                      |
| extract.py    | extract, link, purge                                 |
| govern.py     | taint, reprocess, tag                                |
| usage.py      | usage, unused, deps, impact                          |
| export.py     | export openlineage                                   |
| server.py     | run, serve, server add-user, set-role, *-api-key(s), |
|               | status, stop                                         |
| quickstart.py | quickstart                                           |

A handler parses its arguments, calls one service (navd/catalog, navd/lineage, navd/taint, ...)
and prints; common.py holds what they share.
"""

from navd.cli.main import build_parser, main

__all__ = ["build_parser", "main"]

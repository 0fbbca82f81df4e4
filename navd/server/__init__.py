"""navd's HTTP server: navd's own JSON API (navd/server/api.py) on FastAPI, served by uvicorn
(`navd serve`, or a thread of `navd run` with `[server] enabled = true`). The routes only parse,
call the same services as the CLI (navd/catalog, navd/lineage, navd/taint, navd/usage,
navd/sensitivity, navd/status.py) and return their JSON, as the CLI prints it."""

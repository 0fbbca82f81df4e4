"""navd's HTTP server: navd's own JSON API (navd/server/api.py) on FastAPI, served by uvicorn
(`navd serve`, or a thread of `navd run` with `[server] enabled = true`). The routes only parse,
call the read facade (navd/query.py) and return its JSON, as the CLI prints it."""

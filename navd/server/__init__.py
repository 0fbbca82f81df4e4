"""navd's HTTP API: routes that parse a request, call the read facade (navd/query.py) and return
its JSON."""

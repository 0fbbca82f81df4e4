"""Usage: reads and writes per day of a table or column, the tables nobody reads, the jobs a
job depends on, and what a change reaches.

- rules.py: pure: the window of days, counts per day, the figures and their JSON;
- store.py: what the figures read of Solr (executions' DATA_FLOW, column edges, tables);
- service.py: what the CLI (`navd usage/unused/deps/impact`) and the server (/api/usage, ...)
  call, names resolved as `navd entity` resolves them.
"""

"""The catalog: finding elements and reading them as people see them.

- store.py: the catalog's Solr reads (an operation's executions, the relations between elements);
- service.py: search (Lucene syntax, guarded by navd/index/query_syntax.py), one element by
  what people type (navd/index/lookup.py), an operation's executions;
- navigator.py: the same reads in Cloudera Navigator's vocabulary (navd/navigator.py), for
  the Navigator-compatible API.
"""

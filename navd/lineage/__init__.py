"""Lineage: where an entity came from and what depends on it.

- rules.py: the walk (pure: it reads only through a LineageStore, asked in RelationAsks), its
  options, the graph it returns and the graph as text;
- stored.py: the stored elements and relations the walk (and the linker, purge) read;
- store.py: the walk's store on Solr;
- memory_store.py: the same store in memory, built from records (tests, small graphs);
- hub_cache.py: the graphs of hubs kept between the server's queries;
- service.py: what the CLI and the server call: a name resolved, then walked.
"""

"""Sensitivity levels and their propagation downstream along column lineage.

- rules.py: pure: the levels, the propagation (recompute), the explanation, tags from Hive
  table properties;
- store.py: the tag records, the rule's graph reads and the projection's writes on Solr;
- component.py: the `[sensitivity]` section and the pass the daemon runs (a registered component);
- service.py: what the CLI (`navd tag`) and the server (/api/sensitivity) call.
"""

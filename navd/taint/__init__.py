"""Taints and the reprocess plan: mark a dataset or its partitions in a time range as bad, and
list what to redo downstream of it.

- rules.py: pure: a partition's period from its values, periods converted between
  granularities, an element's dataset and partition, the dependency order;
- store.py: the taint records in the runs core, and what the reprocess walk reads of Solr;
- reprocess.py: the walk downstream and the plan it returns;
- service.py: what the CLI (`navd taint`, `navd reprocess`) and the server (/api/taints,
  /api/reprocess) call, names resolved as `navd entity` resolves them.
"""

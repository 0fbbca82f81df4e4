"""OpenLineage intake: events posted to `POST /api/v1/lineage` (Marquez's path) become navd
records in Solr (docs/sources/openlineage.md).

`schema` validates an event against the spec's JSON Schema vendored in `spec/` (its source and
version in spec/SOURCE.md); `mapping` turns it into navd.model records (pure); `intake` writes
them to Solr or, while Solr is down, to the durable spool (`spool`) it drains when Solr is back.
"""

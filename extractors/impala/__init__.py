"""impalad's lineage event log: a push extractor (the query graph is Hive's, see hive_lineage)."""

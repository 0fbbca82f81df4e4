"""HiveServer2's query lineage (the LineageLogger hook's log): a push extractor."""

"""Spark event logs: their file rules and tailer (logfiles, over navd.extractors.common) and their parsing."""

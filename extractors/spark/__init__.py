"""Spark event logs: file discovery and incremental reading (logfiles, codecs) and their parsing."""

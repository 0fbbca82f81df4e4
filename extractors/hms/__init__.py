"""Hive Metastore pull extractor (through HiveServer2 with PyHive): databases, tables, views, columns, partitions."""

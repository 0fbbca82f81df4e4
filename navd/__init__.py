"""navd: a metadata and lineage daemon for Hadoop/Spark platforms, indexed in Solr."""

__version__ = "0.1.0.dev0"

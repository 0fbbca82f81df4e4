"""Solr configsets of navd's cores (data only; located with importlib.resources)."""

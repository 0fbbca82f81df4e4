"""Which extractor is responsible for a dataset a job named (navd/lineage/responsibility.py):
the pure rule, case by case, and the namespaces a loaded config's enabled extractors index."""

from __future__ import annotations

from typing import Any

import pytest

from navd.config import parse_config
from navd.lineage.responsibility import (
    EVERYTHING_EXTRACTED,
    ExtractedNamespaces,
    extracted_namespaces,
    responsible,
)

#: the metastore of `primary`, the file system hdfs://nameservice1 (and its NameNode nn1:8020),
#: the bucket `lake`
CRAWLED = ExtractedNamespaces(hive_clusters=frozenset({"primary"}),
                              file_systems=frozenset({"hdfs://nameservice1", "hdfs://nn1:8020"}),
                              s3_buckets=frozenset({"lake"}))
NOTHING = ExtractedNamespaces()

RULES: list[tuple[str, ExtractedNamespaces, str, str, bool]] = [
    # (case, extracted, source type, qualified name, responsible)
    ("a table of the extracted metastore waits", CRAWLED, "HIVE", "sales.orders@primary", True),
    ("its column waits", CRAWLED, "HIVE", "sales.orders.amount@primary", True),
    ("a table of another cluster is all there is", CRAWLED, "HIVE", "sales.orders@other", False),
    ("a table without a cluster is no extracted one", CRAWLED, "HIVE", "sales.orders", False),
    ("a path of the crawled file system waits", CRAWLED, "HDFS", "hdfs://nameservice1/data/in", True),
    ("its column waits", CRAWLED, "HDFS", "hdfs://nameservice1/data/in#id", True),
    ("a path through a NameNode alias waits", CRAWLED, "HDFS", "hdfs://nn1:8020/data/in", True),
    ("a path of another nameservice is all there is", CRAWLED, "HDFS", "hdfs://other-ns/data/in", False),
    ("a local file is all there is", CRAWLED, "HDFS", "file:///data/in", False),
    ("a cloud store navd does not crawl", CRAWLED, "HDFS", "gs://bucket/data/in", False),
    ("an object of a listed bucket waits", CRAWLED, "S3", "s3a://lake/raw/events", True),
    ("the listed bucket itself waits", CRAWLED, "S3", "s3a://lake/", True),
    ("an object of another bucket is all there is", CRAWLED, "S3", "s3a://other/raw/events", False),
    ("an OpenLineage dataset: no extractor", CRAWLED, "OPENLINEAGE", "postgres://db:5432/shop.public.orders", False),
    ("a Spark catalog's table: no extractor", CRAWLED, "SPARK", "iceberg.sales.orders@primary", False),
    ("nothing enabled: a table of the cluster is all there is", NOTHING, "HIVE", "sales.orders@primary", False),
    ("nothing enabled: a path of the cluster is all there is", NOTHING, "HDFS", "hdfs://nameservice1/data/in", False),
    ("nothing enabled: an object is all there is", NOTHING, "S3", "s3a://lake/raw/events", False),
    ("Navigator's rule: every reference waits", EVERYTHING_EXTRACTED, "HDFS", "file:///data/in", True),
    ("Navigator's rule: another cluster's table waits too", EVERYTHING_EXTRACTED, "HIVE", "sales.orders@other", True),
]


@pytest.mark.parametrize(("extracted", "source_type", "qualified_name", "expected"),
                         [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_responsible(extracted: ExtractedNamespaces, source_type: str, qualified_name: str, expected: bool) -> None:
    assert responsible(extracted, source_type, qualified_name) is expected


CONFIGS: list[tuple[str, dict[str, Any], ExtractedNamespaces]] = [
    ("nothing enabled", {"cluster": {"name": "primary", "default_fs": "hdfs://nameservice1"}}, NOTHING),
    ("set up for `navd extract` (not scheduled by `navd run`) counts",
     {"cluster": {"name": "primary", "default_fs": "hdfs://nameservice1"},
      "hive": {"host": "hs2"}, "hdfs": {"urls": ["http://nn1:9870"]}, "s3": {"roots": ["s3a://lake"]}},
     ExtractedNamespaces(hive_clusters=frozenset({"primary"}), file_systems=frozenset({"hdfs://nameservice1"}),
                         s3_buckets=frozenset({"lake"}))),
    ("no default file system: no path is the HDFS extractor's", {"hdfs": {"urls": ["http://nn1:9870"]}}, NOTHING),
    ("the metastore of the cluster", {"cluster": {"name": "primary"}, "hive": {"enabled": True, "host": "hs2"}},
     ExtractedNamespaces(hive_clusters=frozenset({"primary"}))),
    ("the default file system, as spelled in qualified names, and its NameNode aliases",
     {"cluster": {"default_fs": "hdfs://NameService1"}, "hdfs": {"enabled": True, "urls": ["http://nn1:9870"]},
      "linker": {"fs_aliases": ["NN1:8020=hdfs://nameservice1", "nn9:8020=hdfs://elsewhere"]}},
     ExtractedNamespaces(file_systems=frozenset({"hdfs://nameservice1", "hdfs://nn1:8020"}))),
    ("the buckets of the S3 roots", {"s3": {"enabled": True, "roots": ["s3a://Lake/raw", "s3://archive"]}},
     ExtractedNamespaces(s3_buckets=frozenset({"lake", "archive"}))),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_extracted_namespaces_of_a_config(raw: dict[str, Any], expected: ExtractedNamespaces) -> None:
    assert extracted_namespaces(parse_config(raw)) == expected

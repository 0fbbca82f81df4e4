"""The pure parts of the HDFS extractor: statuses to elements, permissions, path filters, the
WebHDFS client's configuration checks."""

from __future__ import annotations

import importlib.util

import pytest

from navd.extractors.hdfs.settings import HdfsConfig
from navd.errors import ConfigError
from navd.extractors.hdfs.filters import PathFilter
from navd.extractors.hdfs.records import (BadEntry, document_signature, element_for, entry_from_webhdfs, entry_signature,
                                         records_for, symbolic_permissions)
from navd.index.documents import element_document
from navd.model import Element, ElementType, Relation, RelationType
from navd.webhdfs import hdfs_path, make_client

# A FileStatus as Hadoop 3.5.0's WebHDFS returned it for a file in the dev HDFS.
FILE_STATUS = {"accessTime": 1795327009013, "blockSize": 134217728, "childrenNum": 0, "fileId": 16388,
               "group": "supergroup", "length": 3, "modificationTime": 1795327009590, "owner": "root",
               "pathSuffix": "a b ü.csv", "permission": "644", "replication": 1, "storagePolicy": 0, "type": "FILE"}


@pytest.mark.parametrize(("octal", "symbolic"), [("755", "rwxr-xr-x"), ("640", "rw-r-----"), ("0", "---------"),
                                                 ("1777", "rwxrwxrwt"), ("1776", "rwxrwxrwT"), ("700", "rwx------")])
def test_permissions_read_as_ls_shows_them(octal: str, symbolic: str) -> None:
    assert symbolic_permissions(octal) == symbolic


def test_a_file_status_becomes_an_element_and_its_parent_child_relation() -> None:
    entry = entry_from_webhdfs("/data/raw", FILE_STATUS)
    element, relation = records_for(entry, "hdfs://NN:8020", "hdfs##1")
    assert isinstance(element, Element) and isinstance(relation, Relation)
    assert element.qualified_name == "hdfs://nn:8020/data/raw/a b ü.csv"
    assert (element.type, element.name, element.size, element.owner, element.permissions) == \
        (ElementType.FILE, "a b ü.csv", 3, "root", "rw-r--r--")
    assert element.file_system_path == "/data/raw/a b ü.csv" and element.source_id is None
    assert element.last_modified is not None and element.last_modified.isoformat() == "2026-11-22T05:56:49.590000+00:00"
    assert relation.type is RelationType.PARENT_CHILD
    assert relation.endpoint1.qualified_name == "hdfs://nn:8020/data/raw" and relation.endpoint2 == element.ref


def test_the_root_has_no_parent() -> None:
    root = entry_from_webhdfs("/", {**FILE_STATUS, "pathSuffix": "", "type": "DIRECTORY", "length": 0})
    [element] = records_for(root, "hdfs://nn")
    assert element.name == "/" and element.parent is None and element.size is None


def test_a_bad_status_names_the_path_and_the_key() -> None:
    broken = {k: v for k, v in FILE_STATUS.items() if k != "owner"}
    with pytest.raises(BadEntry, match=r"/data/a b ü.csv: FileStatus has no 'owner'"):
        entry_from_webhdfs("/data", broken)
    with pytest.raises(BadEntry, match="permission 'rw' is not octal"):
        entry_from_webhdfs("/data", {**FILE_STATUS, "permission": "rw"})


@pytest.mark.parametrize(("change", "message"), [
    # found by tests/fuzz: JSON's Infinity (Python's json reads it) escaped int() as OverflowError
    ({"accessTime": float("inf")}, "bad FileStatus value: cannot convert float infinity to integer"),
    # ... a time past year 9999 escaped the element's datetime as ValueError
    ({"accessTime": 2**63 - 1}, "FileStatus accessTime 9223372036854775807 is not epoch milliseconds"),
    ({"modificationTime": 10**17}, "FileStatus modificationTime 100000000000000000 is not epoch milliseconds"),
    # ... and a pathSuffix that is no entry name landed on another path (or on a list's repr)
    ({"pathSuffix": ".."}, "pathSuffix '..' is not an entry name"),
    ({"pathSuffix": "a/b"}, "pathSuffix 'a/b' is not an entry name"),
    ({"pathSuffix": ["x"]}, "pathSuffix \"\\['x'\\]\" is not an entry name"),
])
def test_a_file_status_out_of_range_is_bad_input(change: dict[str, object], message: str) -> None:
    with pytest.raises(BadEntry, match=message):
        entry_from_webhdfs("/data", {**FILE_STATUS, **change})


def test_path_filters() -> None:
    only_raw = PathFilter(include=("/data/raw",), exclude=("/data/raw/tmp", "*/_temporary"))
    assert only_raw.included("/data/raw/x.csv") and not only_raw.included("/data/other")
    assert only_raw.worth_descending("/data") and not only_raw.worth_descending("/user")
    assert only_raw.excluded("/data/raw/tmp/y") and not only_raw.excluded("/data/raw/tmpfile")
    assert only_raw.excluded("/data/raw/job/_temporary")
    assert PathFilter().included("/anything") and not PathFilter().excluded("/anything")


def test_webhdfs_config_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"\[hdfs\] urls: no WebHDFS URL"):
        make_client(HdfsConfig())
    with pytest.raises(ConfigError, match="is not a WebHDFS URL"):
        make_client(HdfsConfig(urls=("hdfs://nn:8020",)))
    with pytest.raises(ConfigError, match="not an HDFS path"):
        hdfs_path("s3a://bucket/x")
    assert hdfs_path("hdfs://nn:8020/a/b") == "/a/b" and hdfs_path("/a") == "/a"
    kerberos = HdfsConfig(urls=("https://nn:9871",), auth="kerberos")
    if importlib.util.find_spec("requests_gssapi") is None:
        with pytest.raises(ConfigError, match=r"navd\[kerberos\]"):
            make_client(kerberos)
    else:  # navd's one SPNEGO auth (navd.kerberos), the Solr client's: it names why a login failed
        assert make_client(kerberos)._session.auth.failure == ""
    with pytest.raises(ConfigError, match=r'\[hdfs\] keytab: set only with auth = "kerberos"'):
        HdfsConfig(urls=("https://nn:9871",), keytab="/etc/navd.keytab").validate()


def test_an_entry_signature_matches_the_signature_of_its_own_document() -> None:
    """Incremental runs skip entries whose indexed document has the same signature: the two
    functions must agree for every kind of entry, or nothing (or everything) would be skipped."""
    for status in (FILE_STATUS, {**FILE_STATUS, "type": "DIRECTORY", "length": 0, "permission": "1777"},
                   {**FILE_STATUS, "modificationTime": 0, "accessTime": 0}):
        entry = entry_from_webhdfs("/data", status)
        document = element_document(element_for(entry, "hdfs://nn"))
        assert entry_signature(entry) == document_signature(document)
    changed = entry_from_webhdfs("/data", {**FILE_STATUS, "length": 4})
    assert entry_signature(changed) != document_signature(element_document(element_for(
        entry_from_webhdfs("/data", FILE_STATUS), "hdfs://nn")))

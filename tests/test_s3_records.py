"""S3 names and records, pure: the three spellings of one object are one element, the linker
finds it from what other sources wrote, and listing entries become the elements and relations
the extractor writes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from navd import navigator
from navd.extractors.s3.records import BadKey, bucket_records, object_records, parse_object
from navd.index.documents import element_document
from navd.linker.aliases import AliasRules, candidates, endpoint_spellings
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.names import (InvalidName, directory_ref, path_qualified_name, path_ref, s3_qualified_name, split_s3_name)

RULES = AliasRules(cluster="primary", default_fs="hdfs://nameservice1")


@pytest.mark.parametrize("spelling", ["s3://lake/a/b", "s3a://lake/a/b", "s3n://lake/a/b", "S3A://Lake/a//b/",
                                      "s3N://LAKE/a/./b"])
def test_every_spelling_of_an_object_is_one_s3_element(spelling: str) -> None:
    assert path_qualified_name(spelling) == "s3a://lake/a/b"
    ref = path_ref(spelling, "", ElementType.DIRECTORY)
    assert (ref.source_type, ref.identity) == (SourceType.S3, EntityRef(SourceType.S3, "s3a://lake/a/b",
                                                                        ElementType.FILE).identity)


def test_a_hive_location_on_s3_is_the_s3_directory() -> None:
    assert directory_ref("s3://lake/warehouse/t", "hdfs://nameservice1") == EntityRef(
        SourceType.S3, "s3a://lake/warehouse/t", ElementType.DIRECTORY)
    assert directory_ref("/warehouse/t", "hdfs://nameservice1").source_type is SourceType.HDFS


@pytest.mark.parametrize(("bucket", "key", "name"), [
    ("lake", "", "s3a://lake/"), ("lake", "a/b", "s3a://lake/a/b"), ("lake", "a/b/", "s3a://lake/a/b"),
    ("lake", "dir with space/ü%+#?.txt", "s3a://lake/dir with space/ü%+#?.txt"),
])
def test_s3_names_read_back(bucket: str, key: str, name: str) -> None:
    assert s3_qualified_name(bucket, key) == name
    assert split_s3_name(name) == (bucket, key.removesuffix("/"))
    assert path_qualified_name(name) == name  # already the one spelling


@pytest.mark.parametrize("key", ["a//b", "a/./b", "a/../b", "/a"])
def test_a_key_no_path_can_spell_is_refused(key: str) -> None:
    with pytest.raises(InvalidName, match="segment"):
        s3_qualified_name("lake", key)
    with pytest.raises(BadKey, match="segment"):
        parse_object("lake", {"Key": key, "Size": 1})


def test_the_linker_finds_the_s3_element_from_what_was_written_as_an_hdfs_path() -> None:
    # before S3 elements, Spark and the metastore named S3 paths as HDFS elements, in any scheme
    found = candidates("s3://lake/a/b", SourceType.HDFS, ElementType.DIRECTORY, RULES)
    assert found[0] == (SourceType.S3, "s3a://lake/a/b") and (SourceType.HDFS, "s3://lake/a/b") in found
    field = candidates("s3n://lake/a/b#col", SourceType.HDFS, ElementType.FIELD, RULES)
    assert field[0] == (SourceType.S3, "s3a://lake/a/b#col")
    # and from the S3 element, the relations naming it the old ways are found
    spellings = endpoint_spellings("s3a://lake/a/b", SourceType.S3, ElementType.DIRECTORY, RULES)
    for old in ("s3://lake/a/b", "s3a://lake/a/b", "s3n://lake/a/b", "s3://lake/a/b/"):
        assert (SourceType.HDFS, old) in spellings
    assert (SourceType.S3, "s3a://lake/a/b") in spellings
    assert (SourceType.HDFS, "s3a://lake/a/b#col") in endpoint_spellings("s3a://lake/a/b#col", SourceType.S3,
                                                                          ElementType.FIELD, RULES)


def test_an_object_becomes_a_file_under_its_directory() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    obj = parse_object("lake", {"Key": "t/dt=1/part 0.parquet", "Size": 42, "ETag": '"abc"', "LastModified": when,
                                "StorageClass": "STANDARD_IA", "Owner": {"DisplayName": "alice", "ID": "1"}})
    element, relation = object_records(obj, "s3##run")
    assert isinstance(element, Element) and isinstance(relation, Relation)
    assert (element.source_type, element.type, element.qualified_name, element.name) == (
        SourceType.S3, ElementType.FILE, "s3a://lake/t/dt=1/part 0.parquet", "part 0.parquet")
    assert (element.size, element.last_modified, element.owner, element.file_system_path) == (
        42, when, "alice", "/lake/t/dt=1/part 0.parquet")
    assert dict(element.properties) == {"bucketName": "lake", "eTag": "abc", "storageClass": "STANDARD_IA"}
    assert relation.type is RelationType.PARENT_CHILD and relation.endpoint1 == EntityRef(
        SourceType.S3, "s3a://lake/t/dt=1", ElementType.DIRECTORY)
    top = parse_object("lake", {"Key": "readme", "Size": 0})
    assert object_records(top)[1].endpoint1 == EntityRef(SourceType.S3, "s3a://lake/", ElementType.S3BUCKET)


def test_a_marker_is_its_directory() -> None:
    marker = parse_object("lake", {"Key": "t/empty/", "Size": 0, "Owner": {"ID": "owner-id"}})
    element, relation = object_records(marker)
    assert isinstance(element, Element) and isinstance(relation, Relation)
    assert (element.type, element.qualified_name, element.owner, element.size) == (
        ElementType.DIRECTORY, "s3a://lake/t/empty", "owner-id", None)
    assert relation.endpoint1.qualified_name == "s3a://lake/t" and element.properties["implicit"] == "false"


def test_a_changed_object_has_another_signature() -> None:
    base = {"Key": "k", "Size": 1, "ETag": '"e"', "StorageClass": "STANDARD"}
    assert parse_object("lake", base).signature == parse_object("lake", dict(base)).signature
    for change in ({"Size": 2}, {"ETag": '"f"'}, {"StorageClass": "GLACIER"},
                   {"LastModified": datetime(2026, 1, 1, tzinfo=UTC)}):
        assert parse_object("lake", {**base, **change}).signature != parse_object("lake", base).signature


def test_navigators_api_shows_s3_entities_with_their_s3_fields() -> None:
    marker = object_records(parse_object("lake", {"Key": "t/", "Size": 0}))[0]
    file = object_records(parse_object("lake", {"Key": "t/a.csv", "Size": 3, "ETag": '"x"'}))[0]
    assert isinstance(marker, Element) and isinstance(file, Element)
    shown = navigator.entity(element_document(file))
    assert (shown["sourceType"], shown["type"], shown["bucketName"], shown["eTag"], shown["parentPath"]) == (
        "S3", "FILE", "lake", "x", "/lake/t")
    assert navigator.entity(element_document(marker))["implicit"] is False
    bucket = navigator.entity(element_document(bucket_records("lake")[0]))  # type: ignore[arg-type]
    assert (bucket["type"], bucket["fileSystemPath"], bucket["bucketName"]) == ("S3BUCKET", "/lake", "lake")
    # Hue's bare type names and a lower-case source type find them
    assert navigator.translate_query("S3BUCKET AND sourceType:s3") == "(S3BUCKET OR type:S3BUCKET) AND sourceType:S3"

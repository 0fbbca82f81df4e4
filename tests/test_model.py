"""Model: qualified names, the identity function, records."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from navd.model import (
    Element,
    ElementType,
    EntityRef,
    InvalidName,
    Relation,
    RelationType,
    SourceType,
    hive_qualified_name,
    identity,
    partition_qualified_name,
    path_qualified_name,
)


def test_identity_is_deterministic_md5_of_source_type_and_name() -> None:
    first = identity(SourceType.HIVE, "sales.orders@primary")
    assert first == identity("HIVE", "sales.orders@primary")
    assert len(first) == 32 and int(first, 16) >= 0
    assert first != identity(SourceType.SPARK, "sales.orders@primary")
    assert first != identity(SourceType.HIVE, "sales.order@primary")


@pytest.mark.parametrize(("parts", "expected"), [
    (("Sales",), "sales@primary"),
    (("Sales", "Orders"), "sales.orders@primary"),
    (("`sales`", " ORDERS ", "Amount"), "sales.orders.amount@primary"),
    (("db", "t", "col with space"), "db.t.col with space@primary"),
    (("données", "Tabelle"), "données.tabelle@primary"),
])
def test_hive_names_follow_atlas(parts: tuple[str, ...], expected: str) -> None:
    assert hive_qualified_name("Primary", *parts) == expected


def test_hive_name_rejects_empty_parts_and_orphan_columns() -> None:
    with pytest.raises(InvalidName, match="empty Hive table name"):
        hive_qualified_name("primary", "db", "``")
    with pytest.raises(InvalidName, match="without a table"):
        hive_qualified_name("primary", "db", None, "c")


def test_partition_name() -> None:
    assert (partition_qualified_name("primary", "Sales", "Orders", {"DT": "2026-11-01", "country": "FR"})
            == "sales.orders@primary/dt=2026-11-01/country=FR")


@pytest.mark.parametrize(("path", "expected"), [
    ("hdfs://NN1:8020/data//raw/", "hdfs://nn1:8020/data/raw"),
    ("hdfs://nameservice1/a/./b/../c", "hdfs://nameservice1/a/c"),
    ("HDFS://nameservice1/Data/File.CSV", "hdfs://nameservice1/Data/File.CSV"),
    ("file:/tmp/x", "file:///tmp/x"),
    ("file:///tmp/x/", "file:///tmp/x"),
    ("file:///", "file:///"),
    ("hdfs://ns/", "hdfs://ns/"),
    ("s3a://Bucket/key with space/ü%#:x", "s3a://bucket/key with space/ü%#:x"),
    ("/data/raw", "hdfs://ns1/data/raw"),
    # on either side of the shortcut that skips normpath for a path with nothing to normalise
    ("hdfs://ns/a/b.", "hdfs://ns/a/b."),
    ("hdfs://ns/a/.b/c..", "hdfs://ns/a/.b/c.."),
    ("hdfs://ns/a/.", "hdfs://ns/a"),
    ("hdfs://ns/a/..", "hdfs://ns/"),
    ("hdfs://ns/a/../..", "hdfs://ns/"),
    ("hdfs://ns//a", "hdfs://ns/a"),
    ("hdfs://ns", "hdfs://ns/"),
    # the cached authority: user info keeps its case, the host does not, a default port stays
    ("hdfs://User@NN1:8020/x", "hdfs://User@nn1:8020/x"),
    ("hdfs://user@nn1:8020/x", "hdfs://user@nn1:8020/x"),
    ("webhdfs://[::1]:9870/x", "webhdfs://[::1]:9870/x"),
])
def test_paths_have_one_spelling(path: str, expected: str) -> None:
    assert path_qualified_name(path, default_fs="hdfs://ns1/") == expected


def test_relative_or_unqualified_paths_are_rejected() -> None:
    with pytest.raises(InvalidName, match="no default file system"):
        path_qualified_name("/data")
    with pytest.raises(InvalidName, match="neither absolute nor a URI"):
        path_qualified_name("data/raw")


def test_element_is_frozen_and_validated() -> None:
    element = Element(SourceType.HDFS, ElementType.FILE, "hdfs://ns/a", name="a",
                      properties={"k": "v"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        element.name = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        element.properties["k"] = "w"  # type: ignore[index]
    with pytest.raises(ValueError, match="needs a delete_time"):
        Element(SourceType.HDFS, ElementType.FILE, "hdfs://ns/a", name="a", deleted=True)
    with pytest.raises(ValueError):
        Element("NOPE", ElementType.FILE, "hdfs://ns/a", name="a")  # type: ignore[arg-type]
    assert element.identity == identity(SourceType.HDFS, "hdfs://ns/a")


def test_relation_identity_and_unlinked() -> None:
    table = EntityRef(SourceType.HIVE, "sales.orders@primary", ElementType.TABLE)
    directory = EntityRef(SourceType.HDFS, "hdfs://ns/warehouse/sales.db/orders", ElementType.DIRECTORY)
    linked = Relation(RelationType.LOGICAL_PHYSICAL, table, directory)
    unlinked = Relation(RelationType.LOGICAL_PHYSICAL, table, directory, linked2=False)
    assert linked.identity == unlinked.identity  # linking flips a flag, never forks the document
    assert not linked.unlinked and unlinked.unlinked
    assert linked.roles == ("logical", "physical")
    other_execution = Relation(RelationType.LOGICAL_PHYSICAL, table, directory, discriminator="x")
    assert other_execution.identity != linked.identity
    reversed_ = Relation(RelationType.LOGICAL_PHYSICAL, directory, table)
    assert reversed_.identity != linked.identity


def test_datetimes_must_be_aware_when_serialised() -> None:
    from navd.index.documents import solr_date

    assert solr_date(datetime(2026, 11, 1, 6, 0, 0, 123456, tzinfo=UTC)) == "2026-11-01T06:00:00.123Z"
    with pytest.raises(ValueError, match="naive datetime"):
        solr_date(datetime(2026, 11, 1))


def test_solr_date_is_the_same_from_utc_and_other_zones() -> None:
    """UTC times take a direct formatting path, other zones are converted: both give ISO-8601
    with milliseconds truncated (as isoformat does) and a Z, years padded to four digits."""
    from datetime import timedelta, timezone

    from navd.index.documents import solr_date

    for moment in (datetime(2026, 11, 1, 6, 0, 0, 999999, tzinfo=UTC), datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                   datetime(987, 6, 5, 4, 3, 2, 1000, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)):
        expected = moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"
        assert solr_date(moment) == expected
        if moment.year < 9999:
            assert solr_date(moment.astimezone(timezone(timedelta(hours=5, minutes=30)))) == expected
    assert solr_date(datetime(2026, 11, 1, 6, 0, 0, 999999, tzinfo=UTC)) == "2026-11-01T06:00:00.999Z"
    assert solr_date(datetime(987, 6, 5, tzinfo=UTC)) == "0987-06-05T00:00:00.000Z"

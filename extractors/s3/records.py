"""S3 listing entries -> navd elements and relations. Pure: what ListObjectsV2 returned in, records out.

- a bucket is an S3BUCKET `s3a://bucket/`;
- a prefix ending at a '/' (S3's "common prefix", a directory to Hadoop's S3A connector and to
  every engine) is a DIRECTORY `s3a://bucket/a/b`, whether or not a marker object `a/b/` exists;
- an object is a FILE `s3a://bucket/a/b/key` with its size, ETag, last-modified time, storage
  class and owner (when the store says);
- PARENT_CHILD from each one's directory (or bucket) to it.

Names are `names.s3_qualified_name`: the key as S3 lists it (decoded), so the name a Spark or
Hive job spelled `s3a://bucket/dir with space/x%y+z ü` is the element listed. A key no path can
spell (an empty, `.` or `..` segment: `a//b`, `a/./b`) raises BadKey: Hadoop's S3A connector
cannot address such an object either.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from navd.model import Element, ElementType, EntityRef, Record, Relation, RelationType, SourceType
from navd.names import InvalidName, is_utf8, s3_qualified_name, shown


class BadKey(ValueError):
    """A listed key that cannot become an element (names the bucket and the key)."""


@dataclasses.dataclass(frozen=True, slots=True)
class S3Object:
    """One item of a listing's `Contents`."""

    bucket: str
    key: str
    size: int
    etag: str
    modified: datetime | None
    storage_class: str
    owner: str
    #: `s3a://bucket/key` (for a marker, its directory's name)
    qualified_name: str = ""

    @property
    def is_marker(self) -> bool:
        """A directory marker (`a/b/`, what S3A's mkdirs and consoles' "create folder" write)."""
        return self.key.endswith("/")

    @property
    def signature(self) -> str:
        """What a listing can change about the object: equal signatures mean nothing to write."""
        modified = self.modified.isoformat() if self.modified else ""
        return f"{self.etag}\x1f{self.size}\x1f{modified}\x1f{self.storage_class}\x1f{self.owner}"


def parse_object(bucket: str, raw: Mapping[str, Any]) -> S3Object:
    """An item of ListObjectsV2's `Contents` (botocore's parsed form); BadKey names what is wrong."""
    key = raw.get("Key")
    if not isinstance(key, str) or not key:
        raise BadKey(f"bucket {bucket}: a listed object without a key: {str(raw)[:100]!r}")
    if not is_utf8(key):
        raise BadKey(f"bucket {bucket}: key {shown(key)} is not valid UTF-8 text")
    try:
        qualified_name = s3_qualified_name(bucket, key)
    except InvalidName as exc:
        raise BadKey(str(exc)) from None
    size = raw.get("Size", 0)
    if not isinstance(size, int) or size < 0:
        raise BadKey(f"bucket {bucket}: key {shown(key)}: Size {size!r} is not a byte count")
    modified = raw.get("LastModified")
    owner = raw.get("Owner") or {}
    return S3Object(bucket=bucket, key=key, size=size, etag=str(raw.get("ETag") or "").strip('"'),
                    modified=modified if isinstance(modified, datetime) else None,
                    storage_class=str(raw.get("StorageClass") or ""),
                    owner=str(owner.get("DisplayName") or owner.get("ID") or "") if isinstance(owner, Mapping) else "",
                    qualified_name=qualified_name)


def file_system_path(bucket: str, key: str = "") -> str:
    """`/bucket/key`: the element's path as Navigator shows an S3 entity's (its parentPath is the
    directory's)."""
    return f"/{bucket}/{key.removesuffix('/')}".removesuffix("/") or "/"


def bucket_ref(bucket: str) -> EntityRef:
    return EntityRef(SourceType.S3, s3_qualified_name(bucket), ElementType.S3BUCKET)


# Bounded: the objects of a listing come directory by directory, each naming its parent.
@functools.lru_cache(maxsize=4096)
def directory_ref(bucket: str, prefix: str) -> EntityRef:
    """The DIRECTORY of a prefix (`a/b/` or `a/b`), or the bucket for the empty prefix."""
    if not prefix.strip("/"):
        return bucket_ref(bucket)
    return EntityRef(SourceType.S3, s3_qualified_name(bucket, prefix), ElementType.DIRECTORY)


def parent_prefix(key: str) -> str:
    """The prefix of a key's directory: `a/b/k` -> `a/b/`, `a/b/` (a marker) -> `a/`, `k` -> ""."""
    head = key.removesuffix("/").rpartition("/")[0]
    return f"{head}/" if head else ""


def _name(key: str) -> str:
    return key.removesuffix("/").rpartition("/")[2]


def _with_parent(element: Element, parent: EntityRef, extractor_run_id: str | None) -> list[Record]:
    return [element, Relation(RelationType.PARENT_CHILD, parent, element.ref, extractor_run_id=extractor_run_id)]


def bucket_records(bucket: str, extractor_run_id: str | None = None) -> list[Record]:
    ref = bucket_ref(bucket)
    return [Element(SourceType.S3, ElementType.S3BUCKET, ref.qualified_name, name=bucket,
                    file_system_path=file_system_path(bucket), extractor_run_id=extractor_run_id,
                    properties={"bucketName": bucket})]


def directory_records(bucket: str, prefix: str, extractor_run_id: str | None = None,
                      marker: S3Object | None = None) -> list[Record]:
    """The DIRECTORY of `prefix` (`a/b/`) and its PARENT_CHILD from its parent; `marker`, its
    marker object if one was listed, gives it a time and an owner."""
    ref, parent = directory_ref(bucket, prefix), directory_ref(bucket, parent_prefix(prefix))
    element = Element(SourceType.S3, ElementType.DIRECTORY, ref.qualified_name, name=_name(prefix),
                      parent=parent,
                      file_system_path=file_system_path(bucket, prefix),
                      last_modified=marker.modified if marker else None,
                      owner=(marker.owner or None) if marker else None, extractor_run_id=extractor_run_id,
                      # implied by the keys below it (Navigator's `implicit`), or a marker object
                      properties={"bucketName": bucket, "implicit": "false" if marker else "true"})
    return _with_parent(element, parent, extractor_run_id)


def object_records(obj: S3Object, extractor_run_id: str | None = None) -> list[Record]:
    """The FILE of an object and its PARENT_CHILD from its directory (a marker: its DIRECTORY)."""
    if obj.is_marker:
        return directory_records(obj.bucket, obj.key, extractor_run_id, marker=obj)
    parent = directory_ref(obj.bucket, parent_prefix(obj.key))
    props = {"bucketName": obj.bucket, "eTag": obj.etag}
    if obj.storage_class:
        props["storageClass"] = obj.storage_class
    element = Element(SourceType.S3, ElementType.FILE, obj.qualified_name or s3_qualified_name(obj.bucket, obj.key),
                      name=_name(obj.key),
                      parent=parent, file_system_path=file_system_path(obj.bucket, obj.key), size=obj.size,
                      last_modified=obj.modified, owner=obj.owner or None, extractor_run_id=extractor_run_id,
                      properties=props)
    return _with_parent(element, parent, extractor_run_id)

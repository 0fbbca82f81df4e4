"""HDFS file statuses -> navd elements and relations (pure: no I/O).

One `HdfsEntry` per file or directory, from a WebHDFS FileStatus or a row of an fsimage dump
(`hdfs oiv -p Delimited`); both paths of the HDFS extractor make their documents here, so the
same tree gives the same documents whichever way it was read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from navd.index.documents import element_field, solr_date
from navd.model import Element, ElementType, EntityRef, Record, Relation, RelationType, SourceType
from navd.names import child_path, directory_ref, is_utf8, parent_path, path_qualified_name, shown

_TYPES = {"FILE": ElementType.FILE, "DIRECTORY": ElementType.DIRECTORY}
_RWX = "rwxrwxrwx"


class BadEntry(ValueError):
    """A status record that cannot become an element (names the path and the field)."""


@dataclasses.dataclass(frozen=True, slots=True)
class HdfsEntry:
    path: str                 # absolute, decoded, no trailing slash ("/" for the root)
    is_dir: bool
    owner: str
    group: str
    permissions: str          # symbolic, as `hdfs dfs -ls` shows it without the type: rwxr-x--t
    size: int
    replication: int
    block_size: int
    modified_ms: int
    accessed_ms: int
    # The inode id. Not stored on the element: the fsimage dump has no such column, and both
    # paths must write the same documents (Solr replaces whole documents).
    file_id: int | None = None
    symlink: bool = False

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] or "/"

    @property
    def parent_path(self) -> str | None:
        return parent_path(self.path)


def symbolic_permissions(octal: str) -> str:
    """'755' -> 'rwxr-xr-x'; '1777' -> 'rwxrwxrwt' (sticky bit as `ls` shows it)."""
    try:
        value = int(octal, 8)
    except ValueError:
        raise BadEntry(f"permission {octal!r} is not octal") from None
    chars = [c if value & (1 << (8 - i)) else "-" for i, c in enumerate(_RWX)]
    if value & 0o1000:
        chars[8] = "t" if chars[8] == "x" else "T"
    return "".join(chars)


def entry_from_webhdfs(directory: str, status: Mapping[str, Any]) -> HdfsEntry:
    """An entry of `directory`'s LISTSTATUS(_BATCH), or a GETFILESTATUS of `directory` itself
    (empty pathSuffix)."""
    suffix = status.get("pathSuffix", "")
    if not isinstance(suffix, str) or "/" in suffix or suffix in (".", ".."):
        # a NameNode names one entry of the directory: anything else would land on another path
        raise BadEntry(f"{directory}: FileStatus pathSuffix {shown(str(suffix), 80)} is not an entry name")
    path = child_path(directory, suffix) if suffix else (directory.rstrip("/") or "/")
    try:
        kind = status["type"]
        entry = HdfsEntry(path=path, is_dir=kind == "DIRECTORY", owner=str(status["owner"]),
                         group=str(status["group"]), permissions=symbolic_permissions(str(status["permission"])),
                         size=int(status["length"]), replication=int(status.get("replication", 0)),
                         block_size=int(status.get("blockSize", 0)), modified_ms=int(status["modificationTime"]),
                         accessed_ms=int(status.get("accessTime", 0)),
                         file_id=int(status["fileId"]) if "fileId" in status else None, symlink=kind == "SYMLINK")
    except KeyError as exc:
        raise BadEntry(f"{path}: FileStatus has no {exc.args[0]!r}") from None
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: int() of an Infinity
        raise BadEntry(f"{path}: bad FileStatus value: {exc}") from None
    for key, text in (("pathSuffix", suffix), ("owner", entry.owner), ("group", entry.group)):
        if not is_utf8(text):  # JSON's "\ud800": no document can carry it
            raise BadEntry(f"{shown(directory)}: FileStatus {key} {shown(text, 80)} is not valid UTF-8 text")
    for key, ms in (("modificationTime", entry.modified_ms), ("accessTime", entry.accessed_ms)):
        if ms > _MAX_MS:
            raise BadEntry(f"{path}: FileStatus {key} {ms} is not epoch milliseconds")
    return entry


#: the last millisecond a datetime holds (year 9999): beyond it no time can be stored
_MAX_MS = int((datetime.max.replace(tzinfo=UTC) - datetime.fromtimestamp(0, UTC)).total_seconds()) * 1000


def _time(ms: int) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, UTC) if ms > 0 else None


def element_for(entry: HdfsEntry, default_fs: str, extractor_run_id: str | None = None,
                parent: EntityRef | None = None) -> Element:
    """`parent`, when given, must be the ref of the entry's directory (a listing passes the same
    one for every entry: normalising its path once per directory instead of once per entry)."""
    if parent is not None:
        # A name holds no '/', and the parent's name is normalised already.
        qualified_name = child_path(parent.qualified_name, entry.name)
    else:
        qualified_name = path_qualified_name(entry.path, default_fs)
        parent_path = entry.parent_path
        parent = directory_ref(parent_path, default_fs) if parent_path is not None else None
    return Element(
        SourceType.HDFS, ElementType.DIRECTORY if entry.is_dir else ElementType.FILE,
        qualified_name, name=entry.name, parent=parent,
        file_system_path=entry.path, owner=entry.owner, group=entry.group, permissions=entry.permissions,
        size=None if entry.is_dir else entry.size,
        block_size=None if entry.is_dir else entry.block_size,
        replication=None if entry.is_dir else entry.replication,
        last_modified=_time(entry.modified_ms), last_accessed=_time(entry.accessed_ms),
        extractor_run_id=extractor_run_id,
        properties={"symlink": "true"} if entry.symlink else {},
    )


#: The fields of an HDFS element that a listing can change; equal signatures mean nothing to write.
SIGNATURE_FIELDS = ",".join(map(element_field, ("type", "size", "last_modified", "owner", "group", "permissions",
                                                "replication", "block_size")))
Signature = tuple[Any, ...]


def entry_signature(entry: HdfsEntry) -> Signature:
    """What an unchanged entry's indexed document holds (access times left out: reading a file
    moves them, and they alone are not worth rewriting a document for)."""
    modified = _time(entry.modified_ms)
    return ("DIRECTORY" if entry.is_dir else "FILE", None if entry.is_dir else entry.size,
            solr_date(modified) if modified else None, entry.owner, entry.group, entry.permissions,
            None if entry.is_dir else entry.replication, None if entry.is_dir else entry.block_size)


def document_signature(doc: Mapping[str, Any]) -> Signature:
    return tuple(doc.get(field) for field in SIGNATURE_FIELDS.split(","))


def records_for(entry: HdfsEntry, default_fs: str, extractor_run_id: str | None = None,
                parent: EntityRef | None = None) -> list[Record]:
    """The element of `entry` and, below the root, the PARENT_CHILD relation from its directory."""
    element = element_for(entry, default_fs, extractor_run_id, parent)
    if element.parent is None:
        return [element]
    return [element, Relation(RelationType.PARENT_CHILD, element.parent, element.ref,
                              extractor_run_id=extractor_run_id)]

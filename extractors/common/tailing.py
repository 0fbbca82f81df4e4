"""The file system seam of log tailing: local files, HDFS through WebHDFS, or both by URI.

A tailer needs four calls (list a directory, stat, read a range, join a name); `FileSystem` is
that seam, with no knowledge of any log's naming rules. `RoutingFileSystem` sends local paths
to one implementation and `<scheme>://` URIs to the one registered for the scheme.

WebHDFS (`WebHdfsFileSystem`): paths stay full `hdfs://` URIs so cursor keys name the cluster.
HDFS specifics handled here:

- A file being written has a listed length that lags its readable bytes (the NameNode counts
  only complete blocks and explicit length updates), and WebHDFS refuses an OPEN at an offset
  at or past the listed length ("Offset=... out of the range [0, N)"), though a read from
  before it streams on to the writer's last hflushed byte. So a read past the listed length
  opens at N-1 and drops the bytes before the wanted offset: it re-reads at most the part of
  the current block written since the NameNode last heard of it.
- WebHDFS failures become the OSErrors a tailer handles: FileNotFoundError for a vanished
  file or directory (a log cleaner), PermissionError, else OSError.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pwd
import re
import stat
from collections.abc import Iterable, Mapping
from typing import Protocol

import requests
from hdfs import Client, HdfsError

from navd.errors import ConfigError
from navd.webhdfs import hdfs_path, list_status_batch, status_or_none


@dataclasses.dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    name: str
    is_dir: bool
    size: int
    mtime_ns: int
    #: what survives a rename: the inode locally, the file id on HDFS
    file_id: str
    #: who owns the file: the user name (locally the uid's name, or the uid when it has none)
    owner: str = ""


class FileSystem(Protocol):
    """The four calls a tailer needs: LocalFileSystem, WebHdfsFileSystem.

    `sizes_lag_while_writing`: the size a listing reports for a file still being written may be
    behind what can be read (HDFS: the NameNode learns a block's length only when the block is
    complete, while readers already see the writer's hflushed bytes). The reader then reads an
    unfinished log until `read` returns nothing instead of stopping at the listed size.
    """

    sizes_lag_while_writing: bool

    def list_dir(self, path: str) -> list[FileStatus]:
        """Entries of a directory; raises FileNotFoundError when it is gone."""
        ...

    def stat(self, path: str) -> FileStatus | None:
        """None when the path does not exist."""
        ...

    def read(self, path: str, offset: int, length: int) -> bytes:
        """Up to `length` bytes from `offset`; raises FileNotFoundError when it is gone."""
        ...

    def join(self, directory: str, name: str) -> str:
        ...


class LocalFileSystem:
    sizes_lag_while_writing = False

    def list_dir(self, path: str) -> list[FileStatus]:
        out = []
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    st = entry.stat()
                except FileNotFoundError:  # removed between listing and stat
                    continue
                out.append(_status(entry.path, entry.name, st))
        return out

    def stat(self, path: str) -> FileStatus | None:
        try:
            return _status(path, os.path.basename(path), os.stat(path))
        except FileNotFoundError:
            return None

    def read(self, path: str, offset: int, length: int) -> bytes:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read(length)

    def join(self, directory: str, name: str) -> str:
        return os.path.join(directory, name)


def _status(path: str, name: str, st: os.stat_result) -> FileStatus:
    # The inode alone: cursors are keyed by path already, and st_dev of network and overlay
    # file systems can change across reboots, which would make every log look replaced.
    return FileStatus(path, name, stat.S_ISDIR(st.st_mode), st.st_size, st.st_mtime_ns,
                      str(st.st_ino), user_name(st.st_uid))


@functools.lru_cache(maxsize=256)
def user_name(uid: int) -> str:
    """The name of local user `uid`, or the number when the passwd database has no such user
    (a container, a deleted account): an owner is always named."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


class RoutingFileSystem:
    """Local paths to one file system, `<scheme>://` URIs to the one registered for the scheme."""

    def __init__(self, local: FileSystem, by_scheme: Mapping[str, FileSystem]) -> None:
        self.local = local
        self.by_scheme = dict(by_scheme)
        self.sizes_lag_while_writing = any(fs.sizes_lag_while_writing for fs in self.by_scheme.values())

    def lags(self, path: str) -> bool:
        return self._fs(path).sizes_lag_while_writing

    def _fs(self, path: str) -> FileSystem:
        scheme, sep, _ = path.partition("://")
        if not sep:
            return self.local
        try:
            return self.by_scheme[scheme]
        except KeyError:
            raise OSError(f"no file system for {scheme}:// URIs is configured") from None

    def list_dir(self, path: str) -> list[FileStatus]:
        return self._fs(path).list_dir(path)

    def stat(self, path: str) -> FileStatus | None:
        return self._fs(path).stat(path)

    def read(self, path: str, offset: int, length: int) -> bytes:
        return self._fs(path).read(path, offset, length)

    def join(self, directory: str, name: str) -> str:
        return self._fs(directory).join(directory, name)


#: the URI schemes WebHDFS serves: a tailed directory with one of them is read through it
HDFS_SCHEMES = ("hdfs", "webhdfs", "swebhdfs", "viewfs")


def remote_directories(directories: Iterable[str]) -> list[str]:
    """The directories that are not local (`<scheme>://`, `file://` excepted)."""
    return [d for d in directories if "://" in d and not d.startswith("file://")]


def tailing_file_system(directories: Iterable[str], hdfs_client: Client | None, *,
                        key: str) -> tuple[RoutingFileSystem, list[str]]:
    """The file system to tail `directories` with (local files, HDFS through `hdfs_client`) and
    the directories as the tailer names them (`file://` dropped: cursor keys stay plain paths).

    Raises ConfigError naming `key` (the config key listing the directories) for an HDFS
    directory without a WebHDFS client, or a scheme navd cannot read."""
    directories = list(directories)
    remote = remote_directories(directories)
    if remote and hdfs_client is None:
        raise ConfigError(f"{key}: {remote[0]} is on HDFS, which navd reads through "
                          f"WebHDFS: set [hdfs] urls to the NameNode's http(s)://host:port")
    for directory in remote:
        hdfs_path(directory)  # a ConfigError for schemes other than HDFS's
    by_scheme: dict[str, FileSystem] = {}
    if hdfs_client is not None:
        webhdfs = WebHdfsFileSystem(hdfs_client)
        by_scheme = {scheme: webhdfs for scheme in HDFS_SCHEMES}
    return RoutingFileSystem(LocalFileSystem(), by_scheme), [d.removeprefix("file://") for d in directories]


def size_lags(fs: FileSystem, path: str) -> bool:
    """Whether a listed size of `path` may be behind its readable bytes while it is written."""
    if isinstance(fs, RoutingFileSystem):
        return fs.lags(path)
    return fs.sizes_lag_while_writing


# --- WebHDFS ----------------------------------------------------------------------------------

_OUT_OF_RANGE = re.compile(r"Offset=\d+ out of the range \[0, (\d+)\)")


class WebHdfsFileSystem:
    sizes_lag_while_writing = True

    def __init__(self, client: Client) -> None:
        self.client = client

    def list_dir(self, path: str) -> list[FileStatus]:
        base = path.rstrip("/")
        with _os_errors(path):
            return [_webhdfs_status(f"{base}/{entry['pathSuffix']}", entry)
                    for entry in list_status_batch(self.client, hdfs_path(path))]

    def stat(self, path: str) -> FileStatus | None:
        with _os_errors(path):
            entry = status_or_none(self.client, hdfs_path(path))
        return None if entry is None else _webhdfs_status(path, entry)

    def read(self, path: str, offset: int, length: int) -> bytes:
        try:
            with _os_errors(path):
                return self._open(path, offset, length)
        except _OffsetPastListedLength as past:
            if past.listed_length == 0:
                return b""  # nothing the NameNode admits to yet: wait for its first block report
            start = past.listed_length - 1
            with _os_errors(path):
                data = self._open(path, start, length + offset - start)
            return data[offset - start:]

    def _open(self, path: str, offset: int, length: int) -> bytes:
        try:
            with self.client.read(hdfs_path(path), offset=offset, length=length) as reader:
                return bytes(reader.read())
        except HdfsError as exc:
            match = _OUT_OF_RANGE.search(str(exc))
            if match:
                raise _OffsetPastListedLength(int(match.group(1))) from None
            raise

    def join(self, directory: str, name: str) -> str:
        return f"{directory.rstrip('/')}/{name}"


def _webhdfs_status(path: str, entry: dict[str, object]) -> FileStatus:
    return FileStatus(path, path.rsplit("/", 1)[-1], entry.get("type") == "DIRECTORY", int(entry["length"]),
                      int(entry["modificationTime"]) * 1_000_000, str(entry["fileId"]), str(entry.get("owner") or ""))


class _OffsetPastListedLength(Exception):
    def __init__(self, listed_length: int) -> None:
        super().__init__(listed_length)
        self.listed_length = listed_length


class _os_errors:
    """Map WebHDFS and connection failures of one call on `path` to OSError kinds."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, _tb: object) -> bool:
        if exc is None or isinstance(exc, _OffsetPastListedLength):
            return False
        if isinstance(exc, HdfsError):
            kind = getattr(exc, "exception", None)
            message = str(exc).splitlines()[0] if str(exc) else kind or "WebHDFS error"
            if kind == "FileNotFoundException":
                raise FileNotFoundError(2, message, self.path) from None
            if kind == "AccessControlException":
                raise PermissionError(13, message, self.path) from None
            raise OSError(5, f"WebHDFS: {message}", self.path) from None
        if isinstance(exc, requests.RequestException):
            raise OSError(111, f"WebHDFS unreachable: {type(exc).__name__}", self.path) from None
        return False

"""Event log directories on HDFS (`hdfs://nn/path`), read through WebHDFS.

The tailer's FileSystem calls over navd's WebHDFS client. Paths stay full `hdfs://` URIs so
cursor keys name the cluster. HDFS specifics handled here:

- A file being written has a listed length that lags its readable bytes (the NameNode counts
  only complete blocks and explicit length updates), and WebHDFS refuses an OPEN at an offset
  at or past the listed length ("Offset=... out of the range [0, N)"), though a read from
  before it streams on to the writer's last hflushed byte. So a read past the listed length
  opens at N-1 and drops the bytes before the wanted offset: it re-reads at most the part of
  the current block written since the NameNode last heard of it.
- WebHDFS failures become the OSErrors the tailer handles: FileNotFoundError for a vanished
  file or directory (the history-server cleaner), PermissionError, else OSError.
"""

from __future__ import annotations

import re

import requests
from hdfs import Client, HdfsError

from navd.extractors.spark.logfiles import FileStatus
from navd.webhdfs import hdfs_path, list_status_batch, status_or_none

_OUT_OF_RANGE = re.compile(r"Offset=\d+ out of the range \[0, (\d+)\)")


class WebHdfsFileSystem:
    sizes_lag_while_writing = True

    def __init__(self, client: Client) -> None:
        self.client = client

    def list_dir(self, path: str) -> list[FileStatus]:
        base = path.rstrip("/")
        with _os_errors(path):
            return [_status(f"{base}/{entry['pathSuffix']}", entry)
                    for entry in list_status_batch(self.client, hdfs_path(path))]

    def stat(self, path: str) -> FileStatus | None:
        with _os_errors(path):
            entry = status_or_none(self.client, hdfs_path(path))
        return None if entry is None else _status(path, entry)

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


def _status(path: str, entry: dict[str, object]) -> FileStatus:
    return FileStatus(path, path.rsplit("/", 1)[-1], entry.get("type") == "DIRECTORY", int(entry["length"]),
                      int(entry["modificationTime"]) * 1_000_000, str(entry["fileId"]))


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

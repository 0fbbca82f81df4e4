"""The shared tailing pieces (navd.extractors.common) on a log that is not Spark's.

A Hive-style lineage log directory (`hive-lineage.log`, rotated `hive-lineage.log.<date>`,
one JSON object per line, some rotated files zstd-compressed) is tailed with only the common
API: the file system seam, the line reader, the durable cursor store. Nothing here imports
navd.extractors.spark, which is what proves the pieces generic.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from navd.errors import ConfigError
from navd.extractors.common.codecs import CODECS
from navd.extractors.common.cursors import CursorStore, LogCursor
from navd.extractors.common.lines import LogReader
from navd.extractors.common.tailing import FileStatus, LocalFileSystem, RoutingFileSystem, tailing_file_system
from navd.state import write_atomically


@dataclasses.dataclass(frozen=True)
class LineageLogFile:
    """A tailed file as a Hive lineage tailer would describe it (a lines.TailedFile)."""

    key: str
    status: FileStatus
    codec: str


def lineage_files(fs: LocalFileSystem, directory: Path) -> list[LineageLogFile]:
    """Hive's naming: rotated `.<date>[.<codec>]` files, oldest first, then the live file."""
    out = []
    for status in sorted(fs.list_dir(str(directory)), key=lambda s: (s.name == "hive-lineage.log", s.name)):
        if status.is_dir or not status.name.startswith("hive-lineage.log"):
            continue
        suffix = status.name.rsplit(".", 1)[-1]
        codec = suffix if suffix in CODECS else ""
        out.append(LineageLogFile(status.path, status, codec))
    return out


def event(n: int) -> str:
    return json.dumps({"version": "1.0", "queryText": f"INSERT INTO t{n} SELECT * FROM s{n}",
                       "edges": [{"sources": [0], "targets": [1], "edgeType": "PROJECTION"}]})


def read_all(reader: LogReader, store: CursorStore, files: list[LineageLogFile], complete: bool) -> list[str]:
    """One poll: the new lines of every file, then the cursors committed (as after a Solr flush)."""
    cursors = store.load()
    texts = []
    for file in files:
        for line in reader.read(file, cursors.get(file.key), complete):
            if line.text:
                texts.append(line.text)
            cursors[file.key] = line.cursor
    store.commit(cursors)
    return texts


def test_a_hive_lineage_log_is_tailed_with_the_common_pieces(tmp_path: Path) -> None:
    logs, state = tmp_path / "hive" / "lineage", tmp_path / "state"
    logs.mkdir(parents=True)
    (logs / "ignored.txt").write_text("not a lineage log\n")
    rotated = logs / "hive-lineage.log.2026-11-22.zstd"
    rotated.write_bytes(zstandard.ZstdCompressor().compress(
        "".join(event(n) + "\n" for n in range(3)).encode()))
    live = logs / "hive-lineage.log"
    live.write_text(event(3) + "\n" + event(4)[:20])  # the writer is mid-line
    fs = LocalFileSystem()
    store = CursorStore(state, "hive-lineage-cursors.json")

    first = read_all(LogReader(fs, logger="navd.extractor.hive_lineage", what="lineage log"), store,
                     lineage_files(fs, logs), complete=False)
    assert first == [event(n) for n in range(4)]  # the partial line is held back
    assert [p.name for p in state.iterdir()] == ["hive-lineage-cursors.json"]
    cursors = store.load()
    assert cursors[str(rotated)].codec == "zstd"
    assert cursors[str(live)].resume == len(event(3)) + 1

    with live.open("a") as fh:
        fh.write(event(4)[20:] + "\n" + event(5) + "\n")
    # A restart: a new reader resumes from the committed cursors, nothing read twice.
    second = read_all(LogReader(fs), store, lineage_files(fs, logs), complete=True)
    assert second == [event(4), event(5)]
    assert all(c.done for c in store.load().values())
    assert read_all(LogReader(fs), store, lineage_files(fs, logs), complete=True) == []


def test_routing_sends_local_paths_and_refuses_unknown_schemes(tmp_path: Path) -> None:
    (tmp_path / "hive-lineage.log").write_text(event(1) + "\n")
    fs = RoutingFileSystem(LocalFileSystem(), {})
    assert [s.name for s in fs.list_dir(str(tmp_path))] == ["hive-lineage.log"]
    assert fs.read(str(tmp_path / "hive-lineage.log"), 0, 11) == event(1).encode()[:11]
    try:
        fs.list_dir("s3a://bucket/hive/lineage")
    except OSError as exc:
        assert "s3a://" in str(exc)
    else:
        raise AssertionError("an s3a:// path was listed without a file system for it")


def test_cursor_store_round_trips_and_names_its_file(tmp_path: Path) -> None:
    store = CursorStore(tmp_path, "hive-lineage-cursors.json")
    cursor = LogCursor("/h/hive-lineage.log", "/h/hive-lineage.log", "42", 10, 3, "", 7, 0)
    store.commit({cursor.key: cursor})
    assert CursorStore(tmp_path, "hive-lineage-cursors.json").load() == {cursor.key: cursor}
    assert CursorStore(tmp_path).load() == {}  # another tailer's file: never shared


def test_write_atomically_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "state.json"
    write_atomically(target, b'{"v": 1}')
    write_atomically(target, b'{"v": 2}')
    assert target.read_bytes() == b'{"v": 2}'
    assert os.listdir(target.parent) == ["state.json"]


def test_the_common_pieces_do_not_import_spark() -> None:
    # A fresh interpreter: what importing every common module pulls in, and nothing else.
    code = ("import sys, navd.extractors.common.tailing, navd.extractors.common.lines, "
            "navd.extractors.common.cursors, navd.extractors.common.codecs; "
            "print([m for m in sys.modules if m.startswith('navd.extractors.spark')])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_tailing_file_system_names_the_key_of_an_unreadable_directory(tmp_path: Path) -> None:
    fs, directories = tailing_file_system([f"file://{tmp_path}", str(tmp_path)], None, key="[hive] lineage_log_dirs")
    assert directories == [str(tmp_path), str(tmp_path)] and fs.list_dir(directories[0]) == []
    with pytest.raises(ConfigError, match=r"^\[hive\] lineage_log_dirs: hdfs://nn/hive/lineage is on HDFS"):
        tailing_file_system(["hdfs://nn/hive/lineage"], None, key="[hive] lineage_log_dirs")

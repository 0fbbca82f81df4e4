"""Durable cursors of tailed log files: where reading of each file stands.

A cursor is committed only after the records from the lines before it are in the index, so
after a crash a tailer resumes at the last committed line: nothing lost, nothing duplicated.
`CursorStore` keeps the cursors of one tailer in one JSON file under its state dir, replaced
atomically (navd.state.write_atomically).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from navd.errors import NavdError
from navd.state import write_atomically


class StateError(NavdError):
    """The cursor state file cannot be read or written."""


@dataclasses.dataclass(frozen=True, slots=True)
class LogCursor:
    """Where reading of one log file stands, enough to resume after a restart.

    Resume by decoding from compressed offset `resume` and dropping `skip` decompressed bytes
    (0 for uncompressed files and frame-aligned positions; see codecs). `size`, `mtime_ns` and
    `file_id` identify the file version read; `done` marks a complete file read to its end.
    """

    key: str
    path: str
    file_id: str
    size: int
    mtime_ns: int
    codec: str
    resume: int = 0
    skip: int = 0
    done: bool = False

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> LogCursor:
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in fields})  # type: ignore[arg-type]


class CursorStore:
    """Cursors of all files of one tailer in one JSON file under the state dir.

    Each tailer names its own file (a subclass sets FILE_NAME, or pass `file_name`), so two
    push extractors sharing a state dir never read each other's cursors."""

    FILE_NAME: ClassVar[str] = "log-cursors.json"

    def __init__(self, state_dir: str | os.PathLike[str], file_name: str | None = None) -> None:
        self.path = Path(state_dir) / (file_name or self.FILE_NAME)

    def load(self) -> dict[str, LogCursor]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {c["key"]: LogCursor.from_json(c) for c in raw["cursors"]}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # Refuse rather than start over: starting over would index every log again.
            raise StateError(f"{self.path}: cannot read the log cursors: {exc}") from None

    def commit(self, cursors: Mapping[str, LogCursor]) -> None:
        """Persist `cursors` (all of them: keys absent are dropped). Call after Solr flushed."""
        payload = json.dumps({"version": 1, "cursors": [c.to_json() for c in
                                                         sorted(cursors.values(), key=lambda c: c.key)]},
                             indent=1).encode()
        try:
            write_atomically(self.path, payload)
        except OSError as exc:
            raise StateError(f"{self.path}: cannot write the log cursors: {exc.strerror}") from None


class MemoryCursorStore(CursorStore):
    """Cursors kept in memory only: a read whose positions another process commits (a Spark
    history backfill task hands its cursors to the driver, which commits them in the tailer's
    store once Solr has the records)."""

    def __init__(self) -> None:
        self.path = Path("<memory>")
        self.cursors: dict[str, LogCursor] = {}

    def load(self) -> dict[str, LogCursor]:
        return dict(self.cursors)

    def commit(self, cursors: Mapping[str, LogCursor]) -> None:
        self.cursors = dict(cursors)


class CursorBook:
    """A tailer's cursors between commits: those committed (what the store holds), those advanced
    since, and the files gone since. `checkpoint()` persists the merge in one atomic write.

    The base of every tailer over log files (the Spark event logs, the Hive and Impala lineage
    logs), so the rule "a cursor reaches the store only after its records reached Solr" lives in
    one place."""

    def __init__(self, store: CursorStore) -> None:
        self.store = store
        self.committed: dict[str, LogCursor] = store.load()
        self._pending: dict[str, LogCursor] = {}
        self._gone: set[str] = set()

    def cursor(self, key: str) -> LogCursor | None:
        """Where reading of `key` stands: its last advanced cursor, else its committed one."""
        if key in self._gone:
            return self._pending.get(key)
        return self._pending.get(key, self.committed.get(key))

    def advance(self, cursor: LogCursor) -> None:
        """Record that the records of the lines up to `cursor` went to the index writer."""
        self._pending[cursor.key] = cursor
        self._gone.discard(cursor.key)

    def checkpoint(self) -> None:
        """Persist every advanced cursor. Call only once the index writes are flushed."""
        if not self._pending and not self._gone:
            return  # an idle poll: no fsync every poll_seconds
        merged = {**self.committed, **self._pending}
        for key in self._gone:
            merged.pop(key, None)
        self.store.commit(merged)
        self.committed, self._pending = merged, {}
        self._gone.clear()

    def rollback(self) -> None:
        """Forget every cursor advanced since the last checkpoint (their records may not have
        reached Solr): reading goes on from the committed ones."""
        self._pending = {}
        self._gone.clear()

    def _known(self) -> set[str]:
        return (set(self.committed) | set(self._pending)) - self._gone

    def _forget_cursor(self, key: str) -> None:
        """The file `key` is gone: its cursor leaves the store at the next checkpoint."""
        self._gone.add(key)
        self._pending.pop(key, None)

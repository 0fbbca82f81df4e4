"""The HDFS extractor's state (state_dir/hdfs-state.sqlite): per directory the modification
time and entry count at its last complete listing, the pending deletions (proven, not yet
applied), and the snapshot each snapshottable root's next diff starts from."""

from __future__ import annotations

from navd.state import SqliteState


class HdfsState(SqliteState):
    """Directory times at their last complete listing, pending deletions, snapshot names."""

    FILE_NAME = "hdfs-state.sqlite"
    SCHEMA = """
        CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, parent TEXT, mtime INTEGER,
                                         entries INTEGER NOT NULL DEFAULT 0);
        CREATE INDEX IF NOT EXISTS dirs_parent ON dirs(parent);
        CREATE TABLE IF NOT EXISTS pending_deletes (path TEXT PRIMARY KEY, is_dir INTEGER, proven_by TEXT);
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
    """
    ADDED_COLUMNS = (("dirs", "entries", "INTEGER NOT NULL DEFAULT 0"), ("pending_deletes", "proven_by", "TEXT"))

    def listed_mtime(self, path: str) -> int | None:
        row = self.db.execute("SELECT mtime FROM dirs WHERE path = ?", (path,)).fetchone()
        return None if row is None else row[0]

    def listed_entries(self, path: str) -> int:
        row = self.db.execute("SELECT entries FROM dirs WHERE path = ?", (path,)).fetchone()
        return 0 if row is None else int(row[0])

    def known(self, path: str) -> bool:
        return self.db.execute("SELECT 1 FROM dirs WHERE path = ?", (path,)).fetchone() is not None

    def subdirectories(self, path: str) -> list[tuple[str, int | None]]:
        return list(self.db.execute("SELECT path, mtime FROM dirs WHERE parent = ?", (path,)))

    def saw_directory(self, path: str, parent: str | None) -> None:
        self.db.execute("INSERT OR IGNORE INTO dirs(path, parent, mtime) VALUES (?, ?, NULL)", (path, parent))

    def listed(self, path: str, parent: str | None, mtime: int, entries: int) -> None:
        self.db.execute("INSERT INTO dirs(path, parent, mtime, entries) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(path) DO UPDATE SET mtime = excluded.mtime, entries = excluded.entries",
                        (path, parent, mtime, entries))

    def forget_subtree(self, path: str) -> None:
        # '/' + 1 is '0': the range is exactly the paths below `path/`.
        self.db.execute("DELETE FROM dirs WHERE path = ? OR (path >= ? AND path < ?)",
                        (path, path + "/", path + "0"))

    def add_pending_delete(self, path: str, is_dir: bool, proven_by: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO pending_deletes(path, is_dir, proven_by) VALUES (?, ?, ?)",
                        (path, int(is_dir), proven_by))

    def pending_deletes(self) -> list[tuple[str, bool, str]]:
        return [(p, bool(d), str(r)) for p, d, r in
                self.db.execute("SELECT path, is_dir, proven_by FROM pending_deletes ORDER BY path")]

    def drop_pending_delete(self, path: str) -> None:
        self.db.execute("DELETE FROM pending_deletes WHERE path = ?", (path,))

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

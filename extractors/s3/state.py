"""The S3 extractor's state (state_dir/s3-state.sqlite): what navd indexed of each root.

- objects: per object its qualified name, its directory's, the signature written (ETag, size,
  time, storage class, owner: an unchanged object is not written again) and the token of the
  last run that listed it;
- dirs: per directory (prefix) its parent, the greatest key seen below it (its high-water mark),
  whether it held subdirectories at its last listing (a leaf holds objects only) and the token of
  the last run that listed it;
- meta: per root, when its last complete listing ended.

Names are qualified names (`s3a://bucket/a/b`); a directory's prefix is read back from its name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from navd.state import SqliteState

#: rows per IN (...) query: below SQLite's default limit of host parameters
_CHUNK = 500


def below(name: str) -> tuple[str, str]:
    """The range of names below directory `name` (`s3a://b/` or `s3a://b/a`): '/' + 1 is '0', so
    [name/, name0) is exactly what lies under `name/`, and a bucket's own name `s3a://b/` (the
    queries leave it out)."""
    base = name.removesuffix("/")
    return base + "/", base + "0"


class S3State(SqliteState):
    FILE_NAME = "s3-state.sqlite"
    SCHEMA = """
        CREATE TABLE IF NOT EXISTS objects (name TEXT PRIMARY KEY, parent TEXT NOT NULL, signature TEXT NOT NULL,
                                            seen TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS objects_parent ON objects(parent);
        CREATE TABLE IF NOT EXISTS dirs (name TEXT PRIMARY KEY, parent TEXT, hwm TEXT NOT NULL DEFAULT '',
                                         leaf INTEGER NOT NULL DEFAULT 1, seen TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS dirs_parent ON dirs(parent);
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
    """

    # -- objects ----------------------------------------------------------------------------

    def signatures(self, names: Iterable[str]) -> dict[str, str]:
        """The signatures recorded for those of `names` that are known."""
        found: dict[str, str] = {}
        batch = list(names)
        for start in range(0, len(batch), _CHUNK):
            chunk = batch[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(self.db.execute(f"SELECT name, signature FROM objects WHERE name IN ({marks})", chunk))
        return found

    def saw_objects(self, rows: Iterable[tuple[str, str, str]], token: str) -> None:
        """(name, parent, signature) of objects listed by the run `token`."""
        self.db.executemany("INSERT INTO objects(name, parent, signature, seen) VALUES (?, ?, ?, ?) "
                            "ON CONFLICT(name) DO UPDATE SET parent = excluded.parent, "
                            "signature = excluded.signature, seen = excluded.seen",
                            ((name, parent, signature, token) for name, parent, signature in rows))

    def child_objects(self, directory: str) -> set[str]:
        return {name for (name,) in self.db.execute("SELECT name FROM objects WHERE parent = ?", (directory,))}

    # -- directories ------------------------------------------------------------------------

    def directory(self, name: str) -> tuple[str, bool] | None:
        """(high-water mark, leaf) of a known directory, else None."""
        row = self.db.execute("SELECT hwm, leaf FROM dirs WHERE name = ?", (name,)).fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    def saw_directory(self, name: str, parent: str | None, hwm: str, leaf: bool, token: str) -> None:
        """A directory listed by run `token`: its high-water mark only ever grows (a listing that
        started after it saw only keys after it)."""
        self.db.execute("INSERT INTO dirs(name, parent, hwm, leaf, seen) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(name) DO UPDATE SET parent = excluded.parent, "
                        "hwm = max(dirs.hwm, excluded.hwm), leaf = excluded.leaf, seen = excluded.seen",
                        (name, parent, hwm, int(leaf), token))

    def raise_mark(self, name: str, hwm: str) -> None:
        self.db.execute("UPDATE dirs SET hwm = max(hwm, ?) WHERE name = ?", (hwm, name))

    def child_directories(self, directory: str) -> set[str]:
        return {name for (name,) in self.db.execute("SELECT name FROM dirs WHERE parent = ?", (directory,))}

    def branch_directories(self, root: str) -> list[str]:
        """The known directories under `root` (itself included) that held subdirectories, parents
        before their children."""
        low, high = below(root)
        return [name for (name,) in self.db.execute(
            "SELECT name FROM dirs WHERE leaf = 0 AND (name = ? OR (name >= ? AND name < ?)) ORDER BY name",
            (root, low, high))]

    # -- what a run did not see -----------------------------------------------------------

    def unseen_below(self, root: str, token: str) -> Iterator[tuple[str, bool]]:
        """(name, is directory) of what is recorded under `root` but was not listed by run `token`."""
        low, high = below(root)
        for name, in self.db.execute("SELECT name FROM dirs WHERE name > ? AND name < ? AND seen != ? "
                                     "ORDER BY name", (low, high, token)):
            yield str(name), True
        for name, in self.db.execute("SELECT name FROM objects WHERE name >= ? AND name < ? AND seen != ? "
                                     "ORDER BY name", (low, high, token)):
            yield str(name), False

    def subtree(self, directory: str) -> Iterator[tuple[str, bool]]:
        """(name, is directory) of everything recorded below `directory`."""
        low, high = below(directory)
        for name, in self.db.execute("SELECT name FROM dirs WHERE name > ? AND name < ?", (low, high)):
            yield str(name), True
        for name, in self.db.execute("SELECT name FROM objects WHERE name >= ? AND name < ?", (low, high)):
            yield str(name), False

    def forget(self, name: str, is_dir: bool) -> None:
        """A deleted object, or a deleted directory with everything below it."""
        if not is_dir:
            self.db.execute("DELETE FROM objects WHERE name = ?", (name,))
            return
        low, high = below(name)
        self.db.execute("DELETE FROM dirs WHERE name = ? OR (name >= ? AND name < ?)", (name, low, high))
        self.db.execute("DELETE FROM objects WHERE name >= ? AND name < ?", (low, high))

    def count_below(self, root: str) -> int:
        low, high = below(root)
        dirs = self.db.execute("SELECT count(*) FROM dirs WHERE name > ? AND name < ?", (low, high)).fetchone()[0]
        objects = self.db.execute("SELECT count(*) FROM objects WHERE name >= ? AND name < ?", (low, high)).fetchone()[0]
        return int(dirs) + int(objects)

    # -- meta -------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

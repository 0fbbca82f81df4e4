"""navd's ways to keep an extractor's state between runs: a SQLite file in its state dir, or,
for a small document replaced whole (log cursors, a watermark), one file written atomically.

Every directory and file navd keeps for itself (state, cursors, locks, the embedded Solr's home
and credentials) is created here, private to navd's user: directories 0700, files 0600. Other
local users must not read positions or credentials, nor open a lock file to hold it and stall
navd's runs.

Extractors write their state in the same transaction as their progress and commit it only
after the index writer has flushed the records that progress stands for; a crash rolls back to
the last commit, so state and index never disagree in the direction that loses data.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import threading
from collections.abc import Iterable
from pathlib import Path

from navd.errors import UnsafeFile


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) if needed and make it 0700; returns it.

    An existing directory is tightened too: state written by an earlier navd was 0755. Missing
    parents are created 0700 as well; existing ones navd did not create (~/.local/state,
    /var/lib) are left as they are, and so is a symbolic link an admin put in place of a
    directory (chmod would change whatever it points at)."""
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):  # mkdir(parents=True) would give the parents 0755
        directory.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
    info = path.lstat()
    # Only its owner may chmod it; a directory an admin made for navd (owned by root, writable
    # by navd) stays as the admin set it: what navd creates inside it is private anyway.
    if info.st_mode & 0o777 != PRIVATE_DIR_MODE and info.st_uid == os.geteuid() and stat.S_ISDIR(info.st_mode):
        path.chmod(PRIVATE_DIR_MODE)
    return path


def open_private(path: Path, flags: int = os.O_RDWR | os.O_CREAT) -> int:
    """os.open a file of navd's own, 0600 (an existing file is tightened through its descriptor);
    its directory 0700. Never through a symbolic link, and only a regular file: UnsafeFile (one
    line naming the file) otherwise, whatever it points at left untouched."""
    private_dir(path.parent)
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(f"{path}: is a symbolic link; navd does not write through one: remove it") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{path}: not a regular file; navd writes only its own files there: remove it")
        if info.st_mode & 0o777 != PRIVATE_FILE_MODE:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_tree_private(root: Path) -> None:
    """Tighten every directory (0700) and file (0600) below `root`: for trees copied from
    navd's package data (a core's conf), whose files carry the package's 0644."""
    for directory, dirs, files in os.walk(root):
        os.chmod(directory, PRIVATE_DIR_MODE)
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, PRIVATE_FILE_MODE)


class SqliteState:
    """A SQLite file `state_dir/FILE_NAME`, its schema created and migrated on open."""

    FILE_NAME = "state.sqlite"
    SCHEMA = ""
    #: (table, column, type) added after state files were first written: added when missing.
    ADDED_COLUMNS: Iterable[tuple[str, str, str]] = ()

    def __init__(self, state_dir: Path) -> None:
        private_dir(state_dir)
        self.path = state_dir / self.FILE_NAME
        # SQLite creates the file with the umask's mode and its -wal/-shm files with the
        # database file's mode: creating it 0600 first keeps all three private.
        os.close(open_private(self.path))
        # Only the extractor's consumer thread uses it; check_same_thread off lets the daemon
        # hand the extractor from its scheduler thread to a worker.
        self.db = sqlite3.connect(self.path, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(self.SCHEMA)
        for table, column, kind in self.ADDED_COLUMNS:
            if column not in {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}:
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        self.db.commit()

    def commit(self) -> None:
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    def close(self) -> None:
        self.db.close()


def write_atomically(path: Path, data: bytes, *, overwrite: bool = True) -> None:
    """Replace `path` with `data` so that after a crash it holds the old or the new bytes, whole.

    Written to a temporary file beside it, fsynced, renamed over it, then the directory fsynced:
    the rename itself must reach the disk before the caller is told the state is durable.
    `overwrite=False` never replaces a file already there (FileExistsError instead): a hard link
    instead of the rename, which fails where the name is taken, so two writers picking the same
    new name cannot lose one's file. Raises OSError (the caller names what the file is for)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    # made anew (O_EXCL): one a crash left, or anything else planted under its name, goes first
    tmp.unlink(missing_ok=True)
    try:
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
            tmp.unlink()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)

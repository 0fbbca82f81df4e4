"""One run of a component at a time, across processes: `navd run` and `navd extract` share them.

A lock is an flock(2) on `<state dir>/locks/<component>.lock`; the kernel drops it when its
holder dies, so a killed daemon never leaves a stale lock behind. Lock files are 0600 in a 0700
directory (navd.state.open_private): flock needs only an open descriptor, so a lock file other
users could open would let any of them hold it and stall navd's runs.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from navd.errors import RunStopped
from navd.state import open_private, private_dir


class LockBusy(Exception):
    """Another process (or thread) runs this component now: `holder` is its pid, as it wrote it
    in the lock file (None when it has not yet)."""

    def __init__(self, component: str, holder: int | None = None) -> None:
        super().__init__(component)
        self.component = component
        self.holder = holder


def lock_path(state_root: Path, component: str) -> Path:
    return state_root / "locks" / f"{component}.lock"


@contextmanager
def component_lock(state_root: Path, component: str, *, wait: bool,
                   on_wait: Callable[[], None] | None = None,
                   stop: threading.Event | None = None) -> Iterator[int | None]:
    """Hold the component's lock for the `with` body; yields the pid of its previous holder.

    `wait=False` raises LockBusy at once when it is held; `wait=True` calls `on_wait` once and
    polls until it is free (or `stop` is set: RunStopped)."""
    path = lock_path(state_root, component)
    private_dir(state_root)
    fd = open_private(path)
    try:
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    raise LockBusy(component, _pid_in(fd)) from None
                if not waited and on_wait is not None:
                    on_wait()
                waited = True
                if stop is None:
                    time.sleep(0.5)
                elif stop.wait(0.5):
                    raise RunStopped(f"navd is stopping: gave up waiting for the {component} lock") from None
        previous = _pid_in(fd)
        if previous != os.getpid():  # a poll every few seconds need not rewrite its own pid
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield previous
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _pid_in(fd: int) -> int | None:
    """The pid a holder wrote in the lock file (None: none written yet, or not a number)."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def is_locked(state_root: Path, component: str) -> bool:
    """Whether some process holds the component's lock now (no lock file: none does)."""
    return lock_held(state_root, component) is True


def lock_held(state_root: Path, component: str) -> bool | None:
    """Whether a process holds the component's lock now, without creating or taking it for
    longer than one try: None when this state directory has no lock file for it (no run here
    ever took it: `navd status` run with another state directory cannot tell), or when this user
    may not open it (another user's state)."""
    try:
        fd = os.open(lock_path(state_root, component), os.O_RDONLY)
    except (FileNotFoundError, PermissionError):
        return None
    try:
        # A shared try-lock: it fails only against a holder's exclusive lock. Taken for an
        # instant, it can make a concurrent non-waiting run attempt see the lock busy, which
        # then skips to its next interval as for any busy lock.
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        return False
    finally:
        os.close(fd)

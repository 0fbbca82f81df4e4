"""Processes navd runs for itself (the embedded Solr, the development services): start detached,
keep a pid file in their home, tell them from a reused pid, wait until ready, stop cleanly."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from navd.errors import NavdError
from navd.logs import get_logger
from navd.state import open_private, write_atomically

log = get_logger("navd.process")


def pid_runs(pid: int, *markers: str) -> bool:
    """Process `pid` is alive and its command line holds every marker (pids get reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return all(marker.encode() in cmdline for marker in markers)


class ManagedProcess:
    """One long-running child process identified by `marker` and its home in its command line.

    `ready` callables return None once the service answers, else a phrase saying what is still
    awaited (used in the time-out message).
    """

    def __init__(self, name: str, home: Path, marker: str, error: type[NavdError]) -> None:
        self.name = name
        self.home = home
        self.marker = marker
        self.error = error

    @property
    def pid_file(self) -> Path:
        return self.home / f"navd-{self.name}.pid"

    def recorded(self) -> dict[str, Any] | None:
        """What the pid file says (pid and whatever `spawn` recorded), if it is readable."""
        try:
            data = json.loads(self.pid_file.read_text())
            int(data["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return data if isinstance(data, dict) else None

    def is_alive(self, pid: int) -> bool:
        """Alive, and really this service for this home (pids get reused)."""
        return pid_runs(pid, self.marker, str(self.home))

    def running_pid(self) -> int | None:
        recorded = self.recorded()
        if recorded is None:
            return None
        pid = int(recorded["pid"])
        return pid if self.is_alive(pid) else None

    def spawn(self, cmd: list[str], *, log_file: Path, record: Mapping[str, Any],
              env: Mapping[str, str] | None = None, cwd: Path | None = None,
              umask: int = -1) -> subprocess.Popen[bytes]:
        """Start detached (own session, so a Ctrl-C of the caller does not reach it); `umask`
        (-1: inherit) is the child's, e.g. 0o077 for a service whose home must stay private."""
        with os.fdopen(open_private(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab") as console:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                                    cwd=cwd or self.home, env=dict(env) if env is not None else None,
                                    start_new_session=True, umask=umask)
        write_atomically(self.pid_file, json.dumps({**record, "pid": proc.pid}).encode())
        return proc

    def ensure_running(self, spawn: Callable[[], subprocess.Popen[bytes]], ready: Callable[[], str | None], *,
                       ports: tuple[int, ...], timeout: float, log_file: Path) -> None:
        """Start unless it already runs from this home (refusing ports someone else holds), then
        wait until `ready`."""
        pid = self.running_pid()
        if pid is not None:
            self.wait_ready(pid, ready, timeout=timeout, log_file=log_file)
            return
        for port in ports:
            if port_in_use(port):
                raise self.error(f"port {port} on 127.0.0.1 is in use by another process")
        proc = spawn()
        # Pass the child itself: until it has exec'd, its /proc cmdline is still ours.
        self.wait_ready(proc.pid, ready, timeout=timeout, log_file=log_file, proc=proc)

    def wait_ready(self, pid: int, ready: Callable[[], str | None], *, timeout: float, log_file: Path,
                   proc: subprocess.Popen[bytes] | None = None) -> None:
        deadline = time.monotonic() + timeout
        waiting_for = f"{self.name} did not become ready"
        while time.monotonic() < deadline:
            problem = ready()
            if problem is None:
                return
            waiting_for = problem
            exited = proc.poll() if proc is not None else (None if self.is_alive(pid) else 1)
            if exited is not None:
                self.pid_file.unlink(missing_ok=True)
                raise self.error(f"{self.name} exited during start-up; see {log_file.parent}: {tail(log_file)}")
            time.sleep(0.25)
        raise self.error(f"{waiting_for} within {timeout:.0f}s; see {log_file.parent}")

    def stop(self, timeout: float = 30.0) -> bool:
        """SIGTERM, then SIGKILL after `timeout`. False if it was not running."""
        pid = self.running_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self.is_alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.2)
        if self.is_alive(pid):
            log.warning("did not stop in time; killing it", service=self.name, pid=pid, timeout=timeout)
            os.kill(pid, signal.SIGKILL)
            while self.is_alive(pid):
                _reap(pid)
                time.sleep(0.1)
        # A JVM's cmdline empties before its last threads have closed their sockets: wait for
        # those, or a start right after this finds its ports still taken.
        deadline = time.monotonic() + 10
        while not _exited(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.05)
        self.pid_file.unlink(missing_ok=True)
        log.info("stopped", service=self.name, pid=pid, home=str(self.home))
        return True


def _exited(pid: int) -> bool:
    """Every thread of the process has exited, so its sockets are closed. (The main thread
    turns zombie, and its cmdline empties, while other threads still hold them.)"""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue  # exited meanwhile
        if state not in ("Z", "X"):
            return False
    return True


def _reap(pid: int) -> None:
    """Collect the exit status if the service is our own child, so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (for tests and benchmarks)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no console log)"
    return " | ".join(text[-lines:]) or "(empty console log)"

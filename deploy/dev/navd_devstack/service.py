"""Starting a development service that is ready once it listens on its one port."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from navd.process import ManagedProcess, port_in_use


def start_listening(process: ManagedProcess, spawn: Callable[[], subprocess.Popen[bytes]], port: int, *,
                    what: str, timeout: float, log_file: Path) -> None:
    """Start `process` unless it already runs from its home; ready when `port` accepts connections.

    The metastore and the Thrift Server answer nothing cheaper than their protocol, and an open
    port is the moment they accept clients, so the port is the readiness check.
    """
    def ready() -> str | None:
        return None if port_in_use(port) else f"{what} did not open port {port}"

    process.ensure_running(spawn, ready, ports=(port,), timeout=timeout, log_file=log_file)

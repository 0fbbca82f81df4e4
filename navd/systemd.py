"""systemd's notify protocol (sd_notify(3)), spoken directly: one datagram per message to the
socket in $NOTIFY_SOCKET. No-ops when navd does not run under systemd with Type=notify."""

from __future__ import annotations

import os
import socket

from navd.logs import get_logger

log = get_logger("navd.daemon")


class Notifier:
    def __init__(self, environ: dict[str, str] | None = None) -> None:
        environ = dict(os.environ) if environ is None else environ
        address = environ.get("NOTIFY_SOCKET", "")
        # An abstract socket is written "@name" and means a leading NUL byte.
        self.address = "\0" + address[1:] if address.startswith("@") else address
        watchdog_usec = environ.get("WATCHDOG_USEC", "")
        watchdog_pid = environ.get("WATCHDOG_PID", "")
        self.watchdog_seconds: float | None = None
        if watchdog_usec.isdigit() and int(watchdog_usec) > 0 and (
                not watchdog_pid or watchdog_pid == str(os.getpid())):
            self.watchdog_seconds = int(watchdog_usec) / 1_000_000

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def notify(self, *fields: str) -> bool:
        """Send `READY=1`, `STATUS=...` and the like; False (logged once per failure) if it failed."""
        if not self.address:
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                # Never block the main loop on a receiver that does not read.
                sock.sendto("\n".join(fields).encode(), socket.MSG_DONTWAIT, self.address)
            return True
        except OSError as exc:
            log.warning("systemd notification not sent", message=fields[0] if fields else "", reason=str(exc))
            return False

"""`navd serve --background`, `navd server stop|status`: the server as a detached process of its
own, as `navd solr start` runs Solr (navd/process.py), for a user at a terminal and the
quickstart; under systemd `navd run` serves instead (`[server] enabled = true`).

Its pid file and log are in `server/` of navd's private state dir (the directory of `navd run`'s
users file and locks, created 0700 by navd/state.py). The detached `navd serve` carries that
directory in its command line (`--run-dir`), which is how a pid is told from a process that
reused it after the server died."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import sys
import time
from pathlib import Path

from navd.config import NavdConfig, ServerConfig, extractor_state_dir
from navd.errors import NavdError
from navd.process import ManagedProcess
from navd.server.run import check_tls, url
from navd.state import private_dir

#: the flag that names the run dir in the detached server's command line
RUN_DIR_FLAG = "--run-dir"
LOG_FILE_NAME = "server.log"
#: how long a start waits for the server to listen (a time-out, not an expectation: it imports
#: FastAPI and binds in a second or two)
START_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 30.0


@dataclasses.dataclass(frozen=True)
class Background:
    running: bool
    url: str | None
    pid: int | None
    log_file: Path
    #: where its queries go (the Solr base URL it was started with)
    solr: str | None = None
    auth: str | None = None
    detail: str = ""


def run_dir(config: NavdConfig) -> Path:
    return extractor_state_dir(config).expanduser().resolve() / "server"


def _process(config: NavdConfig) -> ManagedProcess:
    return ManagedProcess("server", run_dir(config), RUN_DIR_FLAG, NavdError)


def status(config: NavdConfig) -> Background:
    process = _process(config)
    log_file = process.home / LOG_FILE_NAME
    recorded = process.recorded()
    if recorded is None:
        return Background(False, None, None, log_file, detail="not running")
    pid = int(recorded["pid"])
    shown_url, solr = recorded.get("url"), recorded.get("solr")
    if not process.is_alive(pid):
        return Background(False, shown_url, None, log_file,
                          detail=f"not running (stale pid file, pid {pid} is gone)")
    return Background(True, shown_url, pid, log_file, solr=solr, auth=recorded.get("auth"), detail="running")


def _probe_host(host: str) -> str:
    """Where a client on this machine reaches a server bound to `host`."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)


def listening(server: ServerConfig) -> bool:
    """Something accepts connections on the server's host and port."""
    try:
        with socket.create_connection((_probe_host(server.host), server.port), timeout=1.0):
            return True
    except OSError:
        return False


def _child_args(config: NavdConfig, log_format: str | None, log_level: str | None) -> list[str]:
    """The global options of the detached `navd`: the same config file, made absolute (the
    child does not share the caller's working directory's meaning), and the log overrides."""
    args = [] if config.source == "<defaults>" else ["--config", str(Path(config.source).resolve())]
    if log_format:
        args += ["--log-format", log_format]
    if log_level:
        args += ["--log-level", log_level]
    return args


def start(config: NavdConfig, solr_url: str, *, log_format: str | None = None,
          log_level: str | None = None) -> tuple[Background, bool]:
    """Start the server detached with `config`'s `[server]`; returns once it listens, with
    False if it was running already with the same address, login and Solr. NavdError with the
    reason if it cannot start, or if the running one differs: an admin who asked for a login
    must not be told "already running" about a server without one."""
    server = config.server
    current = status(config)
    if current.running:
        if (current.url, current.auth, current.solr) != (url(config), server.auth, solr_url):
            raise NavdError(f"a navd server with other settings runs on {current.url} (auth {current.auth}, "
                            f"Solr {current.solr}, pid {current.pid}): stop it first with `navd server stop`")
        return current, False
    check_tls(server)  # here, a config error; in the child, only "it exited"
    if listening(server):
        raise NavdError(f"[server] port {server.port} on {server.host} is in use by another process "
                        "(choose another with --port)")
    process = _process(config)
    home = private_dir(process.home)
    log_file = home / LOG_FILE_NAME
    offset = log_file.stat().st_size if log_file.exists() else 0
    cmd = [sys.executable, "-m", "navd", *_child_args(config, log_format, log_level), "serve",
           "--host", server.host, "--port", str(server.port), "--auth", server.auth, RUN_DIR_FLAG, str(home)]
    proc = process.spawn(cmd, log_file=log_file, umask=0o077,
                         record={"url": url(config), "auth": server.auth, "solr": solr_url, "config": config.source})
    _wait_listening(process, proc, server, log_file, offset)
    return Background(True, url(config), proc.pid, log_file, solr=solr_url, auth=server.auth, detail="running"), True


def _wait_listening(process: ManagedProcess, proc: subprocess.Popen[bytes], server: ServerConfig,
                    log_file: Path, offset: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        # Exited first: a port taken between the check and the bind is someone else listening.
        if proc.poll() is not None:
            process.pid_file.unlink(missing_ok=True)
            raise NavdError(f"the server exited during start-up: {_reason(log_file, offset)} (log: {log_file})")
        if listening(server):
            return
        time.sleep(0.1)
    process.stop(STOP_TIMEOUT_SECONDS)
    raise NavdError(f"the server did not listen on port {server.port} within {START_TIMEOUT_SECONDS:.0f}s "
                    f"(log: {log_file})")


def _reason(log_file: Path, offset: int) -> str:
    """The child's own one-line error (`navd: error: ...`) from what this start logged."""
    try:
        with log_file.open("rb") as fh:
            fh.seek(offset)
            lines = fh.read().decode(errors="replace").splitlines()
    except OSError:
        return "no log"
    errors = [line.strip().removeprefix("navd: ").removeprefix("error: ") for line in lines
              if line.startswith("navd:")]
    return (errors or [line.strip() for line in lines if line.strip()] or ["no output"])[-1]


def stop(config: NavdConfig) -> bool:
    """SIGTERM, wait (SIGKILL after STOP_TIMEOUT_SECONDS); False if it was not running (a stale
    pid file is removed)."""
    return _process(config).stop(STOP_TIMEOUT_SECONDS)

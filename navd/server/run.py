"""Running the app on uvicorn: in the foreground (`navd serve`) or on a thread of `navd run`.

uvicorn: the ASGI server FastAPI documents, maintained by the Starlette authors; TLS is the
standard library's ssl, so no extra dependency."""

from __future__ import annotations

import signal
import ssl
import threading
import time

import uvicorn

from navd.config import NavdConfig, ServerConfig, check_private_file
from navd.errors import ConfigError, NavdError
from navd.index.client import SolrIndex
from navd.index.clients import client_for
from navd.logs import get_logger
from navd.openlineage.intake import Intake
from navd.server.connections import ensure_descriptors, uvicorn_limits

log = get_logger("navd.server")
#: how long `navd run` waits for the server to listen before it gives up starting
START_TIMEOUT_SECONDS = 30.0


def url(config: NavdConfig) -> str:
    server = config.server
    host = f"[{server.host}]" if ":" in server.host else server.host
    return f"{'https' if server.cert_file else 'http'}://{host}:{server.port}"


def check_tls(server: ServerConfig) -> None:
    """Fail closed with one line naming the key when the certificate or its key cannot be loaded
    (a file that exists but holds no PEM, a key of another certificate, an encrypted key):
    uvicorn would raise ssl.SSLError from inside its start-up, a traceback."""
    if not server.cert_file:
        return
    # the private key: nobody but navd's user may read it, as a password file
    check_private_file("[server] key_file", server.key_file)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        # The password callback answers at once: OpenSSL would otherwise prompt on the terminal
        # for an encrypted key, and a service has none.
        context.load_cert_chain(server.cert_file, server.key_file, password=lambda: b"")
    except (ssl.SSLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        raise ConfigError(f"[server] cert_file: cannot load {server.cert_file} with key_file {server.key_file}: "
                          f"{reason}") from None


def open_intake(config: NavdConfig) -> Intake | None:
    """The OpenLineage intake with `[openlineage] enabled` (its own client, navd's admin user:
    the read routes keep the reader), draining what a previous process spooled; else None."""
    if not config.openlineage.enabled:
        return None
    intake = Intake(config, client_for(config, "admin"))
    intake.start()
    return intake


def _uvicorn(config: NavdConfig, index: SolrIndex, intake: Intake | None = None) -> uvicorn.Server:
    from navd.server.app import create_app

    server = config.server
    check_tls(server)
    ensure_descriptors(server)
    settings = uvicorn.Config(
        create_app(config, index, intake), host=server.host, port=server.port,
        ssl_certfile=server.cert_file or None, ssl_keyfile=server.key_file or None,
        # navd's logging (navd.logs) formats uvicorn's records too; no access log: the latency
        # histogram counts requests, and query strings are users' searches.
        log_config=None, access_log=False, server_header=False, proxy_headers=False,
        timeout_graceful_shutdown=5,
        # connections capped, idle and slow ones closed (navd/server/connections.py)
        **uvicorn_limits(server))  # type: ignore[arg-type]
    return uvicorn.Server(settings)


def serve(config: NavdConfig) -> int:
    """`navd serve`: until SIGTERM/SIGINT; 0 when stopped so, 1 if it could not listen."""
    with client_for(config, "reader") as index:
        intake = open_intake(config)
        try:
            return _serve(config, index, intake)
        finally:
            if intake is not None:
                intake.stop()


def _serve(config: NavdConfig, index: SolrIndex, intake: Intake | None) -> int:
    server = _uvicorn(config, index, intake)
    # uvicorn re-raises the signal it stopped for once it is done: a no-op handler makes
    # that a clean exit 0 instead of death by SIGTERM or a KeyboardInterrupt.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: None)
    log.info("navd server starting", url=url(config), auth=config.server.auth)
    try:
        server.run()
    except SystemExit as exc:  # uvicorn exits 1 when it cannot bind (logged by uvicorn)
        raise NavdError(f"[server] could not listen on {url(config)} (the reason is logged)") from exc
    if not server.started:
        raise NavdError(f"[server] could not listen on {url(config)} (the reason is logged)")
    return 0


class BackgroundServer:
    """The server on a thread of `navd run`: started before READY, stopped with the daemon, and
    restarted by a reload that changes what it serves (navd/daemon.py)."""

    def __init__(self, config: NavdConfig) -> None:
        self.config = config
        self.index = client_for(config, "reader")
        self.intake = open_intake(config)
        try:
            self.server = _uvicorn(config, self.index, self.intake)
        except BaseException:  # unloadable TLS files: nothing may stay open behind the error
            if self.intake is not None:
                self.intake.stop()
            self.index.close()
            raise
        self.thread = threading.Thread(target=self._run, name="navd-server", daemon=True)

    def _run(self) -> None:
        try:
            self.server.run()
        except SystemExit:  # could not bind; uvicorn logged why
            pass

    def start(self) -> None:
        """Listening when it returns; NavdError (fail closed) if it could not."""
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not self.server.started:
            self.stop(1.0)
            raise NavdError(f"[server] could not listen on {url(self.config)} (the reason is logged)")
        log.info("navd server listening", url=url(self.config), auth=self.config.server.auth)

    def stop(self, timeout: float) -> None:
        """Stop accepting, let requests in flight finish (uvicorn's graceful shutdown, at most
        5 s), close the socket; `timeout` bounds the wait for all of it."""
        self.server.should_exit = True
        self.thread.join(timeout)
        if self.intake is not None:
            self.intake.stop()
        self.index.close()

"""The one logger setup: structlog over the standard library, to stderr.

JSON lines by default (for journald and log shippers), human-readable on a TTY. Every component
logs under its own dotted name (`navd.extractor.hdfs`, `navd.linker`, `navd.index`) so an admin
can grep one component's story, as Navigator's troubleshooting guide does.
"""

from __future__ import annotations

import errno
import logging
import logging.handlers
import os
import sys
from pathlib import Path
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

from navd.errors import ConfigError, redact

_SECRET_KEYS = frozenset({"password", "passwd", "secret", "token", "authorization", "keytab_password"})


def _redact_secrets(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Secret-named fields become ***; every other text (the message, a URL, an error, a
    formatted traceback) goes through the one redaction function errors use too."""
    for key, value in list(event.items()):
        if key.lower() in _SECRET_KEYS:
            event[key] = "***"
        elif isinstance(value, str):
            event[key] = redact(value)
    return event


def setup_logging(fmt: str = "auto", level: str = "info", stream: TextIO | None = None, file: str = "") -> None:
    """Configure structlog and the stdlib root logger. Safe to call more than once.

    `file`: log there instead of stderr, reopening it when logrotate has moved it away."""
    stream = sys.stderr if stream is None else stream
    if fmt == "auto":
        fmt = "console" if stream.isatty() and not file else "json"
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
        shared.append(structlog.processors.format_exc_info)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=stream.isatty() and not file)
    shared.append(_redact_secrets)  # last: also over the traceback format_exc_info wrote
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler: logging.Handler
    if file:
        try:
            handler = _LogFile(Path(file).expanduser(), encoding="utf-8")
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ConfigError(f"[logging] file {file}: is a symbolic link; navd does not write through one: "
                                  "name the file itself") from None
            raise ConfigError(f"[logging] file {file}: cannot open for writing: {exc.strerror}") from None
    else:
        handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Third-party clients log every request at INFO/DEBUG; keep them out of navd's story.
    for noisy in ("urllib3", "pysolr", "requests", "pyhive", "py4j", "apscheduler", "hdfs"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # botocore's DEBUG lines show signed requests: the canonical request holds a session token.
    for noisy in ("botocore", "boto3", "s3transfer"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # Thrift logs a refused connection at ERROR before raising it; navd reports the failed run
    # once, under the extractor's logger.
    logging.getLogger("thrift").setLevel(logging.CRITICAL)
    # requests-gssapi logs a failed SPNEGO step (no ticket, an expired one) with its traceback
    # before raising it; navd's client reports it as one line.
    logging.getLogger("requests_gssapi").setLevel(logging.CRITICAL)
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *shared,
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


class _LogFile(logging.handlers.WatchedFileHandler):
    """`[logging] file`, reopened when logrotate has moved it away, and never opened through a
    symbolic link (one put in its place would have navd append to, or create, any file its user
    may write). Its mode is the umask's, as logrotate's `create` expects."""

    def _open(self) -> TextIO:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)


def get_logger(component: str) -> structlog.stdlib.BoundLogger:
    """A logger named after the component, e.g. `navd.extractor.hdfs`."""
    return structlog.stdlib.get_logger(component)

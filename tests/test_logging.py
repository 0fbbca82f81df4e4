"""Logging: JSON lines by default, one logger name per component, secrets redacted."""

from __future__ import annotations

import io
import json

from navd.logs import get_logger, setup_logging


def test_json_lines_carry_the_component_name_and_redact_secrets() -> None:
    stream = io.StringIO()
    setup_logging("auto", "info", stream=stream)  # not a TTY -> JSON
    get_logger("navd.extractor.hdfs").warning("listing failed", path="/data", password="hunter2")
    get_logger("navd.linker").debug("not shown at info level")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 1
    record = lines[0]
    assert record["logger"] == "navd.extractor.hdfs"
    assert record["level"] == "warning"
    assert record["event"] == "listing failed" and record["path"] == "/data"
    assert record["password"] == "***"
    assert "hunter2" not in stream.getvalue()
    assert record["timestamp"].endswith("Z")


def test_console_format_is_human_readable() -> None:
    stream = io.StringIO()
    setup_logging("console", "debug", stream=stream)
    get_logger("navd.purge").info("purged", relations=3)
    text = stream.getvalue()
    assert "purged" in text and "navd.purge" in text and "relations=3" in text
    assert not text.lstrip().startswith("{")


def test_credentials_in_messages_values_and_tracebacks_are_redacted() -> None:
    """The logger and error messages share navd.errors.redact: userinfo in any URL, password
    assignments in any text."""
    stream = io.StringIO()
    setup_logging("json", "info", stream=stream)
    logger = get_logger("navd.index")
    logger.warning("cannot reach htps://navd:Sup3rSecret@solr1.example.com:8983/solr",
                   url="https://navd:Sup3rSecret@solr1:8985/solr", detail='password = "Sup3rSecret"')
    try:
        raise RuntimeError("https://navd:Sup3rSecret@solr1:8985/solr: connection refused")  # not a NavdError
    except RuntimeError:
        logger.exception("write failed")
    text = stream.getvalue()
    assert "Sup3rSecret" not in text
    first, second = (json.loads(line) for line in text.splitlines())
    assert first["event"] == "cannot reach htps://navd:***@solr1.example.com:8983/solr"
    assert first["url"] == "https://navd:***@solr1:8985/solr"
    assert first["detail"] == "password = ***"
    assert "https://navd:***@solr1:8985/solr: connection refused" in second["exception"]

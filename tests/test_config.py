"""Config: one TOML file, strict keys and values, env overrides, secrets kept out of reprs."""

from __future__ import annotations

from pathlib import Path

import pytest

from navd import config as config_module
from navd.config import load_config, parse_config
from navd.errors import ConfigError
from navd.extractors.spark.settings import spark_settings

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "navd.toml"
    path.write_text(text)
    return path


def test_missing_default_file_means_embedded_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(config_module, "DEFAULT_CONFIG_PATH", tmp_path / "absent.toml")
    cfg = load_config(None, environ={})
    assert cfg.source == "<defaults>"
    assert cfg.solr.is_embedded
    assert cfg.solr.base_url == "http://127.0.0.1:8983/solr"
    assert cfg.cluster.name == "primary"


def test_explicit_missing_file_fails_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: config file not found"):
        load_config(str(tmp_path / "nope.toml"), environ={})


def test_navd_config_env_is_used(tmp_path: Path) -> None:
    path = write(tmp_path, '[cluster]\nname = "prod"\n')
    assert load_config(None, environ={"NAVD_CONFIG": str(path)}).cluster.name == "prod"


def test_navd_solr_url_env_overrides_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[solr]\nurl = "http://solr-a:8983/solr"\n')
    cfg = load_config(str(path), environ={"NAVD_SOLR_URL": "https://solr-b:8985/solr/"})
    assert cfg.solr.base_url == "https://solr-b:8985/solr"
    assert not cfg.solr.is_embedded


@pytest.mark.parametrize(("text", "message"), [
    ('[solr]\nurll = "x"\n', r"\[solr\]: unknown key 'urll'"),
    ('[solrr]\n', r"top level: unknown key 'solrr'"),
    ('[solr]\nbatch_size = "big"\n', r"\[solr\] batch_size: expected an integer, got 'big'"),
    ('[solr]\nmode = "mesh"\n', r"\[solr\] mode: expected one of 'auto', 'standalone', 'cloud'"),
    ('[solr]\nurl = "ftp://x"\n', r"\[solr\] url: 'ftp://x' is not an http\(s\) URL"),
    ('[solr]\nurl = "http://u:p@solr:8983/solr"\n', r"\[solr\] url: must not carry credentials"),
    ('[solr]\nauth = "basic"\nusername = "navd"\n', r"\[solr\] auth: basic auth needs"),
    ('[solr]\nbatch_size = 0\n', r"\[solr\] batch_size: must be > 0"),
    ('[solr.embedded]\nheap = "lots"\n', r"\[solr.embedded\] heap: 'lots' is not a JVM size"),
    ('[solr.embedded]\nport = 70000\n', r"\[solr.embedded\] port: 70000 is not a TCP port"),
    ('[hdfs]\nenabled = true\n', r"\[hdfs\] urls: \[hdfs\] is enabled but has no urls"),
    ('[spark]\nevent_log_dirs = 5\n', r"\[spark\] event_log_dirs: expected a list of strings"),
    ('[solr]\nverify_tls = "no"\n', r"\[solr\] verify_tls: expected true or false"),
    ('solr = 3\n', r"\[solr\]: expected a table"),
    ('[solr\n', r"not valid TOML"),
])
def test_bad_config_fails_with_a_message_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as excinfo:
        load_config(str(path), environ={})
    assert str(path) in str(excinfo.value)
    assert "\n" not in str(excinfo.value)


def test_password_file_is_read_and_never_shown(tmp_path: Path) -> None:
    secret = tmp_path / "solr.pw"
    secret.write_text("s3cret-value\n")
    path = write(tmp_path, f'[solr]\nurl = "https://solr:8985/solr"\nauth = "basic"\n'
                           f'username = "navd"\npassword_file = "{secret}"\n')
    cfg = load_config(str(path), environ={})
    assert cfg.solr.password == "s3cret-value"
    assert "s3cret" not in repr(cfg)


def test_shipped_example_config_is_valid(tmp_path: Path) -> None:
    """deploy/navd.toml documents every section; it must load as it is."""
    cfg = load_config(str(REPO / "deploy" / "navd.toml"), environ={})
    assert cfg.cluster.name == "primary"
    assert spark_settings(cfg).poll_seconds == 5


def test_lists_accept_a_single_string() -> None:
    cfg = parse_config({"spark": {"event_log_dirs": "hdfs:///spark-logs"}})
    assert spark_settings(cfg).event_log_dirs == ("hdfs:///spark-logs",)

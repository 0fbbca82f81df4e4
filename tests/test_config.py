"""Config: one TOML file, strict keys and values, env overrides, secrets kept out of reprs."""

from __future__ import annotations

from pathlib import Path

import pytest

from navd.config import loading as config_loading
from navd.config import load_config, parse_config
from navd.errors import MESSAGE_CHARS, ConfigError
from navd.extractors.hdfs.settings import hdfs_settings
from navd.extractors.spark.settings import spark_settings

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "navd.toml"
    path.write_text(text)
    return path


def test_missing_default_file_means_embedded_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(config_loading, "DEFAULT_CONFIG_PATH", tmp_path / "absent.toml")
    cfg = load_config(None, environ={})
    assert cfg.source == "<defaults>"
    assert cfg.solr.is_embedded
    assert cfg.solr.base_url == "http://127.0.0.1:8983/solr"
    assert cfg.cluster.name == "primary"


def test_explicit_missing_file_fails_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: config file not found"):
        load_config(str(tmp_path / "nope.toml"), environ={})


def test_a_config_path_too_long_for_the_file_system_is_one_line() -> None:
    # found by tests/fuzz (cli arguments): `--config` with thousands of characters raised
    # OSError (ENAMETOOLONG) out of Path.exists; one line, the name cut at 200 characters
    with pytest.raises(ConfigError, match=r"^a{200}\.\.\.: cannot read config: File name too long$"):
        load_config("a" * 5000, environ={})


@pytest.mark.parametrize("text", [
    # found by tests/fuzz (config tables): a name longer than the file system allows raised
    # OSError (ENAMETOOLONG) out of Path.is_file, a `~user` of no such user RuntimeError
    '[server]\ncert_file = "/etc/navd/tls/navd.crt{long}"\nkey_file = "/k"\n',
    '[solr]\nca_bundle = "/etc/ssl/ca.pem{long}"\n',
    '[solr.embedded]\nkeystore = "~nosuchuser-navd/keystore.p12"\n',
])
def test_a_file_name_the_file_system_refuses_is_no_such_file(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text.replace("{long}", "/x" * 3000))
    with pytest.raises(ConfigError, match=r": no such file$") as excinfo:
        load_config(str(path), environ={})
    assert len(str(excinfo.value)) < len(str(path)) + 300


def test_a_long_value_in_a_config_error_is_redacted_in_one_pass() -> None:
    # found by tests/fuzz (config tables): the error line echoing a 200,000-character `x.x.x...`
    # value ran the URL-userinfo redaction for minutes (each start rescanned the rest of the text)
    with pytest.raises(ConfigError, match=r"^fuzz\.toml: \[cluster\] name: ") as excinfo:
        parse_config({"cluster": {"name": [None, "x." * 100_000, "https://navd:s3cret@solr:8983/solr"]}},
                     source="fuzz.toml", environ={})
    assert "s3cret" not in str(excinfo.value)
    # and the line shows the start of it, not 200 kB
    assert len(str(excinfo.value)) <= MESSAGE_CHARS + 30 and str(excinfo.value).endswith(" characters)")


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
    ('[solr]\nauth = "basic"\nusername = "navd"\n', r"\[solr\] auth: basic auth needs"),
    ('[solr]\nbatch_size = 0\n', r"\[solr\] batch_size: must be an integer >= 1 and <= 1000000, got 0"),
    ('[solr.embedded]\nheap = "lots"\n', r"\[solr.embedded\] heap: 'lots' is not a JVM size"),
    ('[solr.embedded]\nport = 70000\n', r"\[solr.embedded\] port: must be an integer >= 0 and <= 65535, got 70000"),
    ('[hdfs]\nenabled = true\n', r"\[hdfs\] urls: \[hdfs\] is enabled but has no urls"),
    ('[spark]\nevent_log_dirs = 5\n', r"\[spark\] event_log_dirs: expected a list of strings"),
    ('[hive_lineage]\nenabled = true\n', r"\[hive_lineage\] log_paths: \[hive_lineage\] is enabled but has no log_paths"),
    ('[hive_lineage]\nlog_paths = ["hdfs://nn/logs/lineage.log"]\n', r"\[hive_lineage\] log_paths: .* is not local"),
    ('[impala]\nenabled = true\n', r"\[impala\] lineage_dirs: \[impala\] is enabled but has no lineage_dirs"),
    ('[impala]\nlineage_dirs = [""]\n', r"\[impala\] lineage_dirs: every entry must be a directory"),
    ('[impala]\npoll_seconds = 0\n', r"\[impala\] poll_seconds: must be a number > 0"),
    ('[solr]\nverify_tls = "no"\n', r"\[solr\] verify_tls: expected true or false"),
    ('solr = 3\n', r"\[solr\]: expected a table"),
    ('[solr\n', r"not valid TOML"),
    ('[server]\nauth = "kerberos"\n', r'\[server\] keytab: auth = "kerberos" needs the service keytab'),
    ('[server]\nauth = "kerberos"\nkeytab = "/k"\nprincipal = "hive/_HOST"\n',
     r"\[server\] principal: 'hive/_HOST': SPNEGO needs an HTTP/ service principal"),
    ('[server]\nauth = "basic"\nkeytab = "/k"\n', r'\[server\] keytab: set only with auth = "kerberos"'),
    ('[server]\nhost = "0.0.0.0"\nauth = "kerberos"\nkeytab = "/k"\n',
     r"\[server\] cert_file: a server on '0.0.0.0' \(not loopback\) needs TLS"),
    ('[server]\nauth = "kerberos"\nkeytab = "/k"\nkerberos_roles = { "alice@R" = "root" }\n',
     r"\[server\] kerberos_roles: 'alice@R': 'root' is not a role: use viewer, editor, admin"),
    ('[server]\nauth = "kerberos"\nkeytab = "/k"\nkerberos_roles = { " alice@R" = "viewer" }\n',
     r"\[server\] kerberos_roles: ' alice@R': a principal must be non-empty"),
    ('[server]\nauth = "basic"\nkerberos_roles = { "alice@R" = "editor" }\n',
     r'\[server\] kerberos_roles: set only with auth = "kerberos"'),
    ('[server]\nmax_connections = 0\n', r"\[server\] max_connections: must be an integer >= 1"),
    ('[server]\nheader_timeout_seconds = 0\n', r"\[server\] header_timeout_seconds: must be a number > 0"),
    ('[server]\nmax_login_failures = 0\n', r"\[server\] max_login_failures: must be an integer >= 1"),
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
    secret.chmod(0o600)
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


# -- every bad value is one exact line naming the key, never a secret ------------------------

SECRET = "Sup3rSecret"


@pytest.mark.parametrize(("text", "message"), [
    # URLs: port out of range or not numeric, a broken host, a misspelt scheme with credentials
    (b'[solr]\nurl = "http://solr1:99999/solr"\n',
     "[solr] url: 'http://solr1:99999/solr': port '99999' is not a number from 1 to 65535"),
    (b'[solr]\nurl = "http://solr1:80a/solr"\n',
     "[solr] url: 'http://solr1:80a/solr': port '80a' is not a number from 1 to 65535"),
    (b'[solr]\nurl = "http://[::1/solr"\n',
     "[solr] url: 'http://[::1/solr' is not an http(s) URL such as http://solr1:8983/solr"),
    (f'[solr]\nurl = "htps://navd:{SECRET}@solr1.example.com:8983/solr"\n'.encode(),
     "[solr] url: 'htps://navd:***@solr1.example.com:8983/solr' is not an http(s) URL such as "
     "http://solr1:8983/solr"),
    (f'[solr]\nurl = "https://navd:{SECRET}@solr1:8985/solr"\n'.encode(),
     "[solr] url: 'https://navd:***@solr1:8985/solr' must not carry credentials; use auth, username and "
     "password_file"),
    (b'[hdfs]\nurls = ["http://nn1:9870", "http://nn2:0"]\n',
     "[hdfs] urls: 'http://nn2:0': port '0' is not a number from 1 to 65535"),
    (b'[cluster]\ndefault_fs = "hdfs://nameservice1:x"\n',
     "[cluster] default_fs: 'hdfs://nameservice1:x': port 'x' is not a number from 1 to 65535"),
    (b'[hdfs]\ndefault_fs = "hdfs://nameservice1:x"\n',
     "[cluster] default_fs: 'hdfs://nameservice1:x': port 'x' is not a number from 1 to 65535"),
    (b'[yarn]\nurls = ["rm1:8088"]\n',
     "[yarn] urls: 'rm1:8088' is not an http(s) URL such as http://host:port"),
    (b'[spark]\nevent_log_dirs = ["hdfs://nn:99999/spark-logs"]\n',
     "[spark] event_log_dirs: 'hdfs://nn:99999/spark-logs': port '99999' is not a number from 1 to 65535"),
    (b'[linker]\nfs_aliases = ["nn1:123456=hdfs://ns1"]\n',
     "[linker] fs_aliases 'nn1:123456=hdfs://ns1': 'hdfs://nn1:123456': port '123456' is not a number "
     "from 1 to 65535"),
    (b'[hive]\nport = 99999\n', "[hive] port: must be an integer >= 1 and <= 65535, got 99999"),
    # numbers: nan, inf, negative durations, past every sensible bound (and past timedelta's)
    (b'[spark]\npoll_seconds = nan\n', "[spark] poll_seconds: must be a number > 0 and <= 86400, got nan"),
    (b'[spark]\npoll_seconds = -inf\n', "[spark] poll_seconds: must be a number > 0 and <= 86400, got -inf"),
    (b'[hdfs]\ninterval_minutes = -10\n',
     "[hdfs] interval_minutes: must be a number > 0 and <= 527040, got -10"),
    (b'[hive]\ninterval_minutes = inf\n', "[hive] interval_minutes: must be a number > 0 and <= 527040, got inf"),
    (b'[hive]\ntimeout_seconds = -1.5\n', "[hive] timeout_seconds: must be a number > 0 and <= 86400, got -1.5"),
    (b'[yarn]\ninterval_minutes = 1e300\n',
     "[yarn] interval_minutes: must be a number > 0 and <= 527040, got 1e+300"),
    (b'[purge]\nolder_than_days = 1e12\n',
     "[purge] older_than_days: must be a number > 0 and <= 36500, got 1000000000000"),
    (b'[purge]\ninterval_days = nan\n', "[purge] interval_days: must be a number > 0 and <= 366, got nan"),
    (b'[purge]\nruntime_cap_minutes = -1\n',
     "[purge] runtime_cap_minutes: must be a number > 0 and <= 527040, got -1"),
    (b'[daemon]\nstop_timeout_seconds = nan\n',
     "[daemon] stop_timeout_seconds: must be a number > 0 and <= 3600, got nan"),
    (b'[solr]\nbackoff_seconds = -0.5\n', "[solr] backoff_seconds: must be a number >= 0 and <= 3600, got -0.5"),
    (b'[solr]\nretries = -1\n', "[solr] retries: must be an integer >= 0 and <= 100, got -1"),
    (b'[solr]\ntimeout_seconds = ' + b'9' * 400 + b'\n',
     "[solr] timeout_seconds: must be a number > 0 and <= 3600, got inf"),
    (b'[deletions]\nmax_share_percent = nan\n',
     "[deletions] max_share_percent: must be a number > 0 and <= 100, got nan"),
    # text that is not UTF-8: where, and the key on that line
    (b'[cluster]\nname = "prod"\n[solr]\nurl = "http://solr1:8983/solr\xff"\n',
     "[solr] url: not UTF-8 text (byte 0xff at line 4, column 30); save the file as UTF-8"),
    (b'# caf\xe9\n', "not UTF-8 text (byte 0xe9 at line 1, column 6); save the file as UTF-8"),
    # a secret of the wrong type is not echoed
    (f'[solr]\npassword = ["{SECRET}"]\n'.encode(),
     "[solr] password: expected a string, got a value not shown (a secret)"),
])
def test_bad_value_is_one_exact_line_naming_the_key_without_secrets(tmp_path: Path, text: bytes,
                                                                    message: str) -> None:
    path = tmp_path / "navd.toml"
    path.write_bytes(text)
    path.chmod(0o600)
    with pytest.raises(ConfigError) as excinfo:
        load_config(str(path), environ={})
    assert str(excinfo.value) == f"{path}: {message}"
    assert SECRET not in str(excinfo.value)


def test_navd_solr_url_env_is_checked_like_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load_config(None, environ={"NAVD_CONFIG": str(write(tmp_path, "")),
                                   "NAVD_SOLR_URL": f"http://navd:{SECRET}@solr1:99999/solr"})
    assert str(excinfo.value).endswith("NAVD_SOLR_URL: 'http://navd:***@solr1:99999/solr' must not carry "
                                       "credentials; use auth, username and password_file")


def _basic_auth(url: str, password_line: str, security: str = "") -> str:
    return f'[solr]\nurl = "{url}"\nauth = "basic"\nusername = "navd"\n{password_line}\n{security}'


def _secret_file(tmp_path: Path, data: bytes = SECRET.encode(), mode: int = 0o600) -> Path:
    secret = tmp_path / "solr.password"
    secret.write_bytes(data)
    secret.chmod(mode)
    return secret


@pytest.mark.parametrize(("url", "inline", "warnings"), [
    ("https://solr1:8985/solr", False, []),
    ("http://127.0.0.1:8983/solr", False, []),  # loopback: the password never crosses a network
    ("http://solr1:8983/solr", False,
     ["[solr] auth: basic auth over plain http:// sends the password in clear text to solr1; use an https:// url"]),
    ("https://solr1:8985/solr", True,
     ["[solr] password: a password inline in the config file; put it in a file only navd can read and set "
      "[solr] password_file"]),
])
def test_insecure_credentials_are_warned_about(tmp_path: Path, url: str, inline: bool,
                                               warnings: list[str]) -> None:
    line = f'password = "{SECRET}"' if inline else f'password_file = "{_secret_file(tmp_path)}"'
    path = write(tmp_path, _basic_auth(url, line))
    path.chmod(0o600)
    cfg = load_config(str(path), environ={})
    assert cfg.warnings == tuple(f"{path}: {w}" for w in warnings)
    assert cfg.solr.password == SECRET


DEPRECATED_DEFAULT_FS = "[hdfs] default_fs is deprecated and will be removed: set [cluster] default_fs instead"


@pytest.mark.parametrize(("cluster", "hdfs", "default_fs", "warnings"), [
    ("", "", "", []),
    ('default_fs = "hdfs://ns1"', "", "hdfs://ns1", []),
    ("", 'default_fs = "hdfs://ns1"', "hdfs://ns1", [DEPRECATED_DEFAULT_FS]),
    # the old key beside the new one, the same value: read, still warned about
    ('default_fs = "hdfs://ns1"', 'default_fs = "hdfs://ns1"', "hdfs://ns1", [DEPRECATED_DEFAULT_FS]),
])
def test_default_fs_is_a_cluster_key_and_the_old_hdfs_key_is_read_with_a_warning(
        tmp_path: Path, cluster: str, hdfs: str, default_fs: str, warnings: list[str]) -> None:
    path = write(tmp_path, f'[cluster]\n{cluster}\n[hdfs]\nroots = ["/data"]\n{hdfs}\n')
    cfg = load_config(str(path), environ={})
    assert cfg.cluster.default_fs == default_fs
    assert cfg.warnings == tuple(f"{path}: {w}" for w in warnings)
    assert hdfs_settings(cfg).roots == ("/data",)  # the rest of [hdfs] still read


def test_default_fs_set_in_both_places_differently_is_an_error_naming_both(tmp_path: Path) -> None:
    path = write(tmp_path, '[cluster]\ndefault_fs = "hdfs://ns1"\n[hdfs]\ndefault_fs = "hdfs://ns2"\n')
    with pytest.raises(ConfigError) as excinfo:
        load_config(str(path), environ={})
    assert str(excinfo.value) == (f"{path}: [hdfs] default_fs and [cluster] default_fs are both set, to different "
                                  "values; keep only [cluster] default_fs")


@pytest.mark.parametrize(("url", "inline", "message"), [
    ("http://solr1:8983/solr", False,
     "[solr] auth: basic auth over plain http:// sends the password in clear text to solr1; use an https:// "
     'url (refused: [security] insecure_credentials = "refuse")'),
    ("https://solr1:8985/solr", True,
     "[solr] password: a password inline in the config file; put it in a file only navd can read and set "
     '[solr] password_file (refused: [security] insecure_credentials = "refuse")'),
])
def test_insecure_credentials_are_refused_by_the_setting(tmp_path: Path, url: str, inline: bool,
                                                         message: str) -> None:
    line = f'password = "{SECRET}"' if inline else f'password_file = "{_secret_file(tmp_path)}"'
    path = write(tmp_path, _basic_auth(url, line, '[security]\ninsecure_credentials = "refuse"\n'))
    path.chmod(0o600)
    with pytest.raises(ConfigError) as excinfo:
        load_config(str(path), environ={})
    assert str(excinfo.value) == f"{path}: {message}"


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660])
def test_a_config_holding_a_password_that_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = write(tmp_path, _basic_auth("https://solr1:8985/solr", f'password = "{SECRET}"'))
    path.chmod(mode)
    with pytest.raises(ConfigError) as excinfo:
        load_config(str(path), environ={})
    assert str(excinfo.value) == (f"{path}: holds [solr] password but users other than its owner may read it "
                                  f"(mode {mode:04o}): chmod 600 it, or move the password to a password_file "
                                  "only navd can read")
    path.chmod(0o644)  # without a secret in it, a readable config is fine
    path.write_text('[solr]\nurl = "https://solr1:8985/solr"\n')
    assert load_config(str(path), environ={}).warnings == ()


@pytest.mark.parametrize(("data", "mode", "reason"), [
    (SECRET.encode(), 0o644, "users other than its owner may read it (mode 0644): chmod 600 it"),
    (SECRET.encode(), 0o640, "users other than its owner may read it (mode 0640): chmod 600 it"),
    (b"Sup3r\xffSecret", 0o600, "not UTF-8 text"),
])
def test_a_bad_password_file_is_one_line_without_its_content(tmp_path: Path, data: bytes, mode: int,
                                                             reason: str) -> None:
    secret = _secret_file(tmp_path, data, mode)
    path = write(tmp_path, _basic_auth("https://solr1:8985/solr", f'password_file = "{secret}"'))
    with pytest.raises(ConfigError) as excinfo:
        load_config(str(path), environ={})
    assert str(excinfo.value) == f"{path}: [solr] password_file {secret}: {reason}"


def test_hive_password_file_is_read_like_solrs(tmp_path: Path) -> None:
    from navd.extractors.hms.settings import hive_settings

    path = write(tmp_path, f'[hive]\nauth = "LDAP"\npassword_file = "{_secret_file(tmp_path)}"\n')
    cfg = load_config(str(path), environ={})
    assert hive_settings(cfg).password == SECRET and cfg.warnings == ()


def test_kerberos_principal_follows_hadoops_host_rule() -> None:
    from navd.server.kerberos import service_principal

    assert service_principal("HTTP/_HOST", fqdn="Edge1.Example.COM") == "HTTP/edge1.example.com"
    assert service_principal("HTTP/_HOST@EXAMPLE.COM", fqdn="edge1.example.com") == "HTTP/edge1.example.com@EXAMPLE.COM"
    assert service_principal("HTTP/navd.example.com@EXAMPLE.COM") == "HTTP/navd.example.com@EXAMPLE.COM"
    assert service_principal("*") is None and service_principal("") is None  # any HTTP/ principal of the keytab


def test_kerberos_server_config_loads(tmp_path: Path) -> None:
    path = write(tmp_path, '[server]\nauth = "kerberos"\nkeytab = "/etc/navd.keytab"\n')
    server = load_config(str(path), environ={}).server
    assert (server.auth, server.keytab, server.principal) == ("kerberos", "/etc/navd.keytab", "HTTP/_HOST")

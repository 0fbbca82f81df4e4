"""deploy/: the systemd unit verifies and is hardened as promised; the example config is the
config navd loads, and so is the ready config with the server on (basic auth, TLS), which also
serves; a logrotate-moved log file is reopened."""

from __future__ import annotations

import configparser
import json
import os
import subprocess
from pathlib import Path

from navd.config import DaemonConfig, ServerConfig, load_config
from navd.logs import get_logger, setup_logging

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DEPLOY / "navd.service")
    return parser


def test_systemd_analyze_verify_passes() -> None:
    result = subprocess.run(["systemd-analyze", "verify", str(DEPLOY / "navd.service")], capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0 and not result.stdout.strip() and "navd.service" not in result.stderr, result


def test_unit_is_a_notify_service_of_its_own_user_hardened() -> None:
    service = unit()["Service"]
    assert service["Type"] == "notify"
    assert service["User"] == "navd" and service["Group"] == "navd"
    assert service["Restart"] == "on-failure"
    assert service["ExecStart"].endswith("navd run")
    assert service["ExecReload"] == "/bin/kill -HUP $MAINPID"
    for key in ("NoNewPrivileges", "PrivateTmp", "ProtectHome"):
        assert service[key] == "yes", key
    assert service["ProtectSystem"] == "strict"
    assert {service["StateDirectory"], service["LogsDirectory"], service["CacheDirectory"]} == {"navd"}
    # systemd must not kill navd before it has stopped by itself.
    assert float(service["TimeoutStopSec"].rstrip("s")) > DaemonConfig().stop_timeout_seconds


def test_unit_open_file_limit_holds_the_servers_connections_and_no_more_than_it_needs() -> None:
    """LimitNOFILE: room for [server] max_connections and navd's own files (navd refuses to start
    when it cannot hold them), not the 65,536 a flood of connections could fill."""
    from navd.server.connections import RESERVED_DESCRIPTORS

    limit = int(unit()["Service"]["LimitNOFILE"])
    assert ServerConfig().max_connections + RESERVED_DESCRIPTORS <= limit <= 4 * (
        ServerConfig().max_connections + RESERVED_DESCRIPTORS)


def test_example_config_loads_with_the_defaults() -> None:
    config = load_config(str(DEPLOY / "navd.toml"), environ={})
    assert config.daemon == DaemonConfig()
    assert config.server == ServerConfig()
    assert config.purge.interval_days == 7.0


def test_log_file_is_reopened_after_logrotate_moved_it(tmp_path: Path) -> None:
    path = tmp_path / "navd.log"
    setup_logging("auto", "info", file=str(path))
    try:
        get_logger("navd.daemon").info("before rotation")
        path.rename(tmp_path / "navd.log.1")  # what logrotate does (create mode)
        get_logger("navd.daemon").info("after rotation")
    finally:
        setup_logging("json", "info")
    assert [json.loads(line)["event"] for line in (tmp_path / "navd.log.1").read_text().splitlines()] == [
        "before rotation"]
    assert [json.loads(line)["event"] for line in path.read_text().splitlines()] == ["after rotation"]


def server_section(text: str) -> str:
    """deploy/navd.toml's [server] section, up to the next section's header."""
    start = text.index("\n[server]") + 1
    end = text.find("\n[", start)
    return text[start:end + 1 if end >= 0 else len(text)]


def test_example_server_section_loads_with_basic_auth_and_tls(tmp_path: Path) -> None:
    """The `# example` lines of [server], uncommented (certificate paths pointed at files that
    exist here), make a valid config: the server off loopback with basic auth and TLS."""
    text = (DEPLOY / "navd.toml").read_text()
    section = server_section(text)
    for name in ("navd.crt", "navd.key"):
        (tmp_path / name).write_text("PEM")
    lines = [line[2:].replace("/etc/navd/tls", str(tmp_path)) if line.startswith("# ") and "# example" in line
             else line for line in section.splitlines()]
    uncommented = [line for line in lines if "# example" in line]
    kept = [line for line in lines if "# example" not in line and not any(
        line.startswith(key + " ") for key in ("enabled", "host", "auth"))]
    config_file = tmp_path / "navd.toml"
    config_file.write_text("\n".join([kept[0], *uncommented, *kept[1:]]) + "\n")
    server = load_config(str(config_file), environ={}).server
    assert (server.enabled, server.host, server.auth) == (True, "0.0.0.0", "basic")
    assert server.cert_file == str(tmp_path / "navd.crt") and server.port == 7187
    assert server.allowed_hosts == ("navd.example.com",)


def test_example_server_section_loads_with_kerberos_and_tls(tmp_path: Path) -> None:
    """The same with the `# kerberos example` lines in place of basic auth's `auth` line."""
    text = (DEPLOY / "navd.toml").read_text()
    section = server_section(text)
    for name in ("navd.crt", "navd.key"):
        (tmp_path / name).write_text("PEM")
    lines = [line[2:].replace("/etc/navd/tls", str(tmp_path)) if line.startswith("# ") and "example" in line
             else line for line in section.splitlines()]
    uncommented = [line for line in lines if "# kerberos example" in line or (
        "# example" in line and not line.startswith("auth "))]
    kept = [line for line in lines if "example" not in line and not any(
        line.startswith(key + " ") for key in ("enabled", "host", "auth"))]
    config_file = tmp_path / "navd.toml"
    config_file.write_text("\n".join([kept[0], *uncommented, *kept[1:]]) + "\n")
    server = load_config(str(config_file), environ={}).server
    assert (server.enabled, server.host, server.auth) == (True, "0.0.0.0", "kerberos")
    assert (server.keytab, server.principal) == ("/etc/security/keytabs/navd.service.keytab", "HTTP/_HOST")
    assert server.cert_file == str(tmp_path / "navd.crt")
def ready_server_config(tmp_path: Path) -> Path:
    """deploy/navd-server.toml with its certificate and users paths pointed at files made here."""
    from test_server import make_certificate

    make_certificate(tmp_path)
    (tmp_path / "cert.pem").rename(tmp_path / "navd.crt")
    (tmp_path / "key.pem").rename(tmp_path / "navd.key")
    text = (DEPLOY / "navd-server.toml").read_text()
    config = tmp_path / "navd.toml"
    config.write_text(text.replace("/etc/navd/tls", str(tmp_path)).replace("/var/lib/navd", str(tmp_path)))
    return config


def test_ready_server_config_loads_with_the_server_on_basic_auth_and_tls(tmp_path: Path) -> None:
    server = load_config(str(ready_server_config(tmp_path)), environ={}).server
    assert (server.enabled, server.host, server.port, server.auth) == (True, "0.0.0.0", 7187, "basic")
    assert (server.cert_file, server.key_file) == (str(tmp_path / "navd.crt"), str(tmp_path / "navd.key"))
    assert server.users_file == str(tmp_path / "server-users")
    # as shipped: its paths are the ones the comments tell the admin to fill
    text = (DEPLOY / "navd-server.toml").read_text()
    assert 'cert_file = "/etc/navd/tls/navd.crt"' in text and "navd server add-user" in text


def test_ready_server_config_serves_tls_and_refuses_without_a_login(tmp_path: Path) -> None:
    """`navd serve` on the ready file (on 127.0.0.1 and a free port here: tests bind nothing
    else), a user added with `navd server add-user` as its comments say."""
    import requests

    from navd.solr.server import free_port
    from conftest import NAVD, serving

    config = ready_server_config(tmp_path)
    env = {**os.environ, "NAVD_CONFIG": str(config), "NAVD_SOLR_URL": f"http://127.0.0.1:{free_port()}/solr"}
    added = subprocess.run([NAVD, "server", "add-user", "alice"], input="alice password 1\n", env=env, capture_output=True,
                           text=True, timeout=60)
    assert added.returncode == 0 and (tmp_path / "server-users").is_file(), added.stderr
    port = free_port()
    url, cert = f"https://127.0.0.1:{port}", str(tmp_path / "navd.crt")
    with serving(config, url, args=("serve", "--host", "127.0.0.1", "--port", str(port)), env=env, verify=cert):
        assert requests.get(f"{url}/metrics", verify=cert, timeout=30).status_code == 401
        assert requests.get(f"{url}/metrics", verify=cert, auth=("alice", "alice password 1"), timeout=30).status_code == 200

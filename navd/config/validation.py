"""Load-time checks across keys: what one key's type and range cannot say (auth needs its
credentials, fail closed off loopback, files that exist and only navd can read)."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
import stat
from pathlib import Path
from typing import Any

from navd.config.keys import OTHERS_BITS, check_url, field_range
from navd.config.sections import (
    SPARK_JOB_OWN_PROPERTIES,
    NavdConfig,
    OpenLineageConfig,
    ServerConfig,
    SparkJobsConfig,
)
from navd.errors import ConfigError


def shown_name(name: str) -> str:
    """A file name for an error line: cut at 200 characters (a name can be any length)."""
    return name if len(name) <= 200 else name[:200] + "..."


def is_file(name: str) -> bool:
    """Whether `name` (`~` expanded) is a regular file. Path.is_file returns False for a missing
    file but raises for a name the file system refuses (ENAMETOOLONG): no such file either."""
    try:
        return Path(name).expanduser().is_file()
    except (OSError, RuntimeError):  # RuntimeError: `~user` of no such user
        return False


def check_owner_only(label: str, path: str | Path, mode: int) -> None:
    """Refuse a file that holds a secret (a password, a private key, a keystore, a keytab, the
    users' hashes) when users other than its owner may read or write it: one line naming
    `label`, the file and its mode, never what it holds."""
    if mode & OTHERS_BITS:
        raise ConfigError(f"{label} {path}: users other than its owner may read it "
                          f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it")


def check_private_file(label: str, path: str | Path) -> None:
    """`check_owner_only` for a file named in the config, which must exist."""
    try:
        mode = Path(path).expanduser().stat().st_mode
    except OSError as exc:
        raise ConfigError(f"{label} {path}: {exc.strerror}") from None
    check_owner_only(label, path, mode)


def is_loopback_host(host: str) -> bool:
    """Traffic to this host never leaves the machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: one label of a DNS name (RFC 1123; `_` as resolvers take it)
_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


def canonical_host(value: str) -> str | None:
    """A host name lowercased without a trailing dot, or an IP address as `ipaddress` writes it
    (IPv6 without brackets, an IPv4-mapped IPv6 address as its IPv4 one); None for anything
    else: a port, a scheme, a path, spaces, a wildcard, non-ASCII text."""
    if not value.isascii():
        return None
    bare = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        mapped = getattr(address, "ipv4_mapped", None)
        return str(mapped or address)
    name = value.lower().removesuffix(".")
    if not name or len(name) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in name.split(".")):
        return None
    return name


def validate_config(config: NavdConfig, source: str) -> None:
    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(f"{source}: {key}: {message}")

    solr = config.solr
    try:
        if solr.url:
            check_url("[solr] url", solr.url)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if solr.auth == "basic" and not (solr.username and solr.password):
        raise fail("[solr] auth", "basic auth needs username and password (or password_file)")
    if solr.auth != "basic" and (solr.username or solr.password):
        raise fail("[solr] username", 'set only with auth = "basic"')
    if (solr.keytab or solr.principal) and solr.auth != "kerberos":
        raise fail("[solr] keytab" if solr.keytab else "[solr] principal", 'set only with auth = "kerberos"')
    if solr.ca_bundle and not is_file(solr.ca_bundle):
        raise fail("[solr] ca_bundle", f"{shown_name(solr.ca_bundle)}: no such file")
    if solr.embedded.keystore and not is_file(solr.embedded.keystore):
        raise fail("[solr.embedded] keystore", f"{shown_name(solr.embedded.keystore)}: no such file")
    if solr.embedded.keystore_password_file and not solr.embedded.keystore:
        raise fail("[solr.embedded] keystore_password_file", "set only with keystore")
    if not _is_heap_size(solr.embedded.heap):
        raise fail("[solr.embedded] heap", f"{solr.embedded.heap!r} is not a JVM size such as 512m or 2g")
    if not config.cluster.name or config.cluster.name != config.cluster.name.strip():
        raise fail("[cluster] name", "must be a non-empty name without surrounding spaces")
    try:
        if config.cluster.default_fs:
            check_url("[cluster] default_fs", config.cluster.default_fs, schemes=None, example="hdfs://nameservice1")
        _validate_server(config.server)
        _validate_openlineage(config.openlineage)
        _validate_spark_jobs(config.spark_jobs)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _validate_server(server: ServerConfig) -> None:
    """Fail closed: nothing leaves loopback without authentication and TLS."""
    if not server.host or server.host != server.host.strip():
        raise ConfigError("[server] host: must be a host name or address without surrounding spaces")
    if server.auth == "kerberos":
        # The file itself (exists, only navd's user reads it) is checked when the server starts
        # (navd.server.kerberos): other users run the CLI with this config and cannot read it.
        if not server.keytab:
            raise ConfigError('[server] keytab: auth = "kerberos" needs the service keytab (e.g. '
                              '/etc/security/keytabs/navd.service.keytab, HTTP/ principals)')
        principal = server.principal.strip()
        if principal not in ("", "*") and (not principal.startswith("HTTP/") or principal != server.principal):
            raise ConfigError(f"[server] principal: {server.principal!r}: SPNEGO needs an HTTP/ service "
                              'principal (HTTP/_HOST, HTTP/host.example.com@REALM), or "*" for any in the keytab')
    elif server.keytab:
        raise ConfigError('[server] keytab: set only with auth = "kerberos"')
    for name in server.allowed_hosts:
        if canonical_host(name) is None:
            raise ConfigError(f"[server] allowed_hosts: {name!r} is not a host name or IP address (no scheme, "
                              'port or wildcard), e.g. "navd.example.com" or "10.0.0.5"')
    loopback = is_loopback_host(server.host)
    if server.auth == "none" and not loopback:
        raise ConfigError(f'[server] auth: "none" is allowed only on a loopback host, not {server.host!r}: '
                          'set auth = "basic" or "kerberos" (and cert_file/key_file)')
    if bool(server.cert_file) != bool(server.key_file):
        raise ConfigError("[server] cert_file: TLS needs both cert_file and key_file")
    for key, value in (("cert_file", server.cert_file), ("key_file", server.key_file)):
        if value and not is_file(value):
            raise ConfigError(f"[server] {key}: {shown_name(value)}: no such file")
    if not loopback and not server.cert_file:
        raise ConfigError(f"[server] cert_file: a server on {server.host!r} (not loopback) needs TLS: "
                          "set cert_file and key_file, or host = \"127.0.0.1\"")
    _validate_kerberos_roles(server)


def _validate_kerberos_roles(server: ServerConfig) -> None:
    from navd.server.roles import ROLE_NAMES  # pure; the server package imports this module

    if server.kerberos_roles and server.auth != "kerberos":
        raise ConfigError('[server] kerberos_roles: set only with auth = "kerberos" (basic users have their role '
                          "in users_file: navd server set-role NAME ROLE)")
    for principal, role in server.kerberos_roles.items():
        if not principal or principal != principal.strip():
            raise ConfigError(f"[server] kerberos_roles: {principal!r}: a principal must be non-empty, without "
                              "surrounding spaces")
        if role not in ROLE_NAMES:
            raise ConfigError(f"[server] kerberos_roles: {principal!r}: {role!r} is not a role: use "
                              f"{', '.join(ROLE_NAMES)}")


def with_server(config: NavdConfig, **changes: Any) -> NavdConfig:
    """`config` with `[server]` keys replaced (`navd serve --host/--port/--auth`, the quickstart's
    server), checked as the loader checks the file: ranges, then fail closed off loopback."""
    server = dataclasses.replace(config.server, **changes)
    for key in changes:
        if key in ("port", "max_rows", "max_depth", "max_nodes"):
            field_range(ServerConfig, key).check(f"[server] {key}", getattr(server, key))
    _validate_server(server)
    return dataclasses.replace(config, server=server)


def _validate_openlineage(openlineage: OpenLineageConfig) -> None:
    for namespace, cluster in openlineage.namespaces.items():
        if not namespace or namespace != namespace.strip():
            raise ConfigError(f"[openlineage] namespaces: {namespace!r}: a namespace must be non-empty, "
                              "without surrounding spaces")
        if not cluster or cluster != cluster.strip():
            raise ConfigError(f"[openlineage] namespaces: {namespace!r}: the cluster must be a non-empty name "
                              f"without surrounding spaces, got {cluster!r}")


def _validate_spark_jobs(jobs: SparkJobsConfig) -> None:
    """What can be told at load; the Hadoop configuration itself is checked when a job starts on
    YARN (another command may never start one)."""
    check_spark_master("[spark_jobs] master", jobs.master)
    if jobs.hadoop_conf_dir and not os.path.isabs(os.path.expanduser(jobs.hadoop_conf_dir)):
        raise ConfigError(f"[spark_jobs] hadoop_conf_dir: {jobs.hadoop_conf_dir!r} is not an absolute path "
                          "(e.g. /etc/hadoop/conf)")
    if jobs.python != jobs.python.strip():
        raise ConfigError(f"[spark_jobs] python: {jobs.python!r} has surrounding spaces")
    for key, value in jobs.conf.items():
        if not key.startswith("spark.") or key != key.strip():
            raise ConfigError(f"[spark_jobs] conf: {key!r} is not a Spark property (spark.*), e.g. "
                              '"spark.executor.memory" = "2g"')
        if key in SPARK_JOB_OWN_PROPERTIES:
            raise ConfigError(f"[spark_jobs] conf: {key} is set by navd: use "
                              + ("[spark_jobs] master or --master" if key == "spark.master" else
                                 "[spark_jobs] python" if key == "spark.pyspark.python" else
                                 "nothing (each job names itself)"))
        if value != value.strip() or not value:
            raise ConfigError(f"[spark_jobs] conf: {key}: {value!r} is empty or has surrounding spaces")


def check_spark_master(label: str, master: str) -> None:
    """A Spark master URL as Spark takes it: local, local[N], local[*], yarn or scheme://..."""
    if not re.fullmatch(r"local(\[(\*|[1-9][0-9]*)(,[0-9]+)?\])?|yarn|[a-z][a-z0-9+.-]*://\S+", master):
        raise ConfigError(f"{label}: {master!r} is not a Spark master: local[*], local[N], yarn or "
                          "spark://host:port")


def _is_heap_size(value: str) -> bool:
    return len(value) >= 2 and value[:-1].isdigit() and value[-1].lower() in "kmg"

"""A real MIT Kerberos KDC of its own (Debian's krb5-kdc), for the server's SPNEGO tests.

Everything lives in its home: krb5.conf and kdc.conf (pointed at by KRB5_CONFIG and
KRB5_KDC_PROFILE in `env`, never /etc), one database per realm (`kdb5_util create -s`), the
stash, the log. One krb5kdc process serves every realm (`-r` each), listening on 127.0.0.1 only,
TCP and UDP on one port. Principals come from `kadmin.local` (no kadmind), keytabs from `ktadd
-norandkey` (so several keytabs of one principal stay valid together), tickets from `kinit -k`
into a ccache the caller names.

krb5.conf turns off what would make a test depend on DNS: `rdns = false` and
`dns_canonicalize_hostname = false`, so `HTTP@localhost` is `HTTP/localhost@<default realm>`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from navd.jvm import run_tool
from navd.logs import get_logger
from navd.process import ManagedProcess
from navd_devstack.errors import DevServiceError
from navd_devstack.service import start_listening

log = get_logger("navd_devstack.kdc")
#: where Debian puts the KDC's tools (not on a non-root PATH)
SBIN = ("/usr/sbin", "/sbin")
PACKAGES = "libkrb5-dev krb5-kdc krb5-admin-server krb5-user"


def krb5_tool(name: str) -> str:
    """A krb5 command (krb5kdc, kdb5_util, kadmin.local, kinit, klist): PATH, then the sbin dirs.
    Missing: an error naming the Debian packages (the tests fail on it, never skip)."""
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN))
    if not found:
        raise DevServiceError(f"{name} not found: the test KDC needs MIT Kerberos (Debian: {PACKAGES}; "
                              f"`make setup-test` installs them as root)")
    return found


class DevKdc:
    """An MIT KDC for `realms` (the first is the default realm of its krb5.conf) on `port`."""

    def __init__(self, home: Path, port: int, realms: tuple[str, ...] = ("NAVD.TEST",), *,
                 max_life: str = "1h", clockskew_seconds: int = 300) -> None:
        """`max_life` (a krb5 duration, e.g. "6s") bounds every ticket; with a short one and a
        small `clockskew_seconds` (krb5's allowance past a ticket's end, 300 by default) a test sees
        tickets expire, and clients renew them, within seconds."""
        if not realms:
            raise ValueError("a KDC needs at least one realm")
        self.home = home.expanduser().resolve()
        self.port = port
        self.realms = realms
        self.max_life = max_life
        self.clockskew_seconds = clockskew_seconds
        self.process = ManagedProcess("krb5kdc", self.home, "krb5kdc", DevServiceError)

    @property
    def realm(self) -> str:
        return self.realms[0]

    @property
    def krb5_conf(self) -> Path:
        return self.home / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.home / "kdc.conf"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "krb5kdc.log"

    @property
    def env(self) -> dict[str, str]:
        """What a process needs to use this KDC and nothing else: its krb5.conf and kdc.conf, and
        a replay cache in the home (MIT's default is in /var/tmp)."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf),
                "KRB5RCACHEDIR": str(self.home / "rcache")}

    def _environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
        return {**base, **self.env, **(extra or {})}

    def _write_config(self) -> None:
        realms = "".join(f"  {realm} = {{\n    kdc = 127.0.0.1:{self.port}\n  }}\n" for realm in self.realms)
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"  default_realm = {self.realm}\n"
            "  dns_lookup_realm = false\n  dns_lookup_kdc = false\n"
            "  rdns = false\n  dns_canonicalize_hostname = false\n"
            "  udp_preference_limit = 1\n"  # TCP: the readiness check is the TCP port
            f"  ticket_lifetime = {self.max_life}\n  forwardable = false\n"
            f"  clockskew = {self.clockskew_seconds}\n"
            f"[realms]\n{realms}"
            f"[domain_realm]\n  localhost = {self.realm}\n")
        databases = "".join(
            f"  {realm} = {{\n    database_name = {self.home / 'db' / realm / 'principal'}\n"
            f"    key_stash_file = {self.home / 'db' / realm / 'stash'}\n"
            f"    acl_file = {self.home / 'kadm5.acl'}\n"
            f"    max_life = {self.max_life}\n    max_renewable_life = 0\n  }}\n" for realm in self.realms)
        self.kdc_conf.write_text(
            "[kdcdefaults]\n"
            f"  kdc_listen = 127.0.0.1:{self.port}\n  kdc_tcp_listen = 127.0.0.1:{self.port}\n"
            f"[realms]\n{databases}"
            f"[logging]\n  kdc = FILE:{self.home / 'logs' / 'kdc.log'}\n"
            f"  default = FILE:{self.home / 'logs' / 'krb5.log'}\n")
        (self.home / "kadm5.acl").write_text("")

    def _create_databases(self) -> None:
        for realm in self.realms:
            directory = self.home / "db" / realm
            if (directory / "principal").exists():
                continue
            directory.mkdir(parents=True, exist_ok=True)
            # The master password is only ever in the stash; nobody types it.
            run_tool([krb5_tool("kdb5_util"), "-r", realm, "create", "-s", "-W", "-P", secrets.token_urlsafe(24)],
                     what=f"kdb5_util create ({realm})", error=DevServiceError, env=self._environ())

    def start(self, timeout: float = 60.0) -> None:
        """Write the configuration, create the databases, start krb5kdc; ready when it listens."""
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)
        (self.home / "rcache").mkdir(mode=0o700, exist_ok=True)
        self._write_config()
        self._create_databases()
        start_listening(self.process, self._spawn, self.port, what="the KDC", timeout=timeout,
                        log_file=self.log_file)

    def _spawn(self) -> subprocess.Popen[bytes]:
        # -n: stay in the foreground (ManagedProcess keeps it); -P in the home puts the home in
        # its command line, which is how ManagedProcess tells it from another KDC.
        cmd = [krb5_tool("krb5kdc"), "-n", "-P", str(self.home / "krb5kdc.pid")]
        for realm in self.realms:
            cmd += ["-r", realm]
        proc = self.process.spawn(cmd, log_file=self.log_file, record={"port": self.port}, env=self._environ(),
                                  umask=0o077)
        log.info("starting the KDC", pid=proc.pid, port=self.port, realms=",".join(self.realms), home=str(self.home))
        return proc

    def stop(self) -> bool:
        return self.process.stop(timeout=10)

    def kadmin(self, query: str, realm: str | None = None) -> str:
        return run_tool([krb5_tool("kadmin.local"), "-r", realm or self.realm, "-q", query],
                        what=f"kadmin.local {query.split()[0]}", error=DevServiceError, env=self._environ())

    def add_principal(self, principal: str) -> str:
        """Add `principal` (random key; `NAME@REALM`, the default realm when none), return its full name."""
        name, _, realm = principal.partition("@")
        realm = realm or self.realm
        self.kadmin(f"addprinc -randkey {name}@{realm}", realm)
        return f"{name}@{realm}"

    def keytab(self, path: Path, *principals: str) -> Path:
        """A keytab of `principals` (already added) at `path`, mode 0600."""
        path.parent.mkdir(parents=True, exist_ok=True)
        for principal in principals:
            realm = principal.partition("@")[2] or self.realm
            self.kadmin(f"ktadd -k {path} -norandkey {principal}", realm)
        path.chmod(0o600)
        return path

    def kinit(self, principal: str, keytab: Path, ccache: Path) -> dict[str, str]:
        """A ticket for `principal` from its keytab into `ccache`; the environment a client
        needs to use it (this KDC's config and KRB5CCNAME)."""
        env = self._environ({"KRB5CCNAME": f"FILE:{ccache}"})
        run_tool([krb5_tool("kinit"), "-k", "-t", str(keytab), principal], what=f"kinit {principal}",
                 error=DevServiceError, env=env)
        return {**self.env, "KRB5CCNAME": f"FILE:{ccache}"}

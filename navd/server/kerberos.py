"""`[server] auth = "kerberos"`: SPNEGO (RFC 4559) on navd's server, as Hadoop's web consoles do.

A client sends `Authorization: Negotiate <base64 GSS-API token>`; navd accepts it with the
service keys of `[server] keytab` (MIT krb5 through python-gssapi, the binding requests-gssapi
already uses), answers the mutual-authentication token in `WWW-Authenticate: Negotiate <base64>`,
and the client's principal (`alice@EXAMPLE.COM`) is the request's user. Kerberos tokens complete
in one round trip; a mechanism that needs more (NTLM through SPNEGO) is refused.

`[server] principal`: the service principal to accept for; `_HOST` in it becomes this host's
fully qualified name, as in Hadoop's `HTTP/_HOST@REALM` (the default is `HTTP/_HOST`, the default
realm of krb5.conf); `*` or empty accepts any `HTTP/` principal of the keytab, as Hadoop's
`hadoop.http.authentication.kerberos.principal = *` does (a host behind several names).

The keytab is named in GSS-API's credential store (gss_acquire_cred_from), not through
KRB5_KTNAME, so nothing process-wide changes and the Solr/WebHDFS clients keep their own
tickets.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
import socket
import stat
from pathlib import Path
from typing import Any

from navd.config import ServerConfig, check_owner_only
from navd.errors import ConfigError
from navd.logs import get_logger

log = get_logger("navd.server")
#: what `[server] principal` spells to accept any HTTP/ principal of the keytab
ANY_PRINCIPALS = ("", "*")
SERVICE_PREFIX = "HTTP/"
#: a SPNEGO token of a Kerberos ticket is a few kilobytes (a PAC included); more is not one
MAX_TOKEN_BYTES = 64 * 1024


class Refused(Exception):
    """A token not accepted: the one line to log (no token, no key material)."""


def service_principal(configured: str, fqdn: str | None = None) -> str | None:
    """The principal to accept as, `_HOST` filled in with this host's lowercase FQDN (Hadoop's
    rule); None for any HTTP/ principal of the keytab."""
    if configured.strip() in ANY_PRINCIPALS:
        return None
    if "_HOST" in configured:
        configured = configured.replace("_HOST", (fqdn or socket.getfqdn()).lower())
    return configured


def check_keytab(path: str) -> Path:
    """The keytab navd will read: exists, is readable by navd, and by nobody else (it holds the
    service's keys: whoever reads it can pose as the server). One line naming the key otherwise."""
    keytab = Path(path).expanduser()
    try:
        mode = keytab.stat().st_mode
    except FileNotFoundError:
        raise ConfigError(f"[server] keytab {keytab}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"[server] keytab {keytab}: cannot read it: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"[server] keytab {keytab}: not a regular file")
    if not os.access(keytab, os.R_OK):
        raise ConfigError(f"[server] keytab {keytab}: navd's user cannot read it")
    check_owner_only("[server] keytab", keytab, mode)
    return keytab


@dataclasses.dataclass(frozen=True)
class Accepted:
    user: str  # the client's principal, e.g. alice@EXAMPLE.COM
    token: bytes  # the mutual-authentication token for WWW-Authenticate (may be empty)


class Acceptor:
    """The server's side of SPNEGO: its credentials acquired once, at start (fail closed), a
    fresh GSS-API context per request (HTTP carries no context from one request to the next)."""

    def __init__(self, server: ServerConfig) -> None:
        try:
            import gssapi
        except ImportError:
            raise ConfigError('[server] auth = "kerberos" needs the gssapi package '
                              "(pip install 'navd[kerberos]'; it builds against MIT krb5's libkrb5-dev)") from None
        self._gssapi: Any = gssapi
        keytab = check_keytab(server.keytab)
        self.principal = service_principal(server.principal)
        try:
            name = (gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
                    if self.principal is not None else None)
            self.credentials = gssapi.Credentials(name=name, usage="accept", store={"keytab": str(keytab)})
        except gssapi.exceptions.GSSError as exc:
            key = "principal" if self.principal is not None else "keytab"
            raise ConfigError(f"[server] {key}: cannot accept as {self.principal or 'any HTTP/ principal'} "
                              f"with {keytab}: {_gss_message(exc)}") from None

    def accept(self, header_value: str) -> Accepted:
        """The user of an `Authorization: Negotiate <token>` value; Refused otherwise."""
        gssapi = self._gssapi
        encoded = header_value.strip()
        if not encoded:
            raise Refused("no token after Negotiate")
        if len(encoded) > MAX_TOKEN_BYTES * 4 // 3 + 4:
            raise Refused(f"token larger than {MAX_TOKEN_BYTES} bytes")
        try:
            token = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise Refused("token is not base64") from None
        try:
            context = gssapi.SecurityContext(creds=self.credentials, usage="accept")
            answer = context.step(token) or b""
            if not context.complete:
                raise Refused("the mechanism needs more than one round trip (only Kerberos is accepted)")
            target = str(context.target_name) if context.target_name is not None else ""
            user = str(context.initiator_name)
        except gssapi.exceptions.GSSError as exc:
            raise Refused(_gss_message(exc)) from None
        if self.principal is None and not target.startswith(SERVICE_PREFIX):
            raise Refused(f"ticket for {target or 'an unknown service'}, not an {SERVICE_PREFIX} principal")
        return Accepted(user=user, token=answer)


def _gss_message(exc: Exception) -> str:
    """GSS-API's message on one line (it names principals, never keys): the mechanism's (minor)
    one when there is one, as the major status is mostly "Unspecified GSS failure"."""
    text = " ".join(str(exc).split())
    major, sep, minor = text.partition(", Minor (")
    if sep and "): " in minor and minor.split("): ", 1)[1].strip():
        text = minor.split("): ", 1)[1]
    return text[:300] or type(exc).__name__

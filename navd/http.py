"""navd's one HTTP session factory: the `requests` sessions its clients of Solr, WebHDFS and the
ResourceManager talk through, made the same way from each section's `auth` settings.

One place decides how a client authenticates (none, basic, or SPNEGO through navd.kerberos, whose
client keytab renews tickets as they end), how many pooled connections it keeps (a client that
lists or writes from several threads keeps one per thread) and whether the environment's proxy,
netrc and CA-bundle settings apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeVar

import requests

from navd.kerberos import spnego_auth

__all__ = ["http_session"]

SessionT = TypeVar("SessionT", bound=requests.Session)


def http_session(section: str, *, auth: Literal["none", "insecure", "basic", "kerberos"] | str = "none",
                 username: str = "", password: str = "", keytab: str = "", principal: str = "",
                 verify: bool | str = True, pool_size: int = 16, trust_env: bool = True,
                 headers: Mapping[str, str] | None = None,
                 session_class: type[SessionT] = requests.Session) -> SessionT:  # type: ignore[assignment]
    """A session for the client `section` names ("[solr]", "[hdfs]", "[yarn]": errors name it).

    `auth`: "basic" sends `username`/`password`; "kerberos" SPNEGO with `keytab`/`principal`
    (raises ConfigError without the kerberos extra, KerberosError when the keytab gives nothing);
    anything else sends no credentials ("insecure" WebHDFS names its user in the URL).
    `trust_env=False` skips the proxy/netrc/CA lookups in the environment on every request (the
    Solr client: its address, TLS and credentials come from its section only)."""
    session = session_class()
    session.trust_env = trust_env
    adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.verify = verify
    if headers:
        session.headers.update(headers)
    if auth == "basic":
        session.auth = (username, password)
    elif auth == "kerberos":
        session.auth = spnego_auth(keytab=keytab, principal=principal, section=section)
    return session

"""Kerberos (SPNEGO) for navd's HTTP clients: the one place their GSS-API credentials come from.

With a client keytab (`[solr] keytab`, optionally `principal`) navd never holds a ticket of its
own making: MIT krb5's GSS-API gets the initial ticket from the keytab into a per-process memory
cache when a request first needs one, and gets a new one when it nears its end (krb5 >= 1.11,
"client keytab" initiator credentials), so a daemon running for months outlives every ticket
without a kinit cron job. Without a keytab the user's ticket cache (kinit, KRB5CCNAME) is used
as is; an expired or missing ticket then fails the request with one line saying what to do.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from navd.config import check_owner_only
from navd.errors import ConfigError, KerberosError

__all__ = ["spnego_auth"]


def spnego_auth(*, keytab: str = "", principal: str = "", section: str = "[solr]") -> Any:
    """A requests auth object for SPNEGO (requests-gssapi), with keytab-backed credentials when
    `keytab` is set. Its `failure` says why the last SPNEGO step failed ("" when it did not):
    requests-gssapi then hands back the server's 401 as is, and the caller names the cause.
    Raises ConfigError without the kerberos extra, KerberosError (one line) when the keytab gives
    no credentials."""
    try:
        import gssapi  # noqa: PLC0415 - optional extra
        from requests_gssapi import OPTIONAL, HTTPSPNEGOAuth  # noqa: PLC0415
        from requests_gssapi.exceptions import SPNEGOExchangeError  # noqa: PLC0415
    except ImportError:
        raise ConfigError(f'{section} auth = "kerberos" needs the requests-gssapi package '
                          "(pip install 'navd[kerberos]')") from None
    # A memory cache of this process alone: no file of tickets to protect, none shared with
    # (or clobbered by) a kinit of the same user; one per keytab and principal, so two configs in
    # one process never see each other's tickets.
    cache = hashlib.sha256(f"{section}\0{keytab}\0{principal}".encode()).hexdigest()[:16]
    store = {"client_keytab": os.path.expanduser(keytab), "ccache": f"MEMORY:navd-{os.getpid()}-{cache}"}
    name = gssapi.Name(principal, gssapi.NameType.kerberos_principal) if principal else None

    def acquire() -> Any:
        try:
            return gssapi.Credentials(name=name, usage="initiate", store=store)
        except gssapi.exceptions.GSSError as exc:
            raise KerberosError(f"{section} keytab {keytab}: no Kerberos credentials"
                                f"{' for ' + principal if principal else ''}: {gss_reason(exc)}") from None

    class NavdSPNEGOAuth(HTTPSPNEGOAuth):  # type: ignore[misc,valid-type]
        failure = ""

        def generate_request_header(self, response: Any, host: str, is_preemptive: bool = False) -> str:
            if keytab:
                # Acquired anew for each exchange: MIT krb5 refreshes a client-keytab ticket
                # nearing its end when credentials are acquired, never inside a handle already
                # held (measured: a handle kept past its ticket's end fails, "Ticket expired").
                self.creds = acquire()
            try:
                header = str(super().generate_request_header(response, host, is_preemptive))
            except SPNEGOExchangeError as exc:
                self.failure = gss_reason(exc)
                raise
            self.failure = ""
            return header

        def handle_other(self, response: Any) -> Any:
            # A refusal carrying no server token (a 404 or 403 after the session's cookie
            # replaced SPNEGO) is the caller's to report: requests-gssapi would log every one at
            # ERROR as "Mutual authentication unavailable". With a token, it is checked as before.
            if not response.ok and "negotiate" not in response.headers.get("www-authenticate", "").lower():
                return response
            return super().handle_other(response)

    if keytab:
        _check_keytab_mode(keytab, section)
        acquire()  # a keytab that gives nothing fails here, at start, as one line
    return NavdSPNEGOAuth(mutual_authentication=OPTIONAL)


def _check_keytab_mode(keytab: str, section: str) -> None:
    """A client keytab is a password in another form: refused when others may read it (a missing
    one is left to GSS-API, which names what it lacks)."""
    try:
        mode = os.stat(os.path.expanduser(keytab)).st_mode
    except OSError:
        return
    check_owner_only(f"{section} keytab", keytab, mode)


def gss_reason(exc: BaseException) -> str:
    """A GSS-API failure as one line: the mechanism's (minor) message, e.g. "Ticket expired", after
    the major one unless that says only "Unspecified GSS failure"."""
    message = getattr(exc, "gen_message", None)
    text = str(message() if callable(message) else exc)
    major, _, minor = text.partition(", Minor (")

    def clean(part: str) -> str:
        # drop the "Major (851968): " code prefix; MIT's SPNEGO messages may end in a NUL
        return " ".join(part.split("): ", 1)[-1].replace("\x00", " ").split()).rstrip(".")[:300]

    if not minor:
        return clean(major)
    if "Unspecified GSS failure" in major:
        return clean(minor)
    return f"{clean(major)} ({clean(minor)})"

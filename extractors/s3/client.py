"""The S3 client of the extractor: boto3, with credentials navd reads itself.

Credentials come from `[s3] credentials_file` (an AWS shared credentials file, 0600, section
`[s3] profile`) or from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optionally
AWS_SESSION_TOKEN), and are handed to boto3 explicitly. boto3's own provider chain is not used:
it would also try the EC2/ECS metadata endpoints, config files of the user running navd and
SSO caches, so what navd authenticates with would depend on the host, not on its config. The
secret key and token live in the botocore client only; navd logs neither (navd.logs keeps
botocore's request logging, which shows signed headers, at WARNING).

Every HTTP request the client sends is counted (`RequestCounter`): the runs report it, and the
benchmark compares it with a raw listing.
"""

from __future__ import annotations

import configparser
import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from navd.config import read_secret
from navd.errors import ConfigError

from .settings import S3Config

#: what S3-compatible stores accept when no region is configured
DEFAULT_REGION = "us-east-1"


@dataclasses.dataclass(frozen=True)
class S3Credentials:
    access_key: str
    secret_key: str = dataclasses.field(repr=False)
    session_token: str = dataclasses.field(default="", repr=False)
    #: where they came from, for messages ("[s3] credentials_file /etc/navd/s3 [default]", "the environment")
    origin: str = ""


def parse_credentials_file(text: str, profile: str, origin: str) -> S3Credentials:
    """An AWS shared credentials file's `profile` section; ConfigError naming the file and the
    missing key, never a value."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        # the parser's message quotes the offending line, which may hold the secret: not shown
        raise ConfigError(f"{origin}: not an AWS credentials file (INI sections and key = value lines): "
                          f"{type(exc).__name__}") from None
    if not parser.has_section(profile):
        raise ConfigError(f"{origin}: no [{profile}] section (set [s3] profile to one of: "
                          f"{', '.join(parser.sections()) or 'none'})")
    section = parser[profile]
    missing = [key for key in ("aws_access_key_id", "aws_secret_access_key") if not section.get(key, "").strip()]
    if missing:
        raise ConfigError(f"{origin} [{profile}]: no {' and no '.join(missing)}")
    return S3Credentials(section["aws_access_key_id"].strip(), section["aws_secret_access_key"].strip(),
                         section.get("aws_session_token", "").strip(), f"{origin} [{profile}]")


def resolve_credentials(settings: S3Config, environ: Mapping[str, str] | None = None) -> S3Credentials:
    """The credentials of `[s3]`: its credentials file, else the environment; ConfigError when
    neither has them (navd never falls back to anonymous requests or a host's instance role)."""
    if settings.credentials_file:
        label = "[s3] credentials_file"
        text = read_secret(settings.credentials_file, label, "navd")
        return parse_credentials_file(text, settings.profile, f"{label} {settings.credentials_file}")
    env = os.environ if environ is None else environ
    access, secret = env.get("AWS_ACCESS_KEY_ID", "").strip(), env.get("AWS_SECRET_ACCESS_KEY", "").strip()
    if not access or not secret:
        raise ConfigError("[s3] credentials_file: not set, and AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are "
                          "not both in the environment: give navd the store's credentials one of these ways")
    return S3Credentials(access, secret, env.get("AWS_SESSION_TOKEN", "").strip(), "the environment")


class RequestCounter:
    """Counts the HTTP requests a botocore client sends (retries included)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, **_: Any) -> None:
        self.count += 1


def make_client(settings: S3Config, credentials: S3Credentials, *, max_pool: int = 10) -> tuple[Any, RequestCounter]:
    """A boto3 S3 client for `[s3]` and the counter of its requests."""
    import boto3  # noqa: PLC0415 - imported when an S3 run starts, not with navd
    from botocore.config import Config  # noqa: PLC0415

    config = Config(
        s3={"addressing_style": "path" if settings.path_style else "auto"},
        retries={"mode": "standard", "max_attempts": 4},
        connect_timeout=min(settings.timeout_seconds, 30.0), read_timeout=settings.timeout_seconds,
        max_pool_connections=max_pool, user_agent_extra="navd",
        # AWS's integrity checksums on every request: not understood by every S3-compatible store,
        # and listings carry no payload to check
        request_checksum_calculation="when_required", response_checksum_validation="when_required")
    session = boto3.session.Session(aws_access_key_id=credentials.access_key,
                                    aws_secret_access_key=credentials.secret_key,
                                    aws_session_token=credentials.session_token or None,
                                    region_name=settings.region or DEFAULT_REGION)
    client = session.client("s3", endpoint_url=settings.endpoint_url or None, config=config,
                            verify=settings.ca_bundle or None)
    counter = RequestCounter()
    client.meta.events.register("before-send.s3", counter)
    return client, counter

"""The `[s3]` config section: the buckets and prefixes the S3 extractor lists, and the store."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, check_url, number, setting
from navd.errors import ConfigError
from navd.extractors import check_section
from navd.names import S3_SCHEMES, InvalidName, s3_qualified_name

SECTION = "s3"


@dataclasses.dataclass(frozen=True, slots=True)
class S3Root:
    """One place to list: a bucket and a key prefix in it ("" for the whole bucket, else ending
    with '/', so `warehouse` does not also take `warehouse2/`)."""

    bucket: str
    prefix: str

    @property
    def qualified_name(self) -> str:
        """The element the listing hangs under: the bucket (`s3a://b/`) or the prefix's directory."""
        return s3_qualified_name(self.bucket, self.prefix)


def parse_root(text: str, label: str = "[s3] roots") -> S3Root:
    """`s3a://bucket/prefix` (or `s3://`, `s3n://`) -> S3Root; ConfigError naming `label`."""
    scheme, sep, rest = text.partition("://")
    bucket, _slash, prefix = rest.partition("/")
    if not sep or scheme.lower() not in S3_SCHEMES or not bucket:
        raise ConfigError(f"{label}: {text!r} is not an S3 location such as s3a://bucket/prefix")
    prefix = prefix.strip("/")
    root = S3Root(bucket.lower(), f"{prefix}/" if prefix else "")
    try:
        _ = root.qualified_name
    except InvalidName as exc:
        raise ConfigError(f"{label}: {text!r}: {exc}") from None
    return root


@dataclasses.dataclass(frozen=True)
class S3Config:
    """`[s3]`: the S3 extractor (`navd extract s3`): the buckets and prefixes it lists, and the
    store (AWS S3 or an S3-compatible one)."""

    enabled: bool = setting(False, help="run the extractor in `navd run` (and `navd extract all`)")
    roots: tuple[str, ...] = setting((), help="what to list: `s3a://bucket` (all of it) or `s3a://bucket/prefix` "
                                              "(`s3://` and `s3n://` too)")
    endpoint_url: str = setting("", help="an S3-compatible store's address (Ozone, MinIO, Ceph: "
                                         "`http(s)://host:port`); unset: AWS")
    region: str = setting("", help="the region requests are signed for; unset: us-east-1, what S3-compatible stores "
                                   "accept")
    path_style: bool = setting(False, help="path-style requests (`http://host/bucket/key`) instead of virtual-hosted "
                                           "(`http://bucket.host/key`): what most S3-compatible stores need")
    credentials_file: str = setting("", help="an AWS shared credentials file (INI: `aws_access_key_id`, "
                                             "`aws_secret_access_key`, optionally `aws_session_token`), readable by "
                                             "navd's user only; unset: `AWS_ACCESS_KEY_ID` and "
                                             "`AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`) from the environment")
    profile: str = setting("default", help="the section of `credentials_file` to read")
    ca_bundle: str = setting("", help="a CA bundle (PEM) for an https endpoint signed by a private CA; unset: the "
                                      "system's")
    complete_listing_hours: float = number(24.0, 0, MAX_INTERVAL_MINUTES / 60,
                                           help="hours between two complete listings of a root (which see changes "
                                                "inside directories that hold only objects, and deletions there); "
                                                "runs between them list one level per directory. 0: every run lists "
                                                "completely")
    timeout_seconds: float = number(60.0, 0, 3600, low_open=True, help="the timeout of one request")
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True,
                                     help="`navd run` starts a run this long after the previous one completed")

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("roots",))
        if self.endpoint_url:
            check_url("[s3] endpoint_url", self.endpoint_url, example="https://s3.example.com:9000")
        seen: dict[S3Root, str] = {}
        for text in self.roots:
            root = parse_root(text)
            if root in seen:
                raise ConfigError(f"[s3] roots: {text!r} is the same place as {seen[root]!r}")
            seen[root] = text
        overlapping = [(a, b) for a in seen for b in seen
                       if a != b and a.bucket == b.bucket and b.prefix.startswith(a.prefix)]
        if overlapping:
            inner, outer = overlapping[0][1], overlapping[0][0]
            raise ConfigError(f"[s3] roots: {seen[inner]!r} lies inside {seen[outer]!r}: list the outer one only")
        if not self.profile.strip():
            raise ConfigError("[s3] profile: empty (the section of credentials_file to read, e.g. default)")
        if self.region and not self.region.replace("-", "").isalnum():
            raise ConfigError(f"[s3] region: {self.region!r} is not a region name such as eu-west-1")

    @property
    def parsed_roots(self) -> tuple[S3Root, ...]:
        return tuple(parse_root(text) for text in self.roots)

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)

    @property
    def complete_listing_interval(self) -> timedelta:
        return timedelta(hours=self.complete_listing_hours)


def s3_settings(config: NavdConfig) -> S3Config:
    return config.section(SECTION, S3Config)

"""Reading the TOML file and building `NavdConfig` from it: unknown keys, wrong types and
bad values fail with one line naming `[section] key` and the file."""

from __future__ import annotations

import dataclasses
import math
import os
import stat
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

from navd.config.keys import ANY_NUMBER, OTHERS_BITS, SectionT, check_url
from navd.config.sections import NavdConfig
from navd.config.validation import check_owner_only, is_loopback_host, shown_name, validate_config
from navd.errors import ConfigError


DEFAULT_CONFIG_PATH = Path("/etc/navd/navd.toml")


def resolve_config_path(cli_path: str | None, environ: Mapping[str, str]) -> tuple[Path, bool]:
    """Return the config path and whether it was asked for explicitly (so must exist)."""
    if cli_path:
        return Path(cli_path), True
    if environ.get("NAVD_CONFIG"):
        return Path(environ["NAVD_CONFIG"]), True
    return DEFAULT_CONFIG_PATH, False


def load_config(cli_path: str | None = None,
                environ: Mapping[str, str] | None = None) -> NavdConfig:
    environ = os.environ if environ is None else environ
    path, explicit = resolve_config_path(cli_path, environ)
    raw: dict[str, Any] = {}
    try:
        exists = path.exists()
    except OSError as exc:  # a name the file system refuses (ENAMETOOLONG), not just a missing file
        raise ConfigError(f"{shown_name(str(path))}: cannot read config: {exc.strerror}") from None
    if exists:
        try:
            data = path.read_bytes()
            mode = path.stat().st_mode
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
        try:
            raw = tomllib.loads(_decode(data, str(path), toml=True))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        source = str(path)
        inline = _inline_secrets(raw)
        if inline and mode & OTHERS_BITS:
            raise ConfigError(f"{path}: holds {inline[0]} but users other than its owner may read it "
                              f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it, or move the password to a "
                              f"password_file only navd can read")
    elif explicit:
        raise ConfigError(f"{path}: config file not found")
    else:
        source = "<defaults>"
    return parse_config(raw, source=source, environ=environ)


def _decode(data: bytes, where: str, *, toml: bool = False) -> str:
    """`data` as UTF-8, else one line saying where the first bad byte is (in a TOML file: its
    line, and the `[section] key` on it)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not toml:  # a secret's file: where the bad byte sits would tell about the secret
            raise ConfigError(f"{where}: not UTF-8 text") from None
        line_no = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = f"byte 0x{data[exc.start]:02x} at line {line_no}, column {column}"
        key = _key_at_line(data.decode("utf-8", "replace").splitlines(), line_no)
        raise ConfigError(f"{where}: {key + ': ' if key else ''}not UTF-8 text ({byte}); "
                          "save the file as UTF-8") from None


def _key_at_line(lines: list[str], line_no: int) -> str:
    """The `[section] key` that TOML line `line_no` (1-based) sets, "" if it sets none."""
    key = lines[line_no - 1].split("=", 1)[0].strip() if "=" in lines[line_no - 1] else ""
    if not key or not key.replace("_", "").replace("-", "").replace(".", "").isalnum():
        return ""
    for line in reversed(lines[:line_no - 1]):
        header = line.strip()
        if header.startswith("[") and "]" in header:
            return f"[{header.strip('[').split(']')[0].strip()}] {key}"
    return key


def _inline_secrets(raw: Mapping[str, Any]) -> list[str]:
    """The `[section] password` keys set in the file itself, e.g. ["[solr] password"]."""
    return [f"[{name}] password" for name, section in raw.items()
            if isinstance(section, Mapping) and section.get("password")]


def parse_config(raw: Mapping[str, Any], *, source: str = "<inline>",
                 environ: Mapping[str, str] | None = None) -> NavdConfig:
    environ = {} if environ is None else environ
    from navd.registry import section_types  # the registry imports the components, which import this

    types_by_section = section_types()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: top level: expected a table, got {type(raw).__name__}")
    raw, moved = _moved_keys(raw, source)
    core = {k: v for k, v in raw.items() if k not in types_by_section}
    config = _build(NavdConfig, core, source, section="", skip={"source", "sections"},
                    extra_known=set(types_by_section))
    sections = {name: _build(kind, raw.get(name, {}), source, name) for name, kind in types_by_section.items()}
    config = dataclasses.replace(config, source=source, sections=MappingProxyType(sections))
    if environ.get("NAVD_SOLR_URL"):
        try:
            check_url("NAVD_SOLR_URL", environ["NAVD_SOLR_URL"])
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        config = dataclasses.replace(
            config, solr=dataclasses.replace(config.solr, url=environ["NAVD_SOLR_URL"]))
    config = dataclasses.replace(config, solr=_with_password(config.solr, "solr", source))
    sections = {name: _with_password(settings, name, source) for name, settings in sections.items()}
    config = dataclasses.replace(config, sections=MappingProxyType(sections))
    validate_config(config, source)
    for settings in sections.values():
        try:
            settings.validate()
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
    return dataclasses.replace(config, warnings=moved + _insecure_credentials(config, raw, source))


#: keys read from their old place with a warning: (old section, new section, key)
MOVED_KEYS = (("hdfs", "cluster", "default_fs"),)


def _moved_keys(raw: Mapping[str, Any], source: str) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """`raw` with every key of MOVED_KEYS set in its old section moved to its new one, and one
    warning line per key moved. Both places set to different values is an error naming both:
    neither can be taken as the one meant."""
    warnings: list[str] = []
    out = dict(raw)
    for old_section, new_section, key in MOVED_KEYS:
        old_table, new_table = out.get(old_section), out.get(new_section, {})
        if not isinstance(old_table, Mapping) or key not in old_table or not isinstance(new_table, Mapping):
            continue  # nothing to move, or a section of the wrong type the section's own check names
        old, new = f"[{old_section}] {key}", f"[{new_section}] {key}"
        if key in new_table and new_table[key] != old_table[key]:
            raise ConfigError(f"{source}: {old} and {new} are both set, to different values; "
                              f"keep only {new}")
        out[old_section] = {k: v for k, v in old_table.items() if k != key}
        out[new_section] = {**new_table, key: old_table[key]}
        warnings.append(f"{source}: {old} is deprecated and will be removed: set {new} instead")
    return out, tuple(warnings)


def _with_password(settings: SectionT, section: str, source: str) -> SectionT:
    """A section with a `password_file` and no inline `password` gets the file's password."""
    path = getattr(settings, "password_file", "")
    if not path or getattr(settings, "password", ""):
        return settings
    return dataclasses.replace(settings, password=read_secret(path, f"[{section}] password_file", source))  # type: ignore[type-var]


def read_secret(path: str, label: str, source: str) -> str:
    """A secret from a file only its owner may read (else one line naming the file, never the secret)."""
    file = Path(path).expanduser()
    try:
        mode = file.stat().st_mode
        data = file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{source}: {label} {path}: {exc.strerror}") from None
    check_owner_only(f"{source}: {label}", path, mode)
    return _decode(data, f"{source}: {label} {path}").strip()


def _insecure_credentials(config: NavdConfig, raw: Mapping[str, Any], source: str) -> tuple[str, ...]:
    """What `[security] insecure_credentials` governs, one line each; raises when it refuses."""
    found = [f"{key}: a password inline in the config file; put it in a file only navd can read "
             f"and set {key}_file" for key in _inline_secrets(raw)]
    solr = config.solr
    if solr.auth == "basic" and solr.url and urlsplit(solr.url).scheme == "http" and \
            not is_loopback_host(urlsplit(solr.url).hostname or ""):
        found.append(f"[solr] auth: basic auth over plain http:// sends the password in clear text to "
                     f"{urlsplit(solr.url).hostname}; use an https:// url")
    if found and config.security.insecure_credentials == "refuse":
        raise ConfigError(f"{source}: {found[0]} (refused: [security] insecure_credentials = \"refuse\")")
    return tuple(f"{source}: {line}" for line in found)


def _build(cls: type, raw: Any, source: str, section: str, skip: frozenset[str] | set[str] = frozenset(),
           extra_known: set[str] | frozenset[str] = frozenset()):
    where = f"[{section}]" if section else "top level"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: {where}: expected a table, got {type(raw).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}
    unknown = sorted(set(raw) - set(fields) - set(extra_known))
    if unknown:
        raise ConfigError(f"{source}: {where}: unknown key {unknown[0]!r} "
                          f"(known: {', '.join(sorted({*fields, *extra_known}))})")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        hint = hints[name]
        key = f"{section}.{name}" if section else name
        if dataclasses.is_dataclass(hint):
            values[name] = _build(hint, value, source, key)
        else:
            values[name] = _coerce(hint, value, source, key, section, fields[name])
    return cls(**values)


def _coerce(hint: Any, value: Any, source: str, key: str, section: str, field: dataclasses.Field[Any]) -> Any:
    label = f"[{section}] {key.rsplit('.', 1)[-1]}" if section else key

    def wrong(expected: str) -> ConfigError:
        # A secret field (repr=False) never echoes its value, not even a wrong one.
        shown = "a value not shown (a secret)" if not field.repr else repr(value)
        return ConfigError(f"{source}: {label}: expected {expected}, got {shown}")

    def in_range(number: float) -> float:
        try:
            field.metadata.get("range", ANY_NUMBER).check(label, number)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        return number

    origin = typing.get_origin(hint)
    if origin is Literal:
        choices = typing.get_args(hint)
        if value not in choices:
            raise wrong("one of " + ", ".join(repr(c) for c in choices))
        return value
    if origin is tuple:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise wrong("a list of strings")
        return tuple(value)
    if origin is Mapping:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                      for k, v in value.items()):
            raise wrong('a table of strings, e.g. { "key" = "value" }')
        return MappingProxyType(dict(value))
    if origin in (typing.Union, types.UnionType):
        raise AssertionError(f"config field {key} uses an unsupported union type")
    if hint is bool:
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("an integer")
        return in_range(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number")
        try:
            as_float = float(value)
        except OverflowError:  # TOML integers are unbounded: past float's range is out of any range
            as_float = math.inf
        return in_range(as_float)
    if hint is str:
        if not isinstance(value, str):
            raise wrong("a string")
        return value
    raise AssertionError(f"config field {key} has unsupported type {hint!r}")

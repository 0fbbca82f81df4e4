"""Alias rules of qualified names: which indexed names an unresolved endpoint name may mean.

Pure functions, no I/O. Both the incremental linker and the Spark job use them, so they match
the same way.

The aliases real clusters produce:
- paths: `file:/x` vs `file:///x`, trailing and doubled slashes, upper-case hosts, `s3://`,
  `s3n://` vs `s3a://` (all settled by `path_qualified_name`); an S3 path named as an HDFS
  element (what navd wrote before it had S3 elements) is the S3 element of the same name; a bare `/p` means `<default_fs>/p`; and different authorities of one
  file system, `hdfs://nn1:8020/p` vs `hdfs://nameservice1/p`. Nothing in a name says that
  `nn1:8020` serves `nameservice1`, so that alias is explicit: `fs_aliases` maps an authority
  (`nn1:8020` or `hdfs://nn1:8020`) to its canonical file system (`hdfs://nameservice1`); the
  configured `default_fs` is canonical for itself. Names are compared after mapping aliased
  authorities to their canonical file system.
- catalog names: `spark_catalog.db.t@c` (a SPARK name) is the HIVE table `db.t@c`; a name
  without `@cluster` is on the configured cluster; Hive names are case-insensitive and may carry
  backticks. Partition specs after the `/` keep their case (values are data).
- anything else (operations, executions) is only ever its exact name.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import NamedTuple

from navd.model import ElementType, InvalidName, SourceType, path_qualified_name
from navd.names import (PATH_SOURCES, S3_SCHEME, S3_SCHEMES, field_qualified_name, fresh_identity, path_field_qualified_name,
                        path_source_type, split_field, split_path_field)

SESSION_CATALOG = "spark_catalog"
_CATALOG_SOURCES = frozenset({SourceType.HIVE, SourceType.SPARK, SourceType.IMPALA})
_PATH_TYPES = frozenset({ElementType.DIRECTORY, ElementType.FILE, ElementType.S3BUCKET})
_FIELD = ElementType.FIELD
_CATALOG_TYPES = frozenset({ElementType.DATABASE, ElementType.TABLE, ElementType.VIEW, ElementType.FIELD,
                            ElementType.PARTITION})
#: Written `scheme://authority` prefixes an AliasRules keeps the canonical form of; past that,
#: a new prefix is worked out each time (a cluster's paths name a handful).
_PREFIXES_KEPT = 4096
# How many dotted parts a catalog name of each type has without a catalog prefix.
_PARTS = {ElementType.DATABASE: 1, ElementType.TABLE: 2, ElementType.VIEW: 2, ElementType.PARTITION: 2}


def _fs_prefix(uri: str) -> str:
    """`hdfs://NN:8020/` -> `hdfs://nn:8020` (scheme and authority, normalised)."""
    qualified = path_qualified_name(uri.rstrip("/") + "/")
    scheme, _, rest = qualified.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


@dataclasses.dataclass(frozen=True)
class AliasRules:
    """What the linker knows about a cluster's names.

    `fs_aliases`: authority (`nn1:8020`, or with scheme `hdfs://nn1:8020`) -> the canonical file
    system it belongs to (`hdfs://nameservice1`). A key without a scheme takes its value's.
    """

    cluster: str
    default_fs: str = ""
    fs_aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Normalised: alias prefix -> canonical prefix, and canonical prefix -> all its members.
    _canonical: Mapping[str, str] = dataclasses.field(init=False, repr=False, compare=False)
    _members: Mapping[str, tuple[str, ...]] = dataclasses.field(init=False, repr=False, compare=False)
    # A name's written `scheme://authority` -> its canonical prefix ("": not a usable path), filled
    # as names come (see `_canonical_split`); the one mutable part, a cache.
    _prefixes: dict[str, str] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        canonical: dict[str, str] = {}
        for key, value in self.fs_aliases.items():
            target = _fs_prefix(value)
            source = key if "://" in key else f"{target.split('://', 1)[0]}://{key}"
            canonical[_fs_prefix(source)] = target
        # Chains (a -> b -> c) resolve to their end, so every member names one canonical prefix.
        for alias in list(canonical):
            seen = {alias}
            while canonical[alias] in canonical and canonical[alias] not in seen:
                seen.add(canonical[alias])
                canonical[alias] = canonical[canonical[alias]]
        members: dict[str, list[str]] = {}
        for alias, target in canonical.items():
            if alias != target:
                members.setdefault(target, [target]).append(alias)
        object.__setattr__(self, "fs_aliases", MappingProxyType(dict(self.fs_aliases)))
        object.__setattr__(self, "_canonical", MappingProxyType(canonical))
        object.__setattr__(self, "_members", MappingProxyType(
            {k: (v[0], *sorted(set(v[1:]))) for k, v in members.items()}))
        object.__setattr__(self, "_prefixes", {})

    @property
    def default_prefix(self) -> str:
        """The canonical file system of bare paths, or "" when no default FS is configured."""
        if not self.default_fs:
            return ""
        prefix = _fs_prefix(self.default_fs)
        return self._canonical.get(prefix, prefix)

    # -- paths --------------------------------------------------------------------------------

    def canonical_path(self, name: str) -> str | None:
        """The canonical spelling of a path, or None when it is not a usable path."""
        split = self._canonical_split(name)
        return None if split is None else split[0] + split[1]

    def canonical_spellings(self, name: str) -> list[str] | None:
        """`path_spellings(canonical_path(name))` in one step (the linker asks it once per
        relation), or None when `name` is not a usable path."""
        split = self._canonical_split(name)
        if split is None:
            return None
        prefix, tail = split
        return [member + tail for member in self._members.get(prefix, (prefix,))]

    def _canonical_split(self, name: str) -> tuple[str, str] | None:
        """(canonical `scheme://authority`, the path after it) of a path, or None."""
        # `scheme://authority/path` whose path has nothing to normalise (no empty, "." or ".."
        # segment, no trailing slash): path_qualified_name changes only its prefix, so the
        # prefix's canonical form is worked out once per prefix, not once per name (the linker
        # asks once per relation: 0.8 us instead of 2.4).
        colon = name.find(":")
        if colon > 0 and name[0] != "/" and name.startswith("//", colon + 1):
            slash = name.find("/", colon + 3)
            if slash > 0:
                tail = name[slash:]
                if "//" not in tail and "/." not in tail and not tail.endswith("/"):
                    written = name[:slash]
                    prefix = self._prefixes.get(written)
                    if prefix is None:
                        prefix = self._canonical_prefix(written)
                        if len(self._prefixes) < _PREFIXES_KEPT:
                            self._prefixes[written] = prefix
                    return (prefix, tail) if prefix else None
        try:
            qualified = path_qualified_name(name, self.default_fs)
        except InvalidName:
            return None
        # path_qualified_name spells `scheme://authority/path`: the prefix ends at the first '/'
        # after the '://'
        cut = qualified.find("/", qualified.find("://") + 3)
        prefix, tail = (qualified, "") if cut < 0 else (qualified[:cut], qualified[cut:])
        return self._canonical.get(prefix, prefix), tail

    def path_spellings(self, canonical: str) -> list[str]:
        """Every full spelling of a canonical path: the canonical one first, then its aliases."""
        scheme, _, rest = canonical.partition("://")
        authority, slash, path = rest.partition("/")
        prefix = f"{scheme}://{authority}"
        return [member + slash + path for member in self._members.get(prefix, (prefix,))]

    def _canonical_prefix(self, written: str) -> str:
        """The canonical `scheme://authority` of a written one, "" when it is not usable."""
        try:
            qualified = path_qualified_name(written, self.default_fs)  # `scheme://authority/`
        except InvalidName:
            return ""
        prefix = qualified[:-1]
        return self._canonical.get(prefix, prefix)

    # -- catalog names ------------------------------------------------------------------------

    def canonical_catalog(self, name: str, source_type: SourceType, type_: ElementType | None
                          ) -> tuple[SourceType, str] | None:
        """(source type, canonical name) of a table/column/database/partition name."""
        if type_ is ElementType.FIELD:
            return self._canonical_field(name, source_type)
        head, at, rest = name.partition("@")
        cluster, slash, spec = rest.partition("/")
        if not at:
            # No cluster: a partition spec, if any, follows the table name directly.
            head, slash, spec = name.partition("/")
            cluster = self.cluster
        parts = [p.strip().strip("`").strip().lower() for p in head.split(".")]
        if not parts or any(not p for p in parts) or not cluster.strip():
            return None
        expected = _PARTS.get(type_) if type_ is not None else None
        source = source_type
        if parts[0] == SESSION_CATALOG and len(parts) > 1 and (expected is None or len(parts) == expected + 1):
            parts, source = parts[1:], SourceType.HIVE
        return source, ".".join(parts) + "@" + cluster.strip().lower() + slash + spec

    def _canonical_field(self, name: str, source_type: SourceType) -> tuple[SourceType, str] | None:
        """A column's canonical name: its table's, then the column as `field_qualified_name`
        spells it. The column is everything after the table's dotted parts (`split_field`), so a
        column `b.c` is never read as part of a table's name."""
        if "@" not in name:
            name = f"{name}@{self.cluster}"
        split = split_field(name, source_type)
        if split is None:
            return None
        table_name, column = split
        table = self.canonical_catalog(table_name, source_type, ElementType.TABLE)
        if table is None:
            return None
        try:
            return table[0], field_qualified_name(table[1], column)
        except InvalidName:
            return None


# By value, for dict lookups: a StrEnum member hashes and compares as its value, so a member or
# its value finds the member; the enum call this replaces cost more than an MD5, twice a relation.
# Plain dicts, never written: a mappingproxy's get costs twice a dict's.
_SOURCES: dict[str, SourceType] = {member.value: member for member in SourceType}
_TYPES: dict[str, ElementType] = {member.value: member for member in ElementType}


def _source(value: SourceType | str) -> SourceType | None:
    return _SOURCES.get(value) if isinstance(value, str) else None


def _type(value: ElementType | str | None) -> ElementType | None:
    return _TYPES.get(value) if isinstance(value, str) and value else None


def candidates(qualified_name: str, source_type: SourceType | str, type_: ElementType | str | None,
               rules: AliasRules) -> list[tuple[SourceType, str]]:
    """(source type, qualifiedName) of every element an endpoint name may mean, best first.

    Best first: the canonical spelling, then the exact name given, then other aliases; the
    linker takes the first candidate that is indexed (and is not a stub).
    """
    source = _source(source_type)
    if source is None:
        return []
    kind = _type(type_)
    path_source = source in PATH_SOURCES
    if path_source and kind is _FIELD:
        return _path_field_names(qualified_name, source, candidates, rules)
    found: list[tuple[SourceType, str]] = []
    if path_source or kind in _PATH_TYPES:
        spellings = rules.canonical_spellings(qualified_name)
        if spellings is not None:
            first = spellings[0]
            # the owner of the canonical spelling: an `s3://` path named as HDFS is the S3 element
            found.append((path_source_type(first) if path_source else source, first))
            found.append((source, qualified_name))
            if len(spellings) > 1:
                found.extend([(source, s) for s in spellings[1:]])
    elif source in _CATALOG_SOURCES and (kind is None or kind in _CATALOG_TYPES):
        canonical_name = rules.canonical_catalog(qualified_name, source, kind)
        if canonical_name is not None:
            found.append(canonical_name)
    found.append((source, qualified_name))
    return list(dict.fromkeys(found))  # the first of each, in order


def candidate_names(qualified_name: str, source_type: SourceType | str, type_: ElementType | str | None,
                    *, default_fs: str = "", cluster: str = "",
                    nameservice_aliases: Mapping[str, str] | None = None) -> list[str]:
    """The qualifiedNames to look up for an endpoint name, best first (see `candidates`)."""
    rules = AliasRules(cluster=cluster, default_fs=default_fs, fs_aliases=nameservice_aliases or {})
    return [name for _, name in candidates(qualified_name, source_type, type_, rules)]


class Candidate(NamedTuple):
    """An element an endpoint name may mean: its identity (the MD5 of the other two), source
    type and qualifiedName. A named tuple, not a dataclass: a pass makes a few per relation."""

    id: str
    source_type: str
    qualified_name: str


def candidate_elements(qualified_name: str, source_type: SourceType | str, type_: ElementType | str | None,
                       rules: AliasRules) -> list[Candidate]:
    """`candidates` with their identities, best first: what the linker looks up by identity."""
    return [_candidate((fresh_identity(s, n), s._value_, n))
            for s, n in candidates(qualified_name, source_type, type_, rules)]


# A Candidate from a tuple without the named tuple's Python-level __new__ (a pass makes two per
# relation, and that call cost as much as the tuple's MD5).
_candidate = functools.partial(tuple.__new__, Candidate)


def endpoint_spellings(qualified_name: str, source_type: SourceType | str, type_: ElementType | str | None,
                       rules: AliasRules) -> list[tuple[SourceType, str]]:
    """The endpoint names, as extractors write them, that resolve to an indexed element.

    The reverse of `candidates` over the spellings navd's extractors produce (they normalise case
    and doubled slashes): aliased authorities, trailing slashes, bare paths on the default FS, `file:/x`, and
    `spark_catalog.` names. Used to find old unlinked relations when their element appears.
    """
    source = _source(source_type)
    if source is None:
        return []
    kind = _type(type_)
    if source in PATH_SOURCES and kind is ElementType.FIELD:
        return _path_field_names(qualified_name, source, endpoint_spellings, rules)
    found: list[tuple[SourceType, str]] = [(source, qualified_name)]
    if source in PATH_SOURCES or kind in _PATH_TYPES:
        canonical = rules.canonical_path(qualified_name)
        if canonical is not None:
            spellings = rules.path_spellings(canonical)
            found.extend((source, s) for s in spellings)
            if source is SourceType.S3:  # what navd wrote before it had S3 elements: HDFS, any S3 scheme
                key = canonical.removeprefix(S3_SCHEME + "://")
                found.extend((SourceType.HDFS, f"{scheme}://{key}") for scheme in sorted(S3_SCHEMES))
            scheme, _, rest = canonical.partition("://")
            path = "/" + rest.partition("/")[2]
            if rules.default_prefix and canonical.startswith(rules.default_prefix + "/"):
                found.append((source, path))
            if scheme == "file":
                found.append((source, "file:" + path))
            # Trailing slashes: writers that keep a directory's URI as the user typed it.
            found.extend([(s, n + "/") for s, n in found if n.rstrip("/") == n and n != "/"])
    elif source in _CATALOG_SOURCES and (kind is None or kind in _CATALOG_TYPES):
        canonical_name = rules.canonical_catalog(qualified_name, source, kind)
        if canonical_name is not None:
            found.append(canonical_name)
            if canonical_name[0] is SourceType.HIVE:
                found.append((SourceType.SPARK, f"{SESSION_CATALOG}.{canonical_name[1]}"))
    unique: dict[tuple[SourceType, str], None] = {}
    for item in found:
        unique.setdefault(item, None)
    return list(unique)


def _path_field_names(qualified_name: str, source: SourceType,
                      of_path: Callable[..., list[tuple[SourceType, str]]],
                      rules: AliasRules) -> list[tuple[SourceType, str]]:
    """`candidates` / `endpoint_spellings` of a column of a path (`<path>#<column>`): those of
    its path, each with the column (only qualified spellings: extractors name a path's columns
    only after qualifying the path); the column itself is never rewritten."""
    split = split_path_field(qualified_name)
    found: dict[tuple[SourceType, str], None] = {(source, qualified_name): None}
    if split is None:
        return list(found)
    path, column = split
    names = [(s, path_field_qualified_name(n, column)) for s, n in of_path(path, source,
                                                                           ElementType.DIRECTORY, rules)
             if "://" in n and not n.endswith("/")]
    if of_path is candidates:   # best first: the canonical spelling before the name as given
        return list(dict.fromkeys([*names[:1], (source, qualified_name), *names[1:]]))
    found.update(dict.fromkeys(names))
    return list(found)

"""What elements are called: the one place where qualified names, references and identities are
built and read back.

Every element has a `qualified_name`, unique within its source type:
- Hive/catalog objects follow Atlas: `db@cluster`, `db.table@cluster`, `db.table.column@cluster`
  (partitions: `db.table@cluster/k=v/k2=v2`), all lower case; functions `db.fn@cluster#function`;
  tables of other (V2) Spark catalogs `<catalog>.db.table@cluster` (SPARK, provisional); a
  column is everything after its table's dotted parts and before the last '@', as spelled
  (`db.t.b.c@cluster` is column `b.c`: database and table names hold no '.');
- files and directories use their normalised URI: `hdfs://nameservice/path`, `file:///tmp/x`;
  one spelling per path, no trailing slash; objects of an S3 (or S3-compatible) store are S3
  elements `s3a://bucket/key`, whichever of `s3://`, `s3a://`, `s3n://` named them (`s3a://`,
  Hadoop's connector, is the one spelling); a bucket is `s3a://bucket/`; a column of the data in a directory or file (a
  path Spark wrote or read) is an HDFS FIELD `<path>#<column>`, the column lower case with '%'
  and '#' percent-encoded (so the last '#' is the separator, whatever the path or column holds);
- operations and executions use a name scoped by source, e.g. `spark://<app id>/<attempt>`,
  `yarn://<app id>`, `openlineage://<namespace>/<job>[/<runId>]`;
- OpenLineage datasets (`openlineage_dataset_ref`) take the name of what they are: a path, a Hive
  table of a metastore navd knows (`hive_namespace_cluster`), else `<namespace>/<name>` verbatim (OPENLINEAGE TABLE, its
  columns `<dataset>#<column>` as a path's).

Identity is the MD5 (as Navigator) of (sourceType, qualifiedName), so re-extracting an entity
upserts the same Solr document. A relation's identity is a function of its type, its endpoint
identities and a discriminator, so re-extracting (or re-linking) a relation also upserts.

Each way of building a name has one function here, next to the one function that reads it back
(`field_qualified_name` / `table_of_field`, `partition_qualified_name` / `split_partition`, ...);
tests/test_names.py round-trips them. Extractors and the linker call these instead of splicing
strings, so a name written by one source is the name another source looks up.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import posixpath
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from navd.errors import NavdError


class ElementType(enum.StrEnum):
    DATABASE = "DATABASE"
    TABLE = "TABLE"
    VIEW = "VIEW"
    FIELD = "FIELD"
    PARTITION = "PARTITION"
    DIRECTORY = "DIRECTORY"
    FILE = "FILE"
    #: an object store's bucket (S3 and S3-compatible stores), as Navigator types it
    S3BUCKET = "S3BUCKET"
    OPERATION = "OPERATION"
    OPERATION_EXECUTION = "OPERATION_EXECUTION"


class SourceType(enum.StrEnum):
    HDFS = "HDFS"
    HIVE = "HIVE"
    SPARK = "SPARK"
    YARN = "YARN"
    IMPALA = "IMPALA"
    #: objects, prefixes ("directories") and buckets of an S3 or S3-compatible store
    S3 = "S3"
    #: Oozie workflows, coordinators and bundles, their runs and actions
    OOZIE = "OOZIE"
    #: what only OpenLineage events tell: their jobs and runs, and datasets of systems navd does
    #: not extract (a Postgres table, a Kafka topic), named verbatim under their namespace
    OPENLINEAGE = "OPENLINEAGE"


class InvalidName(NavdError):
    """A qualified name or path that cannot be normalised."""


#: how much of a name an error message quotes: a 100 kB name must not flood a terminal or a log
SHOWN_NAME_CHARS = 200


def shown(name: str, limit: int = SHOWN_NAME_CHARS) -> str:
    """`name` as an error message quotes it: repr-quoted (control characters and undecodable
    bytes escaped, so it stays one line), cut to `limit` characters with "..." after."""
    return repr(name[:limit]) + ("..." if len(name) > limit else "")


def is_utf8(text: str) -> bool:
    """Whether `text` can be sent as UTF-8: no lone surrogate (JSON's "\ud800" escapes and
    argv's undecodable bytes decode to them; Solr requests and orjson refuse them)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lookup_name(name: str) -> str:
    """A name a user typed to look an element up (`navd entity`, `navd lineage`, any future
    server), checked: InvalidName (one line, the name cut) when it is empty or not valid UTF-8
    (argv holds undecodable bytes as lone surrogates, which no Solr request can carry)."""
    if not name.strip():
        raise InvalidName("empty name: give an identity or a qualified name")
    if not is_utf8(name):
        raise InvalidName(f"name {shown(name)} is not valid UTF-8")
    return name


# --- identities ------------------------------------------------------------------------------

def identity(source_type: SourceType | str, qualified_name: str) -> str:
    """The identity of an element: MD5 of (sourceType, qualifiedName), hex."""
    # `_value_`, not `.value` (a Python-level descriptor): identities are taken for every ref and
    # record made, and the enum lookup was a fifth of the OpenLineage mapping's time
    kind = source_type._value_ if type(source_type) is SourceType else SourceType(source_type)._value_
    return _identity(kind, qualified_name)


# Bounded: the same tables and columns come back in query after query of a lineage log (and
# relation after relation of one query); a hit costs a dict lookup instead of an MD5.
@functools.lru_cache(maxsize=65536)
def _identity(kind: str, qualified_name: str) -> str:
    try:
        key = f"{kind}\x1f{qualified_name}".encode()
    except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800" decodes to one): no Solr request can carry it
        raise InvalidName(f"name {shown(qualified_name)} is not valid UTF-8") from None
    return hashlib.md5(key, usedforsecurity=False).hexdigest()


def source_identity(source_type: str, name: str) -> str:
    """The identity of a source (Navigator's SOURCE entity: an HDFS nameservice, a metastore, a
    namespace): MD5 of (`SOURCE`, its source type, its name), hex, as element identities are."""
    return _identity("SOURCE", f"{source_type}\x1f{name}")


def relation_identity(relation_type: str, endpoint1_id: str, endpoint2_id: str, discriminator: str = "") -> str:
    """The identity of a relation: MD5 of (type, endpoint 1 identity, endpoint 2 identity,
    discriminator), hex. The extractors (Relation.identity) and the linker (a relinked document)
    both call this, so a relation the linker rewrites lands on the document the extractor would
    have written had it known the element."""
    key = "\x1f".join((str(relation_type), endpoint1_id, endpoint2_id, discriminator))
    return hashlib.md5(key.encode("utf-8"), usedforsecurity=False).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class EntityRef:
    """A pointer to an element: enough to compute its identity and to link it later."""

    source_type: SourceType
    qualified_name: str
    type: ElementType
    # Computed once: every document and relation written needs it, some twice.
    identity: str = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Refs are made per relation end (a lineage-log query makes dozens): the enum calls are
        # skipped when the values already are members, which nearly all callers pass.
        if type(self.source_type) is not SourceType:
            object.__setattr__(self, "source_type", SourceType(self.source_type))
        if type(self.type) is not ElementType:
            object.__setattr__(self, "type", ElementType(self.type))
        object.__setattr__(self, "identity", identity(self.source_type, self.qualified_name))


# --- Hive and catalog objects ----------------------------------------------------------------

def hive_qualified_name(cluster: str, database: str, table: str | None = None,
                        column: str | None = None) -> str:
    """Atlas-style `db[.table[.column]]@cluster`, lower case; surrounding backticks dropped."""
    if column is not None:
        if table is None:
            raise InvalidName(f"column {column!r} given without a table")
        return field_qualified_name(hive_qualified_name(cluster, database, table), column)
    parts = [_hive_part(database, "database")]
    if table is not None:
        parts.append(_hive_part(table, "table"))
    return ".".join(parts) + "@" + cluster.strip().lower()


def _hive_part(value: str, what: str) -> str:
    cleaned = value.strip().strip("`").strip().lower()
    if not cleaned:
        raise InvalidName(f"empty Hive {what} name")
    return cleaned


def hive_incarnation_qualified_name(table_qualified_name: str, create_time: int) -> str:
    """An earlier incarnation of a HIVE table that was dropped and re-created under the same
    name: `db.t~<create time, epoch seconds>@cluster`. The current incarnation keeps
    `db.t@cluster` (the HMS extractor's one identity per name); `~` is no character of a Hive
    table name, so the two never collide and the name still parses (`parse_hive_name`: table
    `t~<time>`, same database and cluster)."""
    path, at, cluster = table_qualified_name.partition("@")
    if not at or "." not in path:
        raise InvalidName(f"table name {shown(table_qualified_name)} is not db.table@cluster")
    return f"{path}~{int(create_time)}@{cluster}"


def catalog_table_qualified_name(cluster: str, catalog: str, namespace: str, table: str) -> str:
    """A table of another (V2) Spark catalog, which no extractor owns yet:
    `<catalog>.<namespace>.<table>@cluster`, lower case (a SPARK element, provisional)."""
    return f"{_hive_part(catalog, 'catalog')}." + hive_qualified_name(cluster, namespace, table)


def function_qualified_name(cluster: str, database: str, function: str) -> str:
    """A catalog function, `db.fn@cluster#function`: the suffix keeps it apart from a table of
    the same name (catalog events name both)."""
    return hive_qualified_name(cluster, database, function) + "#function"


def field_qualified_name(table_qualified_name: str, column: str) -> str:
    """The FIELD `<table name>.column@cluster` of a table `<table name>@cluster`, whatever its
    source (HIVE `db.t`, SPARK `<catalog>.db.t`). Read back by `split_field` / `table_of_field`.

    The column is spelled as it is, after the table's dotted parts: Hive's rule (as Atlas's
    `hive_column`) is that database and table names hold no '.', so whatever follows
    `db.table.` is the column, dots, spaces, '@' and all (`db.t.b.c@cluster` is column `b.c`).
    Lower case, surrounding blanks and backticks dropped, as Hive and Spark (case-insensitive
    by default) resolve it; inner backticks stay.
    """
    name = _hive_part(column, "column")
    path, at, cluster = table_qualified_name.rpartition("@")
    if not at or not path:
        raise InvalidName(f"table name {table_qualified_name!r} has no @cluster: no field {column!r} of it")
    return f"{path}.{name}@{cluster}"


#: Dotted parts of a table's name per source: Hive and Impala `db.table`; SPARK tables of V2
#: catalogs `<catalog>.<namespace>.<table>` (a nested namespace, `ns1.ns2`, reads back wrong:
#: no V2 catalog navd names has one).
_TABLE_PARTS: Mapping[SourceType, int] = {SourceType.SPARK: 3}


def split_field(field_qualified_name: str, source_type: SourceType | str = SourceType.HIVE) -> tuple[str, str] | None:
    """`db.table.column@cluster` -> (`db.table@cluster`, `column`); None for a name without a
    table part. Read back of `field_qualified_name`.

    The cluster follows the last '@' (a column may hold an '@'; a cluster name may not); the
    table is the source's first dotted parts (2, or 3 for a SPARK `<catalog>.db.t`) and the
    column all the rest, dots included.
    """
    path, at, cluster = field_qualified_name.rpartition("@")
    lead = _TABLE_PARTS.get(SourceType(source_type), 2)
    parts = path.split(".", lead)
    if not at or not cluster or len(parts) <= lead or not all(parts):
        return None
    return ".".join(parts[:lead]) + "@" + cluster, parts[lead]


def table_of_field(field_qualified_name: str, source_type: SourceType | str = SourceType.HIVE) -> str | None:
    """`db.table.column@cluster` -> `db.table@cluster` (see `split_field`)."""
    split = split_field(field_qualified_name, source_type)
    return split[0] if split is not None else None


#: sources whose datasets' columns are named `<dataset>#<column>` (`path_field_qualified_name`)
_HASH_FIELD_SOURCES = frozenset({SourceType.HDFS, SourceType.S3, SourceType.OPENLINEAGE})


def field_ref(table: EntityRef, column: str) -> EntityRef:
    """The FIELD ref of `column` of `table` (same source type): a catalog table's column, or
    (HDFS) a column of the data in a directory or file (`path_field_qualified_name`), as the
    column of an OpenLineage dataset named verbatim; InvalidName for an empty column."""
    if table.source_type in _HASH_FIELD_SOURCES:
        return EntityRef(table.source_type, path_field_qualified_name(table.qualified_name, column),
                         ElementType.FIELD)
    return EntityRef(table.source_type, field_qualified_name(table.qualified_name, column), ElementType.FIELD)


def field_table(field: EntityRef) -> EntityRef | None:
    """The dataset ref a FIELD ref belongs to: a TABLE, or (HDFS) the DIRECTORY whose data holds
    the column (a FILE's columns name the file: the caller knows the dataset's type when it
    matters); None for a non-FIELD or a bare name."""
    if field.type is not ElementType.FIELD:
        return None
    if field.source_type in _HASH_FIELD_SOURCES:
        split = split_path_field(field.qualified_name)
        if split is None:
            return None
        kind = ElementType.DIRECTORY if field.source_type in PATH_SOURCES else ElementType.TABLE
        return EntityRef(field.source_type, split[0], kind)
    table = table_of_field(field.qualified_name, field.source_type)
    return EntityRef(field.source_type, table, ElementType.TABLE) if table is not None else None


def path_field_qualified_name(path_qualified_name: str, column: str) -> str:
    """A column of the data in a directory or file: `<path qualified name>#<column>` (HDFS
    FIELD). Read back by `split_path_field`.

    The column is lower case with surrounding blanks and backticks dropped, as a catalog
    column (Spark resolves file columns case-insensitively by default); '%' and '#' in it are
    percent-encoded, so the separator is the last '#' whatever the path holds, and dots,
    spaces, '/' and '@' in the column stay as they are (`hdfs://ns/out#b.c`).
    """
    if "://" not in path_qualified_name:
        raise InvalidName(f"path {path_qualified_name!r} is not a qualified name: no field {column!r} of it")
    name = _hive_part(column, "column").replace("%", "%25").replace("#", "%23")
    return f"{path_qualified_name}#{name}"


def split_path_field(field_qualified_name: str) -> tuple[str, str] | None:
    """`<path>#<column>` -> (path qualified name, column as given to `path_field_qualified_name`,
    decoded); None for a name without both parts."""
    path, sep, name = field_qualified_name.rpartition("#")
    if not sep or not name or "://" not in path:
        return None
    return path, name.replace("%23", "#").replace("%25", "%")


@dataclasses.dataclass(frozen=True, slots=True)
class HiveName:
    """The parts of a HIVE qualified name (`db[.table[.column]]@cluster[/k=v...]`)."""

    database: str
    table: str | None
    column: str | None
    cluster: str
    partition: str | None


# Database and table names hold no '.', '@' or '/' (Hive's metastore allows word characters only).
_HIVE_FIELD_NAME = re.compile(r"([^.@/]+)\.([^.@/]+)\.(.+)@([^@]+)", re.S)
_HIVE_NAME = re.compile(r"([^.@/]+)(?:\.([^.@/]+))?@([^/]*)(?:/(.*))?", re.S)


def parse_hive_name(qualified_name: str) -> HiveName | None:
    """The parts of a HIVE qualified name; None when it has no `@cluster`.

    db and table names hold no '.', '@' or '/', so the column is whatever follows the table, up
    to the last '@' (a column may hold '.', '@' or '/'); a table's or database's cluster ends at
    the first '/' after it (partition values may hold '@').
    """
    field = _HIVE_FIELD_NAME.fullmatch(qualified_name)
    if field is not None:
        return HiveName(field[1], field[2], field[3], field[4], None)
    name = _HIVE_NAME.fullmatch(qualified_name)
    if name is None:
        return None
    return HiveName(name[1], name[2], None, name[3], name[4])


def partition_path(spec: Mapping[str, str]) -> str:
    """`k=v/k2=v2` of a partition spec, keys lower case, values as given (escaped as in Hive's
    directory names): the partition's display name and its directory below the table's."""
    parts = []
    for key, value in spec.items():
        if not key or "/" in key or "=" in key or "/" in value:
            raise InvalidName(f"partition {key}={value} cannot be named: Hive escapes '/' and '=' in partition "
                              f"directory names (%2F, %3D); pass the escaped form")
        parts.append(f"{key.lower()}={value}")
    if not parts:
        raise InvalidName("empty partition spec")
    return "/".join(parts)


def parse_partition_path(text: str) -> dict[str, str]:
    """`k=v/k2=v2` (a `SHOW PARTITIONS` row, or the tail of a partition's name) -> {k: v},
    keys lower case. Read back of `partition_path`."""
    spec: dict[str, str] = {}
    for part in text.split("/"):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise InvalidName(f"partition {text!r} is not k=v/k2=v2")
        spec[key.lower()] = value
    return spec


def partition_qualified_name(cluster: str, database: str, table: str,
                             spec: Mapping[str, str]) -> str:
    """`db.table@cluster/k=v/k2=v2`. Read back by `split_partition`."""
    return hive_qualified_name(cluster, database, table) + "/" + partition_path(spec)


def split_partition(partition_qualified_name: str) -> tuple[str, dict[str, str]]:
    """`db.table@cluster/k=v/k2=v2` -> (`db.table@cluster`, {k: v, k2: v2}); the table part ends
    at the first '/' after the first '@' (partition values may hold '@')."""
    names, at, rest = partition_qualified_name.partition("@")
    cluster, slash, spec = rest.partition("/")
    if not (names and at and slash):
        raise InvalidName(f"{partition_qualified_name!r} is not a partition name (db.table@cluster/k=v)")
    return f"{names}@{cluster}", parse_partition_path(spec)


# --- file system paths -----------------------------------------------------------------------

def path_qualified_name(path: str, default_fs: str = "") -> str:
    """The one spelling of a file system path.

    `hdfs://NN:8020/a//b/` -> `hdfs://nn:8020/a/b`; `file:/x` and `file:///x` -> `file:///x`;
    a bare `/p` is qualified with `default_fs` (required then); `s3://b/k` and `s3n://b/k` ->
    `s3a://b/k` (one object, three connectors' spellings). Characters are kept as given (no
    percent-decoding): callers pass decoded paths, as the NameNode and S3 listings report them.
    Aliases between different authorities (`nn:8020` vs a nameservice) are the linker's job.
    """
    if not path:
        raise InvalidName("empty path")
    if path.startswith("/"):
        if not default_fs:
            raise InvalidName(f"path {shown(path)} has no scheme and no default file system is configured")
        return path_qualified_name(default_fs.rstrip("/") + path)
    scheme, sep, rest = path.partition(":")
    if not sep or not _is_scheme(scheme):
        raise InvalidName(f"path {shown(path)} is neither absolute nor a URI")
    scheme = scheme.lower()
    if scheme in S3_SCHEMES:
        scheme = S3_SCHEME
    if rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        tail = slash + tail
    else:
        authority, tail = "", rest
    if not tail.startswith("/"):
        tail = "/" + tail
    # Lower-case only the host part of the authority; user info is case-sensitive.
    if authority:
        try:
            netloc = urlsplit(f"{scheme}://{authority}/")
            port = netloc.port
        except ValueError as exc:  # an unclosed '[', a port out of range or not a number
            raise InvalidName(f"path {shown(path)} has a bad authority: {exc}") from None
        host = (netloc.hostname or "").lower()
        if ":" in host:
            host = f"[{host}]"  # an IPv6 address keeps its brackets, or its port could not be told apart
        userinfo = authority.rpartition("@")[0] if "@" in authority else ""
        authority = (userinfo + "@" if userinfo else "") + host + (f":{port}" if port else "")
    normalised = posixpath.normpath(tail)
    if normalised.startswith("//"):
        normalised = "/" + normalised.lstrip("/")
    return f"{scheme}://{authority}{normalised}"


def _is_scheme(text: str) -> bool:
    return bool(text) and text.replace("+", "").replace("-", "").replace(".", "").isalnum()


def is_path_name(name: str) -> bool:
    """Whether `name` is spelled as a file system URI (`hdfs://...`, `file:/...`), which
    `path_qualified_name` normalises, rather than an operation's `spark://`/`yarn://` name
    (whose application name may hold anything, brackets and colons included)."""
    scheme, sep, rest = name.partition(":")
    if not sep or not _is_scheme(scheme) or scheme.lower() in _OPERATION_SCHEMES:
        return False
    return rest.startswith("//") or scheme.lower() == "file"


def child_path(directory: str, name: str) -> str:
    """The path of entry `name` (no '/') of `directory`: a bare path or a qualified name (a root's
    trailing '/' is not doubled, `file:///` keeps its empty authority). Read back by
    `parent_path`."""
    base = directory.rstrip("/")
    if base.endswith(":"):  # file:/// -> file: ; put back the empty authority
        base += "//"
    return f"{base}/{name}"


def parent_path(path: str) -> str | None:
    """The directory of a bare path or a qualified name (`/a/b` -> `/a`, `/a` -> `/`,
    `hdfs://ns/a` -> `hdfs://ns/`, `file:///x` -> `file:///`); None for a root."""
    after_scheme = path.find("://")
    if after_scheme >= 0:
        root = path.find("/", after_scheme + 3)  # the '/' after the authority
        if root < 0:
            return None
        prefix, tail = path[:root], path[root:]
    else:
        prefix, tail = "", path
    tail = tail.rstrip("/")
    if not tail:
        return None
    return prefix + (tail.rpartition("/")[0] or "/")


#: the schemes of one S3 object (Hadoop's S3A connector, EMRFS and Hadoop 2's S3N) and the one
#: `path_qualified_name` spells them with
S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
S3_SCHEME = "s3a"
#: the source types whose elements are named by a path (`path_qualified_name`)
PATH_SOURCES = frozenset({SourceType.HDFS, SourceType.S3})


def path_source_type(qualified_name: str) -> SourceType:
    """Who owns the element of a path's qualified name: the S3 extractor for `s3a://`, else
    the HDFS extractor (HDFS, and every other file system navd names but does not crawl)."""
    return SourceType.S3 if qualified_name.startswith(S3_SCHEME + "://") else SourceType.HDFS


def path_ref(path: str, default_fs: str, type_: ElementType) -> EntityRef:
    """The element of a path (bare paths qualified with `default_fs`): HDFS, or S3 for an
    object store's `s3://`, `s3a://`, `s3n://` path."""
    qualified_name = path_qualified_name(path, default_fs)
    return EntityRef(path_source_type(qualified_name), qualified_name, type_)


def s3_qualified_name(bucket: str, key: str = "") -> str:
    """An S3 object or prefix `s3a://bucket/key` (no trailing slash), or the bucket itself
    `s3a://bucket/` (empty key). The key as S3 lists it, decoded. Read back by `split_s3_name`.
    InvalidName for a key that no path can spell: an empty segment (`a//b`), a `.` or `..`
    segment (`path_qualified_name` would fold it onto another object's name)."""
    if not bucket or "/" in bucket:
        raise InvalidName(f"S3 bucket name {shown(bucket)} is empty or holds a '/'")
    stripped = key.removesuffix("/")
    walled = f"/{stripped}/"  # every segment between two '/': one substring test per bad kind
    if stripped and ("//" in walled or "/./" in walled or "/../" in walled):
        raise InvalidName(f"S3 key {shown(key)} of bucket {shown(bucket)} has an empty, '.' or '..' segment: "
                          "no path names it")
    return f"{S3_SCHEME}://{bucket.lower()}/{stripped}"


def split_s3_name(qualified_name: str) -> tuple[str, str] | None:
    """`s3a://bucket/key` -> (`bucket`, `key`); the bucket `s3a://bucket/` -> (`bucket`, "");
    None for another name."""
    scheme, sep, rest = qualified_name.partition("://")
    if not sep or scheme != S3_SCHEME:
        return None
    bucket, _slash, key = rest.partition("/")
    return (bucket, key) if bucket else None


def directory_ref(path: str, default_fs: str) -> EntityRef:
    """The HDFS DIRECTORY of a path: an entry's parent, a table's or database's location."""
    return path_ref(path, default_fs, ElementType.DIRECTORY)


# --- operations and executions ---------------------------------------------------------------

#: the schemes of `operation_qualified_name`'s names: never file system paths
_OPERATION_SCHEMES = frozenset({SourceType.SPARK.value.lower(), SourceType.YARN.value.lower(),
                                SourceType.OPENLINEAGE.value.lower(), SourceType.HIVE.value.lower(),
                                SourceType.IMPALA.value.lower(), SourceType.OOZIE.value.lower()})


def operation_qualified_name(source_type: SourceType | str, *parts: str) -> str:
    """Operations and executions: `spark://<app name>` or `yarn://<app id>` and so on."""
    clean = [p.strip() for p in parts]
    if not clean or any(not p for p in clean):
        raise InvalidName(f"operation name parts must be non-empty: {parts!r}")
    return f"{SourceType(source_type).value.lower()}://" + "/".join(clean)


def spark_application_ref(app_name: str) -> EntityRef:
    """The Spark application (OPERATION, the template of its runs): `spark://<app name>`."""
    return EntityRef(SourceType.SPARK, operation_qualified_name(SourceType.SPARK, app_name), ElementType.OPERATION)


def spark_run_ref(application_id: str, attempt: str = "1") -> EntityRef:
    """One run of a Spark application: `spark://<app id>/<attempt>`. Written by the Spark
    extractor, named by the YARN extractor (LOGICAL_PHYSICAL) for a YARN application of type SPARK."""
    return EntityRef(SourceType.SPARK, operation_qualified_name(SourceType.SPARK, application_id, attempt),
                     ElementType.OPERATION_EXECUTION)


def spark_execution_ref(application_id: str, attempt: str, execution_id: int) -> EntityRef:
    """A (root) SQL execution of a Spark run: `spark://<app id>/<attempt>/sql/<execution id>`."""
    return EntityRef(SourceType.SPARK, operation_qualified_name(SourceType.SPARK, application_id, attempt, "sql",
                                                                str(execution_id)),
                     ElementType.OPERATION_EXECUTION)


def yarn_application_ref(application_type: str, name: str) -> EntityRef:
    """A YARN application (OPERATION, the template of its runs): `yarn://<type>/<name>`."""
    return EntityRef(SourceType.YARN, operation_qualified_name(SourceType.YARN, application_type, name),
                     ElementType.OPERATION)


def yarn_execution_ref(application_id: str) -> EntityRef:
    """A YARN application run: `yarn://<app id>`. Written by the YARN extractor, named by the
    Spark extractor (LOGICAL_PHYSICAL) for a Spark run on YARN."""
    return EntityRef(SourceType.YARN, operation_qualified_name(SourceType.YARN, application_id),
                     ElementType.OPERATION_EXECUTION)


def oozie_application_ref(kind: str, app_name: str) -> EntityRef:
    """An Oozie workflow, coordinator or bundle application (OPERATION, the template of its runs):
    `oozie://workflow/<app name>`, `oozie://coordinator/<app name>`, `oozie://bundle/<app name>`."""
    return EntityRef(SourceType.OOZIE, operation_qualified_name(SourceType.OOZIE, kind, app_name),
                     ElementType.OPERATION)


def oozie_execution_ref(job_or_action_id: str) -> EntityRef:
    """A run of an Oozie workflow or coordinator (`oozie://<job id>`), or one of its actions
    (`oozie://<job id>@<action name or number>`, Oozie's own action id)."""
    return EntityRef(SourceType.OOZIE, operation_qualified_name(SourceType.OOZIE, job_or_action_id),
                     ElementType.OPERATION_EXECUTION)


def query_operation_ref(source_type: SourceType, cluster: str, query_hash: str) -> EntityRef:
    """A Hive or Impala query (OPERATION, the template of its runs): `hive://<cluster>/query/<hash>`
    or `impala://...`, the hash being the one the engine logs (MD5 of the query text): the same
    text run again is the same operation, on each cluster its own."""
    return EntityRef(source_type, operation_qualified_name(source_type, cluster.strip().lower(), "query",
                                                           query_hash.lower()),
                     ElementType.OPERATION)


def query_execution_ref(source_type: SourceType, cluster: str, *run: str) -> EntityRef:
    """One run of a Hive or Impala query: `impala://<cluster>/execution/<query id>`, or for Hive,
    whose LineageLogger writes no query id, `hive://<cluster>/execution/<hash>/<start>/<user>`."""
    return EntityRef(source_type, operation_qualified_name(source_type, cluster.strip().lower(), "execution", *run),
                     ElementType.OPERATION_EXECUTION)


def openlineage_job_ref(namespace: str, name: str) -> EntityRef:
    """An OpenLineage job (OPERATION, the template of its runs): `openlineage://<namespace>/<name>`."""
    return EntityRef(SourceType.OPENLINEAGE, operation_qualified_name(SourceType.OPENLINEAGE, namespace, name),
                     ElementType.OPERATION)


def openlineage_run_ref(namespace: str, name: str, run_id: str) -> EntityRef:
    """One run of an OpenLineage job: `openlineage://<namespace>/<name>/<runId>` (the runId lower
    case, as UUIDs compare): a parent run facet names its parent so, from the same three parts."""
    return EntityRef(SourceType.OPENLINEAGE,
                     operation_qualified_name(SourceType.OPENLINEAGE, namespace, name, run_id.lower()),
                     ElementType.OPERATION_EXECUTION)


#: OpenLineage namespaces of file systems (OpenLineage's Naming.md): `<namespace>` + `<path>` is
#: a path, named as navd names paths (the HDFS extractor's and Spark's spelling)
OPENLINEAGE_PATH_SCHEMES = frozenset({"hdfs", "file", "viewfs", "s3", "s3a", "s3n", "gs", "gcs", "wasb", "wasbs",
                                      "abfs", "abfss", "dbfs", "o3fs", "ofs"})


def openlineage_dataset_ref(namespace: str, name: str, clusters: Mapping[str, str], default_cluster: str,
                            default_fs: str = "") -> EntityRef:
    """The element an OpenLineage dataset (namespace, name) is, by OpenLineage's naming:

    - a file system namespace (`hdfs://nn:8020`, `file`, `s3://bucket`, ...) + a path: the
      path's qualified name (`hdfs://nn:8020/data/x`, `file:///tmp/x`), an HDFS DIRECTORY;
    - `hive://host:port` + `db.table` of a metastore navd knows (`hive_namespace_cluster`):
      the Hive table `db.table@<cluster>`;
    - anything else, another metastore's `hive://` namespace too, and a name of a known one that
      is not `db.table`: `<namespace>/<name>` verbatim (an OPENLINEAGE TABLE), so nothing two
      systems call alike is merged.

    InvalidName when a path or a Hive name cannot be normalised."""
    scheme = namespace.partition(":")[0].lower() if ":" in namespace else namespace.lower()
    if scheme in OPENLINEAGE_PATH_SCHEMES:
        # `file` + `/tmp/x`; `hdfs://nn:8020` + `/x`; a symlink's `file:/warehouse` + `db.t`
        base = f"{scheme}://" if namespace.lower() == scheme else namespace.rstrip("/")
        qualified = path_qualified_name(f"{base.rstrip('/')}/{name.lstrip('/')}", default_fs)
        # DIRECTORY: what jobs read and write is mostly a directory, and the type of an
        # unlinked endpoint is only a hint (the linker resolves by qualified name)
        return EntityRef(path_source_type(qualified), qualified, ElementType.DIRECTORY)
    if scheme == "hive":
        cluster = hive_namespace_cluster(namespace, clusters, default_cluster)
        if cluster is not None:
            try:
                return _catalog_table_ref(namespace, name, cluster)
            except InvalidName:
                pass  # not `db.table` (a catalog.db.table of a federated engine): a dataset of its own
    if not namespace or not name:
        raise InvalidName(f"OpenLineage dataset {shown(namespace)} {shown(name)}: empty namespace or name")
    separator = "/" if "://" in namespace else "://"
    return EntityRef(SourceType.OPENLINEAGE, f"{namespace.rstrip('/')}{separator}{name.lstrip('/')}",
                     ElementType.TABLE)


def openlineage_dataset_name(ref: EntityRef, clusters: Mapping[str, str],
                             properties: Mapping[str, str] | None = None) -> tuple[str, str]:
    """The OpenLineage (namespace, name) of a navd dataset: the inverse of
    `openlineage_dataset_ref`, so a name written out and read back is the same element.

    - a path `hdfs://nn:8020/data/x`: (`hdfs://nn:8020`, `/data/x`); `file:///tmp/x`: (`file`, `/tmp/x`);
    - a Hive table or view `db.t@<cluster>`: (the namespace `clusters` maps to that cluster, the
      first in sorted order when several do, else `hive://<cluster>`, `db.t`): the unmapped
      namespace reads back as `[cluster] name`, so only the default cluster needs no mapping;
    - an OPENLINEAGE dataset: the namespace and name it came with (`properties` of its element),
      else its qualified name split after the authority;
    - anything else (a Spark V2 catalog table): (`<source type>://<cluster>`, the name before
      `@`), which reads back as an OPENLINEAGE dataset of its own.
    """
    qualified = ref.qualified_name
    s3 = split_s3_name(qualified) if ref.source_type is SourceType.S3 else None
    if s3 is not None:  # OpenLineage's naming: namespace `s3://{bucket}`, name the object key
        return f"s3://{s3[0]}", s3[1] or "/"
    if ref.source_type in PATH_SOURCES:
        parts = urlsplit(qualified)
        if parts.netloc:
            return f"{parts.scheme}://{parts.netloc}", parts.path or "/"
        return parts.scheme, parts.path or "/"
    if ref.source_type is SourceType.OPENLINEAGE:
        props = properties or {}
        if props.get("namespace") and props.get("openlineageName"):
            return props["namespace"], props["openlineageName"]
        scheme, separator, rest = qualified.partition("://")
        authority, slash, name = rest.partition("/")
        if separator and slash:
            return f"{scheme}://{authority}", name
        return (scheme, rest) if separator else ("openlineage", qualified)
    path, _at, cluster = qualified.rpartition("@")
    if ref.source_type is SourceType.HIVE:
        mapped = sorted(ns for ns, name in clusters.items() if name == cluster)
        return (mapped[0] if mapped else f"hive://{cluster}"), path
    return f"{ref.source_type.value.lower()}://{cluster}", path
def hive_namespace_cluster(namespace: str, clusters: Mapping[str, str], default_cluster: str) -> str | None:
    """The navd cluster whose Hive tables an OpenLineage `hive://` namespace names, or None when
    it is another metastore's. A namespace names a cluster's tables when `clusters` (`[openlineage]
    namespaces`) maps it to one, or when it is `hive://<cluster>` for `default_cluster` or a
    cluster `clusters` names: the spelling navd's own export gives a cluster without a mapping
    (`openlineage_dataset_name`), so what navd writes out reads back as the same table. Any other
    `hive://host:port` is a metastore navd was not told about: its `db.table` may well exist
    here too, and taking it for the local one would join two clusters' lineage."""
    key = namespace.rstrip("/")
    if key in clusters:
        return clusters[key]
    authority = key.partition("://")[2].lower() if key.lower().startswith("hive://") else ""
    known = {c.strip().lower(): c for c in (default_cluster, *clusters.values())}
    return known.get(authority) if authority else None


def openlineage_table_ref(namespace: str, name: str, clusters: Mapping[str, str], default_cluster: str) -> EntityRef | None:
    """The Hive table a `symlinks` facet's TABLE identifier names (the Spark listener's name of
    a catalog table beside its location), or None when it is no table of navd's clusters:
    `db.table@<cluster>` for a `hive://` namespace of a known metastore
    (`hive_namespace_cluster`), a namespace `clusters` maps, or a file-system namespace
    (`file:/warehouse`: a Spark session's own warehouse, named in `default_cluster` as the Spark
    extractor names it). Another metastore's or catalog's table (an unknown `hive://`, a Glue
    catalog) is None: the dataset keeps its own name. InvalidName when the name is not db.table."""
    scheme = namespace.partition(":")[0].lower()
    if scheme == "hive":
        cluster = hive_namespace_cluster(namespace, clusters, default_cluster)
    elif namespace.rstrip("/") in clusters:
        cluster = clusters[namespace.rstrip("/")]
    elif scheme in OPENLINEAGE_PATH_SCHEMES:
        cluster = default_cluster
    else:
        cluster = None
    return None if cluster is None else _catalog_table_ref(namespace, name, cluster)


def _catalog_table_ref(namespace: str, name: str, cluster: str) -> EntityRef:
    database, dot, table = name.partition(".")
    if not dot or "." in table:
        raise InvalidName(f"Hive dataset {shown(name)} of {shown(namespace)} is not db.table")
    return EntityRef(SourceType.HIVE, hive_qualified_name(cluster, database, table), ElementType.TABLE)


# --- display names ---------------------------------------------------------------------------

def display_name(qualified_name: str, type_: ElementType | str | None = None,
                 source_type: SourceType | str = SourceType.HIVE) -> str:
    """The short name shown for an element known only by its qualified name (a Spark stub, a
    lineage endpoint not indexed): a path's last segment (`file.csv`), a column's name
    (`db.t.b.c@c` -> `b.c`, see `split_field`; `hdfs://ns/out#b.c` -> `b.c`), a Hive or catalog name's last dotted part
    (`db.t@c` -> `t`), a partition's `k=v/k2=v2`; the whole name when nothing is left."""
    kind = ElementType(type_) if type_ is not None else None
    if kind is ElementType.FIELD and SourceType(source_type) in PATH_SOURCES:
        path_field = split_path_field(qualified_name)
        if path_field is not None:
            return path_field[1]
    if kind is ElementType.FIELD and "://" not in qualified_name:
        split = split_field(qualified_name, source_type)
        if split is not None:
            return split[1]
    if kind is ElementType.PARTITION and "@" in qualified_name:
        spec = qualified_name.partition("@")[2].partition("/")[2]
        if spec:
            return spec
    if "://" in qualified_name:  # a path (or an operation): '@' and '.' may be part of a segment
        name = qualified_name.rstrip("/").rsplit("/", 1)[-1]
    else:
        name = qualified_name.split("@", 1)[0].rsplit(".", 1)[-1]
    return name or qualified_name

"""Which extractor of navd's is responsible for a dataset a job named: the rule that decides
whether a reference no extractor has indexed yet is hidden from default lineage (Navigator's
rule: it waits for the metastore or HDFS extractor) or is an entity now (nothing will ever index
it: an object store, another cluster, a local file system, a warehouse navd does not crawl).

`responsible` is pure; `extracted_namespaces` reads the extractors' sections of a loaded
config (an extractor set up to run, by `navd run` or by `navd extract`): `[hive]` (the metastore extractor: the Hive tables of `[cluster] name`), `[hdfs]`
(the paths of `[cluster] default_fs`, and of the NameNode addresses `[linker] fs_aliases` maps to
it), `[s3]` (the buckets of its roots). docs/features/lineage.md, "References no extractor
indexed", says it for users."""

from __future__ import annotations

import dataclasses
from urllib.parse import urlsplit

from navd.config import NavdConfig
from navd.extractors.hdfs.settings import hdfs_settings
from navd.extractors.hms.settings import hive_settings
from navd.extractors.s3.settings import s3_settings
from navd.names import SourceType, split_s3_name


@dataclasses.dataclass(frozen=True)
class ExtractedNamespaces:
    """The namespaces navd's extractors index. `everything`: every reference waits for
    an extractor (Navigator's rule; what a walk without a config, such as a test's, assumes)."""

    #: `[cluster] name` when the metastore extractor is set up: Hive tables `db.t@<cluster>`
    hive_clusters: frozenset[str] = frozenset()
    #: `scheme://authority`, lower case, of the file systems the HDFS extractor crawls
    file_systems: frozenset[str] = frozenset()
    #: the buckets the S3 extractor lists
    s3_buckets: frozenset[str] = frozenset()
    everything: bool = False


#: Navigator's rule: every reference no extractor has indexed is hidden until one does
EVERYTHING_EXTRACTED = ExtractedNamespaces(everything=True)


def responsible(extracted: ExtractedNamespaces, source_type: str, qualified_name: str) -> bool:
    """Whether an extractor of navd's indexes the dataset (or column) `qualified_name` of
    `source_type` once it exists: then a reference to it waits for that extractor; else the
    reference is all navd will ever know of it, and is an entity as it stands.

    HIVE: its cluster (after the last `@`) is one whose metastore navd extracts. HDFS (every file
    system navd names but S3): its `scheme://authority` is one the HDFS extractor crawls. S3: its
    bucket is one the S3 extractor lists. Anything else (a Spark catalog's table, an OpenLineage
    dataset): no extractor indexes it."""
    if extracted.everything:
        return True
    if source_type == SourceType.HIVE.value:
        _name, at, cluster = qualified_name.rpartition("@")
        return bool(at) and cluster in extracted.hive_clusters
    if source_type == SourceType.S3.value:
        s3 = split_s3_name(qualified_name)
        return s3 is not None and s3[0].lower() in extracted.s3_buckets
    if source_type == SourceType.HDFS.value:
        file_system = _file_system(qualified_name)
        return file_system is not None and file_system in extracted.file_systems
    return False


def extracted_namespaces(config: NavdConfig) -> ExtractedNamespaces:
    """What the extractors of `config` index: those enabled, and those set up with what `navd
    extract NAME` needs to run them (`[hive] host`, `[hdfs] urls`, `[s3] roots`), as sites run
    them from cron; a section left empty indexes nothing, so what it would have named is shown as
    it is referenced."""
    # `enabled` needs these keys, so a section with them set is one navd runs, scheduled or not
    hive = frozenset({config.cluster.name}) if hive_settings(config).host else frozenset()
    file_systems: set[str] = set()
    default_fs = _file_system(config.cluster.default_fs) if config.cluster.default_fs else None
    if hdfs_settings(config).urls and default_fs is not None:
        file_systems.add(default_fs)
        # a NameNode address that names the default file system: jobs write paths under it too
        for authority, target in config.linker.aliases.items():
            if _file_system(target) == default_fs:
                file_systems.add(f"{urlsplit(target).scheme.lower()}://{authority.lower()}")
    buckets = frozenset(root.bucket for root in s3_settings(config).parsed_roots)
    return ExtractedNamespaces(hive_clusters=hive, file_systems=frozenset(file_systems), s3_buckets=buckets)


def _file_system(name: str) -> str | None:
    """`scheme://authority` of a path's qualified name or a file system URI, lower case
    (`hdfs://NN:8020/a` -> `hdfs://nn:8020`; `file:///x` -> `file://`); None without a scheme."""
    parts = urlsplit(name)
    if not parts.scheme:
        return None
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"

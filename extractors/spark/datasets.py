"""The datasets one Spark application reads and writes, named as their owning extractors name them.

Session-catalog tables (`spark_catalog.db.t`, `db.t`) are HIVE tables `db.t@cluster`; paths are
HDFS elements named by `path_qualified_name` (bare paths get the configured default FS, else
the application's fs.defaultFS), typed FILE when plainly a file (`part-*`, a data-file suffix)
else DIRECTORY; tables of other (V2) catalogs, which no extractor owns yet, are SPARK tables
`<catalog>.<ns>.<table>@cluster` (provisional). All names are made by navd.names. Pure.
"""

from __future__ import annotations

import dataclasses

from navd.model import ElementType, EntityRef, InvalidName, SourceType
from navd.names import (
    catalog_table_qualified_name,
    field_ref,
    hive_qualified_name,
    path_qualified_name,
    path_source_type,
)

from .application_run import Dataset
from .plan.model import ColumnSource, Read, TableId, Write
from .plan.text import SESSION_CATALOG


class ApplicationDatasets:
    """Names the tables, paths and columns of one application. What its environment event says
    (fs.defaultFS, the classes of its catalogs) is learned with `learn_environment`."""

    def __init__(self, *, cluster: str, default_fs: str = "") -> None:
        self.cluster = cluster
        self.default_fs = default_fs
        self._env_default_fs = ""
        self._catalog_classes: dict[str, list[str]] = {}
        #: source_fields by (table, paths, column): the same scanned columns recur in many executions
        self._source_fields: dict[tuple[TableId | None, tuple[str, ...], str], tuple[EntityRef, ...]] = {}

    def learn_environment(self, env_default_fs: str, catalogs: list[tuple[str, str]]) -> None:
        """The application's own fs.defaultFS and its catalogs, as (name, simple class name)."""
        self._env_default_fs = env_default_fs
        for name, simple in catalogs:
            self._catalog_classes.setdefault(simple, []).append(name)

    def table_ref(self, table: TableId, catalog_class: str | None = None) -> EntityRef:
        catalog = table.catalog
        if catalog is None and catalog_class is not None:
            names = self._catalog_classes.get(catalog_class, [])
            catalog = names[0] if len(names) == 1 else None
        if catalog_class is None and catalog in (None, SESSION_CATALOG):
            return EntityRef(SourceType.HIVE, hive_qualified_name(self.cluster, table.namespace, table.name),
                             ElementType.TABLE)
        # A table of another (V2) catalog: no extractor owns it yet.
        qn = catalog_table_qualified_name(self.cluster, catalog or "unknown_catalog", table.namespace or "default",
                                          table.name)
        return EntityRef(SourceType.SPARK, qn, ElementType.TABLE)

    def path_ref(self, path: str) -> EntityRef:
        """A path read or written; the configured default FS qualifies bare paths, else the
        application's own fs.defaultFS (from its environment event)."""
        qn = path_qualified_name(path, self.default_fs or self._env_default_fs)
        return EntityRef(path_source_type(qn), qn, path_type(qn))

    def write_dataset(self, write: Write) -> Dataset | None:
        if write.table is not None:
            ref = self.table_ref(write.table, write.catalog_class)
            if write.view and ref.source_type is SourceType.HIVE:
                # A persisted view of the session catalog: the HMS extractor's VIEW element.
                ref = dataclasses.replace(ref, type=ElementType.VIEW)
            return Dataset(ref, write.command)
        if write.path is not None:
            return Dataset(self.path_ref(write.path), write.command)
        return None

    def read_dataset(self, read: Read) -> Dataset | None:
        if read.table is not None:
            return Dataset(self.table_ref(read.table, read.catalog_class), read.node)
        if read.path is not None:
            return Dataset(self.path_ref(read.path), read.node, read.truncated)
        return None

    def source_fields(self, column: ColumnSource) -> tuple[EntityRef, ...]:
        """The FIELDs a scanned column is read from: its table's, else (a scan of paths) the
        column of each path read, the same HDFS FIELD a job writing that path names."""
        # table_ref without a catalog class depends only on the table and self.cluster
        key = (column.table, column.paths, column.column)
        if key not in self._source_fields:
            if column.table is not None:
                refs = [column_field(self.table_ref(column.table), column.column)]
            else:
                refs = []
                for path in column.paths:
                    try:
                        refs.append(column_field(self.path_ref(path), column.column))
                    except InvalidName:
                        continue   # a bare path without a default FS: not a dataset either

            self._source_fields[key] = tuple(r for r in refs if r is not None)
        return self._source_fields[key]


def column_field(table: EntityRef, column: str) -> EntityRef | None:
    """The FIELD of `column` of `table`; None for a column without a name (no edge for it)."""
    try:
        return field_ref(table, column)
    except InvalidName:
        return None


_FILE_SUFFIXES = frozenset({"csv", "tsv", "txt", "json", "jsonl", "parquet", "orc", "avro", "gz", "bz2",
                            "snappy", "zst", "lz4", "xml", "seq", "deflate"})


def path_type(qualified_name: str) -> ElementType:
    """FILE for what is plainly a file (`part-00000-...`, a data-file suffix), else DIRECTORY.

    Spark's plans do not say which a root path is; this is only the type hint of an unlinked
    endpoint (the linker resolves by qualified name, whatever the type).
    """
    last = qualified_name.rsplit("/", 1)[-1]
    suffix = last.rsplit(".", 1)[-1].lower() if "." in last else ""
    return ElementType.FILE if last.startswith("part-") or suffix in _FILE_SUFFIXES else ElementType.DIRECTORY

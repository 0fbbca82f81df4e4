"""HiveServer2 answers -> navd elements and relations (pure: no I/O).

`DESCRIBE FORMATTED db.t` rows (col_name, data_type, comment), as the Spark Thrift Server
(Spark 4.x) answers them, become a `TableInfo`:

    Id        int     the id          <- columns, in order (partition columns included)
    ...
    # Partition Information           <- only for partitioned tables
    # col_name  data_type  comment
    region    string
    (blank)
    # Detailed Table Information
    Catalog / Database / Table / Owner / Created Time / Type / Provider / Table Properties /
    Location / Serde Library / InputFormat / OutputFormat / View Text / View Catalog and
    Namespace / Comment / Storage Properties / ...  <- key, value rows

Other `# ...` sections (Hive's own layout, later Spark versions) are read as key/value rows too;
unknown keys are ignored, so a new row does not break anything.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from navd.model import Element, ElementType, EntityRef, Record, Relation, RelationType, SourceType
from navd.names import (InvalidName, child_path, directory_ref, hive_qualified_name, parse_partition_path,
                        partition_path, partition_qualified_name, shown)

_SECTION_PARTITIONS = "# partition information"
_PROPERTY = re.compile(r"(?:^|, )([^=,\[\]]+)=")


class BadTable(ValueError):
    """DESCRIBE output that cannot become a table; the message names the table."""


@dataclasses.dataclass(frozen=True, slots=True)
class Column:
    name: str
    data_type: str
    comment: str | None
    position: int            # 0-based, in the table's column order
    partition_key: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class TableInfo:
    database: str
    name: str
    table_type: str          # MANAGED, EXTERNAL or VIEW
    columns: tuple[Column, ...]
    owner: str | None = None
    created: datetime | None = None
    comment: str | None = None
    provider: str | None = None
    location: str | None = None
    serde: str | None = None
    input_format: str | None = None
    output_format: str | None = None
    properties: tuple[tuple[str, str], ...] = ()
    storage_properties: tuple[tuple[str, str], ...] = ()
    view_text: str | None = None
    view_default_database: str | None = None

    @property
    def is_view(self) -> bool:
        return self.table_type == "VIEW"

    @property
    def partition_keys(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.partition_key)


def parse_properties(text: str) -> tuple[tuple[str, str], ...]:
    """`[k=v, k2=v2]` -> ((k, v), (k2, v2)); a value may contain `, ` (split only before `key=`)."""
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    if not body:
        return ()
    starts = list(_PROPERTY.finditer(body))
    pairs: list[tuple[str, str]] = []
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(body)
        pairs.append((match.group(1).strip(), body[match.end():end]))
    return tuple(pairs)


def parse_time(text: str | None) -> datetime | None:
    """`Sun Nov 22 07:10:32 UTC 2026` (java.util.Date.toString in the server's zone).

    Only UTC/GMT are taken as zones; another zone's times are not guessed (None)."""
    if not text or text == "UNKNOWN":
        return None
    parts = text.split()
    if len(parts) != 6 or parts[4] not in ("UTC", "GMT"):
        return None
    try:
        return datetime.strptime(" ".join(parts[:4] + parts[5:]), "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def _cell(value: object) -> str:
    return "" if value is None else str(value).strip()


def table_info(database: str, table: str, rows: Sequence[Sequence[object]]) -> TableInfo:
    """A TableInfo from `DESCRIBE FORMATTED database.table` rows. Raises BadTable."""
    where = f"{database}.{table}"
    for what, name in (("database", database), ("table", table)):
        # Hive's metastore names hold word characters only; a '.', '@' or '/' would make a qualified
        # name that reads back as another element (navd/names.py)
        if not name.strip("` ") or any(c in name for c in ".@/"):
            raise BadTable(f"table {shown(where, 80)}: {what} name {shown(name, 80)} is not a Hive name")
    columns: list[tuple[str, str, str | None]] = []
    partition_names: list[str] = []
    details: dict[str, str] = {}
    section = "columns"
    for row in rows:
        if not isinstance(row, (list, tuple)):  # a driver's row is a sequence of cells; a str is not one
            raise BadTable(f"table {where}: DESCRIBE row is a {type(row).__name__}, not a list of cells")
        if len(row) < 2:
            raise BadTable(f"table {where}: DESCRIBE row with {len(row)} cells: {row!r}")
        name, value = _cell(row[0]), _cell(row[1])
        comment = _cell(row[2]) if len(row) > 2 and row[2] is not None else None
        if name.startswith("#"):
            if name.lower() == "# col_name":
                continue  # the header of the partition section
            section = "partitions" if name.lower() == _SECTION_PARTITIONS else "details"
            continue
        if not name:
            if section == "partitions":
                section = "after-partitions"
            continue
        if section == "columns":
            columns.append((name, value, comment or None))
        elif section == "partitions":
            partition_names.append(name.lower())
        elif section == "details":
            details.setdefault(name, value)
    if not columns and details.get("Type") != "VIEW":
        raise BadTable(f"table {where}: DESCRIBE FORMATTED listed no columns")
    table_type = (details.get("Type") or "").upper()
    if table_type not in ("MANAGED", "EXTERNAL", "VIEW"):
        raise BadTable(f"table {where}: unknown table type {details.get('Type')!r}")
    names = [c[0].lower() for c in columns]
    missing = [p for p in partition_names if p not in names]
    if missing:
        raise BadTable(f"table {where}: partition columns {missing} are not among its columns")
    view_ns = details.get("View Catalog and Namespace")
    return TableInfo(
        database=database.lower(), name=table.lower(), table_type=table_type,
        columns=tuple(Column(n, t, c, i, n.lower() in partition_names) for i, (n, t, c) in enumerate(columns)),
        owner=details.get("Owner") or None, created=parse_time(details.get("Created Time")),
        comment=details.get("Comment") or None, provider=details.get("Provider") or None,
        location=details.get("Location") or None, serde=details.get("Serde Library") or None,
        input_format=details.get("InputFormat") or None, output_format=details.get("OutputFormat") or None,
        properties=parse_properties(details.get("Table Properties", "")),
        storage_properties=parse_properties(details.get("Storage Properties", "")),
        view_text=details.get("View Original Text") or details.get("View Text") or None,
        # `spark_catalog.default`: unqualified names in the view resolve in that namespace.
        view_default_database=view_ns.rsplit(".", 1)[-1].lower() if view_ns else None,
    )


# --- records ---------------------------------------------------------------------------------

def database_ref(cluster: str, database: str) -> EntityRef:
    return EntityRef(SourceType.HIVE, hive_qualified_name(cluster, database), ElementType.DATABASE)


def table_ref(cluster: str, database: str, table: str, *, view: bool = False) -> EntityRef:
    return EntityRef(SourceType.HIVE, hive_qualified_name(cluster, database, table),
                     ElementType.VIEW if view else ElementType.TABLE)


def field_ref(cluster: str, database: str, table: str, column: str) -> EntityRef:
    return EntityRef(SourceType.HIVE, hive_qualified_name(cluster, database, table, column), ElementType.FIELD)


def database_records(cluster: str, database: str, details: Mapping[str, str], default_fs: str,
                     extractor_run_id: str | None = None) -> list[Record]:
    """The DATABASE element from `DESCRIBE DATABASE EXTENDED` (key, value) rows."""
    location = details.get("Location") or None
    props = {"catalog": details["Catalog Name"]} if details.get("Catalog Name") else {}
    props.update({f"property.{k}": v for k, v in parse_properties(details.get("Properties", ""))})
    element = Element(SourceType.HIVE, ElementType.DATABASE, hive_qualified_name(cluster, database),
                      name=database.lower(), owner=details.get("Owner") or None,
                      description=details.get("Comment") or None, file_system_path=location,
                      extractor_run_id=extractor_run_id, properties=props)
    out: list[Record] = [element]
    if location:
        out.append(Relation(RelationType.LOGICAL_PHYSICAL, element.ref, directory_ref(location, default_fs),
                            linked2=False, extractor_run_id=extractor_run_id))
    return out


def table_records(info: TableInfo, cluster: str, default_fs: str,
                  extractor_run_id: str | None = None) -> list[Record]:
    """The table (or view) element, its columns, PARENT_CHILD db -> table -> column and
    LOGICAL_PHYSICAL table -> its directory (unlinked: the HDFS extractor indexes it)."""
    db = database_ref(cluster, info.database)
    props: dict[str, str] = {"tableType": info.table_type}
    for key, value in (("provider", info.provider), ("serdeLibrary", info.serde),
                       ("inputFormat", info.input_format), ("outputFormat", info.output_format)):
        if value:
            props[key] = value
    if info.partition_keys:
        props["partitionKeys"] = ",".join(k.lower() for k in info.partition_keys)
    props.update({f"tblproperty.{k}": v for k, v in info.properties})
    props.update({f"storageproperty.{k}": v for k, v in info.storage_properties})
    table = Element(SourceType.HIVE, ElementType.VIEW if info.is_view else ElementType.TABLE,
                    hive_qualified_name(cluster, info.database, info.name), name=info.name, parent=db,
                    file_system_path=info.location, owner=info.owner, created=info.created,
                    description=info.comment, query_text=info.view_text if info.is_view else None,
                    internal_type=info.table_type, extractor_run_id=extractor_run_id, properties=props)
    out: list[Record] = [table, Relation(RelationType.PARENT_CHILD, db, table.ref, extractor_run_id=extractor_run_id)]
    for column in info.columns:
        field = Element(SourceType.HIVE, ElementType.FIELD,
                        hive_qualified_name(cluster, info.database, info.name, column.name),
                        name=column.name.lower(), parent=table.ref, data_type=column.data_type,
                        description=column.comment, extractor_run_id=extractor_run_id,
                        properties={"position": str(column.position),
                                    "partitionKey": "true" if column.partition_key else "false"})
        out.append(field)
        out.append(Relation(RelationType.PARENT_CHILD, table.ref, field.ref, extractor_run_id=extractor_run_id))
    if info.location and not info.is_view:
        out.append(Relation(RelationType.LOGICAL_PHYSICAL, table.ref, directory_ref(info.location, default_fs),
                            linked2=False, extractor_run_id=extractor_run_id))
    return out


def parse_partition(text: str) -> dict[str, str]:
    """A `SHOW PARTITIONS` row, `k=v/k2=v2` (values escaped as in the directory names)."""
    try:
        return parse_partition_path(text)
    except InvalidName as exc:
        raise BadTable(str(exc)) from None


def partition_records(cluster: str, database: str, table: str, partition: str, table_location: str | None,
                      default_fs: str, extractor_run_id: str | None = None) -> list[Record]:
    """A PARTITION element under its table; LOGICAL_PHYSICAL to `<table location>/k=v/...`,
    Hive's default partition directory (SHOW PARTITIONS does not say whether a partition was
    given another location)."""
    spec = parse_partition(partition)
    parent = table_ref(cluster, database, table)
    name = partition_path(spec)
    location = child_path(table_location, name) if table_location else None
    element = Element(SourceType.HIVE, ElementType.PARTITION,
                      partition_qualified_name(cluster, database, table, spec), name=name, parent=parent,
                      file_system_path=location, extractor_run_id=extractor_run_id,
                      properties={f"partition.{k}": v for k, v in spec.items()})
    out: list[Record] = [element, Relation(RelationType.PARENT_CHILD, parent, element.ref,
                                           extractor_run_id=extractor_run_id)]
    if location:
        out.append(Relation(RelationType.LOGICAL_PHYSICAL, element.ref, directory_ref(location, default_fs),
                            linked2=False, extractor_run_id=extractor_run_id))
    return out


def owned_names(records: Iterable[Record]) -> list[tuple[str, str]]:
    """(qualifiedName, type) of the HIVE elements among `records`: what a table owns in the index."""
    return [(r.qualified_name, r.type.value) for r in records
            if isinstance(r, Element) and r.source_type is SourceType.HIVE]


__all__ = ["BadTable", "Column", "TableInfo", "database_records", "database_ref", "directory_ref", "field_ref",
           "owned_names", "parse_partition", "parse_properties", "parse_time", "partition_records",
           "table_info", "table_records", "table_ref"]

"""The Hive Metastore pull extractor: databases, tables, views, columns and partitions, read
through HiveServer2 (PyHive), full or incremental.

Per database, every run sends `DESCRIBE DATABASE EXTENDED db` and one
`SHOW TABLE EXTENDED IN db LIKE '*'`: the Spark Thrift Server answers the latter with one row
per table whose text holds owner, create time, type, provider, table properties, location,
serde and formats, view text and the schema (names and types). navd keeps a fingerprint (SHA-256)
of that text per table; a table whose fingerprint is unchanged is not described again. Checked
against Spark 4.3: ADD/REPLACE COLUMNS, SET TBLPROPERTIES, SET LOCATION, ALTER VIEW, COMMENT ON
TABLE, DROP + CREATE (create time) all change the text; INSERTs do not (and change no metadata
navd keeps). What it misses: a column comment changed again on a data source table (Spark's
schema text has no comments; the first change adds a Statistics line, later ones change
nothing); `full=True` catches that. Partitions are not in that text: a partitioned table costs
one `SHOW PARTITIONS` per run, whose list is fingerprinted too.

A changed (or new) table gets `DESCRIBE FORMATTED db.t` and all its records; views also get
table- and column-level DATA_FLOW from what their SQL reads (views.py), computed at the end of
the run so that every input described in the run is known.

Deletions: what the metastore lists (plus what navd knows each unchanged table owns, from the
state) is compared with the HIVE elements of this cluster indexed and not deleted; those in the
databases and tables the filters select that are not listed any more are flagged deleted. Only
a run that listed every selected database completely does this, and only when the deletion
fail-safe (extractors/common/deletions.py) allows it: not after an empty listing while elements
are indexed, nor for more than `[deletions] max_share_percent` of the indexed elements in scope.

State (state_dir/hms-state.sqlite): per table its fingerprint, its partitions' fingerprint, its
location, its columns (for view lineage) and the qualified names of the elements it owns; per
database the fingerprint of its DESCRIBE DATABASE. Committed only after the writer flushed the
records that came before, so a killed run redoes at most one database.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from navd.config import NavdConfig
from navd.extractors.hms.settings import HiveConfig, hive_settings
from navd.errors import NavdError, first_line
from navd.extractors.hms.records import (BadTable, database_records, field_ref, owned_names, partition_records,
                                         table_info, table_records, table_ref)
from navd.extractors.hms.incarnations import retire_incarnations
from navd.extractors.hms.views import ViewSqlError, view_lineage
from navd.index.client import SolrIndex
from navd.index.queries import flagged_hive_elements, hive_elements_not_flagged
from navd.extractors import CHECKPOINT, Checkpoint
from navd.extractors.common.deletions import DeletionGuard, DeletionsConfig
from navd.logs import get_logger
from navd.state import SqliteState
from navd.model import DependencyType, Deletion, ElementType, EntityRef, Record, Relation, RelationType, SourceType
from navd.names import InvalidName, hive_qualified_name, parse_hive_name

LOGGER = "navd.extractor.hms"
log = get_logger(LOGGER)


class HmsExtractionError(NavdError):
    """The run failed (HiveServer2 unreachable, a statement refused): nothing was flagged deleted."""


def connect(config: HiveConfig) -> Any:
    """A PyHive connection to HiveServer2 from [hive]; the password goes only to PyHive.

    PyHive has no timeout option, so the transport is the one PyHive would build (a Thrift
    socket, SASL PLAIN or GSSAPI, or buffered for NOSASL) with `[hive] timeout_seconds` set on
    the socket: a server that stops answering fails the run instead of hanging it."""
    from pyhive import hive  # noqa: PLC0415 - imported when a connection is made, not at import time
    from thrift.transport.TSocket import TSocket  # noqa: PLC0415
    from thrift.transport.TTransport import TBufferedTransport  # noqa: PLC0415

    if not config.host:
        raise NavdError("[hive] host: needed to reach HiveServer2")
    socket = TSocket(config.host, config.port)
    socket.setTimeout(config.timeout_seconds * 1000.0)
    transport: Any
    if config.auth == "NOSASL":
        transport = TBufferedTransport(socket)
    else:
        import thrift_sasl  # noqa: PLC0415

        mechanism = "GSSAPI" if config.auth == "KERBEROS" else "PLAIN"
        service = config.kerberos_service_name if config.auth == "KERBEROS" else None
        # PLAIN needs a non-empty password even where HiveServer2 checks none (auth NONE).
        password = config.password if config.auth in ("LDAP", "CUSTOM") else "x"

        def sasl_client() -> Any:
            return hive.get_installed_sasl(host=config.host, sasl_auth=mechanism, service=service,
                                           username=config.username, password=password)

        transport = thrift_sasl.TSaslClientTransport(sasl_client, mechanism, socket)
    try:
        return hive.connect(thrift_transport=transport, username=config.username)
    except Exception as exc:  # thrift/SASL raise many types; the message says enough
        raise HmsExtractionError(f"cannot connect to HiveServer2 at {config.host}:{config.port} "
                                 f"(auth {config.auth}): {_hive_reason(exc)}") from None


# --- filters -----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class TableFilter:
    """(database regex, table regex) pairs, matched whole and case-insensitively (Atlas' import-hive)."""

    rules: tuple[tuple[str, str], ...] = ((".*", ".*"),)

    @classmethod
    def from_file(cls, path: Path) -> TableFilter:
        """Lines `db:table` (regexes; `db` alone means all its tables); `#` comments, blanks ignored."""
        rules = []
        for number, raw in enumerate(path.read_text().splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            db, _, table = line.partition(":")
            for what in (db, table or ".*"):
                try:
                    re.compile(what)
                except re.error as exc:
                    raise NavdError(f"{path}:{number}: bad regex {what!r}: {exc}") from None
            rules.append((db.strip(), table.strip() or ".*"))
        return cls(tuple(rules))

    def database(self, db: str) -> bool:
        return any(re.fullmatch(d, db, re.IGNORECASE) for d, _ in self.rules)

    def table(self, db: str, table: str) -> bool:
        return any(re.fullmatch(d, db, re.IGNORECASE) and re.fullmatch(t, table, re.IGNORECASE)
                   for d, t in self.rules)


# --- state -------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class TableState:
    fingerprint: str
    partitions: str
    is_view: bool
    location: str | None
    columns: tuple[str, ...]
    owned: tuple[tuple[str, str], ...]


class HmsState(SqliteState):
    FILE_NAME = "hms-state.sqlite"
    SCHEMA = """
        CREATE TABLE IF NOT EXISTS tables (db TEXT, name TEXT, fingerprint TEXT, partitions TEXT,
                                           is_view INTEGER, location TEXT, columns TEXT, owned TEXT,
                                           PRIMARY KEY (db, name));
        CREATE TABLE IF NOT EXISTS databases (name TEXT PRIMARY KEY, fingerprint TEXT);
    """

    def table(self, db: str, name: str) -> TableState | None:
        row = self.db.execute("SELECT fingerprint, partitions, is_view, location, columns, owned FROM tables "
                              "WHERE db = ? AND name = ?", (db, name)).fetchone()
        if row is None:
            return None
        return TableState(row[0], row[1], bool(row[2]), row[3], tuple(json.loads(row[4])),
                          tuple(tuple(x) for x in json.loads(row[5])))  # type: ignore[misc]

    def put_table(self, db: str, name: str, state: TableState) -> None:
        self.db.execute("INSERT OR REPLACE INTO tables VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (db, name, state.fingerprint, state.partitions, int(state.is_view), state.location,
                         json.dumps(list(state.columns)), json.dumps([list(o) for o in state.owned])))

    def tables_of(self, db: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM tables WHERE db = ?", (db,))]

    def drop_table(self, db: str, name: str) -> None:
        self.db.execute("DELETE FROM tables WHERE db = ? AND name = ?", (db, name))

    def schema(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        for db, name, columns in self.db.execute("SELECT db, name, columns FROM tables"):
            out.setdefault(db, {})[name] = json.loads(columns)
        return out

    def database(self, name: str) -> str | None:
        row = self.db.execute("SELECT fingerprint FROM databases WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def put_database(self, name: str, fingerprint: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO databases VALUES (?, ?)", (name, fingerprint))

    def databases(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM databases")]

    def drop_database(self, name: str) -> None:
        self.db.execute("DELETE FROM databases WHERE name = ?", (name,))
        self.db.execute("DELETE FROM tables WHERE db = ?", (name,))



# --- the extractor -----------------------------------------------------------------------------

@dataclasses.dataclass
class HmsReport:
    databases: int = 0
    tables: int = 0
    tables_described: int = 0
    tables_unchanged: int = 0
    partitions: int = 0
    views_with_lineage: int = 0
    records: int = 0
    deletions: int = 0
    skipped: int = 0        # bad tables and views (odd DESCRIBE output, unparseable SQL), each logged
    statements: int = 0     # statements sent to HiveServer2
    complete: bool = False
    incarnation_relations: int = 0  # query lineage moved to an earlier incarnation (incarnations.py)
    deletions_refused: int = 0  # entities the deletion fail-safe did not flag (see `refused`)
    refused: str = ""       # why, naming the config key


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _hive_reason(exc: BaseException) -> str:
    """A HiveServer2 failure in one line: PyHive raises with the Thrift response as its argument,
    whose repr carries the server's whole Java stack; its status's errorMessage says it."""
    response = exc.args[0] if exc.args else None
    status = getattr(response, "status", None)
    message = getattr(status, "errorMessage", None)
    if message:
        return first_line(str(message), 300)
    if status is not None:
        return f"{type(response).__name__}: status {getattr(status, 'statusCode', '?')} (the server went away?)"
    return first_line(exc, 300)


def _close_cursor(cursor: Any) -> None:
    """Close a cursor whose server may have gone away. PyHive's close sends CloseOperation for the
    last statement and raises the Thrift response when HiveServer2 is down: raised from a
    `finally`, that replaced the run's own one-line error with the response's whole repr."""
    try:
        cursor.close()
    except Exception as exc:
        log.warning("closing the HiveServer2 cursor failed (the server went away?)", reason=_hive_reason(exc))


class HmsExtractor:
    name = "hms"

    def __init__(self, connection: Any, index: SolrIndex, *, cluster: str, default_fs: str, state_dir: Path,
                 database_regex: str = ".*", table_regex: str = ".*", filter_file: Path | None = None,
                 extractor_run_id: str | None = None, deletions: DeletionsConfig = DeletionsConfig(),
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC), server: str = "") -> None:
        self.connection = connection
        self.server = server  # "HiveServer2 at host:port", named by a failed run's message
        self.index = index
        self.cluster = cluster
        self.default_fs = default_fs
        self.state = HmsState(state_dir)
        self.filter = TableFilter.from_file(filter_file) if filter_file else TableFilter(((database_regex, table_regex),))
        self.extractor_run_id = extractor_run_id or f"hms##{datetime.now(UTC):%Y%m%dT%H%M%S}"
        self.clock = clock
        self.report = HmsReport()
        self.deletions = deletions

    @classmethod
    def from_config(cls, config: NavdConfig, index: SolrIndex, state_dir: Path, *,
                    filter_file: Path | None = None, extractor_run_id: str | None = None) -> HmsExtractor:
        hive = hive_settings(config)
        return cls(connect(hive), index, cluster=config.cluster.name, default_fs=config.cluster.default_fs,
                   state_dir=state_dir, database_regex=hive.database_regex,
                   table_regex=hive.table_regex, filter_file=filter_file,
                   extractor_run_id=extractor_run_id, deletions=config.deletions,
                   server=f"HiveServer2 at {hive.host}:{hive.port}")

    # -- one run (the runner writes what `extract` yields; navd.extractors.run_pass) -------------

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """Records of one run, a checkpoint after each database; deletions last, only if every
        selected database was listed. The fingerprints decide what changed; `full` describes
        every table again."""
        self.report = HmsReport()
        cursor = self.connection.cursor()
        listed: set[str] = set()          # qualified names the metastore has now (or navd keeps)
        views: list[tuple[Any, EntityRef]] = []
        try:
            databases = [str(r[0]) for r in self._query(cursor, "SHOW DATABASES")]
            selected = [d for d in databases if self.filter.database(d)]
            for db in selected:
                yield from self._database(cursor, db.lower(), full, listed, views)
                yield CHECKPOINT
            yield from self._view_lineage(views)
            self.report.complete = True
            yield from self._deletions({d.lower() for d in selected}, listed)
        except Exception as exc:
            if isinstance(exc, NavdError):
                raise
            where = f"{self.server}: " if self.server else ""
            raise HmsExtractionError(f"Hive metastore extraction failed: {where}{_hive_reason(exc)} (nothing "
                                     "flagged deleted; the next run retries)") from None
        finally:
            _close_cursor(cursor)

    def commit(self) -> None:
        """Persist the state. Call only after the writer has flushed every record yielded so far."""
        self.state.commit()

    def rollback(self) -> None:
        self.state.rollback()

    def finished(self, records: int) -> HmsReport:
        self.report.records = records
        return self.report

    def close(self) -> None:
        self.state.close()
        try:
            self.connection.close()
        except Exception as exc:  # noqa: BLE001 - a dead HiveServer2 connection closes anyway
            log.debug("HiveServer2 connection close failed", reason=first_line(exc))

    # -- internals ------------------------------------------------------------------------------

    def _query(self, cursor: Any, sql: str) -> list[Sequence[Any]]:
        self.report.statements += 1
        cursor.execute(sql)
        return list(cursor.fetchall())

    def _database(self, cursor: Any, db: str, full: bool, listed: set[str],
                  views: list[tuple[Any, EntityRef]]) -> Iterator[Record]:
        self.report.databases += 1
        details = {str(k): "" if v is None else str(v)
                   for k, v, *_ in self._query(cursor, f"DESCRIBE DATABASE EXTENDED {_quote(db)}")}
        fingerprint = _sha(json.dumps(sorted(details.items())))
        db_records = database_records(self.cluster, db, details, self.default_fs, self.extractor_run_id)
        listed.update(qn for qn, _ in owned_names(db_records))
        flagged = self._flagged_deleted(db)
        if full or self.state.database(db) != fingerprint or hive_qualified_name(self.cluster, db) in flagged:
            yield from db_records
            self.state.put_database(db, fingerprint)
        rows = self._query(cursor, f"SHOW TABLE EXTENDED IN {_quote(db)} LIKE '*'")
        seen: set[str] = set()
        described: dict[str, tuple[EntityRef, int]] = {}  # identity -> (table, create time)
        for row in rows:
            name, temporary, information = str(row[1]).lower(), bool(row[2]), str(row[3] or "")
            if temporary or not self.filter.table(db, name):
                continue
            seen.add(name)
            self.report.tables += 1
            rewrite = full or hive_qualified_name(self.cluster, db, name) in flagged
            yield from self._table(cursor, db, name, information, rewrite, listed, views, described)
        if described:
            # A described table may be a re-created one: lineage logged against its earlier
            # incarnation moves to that incarnation's own (deleted) element.
            self.report.incarnation_relations += retire_incarnations(
                self.index, described, now=self.clock(), extractor_run_id=self.extractor_run_id)
        for gone in set(self.state.tables_of(db)) - seen:
            self.state.drop_table(db, gone)

    def _flagged_deleted(self, db: str) -> set[str]:
        """Qualified names of `db` and its tables and views that the index has flagged deleted.

        Another source can flag a table the metastore still has (a DROP in an old Spark event log
        read late, for an earlier table of the same name): whatever is listed now and flagged is
        rewritten, fingerprint or not, so the metastore's word on existence wins on its next run.
        """
        database = parse_hive_name(hive_qualified_name(self.cluster, db))
        assert database is not None  # hive_qualified_name always names a cluster
        docs = self.index.scan("elements", fl="identity,qualifiedName",
                               filters=flagged_hive_elements(database.database))
        flagged = set()
        for doc in docs:
            name = parse_hive_name(str(doc["qualifiedName"]))
            if (name is not None and name.database == database.database and name.cluster == database.cluster
                    and name.partition is None):
                flagged.add(str(doc["qualifiedName"]))
        return flagged

    def _table(self, cursor: Any, db: str, name: str, information: str, full: bool, listed: set[str],
               views: list[tuple[Any, EntityRef]], described: dict[str, tuple[EntityRef, int]]) -> Iterator[Record]:
        where = f"{db}.{name}"
        previous = self.state.table(db, name)
        fingerprint = _sha(information)
        # "Partition Columns: [`region`]": the table's partitions are not in the text; list them.
        partitions: list[str] = []
        if "\nPartition Columns:" in information:
            partitions = sorted(str(r[0]) for r in self._query(cursor, f"SHOW PARTITIONS {_quote(db)}.{_quote(name)}"))
        partitions_fp = _sha("\n".join(partitions))
        try:
            if full or previous is None or previous.fingerprint != fingerprint:
                rows = self._query(cursor, f"DESCRIBE FORMATTED {_quote(db)}.{_quote(name)}")
                info = table_info(db, name, rows)
                out = table_records(info, self.cluster, self.default_fs, self.extractor_run_id)
                for partition in partitions:
                    out += partition_records(self.cluster, db, name, partition, info.location, self.default_fs,
                                             self.extractor_run_id)
                self.report.tables_described += 1
                self.report.partitions += len(partitions)
                state = TableState(fingerprint, partitions_fp, info.is_view, info.location,
                                   tuple(c.name.lower() for c in info.columns), tuple(owned_names(out)))
                if info.is_view:
                    views.append((info, out[0].ref))  # type: ignore[union-attr]
                if info.created is not None:
                    ref = out[0].ref  # type: ignore[union-attr]
                    described[ref.identity] = (ref, int(info.created.timestamp()))
            elif previous.partitions != partitions_fp:
                out = []
                for partition in partitions:
                    out += partition_records(self.cluster, db, name, partition, previous.location, self.default_fs,
                                             self.extractor_run_id)
                self.report.partitions += len(partitions)
                kept = tuple(o for o in previous.owned if o[1] != ElementType.PARTITION.value)
                state = dataclasses.replace(previous, partitions=partitions_fp, owned=kept + tuple(owned_names(out)))
            else:
                self.report.tables_unchanged += 1
                listed.update(qn for qn, _ in previous.owned)
                return
        except (BadTable, InvalidName) as exc:  # InvalidName: a table, column or location navd cannot spell
            self.report.skipped += 1
            log.warning("Hive table skipped", table=where, reason=str(exc))
            if previous is not None:
                listed.update(qn for qn, _ in previous.owned)  # keep what was indexed: not proven gone
            return
        self.state.put_table(db, name, state)
        listed.update(qn for qn, _ in state.owned)
        yield from out

    def _view_lineage(self, views: list[tuple[Any, EntityRef]]) -> Iterator[Record]:
        if not views:
            return
        schema = self.state.schema()
        for info, view_ref in views:
            where = f"{info.database}.{info.name}"
            if not info.view_text:
                continue
            try:
                result = view_lineage(where, info.view_text, info.view_default_database or info.database,
                                      [c.name for c in info.columns], schema)
            except ViewSqlError as exc:
                self.report.skipped += 1
                log.warning("view lineage skipped", view=where, reason=str(exc))
                continue
            if result.note:
                log.info("view column lineage incomplete", view=where, reason=result.note)
            self.report.views_with_lineage += 1
            for source in result.inputs:
                known = self.state.table(source.database, source.table)
                ref = table_ref(self.cluster, source.database, source.table, view=bool(known and known.is_view))
                yield Relation(RelationType.DATA_FLOW, ref, view_ref, linked1=known is not None,
                               extractor_run_id=self.extractor_run_id, properties={"via": "view"})
            for edge in result.columns:
                known = self.state.table(edge.source_table.database, edge.source_table.table)
                yield Relation(RelationType.DATA_FLOW,
                               field_ref(self.cluster, edge.source_table.database, edge.source_table.table,
                                         edge.source_column),
                               field_ref(self.cluster, info.database, info.name, edge.target),
                               linked1=known is not None,
                               dependency_type=DependencyType.SIMPLE if edge.expression is None
                               else DependencyType.EXPRESSION,
                               expression=edge.expression, extractor_run_id=self.extractor_run_id)

    def _deletions(self, selected: set[str], listed: set[str]) -> Iterator[Record]:
        """HIVE elements of this cluster, indexed and not deleted, in the selected scope and no
        longer listed; nothing when the deletion fail-safe refuses (counted in a first scan, so
        the decision comes before the first Deletion and no list of names is held)."""
        indexed = would_flag = 0
        for qualified_name, _type in self._indexed_in_scope():
            indexed += 1
            would_flag += qualified_name not in listed
        guard = DeletionGuard(self.deletions, LOGGER)
        # The metastore is one listing: its scope is every selected database of the cluster.
        allowed = guard.allows(f"the selected Hive databases of cluster {self.cluster}", would_flag=would_flag,
                               indexed=indexed, listed=len(selected), failed=not self.report.complete)
        self.report.deletions_refused, self.report.refused = guard.refused_count, guard.reason
        if allowed:
            now = self.clock()
            for qualified_name, kind in self._indexed_in_scope():
                if qualified_name not in listed:
                    yield Deletion(EntityRef(SourceType.HIVE, qualified_name, kind), now)
                    self.report.deletions += 1
            # Kept after a refusal: an unlisted database's fingerprints spare describing it again.
            for db in set(self.state.databases()) - selected:
                if self.filter.database(db):
                    self.state.drop_database(db)

    def _indexed_in_scope(self) -> Iterator[tuple[str, ElementType]]:
        for doc in self.index.scan("elements", filters=hive_elements_not_flagged(), fl="qualifiedName,type"):
            qualified_name = str(doc.get("qualifiedName", ""))
            if self._in_scope(qualified_name):
                yield qualified_name, ElementType(str(doc["type"]))

    def _in_scope(self, qualified_name: str) -> bool:
        """`db[.table[.column]]@cluster[/k=v...]` of this cluster, its db and table selected."""
        name = parse_hive_name(qualified_name)
        if name is None or name.cluster != self.cluster.strip().lower():
            return False
        if not self.filter.database(name.database):
            return False
        return name.table is None or self.filter.table(name.database, name.table)




__all__ = ["HmsExtractionError", "HmsExtractor", "HmsReport", "HmsState", "TableFilter", "connect"]

"""OpenLineage events -> navd.model records. Pure: no I/O.

An event validated by navd.openlineage.schema becomes (docs/sources/openlineage.md):
- its job: an OPERATION `openlineage://<namespace>/<name>`; its run: an OPERATION_EXECUTION
  `openlineage://<namespace>/<name>/<runId>` (state = the eventType, start and end times,
  nominal times, the errorMessage facet), INSTANCE_OF from the job; the `parent` run facet: a
  PARENT_CHILD from the parent run (an Airflow task run inside its DAG run);
- its datasets: named by navd.names.openlineage_dataset_ref; inputs and outputs DATA_FLOW into
  and out of the run (of the job, for a JobEvent); the schema facet's fields FIELD elements;
- the `columnLineage` facet: FIELD DATA_FLOW (DIRECT: IDENTITY -> SIMPLE, TRANSFORMATION and
  AGGREGATION -> EXPRESSION with the description; no transformation given, as an empty
  `transformations` list: no dependency type) and CONTROL_FLOW (INDIRECT, the subtype kept),
  in the vocabulary of navd's Spark extractor (docs/features/lineage.md, "How a column is used").

Datasets other extractors own (paths, Hive tables) and their columns are stubs, and relations
to them unlinked, resolved by the linker like the Spark extractor's. Every record's identity
comes from the event's names and runId, so an event posted twice writes the same documents; a
run's execution is merged from all its events (`merge_execution`), the same whatever their order.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

import orjson

from navd.extractors.spark.plan.model import CONTROL_SUBTYPES, DATA_SUBTYPES
from navd.extractors.spark.records import stubs_for
from navd.index.documents import STUB_MARK, oversized_term, solr_date
from navd.model import (
    DependencyType,
    Element,
    ElementStub,
    ElementType,
    EntityRef,
    Record,
    Relation,
    RelationType,
    SourceType,
    execution_times,
)
from navd.names import (
    InvalidName,
    display_name,
    field_ref,
    hive_namespace_cluster,
    openlineage_dataset_ref,
    openlineage_job_ref,
    openlineage_run_ref,
    openlineage_table_ref,
)
from navd.openlineage.schema import parse_time

#: the stub mark of what an OpenLineage event named (see model.ElementStub)
KNOWN_FROM = "openlineage"
#: eventTypes ranked: a run's state is that of its highest-ranked event (the later one of equal
#: rank); OTHER adds facets and never changes the state
_STATE_RANK: Mapping[str, int] = {"OTHER": 0, "START": 1, "RUNNING": 2, "COMPLETE": 3, "FAIL": 3, "ABORT": 3}
TERMINAL = frozenset({"COMPLETE", "FAIL", "ABORT"})
#: how much of an error message an execution keeps (as the Spark extractor's `error`)
MAX_ERROR_CHARS = 2000
_DIRECT_DEPENDENCY: Mapping[str, DependencyType] = {"IDENTITY": DependencyType.SIMPLE}
#: navd's column edges <-> OpenLineage's column-lineage transformations: (relation type, subtype)
#: <-> (type, subtype). The one table both directions read (the intake here, the export in
#: export.py), in the vocabulary of docs/features/lineage.md, "How a column is used".
COLUMN_TRANSFORMATIONS: Mapping[tuple[RelationType, str], tuple[str, str]] = {
    **{(RelationType.DATA_FLOW, subtype): ("DIRECT", subtype) for subtype in DATA_SUBTYPES},
    **{(RelationType.CONTROL_FLOW, subtype): ("INDIRECT", subtype) for subtype in CONTROL_SUBTYPES}}
#: a transformation type -> the relation it becomes (anything but DIRECT controls the column)
_RELATION_OF_TYPE: Mapping[str, RelationType] = {ol: kind for (kind, _s), (ol, _t) in COLUMN_TRANSFORMATIONS.items()}
#: One run, one lineage (docs/sources/openlineage.md): every record of a Spark listener event that
#: carries lineage (a dataset's DATA_FLOW, a column edge) and its execution hold the runId of
#: the listener's application run under this property, so that navd's event-log extraction of
#: the same application can withdraw them; an execution whose event carries the
#: `spark_applicationDetails` facet holds the Spark application id under SPARK_APPLICATION_ID.
SPARK_APPLICATION_RUN = "sparkApplicationRun"
SPARK_APPLICATION_ID = "sparkApplicationId"


@dataclasses.dataclass(frozen=True)
class MappingSettings:
    """What naming needs from the config: `[openlineage] namespaces` and `[cluster] name`."""

    clusters: Mapping[str, str] = dataclasses.field(default_factory=dict)
    default_cluster: str = "primary"


@dataclasses.dataclass(frozen=True)
class EventRecords:
    """An event's records; `execution` (RunEvents only) is to be merged with the stored one
    (`merge_execution`) before it is written, since each event tells only part of a run."""

    records: tuple[Record, ...]
    execution: Element | None = None
    #: the Spark listener's application run this event belongs to (None: not the listener's)
    spark_application_run: str | None = None
    #: the `hive://` namespaces the event named that are no metastore navd knows
    #: (names.hive_namespace_cluster): their datasets kept their own names, which the intake warns of
    unknown_metastores: frozenset[str] = frozenset()

    def without_lineage(self) -> EventRecords:
        """The event with its Spark lineage left out (the relations SPARK_APPLICATION_RUN
        marks): what is kept of a listener event once navd extracted the application's log."""
        kept = tuple(r for r in self.records
                     if not (isinstance(r, Relation) and SPARK_APPLICATION_RUN in r.properties))
        return dataclasses.replace(self, records=kept)


def map_event(event: Mapping[str, Any], kind: str, settings: MappingSettings) -> EventRecords:
    """The records of a validated event of `kind` (RunEvent, DatasetEvent, JobEvent);
    InvalidName when a dataset's name cannot be normalised."""
    unknown = unknown_metastores(event, settings)
    if kind == "DatasetEvent":
        dataset = event["dataset"]
        naming = _Naming(settings, _table_aliases([dataset], settings))
        return EventRecords(tuple(_dedupe(_dataset_records(dataset, naming.ref(dataset)))), unknown_metastores=unknown)
    job = event["job"]
    template = _job_element(job)
    records: list[Record] = [template]
    execution = None
    spark_run = spark_application_run(event) if kind == "RunEvent" else None
    if kind == "RunEvent":
        execution = _execution_element(event, spark_run)
        records.append(Relation(RelationType.INSTANCE_OF, template.ref, execution.ref))
        parent = (event["run"].get("facets") or {}).get("parent")
        if parent:
            parent_ref = openlineage_run_ref(parent["job"]["namespace"], parent["job"]["name"], parent["run"]["runId"])
            if parent_ref.identity != execution.ref.identity:  # a Spark run names itself its root
                records.append(Relation(RelationType.PARENT_CHILD, parent_ref, execution.ref, linked1=False))
    through = execution.ref if execution is not None else template.ref
    naming = _Naming(settings, _table_aliases([*(event.get("inputs") or ()), *(event.get("outputs") or ())],
                                              settings))
    mark = {SPARK_APPLICATION_RUN: spark_run} if spark_run else {}
    records.extend(_flows(event, through, naming, mark))
    return EventRecords(tuple(_dedupe(records)), execution, spark_run, unknown)


def unknown_metastores(event: Mapping[str, Any], settings: MappingSettings) -> frozenset[str]:
    """The `hive://` namespaces of the event's datasets, their column-lineage inputs and their
    symlinks that name no metastore navd knows (names.hive_namespace_cluster)."""
    namespaces: set[str] = set()
    for dataset in [*(event.get("inputs") or ()), *(event.get("outputs") or ()), *filter(None, [event.get("dataset")])]:
        namespaces.add(dataset["namespace"])
        facets = dataset.get("facets") or {}
        lineage = facets.get("columnLineage") or {}
        for spec in (lineage.get("fields") or {}).values():
            namespaces.update(str(source.get("namespace")) for source in spec.get("inputFields") or ())
        namespaces.update(str(source.get("namespace")) for source in lineage.get("dataset") or ())
        namespaces.update(str(identifier.get("namespace")) for identifier in _symlinks(dataset))
    return frozenset(ns for ns in namespaces if ns.lower().startswith("hive:")
                     and hive_namespace_cluster(ns, settings.clusters, settings.default_cluster) is None)


def spark_application_run(event: Mapping[str, Any]) -> str | None:
    """The runId of the OpenLineage Spark listener's application run a RunEvent belongs to, or
    None when the listener did not send it. The listener marks each of its events with the
    `processing_engine` facet (name `spark`). The application's run is the job named after the
    application; each other run (a SQL execution: job `<application>.<action>`) names it in
    its `parent` facet. (The application run's own parent, if any, is a scheduler's task above
    it; `spark_applicationDetails` is no sign of the application run: 1.53 puts it on SQL
    executions' STARTs too.)"""
    facets = event["run"].get("facets") or {}
    engine = facets.get("processing_engine")
    if "spark_applicationDetails" not in facets and not (isinstance(engine, dict) and engine.get("name") == "spark"):
        return None
    parent = facets.get("parent")
    if isinstance(parent, dict) and str(event["job"]["name"]).startswith(f"{parent['job']['name']}."):
        return str(parent["run"]["runId"]).lower()
    return str(event["run"]["runId"]).lower()


def _dedupe(records: Iterable[Record]) -> Iterator[Record]:
    """Records with stubs for their unlinked endpoints (once each, the first kept: a schema
    facet's typed stub before a bare one)."""
    emitted = list(records)
    yield from emitted
    # The elements the event names already are no stubs' to make: stubs_for skips them (and the
    # PARENT_CHILD of a field it skips), instead of making each and dropping it here. Most
    # endpoints are columns a schema facet gave: this was half the mapping's stub work.
    elements = {r.identity if isinstance(r, Element) else r.element.identity
                for r in emitted if isinstance(r, (Element, ElementStub))}
    relations: set[str] | None = None
    for extra in stubs_for(emitted, None, known_from=KNOWN_FROM, seen=elements):
        if isinstance(extra, Relation):  # a field's link to its table: new with the field, checked all the same
            if relations is None:
                relations = {r.identity for r in emitted if isinstance(r, Relation)}
            if extra.identity in relations:
                continue
            relations.add(extra.identity)
        yield extra


def _ref(dataset: Mapping[str, Any], settings: MappingSettings) -> EntityRef:
    return openlineage_dataset_ref(dataset["namespace"], dataset["name"], settings.clusters, settings.default_cluster)


def _table_aliases(datasets: Iterable[Mapping[str, Any]], settings: MappingSettings) -> dict[tuple[str, str], EntityRef]:
    """(namespace, name) -> the catalog table a dataset is, from its `symlinks` facet's TABLE
    identifier: the Spark listener names a catalog table by its location (`file` +
    `/warehouse/sales.db/t`) and says `sales.t` only there. A column-lineage input names the
    dataset by location without facets: it is the same table."""
    aliases: dict[tuple[str, str], EntityRef] = {}
    for dataset in datasets:
        for identifier in _symlinks(dataset):
            if identifier.get("type") == "TABLE":
                try:
                    table = openlineage_table_ref(str(identifier.get("namespace") or ""), str(identifier.get("name") or ""),
                                                  settings.clusters, settings.default_cluster)
                except InvalidName:
                    continue  # a catalog name that is not db.table: the dataset keeps its own
                if table is None:
                    continue  # another metastore's table: the dataset keeps its own name
                aliases[(dataset["namespace"], dataset["name"])] = table
                break
    return aliases


def _symlinks(dataset: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The identifiers of a dataset's `symlinks` facet (a facet navd does not validate: whatever
    is not a list of objects is none)."""
    symlinks = (dataset.get("facets") or {}).get("symlinks")
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
    return [i for i in identifiers if isinstance(i, dict)] if isinstance(identifiers, list) else []


@dataclasses.dataclass(frozen=True)
class _Naming:
    """How one event's datasets are named: by their namespace and name, or as the catalog
    table their symlinks facet says they are."""

    settings: MappingSettings
    aliases: Mapping[tuple[str, str], EntityRef]
    #: (namespace, name) -> ref, of this event: a column-lineage facet names its inputs again at
    #: each column (the refs were a sixth of the mapping's time)
    named: dict[tuple[str, str], EntityRef] = dataclasses.field(default_factory=dict)

    def ref(self, dataset: Mapping[str, Any]) -> EntityRef:
        key = (dataset["namespace"], dataset["name"])
        found = self.named.get(key)
        if found is None:
            alias = self.aliases.get(key)
            found = self.named[key] = alias if alias is not None else _ref(dataset, self.settings)
        return found


#: names.field_ref remembered: an output's columns and their inputs are named two or three times
#: an event (the schema facet, the facet's columns, each edge), and a table's in every event that
#: reads it; a pure function of a frozen ref and a string
_field_ref = functools.lru_cache(maxsize=8192)(field_ref)


def _job_element(job: Mapping[str, Any]) -> Element:
    ref = openlineage_job_ref(job["namespace"], job["name"])
    facets = job.get("facets") or {}
    return Element(SourceType.OPENLINEAGE, ElementType.OPERATION, ref.qualified_name, name=job["name"],
                   query_text=_text(facets.get("sql"), "query"),
                   description=_text(facets.get("documentation"), "description"),
                   properties={"namespace": job["namespace"], **job_type_properties(facets)})


#: the keys of the jobType job facet kept as the job's (and its runs') properties
JOB_TYPE_KEYS = ("processingType", "integration", "jobType")


def job_type_properties(job_facets: Mapping[str, Any]) -> dict[str, str]:
    """The jobType facet's processingType (BATCH, STREAMING), integration and jobType, those
    given as strings: Marquez answers a job's type from the processingType."""
    facet = job_facets.get("jobType")
    if not isinstance(facet, dict):
        return {}
    return {key: facet[key] for key in JOB_TYPE_KEYS if isinstance(facet.get(key), str) and facet[key]}


def _text(facet: Any, key: str) -> str | None:
    value = facet.get(key) if isinstance(facet, dict) else None
    return value if isinstance(value, str) and value else None


def _execution_element(event: Mapping[str, Any], spark_run: str | None = None) -> Element:
    job, run = event["job"], event["run"]
    ref = openlineage_run_ref(job["namespace"], job["name"], run["runId"])
    facets = run.get("facets") or {}
    state = event.get("eventType") or "OTHER"
    at = parse_time(event["eventTime"])
    props = {"namespace": job["namespace"], "job": job["name"], "runId": run["runId"].lower(),
             "state": state, "stateTime": solr_date(at), "producer": event["producer"]}
    if _STATE_RANK.get(state, 0) == 0:  # OTHER: no state of its own, merged into the run's
        props.pop("state")
        props.pop("stateTime")
    nominal = facets.get("nominalTime") or {}
    for key in ("nominalStartTime", "nominalEndTime"):
        if nominal.get(key):
            props[key] = solr_date(parse_time(nominal[key]))
    if spark_run:
        props[SPARK_APPLICATION_RUN] = spark_run
        details = facets.get("spark_applicationDetails")
        if isinstance(details, dict) and isinstance(details.get("applicationId"), str):
            props[SPARK_APPLICATION_ID] = details["applicationId"]
    parent = facets.get("parent")
    if isinstance(parent, dict):  # kept to answer it with the run (Marquez's runs/{id}), besides the relation
        props["parentRunId"] = str(parent["run"]["runId"]).lower()
        props["parentJobNamespace"] = str(parent["job"]["namespace"])
        props["parentJobName"] = str(parent["job"]["name"])
    error = facets.get("errorMessage")
    if error:
        props["error"] = error["message"][:MAX_ERROR_CHARS]
        props["errorLanguage"] = error["programmingLanguage"]
    job_facets = job.get("facets") or {}
    props.update(job_type_properties(job_facets))  # the lineage graph's job nodes are read from runs
    return Element(SourceType.OPENLINEAGE, ElementType.OPERATION_EXECUTION, ref.qualified_name,
                   name=f"{job['name']} ({run['runId'].lower()})", source_id=run["runId"].lower(),
                   started=at if state == "START" else None, ended=at if state in TERMINAL else None,
                   query_text=_text(job_facets.get("sql"), "query"), properties=props)


def dated(records: Iterable[Record], execution: Element) -> Iterator[Record]:
    """`records` with the relations of `execution` (through it, or column edges it showed) dated
    by its start and end as all its events so far tell them (merge_execution): a START and its
    COMPLETE written one after the other leave the run's first and last time, not the last event's."""
    first, last = execution_times(execution.started, execution.ended)
    if first is None:
        yield from records
        return
    for record in records:
        if isinstance(record, Relation) and (execution.identity in (record.endpoint1.identity, record.endpoint2.identity)
                                             or record.discriminator == execution.qualified_name):
            yield dataclasses.replace(record, first_seen=first, last_seen=last)
        else:
            yield record


def merge_execution(new: Element, stored: Mapping[str, Any] | None) -> Element:
    """The execution of a run as all its events so far tell it: `new` (this event's) merged with
    the `stored` document (None: none yet). The earliest START is the start, the latest end the
    end; the state is that of the highest-ranked event, the later of equal ones; properties of
    either are kept, this event's winning. Idempotent and independent of the events' order, so
    a replayed or late event never moves a run back."""
    if stored is None:
        return new
    old = _stored_properties(stored)
    props = {**old, **new.properties}
    if _state_key(old) > _state_key(new.properties):
        for key in ("state", "stateTime"):
            props[key] = old[key]
    if "error" in old and "error" not in new.properties:
        props["error"] = old["error"]
    started = _earliest(new.started, _stored_time(stored.get("started")))
    ended = _latest(new.ended, _stored_time(stored.get("ended")))
    return dataclasses.replace(new, started=started, ended=ended, properties=props,
                               query_text=new.query_text or stored.get("queryText"))


def _stored_properties(stored: Mapping[str, Any]) -> dict[str, str]:
    raw = stored.get("properties")
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        value = {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _state_key(props: Mapping[str, str]) -> tuple[int, str]:
    """Rank, then time: Solr dates of one format compare as text."""
    return _STATE_RANK.get(props.get("state", "OTHER"), 0), props.get("stateTime", "")


def _stored_time(value: Any) -> datetime | None:
    return parse_time(value.replace("Z", "+00:00")) if isinstance(value, str) and value else None


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    return min(a, b) if a is not None and b is not None else a or b


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return max(a, b) if a is not None and b is not None else a or b


# -- datasets, their columns and the flows through the run -------------------------------------

def _owned(ref: EntityRef) -> bool:
    """Whether navd knows this dataset only from OpenLineage (no extractor writes it)."""
    return ref.source_type is SourceType.OPENLINEAGE


#: the most records the memo of datasets' records (`_dataset_records`) holds: a few megabytes
DATASET_MEMO_RECORDS = 20_000
#: a dataset of more records than this (a very wide table's schema) is mapped each time, not kept
DATASET_MEMO_LARGEST = 2_000


class _DatasetMemo:
    """The records of datasets mapped lately, by (ref, namespace, name, schema facet's digest):
    a dataset comes again and again (in every event of a run, in every run that reads or writes
    the table), and its element, columns and their links to it were a third of the mapping's
    time (tests/bench/bench_openlineage.py). A pure function of that key (the records are
    frozen), so a hit is the same answer; bounded by the records held, oldest dropped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: collections.OrderedDict[tuple[EntityRef, str, str, bytes], tuple[Record, ...]] = \
            collections.OrderedDict()
        self._records = 0
        #: id -> record, of every record held (`remembered`); the record itself is compared, so a
        #: record of the same id made after one was dropped is never taken for it
        self._held: dict[int, Record] = {}

    def remembered(self, record: Record) -> bool:
        return self._held.get(id(record)) is record

    def records(self, dataset: Mapping[str, Any], ref: EntityRef) -> tuple[Record, ...]:
        schema = (dataset.get("facets") or {}).get("schema")
        try:
            digest = hashlib.blake2b(orjson.dumps(schema), digest_size=16).digest()
        except TypeError:  # not what orjson writes (an integer beyond 64 bits): mapped, not kept
            return tuple(_map_dataset(dataset, ref))
        key = (ref, str(dataset["namespace"]), str(dataset["name"]), digest)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        records = tuple(_map_dataset(dataset, ref))
        # only records that fit the index are kept: `remembered` tells the intake they need no check
        if len(records) <= DATASET_MEMO_LARGEST and not any(map(oversized_term, records)):
            with self._lock:
                if key not in self._kept:
                    self._kept[key] = records
                    self._records += len(records)
                    self._held.update((id(record), record) for record in records)
                while self._records > DATASET_MEMO_RECORDS:
                    dropped = self._kept.popitem(last=False)[1]
                    self._records -= len(dropped)
                    for record in dropped:
                        self._held.pop(id(record), None)
        return records


_dataset_memo = _DatasetMemo()


def remembered(record: Record) -> bool:
    """Whether `record` is one the mapping keeps for the datasets it saw lately (the same object
    comes again in later events' records): its document fits the index, and a caller may keep
    what it derives from the record (its document) by the record's identity as an object."""
    return _dataset_memo.remembered(record)


def _dataset_records(dataset: Mapping[str, Any], ref: EntityRef) -> tuple[Record, ...]:
    """The dataset's element (a stub, unless only OpenLineage knows it) and its schema facet's
    fields, each with a PARENT_CHILD from the dataset (remembered: `_DatasetMemo`)."""
    return _dataset_memo.records(dataset, ref)


def _map_dataset(dataset: Mapping[str, Any], ref: EntityRef) -> Iterator[Record]:
    facets = dataset.get("facets") or {}
    element = Element(ref.source_type, ref.type, ref.qualified_name,
                      name=display_name(ref.qualified_name, ref.type, ref.source_type),
                      properties={"namespace": dataset["namespace"], "openlineageName": dataset["name"]}
                      if _owned(ref) else {STUB_MARK: KNOWN_FROM})
    yield element if _owned(ref) else ElementStub(element)
    for column in _schema_fields(facets.get("schema")):
        field = _field_ref(ref, column["name"])
        props = {} if _owned(ref) else {STUB_MARK: KNOWN_FROM}
        if isinstance(column.get("ordinal_position"), int):
            props["ordinalPosition"] = str(column["ordinal_position"])
        element = Element(field.source_type, ElementType.FIELD, field.qualified_name, name=column["name"],
                          parent=ref, data_type=column.get("type") or None,
                          description=column.get("description") or None, properties=props)
        yield element if _owned(ref) else ElementStub(element)
        yield Relation(RelationType.PARENT_CHILD, ref, field)


def _schema_fields(facet: Any) -> Iterator[Mapping[str, Any]]:
    """The schema facet's top-level fields (nested struct fields are not columns of their own)."""
    if isinstance(facet, dict):
        yield from (f for f in facet.get("fields") or () if isinstance(f, dict) and f.get("name"))


def _flows(event: Mapping[str, Any], through: EntityRef, naming: _Naming,
           mark: Mapping[str, str]) -> Iterator[Record]:
    """The datasets, their DATA_FLOW through the run and the column edges, the lineage
    relations with the properties `mark` (a Spark listener event's application run)."""
    for dataset in event.get("inputs") or ():
        ref = naming.ref(dataset)
        yield from _dataset_records(dataset, ref)
        yield Relation(RelationType.DATA_FLOW, ref, through, linked1=_owned(ref), properties=dict(mark))
    for dataset in event.get("outputs") or ():
        ref = naming.ref(dataset)
        yield from _dataset_records(dataset, ref)
        yield Relation(RelationType.DATA_FLOW, through, ref, linked2=_owned(ref), properties=dict(mark))
        yield from _column_edges(dataset, ref, through, naming, mark)


def _named_columns(dataset: Mapping[str, Any], target: EntityRef, naming: _Naming) -> Iterator[Record]:
    """The datasets and columns only OpenLineage knows (no navd extractor writes them) that the
    output's columnLineage facet names, as entities written only if absent: dbt-ol names its
    seeds and its models' columns only there, with no schema facet, and without them those
    sources never show. Written like stubs (`_version_: -1`, never replacing a richer document a
    schema facet wrote) but without a stub's mark: they are entities, not placeholders."""
    lineage = (dataset.get("facets") or {}).get("columnLineage") or {}
    named: dict[str, tuple[Mapping[str, Any], EntityRef, str]] = {}
    for column, spec in (lineage.get("fields") or {}).items():
        named.setdefault(_field_ref(target, column).identity, (dataset, target, column))
        for source in spec.get("inputFields") or ():
            ref = naming.ref(source)
            named.setdefault(_field_ref(ref, source["field"]).identity, (source, ref, source["field"]))
    tables: set[str] = set()
    for owner, ref, column in named.values():
        if not _owned(ref):
            continue
        if ref.identity not in tables:
            tables.add(ref.identity)
            yield ElementStub(Element(ref.source_type, ref.type, ref.qualified_name,
                                      name=display_name(ref.qualified_name, ref.type, ref.source_type),
                                      properties={"namespace": owner["namespace"], "openlineageName": owner["name"]}))
        field = _field_ref(ref, column)
        yield ElementStub(Element(field.source_type, ElementType.FIELD, field.qualified_name, name=column, parent=ref))
        yield Relation(RelationType.PARENT_CHILD, ref, field)


def _column_edges(dataset: Mapping[str, Any], target: EntityRef, through: EntityRef,
                  naming: _Naming, mark: Mapping[str, str]) -> Iterator[Record]:
    """The output's columnLineage facet as column edges through the run (the run's qualified
    name the discriminator, as the Spark extractor's: one edge per execution), after the
    columns it names that only OpenLineage knows."""
    facets = dataset.get("facets") or {}
    lineage = facets.get("columnLineage")
    if not lineage:
        return
    yield from _named_columns(dataset, target, naming)
    # (kind, source, target) -> subtypes, the DATA_FLOW description
    edges: dict[tuple[RelationType, EntityRef, EntityRef], tuple[set[str], str | None]] = {}
    fields = lineage.get("fields") or {}
    written = list(fields) + [f["name"] for f in _schema_fields(facets.get("schema")) if f["name"] not in fields]
    for column, spec in fields.items():
        out = _field_ref(target, column)
        for source in spec.get("inputFields") or ():
            transformations = source.get("transformations") or [_legacy_transformation(spec)]
            for transformation in transformations:
                _add_edge(edges, source, transformation, out, naming)
    for source in lineage.get("dataset") or ():
        for transformation in source.get("transformations") or [{"type": "INDIRECT"}]:
            for column in written:
                _add_edge(edges, source, {**transformation, "type": "INDIRECT"}, _field_ref(target, column), naming)
    for (kind, source_ref, target_ref), (subtypes, description) in edges.items():
        if kind is RelationType.CONTROL_FLOW:
            subtype = ",".join([s for s in CONTROL_SUBTYPES if s in subtypes] +
                               sorted(subtypes - set(CONTROL_SUBTYPES)))
            yield Relation(kind, source_ref, target_ref, linked1=False, linked2=False,
                           discriminator=through.qualified_name,
                           properties={**mark, "subtype": subtype} if subtype else dict(mark))
        else:
            subtype = _strongest(subtypes)
            # no subtype: the emitter said the column comes from the source but not how (an empty
            # `transformations` list, as dbt-ol's for an aggregate or a CASE): no dependency type,
            # neither SIMPLE nor EXPRESSION, rather than a claim the emitter never made
            dependency = _DIRECT_DEPENDENCY.get(subtype, DependencyType.EXPRESSION) if subtype else None
            yield Relation(kind, source_ref, target_ref, linked1=False, linked2=False,
                           dependency_type=dependency,
                           expression=description if dependency is DependencyType.EXPRESSION else None,
                           discriminator=through.qualified_name,
                           properties={**mark, "subtype": subtype} if subtype else dict(mark))


def _legacy_transformation(spec: Mapping[str, Any]) -> dict[str, Any]:
    """An input field without `transformations` (producers before facet 1-1-0): DIRECT, the
    field's deprecated transformationType/Description."""
    kind = spec.get("transformationType")
    legacy: dict[str, Any] = {"type": "DIRECT", "subtype": "IDENTITY" if kind == "IDENTITY" else
                              ("TRANSFORMATION" if kind else "")}
    if spec.get("transformationDescription"):
        legacy["description"] = spec["transformationDescription"]
    return legacy


def _add_edge(edges: dict[tuple[RelationType, EntityRef, EntityRef], tuple[set[str], str | None]],
              source: Mapping[str, Any], transformation: Mapping[str, Any], out: EntityRef,
              naming: _Naming) -> None:
    kind = _RELATION_OF_TYPE.get(str(transformation.get("type")), RelationType.CONTROL_FLOW)
    source_ref = _field_ref(naming.ref(source), source["field"])
    subtypes, description = edges.setdefault((kind, source_ref, out), (set(), None))
    if transformation.get("subtype"):
        subtypes.add(str(transformation["subtype"]))
    text = transformation.get("description")
    if kind is RelationType.DATA_FLOW and isinstance(text, str) and text and description is None:
        edges[(kind, source_ref, out)] = (subtypes, text)


def _strongest(subtypes: set[str]) -> str:
    """AGGREGATION > TRANSFORMATION > IDENTITY, as the Spark extractor; an unknown one is an
    expression of its own kind, kept."""
    known = [s for s in subtypes if s in DATA_SUBTYPES]
    if known:
        return max(known, key=DATA_SUBTYPES.index)
    return sorted(subtypes)[0] if subtypes else ""


def edge_transformations(kind: RelationType | str, subtype: str | None, dependency_type: str | None,
                         expression: str | None) -> list[dict[str, str]]:
    """The OpenLineage transformations of a stored navd column edge (COLUMN_TRANSFORMATIONS read
    backwards): a DATA_FLOW is DIRECT with its subtype (an edge without one, as the HMS
    extractor's view columns: IDENTITY if SIMPLE, else TRANSFORMATION; without a dependency type
    either, DIRECT alone: unknown), the expression its
    description; a CONTROL_FLOW is one INDIRECT per listed subtype. Read back by `map_event`
    to the same edge."""
    kind = RelationType(kind)
    if kind is RelationType.DATA_FLOW:
        if not subtype and not dependency_type:
            return [{"type": "DIRECT"}]  # how the target depends on the source is unknown
        subtype = subtype or ("TRANSFORMATION" if dependency_type == DependencyType.EXPRESSION.value else "IDENTITY")
        ol_type, ol_subtype = COLUMN_TRANSFORMATIONS.get((kind, subtype), ("DIRECT", subtype))
        transformation = {"type": ol_type, "subtype": ol_subtype}
        if expression and dependency_type == DependencyType.EXPRESSION.value:
            transformation["description"] = expression
        return [transformation]
    subtypes = [s for s in (subtype or "").split(",") if s]
    return ([{"type": COLUMN_TRANSFORMATIONS.get((kind, s), ("INDIRECT", s))[0], "subtype": s} for s in subtypes]
            or [{"type": "INDIRECT"}])

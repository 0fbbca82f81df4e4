"""The Solr queries and filters navd's own modules ask (run records, the sources' clean-ups, the
OpenLineage export and supersession), each a named function of the values it takes.

Every value enters through navd/index/query_syntax.py (`quote`, `escape`, `range_bound`) or
navd/index/filters.py (`terms_filter`): a name, a path or a host is never pasted into query
text as it is. Field names are navd's own (`property_field`, `endpoint_field`), never typed by a
user. Property keys that belong to a source (the Spark listener's application id, the event-log
owner) are passed in by the module that owns them, so this module imports no source.

Functions returning `list[str]` give filters (Solr `fq`, all must match) for a scan over every
document (`q=*:*`); those returning `str` give one query.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from navd.index.documents import (DELETED_FILTER, LAST_SEEN, NOT_DELETED_FILTER, NOT_STUB_FILTER, RUN_KIND,
                                  STUB_MARK, endpoint_field, property_field, solr_date)
from navd.index.filters import prefix_filter, term_filter, terms_filter
from navd.index.query_syntax import escape, quote, range_bound
from navd.model import ElementType, RelationType, SourceType
from navd.names import field_qualified_name

#: the run record kind of a published schedule (runs.publish_schedule)
SCHEDULE_KIND = "schedule"
#: a filter no document passes (an empty list of identities selects nothing)
NOTHING_FILTER = "-*:*"
#: elements a source wrote with `deleted` false (not flagged deleted by it)
_NOT_FLAGGED = "deleted:false"


# -- building blocks ------------------------------------------------------------------------------

def any_of(field: str, values: Iterable[str]) -> str:
    """Documents whose `field` is one of `values` (each quoted: read as the value it is)."""
    distinct = sorted(set(values))
    if not distinct:
        raise ValueError(f"a query on {field} needs at least one value")
    return f"{field}:({' OR '.join(quote(v) for v in distinct)})"


def has(field: str) -> str:
    """Documents with any value in `field`."""
    return f"{field}:*"


def has_property(key: str) -> str:
    """Documents with the property `key`."""
    return has(property_field(key))


def property_is(key: str, value: str) -> str:
    """Documents whose property `key` is `value`."""
    return f"{property_field(key)}:{quote(value)}"


def property_any_of(key: str, values: Iterable[str]) -> str:
    """Documents whose property `key` is one of `values`."""
    return any_of(property_field(key), values)


def of_type(*kinds: ElementType | RelationType) -> str:
    """Documents (elements or relations) of one of the types `kinds`."""
    return any_of_words("type", [k.value for k in kinds])


def of_source(source: SourceType) -> str:
    """Elements of the source `source`."""
    return f"sourceType:{source.value}"


def any_of_words(field: str, words: Sequence[str]) -> str:
    """`field` is one of `words`, navd's own enum values (no quoting needed: plain words)."""
    return f"{field}:{words[0]}" if len(words) == 1 else f"{field}:({' OR '.join(words)})"


def _all_of(*clauses: str) -> str:
    return " AND ".join(clauses)


# -- run records (the runs core) ------------------------------------------------------------------

def interrupted_runs(host: str) -> str:
    """The run records of `host` still RUNNING."""
    return _all_of(f"kind:{RUN_KIND}", "state:RUNNING", f"host:{quote(host)}")


def runs_and_schedules() -> str:
    """Every run record and published schedule."""
    return any_of_words("kind", [RUN_KIND, SCHEDULE_KIND])


def component_runs(component: str, *, state: str | None = None, ended: bool = False) -> str:
    """The run records of `component`; only those in `state`; only those that ended."""
    clauses = [f"kind:{RUN_KIND}", f"component:{quote(component)}"]
    if state is not None:
        clauses.append(f"state:{quote(state)}")
    if ended:
        clauses.append(has("ended"))
    return _all_of(*clauses)


# -- the Hive metastore extractor -----------------------------------------------------------------

def flagged_hive_elements(database: str) -> list[str]:
    """HIVE databases, tables and views flagged deleted whose qualified name starts with
    `database` (the caller checks the parsed name: a prefix also finds `db2` for `db`)."""
    return [of_source(SourceType.HIVE), DELETED_FILTER,
            of_type(ElementType.DATABASE, ElementType.TABLE, ElementType.VIEW),
            prefix_filter("qualifiedName", database)]


def hive_elements_not_flagged() -> list[str]:
    """HIVE elements whose `deleted` is false (written by the metastore extractor, not flagged)."""
    return [of_source(SourceType.HIVE), _NOT_FLAGGED]


# -- the file system extractors (HDFS, S3) ----------------------------------------------------------

def not_flagged_below(prefix: str, source: SourceType | None = None) -> list[str]:
    """Elements whose qualified name starts with `prefix`, `deleted` false; of `source` only if
    given."""
    filters = [prefix_filter("qualifiedName", prefix), _NOT_FLAGGED]
    if source is not None:
        filters.append(of_source(source))
    return filters


def not_flagged_children(parent_identity: str) -> list[str]:
    """Elements whose parent is `parent_identity`, `deleted` false."""
    return [term_filter("parentId", parent_identity), _NOT_FLAGGED]


@dataclasses.dataclass(frozen=True)
class ParameterisedFilters:
    """Filters with the request parameters they refer to (`$name`)."""

    filters: tuple[str, ...]
    params: Mapping[str, str]


def relations_touching(identities: Iterable[str], *, having_property: str | None = None,
                       last_seen_before: datetime | None = None,
                       last_seen_since: datetime | None = None) -> ParameterisedFilters:
    """Relations whose either end is one of `identities`: with the property `having_property`
    (if given), last seen (their last execution's end) before `last_seen_before` (if given), or
    at or after `last_seen_since` (if given)."""
    # the parameter is not `ids`: Solr's select takes `ids` as a distributed search's fetch of
    # those documents (no cursor in the answer)
    clauses = [f'_query_:"{{!terms f={endpoint_field(end, "Id")} v=$tables}}"' for end in (1, 2)]
    filters = [" OR ".join(clauses)]
    if having_property is not None:
        filters.insert(0, has_property(having_property))
    if last_seen_before is not None:
        filters.append(f"{LAST_SEEN}:[* TO {range_bound(solr_date(last_seen_before))}}}")
    if last_seen_since is not None:
        filters.append(f"{LAST_SEEN}:[{range_bound(solr_date(last_seen_since))} TO *]")
    return ParameterisedFilters(tuple(filters), {"tables": ",".join(identities)})


# -- Spark views defined again ----------------------------------------------------------------------

def _columns_of(view_qualified_name: str) -> str:
    """A wildcard term matching the qualified names of the columns of a view: the view's name
    escaped (a '*' in it matches itself), the column any characters."""
    name = field_qualified_name(view_qualified_name, "*")
    at = name.rindex("@")  # the column, '*', is the character before `@<cluster>`
    return escape(name[:at - 1]) + "*" + escape(name[at:])


def view_column_stubs(source: SourceType, view_qualified_name: str, owner_key: str, owner: str) -> str:
    """The FIELD stubs under the view, not deleted, named by a log whose owner (property
    `owner_key`) is `owner`."""
    return _all_of(of_type(ElementType.FIELD), of_source(source),
                   f"qualifiedName:{_columns_of(view_qualified_name)}", has_property(STUB_MARK),
                   property_is(owner_key, owner), NOT_DELETED_FILTER)


def spark_executions_writing(view_identities: Iterable[str]) -> str:
    """The DATA_FLOW relations from a Spark execution into any of the elements `view_identities`."""
    return _all_of(of_type(RelationType.DATA_FLOW), any_of(endpoint_field(2, "Id"), view_identities),
                   f"{endpoint_field(1, 'SourceType')}:{SourceType.SPARK.value}",
                   f"{endpoint_field(1, 'Type')}:{ElementType.OPERATION_EXECUTION.value}")


def relations_between(from_identity: str, to_identity: str) -> str:
    """The relations from the element `from_identity` to the element `to_identity`."""
    return _all_of(f"{endpoint_field(1, 'Id')}:{quote(from_identity)}", f"{endpoint_field(2, 'Id')}:{quote(to_identity)}")


def column_edges_into_view(execution_qualified_name: str, view_qualified_name: str) -> str:
    """The column edges an execution discriminates into the columns of a view."""
    return _all_of(f"discriminator:{quote(execution_qualified_name)}",
                   f"{endpoint_field(2, 'QualifiedName')}:{_columns_of(view_qualified_name)}")


# -- OpenLineage export -----------------------------------------------------------------------------

_LINEAGE_TYPES = (RelationType.DATA_FLOW, RelationType.CONTROL_FLOW)
#: ends of a DATA_FLOW that are not datasets
_NOT_DATASETS = (ElementType.FIELD, ElementType.OPERATION_EXECUTION, ElementType.OPERATION)


def exported_elements(kind: ElementType, dated: tuple[str, str], since: datetime | None,
                      identities: Sequence[str] | None, *, with_definition: bool = False) -> list[str]:
    """Elements of `kind` to export: not deleted, not stubs, with a `queryText` if
    `with_definition`; either date field of `dated` at or after `since`; one of `identities`
    (empty: nothing)."""
    filters = [of_type(kind), NOT_DELETED_FILTER, NOT_STUB_FILTER]
    if with_definition:
        filters.append(has("queryText"))
    if since is not None:
        at = range_bound(solr_date(since))
        filters.append(f"({dated[0]}:[{at} TO *] OR {dated[1]}:[{at} TO *])")
    if identities is not None:
        filters.append(terms_filter("identity", identities) if identities else NOTHING_FILTER)
    return filters


def dataset_flows_into(identities: Sequence[str]) -> list[str]:
    """DATA_FLOW relations into one of `identities` from a dataset (not a column, an execution
    or an operation)."""
    return [of_type(RelationType.DATA_FLOW), terms_filter(endpoint_field(2, "Id"), identities),
            f"-{any_of_words(endpoint_field(1, 'Type'), [t.value for t in _NOT_DATASETS])}"]


def data_flows_at(end: int, identities: Sequence[str]) -> list[str]:
    """DATA_FLOW relations whose end `end` (1: from, 2: to) is one of `identities`."""
    return [of_type(RelationType.DATA_FLOW), terms_filter(endpoint_field(end, "Id"), identities)]


def undiscriminated_column_edges_into(field_identities: Sequence[str]) -> list[str]:
    """Column edges into one of `field_identities` that no execution discriminates (a view's
    definition's)."""
    return [of_type(*_LINEAGE_TYPES), f"{endpoint_field(1, 'Type')}:{ElementType.FIELD.value}",
            f"-{has('discriminator')}", terms_filter(endpoint_field(2, "Id"), field_identities)]


def column_edges_of(execution_qualified_names: Sequence[str]) -> list[str]:
    """Column edges discriminated by one of the executions `execution_qualified_names`."""
    return [of_type(*_LINEAGE_TYPES), f"{endpoint_field(1, 'Type')}:{ElementType.FIELD.value}",
            terms_filter("discriminator", execution_qualified_names)]


def instances_of(operation_identity: str) -> list[str]:
    """INSTANCE_OF relations from the operation `operation_identity` (to its executions)."""
    return [of_type(RelationType.INSTANCE_OF), terms_filter(endpoint_field(1, "Id"), [operation_identity])]


def operations_of_executions(execution_identities: Sequence[str]) -> list[str]:
    """INSTANCE_OF relations into one of `execution_identities` (from their operations)."""
    return [of_type(RelationType.INSTANCE_OF), terms_filter(endpoint_field(2, "Id"), execution_identities)]


def execution_flows_with(identity: str, execution_end: int) -> list[str]:
    """DATA_FLOW relations between the element `identity` and an execution at end
    `execution_end` (1: the execution wrote `identity`, 2: it read it)."""
    return [of_type(RelationType.DATA_FLOW), terms_filter(endpoint_field(3 - execution_end, "Id"), [identity]),
            f"{endpoint_field(execution_end, 'Type')}:{ElementType.OPERATION_EXECUTION.value}"]


def child_executions(parent_identities: Sequence[str]) -> list[str]:
    """Executions whose parent is one of `parent_identities`."""
    return [of_type(ElementType.OPERATION_EXECUTION), terms_filter("parentId", parent_identities)]


def views_reading(identity: str) -> list[str]:
    """DATA_FLOW relations from the element `identity` into a view."""
    return [of_type(RelationType.DATA_FLOW), terms_filter(endpoint_field(1, "Id"), [identity]),
            f"{endpoint_field(2, 'Type')}:{ElementType.VIEW.value}"]


def parent_executions_of(identities: Sequence[str]) -> list[str]:
    """PARENT_CHILD relations from an execution into one of `identities`."""
    return [of_type(RelationType.PARENT_CHILD), f"{endpoint_field(1, 'Type')}:{ElementType.OPERATION_EXECUTION.value}",
            terms_filter(endpoint_field(2, "Id"), identities)]


def fields_under(parent_identities: Sequence[str]) -> list[str]:
    """FIELD elements, not deleted, whose parent is one of `parent_identities`."""
    return [of_type(ElementType.FIELD), NOT_DELETED_FILTER, terms_filter("parentId", parent_identities)]


def fields_hung_under(parent_identities: Sequence[str]) -> list[str]:
    """PARENT_CHILD relations from one of `parent_identities` to a FIELD."""
    return [of_type(RelationType.PARENT_CHILD), f"{endpoint_field(2, 'Type')}:{ElementType.FIELD.value}",
            terms_filter(endpoint_field(1, "Id"), parent_identities)]


def data_flows_from(identities: Sequence[str]) -> list[str]:
    """DATA_FLOW relations from one of `identities` to anything but a column (what an execution
    wrote, as datasets)."""
    return [of_type(RelationType.DATA_FLOW), f"-{endpoint_field(2, 'Type')}:{ElementType.FIELD.value}",
            terms_filter(endpoint_field(1, "Id"), identities)]

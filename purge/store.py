"""What purge asks Solr: the queries and filters of its rules, each a named function of the
threshold or the identities it takes.

The threshold is a Solr date navd wrote (`solr_date`) and enters a range through
`range_bound`; identities enter through Solr's terms parser (`terms_filter`). Field names and
type words are navd's own, never typed by a user.
"""

from __future__ import annotations

from collections.abc import Sequence

from navd.index.documents import RUN_KIND, endpoint_field
from navd.index.filters import terms_filter
from navd.index.queries import any_of_words, of_source, of_type
from navd.index.query_syntax import range_bound
from navd.model import ElementType, RelationType, SourceType

_EXECUTION_TYPES = (ElementType.OPERATION, ElementType.OPERATION_EXECUTION)


def _before(field: str, threshold: str) -> str:
    """`field` at or before the Solr date `threshold`."""
    return f"{field}:[* TO {range_bound(threshold)}]"


# -- elements and run records a rule retires ---------------------------------------------------------

def executions_before(threshold: str) -> str:
    """Executions that ended before `threshold`, or started before it and never ended."""
    return (f"{of_type(ElementType.OPERATION_EXECUTION)} AND ({_before('ended', threshold)} OR "
            f"({_before('started', threshold)} -ended:[* TO *]))")


def directories_deleted_before(threshold: str) -> str:
    """HDFS directories flagged deleted before `threshold`."""
    return (f"{of_source(SourceType.HDFS)} AND {of_type(ElementType.DIRECTORY)} AND deleted:true AND "
            f"{_before('deleteTime', threshold)}")


def entities_deleted_before(threshold: str) -> str:
    """Elements flagged deleted before `threshold`, but Hive databases, tables, views and columns
    (kept even deleted)."""
    hive_kept = of_type(ElementType.DATABASE, ElementType.TABLE, ElementType.VIEW, ElementType.FIELD)
    return f"deleted:true AND {_before('deleteTime', threshold)} -({of_source(SourceType.HIVE)} AND {hive_kept})"


def runs_ended_before(threshold: str) -> str:
    """Run records that ended before `threshold`."""
    return f"kind:{RUN_KIND} AND {_before('ended', threshold)}"


# -- relations, as filters over every relation ---------------------------------------------------------

#: the relation type filters of the rules
INSTANCE_OF = of_type(RelationType.INSTANCE_OF)
LINEAGE = of_type(RelationType.DATA_FLOW, RelationType.CONTROL_FLOW)
PARENT_CHILD = of_type(RelationType.PARENT_CHILD)
NOT_LOGICAL_PHYSICAL = f"*:* -{of_type(RelationType.LOGICAL_PHYSICAL)}"


def with_end_in(end: int, identities: Sequence[str]) -> str:
    """Relations whose end `end` (1: from, 2: to) is one of `identities`."""
    return terms_filter(endpoint_field(end, "Id"), identities)


def child_executions_of(executions: Sequence[str]) -> list[str]:
    """PARENT_CHILD relations from one of `executions` to an execution."""
    return [PARENT_CHILD, f"{endpoint_field(2, 'Type')}:{ElementType.OPERATION_EXECUTION.value}",
            with_end_in(1, executions)]


def dataset_writes_of(executions: Sequence[str]) -> list[str]:
    """DATA_FLOW relations from one of `executions` to anything but an operation or an execution
    (a dataset written)."""
    return [of_type(RelationType.DATA_FLOW),
            f"-{any_of_words(endpoint_field(2, 'Type'), [t.value for t in _EXECUTION_TYPES])}",
            with_end_in(1, executions)]


def logical_physical_at(end: int, identities: Sequence[str]) -> list[str]:
    """LOGICAL_PHYSICAL relations whose end `end` is one of `identities`."""
    return [of_type(RelationType.LOGICAL_PHYSICAL), with_end_in(end, identities)]

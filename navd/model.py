"""Elements and relations in Navigator's vocabulary: the records extractors yield.

How elements are named (qualified names, references, identities) is navd.names; the names and
builders that used to live here are re-exported from there, so `from navd.model import
identity` keeps working. A relation's identity is a function of its type and endpoint
identities (names.relation_identity), so re-extracting a relation upserts.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType

# Re-exported: defined once in navd.names, imported from here by much of navd.
from navd.names import (
    ElementType,
    EntityRef,
    InvalidName,
    SourceType,
    hive_qualified_name,
    identity,
    operation_qualified_name,
    partition_qualified_name,
    path_qualified_name,
    relation_identity,
)


class RelationType(enum.StrEnum):
    PARENT_CHILD = "PARENT_CHILD"
    LOGICAL_PHYSICAL = "LOGICAL_PHYSICAL"
    INSTANCE_OF = "INSTANCE_OF"
    DATA_FLOW = "DATA_FLOW"
    CONTROL_FLOW = "CONTROL_FLOW"


class DependencyType(enum.StrEnum):
    """How a column-level DATA_FLOW target depends on its source (Atlas' vocabulary)."""

    SIMPLE = "SIMPLE"
    EXPRESSION = "EXPRESSION"
    SCRIPT = "SCRIPT"


# Endpoint 1 and endpoint 2 of each relation type, named as Navigator names them.
ENDPOINT_ROLES: Mapping[RelationType, tuple[str, str]] = MappingProxyType({
    RelationType.PARENT_CHILD: ("parent", "child"),
    RelationType.LOGICAL_PHYSICAL: ("logical", "physical"),
    RelationType.INSTANCE_OF: ("template", "instance"),
    RelationType.DATA_FLOW: ("source", "target"),
    RelationType.CONTROL_FLOW: ("source", "target"),
})


@dataclasses.dataclass(frozen=True, slots=True)
class LineageSemantics:
    """How the lineage walk treats one relation type (navd/lineage/rules.py applies it)."""

    #: The end the walk comes from: 1 or 2, or None when the walk's direction decides
    #: (upstream comes from the target, endpoint 2; downstream from the source, endpoint 1).
    from_end: int | None
    #: Walked between datasets (and the executions between them).
    datasets: bool
    #: Walked between columns (FIELD nodes), with `columns`.
    columns: bool
    #: Only relations whose both ends are of this type are walked.
    both_ends: ElementType | None = None
    #: Walked only when operations are shown.
    only_with_operations: bool = False
    #: The walk goes on from the far end (False: the far end is shown, not walked from).
    onward: bool = True
    #: When an end is hidden (an execution, an unlinked or a deleted entity), the connection
    #: through it is kept along relations of this type.
    contracted: bool = False


# What lineage is, as in Navigator (see navd/lineage/rules.py's docstring); the walk queries the types
# in this order.
RELATION_SEMANTICS: Mapping[RelationType, LineageSemantics] = MappingProxyType({
    # dataset -> execution -> dataset, in the direction asked
    RelationType.DATA_FLOW: LineageSemantics(None, datasets=True, columns=True, contracted=True),
    # a column that filters or joins (not copied), for columns only
    RelationType.CONTROL_FLOW: LineageSemantics(None, datasets=False, columns=True, contracted=True),
    # physical -> logical only, in either direction: a directory leads to the table it backs;
    # seen from the table, its directory is not lineage
    RelationType.LOGICAL_PHYSICAL: LineageSemantics(2, datasets=True, columns=False, contracted=True),
    # an application run down to the executions inside it, never upwards (a dataset's lineage
    # must not fan out to every sibling execution of the job that wrote it)
    RelationType.PARENT_CHILD: LineageSemantics(1, datasets=True, columns=False,
                                                both_ends=ElementType.OPERATION_EXECUTION),
    # an execution to its template: shown, not walked (its other executions are not lineage)
    RelationType.INSTANCE_OF: LineageSemantics(2, datasets=True, columns=False, only_with_operations=True,
                                               onward=False),
})


# --- records ---------------------------------------------------------------------------------

#: the properties of every record made without any: one shared read-only mapping, not a copy each
_NO_PROPERTIES: Mapping[str, str] = MappingProxyType({})


def _frozen(properties: Mapping[str, str]) -> Mapping[str, str]:
    """A record's properties as a read-only copy (the caller's dict may change after)."""
    return MappingProxyType(dict(properties)) if properties else _NO_PROPERTIES


@dataclasses.dataclass(frozen=True, slots=True)
class Element:
    """An entity in nav_elements. Optional fields are None when the source does not know them."""

    source_type: SourceType
    type: ElementType
    qualified_name: str
    name: str
    parent: EntityRef | None = None
    file_system_path: str | None = None
    owner: str | None = None
    group: str | None = None
    permissions: str | None = None
    size: int | None = None
    block_size: int | None = None
    replication: int | None = None
    created: datetime | None = None
    last_modified: datetime | None = None
    last_accessed: datetime | None = None
    started: datetime | None = None
    ended: datetime | None = None
    principal: str | None = None
    query_text: str | None = None
    description: str | None = None
    data_type: str | None = None
    internal_type: str | None = None
    source_id: str | None = None
    extractor_run_id: str | None = None
    deleted: bool = False
    delete_time: datetime | None = None
    #: an execution's plan as it ran (Spark: the final physical plan, formatted), for admins
    execution_plan: str | None = None
    properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    identity: str = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.source_type) is not SourceType:  # as EntityRef: no enum call for members
            object.__setattr__(self, "source_type", SourceType(self.source_type))
        if type(self.type) is not ElementType:
            object.__setattr__(self, "type", ElementType(self.type))
        if not self.qualified_name:
            raise InvalidName(f"{self.type} element {self.name!r} has an empty qualifiedName")
        if self.deleted and self.delete_time is None:
            raise ValueError(f"deleted element {self.qualified_name} needs a delete_time")
        object.__setattr__(self, "properties", _frozen(self.properties))
        object.__setattr__(self, "identity", identity(self.source_type, self.qualified_name))

    @property
    def ref(self) -> EntityRef:
        return EntityRef(self.source_type, self.qualified_name, self.type)


def execution_times(started: datetime | None, ended: datetime | None) -> tuple[datetime | None, datetime | None]:
    """(first_seen, last_seen) of the relations an execution showed (Relation.first_seen): its
    start and end; an end not known, or before the start (a skewed clock), counts as the start, a
    start not known as the end."""
    if started is None:
        return ended, ended
    if ended is None or ended < started:
        return started, started
    return started, ended


@dataclasses.dataclass(frozen=True, slots=True)
class Relation:
    """A directed edge in nav_relations: endpoint 1 -> endpoint 2 in the roles of its type.

    `linked1`/`linked2` say whether the extractor knows that endpoint is indexed; a relation
    with an endpoint not known to be indexed is stored `unlinked` and carries that endpoint's
    qualifiedName, so the linker can resolve it once the element appears (possibly under an
    alias). `discriminator` separates parallel edges between the same two endpoints, e.g. a
    column edge seen through two different executions.

    `first_seen` / `last_seen`: when the executions that showed the relation ran (the first's
    start, the last's end), not when it was indexed: what lineage as of a moment counts from.
    None where the source tells no time (structure such as a table's columns).
    """

    type: RelationType
    endpoint1: EntityRef
    endpoint2: EntityRef
    linked1: bool = True
    linked2: bool = True
    dependency_type: DependencyType | None = None
    expression: str | None = None
    discriminator: str = ""
    extractor_run_id: str | None = None
    properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    # Computed once, as Element's: the document, the intake's ordering and de-duplication all
    # need it (an MD5 each time, taken two or three times a relation before).
    identity: str = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.type) is not RelationType:
            object.__setattr__(self, "type", RelationType(self.type))
        if self.first_seen is not None and self.last_seen is not None and self.last_seen < self.first_seen:
            raise ValueError(f"relation {self.endpoint1.qualified_name} -> {self.endpoint2.qualified_name}: "
                             f"last_seen {self.last_seen.isoformat()} before first_seen {self.first_seen.isoformat()}")
        # (the enum call skipped for a member, which nearly all callers pass: a Spark pass makes
        # a relation per column edge)
        if self.dependency_type is not None and type(self.dependency_type) is not DependencyType:
            object.__setattr__(self, "dependency_type", DependencyType(self.dependency_type))
        object.__setattr__(self, "properties", _frozen(self.properties))
        object.__setattr__(self, "identity", relation_identity(self.type._value_, self.endpoint1.identity,
                                                               self.endpoint2.identity, self.discriminator))

    @property
    def unlinked(self) -> bool:
        return not (self.linked1 and self.linked2)

    @property
    def roles(self) -> tuple[str, str]:
        return ENDPOINT_ROLES[self.type]


@dataclasses.dataclass(frozen=True, slots=True)
class ElementStub:
    """An element known only from another source's reference, e.g. a table a Spark job read.

    Indexed only if no document with its identity exists, so it never overwrites the richer
    document of the extractor that owns the entity (the HMS extractor for tables); that
    extractor's document replaces the stub when it arrives. It lets lineage start from, and
    show, entities (such as a temporary table dropped between two HMS extractions) that only an
    operation ever mentioned.
    """

    element: Element


@dataclasses.dataclass(frozen=True, slots=True)
class Deletion:
    """An element a later extraction proved gone (missing from its parent's complete listing, or
    from a snapshot diff): flagged deleted with deleteTime, if it is indexed. Its document and
    relations stay, for lineage; views hide deleted entities by default."""

    ref: EntityRef
    delete_time: datetime


#: What extractors yield and the index writer takes.
Record = Element | Relation | ElementStub | Deletion


__all__ = ["ENDPOINT_ROLES", "Deletion", "DependencyType", "Element", "ElementStub", "ElementType", "EntityRef",
           "InvalidName", "Record", "Relation", "RelationType", "SourceType", "hive_qualified_name", "identity",
           "operation_qualified_name", "partition_qualified_name", "path_qualified_name"]

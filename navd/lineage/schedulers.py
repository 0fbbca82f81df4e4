"""Which Oozie workflow started an execution. Pure: reads a `LineageStore` (navd/lineage/rules.py).

A scheduler's action is the physical end of what it triggered (Navigator's rule for job
managers), so the lineage walk, which goes from the physical end to the logical one and from a
parent down to its children, never climbs from a job to the workflow that ran it. This module
climbs, along the relations the extractors write:

    Spark SQL execution <-PARENT_CHILD- Spark run -LOGICAL_PHYSICAL-> YARN application
        -LOGICAL_PHYSICAL-> Oozie action <-PARENT_CHILD- workflow run <-INSTANCE_OF- workflow

(a Hive execution names its YARN applications by its MapReduce/Tez job ids the same way; an
action that names the execution directly is one LOGICAL_PHYSICAL), then from the workflow run to
the coordinator action that started it (PARENT_CHILD) and its coordinator (INSTANCE_OF). Only the
relations on a path that reaches an Oozie action are returned. One store round trip per hop,
for any number of executions.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from navd.lineage.stored import StoredRelation
from navd.model import ElementType, RelationType, SourceType

if TYPE_CHECKING:
    from navd.lineage.rules import LineageStore

_EXECUTION = ElementType.OPERATION_EXECUTION.value
_OPERATION = ElementType.OPERATION.value
_PARENT_CHILD = RelationType.PARENT_CHILD.value
_LOGICAL_PHYSICAL = RelationType.LOGICAL_PHYSICAL.value
_INSTANCE_OF = RelationType.INSTANCE_OF.value
_OOZIE = SourceType.OOZIE.value


def scheduler_relations(store: LineageStore, execution_ids: Collection[str]) -> list[StoredRelation]:
    """The relations from `execution_ids` up to the Oozie workflows (and coordinators) that
    started them."""
    if not execution_ids:
        return []
    relations = store.relations
    # the run a SQL execution is part of (itself when it is a run)
    ups = [r for r in relations(sorted(execution_ids), (_PARENT_CHILD,), 2, far_type=_EXECUTION)
           if r.endpoint1.source_type != _OOZIE]
    runs = set(execution_ids) | {r.endpoint1.id for r in ups}
    # their physical ends: a YARN application, or an Oozie action directly; then the action
    first = list(relations(sorted(runs), (_LOGICAL_PHYSICAL,), 1, far_type=_EXECUTION))
    applications = sorted({r.endpoint2.id for r in first if r.endpoint2.source_type != _OOZIE})
    second = [r for r in relations(applications, (_LOGICAL_PHYSICAL,), 1, far_type=_EXECUTION)
              if r.endpoint2.source_type == _OOZIE] if applications else []
    actions = {r.endpoint2.id for r in (*first, *second) if r.endpoint2.source_type == _OOZIE}
    if not actions:
        return []
    launched = {r.endpoint1.id for r in second}
    first = [r for r in first if r.endpoint2.id in actions or r.endpoint2.id in launched]
    started = {r.endpoint1.id for r in first}
    ups = [r for r in ups if r.endpoint1.id in started]
    # the action's workflow run and the coordinator action that started the run
    workflow_runs = [r for r in relations(sorted(actions), (_PARENT_CHILD,), 2, far_type=_EXECUTION)
                     if r.endpoint1.source_type == _OOZIE]
    run_ids = sorted({r.endpoint1.id for r in workflow_runs})
    materialised = [r for r in relations(run_ids, (_PARENT_CHILD,), 2, far_type=_EXECUTION)
                    if r.endpoint1.source_type == _OOZIE] if run_ids else []
    instances = sorted({*run_ids, *(r.endpoint1.id for r in materialised)})
    templates = [r for r in relations(instances, (_INSTANCE_OF,), 2, far_type=_OPERATION)
                 if r.endpoint1.source_type == _OOZIE] if instances else []
    return _unique([*ups, *first, *second, *workflow_runs, *materialised, *templates])


def workflows_by_execution(relations: Iterable[StoredRelation], execution_ids: Collection[str]
                           ) -> dict[str, tuple[str, ...]]:
    """{execution id: the qualifiedNames of the Oozie workflows that started it}, from what
    `scheduler_relations` returned for them (executions no workflow started are left out)."""
    by_type: dict[str, list[StoredRelation]] = {}
    for relation in relations:
        by_type.setdefault(relation.type, []).append(relation)
    parent = {r.endpoint2.id: r.endpoint1.id for r in by_type.get(_PARENT_CHILD, ())
              if r.endpoint1.source_type != _OOZIE}
    physical = _many((r.endpoint1.id, r.endpoint2.id) for r in by_type.get(_LOGICAL_PHYSICAL, ()))
    run_of_action = {r.endpoint2.id: r.endpoint1.id for r in by_type.get(_PARENT_CHILD, ())
                     if r.endpoint1.source_type == _OOZIE and r.endpoint2.type == _EXECUTION}
    workflow = {r.endpoint2.id: r.endpoint1.qualified_name for r in by_type.get(_INSTANCE_OF, ())
                if r.endpoint1.qualified_name.startswith("oozie://workflow/")}
    found: dict[str, tuple[str, ...]] = {}
    for execution in execution_ids:
        run = parent.get(execution, execution)
        # the run's physical ends (an action, or a YARN application) and theirs (its action)
        actions = {end for first in physical.get(run, ()) for end in (first, *physical.get(first, ()))}
        names = sorted({workflow[run_of_action[a]] for a in actions
                        if a in run_of_action and run_of_action[a] in workflow})
        if names:
            found[execution] = tuple(names)
    return found


def _many(pairs: Iterable[tuple[str, str]]) -> Mapping[str, list[str]]:
    out: dict[str, list[str]] = {}
    for near, far in pairs:
        out.setdefault(near, []).append(far)
    return out


def _unique(relations: Iterable[StoredRelation]) -> list[StoredRelation]:
    return list({r.id: r for r in relations}.values())

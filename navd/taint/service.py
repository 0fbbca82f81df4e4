"""Taints and the reprocess plan as `navd taint`, `navd reprocess`, `navd entity` and their API
routes ask for them: names resolved (navd/index/lookup.py), then the records (navd/taint/store.py)
or the walk (navd/taint/reprocess.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from navd.errors import EntityNotFound, UsageError
from navd.index.client import SolrIndex
from navd.index.lookup import Scope, resolve_one
from navd.names import shown
from navd.index.documents import parse_solr_date
from navd.taint import store
from navd.taint.reprocess import Plan
from navd.taint.reprocess import reprocess as plan
from navd.taint.rules import taint_range


def taint(index: SolrIndex, name: str, scope: Scope = Scope(), *, start: datetime | None = None,
          end: datetime | None = None, reason: str = "", user: str | None = None) -> dict[str, Any]:
    """Record a taint on the dataset or partition `name` stands for (as `navd entity`), over
    [start, end) or all of it (a partition: its own period); the record as shown."""
    return store.add_taint(index, resolve_one(index, name, scope), start, end, reason, user)


def clear_taints(index: SolrIndex, name: str | None = None, scope: Scope = Scope(), *,
                 taint_id: str | None = None) -> list[dict[str, Any]]:
    """Remove the taint `taint_id`, or every taint recorded on `name`; those removed."""
    if taint_id is not None:
        return store.clear_taints(index, taint_id=taint_id)
    if name is None:
        raise UsageError("taint --clear: name the entity or give --id")
    return store.clear_taints(index, target=resolve_one(index, name, scope))


def taints(index: SolrIndex, name: str | None = None, scope: Scope = Scope(), *,
           rows: int = 1000) -> list[dict[str, Any]]:
    """The taints (newest first); with `name`, those covering that element."""
    return store.list_taints(index, None if name is None else resolve_one(index, name, scope), rows=rows)


def reprocess(index: SolrIndex, name: str | None = None, scope: Scope = Scope(), *,
              start: datetime | None = None, end: datetime | None = None,
              taint_id: str | None = None) -> Plan:
    """What to reprocess downstream of `name` over [start, end) (or all of it), or of the taint
    `taint_id`: the datasets and partitions touched, in dependency order, and the runs to redo."""
    if taint_id is not None:
        if name is not None or start is not None or end is not None:
            raise UsageError("reprocess: give an entity (with --from/--to) or --taint, not both")
        record = store.get_taint(index, taint_id)
        if record is None:
            raise EntityNotFound(f"no taint {shown(taint_id)}")
        docs = index.get("elements", [str(record["taint_target"])])
        if not docs:
            raise EntityNotFound(f"the element of taint {taint_id} is no longer indexed")
        start = parse_solr_date(record["taint_from"]) if record.get("taint_from") else None
        end = parse_solr_date(record["taint_to"]) if record.get("taint_to") else None
        return plan(index, docs[0], taint_range(start, end))
    if name is None:
        raise UsageError("reprocess: name the entity (or --taint ID)")
    return plan(index, resolve_one(index, name, scope), taint_range(start, end))

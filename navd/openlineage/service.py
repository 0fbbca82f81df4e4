"""OpenLineage out, as the CLI (`navd export openlineage`) and the server (Marquez's reads under
/api/v1) ask for it: `[openlineage] namespaces` read from the config, names resolved as `navd
entity` resolves them, then the export (navd/openlineage/export.py) or Marquez's graphs
(navd/openlineage/marquez.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from navd.config import NavdConfig
from navd.index.client import SolrIndex, batches
from navd.index.lookup import Scope, resolve_one
from navd.openlineage import marquez
from navd.openlineage.export import (
    ExportSettings,
    execution_events,
    execution_filters,
    executions_of,
    view_events,
    view_filters,
    views_of,
)
from navd.openlineage.schema import validate as validate_event

#: identities per filter when exporting an entity's runs
_EXPORT_IDS = 1000


def export_settings(config: NavdConfig) -> ExportSettings:
    return ExportSettings(dict(config.openlineage.namespaces))


def export_openlineage(index: SolrIndex, config: NavdConfig, *, since: datetime | None = None,
                       entity: str | None = None, scope: Scope = Scope(),
                       validate: bool = False) -> Iterator[dict[str, Any]]:
    """The OpenLineage RunEvents of the executions in the index and of the Hive views' definitions
    (README "OpenLineage"), streamed: those started or ended (views: created or changed) at or
    after `since`; with `entity`, those of that element (an execution and the executions under
    it, an operation's executions, the executions that read or wrote a dataset, a view and the
    views reading a dataset). With `validate`, each event is checked against the vendored schema
    first (InvalidEvent naming the field: navd wrote something the spec refuses)."""
    settings = export_settings(config)
    if entity is None:
        events = itertools.chain(execution_events(index, settings, execution_filters(since)),
                                 view_events(index, settings, view_filters(since)))
    else:
        # an entity's runs by identity, in sorted chunks: a busy table's thousands of runs would
        # overflow Solr's form body as one filter; sorted, the chunks keep the identity order
        doc = resolve_one(index, entity, scope)
        events = itertools.chain(
            *(execution_events(index, settings, execution_filters(since, chunk))
              for chunk in batches(executions_of(index, doc), _EXPORT_IDS)),
            *(view_events(index, settings, view_filters(since, chunk))
              for chunk in batches(views_of(index, doc), _EXPORT_IDS)))
    for event in events:
        if validate:
            validate_event(event)
        yield event


def marquez_lineage(index: SolrIndex, config: NavdConfig, node_id: str, *, depth: int,
                    max_nodes: int, as_of: datetime | None = None) -> dict[str, Any]:
    """Marquez's `GET /api/v1/lineage` of a `dataset:`/`job:` node (as it stood at `as_of` when
    given): UsageError naming `nodeId` for a malformed one, EntityNotFound for one navd does not hold."""
    return marquez.lineage(index, export_settings(config), config.cluster.name, node_id, depth, max_nodes, as_of)


def marquez_column_lineage(index: SolrIndex, config: NavdConfig, node_id: str, *, depth: int,
                           with_downstream: bool, max_nodes: int) -> dict[str, Any]:
    """Marquez's `GET /api/v1/column-lineage` of a `datasetField:` (or `dataset:`) node."""
    return marquez.column_lineage(index, export_settings(config), config.cluster.name, node_id, depth, with_downstream,
                                  max_nodes)

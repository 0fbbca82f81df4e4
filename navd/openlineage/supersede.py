"""One run, one lineage: the event log supersedes the Spark listener's lineage (docs/sources/openlineage.md).

When the OpenLineage Spark listener and navd's Spark extractor both describe one Spark
application, the extractor's lineage wins: the event log is complete (every SQL execution,
nested ones folded into their root; the listener drops what it cannot plan) and exact (the
column vocabulary of docs/features/lineage.md, "How a column is used"), and its executions are named by
application id + SQL execution id, which the listener's events do not carry. The listener's
events stay as runs (jobs, states, times: known while the application runs, before its log is
complete), but their lineage relations (marked with the application run by
navd.openlineage.mapping) go:

- `withdraw_listener_lineage`: at each commit of the Spark extractor that wrote an
  application's records (a post-commit hook the Spark component registers), the listener's
  lineage of those applications is deleted;
- `SparkCoverage`: the intake leaves out the lineage of a listener event whose application the
  extractor already wrote, so a late event does not bring it back.

Applications are matched by id: the listener's application run holds the Spark application id
(its `spark_applicationDetails` facet), the extractor's run document the same id (`appId`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from navd.index.client import SolrIndex
from navd.index.queries import has_property, of_source, of_type, property_any_of, property_is
from navd.model import ElementType, SourceType
from navd.openlineage.mapping import SPARK_APPLICATION_ID, SPARK_APPLICATION_RUN

#: the Spark extractor's run document holds the application id under this property
SPARK_RUN_APP_ID = "appId"
#: how many application runs the intake remembers as covered (each a runId; a bound, not a cache
#: that must be right: a forgotten one is asked again)
COVERED_MEMORY = 10_000


def _property(doc: Mapping[str, Any], key: str) -> str | None:
    """One property of a stored document (from its stored `properties` JSON)."""
    try:
        value = json.loads(doc.get("properties") or "{}").get(key)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def listener_application_runs(index: SolrIndex, application_ids: Iterable[str]) -> list[str]:
    """The runIds of the Spark listener's application runs of these Spark applications."""
    ids = sorted(set(application_ids))
    if not ids:
        return []
    runs: set[str] = set()
    for doc in index.scan("elements", property_any_of(SPARK_APPLICATION_ID, ids),
                          fl="properties", filters=[of_source(SourceType.OPENLINEAGE)]):
        run = _property(doc, SPARK_APPLICATION_RUN)
        if run:
            runs.add(run)
    return sorted(runs)


def withdraw_listener_lineage(index: SolrIndex, application_ids: Iterable[str]) -> list[str]:
    """Delete the Spark listener's lineage relations of these applications (the extractor wrote
    theirs); the application runs whose lineage went."""
    runs = listener_application_runs(index, application_ids)
    if runs:
        index.delete_query("relations", property_any_of(SPARK_APPLICATION_RUN, runs))
    return runs


class SparkCoverage:
    """Whether navd's Spark extractor wrote the application of a listener's application run.
    Thread-safe; remembers the runs found covered (an application once extracted stays so)."""

    def __init__(self, index: SolrIndex) -> None:
        self.index = index
        self._covered: dict[str, None] = {}
        self._lock = threading.Lock()

    def covered(self, application_run: str, application_id: str | None = None) -> bool:
        """`application_id`: the id when the event itself names it (the application's START)."""
        with self._lock:
            if application_run in self._covered:
                return True
        if application_id is None:
            found = self.index.search("elements", property_is(SPARK_APPLICATION_RUN, application_run),
                                      rows=1, fl="properties",
                                      filters=[has_property(SPARK_APPLICATION_ID), of_source(SourceType.OPENLINEAGE)])
            docs = found.get("response", {}).get("docs", [])
            application_id = _property(docs[0], SPARK_APPLICATION_ID) if docs else None
        if not application_id:
            return False
        extracted = self.index.count(
            "elements", property_is(SPARK_RUN_APP_ID, str(application_id)),
            filters=[of_source(SourceType.SPARK), of_type(ElementType.OPERATION_EXECUTION)])
        if extracted:
            with self._lock:
                self._covered[application_run] = None
                while len(self._covered) > COVERED_MEMORY:
                    del self._covered[next(iter(self._covered))]
        return extracted > 0

"""Run records: every extractor, linker and purge run as a document in the runs core.

A run is written RUNNING when it starts and SUCCEEDED or FAILED (with the error's first line)
when it ends, with its counts as `count_<name>` fields; its id is the extractor run id that the
run's documents carry as `extractorRunId`. `navd status` reads them back. Recording never hides
the run's own outcome: a run record Solr does not take is logged and the run goes on.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from navd.errors import NavdError
from navd.index.client import SolrIndex, serialise
from navd.index.documents import solr_date
from navd.logs import get_logger

log = get_logger("navd.runs")
KIND = "run"


@dataclasses.dataclass
class Run:
    run_id: str
    component: str
    started: datetime
    counts: dict[str, int] = dataclasses.field(default_factory=dict)

    def document(self, state: str, *, ended: datetime | None = None, error: str | None = None) -> dict[str, Any]:
        doc: dict[str, Any] = {"identity": self.run_id, "kind": KIND, "component": self.component, "state": state,
                               "started": solr_date(self.started), "host": socket.gethostname()}
        if ended is not None:
            doc["ended"] = solr_date(ended)
        if error:
            doc["error"] = error[:2000]
        doc.update({f"count_{name}": int(value) for name, value in self.counts.items()})
        return doc


def _post(index: SolrIndex, doc: Mapping[str, Any]) -> None:
    try:
        index.post_update("runs", serialise([doc]))
        index.commit("runs", soft=True)
    except NavdError as exc:
        log.warning("run record not written", run=doc["identity"], state=doc["state"], reason=str(exc))


@contextmanager
def recorded_run(index: SolrIndex, component: str, run_id: str) -> Iterator[Run]:
    """Record the run of the `with` body; set `counts` on the yielded Run before it ends."""
    run = Run(run_id, component, datetime.now(UTC))
    _post(index, run.document("RUNNING"))
    try:
        yield run
    except BaseException as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _post(index, run.document("FAILED", ended=datetime.now(UTC), error=message))
        raise
    _post(index, run.document("SUCCEEDED", ended=datetime.now(UTC)))


def status(index: SolrIndex) -> dict[str, Any]:
    """Per component the last run and the last success; totals per core."""
    components: dict[str, dict[str, Any]] = {}
    facets = index.search("runs", f"kind:{KIND}", rows=0, params={
        "facet": "true", "facet.field": "component", "facet.limit": "-1", "facet.mincount": "1"})
    counted = facets.get("facet_counts", {}).get("facet_fields", {}).get("component", [])
    names = sorted(str(name) for name in counted[::2])
    for name in names:
        last = _latest(index, f'kind:{KIND} AND component:"{name}"')
        success = _latest(index, f'kind:{KIND} AND component:"{name}" AND state:SUCCEEDED')
        components[name] = {"last_run": last, "last_success": success.get("ended") if success else None}
    totals = {"elements": index.count("elements"), "relations": index.count("relations"),
              "unlinked_relations": index.count("relations", "unlinked:true"),
              "deleted_elements": index.count("elements", "deleted:true")}
    return {"components": components, "totals": totals}


def _latest(index: SolrIndex, query: str) -> dict[str, Any]:
    docs = index.search("runs", query, rows=1, sort="started desc")["response"]["docs"]
    if not docs:
        return {}
    return {k: v for k, v in docs[0].items() if k not in ("_version_", "lastIndexed", "kind")}

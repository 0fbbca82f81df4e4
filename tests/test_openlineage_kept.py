"""OpenLineage events kept as posted: returned by Marquez's `GET /api/v1/events/lineage` (paged as
Marquez pages them), mapped again by `navd openlineage replay`, purged with their runs and held
to `[openlineage] keep_events`. A real `navd serve` over the session Solr; the events carry
times of a year of their own, so the windows asked see only this module's events."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from openlineage.client.event_v2 import RunState

from conftest import NavdRunner, Served, serve_on_free_port
from navd.index.client import SolrIndex
from navd.openlineage import kept
from navd.purge.purge import Purger
from navd.solr.server import EmbeddedSolr
from openlineage_events import JOB_NAMESPACE, as_json, job_run

#: this module's events happen in a window no other test's events fall in
BASE = datetime(2003, 3, 3, tzinfo=UTC) + timedelta(minutes=uuid.uuid4().int % 100_000)


def at(minutes: int) -> str:
    return (BASE + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def event(job: str, minutes: int, *, state: RunState = RunState.COMPLETE, run_id: str | None = None,
          database: str = "kept") -> dict[str, Any]:
    body = as_json(job_run(run_id or str(uuid.uuid4()), job, state, database=database))
    body["eventTime"] = at(minutes)
    return body


@pytest.fixture(scope="module")
def kept_served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr,
                index: SolrIndex) -> Iterator[Served]:
    del index  # the session's cores exist before the server writes to them
    tmp = tmp_path_factory.mktemp("ol-kept")
    with serve_on_free_port(tmp, solr_server, extra=f'[openlineage]\nenabled = true\nspool_dir = "{tmp / "spool"}"\n'
                            ) as served:
        yield served


def post(served: Served, body: dict[str, Any] | bytes) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = requests.post(f"{served.url}/api/v1/lineage", data=data, timeout=60,
                           headers={"Content-Type": "application/json"})
    assert answer.status_code == 201, answer.text


def visible(index: SolrIndex) -> None:
    for core in ("elements", "relations", "runs"):
        index.commit(core, soft=True)


def events_page(served: Served, **params: Any) -> dict[str, Any]:
    answer = served.get("/api/v1/events/lineage", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_events_are_kept_and_paged_as_marquez_pages_them(kept_served: Served, index: SolrIndex) -> None:
    posted = [event(f"paged_{n}", n) for n in range(5)]
    for body in reversed(posted):  # kept in another order than their times
        post(kept_served, body)
    visible(index)
    window = {"after": at(0), "before": at(5)}

    newest_first = events_page(kept_served, **window)
    assert newest_first["totalCount"] == 5
    assert newest_first["events"] == list(reversed(posted))  # as posted, byte for byte once parsed
    oldest_first = events_page(kept_served, **window, sortDirection="asc", limit=2, offset=1)
    assert oldest_first["totalCount"] == 5
    assert [e["job"]["name"] for e in oldest_first["events"]] == ["paged_1", "paged_2"]
    # `after` is inclusive, `before` exclusive, as Marquez's query
    narrow = events_page(kept_served, after=at(1), before=at(3), sortDirection="asc")
    assert [e["job"]["name"] for e in narrow["events"]] == ["paged_1", "paged_2"]


@pytest.mark.parametrize(("params", "parameter"), [
    ({"before": "yesterday"}, "before"),
    ({"after": "2003-13-01"}, "after"),
    ({"sortDirection": "sideways"}, "sortDirection"),
    ({"limit": "-1"}, "limit"),
    ({"limit": "100000"}, "limit"),
    ({"offset": "-5"}, "offset"),
])
def test_bad_paging_is_a_400_naming_the_parameter(kept_served: Served, params: dict[str, str],
                                                  parameter: str) -> None:
    answer = kept_served.get("/api/v1/events/lineage", params=params)
    assert answer.status_code == 400, answer.text
    assert parameter in answer.json()["error"]


def test_a_large_event_is_kept_whole(kept_served: Served, index: SolrIndex) -> None:
    """An event far larger than one Solr term (32,766 bytes): kept and returned whole."""
    body = event("large_event", 10)
    body["run"]["facets"]["custom_plan"] = {"_producer": "https://example.com/planner", "plan": "x" * 200_000}
    post(kept_served, body)
    visible(index)
    found = events_page(kept_served, after=at(10), before=at(11))
    assert found["totalCount"] == 1 and found["events"][0] == body


def test_replay_maps_kept_events_again(tmp_path: Path, solr_server: EmbeddedSolr, index: SolrIndex,
                                       navd: NavdRunner) -> None:
    """The execution an event made is gone (as after a mapping change wipes it): `navd
    openlineage replay` writes it again from the kept event. While a server with the intake runs
    on the same state directory, the replay refuses, naming it."""
    run_id = str(uuid.uuid4())
    execution = f"openlineage://{JOB_NAMESPACE}/replayed/{run_id}"
    with serve_on_free_port(tmp_path, solr_server, extra="[openlineage]\nenabled = true\n") as served:
        post(served, event("replayed", 20, run_id=run_id))
        refused = navd("--config", str(tmp_path / "navd.toml"), "openlineage", "replay")
        assert refused.returncode == 1, refused.stderr
        assert "[openlineage]" in refused.stderr and "Traceback" not in refused.stderr
    visible(index)
    query = f'qualifiedName:"{execution}"'
    assert index.count("elements", query) == 1
    index.delete_query("elements", query)
    visible(index)
    assert index.count("elements", query) == 0

    replayed = navd("--config", str(tmp_path / "navd.toml"), "openlineage", "replay", "--from", at(20),
                    "--to", at(21), "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == {"replayed": 1, "refused": 0}
    visible(index)
    assert index.count("elements", query) == 1


def test_kept_events_go_with_their_runs_and_past_the_bound(kept_served: Served, index: SolrIndex) -> None:
    """The purge removes an old event whose execution it removed (a run that wrote nothing) and
    one of no run; an event of a run that wrote a table stays with it. Then the bound: past it,
    the oldest kept go first. (Last in the module: the bound applies to every kept event.)"""
    wrote = event("wrote_a_table", 30)
    idle = event("wrote_nothing", 31)
    idle["outputs"] = []
    dataset_event = {"eventTime": at(32), "producer": "https://example.com/catalog",
                     "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent",
                     "dataset": {"namespace": "s3://bucket", "name": "kept/dataset", "facets": {}}}
    bounded = [event(f"bounded_{n}", 33 + n) for n in range(3)]
    for body in (wrote, idle, dataset_event, *bounded):
        post(kept_served, body)
    visible(index)
    # every execution of this module's window is before the threshold (none is left for a later
    # purge test of the shared Solr to count)
    report = Purger(index, threshold=BASE + timedelta(minutes=40)).run()
    assert report.complete and report.removed["openlineage_events"] >= 2
    visible(index)
    left = events_page(kept_served, after=at(30), before=at(33), sortDirection="asc")
    assert [e.get("job", {}).get("name") for e in left["events"]] == ["wrote_a_table"]

    total = index.count("runs", f"kind:{kept.KIND}")
    assert kept.trim(index, total - 2) == 2
    visible(index)
    assert index.count("runs", f"kind:{kept.KIND}") == total - 2
    newest = events_page(kept_served, after=at(33), before=at(36), sortDirection="asc")
    assert [e["job"]["name"] for e in newest["events"]] == ["bounded_0", "bounded_1", "bounded_2"]

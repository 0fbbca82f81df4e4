"""An emitter's source datasets as users see them: events posted with the real openlineage-python
client to a real `navd serve`, then `navd lineage` and `/api/lineage`. A dataset no extractor
navd runs is responsible for (a local file, a table of a metastore navd does not extract) is an
entity in default lineage; a Hive table of the metastore navd extracts waits, hidden, until the
metastore side indexes it (docs/features/lineage.md, "References no extractor indexed")."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import schema_dataset
from openlineage.client.transport.http import HttpConfig, HttpTransport

from conftest import NavdRunner, Served, serve_on_free_port, write_navd_config
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, SourceType, hive_qualified_name
from navd.solr.server import EmbeddedSolr
from openlineage_events import HIVE, JOB_NAMESPACE, PRODUCER


@pytest.fixture(scope="module")
def cluster() -> str:
    return f"src{os.getpid()}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex,
           cluster: str) -> Iterator[Served]:
    """`navd serve` with the intake on, the metastore's namespace mapped to `cluster`; no extractor set up."""
    del index  # the session's cores exist before the server writes to them
    tmp = tmp_path_factory.mktemp("ol-sources")
    with serve_on_free_port(tmp, solr_server, extra=f'[cluster]\nname = "{cluster}"\n[openlineage]\nenabled = true\n'
                            f'spool_dir = "{tmp / "spool"}"\n[openlineage.namespaces]\n"{HIVE}" = "{cluster}"\n') \
            as running:
        yield running


def copy_job(run_id: str, inputs: list[InputDataset], outputs: list[OutputDataset]) -> RunEvent:
    return RunEvent(eventType=RunState.COMPLETE, eventTime="2026-11-23T06:00:00Z", producer=PRODUCER,
                    run=Run(runId=run_id), job=Job(namespace=JOB_NAMESPACE, name="copy_in_to_out"),
                    inputs=inputs, outputs=outputs)


def post(served: Served, index: SolrIndex, event: RunEvent) -> None:
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=served.url)))
    answer = client.transport.emit(event)
    assert answer.status_code == 201, answer.text
    for core in ("elements", "relations"):  # what the intake flushed, searchable now
        index.commit(core, soft=True)


def upstream(navd: NavdRunner, name: str, env: dict[str, str], *args: str) -> tuple[dict[str, dict[str, object]],
                                                                                    set[tuple[str, str]]]:
    """`navd lineage NAME --direction upstream ... --format json`: nodes by qualified name, edges
    as (source, target) qualified names."""
    shown = navd("lineage", name, "--direction", "upstream", *args, "--format", "json", env=env)
    assert shown.returncode == 0, shown.stderr
    graph = json.loads(shown.stdout)
    names = {node["id"]: node["qualifiedName"] for node in graph["nodes"]}
    return ({node["qualifiedName"]: node for node in graph["nodes"]},
            {(names[e["source"]], names[e["target"]]) for e in graph["edges"]})


def config_env(directory: Path, solr: EmbeddedSolr, cluster: str, body: str = "") -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    config = write_navd_config(directory / "navd.toml", solr, body, cluster=cluster)
    return {**os.environ, "NAVD_CONFIG": str(config)}


def test_a_local_files_source_shows_in_default_lineage(served: Served, index: SolrIndex, navd: NavdRunner,
                                                       tmp_path: Path, solr_server: EmbeddedSolr,
                                                       cluster: str) -> None:
    data = f"/data/{uuid.uuid4().hex[:8]}"
    schema = schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name="id", type="BIGINT")])
    post(served, index, copy_job(str(uuid.uuid4()), [InputDataset(namespace="file", name=f"{data}/in",
                                                                  facets={"schema": schema})],
                                 [OutputDataset(namespace="file", name=f"{data}/out")]))
    source, target = f"file://{data}/in", f"file://{data}/out"
    env = config_env(tmp_path, solr_server, cluster)

    shown = navd("lineage", target, "--direction", "upstream", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "(no lineage)" not in shown.stdout and source in shown.stdout, shown.stdout
    nodes, edges = upstream(navd, target, env)
    assert (source, target) in edges
    assert "unlinked" not in nodes[source]  # an entity, not a placeholder
    answer = served.get("/api/lineage", params={"entity": target, "direction": "upstream"})
    assert answer.status_code == 200, answer.text
    assert source in {node["qualifiedName"] for node in answer.json()["nodes"]}


def test_a_table_of_the_extracted_metastore_waits_until_indexed(served: Served, index: SolrIndex, navd: NavdRunner,
                                                                tmp_path: Path, solr_server: EmbeddedSolr,
                                                                cluster: str) -> None:
    database = f"db{uuid.uuid4().hex[:8]}"
    data = f"/data/{database}"
    post(served, index, copy_job(str(uuid.uuid4()), [InputDataset(namespace=HIVE, name=f"{database}.src"),
                                                     InputDataset(namespace="file", name=f"{data}/in")],
                                 [OutputDataset(namespace="file", name=f"{data}/out")]))
    table, source, target = hive_qualified_name(cluster, database, "src"), f"file://{data}/in", f"file://{data}/out"

    # the metastore extractor enabled: its cluster's table waits for it; the local file shows
    extracting = config_env(tmp_path / "hive", solr_server, cluster, '[hive]\nenabled = true\nhost = "hs2.invalid"\n')
    nodes, edges = upstream(navd, target, extracting)
    assert (source, target) in edges and table not in nodes
    nodes, _ = upstream(navd, target, extracting, "--operations")
    assert nodes[table].get("unlinked") is True

    # no extractor set up: nothing will index the table, so it shows as it is referenced
    nodes, edges = upstream(navd, target, config_env(tmp_path / "none", solr_server, cluster))
    assert {(table, target), (source, target)} <= edges

    # the metastore side indexes the table: shown with the extractor enabled too
    writer = IndexWriter(index)
    writer.write(Element(SourceType.HIVE, ElementType.TABLE, table, name="src"))
    assert writer.close()
    index.commit("elements", soft=True)
    nodes, edges = upstream(navd, target, extracting)
    assert (table, target) in edges and "unlinked" not in nodes[table]

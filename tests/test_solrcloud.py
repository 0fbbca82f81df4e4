"""`navd solr init` against a real SolrCloud: one embedded node (`navd solr start --cloud`) with
the ZooKeeper Solr embeds, started once for this module, collections with 2 shards.

No mocks: a node that does not start fails the module.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import requests
from lineage_cases import CASES, Case, Graph, expected_nodes, fan_out, shown, start_name

from navd.config import DEFAULT_SOLR_VERSION, SolrConfig, default_solr_dist_dir
from navd.errors import NavdError, SolrError
from navd.index.admin import CONFIGSETS, configset_dir, configset_hash, init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.lineage.memory_store import MemoryLineageStore
from navd.lineage.rules import LineageOptions
from navd.lineage.rules import lineage as walk_lineage
from navd.lineage.service import lineage
from navd.linker.linker import Linker
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.openlineage import marquez
from navd.openlineage.export import ExportSettings
from navd.openlineage.mapping import MappingSettings, map_event
from navd.solr.server import ZK_PORT_OFFSET, EmbeddedSolr, SolrDistribution, free_port

#: every test here runs against the module's own SolrCloud node
pytestmark = pytest.mark.services

SHARDS = 2
NAVD = str(Path(sys.executable).parent / "navd")


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _cloud_port() -> int:
    """A free port for Solr whose ZooKeeper port (Solr port + 1000) is free as well."""
    for _ in range(100):
        port = free_port()
        if port + ZK_PORT_OFFSET < 65536 and _bindable(port + ZK_PORT_OFFSET):
            return port
    raise AssertionError("no free pair of ports (Solr, Solr + 1000) on 127.0.0.1")


def _run_navd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVD, *args], env=env, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This module's own navd state directory, so its node is nobody else's "current" Solr."""
    return tmp_path_factory.mktemp("solrcloud-state")


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory, state: Path) -> Iterator[EmbeddedSolr]:
    home, port = tmp_path_factory.mktemp("solrcloud-home"), _cloud_port()
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    for key in ("NAVD_CONFIG", "NAVD_SOLR_URL"):
        env.pop(key, None)
    server = EmbeddedSolr(home, port, "512m", SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir()))
    try:
        started = _run_navd("solr", "start", "--cloud", "--home", str(home), "--port", str(port),
                            "--heap", "512m", env=env)
        if started.returncode != 0:
            pytest.fail(f"the SolrCloud node did not start: {started.stderr.strip()}", pytrace=False)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def navd_env(cloud: EmbeddedSolr, state: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`navd` pointed at the node by NAVD_SOLR_URL, with a config that asks for 2 shards."""
    config = tmp_path_factory.mktemp("solrcloud-config") / "navd.toml"
    config.write_text(f"[solr]\nshards = {SHARDS}\n[logging]\nformat = \"json\"\n")
    return {**os.environ, "NAVD_SOLR_URL": cloud.url, "NAVD_CONFIG": str(config),
            "XDG_STATE_HOME": str(state)}


@pytest.fixture(scope="module")
def first_init(navd_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run_navd("solr", "init", env=navd_env)


@pytest.fixture(scope="module")
def index(cloud: EmbeddedSolr, first_init: subprocess.CompletedProcess[str]) -> Iterator[SolrIndex]:
    assert first_init.returncode == 0, first_init.stderr
    with SolrIndex(SolrConfig(url=cloud.url, shards=SHARDS, retries=2, backoff_seconds=0.2)) as client:
        yield client


def _collections(url: str) -> dict[str, Any]:
    body = requests.get(f"{url}/admin/collections", params={"action": "CLUSTERSTATUS", "wt": "json"},
                        timeout=30).json()
    return dict(body["cluster"]["collections"])


def _listening(pid: int) -> set[tuple[str, int]]:
    """(hex address, port) of every TCP socket the process listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A = LISTEN
                address, port = fields[1].rsplit(":", 1)
                found.add((address, int(port, 16)))
    return found


def _conf_copy(tmp_path: Path) -> Path:
    root = tmp_path / "solr_conf"
    shutil.copytree(str(resources.files("navd.solr_conf")), root,
                    ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return root


def _add_field(root: Path, field: str) -> None:
    schema = root / "nav_elements" / "conf" / "schema.xml"
    text = schema.read_text()
    schema.write_text(text.replace("<uniqueKey>identity</uniqueKey>",
                                   f"<uniqueKey>identity</uniqueKey>\n  {field}", 1))


def _doc(identity: str, **fields: Any) -> dict[str, Any]:
    return {"identity": identity, "qualifiedName": f"/cloud/{identity}", "sourceType": "HDFS",
            "type": "FILE", **fields}


# -- the node ---------------------------------------------------------------------------------

def test_the_node_runs_solrcloud_with_its_own_zookeeper(cloud: EmbeddedSolr) -> None:
    info = requests.get(f"{cloud.url}/admin/info/system", params={"wt": "json"}, timeout=10).json()
    assert info["mode"] == "solrcloud"
    assert info["zkHost"] == cloud.zk_host == f"127.0.0.1:{cloud.port + ZK_PORT_OFFSET}"
    assert (cloud.home / "zoo.cfg").is_file() and (cloud.home / "zoo_data").is_dir()


def test_solr_and_zookeeper_listen_on_loopback_only(cloud: EmbeddedSolr) -> None:
    status = cloud.status()
    assert status.running and status.pid
    listening = _listening(status.pid)
    # Nothing else: in particular not ZooKeeper's AdminServer, which would take 0.0.0.0:8080.
    assert {port for _, port in listening} == {cloud.port, cloud.port + ZK_PORT_OFFSET}, listening
    loopback = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
    assert all(address in loopback for address, _ in listening), listening


# -- navd solr init ---------------------------------------------------------------------------

def test_first_init_creates_the_collections_with_two_shards(
        cloud: EmbeddedSolr, first_init: subprocess.CompletedProcess[str]) -> None:
    assert first_init.returncode == 0, first_init.stderr
    collections = _collections(cloud.url)
    for configset in CONFIGSETS.values():
        assert f"{configset}: created (" in first_init.stdout, first_init.stdout
        state = collections[configset]
        assert state["configName"] == f"{configset}-{configset_hash(configset_dir(configset))}"
        assert len(state["shards"]) == SHARDS
        replicas = [r for shard in state["shards"].values() for r in shard["replicas"].values()]
        assert [r["state"] for r in replicas] == ["active"] * SHARDS


def test_second_init_changes_nothing(index: SolrIndex, navd_env: dict[str, str]) -> None:
    second = _run_navd("solr", "init", env=navd_env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.count(": unchanged (") == 3, second.stdout


def test_a_changed_schema_is_switched_in(index: SolrIndex, tmp_path: Path) -> None:
    root = _conf_copy(tmp_path)
    _add_field(root, '<field name="cloudProbe" type="string" indexed="true" stored="true"/>')
    results = {r.core: r for r in init_solr(index, conf_root=root)}
    assert results["nav_elements"].action == "updated"
    assert results["nav_relations"].action == results["nav_runs"].action == "unchanged"
    wanted = f"nav_elements-{configset_hash(configset_dir('nav_elements', root))}"
    assert _collections(index.base_url)["nav_elements"]["configName"] == wanted
    index.add("elements", [_doc("probe-1", cloudProbe="switched")])
    index.commit("elements")
    docs = index.search("elements", "cloudProbe:switched")["response"]["docs"]
    assert [d["identity"] for d in docs] == ["probe-1"]
    assert {r.action for r in init_solr(index, conf_root=root)} == {"unchanged"}


def test_a_schema_solr_rejects_is_switched_back(index: SolrIndex, tmp_path: Path) -> None:
    before = _collections(index.base_url)["nav_elements"]["configName"]
    root = _conf_copy(tmp_path)
    _add_field(root, '<field name="broken" type="no_such_type" indexed="true" stored="true"/>')
    with pytest.raises(SolrError, match=rf"no_such_type.*switched back to configset {before}"):
        init_solr(index, conf_root=root)
    assert _collections(index.base_url)["nav_elements"]["configName"] == before
    index.add("elements", [_doc("probe-after-rejection")])
    index.commit("elements")
    assert index.count("elements", "identity:probe-after-rejection") == 1


# -- documents --------------------------------------------------------------------------------

def test_the_same_document_twice_is_one_document(index: SolrIndex) -> None:
    index.add("elements", [_doc("twice", description="first")])
    index.add("elements", [_doc("twice", description="second")])
    index.commit("elements")
    docs = index.search("elements", "identity:twice", fl="identity,description")["response"]["docs"]
    assert docs == [{"identity": "twice", "description": "second"}]


def test_documents_are_spread_over_both_shards(index: SolrIndex) -> None:
    index.add("elements", [_doc(f"spread-{n}") for n in range(40)])
    index.commit("elements")
    body = index.search("elements", "identity:spread-*", rows=40, fl="identity,[shard]")
    assert body["response"]["numFound"] == 40
    assert len({doc["[shard]"] for doc in body["response"]["docs"]}) == SHARDS


def test_the_linker_links_relations_on_both_shards(index: SolrIndex) -> None:
    """The linker reads the unlinked relations of every shard (one query per identity range,
    merged by Solr) and rewrites each whole, its properties and times kept."""
    exe = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, "spark://cloudlink/1", name="1")
    seen = datetime(2026, 3, 1, 8, 0, tzinfo=timezone.utc)
    writer = IndexWriter(index)
    writer.write(exe)
    for n in range(60):
        writer.write(Element(SourceType.HDFS, ElementType.DIRECTORY, f"hdfs://cloudns/wh/d{n}", name=f"d{n}"))
        writer.write(Relation(RelationType.DATA_FLOW, exe.ref,
                              EntityRef(SourceType.HDFS, f"hdfs://cloudnn:8020/wh/d{n}", ElementType.DIRECTORY),
                              linked2=False, properties={"n": str(n)}, first_seen=seen, last_seen=seen))
    assert writer.close()
    report = Linker(index, cluster="cloudlink", default_fs="hdfs://cloudns",
                    fs_aliases={"cloudnn:8020": "hdfs://cloudns"}, state_id="linker-cloud").link(full=True)
    assert (report.examined, report.linked, report.still_unlinked) == (60, 60, 0)
    index.commit("relations")
    body = index.search("relations", "*:*", rows=100, fl="endpoint2QualifiedName,prop_n,properties,firstSeen,[shard]",
                        filters=[f"endpoint1Id:{exe.identity}"])
    docs = body["response"]["docs"]
    assert sorted(d["endpoint2QualifiedName"] for d in docs) == sorted(f"hdfs://cloudns/wh/d{n}" for n in range(60))
    assert all(d["prop_n"] == d["endpoint2QualifiedName"].rsplit("d", 1)[1] and d["firstSeen"] == "2026-03-01T08:00:00Z"
               for d in docs)
    assert len({d["[shard]"] for d in docs}) == SHARDS


def test_search_through_the_cli(index: SolrIndex, navd_env: dict[str, str]) -> None:
    index.add("elements", [_doc("cli-visible")])
    index.commit("elements")
    result = _run_navd("search", "*:*", "--rows", "100", "--json", env=navd_env)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert "cli-visible" in {d["identity"] for d in found["docs"]} and found["numFound"] >= 1


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_lineage_rule_cases_on_two_shards(index: SolrIndex, case: Case) -> None:
    """The lineage walk over a 2-shard collection shows what it shows in memory (no `{!graph}`,
    whose answers are partial across shards: SOLR-13426): every rule case, each in its own database."""
    unique = f"cloud_{uuid.uuid4().hex[:8]}"
    graph = case.graph(unique)
    writer = IndexWriter(index)
    writer.write_all(graph.records)
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core, soft=True)
    result = lineage(index, start_name(case, graph, unique), case.options)
    nodes, edges = shown(result, graph.labels)
    assert (edges, nodes, result.truncated) == (case.edges, expected_nodes(case), case.truncated)


def _indexed_fan_out(index: SolrIndex) -> Graph:
    """A table read by 30 jobs, three layers deep, with columns, written and searchable."""
    graph = fan_out(f"cloud_{uuid.uuid4().hex[:8]}", 30)
    writer = IndexWriter(index)
    writer.write_all(graph.records)
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core, soft=True)
    return graph


def test_wide_lineage_on_two_shards_is_the_same_as_in_memory(index: SolrIndex) -> None:
    """A table read by 30 jobs, three layers deep, with columns: the same graph from the
    collection as from the in-memory store, spread over both shards."""
    graph = _indexed_fan_out(index)
    options = LineageOptions(direction="downstream", columns=True)
    expected = walk_lineage(MemoryLineageStore.of(graph.records), graph.identity("root"), options)
    found = lineage(index, graph.identity("root"), options)
    assert (set(found.nodes), set(found.edges), found.truncated) == \
        (set(expected.nodes), set(expected.edges), expected.truncated)
    assert len(found.nodes) > 300


@pytest.mark.parametrize(("hub_piece", "max_nodes"), [(10, 50), (0, 50), (10, 3000)],
                         ids=["hub-first-capped", "by-identity-capped", "hub-first-whole"])
def test_wide_lineage_read_in_parts_on_two_shards(index: SolrIndex, monkeypatch: pytest.MonkeyPatch,
                                                  hub_piece: int, max_nodes: int) -> None:
    """Levels larger than a page, read in parts as a hub's level is (a first page sorted over
    both shards, then each piece by its cursor): the graph of the in-memory store, cut nodes
    and all, whether the node cap stops the walk or not."""
    from navd.lineage import store  # noqa: PLC0415

    graph = _indexed_fan_out(index)
    options = LineageOptions(direction="downstream", columns=True, max_nodes=max_nodes)
    expected = walk_lineage(MemoryLineageStore.of(graph.records), graph.identity("root"), options)
    monkeypatch.setattr(store, "_PAGE", 7)
    monkeypatch.setattr(store, "_PIECE_PAGE", 2)
    monkeypatch.setattr(store, "_HUB_PIECE", hub_piece)
    found = lineage(index, graph.identity("root"), options)
    assert found.as_dict() == expected.as_dict()
    assert found.truncated is (max_nodes < 3000)


# -- the home ---------------------------------------------------------------------------------

def test_a_standalone_home_is_not_turned_into_solrcloud(tmp_path: Path, cloud: EmbeddedSolr) -> None:
    (tmp_path / "solr.xml").write_text("<solr/>")
    server = EmbeddedSolr(tmp_path, free_port(), "512m", cloud.distribution, cloud=True)
    with pytest.raises(NavdError, match="holds a standalone Solr"):
        server.start()
    assert not (tmp_path / "navd-solr.pid").exists()


def test_a_taken_zookeeper_port_is_refused(tmp_path: Path, cloud: EmbeddedSolr) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", _cloud_port() + ZK_PORT_OFFSET))
        squatter.listen()
        zk_port = squatter.getsockname()[1]
        server = EmbeddedSolr(tmp_path / "home", zk_port - ZK_PORT_OFFSET, "512m", cloud.distribution,
                              cloud=True)
        with pytest.raises(NavdError, match=f"port {zk_port} .*ZooKeeper.* is in use"):
            server.start()
    assert not (tmp_path / "home").exists()


def test_the_home_restarts_as_solrcloud_with_its_collections(
        index: SolrIndex, cloud: EmbeddedSolr, state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Last: restarts the module's node. No `cloud` flag needed: the home remembers (zoo.cfg)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # start() records the "current" Solr
    index.add("elements", [_doc("survives-restart")])
    index.commit("elements")
    assert cloud.stop()
    again = EmbeddedSolr(cloud.home, cloud.port, "512m", cloud.distribution)
    status = again.start()
    assert status.running and again.zk_host == cloud.zk_host
    collections = _collections(cloud.url)
    assert set(CONFIGSETS.values()) <= set(collections)
    replicas = [r for c in collections.values() for s in c["shards"].values() for r in s["replicas"].values()]
    assert {r["state"] for r in replicas} == {"active"}
    assert index.count("elements", "identity:survives-restart") == 1


def test_marquez_dataset_listings_page_on_two_shards(index: SolrIndex) -> None:
    """The Marquez listings join the relations collection (its 2 shards streamed across): a
    namespace's reported datasets (tables only OpenLineage knows, paths a run wrote) page in
    name order with their total; search counts them."""
    suffix = uuid.uuid4().hex[:8]
    tables, paths = f"postgres://cloud-{suffix}:5432", f"hdfs://cloud-{suffix}:8020"
    event: dict[str, Any] = {
        "eventType": "COMPLETE", "eventTime": "2026-11-23T06:00:00Z", "producer": "https://example.com/cloud",
        "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": f"cloud-{suffix}", "name": "load"},
        "inputs": [{"namespace": tables, "name": f"public.t{n}"} for n in range(5)],
        "outputs": [{"namespace": paths, "name": f"/out/p{n}"} for n in range(3)]}
    mapped = map_event(event, "RunEvent", MappingSettings())
    writer = IndexWriter(index)
    writer.write_all([*mapped.records, *([mapped.execution] if mapped.execution else [])])
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core, soft=True)
    pages = [marquez.datasets(index, ExportSettings(), "primary", tables, limit=2, offset=offset)
             for offset in (0, 2, 4)]
    assert [p.total for p in pages] == [5, 5, 5]
    assert [[d["name"] for d in p.items] for p in pages] == [["public.t0", "public.t1"], ["public.t2", "public.t3"],
                                                             ["public.t4"]]
    # paths are reported through the join: the DATA_FLOWs from the run
    written = marquez.datasets(index, ExportSettings(), "primary", paths, limit=2, offset=1)
    assert (written.total, [d["name"] for d in written.items]) == (3, ["/out/p1", "/out/p2"])
    found = marquez.search(index, ExportSettings(), "PUBLIC.T", "DATASET", "NAME", 1)
    assert found["totalCount"] >= 5 and len(found["results"]) == 1

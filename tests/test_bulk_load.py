"""Bulk loading (SolrIndex.bulk_load): soft commits off while a load writes, every document there
and searchable after one commit, the cores' own soft-commit interval back afterwards, also when
the load fails or is killed (`navd solr init` restores it). Against the session's real Solr 9."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType

#: Solr's autoSoftCommit interval in the configsets (solr_conf/*/conf/solrconfig.xml), in ms.
CONFIGURED_SOFT_COMMIT_MS = 1000


def effective_soft_commit_ms(index: SolrIndex, core: str) -> int:
    """The soft-commit interval the core runs with now (its config with the overlay applied)."""
    name = index.core(core)
    answer: dict[str, Any] = index.request("GET", f"{name}/config/updateHandler")
    return int(answer["config"]["updateHandler"]["autoSoftCommit"]["maxTime"])


def graph(prefix: str, files: int) -> list[Element | Relation]:
    """`files` HDFS files under one directory, each with its parent-child relation."""
    root = EntityRef(SourceType.HDFS, f"hdfs://ns/{prefix}", ElementType.DIRECTORY)
    records: list[Element | Relation] = []
    for number in range(files):
        child = Element(SourceType.HDFS, ElementType.FILE, f"hdfs://ns/{prefix}/f{number}", name=f"{prefix}f{number}",
                        parent=root)
        records += [child, Relation(RelationType.PARENT_CHILD, root, child.ref)]
    return records


def children(index: SolrIndex, prefix: str) -> tuple[int, int]:
    """Searchable element and relation documents of `graph(prefix, ...)`."""
    return (index.count("elements", f"parentQualifiedName:\"hdfs://ns/{prefix}\""),
            index.count("relations", f"endpoint1QualifiedName:\"hdfs://ns/{prefix}\""))


def test_bulk_load_writes_everything_without_soft_commits_and_restores_them(index: SolrIndex, unique: str) -> None:
    records = graph(unique, 2_500)
    with index.bulk_load() as bulk:
        assert bulk.soft_commits_off("elements") and bulk.soft_commits_off("relations")
        assert effective_soft_commit_ms(bulk, "elements") == -1
        assert effective_soft_commit_ms(bulk, "relations") == -1
        writer = IndexWriter(bulk, batch_size=300, threads=3)  # many batches on concurrent streams
        writer.write_all(records)
        assert writer.close()
        # Acknowledged but not searchable: no soft commit opened a searcher over them, even
        # after several of the configured intervals.
        time.sleep(3 * CONFIGURED_SOFT_COMMIT_MS / 1000)
        assert children(index, unique) == (0, 0)
    assert children(index, unique) == (2_500, 2_500)
    found = index.search("elements", f"originalName:{unique}f2499")
    assert [doc["originalName"] for doc in found["response"]["docs"]] == [f"{unique}f2499"]
    for core in ("elements", "relations"):
        assert not index.soft_commits_off(core)
        assert effective_soft_commit_ms(index, core) == CONFIGURED_SOFT_COMMIT_MS


def test_a_failed_bulk_load_still_commits_what_it_wrote_and_restores_soft_commits(index: SolrIndex,
                                                                                 unique: str) -> None:
    with pytest.raises(RuntimeError, match="the extraction broke"), index.bulk_load() as bulk:
        writer = IndexWriter(bulk, batch_size=100)
        writer.write_all(graph(unique, 250))
        assert writer.close()
        raise RuntimeError("the extraction broke")
    assert children(index, unique) == (250, 250)
    assert effective_soft_commit_ms(index, "elements") == CONFIGURED_SOFT_COMMIT_MS
    assert effective_soft_commit_ms(index, "relations") == CONFIGURED_SOFT_COMMIT_MS


def test_solr_init_switches_soft_commits_back_on_after_a_killed_bulk_load(index: SolrIndex, navd) -> None:  # type: ignore[no-untyped-def]
    killed = index.bulk_load()
    killed.__enter__()  # a load that never reaches its end: the overlay stays behind
    try:
        assert effective_soft_commit_ms(index, "elements") == -1
        result = navd("solr", "init")
        assert result.returncode == 0, result.stderr
        assert "nav_elements: soft commits on again" in result.stdout
        assert "nav_relations: soft commits on again" in result.stdout
        assert effective_soft_commit_ms(index, "elements") == CONFIGURED_SOFT_COMMIT_MS
        assert effective_soft_commit_ms(index, "relations") == CONFIGURED_SOFT_COMMIT_MS
        again = navd("solr", "init")
        assert again.returncode == 0 and "soft commits on again" not in again.stdout
    finally:
        index.restore_soft_commits()


GOLDEN_TSV = Path(__file__).resolve().parent / "fixtures" / "hdfs" / "oiv-delimited-3.5.0.tsv"


def test_a_first_fsimage_load_with_bulk_is_searchable_when_it_ends(navd, navd_env, index: SolrIndex,  # type: ignore[no-untyped-def]
                                                                    tmp_path: Path, unique: str) -> None:
    config = tmp_path / "bulk.toml"
    config.write_text(Path(navd_env["NAVD_CONFIG"]).read_text()
                      + f'[cluster]\nname = "{unique}"\ndefault_fs = "hdfs://{unique}:8020"\n[hdfs]\nroots = ["/exp"]\n'
                      + f'[daemon]\nstate_dir = "{tmp_path / "state"}"\n')
    result = navd("extract", "hdfs", "--from-fsimage", str(GOLDEN_TSV), "--master", "local[1]", "--bulk",
                  env={**navd_env, "NAVD_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr
    assert "bulk load: soft commits off until the load ends" in result.stderr
    rows = len(GOLDEN_TSV.read_text(encoding="utf-8").removesuffix("\n").split("\n")) - 2  # no header, no "/"
    assert result.stdout.splitlines()[0] == f"hdfs fsimage: {rows} elements, {rows} relations, 0 bad lines skipped"
    # No commit here: the bulk load's own commit made the run's documents searchable.
    assert index.count("elements", f'qualifiedName:hdfs\\://{unique}\\:8020/*') == rows
    assert effective_soft_commit_ms(index, "elements") == CONFIGURED_SOFT_COMMIT_MS
    assert effective_soft_commit_ms(index, "relations") == CONFIGURED_SOFT_COMMIT_MS


@pytest.mark.parametrize(("args", "message"), [
    (("extract", "all", "--bulk"), "--bulk: name the extractor of the big first load, not all"),
    (("extract", "hive-lineage", "--once", "--bulk"), "--bulk: navd extract hive-lineage tails its source"),
])
def test_bulk_is_refused_where_there_is_no_one_run(navd, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    result = navd(*args)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr

"""The HDFS extractor against the real dev HDFS (WebHDFS) and the real Solr: full and incremental
runs, deletions, odd names, big and unreadable directories, failures, and the CLI."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hdfs import Client

from navd.extractors.common.deletions import DeletionsConfig
from navd.extractors.hdfs.extractor import HdfsExtractionError, HdfsExtractor
from navd.extractors.hdfs.filters import PathFilter
from navd.extractors.hdfs.settings import HdfsConfig
from navd.index.client import IndexWriter, SolrIndex
from navd.model import SourceType, identity, path_qualified_name
from navd.process import free_port
from navd.solr.server import EmbeddedSolr
from navd.webhdfs import make_client
from navd_devstack.hadoop import DFSADMIN_CLASS, FSSHELL_CLASS, DevHdfs
from navd.extractors import Checkpoint, run_pass
from conftest import write_navd_config

# No ':' here: the NameNode refuses it in a name ("Invalid path name"), so no HDFS path has one.
FILES = 12
ODD_NAMES = ["with space.csv", "ünïcödé.txt", "100%.txt", "50%25 encoded?.txt", "hash#tag.txt",
             "tab\tand'quote\".txt", "semi;colon&amp=.txt"]


def make_extractor(hdfs: DevHdfs, client: Client, index: SolrIndex, root: str, state: Path,
                   **kwargs: object) -> HdfsExtractor:
    return HdfsExtractor(client, index, default_fs=hdfs.default_fs, roots=[root], state_dir=state,
                         **kwargs)  # type: ignore[arg-type]


def run(extractor: HdfsExtractor, index: SolrIndex, *, full: bool = False):  # -> HdfsReport
    writer = IndexWriter(index)
    try:
        report = run_pass(extractor, writer, full=full)
    finally:
        assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)
    return report


def docs_under(index: SolrIndex, hdfs: DevHdfs, root: str) -> dict[str, dict]:
    prefix = path_qualified_name(root, hdfs.default_fs)
    return {d["fileSystemPath"]: d for d in index.scan("elements", f'{{!prefix f=qualifiedName v="{prefix}"}}')}


def doc(index: SolrIndex, hdfs: DevHdfs, path: str) -> dict:
    found = index.get("elements", [identity(SourceType.HDFS, path_qualified_name(path, hdfs.default_fs))])
    assert found, path
    return found[0]


@pytest.fixture
def tree(hdfs_client: Client, unique: str) -> Iterator[str]:
    root = f"/{unique}"
    hdfs_client.makedirs(f"{root}/raw/2026/11")
    hdfs_client.makedirs(f"{root}/empty")
    hdfs_client.makedirs(f"{root}/tmp/hadoop-yarn/staging/job_1")
    hdfs_client.write(f"{root}/tmp/hadoop-yarn/staging/job_1/job.xml", data=b"<conf/>")
    for name in ODD_NAMES:
        hdfs_client.write(f"{root}/raw/2026/11/{name}", data=name.encode())
    hdfs_client.write(f"{root}/raw/2026/11/a.csv", data=b"id,amount\n1,10\n")
    hdfs_client.set_permission(f"{root}/raw/2026/11/a.csv", "640")
    yield root


def test_full_run_indexes_every_entry_with_its_attributes(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                           tree: str, tmp_path: Path) -> None:
    extractor = make_extractor(hdfs, hdfs_client, index, tree, tmp_path,
                               path_filter=PathFilter(exclude=(f"{tree}/tmp/hadoop-yarn/staging",)))
    report = run(extractor, index)
    docs = docs_under(index, hdfs, tree)
    expected = {tree, f"{tree}/raw", f"{tree}/raw/2026", f"{tree}/raw/2026/11", f"{tree}/empty", f"{tree}/tmp",
                f"{tree}/tmp/hadoop-yarn", f"{tree}/raw/2026/11/a.csv",
                *(f"{tree}/raw/2026/11/{name}" for name in ODD_NAMES)}
    assert set(docs) == expected  # the staging directory is excluded, and nothing below it
    assert report.entries == len(expected) and report.deletions == 0
    csv = docs[f"{tree}/raw/2026/11/a.csv"]
    assert (csv["type"], csv["size"], csv["owner"], csv["group"], csv["permissions"]) == \
        ("FILE", 15, hdfs.superuser, "supergroup", "rw-r-----")
    assert csv["replication"] == 1 and csv["blockSize"] > 0 and csv["lastModified"].endswith("Z")
    assert csv["parentPath"] == f"{tree}/raw/2026/11" and csv["deleted"] is False
    assert csv["qualifiedName"] == f"{hdfs.default_fs}{tree}/raw/2026/11/a.csv"
    odd = docs[f"{tree}/raw/2026/11/tab\tand'quote\".txt"]
    assert odd["originalName"] == "tab\tand'quote\".txt" and odd["size"] == len(odd["originalName"].encode())
    directory = docs[f"{tree}/raw/2026/11"]
    assert directory["type"] == "DIRECTORY" and "size" not in directory and directory["permissions"] == "rwxr-xr-x"
    # PARENT_CHILD from each directory to each child: one per non-root entry.
    children = list(index.scan("relations", f'endpoint1Id:{doc(index, hdfs, f"{tree}/raw/2026/11")["identity"]}',
                               filters=["type:PARENT_CHILD"]))
    assert len(children) == len(ODD_NAMES) + 1


def test_incremental_runs_follow_changes_with_few_requests(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                           tree: str, tmp_path: Path) -> None:
    # A wide tree: 100 leaf directories of 12 files, under 4 parents.
    for parent in range(4):
        paths = [f"{hdfs.default_fs}{tree}/wide/p{parent}/d{leaf}/f{i}" for leaf in range(25) for i in range(FILES)]
        hdfs.run_tool(FSSHELL_CLASS, "-mkdir", "-p",
                      *{p.rsplit("/", 1)[0] for p in paths})
        hdfs.run_tool(FSSHELL_CLASS, "-touchz", *paths)
    client = make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user=hdfs.superuser))
    extractor = make_extractor(hdfs, client, index, tree, tmp_path)
    first = run(extractor, index)
    assert first.directories_listed > 100
    unchanged = run(make_extractor(hdfs, client, index, tree, tmp_path), index)
    assert unchanged.entries == 0 and unchanged.deletions == 0
    # Only directories with subdirectories cost a request (a listing page, or a status each).
    assert unchanged.requests * 8 <= first.requests, (unchanged.requests, first.requests)

    hdfs_client.write(f"{tree}/wide/p1/d3/new.csv", data=b"x")                # create
    hdfs_client.delete(f"{tree}/wide/p2/d4/f7")                                # delete a file
    hdfs_client.rename(f"{tree}/wide/p3/d5", f"{tree}/wide/p3/d5-renamed")    # rename a directory
    hdfs_client.delete(f"{tree}/raw", recursive=True)                          # delete a subtree
    changed = run(make_extractor(hdfs, client, index, tree, tmp_path), index)
    assert doc(index, hdfs, f"{tree}/wide/p1/d3/new.csv")["deleted"] is False
    gone = doc(index, hdfs, f"{tree}/wide/p2/d4/f7")
    assert gone["deleted"] is True and gone["deleteTime"]
    assert doc(index, hdfs, f"{tree}/wide/p3/d5")["deleted"] is True
    assert doc(index, hdfs, f"{tree}/wide/p3/d5/f0")["deleted"] is True       # below a renamed directory
    assert doc(index, hdfs, f"{tree}/wide/p3/d5-renamed/f0")["deleted"] is False
    assert doc(index, hdfs, f"{tree}/raw/2026/11/a.csv")["deleted"] is True    # below a deleted subtree
    assert changed.deletions == 1 + (1 + FILES) + (3 + 1 + len(ODD_NAMES))
    assert changed.requests < first.requests / 2

    hdfs_client.write(f"{tree}/wide/p2/d4/f7", data=b"back")                  # re-created: un-deleted
    run(make_extractor(hdfs, client, index, tree, tmp_path), index)
    back = doc(index, hdfs, f"{tree}/wide/p2/d4/f7")
    assert back["deleted"] is False and back["size"] == 4 and "deleteTime" not in back


def test_snapshottable_root_runs_from_snapshot_diffs(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                     tree: str, tmp_path: Path) -> None:
    hdfs.run_tool(DFSADMIN_CLASS, "-allowSnapshot", tree)
    hdfs.run_tool(FSSHELL_CLASS, "-mkdir", "-p", *(f"{hdfs.default_fs}{tree}/wide/d{leaf}" for leaf in range(20)))
    hdfs.run_tool(FSSHELL_CLASS, "-touchz", *(f"{hdfs.default_fs}{tree}/wide/d{leaf}/f{i}" for leaf in range(20)
                                               for i in range(FILES)))
    first = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    unchanged = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    # The root's status, this run's snapshot, the diff. (Only the root is indexed again: taking a
    # snapshot moves its modification time.)
    assert unchanged.requests <= 4 < first.requests and unchanged.entries <= 1

    hdfs_client.write(f"{tree}/wide/d3/new.csv", data=b"x")                  # create
    hdfs_client.write(f"{tree}/raw/2026/11/a.csv", data=b"2,20\n", append=True)  # append: no directory time moves
    hdfs_client.delete(f"{tree}/wide/d4/f7")                                  # delete a file
    hdfs_client.rename(f"{tree}/wide/d5", f"{tree}/wide/d5-renamed")         # rename a directory
    hdfs_client.makedirs(f"{tree}/fresh/inner")                                # a new subtree
    hdfs_client.write(f"{tree}/fresh/inner/x.txt", data=b"x")
    changed = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    assert doc(index, hdfs, f"{tree}/wide/d3/new.csv")["deleted"] is False
    assert doc(index, hdfs, f"{tree}/raw/2026/11/a.csv")["size"] == 15 + 5   # seen only through the diff
    assert doc(index, hdfs, f"{tree}/wide/d4/f7")["deleted"] is True
    assert doc(index, hdfs, f"{tree}/wide/d5/f0")["deleted"] is True
    assert doc(index, hdfs, f"{tree}/wide/d5-renamed/f0")["deleted"] is False
    assert doc(index, hdfs, f"{tree}/fresh/inner/x.txt")["deleted"] is False
    assert changed.deletions == 1 + (1 + FILES)
    assert changed.requests < first.requests  # about two per change: its status, or a listing
    snapshots = hdfs_client.list(f"{tree}/.snapshot")
    assert len(snapshots) == 1 and snapshots[0].startswith("navd-")  # navd keeps one


def test_snapshot_diff_deletions_go_through_the_fail_safe(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                           tree: str, tmp_path: Path) -> None:
    hdfs.run_tool(DFSADMIN_CLASS, "-allowSnapshot", tree)
    run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    indexed = len(docs_under(index, hdfs, tree)) - 1
    for child in ("raw", "empty", "tmp"):  # the diff says DELETE for each: every entity below the root
        hdfs_client.delete(f"{tree}/{child}", recursive=True)
    report = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    assert report.deletions == 0 and report.deletions_refused == indexed
    assert f"would flag {indexed} of {indexed} indexed entities (100%)" in report.refused
    assert not any(d["deleted"] for d in docs_under(index, hdfs, tree).values())


def test_ten_thousand_entries_in_one_directory(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                               unique: str, tmp_path: Path) -> None:
    big = f"/{unique}/big"
    hdfs.run_tool(FSSHELL_CLASS, "-mkdir", "-p", f"{hdfs.default_fs}{big}")
    hdfs.run_tool(FSSHELL_CLASS, "-touchz", *(f"{hdfs.default_fs}{big}/part-{i:05d}" for i in range(10_000)))
    report = run(make_extractor(hdfs, hdfs_client, index, f"/{unique}", tmp_path), index)
    assert report.entries == 10_002
    assert index.count("elements", f'parentPath:"{big}"') == 10_000


def test_unreadable_subtree_is_skipped_not_deleted(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                   tree: str, tmp_path: Path, log_stream: io.StringIO) -> None:
    hdfs_client.makedirs(f"{tree}/secret/inner")
    hdfs_client.write(f"{tree}/secret/inner/payroll.csv", data=b"1")
    run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)  # as the superuser: all indexed
    hdfs_client.set_permission(f"{tree}/secret", "700")
    hdfs_client.write(f"{tree}/secret/added.csv", data=b"2")  # changed, so listed again: refused
    hdfs_client.write(f"{tree}/new.txt", data=b"x")
    alice = make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user="alice"))
    report = run(make_extractor(hdfs, alice, index, tree, tmp_path), index)
    assert report.skipped == 1 and report.deletions == 0
    assert doc(index, hdfs, f"{tree}/secret/inner/payroll.csv")["deleted"] is False
    skipped = [json.loads(line) for line in log_stream.getvalue().splitlines()
               if json.loads(line).get("event") == "HDFS directory skipped"]
    assert [s["path"] for s in skipped] == [f"{tree}/secret"] and "Permission denied" in skipped[0]["reason"]


def test_a_root_navd_may_not_snapshot_is_crawled_and_warned_only_if_snapshottable(
        hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex, tree: str, tmp_path: Path,
        log_stream: io.StringIO) -> None:
    """navd as neither owner nor superuser: the NameNode refuses the snapshot with "Permission
    denied" whether the root is snapshottable or not; only a snapshottable one is warned about."""
    alice = make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user="alice"))

    def warnings() -> list[dict[str, object]]:
        return [json.loads(line) for line in log_stream.getvalue().splitlines()
                if "may not snapshot" in json.loads(line).get("event", "")]

    plain = run(make_extractor(hdfs, alice, index, tree, tmp_path / "plain"), index)
    assert plain.entries > 1 and warnings() == []
    hdfs.run_tool(DFSADMIN_CLASS, "-allowSnapshot", tree)
    snapshottable = run(make_extractor(hdfs, alice, index, tree, tmp_path / "snapshottable"), index)
    assert snapshottable.entries == plain.entries
    assert [w["root"] for w in warnings()] == [tree]
    assert hdfs_client.list(f"{tree}/.snapshot") == []  # crawled: no snapshot was taken


def test_a_namenode_in_safe_mode_fails_the_run_naming_it(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                         tree: str, tmp_path: Path) -> None:
    """A refusal of the NameNode's own (safe mode refuses the run's snapshot) names the NameNode,
    as an unreachable one does, in the one line the run fails with."""
    hdfs.run_tool(DFSADMIN_CLASS, "-allowSnapshot", tree)
    hdfs.run_tool(DFSADMIN_CLASS, "-safemode", "enter")
    try:
        with pytest.raises(HdfsExtractionError) as failed:
            run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    finally:
        hdfs.run_tool(DFSADMIN_CLASS, "-safemode", "leave")
    line = str(failed.value)
    assert "\n" not in line and f"NameNode {hdfs.webhdfs_url}" in line and "safe mode" in line, line
    assert hdfs_client.list(f"{tree}/.snapshot") == []  # and it left no snapshot behind


def test_unreachable_namenode_fails_the_run_and_flags_nothing(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                             tree: str, tmp_path: Path,
                                                             log_stream: io.StringIO) -> None:
    run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    hdfs_client.delete(f"{tree}/empty")
    dead = make_client(HdfsConfig(urls=(f"http://127.0.0.1:{free_port()}",), user="navd"), timeout=(2.0, 2.0))
    with pytest.raises(HdfsExtractionError, match="HDFS extraction failed: .*nothing flagged deleted"):
        run(make_extractor(hdfs, dead, index, tree, tmp_path), index)
    # The one error line is the caller's: navd run logs it under navd.extractor.hdfs, navd extract prints it.
    assert not [line for line in log_stream.getvalue().splitlines() if json.loads(line)["level"] == "error"]
    assert doc(index, hdfs, f"{tree}/empty")["deleted"] is False
    report = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)  # NameNode back: retried
    assert report.deletions == 1 and doc(index, hdfs, f"{tree}/empty")["deleted"] is True


def test_a_root_listed_empty_flags_nothing_and_says_why(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                        tree: str, tmp_path: Path, log_stream: io.StringIO) -> None:
    run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    indexed = len(docs_under(index, hdfs, tree)) - 1  # everything below the root
    for child in ("raw", "empty", "tmp"):
        hdfs_client.delete(f"{tree}/{child}", recursive=True)
    for _ in range(2):  # not recorded as a complete listing: the next run does not trust it either
        report = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
        assert report.deletions == 0 and report.deletions_refused == indexed
        assert report.refused == (f"deletions under {path_qualified_name(tree, hdfs.default_fs)} refused: its listing "
                                  f"came back empty while {indexed} entities are indexed under it; nothing flagged")
    assert not any(d["deleted"] for d in docs_under(index, hdfs, tree).values())
    warnings = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    assert [w["level"] for w in warnings if w["event"] == report.refused] == ["warning", "warning"]


def test_deletions_above_the_share_threshold_are_refused_until_allowed(hdfs: DevHdfs, hdfs_client: Client,
                                                                       index: SolrIndex, tree: str,
                                                                       tmp_path: Path) -> None:
    run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    indexed = len(docs_under(index, hdfs, tree)) - 1
    hdfs_client.delete(f"{tree}/raw", recursive=True)  # 3 directories and 8 files
    hdfs_client.delete(f"{tree}/tmp", recursive=True)  # 4 directories and a file
    refused = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path), index)
    share = round(100 * 16 / indexed)
    assert refused.deletions == 0 and refused.deletions_refused == 16
    assert refused.refused == (f"deletions under {path_qualified_name(tree, hdfs.default_fs)} refused: would flag "
                               f"16 of {indexed} indexed entities ({share}%) deleted, above "
                               f"[deletions] max_share_percent = 75; nothing flagged")
    assert doc(index, hdfs, f"{tree}/raw/2026/11/a.csv")["deleted"] is False
    assert doc(index, hdfs, f"{tree}/tmp")["deleted"] is False
    # The operator looked and raised the threshold: the deletions proven then are applied now.
    allowed = run(make_extractor(hdfs, hdfs_client, index, tree, tmp_path,
                                 deletions=DeletionsConfig(max_share_percent=100.0)), index)
    assert allowed.deletions == 16 and allowed.deletions_refused == 0 and allowed.refused == ""
    assert doc(index, hdfs, f"{tree}/raw/2026/11/a.csv")["deleted"] is True
    assert doc(index, hdfs, f"{tree}/tmp")["deleted"] is True
    assert doc(index, hdfs, f"{tree}/empty")["deleted"] is False


def test_a_run_killed_midway_then_rerun_loses_and_duplicates_nothing(hdfs: DevHdfs, hdfs_client: Client,
                                                                     index: SolrIndex, unique: str,
                                                                     tmp_path: Path) -> None:
    root = f"/{unique}"
    hdfs.run_tool(FSSHELL_CLASS, "-mkdir", "-p", *(f"{hdfs.default_fs}{root}/d{i}" for i in range(30)))
    hdfs.run_tool(FSSHELL_CLASS, "-touchz", *(f"{hdfs.default_fs}{root}/d{i}/f{j}" for i in range(30)
                                               for j in range(5)))
    killed = make_extractor(hdfs, hdfs_client, index, root, tmp_path / "state", checkpoint_every=5, workers=1)
    writer = IndexWriter(index)
    records = killed.extract()
    for count, item in enumerate(records):
        if isinstance(item, Checkpoint):
            writer.flush()
            killed.commit()
        else:
            writer.write(item)
        if count == 80:
            break  # killed: what came after the last checkpoint is written but not committed
    records.close()
    assert writer.close()
    killed.state.close()
    rerun = make_extractor(hdfs, hdfs_client, index, root, tmp_path / "state")
    report = run(rerun, index)
    assert report.deletions == 0
    docs = docs_under(index, hdfs, root)
    assert len(docs) == 1 + 30 + 150 and not any(d["deleted"] for d in docs.values())
    relations = list(index.scan("relations", f'endpoint2Id:({" OR ".join(d["identity"] for d in docs.values())})'))
    assert len(relations) == 30 + 150  # every PARENT_CHILD once
    again = run(make_extractor(hdfs, hdfs_client, index, root, tmp_path / "state"), index)
    assert again.entries == 0 and again.directories_listed == 0


def test_cli_extract_then_entity(navd, hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,  # type: ignore[no-untyped-def]
                                 solr_server: EmbeddedSolr, unique: str, tmp_path: Path) -> None:
    """The HDFS extractor's round trip, scoped to a unique root: extract, show, delete, extract, show."""
    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, cluster=unique, default_fs=hdfs.default_fs, body=
                      f'[hdfs]\nenabled = true\nurls = ["{hdfs.webhdfs_url}"]\n'
                      f'user = "{hdfs.superuser}"\nroots = ["/{unique}"]\n')
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    hdfs_client.write(f"/{unique}/data/raw/2026/11/a.csv", data=b"id,amount\n1,10\n")
    extracted = navd("extract", "hdfs", env=env)
    assert extracted.returncode == 0, extracted.stderr
    assert extracted.stdout.startswith("hdfs: 5 directories listed")
    shown = navd("entity", f"{hdfs.default_fs}/{unique}/data/raw/2026/11/a.csv", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    entity = json.loads(shown.stdout)
    assert (entity["size"], entity["owner"], entity["deleted"]) == (15, hdfs.superuser, False)
    hdfs_client.delete(f"/{unique}/data/raw/2026/11/a.csv")
    again = navd("extract", "hdfs", env=env)
    assert again.returncode == 0 and "1 deleted" in again.stdout, again.stdout + again.stderr
    entity = json.loads(navd("entity", f"{hdfs.default_fs}/{unique}/data/raw/2026/11/a.csv", "--json", env=env).stdout)
    assert entity["deleted"] is True


def test_the_run_record_and_status_say_what_the_fail_safe_refused(navd, hdfs: DevHdfs,  # type: ignore[no-untyped-def]
                                                                  hdfs_client: Client, index: SolrIndex,
                                                                  solr_server: EmbeddedSolr, unique: str,
                                                                  tmp_path: Path) -> None:
    """Through `navd extract`: a mass deletion above [deletions] max_share_percent flags nothing,
    and the run record, the summary and `navd status` say why, naming the key."""
    def configured(share: float) -> dict[str, str]:
        config = tmp_path / f"navd-{share:g}.toml"
        write_navd_config(config, solr_server, cluster=unique, default_fs=hdfs.default_fs,
                          state=tmp_path / "state", body=
                          f'[deletions]\nmax_share_percent = {share}\n'
                          f'[hdfs]\nenabled = true\nurls = ["{hdfs.webhdfs_url}"]\n'
                          f'user = "{hdfs.superuser}"\nroots = ["/{unique}"]\n')
        return {**os.environ, "NAVD_CONFIG": str(config)}

    for number in range(4):
        hdfs_client.write(f"/{unique}/d/part-{number}.csv", data=b"x")
    hdfs_client.write(f"/{unique}/keep.csv", data=b"x")
    assert navd("extract", "hdfs", env=configured(50)).returncode == 0
    hdfs_client.delete(f"/{unique}/d", recursive=True)  # 5 of the 6 entities below the root

    held = navd("extract", "hdfs", env=configured(50))
    assert held.returncode == 0, held.stderr
    root = path_qualified_name(f"/{unique}", hdfs.default_fs)
    reason = (f"deletions under {root} refused: would flag 5 of 6 indexed entities (83%) deleted, above "
              "[deletions] max_share_percent = 50; nothing flagged")
    summary = held.stdout.splitlines()[0]
    assert " 0 deleted, " in summary and summary.endswith(f"; {reason}")
    index.commit("runs")
    [record] = index.search("runs", 'kind:run AND component:"extractor.hdfs"', rows=1,
                            sort="started desc")["response"]["docs"]
    assert (record["state"], record["refused"], record["count_deletions_refused"]) == ("SUCCEEDED", reason, 5)
    assert doc(index, hdfs, f"/{unique}/d/part-0.csv")["deleted"] is False
    status = navd("status", env=configured(50))
    [line] = [line for line in status.stdout.splitlines() if line.startswith("extractor.hdfs:")]
    assert line.endswith(f"; refused: {reason}")

    allowed = navd("extract", "hdfs", env=configured(100))
    assert allowed.returncode == 0 and "5 deleted" in allowed.stdout and "refused" not in allowed.stdout
    assert doc(index, hdfs, f"/{unique}/d/part-0.csv")["deleted"] is True

    # The root's listing comes back empty (a wrong mount, a permissions change): nothing is
    # flagged whatever the threshold, and the run record says why.
    hdfs_client.delete(f"/{unique}/keep.csv")
    empty = navd("extract", "hdfs", env=configured(100))
    assert empty.returncode == 0, empty.stderr
    reason = f"deletions under {root} refused: its listing came back empty while 1 entities are indexed under it; "
    index.commit("runs")
    [record] = index.search("runs", 'kind:run AND component:"extractor.hdfs"', rows=1,
                            sort="started desc")["response"]["docs"]
    assert record["refused"] == reason + "nothing flagged"
    assert empty.stdout.splitlines()[0].endswith(f"; {reason}nothing flagged")
    assert doc(index, hdfs, f"/{unique}/keep.csv")["deleted"] is False

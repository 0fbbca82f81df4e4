"""The fsimage bulk path of the HDFS extractor: `hdfs oiv -p Delimited` lines -> entries (on a dump
captured from Hadoop 3.5.0), and a real dump of the dev HDFS indexed with PySpark into the real
Solr, document for document the same as the WebHDFS walk of the same tree (to the precision the
format keeps: times to the minute, no inode id).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hdfs import Client

from navd.config import NavdConfig, SolrConfig
from navd.extractors.hdfs import fsimage
from navd.extractors.hdfs.bulk import BulkLoadError, load_fsimage, under_root
from navd.extractors.hdfs.records import BadEntry, HdfsEntry, entry_from_webhdfs, records_for
from navd.index.client import SolrIndex
from navd.index.documents import element_document, relation_document
from navd.model import Element, Record
from navd.process import free_port
from navd.webhdfs import list_status_batch
from navd_devstack.hadoop import DFSADMIN_CLASS, FSSHELL_CLASS, OIV_CLASS, DevHdfs

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hdfs"
GOLDEN_TSV = FIXTURES / "oiv-delimited-3.5.0.tsv"     # `oiv -p Delimited` of the tree below
GOLDEN_CSV = FIXTURES / "oiv-delimited-3.5.0-comma.csv"  # the same image with `-delimiter ,`
MINUTE_MS = 60_000
_DATE_FIELDS = ("lastModified", "lastAccessed")


def dump_lines(path: Path) -> list[str]:
    # Split on LF only, as the Spark job does: a name may hold a raw CR.
    return path.read_text(encoding="utf-8").removesuffix("\n").split("\n")


def golden(path: str) -> HdfsEntry:
    [entry] = [e for e in map(fsimage.parse_line, dump_lines(GOLDEN_TSV)) if e is not None and e.path == path]
    return entry


# -- parsing: captured lines ------------------------------------------------------------------------

def test_header_is_skipped_and_every_captured_row_parses() -> None:
    lines = dump_lines(GOLDEN_TSV)
    assert lines[0].split("\t") == list(fsimage.COLUMNS)
    assert fsimage.parse_line(lines[0]) is None
    entries = [fsimage.parse_line(line) for line in lines[1:]]
    assert all(isinstance(e, HdfsEntry) for e in entries)
    assert [e.path for e in entries if e][:2] == ["/", "/exp"]


def test_a_file_row() -> None:
    # "/exp/a b/file one.txt  1  2026-11-22 06:37  2026-11-22 06:37  134217728  1  11  0  0  -rw-r--r-- ..."
    minute = int(datetime(2026, 11, 22, 6, 37, tzinfo=UTC).timestamp()) * 1000
    assert golden("/exp/a b/file one.txt") == HdfsEntry(
        path="/exp/a b/file one.txt", is_dir=False, owner="root", group="supergroup", permissions="rw-r--r--",
        size=11, replication=1, block_size=134217728, modified_ms=minute, accessed_ms=minute)


def test_a_directory_row_has_no_access_time_and_its_own_owner() -> None:
    entry = golden("/exp/empty")
    assert (entry.is_dir, entry.owner, entry.group, entry.permissions) == (True, "alice", "analysts", "rwxr-x---")
    assert (entry.accessed_ms, entry.size, entry.replication, entry.block_size) == (0, 0, 0, 0)
    assert golden("/exp/quota").is_dir  # a namespace quota (NSQUOTA 100) changes nothing
    assert golden("/").path == "/"


def test_sticky_bit_and_acl_marker() -> None:
    assert golden("/exp/sticky").permissions == "rwxrwxrwt"
    assert golden("/exp/acl").permissions == "rw-r--r--"  # "-rw-r--r--+": the ACL marker is dropped


@pytest.mark.parametrize("path", ["/exp/a b/ü%#/nested/deep.csv", "/exp/tab\tname", "/exp/nl\nname",
                                  "/exp/crlf\r\nname", "/exp/comma,name", '/exp/quote"d', "/exp/lit%x0Aname"])
def test_odd_names_come_back_exactly(path: str) -> None:
    # Raw tab, "%x0A" for LF, "%x0D%x0A" for CRLF, CSV quoting for , and ", an unquoted literal %x0A.
    assert golden(path).path == path


def test_another_delimiter_gives_the_same_entries() -> None:
    tsv = {e.path: e for e in map(fsimage.parse_line, dump_lines(GOLDEN_TSV)) if e}
    csv = [fsimage.parse_line(line, delimiter=",") for line in dump_lines(GOLDEN_CSV)]
    assert csv[0] is None
    assert len(csv) > 10
    for entry in csv[1:]:
        assert entry == tsv[entry.path]


def test_times_are_read_in_the_zone_oiv_ran_in() -> None:
    # The same "/" row as oiv printed it with TZ=Asia/Kolkata (UTC+05:30).
    line = "/\t0\t2026-11-22 12:07\t1970-01-01 05:30\t0\t0\t0\t9223372036854775807\t-1\tdrwxr-xr-x\troot\tsupergroup"
    entry = fsimage.parse_line(line, tz=timezone(timedelta(hours=5, minutes=30)))
    assert entry is not None
    assert entry.modified_ms == int(datetime(2026, 11, 22, 6, 37, tzinfo=UTC).timestamp()) * 1000
    assert entry.accessed_ms == 0


def test_a_symlink_row() -> None:
    # Symlinks are off in the dev HDFS (and by default); this is the row PBImageDelimitedTextWriter
    # writes for one: 0 in every numeric column, "-" type letter.
    line = "/exp/link\t0\t2026-11-22 06:37\t2026-11-22 06:37\t0\t0\t0\t0\t0\t-rwxrwxrwx\troot\tsupergroup"
    entry = fsimage.parse_line(line)
    assert entry is not None and entry.symlink and not entry.is_dir
    element = records_for(entry, "hdfs://nn:8020")[0]
    assert isinstance(element, Element) and element.properties == {"symlink": "true"}


@pytest.mark.parametrize(("line", "problem"), [
    ("", "empty line"),
    ("/exp/x\t1\t2026-11-22 06:37", "3 columns"),
    ("relative\t1\t2026-11-22 06:37\t2026-11-22 06:37\t1\t1\t1\t0\t0\t-rw-r--r--\troot\tsupergroup", "not absolute"),
    ("/exp/x\tone\t2026-11-22 06:37\t2026-11-22 06:37\t1\t1\t1\t0\t0\t-rw-r--r--\troot\tsupergroup", "one"),
    ("/exp/x\t1\t22.11.2026\t2026-11-22 06:37\t1\t1\t1\t0\t0\t-rw-r--r--\troot\tsupergroup", "22.11.2026"),
    ("/exp/x\t1\t2026-11-22 06:37\t2026-11-22 06:37\t1\t1\t1\t0\t0\t644\troot\tsupergroup", "permission '644'"),
])
def test_bad_lines_name_the_line(line: str, problem: str) -> None:
    with pytest.raises(BadEntry) as caught:
        fsimage.parse_line(line)
    assert problem in str(caught.value)
    if line:
        assert repr(line)[:40] in str(caught.value)


def test_under_root() -> None:
    assert under_root("/a/b", "/a") and under_root("/a", "/a") and under_root("/a", "/a/")
    assert not under_root("/ab", "/a") and not under_root("/", "/a")
    assert under_root("/", "/") and under_root("/x", "/")


# -- the bulk path against the real HDFS and Solr --------------------------------------------------

# Names HDFS accepts ("a:b" it refuses: ':' is not allowed in a path component).
ODD_FILES = {"a b/file one.txt": b"hello world", "a b/ü%#/nested/deep.csv": b"x,y\n1,2\n" * 300,
             "comma,name": b"c", 'quote"d': b"q", "tab\tname": b"t", "nl\nname": b"n", "crlf\r\nname": b"r",
             "lit%x0Aname": b"l", "acl file": b"a", "empty file": b""}


def build_tree(hdfs: DevHdfs, client: Client, root: str) -> None:
    client.makedirs(f"{root}/a b/ü%#/nested")
    client.makedirs(f"{root}/empty")
    client.makedirs(f"{root}/sticky", permission="1777")
    client.set_permission(f"{root}/sticky", "1777")  # makedirs applies the umask
    client.makedirs(f"{root}/owned")
    client.set_owner(f"{root}/owned", owner="alice", group="analysts")
    for name, data in ODD_FILES.items():
        client.write(f"{root}/{name}", data=data, overwrite=True)
    hdfs.run_tool(FSSHELL_CLASS, "-setfacl", "-m", "user:bob:r--", f"{root}/acl file")
    hdfs.run_tool(FSSHELL_CLASS, "-setrep", "2", f"{root}/a b/file one.txt")


def delimited_dump(hdfs: DevHdfs, out_dir: Path) -> Path:
    """The NameNode's current namespace as `oiv -p Delimited` text (see the module docstring of
    extractors/hdfs/fsimage.py for the format)."""
    hdfs.run_tool(DFSADMIN_CLASS, "-safemode", "enter")
    try:
        hdfs.run_tool(DFSADMIN_CLASS, "-saveNamespace")
    finally:
        hdfs.run_tool(DFSADMIN_CLASS, "-safemode", "leave")
    image_dir = out_dir / "image"
    image_dir.mkdir()
    hdfs.run_tool(DFSADMIN_CLASS, "-fetchImage", str(image_dir))
    [image] = image_dir.glob("fsimage_*")
    dump = out_dir / "fsimage.tsv"
    hdfs.run_tool(OIV_CLASS, "-p", "Delimited", "-i", str(image), "-o", str(dump))
    return dump


def webhdfs_entries(client: Client, root: str) -> list[HdfsEntry]:
    """The WebHDFS walk of `root` (itself included), as the WebHDFS path of the extractor reads it."""
    entries = [entry_from_webhdfs(root, client.status(root))]
    queue = deque([root])
    while queue:
        directory = queue.popleft()
        for status in list_status_batch(client, directory):
            entry = entry_from_webhdfs(directory, status)
            entries.append(entry)
            if entry.is_dir:
                queue.append(entry.path)
    return entries


def to_minute(ms: int) -> int:
    return ms // MINUTE_MS * MINUTE_MS


def as_fsimage_keeps_it(entry: HdfsEntry) -> HdfsEntry:
    """What a Delimited dump can say of a WebHDFS entry: times truncated to the minute, no inode id."""
    return dataclasses.replace(entry, file_id=None, modified_ms=to_minute(entry.modified_ms),
                               accessed_ms=to_minute(entry.accessed_ms))


def document(record: Record) -> dict[str, Any]:
    doc = element_document(record) if isinstance(record, Element) else relation_document(record)  # type: ignore[arg-type]
    return comparable(doc)


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    # Solr keeps neither prop_* (indexed only) nor _version_ as given, adds lastIndexed, and
    # prints dates without zero milliseconds: compare the stored fields, dates as instants.
    out = {k: v for k, v in doc.items() if not k.startswith("prop_") and k not in ("_version_", "lastIndexed")}
    for field in _DATE_FIELDS:
        if field in out:
            out[field] = datetime.fromisoformat(out[field].replace("Z", "+00:00"))
    return out


def stored(index: SolrIndex, core: str, run_id: str) -> dict[str, dict[str, Any]]:
    index.commit(core)
    return {d["identity"]: comparable(d) for d in index.scan(core, filters=[f'extractorRunId:"{run_id}"'])}


def test_fsimage_dump_gives_the_webhdfs_documents(hdfs: DevHdfs, hdfs_client: Client, index: SolrIndex,
                                                  solr_config: SolrConfig, unique: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = f"/{unique}"
    build_tree(hdfs, hdfs_client, root)
    # oiv prints its JVM's local time: make that UTC, the zone load_fsimage reads by default.
    monkeypatch.setenv("TZ", "UTC")
    dump = delimited_dump(hdfs, tmp_path)
    run_id = f"{unique}-fsimage"

    report = load_fsimage(NavdConfig(solr=solr_config), str(dump), master="local[2]", default_fs=hdfs.default_fs,
                          extractor_run_id=run_id, root=root, min_partitions=3)

    walked = webhdfs_entries(hdfs_client, root)
    assert len(walked) == 1 + 6 + len(ODD_FILES)  # the root, six directories and the files of build_tree
    expected = [r for e in walked for r in records_for(as_fsimage_keeps_it(e), hdfs.default_fs, run_id)]
    expected_elements = {d["identity"]: d for d in map(document, expected) if "qualifiedName" in d}
    expected_relations = {d["identity"]: d for d in map(document, expected) if "endpoint1Id" in d}
    assert (report.elements, report.relations, report.bad_lines) == (len(walked), len(walked), 0)

    got_elements, got_relations = stored(index, "elements", run_id), stored(index, "relations", run_id)
    assert sorted(got_elements) == sorted(expected_elements)
    for identity, doc in expected_elements.items():
        assert got_elements[identity] == doc, doc["fileSystemPath"]
    assert got_relations == expected_relations

    # The only difference from the WebHDFS path's own documents: the times below the minute.
    by_path = {d["fileSystemPath"]: d for d in got_elements.values()}
    for entry in walked:
        exact = document(records_for(entry, hdfs.default_fs, run_id)[0])
        bulk = by_path[entry.path]
        assert "sourceId" not in exact
        for field in _DATE_FIELDS:
            if field in exact:
                assert timedelta(0) <= exact.pop(field) - bulk.pop(field) < timedelta(minutes=1)
        assert bulk == exact
    odd = by_path[f"{root}/tab\tname"]
    assert (odd["originalName"], odd["size"]) == ("tab\tname", 1)
    assert by_path[f"{root}/a b/file one.txt"]["replication"] == 2
    assert by_path[f"{root}/sticky"]["permissions"] == "rwxrwxrwt"
    assert by_path[f"{root}/owned"]["owner"] == "alice"


def test_bad_lines_are_counted_and_skipped(index: SolrIndex, solr_config: SolrConfig, unique: str,
                                           tmp_path: Path) -> None:
    dump = tmp_path / "dump.tsv"
    lines = dump_lines(GOLDEN_TSV)
    dump.write_text("\n".join([*lines[:5], "garbage line", *lines[5:], "/exp/x\t1\tbad"]) + "\n", encoding="utf-8")
    run_id = f"{unique}-bad"
    report = load_fsimage(NavdConfig(solr=solr_config), str(dump), master="local[1]",
                          default_fs=f"hdfs://{unique}:8020", extractor_run_id=run_id, root="/exp")
    assert report.bad_lines == 2
    assert any("'garbage line'" in s for s in report.bad_line_samples)
    rows = len(lines) - 2  # neither the header nor "/"
    assert (report.elements, report.relations) == (rows, rows)
    index.commit("elements")
    assert index.count("elements", f'extractorRunId:"{run_id}"') == rows


@pytest.mark.services
def test_a_solr_that_refuses_fails_the_job_with_the_reason(tmp_path: Path, unique: str) -> None:
    dump = tmp_path / "dump.tsv"
    dump.write_text("\n".join(dump_lines(GOLDEN_TSV)) + "\n", encoding="utf-8")
    nowhere = SolrConfig(url=f"http://127.0.0.1:{free_port()}/solr", retries=0, timeout_seconds=2)
    with pytest.raises(BulkLoadError) as caught:
        load_fsimage(NavdConfig(solr=nowhere), str(dump), master="local[1]", default_fs=f"hdfs://{unique}:8020",
                     extractor_run_id=f"{unique}-down")
    assert str(dump) in str(caught.value) and "reached Solr" in str(caught.value)

"""The S3 extractor against a real S3-protocol server (moto's, navd_devstack.s3) and the real
Solr: complete and incremental listings, names that need encoding, deletions and the fail-safe,
credentials, failures, and the CLI."""

from __future__ import annotations

import io
import json
import os
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from navd.config import parse_config
from navd.errors import ConfigError
from navd.extractors.common.deletions import DeletionsConfig
from navd.extractors.s3.client import S3Credentials, make_client, resolve_credentials
from navd.extractors.s3.extractor import S3ExtractionError, S3Extractor, S3Report
from navd.extractors.s3.settings import S3Config
from navd.index.client import IndexWriter, SolrIndex
from navd.model import SourceType, identity
from navd.process import free_port
from navd.solr.server import EmbeddedSolr
from navd_devstack.s3 import DevS3
from navd.extractors import run_pass
from conftest import solr_section

#: keys whose names need encoding on the wire (space, unicode, '%', '+', '#', '?', '&', '=')
#: complete listings every run
EVERY_RUN = timedelta(0)
ODD_KEYS = ["odd/with space.csv", "odd/ünïcödé/日本.txt", "odd/100%.txt", "odd/a+b=c&d.txt",
            "odd/50%25 encoded?.txt", "odd/hash#tag.txt"]


def settings_for(s3: DevS3, *roots: str, **kwargs: Any) -> S3Config:
    return S3Config(roots=roots, endpoint_url=s3.endpoint_url, path_style=True, **kwargs)


def extractor(s3: DevS3, index: SolrIndex | None, state: Path, *roots: str, **kwargs: Any) -> S3Extractor:
    settings = settings_for(s3, *roots)
    client, counter = make_client(settings, S3Credentials(*s3.credentials()))
    return S3Extractor(client, index, roots=settings.parsed_roots, state_dir=state, counter=counter, **kwargs)


def run(s3: DevS3, index: SolrIndex, state: Path, *roots: str, full: bool = False, **kwargs: Any) -> S3Report:
    ex = extractor(s3, index, state, *roots, **kwargs)
    writer = IndexWriter(index)
    try:
        report = run_pass(ex, writer, full=full)
    finally:
        assert writer.close()
        ex.close()
    for core in ("elements", "relations"):
        index.commit(core)
    return report


def put(s3: DevS3, bucket: str, *keys: str, body: bytes = b"data") -> None:
    client = s3.client()
    for key in keys:
        client.put_object(Bucket=bucket, Key=key, Body=body)


def delete(s3: DevS3, bucket: str, *keys: str) -> None:
    client = s3.client()
    for key in keys:
        client.delete_object(Bucket=bucket, Key=key)


@pytest.fixture
def bucket(s3_server: DevS3, unique: str) -> str:
    name = f"navd-{unique[:20].lower()}"
    s3_server.client().create_bucket(Bucket=name)
    return name


def live(index: SolrIndex, bucket: str) -> dict[str, dict[str, Any]]:
    """The S3 elements of `bucket` that are not deleted, by qualifiedName."""
    return {d["qualifiedName"]: d for d in index.scan(
        "elements", f'{{!prefix f=qualifiedName v="s3a://{bucket}/"}}',
        filters=["deleted:false", f"sourceType:{SourceType.S3.value}"])}


def doc(index: SolrIndex, name: str) -> dict[str, Any]:
    [found] = index.get("elements", [identity(SourceType.S3, name)])
    return found


def parents(index: SolrIndex, bucket: str) -> set[tuple[str, str]]:
    return {(d["endpoint1QualifiedName"], d["endpoint2QualifiedName"]) for d in index.scan(
        "relations", f'{{!prefix f=endpoint2QualifiedName v="s3a://{bucket}/"}}', filters=["type:PARENT_CHILD"])}


# --- complete listings ---------------------------------------------------------------------------

def test_a_bucket_becomes_its_bucket_directories_and_files_named_as_jobs_name_them(
        s3_server: DevS3, index: SolrIndex, tmp_path: Path, bucket: str) -> None:
    put(s3_server, bucket, "sales/dt=2026-01-01/part-0.parquet", "sales/dt=2026-01-02/part-0.parquet", "readme.txt",
        *ODD_KEYS)
    put(s3_server, bucket, "empty/", body=b"")  # a directory marker, as S3A's mkdirs writes it
    s3_server.client().put_object(Bucket=bucket, Key="cold/archive.csv", Body=b"12345", StorageClass="GLACIER")
    report = run(s3_server, index, tmp_path, f"s3://{bucket}")  # s3:// is s3a:// is s3n://
    assert report.complete_listings == 1 and report.skipped == 0
    assert report.objects_listed == 3 + len(ODD_KEYS) + 2 and report.requests == 1
    found = live(index, bucket)
    b = f"s3a://{bucket}"
    assert found[f"{b}/"]["type"] == "S3BUCKET" and found[f"{b}/"]["originalName"] == bucket
    directories = {n for n, d in found.items() if d["type"] == "DIRECTORY"}
    assert directories == {f"{b}/sales", f"{b}/sales/dt=2026-01-01", f"{b}/sales/dt=2026-01-02", f"{b}/odd",
                           f"{b}/odd/ünïcödé", f"{b}/empty", f"{b}/cold"}
    files = {n for n, d in found.items() if d["type"] == "FILE"}
    assert files == {f"{b}/{k}" for k in ("sales/dt=2026-01-01/part-0.parquet", "sales/dt=2026-01-02/part-0.parquet",
                                          "readme.txt", "cold/archive.csv", *ODD_KEYS)}
    cold = found[f"{b}/cold/archive.csv"]
    assert cold["size"] == 5 and cold["lastModified"] and cold["fileSystemPath"] == f"/{bucket}/cold/archive.csv"
    properties = json.loads(cold["properties"])
    assert properties["storageClass"] == "GLACIER" and properties["eTag"] == "827ccb0eea8a706c4c34a16891f84e7b"
    assert found[f"{b}/odd/a+b=c&d.txt"]["originalName"] == "a+b=c&d.txt"
    assert (f"{b}/odd/ünïcödé", f"{b}/odd/ünïcödé/日本.txt") in parents(index, bucket)
    assert (f"{b}/", f"{b}/readme.txt") in parents(index, bucket)
    assert (f"{b}/", f"{b}/sales") in parents(index, bucket)


def test_an_unchanged_bucket_writes_nothing_and_full_rewrites_everything(
        s3_server: DevS3, index: SolrIndex, tmp_path: Path, bucket: str) -> None:
    put(s3_server, bucket, "t/a", "t/b", "u/c")
    first = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert first.entries == 1 + 2 + 3  # the bucket, t and u, three files
    # the next complete listing (complete_every=0: every run) finds every signature unchanged
    again = run(s3_server, index, tmp_path, f"s3a://{bucket}", complete_every=EVERY_RUN)
    assert again.complete_listings == 1 and again.objects_listed == 3 and again.entries == 0 and again.records == 0
    full = run(s3_server, index, tmp_path, f"s3a://{bucket}", full=True)
    assert full.entries == 6


def test_a_key_no_path_can_name_is_skipped_and_logged(s3_server: DevS3, index: SolrIndex, tmp_path: Path,
                                                       bucket: str, log_stream: io.StringIO) -> None:
    put(s3_server, bucket, "ok/a", "bad//double", "bad/./dot")
    report = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert report.skipped == 2 and set(live(index, bucket)) == {f"s3a://{bucket}/", f"s3a://{bucket}/ok",
                                                                 f"s3a://{bucket}/ok/a"}
    warnings = [json.loads(line) for line in log_stream.getvalue().splitlines() if '"S3 object skipped"' in line]
    assert len(warnings) == 2 and "'bad//double'" in " ".join(w["reason"] for w in warnings)


def test_a_root_below_the_bucket_lists_only_its_prefix_and_hangs_under_the_bucket(
        s3_server: DevS3, index: SolrIndex, tmp_path: Path, bucket: str) -> None:
    put(s3_server, bucket, "warehouse/sales.db/t/part-0", "warehouse2/other", "elsewhere/x")
    report = run(s3_server, index, tmp_path, f"s3a://{bucket}/warehouse/")
    assert report.objects_listed == 1  # not warehouse2/: a root's prefix is a directory
    b = f"s3a://{bucket}"
    assert set(live(index, bucket)) == {f"{b}/", f"{b}/warehouse", f"{b}/warehouse/sales.db",
                                        f"{b}/warehouse/sales.db/t", f"{b}/warehouse/sales.db/t/part-0"}
    assert (f"{b}/", f"{b}/warehouse") in parents(index, bucket)


# --- incremental runs ------------------------------------------------------------------------------

def lake(s3: DevS3, bucket: str, tables: int = 4, partitions: int = 5, files: int = 4) -> list[str]:
    keys = [f"t{t}/dt=2026-01-{p + 1:02d}/part-{f:05d}.parquet"
            for t in range(tables) for p in range(partitions) for f in range(files)]
    put(s3, bucket, *keys, body=b"")
    return keys


def test_an_incremental_run_lists_a_small_share_and_finds_what_sorts_after_the_marks(
        s3_server: DevS3, index: SolrIndex, tmp_path: Path, bucket: str) -> None:
    keys = lake(s3_server, bucket)  # 4 tables x 5 date partitions x 4 files = 80 objects
    first = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert first.objects_listed == len(keys)
    # a new date partition, a file in the newest partition of another table, a new table
    new = ["t0/dt=2026-01-06/part-00000.parquet", "t1/dt=2026-01-05/part-00009.parquet", "t9/dt=2026-01-01/x.csv"]
    put(s3_server, bucket, *new)
    report = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert report.complete_listings == 0
    assert report.entries == len(new) + 3  # the files, dt=2026-01-06, t9 and t9/dt=2026-01-01
    found = live(index, bucket)
    assert {f"s3a://{bucket}/{k}" for k in new} <= set(found)
    # One level of each known directory of directories: the bucket (5 tables) and t0..t3 (their
    # 5 partitions, t0's new sixth); then the last partition of each, from its mark (new ones
    # whole): the objects that sorted after a mark. A small share of the bucket, in a request
    # per directory of directories and one per newest partition.
    assert report.objects_listed == len(new), report
    assert report.prefixes_listed == 5 + 4 * 5 + 1
    assert report.requests == (1 + 4) + (1 + 4), report
    # What sorts before its directory's mark, in a partition that is not the newest, waits for the
    # next complete listing.
    put(s3_server, bucket, "t2/dt=2026-01-01/part-00099.parquet")
    quiet = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert quiet.entries == 0 and f"s3a://{bucket}/t2/dt=2026-01-01/part-00099.parquet" not in live(index, bucket)
    complete = run(s3_server, index, tmp_path, f"s3a://{bucket}", complete_every=EVERY_RUN)
    assert complete.complete_listings == 1 and complete.entries == 1
    assert f"s3a://{bucket}/t2/dt=2026-01-01/part-00099.parquet" in live(index, bucket)


def test_a_changed_object_is_written_again_with_its_new_size(
        s3_server: DevS3, index: SolrIndex, tmp_path: Path, bucket: str) -> None:
    put(s3_server, bucket, "logs/2026-01-01.json", "logs/2026-01-02.json", "manifest.json")
    run(s3_server, index, tmp_path, f"s3a://{bucket}")
    # beside directories: the level listing of an incremental run sees it
    put(s3_server, bucket, "manifest.json", body=b"grown")
    report = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert report.entries == 1 and doc(index, f"s3a://{bucket}/manifest.json")["size"] == 5
    # rewritten in place among objects only: the same key, not after the mark; the complete listing sees it
    put(s3_server, bucket, "logs/2026-01-02.json", body=b"grown again")
    assert run(s3_server, index, tmp_path, f"s3a://{bucket}").entries == 0
    complete = run(s3_server, index, tmp_path, f"s3a://{bucket}", complete_every=EVERY_RUN)
    assert complete.entries == 1 and doc(index, f"s3a://{bucket}/logs/2026-01-02.json")["size"] == 11


# --- deletions ---------------------------------------------------------------------------------------

def test_deleted_objects_and_directories_are_flagged_by_either_kind_of_run(
        s3_server: DevS3, index: SolrIndex, tmp_path: Path, bucket: str) -> None:
    keys = lake(s3_server, bucket, tables=4, partitions=3, files=2)
    run(s3_server, index, tmp_path, f"s3a://{bucket}")
    b = f"s3a://{bucket}"
    # a dropped partition: gone from its table's listing, found by an incremental run
    delete(s3_server, bucket, *[k for k in keys if k.startswith("t1/dt=2026-01-01/")])
    report = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert report.complete_listings == 0 and report.deletions == 3  # the partition and its two files
    gone = doc(index, f"{b}/t1/dt=2026-01-01")
    assert gone["deleted"] is True and gone["deleteTime"]
    assert doc(index, f"{b}/t1/dt=2026-01-01/part-00000.parquet")["deleted"] is True
    assert doc(index, f"{b}/t1/dt=2026-01-02/part-00000.parquet")["deleted"] is False
    # a file deleted inside an older partition: the next complete listing flags it
    delete(s3_server, bucket, "t2/dt=2026-01-01/part-00001.parquet")
    assert run(s3_server, index, tmp_path, f"s3a://{bucket}").deletions == 0
    complete = run(s3_server, index, tmp_path, f"s3a://{bucket}", complete_every=EVERY_RUN)
    assert complete.deletions == 1 and doc(index, f"{b}/t2/dt=2026-01-01/part-00001.parquet")["deleted"] is True


def test_the_fail_safe_refuses_deleting_most_of_a_root_and_a_higher_threshold_lets_it(
        s3_server: DevS3, index: SolrIndex, tmp_path: Path, bucket: str) -> None:
    keys = lake(s3_server, bucket, tables=8, partitions=2, files=2)
    run(s3_server, index, tmp_path, f"s3a://{bucket}")
    before = len(live(index, bucket))
    delete(s3_server, bucket, *[k for k in keys if not k.startswith("t0/")])  # 7 of 8 tables: 49 of 57 entities
    refused = run(s3_server, index, tmp_path, f"s3a://{bucket}")
    assert refused.deletions == 0 and refused.deletions_refused > 0
    assert "[deletions] max_share_percent = 75" in refused.refused and f"s3a://{bucket}/" in refused.refused
    assert len(live(index, bucket)) == before
    # the listing comes back empty: refused whatever the threshold
    delete(s3_server, bucket, *[k for k in keys if k.startswith("t0/")])
    empty = run(s3_server, index, tmp_path, f"s3a://{bucket}", deletions=DeletionsConfig(max_share_percent=100))
    assert empty.deletions == 0 and "came back empty" in empty.refused
    # an admin raises the threshold once the bucket has something again: what stayed recorded is flagged
    put(s3_server, bucket, "t0/dt=2026-01-01/part-00000.parquet")
    applied = run(s3_server, index, tmp_path, f"s3a://{bucket}", deletions=DeletionsConfig(max_share_percent=100),
                  complete_every=EVERY_RUN)
    assert applied.refused == "" and applied.deletions > 0
    assert set(live(index, bucket)) == {f"s3a://{bucket}/", f"s3a://{bucket}/t0", f"s3a://{bucket}/t0/dt=2026-01-01",
                                        f"s3a://{bucket}/t0/dt=2026-01-01/part-00000.parquet"}


# --- failures and credentials ---------------------------------------------------------------------

def test_a_missing_bucket_and_an_unreachable_store_end_the_run_with_one_line(
        s3_server: DevS3, tmp_path: Path) -> None:
    with pytest.raises(S3ExtractionError, match=r"NoSuchBucket.*ListObjectsV2.*nothing flagged deleted"):
        list(extractor(s3_server, None, tmp_path, "s3a://navd-no-such-bucket").extract())
    settings = S3Config(roots=("s3a://b0b",), endpoint_url=f"http://127.0.0.1:{free_port()}", path_style=True,
                        timeout_seconds=2)
    client, counter = make_client(settings, S3Credentials("k", "s"))
    dead = S3Extractor(client, None, roots=settings.parsed_roots, state_dir=tmp_path / "dead", counter=counter)
    with pytest.raises(S3ExtractionError, match="Could not connect to the endpoint URL") as raised:
        list(dead.extract())
    assert "\n" not in str(raised.value)


def test_credentials_come_from_a_private_file_or_the_environment(tmp_path: Path) -> None:
    file = tmp_path / "credentials"
    file.write_text("[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = file-secret\n"
                    "[lake]\naws_access_key_id = AKIALAKE\naws_secret_access_key = lake-secret\n"
                    "aws_session_token = lake-token\n")
    file.chmod(0o600)
    lake_creds = resolve_credentials(S3Config(credentials_file=str(file), profile="lake"))
    assert (lake_creds.access_key, lake_creds.secret_key, lake_creds.session_token) == ("AKIALAKE", "lake-secret",
                                                                                         "lake-token")
    assert "lake-secret" not in repr(lake_creds) and "lake-token" not in repr(lake_creds)
    env = resolve_credentials(S3Config(), {"AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "env-secret"})
    assert (env.access_key, env.secret_key, env.origin) == ("AKIAENV", "env-secret", "the environment")
    with pytest.raises(ConfigError, match=r"\[s3\] credentials_file: not set, and AWS_ACCESS_KEY_ID"):
        resolve_credentials(S3Config(), {})
    with pytest.raises(ConfigError, match=r"no \[nope\] section \(set \[s3\] profile to one of: default, lake\)"):
        resolve_credentials(S3Config(credentials_file=str(file), profile="nope"))
    file.chmod(0o644)
    with pytest.raises(ConfigError, match="users other than its owner may read it") as raised:
        resolve_credentials(S3Config(credentials_file=str(file)))
    assert "secret" not in str(raised.value)
    broken = tmp_path / "broken"
    broken.write_text("aws_secret_access_key = leaked-secret\n")  # no section header
    broken.chmod(0o600)
    with pytest.raises(ConfigError, match="not an AWS credentials file") as raised:
        resolve_credentials(S3Config(credentials_file=str(broken)))
    assert "leaked-secret" not in str(raised.value)


@pytest.mark.parametrize(("section", "message"), [
    ('enabled = true', r"\[s3\] roots: \[s3\] is enabled but has no roots"),
    ('roots = ["hdfs://nn/x"]', r"\[s3\] roots: 'hdfs://nn/x' is not an S3 location"),
    ('roots = ["s3a://b/a", "s3://b/a/b"]', r"\[s3\] roots: 's3://b/a/b' lies inside 's3a://b/a'"),
    ('roots = ["s3a://b/a//c"]', r"\[s3\] roots: 's3a://b/a//c': .*empty, '\.' or '\.\.' segment"),
    ('endpoint_url = "minio:9000"', r"\[s3\] endpoint_url: 'minio:9000' is not an http\(s\) URL"),
    ('complete_listing_hours = -1', r"\[s3\] complete_listing_hours"),
])
def test_bad_settings_name_the_key(section: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({"s3": tomllib.loads(section)}, environ={})


# --- the CLI -------------------------------------------------------------------------------------------

def test_navd_extract_s3_runs_from_the_config_and_logs_no_secret(
        s3_server: DevS3, solr_server: EmbeddedSolr, index: SolrIndex, navd: Any, tmp_path: Path,
        bucket: str) -> None:
    put(s3_server, bucket, "dir/file.csv")
    access, secret = s3_server.credentials()
    credentials = tmp_path / "s3-credentials"
    credentials.write_text(f"[dev]\naws_access_key_id = {access}\naws_secret_access_key = {secret}\n"
                           "aws_session_token = session-token-3e9a1c\n")
    credentials.chmod(0o600)
    config = tmp_path / "s3.toml"
    config.write_text(f'{solr_section(solr_server)}[logging]\nformat = "json"\n[daemon]\nstate_dir = "{tmp_path / "st"}"\n'
                      f'[s3]\nenabled = true\nroots = ["s3a://{bucket}"]\nendpoint_url = "{s3_server.endpoint_url}"\n'
                      f'path_style = true\ncredentials_file = "{credentials}"\nprofile = "dev"\n')
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    ran = navd("--log-level", "debug", "extract", "s3", env=env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "s3: 1 roots (1 listed completely), 1 objects and 0 prefixes listed, 3 entries written" in ran.stdout
    status = navd("status", env=env)
    assert status.returncode == 0 and "extractor.s3" in status.stdout, status.stdout
    for secret_text in (secret, "session-token-3e9a1c"):
        assert secret_text not in ran.stdout + ran.stderr + status.stdout + status.stderr
    index.commit("elements")
    assert doc(index, f"s3a://{bucket}/dir/file.csv")["size"] == 4
    # a bucket that is not there: exit 1, one line, no traceback
    config.write_text(config.read_text().replace(f"s3a://{bucket}", "s3a://navd-not-a-bucket"))
    failed = navd("extract", "s3", env=env)
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    assert "NoSuchBucket" in failed.stderr

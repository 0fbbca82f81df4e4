"""Event-log discovery, decoding and tailing against logs written by a real Spark (pyspark).

One subprocess runs a small job once per codec and layout (rolling off and on), snapshots each
log while the app still runs (a real `.inprogress` file) and has Spark's own
`CompressionCodec.compressedInputStream` decode every file: that is the truth the decoders here
must match byte for byte. Growing and damaged files are made from those real bytes (a prefix is
exactly what a growing file is; overwritten bytes are exactly what damage is).
"""

from __future__ import annotations

import collections
import io
import json
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import zstandard

from navd.extractors.common.codecs import CorruptFrame, make_decoder
from navd.extractors.common.cursors import LogCursor, StateError
from navd.extractors.common.lines import LogReader
from navd.extractors.common.tailing import LocalFileSystem
from navd.extractors.spark.logfiles import EventLogCursorStore as CursorStore
from navd.extractors.spark.logfiles import EventLogTailer, discover, parse_log_name

CODECS = ("", "lz4", "lzf", "snappy", "zstd")
CONFIGS = [(f"{codec or 'plain'}{'_rolling' if rolling else ''}", codec, rolling)
           for codec in CODECS for rolling in (False, True)]

_GENERATOR = textwrap.dedent('''
    import json, os, shutil, sys
    from pyspark.sql import SparkSession

    out, configs = sys.argv[1], json.loads(sys.argv[2])
    apps = {}
    for name, codec, rolling in configs:
        logs, truth = os.path.join(out, name, "logs"), os.path.join(out, name, "truth")
        os.makedirs(logs)
        os.makedirs(truth)
        builder = (SparkSession.builder.master("local[1]").appName("navd-" + name)
                   .config("spark.ui.enabled", "false")
                   .config("spark.sql.shuffle.partitions", "2")
                   .config("spark.eventLog.enabled", "true")
                   .config("spark.eventLog.dir", "file://" + logs)
                   .config("spark.eventLog.compress", "true" if codec else "false")
                   .config("spark.eventLog.rolling.enabled", "true" if rolling else "false"))
        if codec:
            builder = builder.config("spark.eventLog.compression.codec", codec)
        spark = builder.getOrCreate()
        df = spark.range(0, 2000).selectExpr("id % 7 AS k", "id AS v")
        df.groupBy("k").count().collect()
        df.createOrReplaceTempView("t")
        spark.sql("SELECT k, sum(v) FROM t GROUP BY k ORDER BY k").collect()
        shutil.copytree(logs, os.path.join(out, name, "running"))
        jvm, app_id = spark.sparkContext._jvm, spark.sparkContext.applicationId
        spark.stop()
        for root, _, files in os.walk(logs):
            for f in files:
                if f.startswith((".", "appstatus")):
                    continue
                stream = jvm.java.io.FileInputStream(os.path.join(root, f))
                if codec:
                    stream = jvm.org.apache.spark.io.CompressionCodec.createCodec(
                        jvm.org.apache.spark.SparkConf(), codec).compressedInputStream(stream)
                data = bytes(stream.readAllBytes())
                stream.close()
                with open(os.path.join(truth, f), "wb") as fh:
                    fh.write(data)
        apps[name] = app_id
    with open(os.path.join(out, "apps.json"), "w") as fh:
        json.dump(apps, fh)
''')


@pytest.fixture(scope="session")
def spark_logs(tmp_path_factory: pytest.TempPathFactory, own_service: None) -> Path:
    out = tmp_path_factory.mktemp("spark-event-logs")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _GENERATOR, str(out), json.dumps(CONFIGS)],
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        pytest.fail(f"pyspark could not write the event logs:\n{done.stderr[-4000:]}", pytrace=False)
    print(f"spark wrote {len(CONFIGS)} event logs in {time.monotonic() - started:.1f}s")
    return out


def records(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def data_file(spark_logs: Path, name: str, kind: str = "logs") -> Path:
    files = [p for p in (spark_logs / name / kind).rglob("*")
             if p.is_file() and not p.name.startswith((".", "appstatus"))]
    assert len(files) == 1, files
    return files[0]


def truth_lines(spark_logs: Path, name: str) -> list[str]:
    truth = spark_logs / name / "truth"
    (only,) = list(truth.iterdir())
    return only.read_text(encoding="utf-8").splitlines()


def drain(tailer: EventLogTailer) -> list[str]:
    """One poll, every line handed to a pretend writer, every cursor advanced."""
    lines = []
    for _log, line in tailer.poll():
        if line.text:
            lines.append(line.text)
        tailer.advance(line.cursor)
    return lines


def drain_files(tailer: EventLogTailer) -> dict[str, list[str]]:
    """As drain, the lines grouped by file name."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    for _log, line in tailer.poll():
        if line.text:
            out[Path(line.cursor.path).name].append(line.text)
        tailer.advance(line.cursor)
    return out


def tailer_for(directory: Path, state: Path, **kwargs: int) -> EventLogTailer:
    return EventLogTailer(LocalFileSystem(), [str(directory)], CursorStore(state), **kwargs)


# --- what Spark wrote ------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "codec", "rolling"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_every_layout_and_codec_reads_as_spark_decodes_it(spark_logs: Path, tmp_path: Path,
                                                          name: str, codec: str, rolling: bool) -> None:
    apps = json.loads((spark_logs / "apps.json").read_text())
    (event_log,) = discover(LocalFileSystem(), str(spark_logs / name / "logs"))
    assert (event_log.app_id, event_log.layout, event_log.complete) == (
        apps[name], "rolling" if rolling else "single", True)
    assert [(f.name.codec, f.name.index) for f in event_log.files] == [(codec, 1 if rolling else 0)]

    lines = drain(tailer_for(spark_logs / name / "logs", tmp_path))
    assert lines == truth_lines(spark_logs, name)

    # The same events as the uncompressed, single-file run of the same job.
    def kinds(text: list[str]) -> collections.Counter[str]:
        return collections.Counter(json.loads(line)["Event"] for line in text)
    assert kinds(lines) == kinds(truth_lines(spark_logs, "plain"))
    assert {"SparkListenerApplicationStart", "SparkListenerApplicationEnd"} <= set(kinds(lines))

    # Resuming from the cursor after any line, in a new process, gives exactly the rest.
    (file,) = event_log.files
    cursors = [line.cursor for line in LogReader(LocalFileSystem()).read(file, None, True)]
    assert any(c.skip for c in cursors) == bool(codec)  # some cursors lie inside a frame
    for i, cursor in enumerate(cursors[:-1]):
        rest = [line.text for line in LogReader(LocalFileSystem()).read(file, cursor, True)]
        assert [t for t in rest if t] == truth_lines(spark_logs, name)[i + 1:]

    # Byte-at-a-time feeding hits every possible split of every frame header.
    raw = data_file(spark_logs, name).read_bytes()
    decoder = make_decoder(codec, 0)
    fed = b"".join(p.data for i in range(len(raw)) for p in decoder.feed(raw[i:i + 1]))
    assert fed.decode().splitlines() == truth_lines(spark_logs, name)


@pytest.mark.parametrize(("name", "codec", "rolling"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_running_app_log_is_in_progress_and_holds_only_complete_lines(
        spark_logs: Path, tmp_path: Path, name: str, codec: str, rolling: bool) -> None:
    running = spark_logs / name / "running"
    (event_log,) = discover(LocalFileSystem(), str(running))
    assert not event_log.complete
    finished = discover(LocalFileSystem(), str(spark_logs / name / "logs"))[0]
    # The cursor key survives Spark's rename of .inprogress (and the appstatus marker's).
    assert [f.key.replace("/running/", "/logs/") for f in event_log.files] == [f.key for f in finished.files]
    lines = drain(tailer_for(running, tmp_path))
    full = truth_lines(spark_logs, name)
    assert 0 < len(lines) < len(full)
    assert lines == full[:len(lines)]
    assert "SparkListenerApplicationEnd" not in "".join(lines)


def test_log_names() -> None:
    local = parse_log_name("local-1795323585950.zstd.inprogress", rolling=False)
    assert local is not None and (local.app_id, local.codec, local.index, local.stable_name) == (
        "local-1795323585950", "zstd", 0, "local-1795323585950.zstd")
    single = parse_log_name("application_1700000000000_0042_1.lz4.inprogress", rolling=False)
    assert single is not None and (single.app_id, single.codec, single.in_progress, single.stable_name) == (
        "application_1700000000000_0042_1", "lz4", True, "application_1700000000000_0042_1.lz4")
    compact = parse_log_name("events_3_app-1.snappy.compact", rolling=True)
    assert compact is not None and (compact.app_id, compact.index, compact.codec, compact.compact) == (
        "app-1", 3, "snappy", True)
    for foreign in (".local-1.crc", "appstatus_app-1", "local-1.gz", "events_1_app-1.txt", "_SUCCESS"):
        assert parse_log_name(foreign, rolling=foreign.startswith("events")) is None


def test_rolling_files_in_index_order_and_compaction(spark_logs: Path, tmp_path: Path) -> None:
    source = data_file(spark_logs, "zstd_rolling")
    app = source.name.split("_", 2)[2].removesuffix(".zstd")
    folder = tmp_path / "logs" / f"eventlog_v2_{app}"
    folder.mkdir(parents=True)
    for index in (10, 2, 1):
        shutil.copy(source, folder / f"events_{index}_{app}.zstd")
    (folder / f"appstatus_{app}.inprogress").touch()
    (event_log,) = discover(LocalFileSystem(), str(tmp_path / "logs"))
    assert [f.name.index for f in event_log.files] == [1, 2, 10] and not event_log.complete

    tailer = tailer_for(tmp_path / "logs", tmp_path / "state")
    assert len(drain(tailer)) == 3 * len(truth_lines(spark_logs, "zstd_rolling"))
    tailer.checkpoint()
    # The history server compacts 1 and 2 into events_2...compact and deletes them: the events
    # were read already, so the compact file is not read again.
    shutil.copy(source, folder / f"events_2_{app}.zstd.compact")
    (folder / f"events_1_{app}.zstd").unlink()
    (folder / f"events_2_{app}.zstd").unlink()
    (folder / f"appstatus_{app}.inprogress").rename(folder / f"appstatus_{app}")
    (event_log,) = discover(LocalFileSystem(), str(tmp_path / "logs"))
    assert [(f.name.index, f.name.compact) for f in event_log.files] == [(2, True), (10, False)]
    assert event_log.complete
    assert drain(tailer) == []
    tailer.checkpoint()
    # A fresh reader (no cursors) reads the compact file and what follows.
    assert len(drain(tailer_for(tmp_path / "logs", tmp_path / "fresh"))) == 2 * len(
        truth_lines(spark_logs, "zstd_rolling"))


# --- growing files, restarts, crashes --------------------------------------------------------

@pytest.mark.parametrize(("name", "codec", "rolling"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_growing_file_across_restarts_never_splits_loses_or_duplicates(
        spark_logs: Path, tmp_path: Path, name: str, codec: str, rolling: bool) -> None:
    source = data_file(spark_logs, name)
    full = source.read_bytes()
    expected = truth_lines(spark_logs, name)
    logs, state = tmp_path / "logs", tmp_path / "state"
    if rolling:
        # Rolling files keep their name; the appstatus marker tells when the app ended.
        folder = logs / source.parent.name
        folder.mkdir(parents=True)
        growing = final = folder / source.name
        marker = folder / (source.parent.name.replace("eventlog_v2_", "appstatus_") + ".inprogress")
        marker.touch()
    else:
        logs.mkdir()
        growing, final = logs / (source.name + ".inprogress"), logs / source.name
        marker = growing
    rng = random.Random(f"navd-{name}")
    cuts = sorted({rng.randrange(1, len(full)) for _ in range(150)} | {1, 2, 7, 21, 22})

    delivered: list[str] = []   # what reached "Solr": lines of checkpointed polls only
    mid_frame_resumes = 0       # committed cursors inside a frame: restarts re-decode it
    tailer = tailer_for(logs, state)
    for step, cut in enumerate([*cuts, len(full)]):
        with open(growing, "ab") as fh:  # the writer appends; the inode stays
            fh.write(full[growing.stat().st_size:cut] if growing.exists() else full[:cut])
        if step % 3 == 0:
            tailer = tailer_for(logs, state)  # a restart: only the cursor file survives
        lines = drain(tailer)
        for line in lines:
            json.loads(line)  # never a partial line
        if step % 5 == 4:
            # Crash before the Solr flush: these lines are lost from the index, and their cursors
            # were never committed, so the next process reads them again.
            tailer = tailer_for(logs, state)
            continue
        delivered.extend(lines)
        tailer.checkpoint()
        mid_frame_resumes += any(c.skip for c in CursorStore(state).load().values())
    marker.rename(str(marker).removesuffix(".inprogress"))  # the app ends
    delivered.extend(drain(tailer))
    tailer.checkpoint()
    assert delivered == expected
    # lz4 and lzf cut blocks by size, so lines end inside frames and restarts resume there; in
    # logs this small Spark's snappy and zstd frames end at its flushes, between lines (the
    # test above resumes inside every frame).
    assert (mid_frame_resumes > 0) == (codec in ("lz4", "lzf"))
    (cursor,) = CursorStore(state).load().values()
    assert cursor.done and cursor.path == str(final)
    assert drain(tailer_for(logs, state)) == []  # finished and unchanged: not read again


def test_cursor_store_round_trip_and_refuses_a_damaged_file(tmp_path: Path) -> None:
    store = CursorStore(tmp_path / "state")
    assert store.load() == {}
    cursor = LogCursor("/l/app-1.zstd", "/l/app-1.zstd.inprogress", "1234", 10, 3, "zstd", 0, 77)
    store.commit({cursor.key: cursor})
    assert store.load() == {cursor.key: cursor}
    assert [p.name for p in (tmp_path / "state").iterdir()] == [CursorStore.FILE_NAME]
    store.path.write_text('{"cursors": [')
    with pytest.raises(StateError, match=str(store.path)):
        store.load()


# --- bad input -------------------------------------------------------------------------------

def _frame_offsets(codec: str, raw: bytes) -> list[int]:
    magic = {"lz4": b"LZ4Block", "lzf": b"ZV\x01", "zstd": b"\x28\xb5\x2f\xfd"}[codec]
    offsets, at = [], raw.find(magic)
    while at >= 0:
        offsets.append(at)
        at = raw.find(magic, at + 1)
    return offsets


def _snappy_blocks(raw: bytes) -> list[int]:
    offsets, pos = [], 16
    while pos + 4 <= len(raw):
        offsets.append(pos)
        pos += 4 + int.from_bytes(raw[pos:pos + 4], "big")
    return offsets


@pytest.mark.parametrize("codec", ["lz4", "lzf", "snappy", "zstd"])
def test_corrupt_frame_is_logged_once_and_later_frames_still_flow(
        spark_logs: Path, tmp_path: Path, log_stream: io.StringIO, codec: str) -> None:
    source = data_file(spark_logs, codec)
    raw = bytearray(source.read_bytes())
    frames = _snappy_blocks(bytes(raw)) if codec == "snappy" else _frame_offsets(codec, bytes(raw))
    assert len(frames) > 2, f"{codec}: expected several frames, got {frames}"
    bad = frames[len(frames) // 2]
    # Damage the frame header (for snappy its length too) and garble its body.
    raw[bad:bad + 4] = b"\xff\xff\xff\xfe"
    raw[bad + 24:bad + 40] = b"\x00" * 16
    logs = tmp_path / "logs"
    logs.mkdir()
    damaged = logs / source.name
    damaged.write_bytes(raw)
    other = "lz4" if codec == "zstd" else "zstd"
    intact = logs / data_file(spark_logs, other).name
    shutil.copy(data_file(spark_logs, other), intact)

    lines = drain_files(tailer_for(logs, tmp_path / "state"))
    expected, got = truth_lines(spark_logs, codec), lines[damaged.name]
    # Only the lines touching the damaged frame are lost: the rest is a prefix and a suffix.
    head = next(i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b)
    tail = len(got) - head
    assert head > 0 and tail > 0 and got == expected[:head] + expected[-tail:]
    assert lines[intact.name] == truth_lines(spark_logs, other)  # the other file flowed
    warnings = [r for r in records(log_stream) if r["event"] == "corrupt compressed frame skipped"]
    assert len(warnings) == 1
    assert (warnings[0]["file"], warnings[0]["offset"], warnings[0]["logger"]) == (
        str(damaged), bad, "navd.extractor.spark")


def test_zstd_block_damage_inside_a_frame_is_skipped_and_the_decoder_goes_on(
        spark_logs: Path, tmp_path: Path, log_stream: io.StringIO) -> None:
    source = data_file(spark_logs, "zstd")
    raw = bytearray(source.read_bytes())
    frames = _frame_offsets("zstd", bytes(raw))
    # Spark closes a frame at every flush: many small frames, not one.
    assert len(frames) > 10
    # Give the first block of a middle frame the reserved block type 3 (frame header: 4-byte
    # magic, descriptor 0x00 = no content size, one window byte; then the block header).
    bad = frames[len(frames) // 2]
    assert raw[bad + 4] == 0
    raw[bad + 6] |= 0b110
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / source.name).write_bytes(raw)
    lines = drain_files(tailer_for(logs, tmp_path / "state"))[source.name]
    expected = truth_lines(spark_logs, "zstd")
    head = next(i for i, (a, b) in enumerate(zip(lines, expected, strict=False)) if a != b)
    tail = len(lines) - head
    assert head > 0 and tail > 0 and lines == expected[:head] + expected[-tail:]
    # Exactly the events of the damaged frame are lost: the next frame starts with an event.
    original = source.read_bytes()[bad:frames[frames.index(bad) + 1]]
    assert len(expected) - len(lines) == zstandard.ZstdDecompressor().decompressobj().decompress(
        original).count(b"\n")
    warnings = [r for r in records(log_stream) if r["event"] == "corrupt compressed frame skipped"]
    assert [(w["file"], w["offset"]) for w in warnings] == [(str(logs / source.name), bad)]
    # A decoder that raised CorruptFrame stays usable: feeding on resumes at the next frame.
    decoder = make_decoder("zstd", 0)
    out = b""
    with pytest.raises(CorruptFrame) as caught:
        for piece in decoder.feed(bytes(raw)):
            out += piece.data
    assert caught.value.offset == bad
    out += b"".join(piece.data for piece in decoder.feed(b""))
    assert out.decode().splitlines()[-1] == expected[-1]


def test_a_finished_compressed_file_cut_mid_frame_is_held_back_and_read_on_when_completed(
        spark_logs: Path, tmp_path: Path, log_stream: io.StringIO) -> None:
    for codec in ("lz4", "lzf", "snappy", "zstd"):
        source = data_file(spark_logs, codec)
        logs = tmp_path / codec
        logs.mkdir()
        (logs / source.name).write_bytes(source.read_bytes()[:-100])
        tailer = tailer_for(logs, tmp_path / f"{codec}-state")
        lines = drain(tailer)
        expected = truth_lines(spark_logs, codec)
        assert 0 < len(lines) < len(expected) and lines == expected[:len(lines)], codec
        # A copy still arriving under the final name: the rest comes, and is read from where
        # the complete lines ended, nothing lost or read twice.
        assert drain(tailer) == []
        with (logs / source.name).open("ab") as fh:
            fh.write(source.read_bytes()[-100:])
        assert lines + drain(tailer) == expected, codec
    # Each file is reported once, naming it, as a partial line or an unfinished frame.
    reported = [Path(r["file"]).parent.name for r in records(log_stream)
                if r["event"].startswith("finished event log ends in")]
    assert sorted(reported) == ["lz4", "lzf", "snappy", "zstd"]


@pytest.mark.parametrize("codec", ["", "zstd"], ids=["plain", "zstd"])
def test_invalid_utf8_and_a_50mb_line_are_skipped_with_file_and_offset(
        spark_logs: Path, tmp_path: Path, log_stream: io.StringIO, codec: str) -> None:
    expected = truth_lines(spark_logs, "plain")
    bad_utf8 = b'{"Event":"SparkListenerJobStart","x":"\xc3\x28"}'
    huge = b'{"Event":"SparkListenerSQLExecutionStart","plan":"' + b"x" * (50 << 20) + b'"}'
    body = b"\n".join([*(line.encode() for line in expected[:5]), bad_utf8,
                       *(line.encode() for line in expected[5:10]), huge,
                       *(line.encode() for line in expected[10:])]) + b"\n"
    logs = tmp_path / "logs"
    logs.mkdir()
    target = logs / ("app-1." + codec if codec else "app-1")
    if codec:
        # zstd made here, as Spark would (one frame, flushed): the framing is verified above.
        body = zstandard.ZstdCompressor().compress(body)
    target.write_bytes(body)

    lines = drain(tailer_for(logs, tmp_path / "state"))  # the default limit: 32 MiB
    assert lines == expected
    warnings = {r["event"]: r for r in records(log_stream) if r["level"] == "warning"}
    assert set(warnings) == {"event log line is not UTF-8, skipped", "event log line too long, skipped"}
    assert all(w["file"] == str(target) for w in warnings.values())
    if not codec:
        offset = sum(len(line) + 1 for line in expected[:5])
        assert warnings["event log line is not UTF-8, skipped"]["offset"] == offset
        offset += len(bad_utf8) + 1 + sum(len(line) + 1 for line in expected[5:10])
        assert warnings["event log line too long, skipped"]["offset"] == offset


def test_deleted_log_drops_its_cursor_once(spark_logs: Path, tmp_path: Path,
                                           log_stream: io.StringIO) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(spark_logs / "lz4" / "logs", logs)
    shutil.copytree(spark_logs / "snappy_rolling" / "logs", logs, dirs_exist_ok=True)
    state = tmp_path / "state"
    tailer = tailer_for(logs, state)
    drain(tailer)
    tailer.checkpoint()
    assert len(CursorStore(state).load()) == 2
    # The history server's cleaner removes the rolling log.
    (rolling,) = [p for p in logs.iterdir() if p.is_dir()]
    shutil.rmtree(rolling)
    assert drain(tailer) == []
    assert drain(tailer) == []
    tailer.checkpoint()
    assert [Path(k).name for k in CursorStore(state).load()] == [data_file(spark_logs, "lz4").name]
    gone = [r for r in records(log_stream) if r["event"].startswith("event log disappeared")]
    assert len(gone) == 1 and gone[0]["file"].startswith(str(rolling))


def test_missing_directory_keeps_cursors(spark_logs: Path, tmp_path: Path,
                                         log_stream: io.StringIO) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(spark_logs / "lzf" / "logs", logs)
    tailer = tailer_for(logs, tmp_path / "state")
    drain(tailer)
    tailer.checkpoint()
    logs.rename(tmp_path / "elsewhere")   # an unmounted or unreachable directory
    assert drain(tailer) == []
    tailer.checkpoint()
    assert len(CursorStore(tmp_path / "state").load()) == 1
    assert any(r["event"] == "event log directory unreadable" for r in records(log_stream))
    (tmp_path / "elsewhere").rename(logs)
    assert drain(tailer) == []   # back, unchanged, nothing read twice

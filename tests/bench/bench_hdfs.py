"""HDFS extractor benchmark: navd's WebHDFS crawl into Solr on a generated tree, full and incremental.

Run: python tests/bench/bench_hdfs.py [--files 200000] [--changed-dirs 20]

It starts a real HDFS (navd's dev NameNode + DataNode from Hadoop's jars, `navd_devstack.hadoop`) and
its own embedded Solr (navd's own server code, a temporary home, a free port, 1g heap; cores made
with `navd.index.admin.init_solr`), and measures the HDFS extractor's four figures:

1. full run: a fresh `HdfsExtractor` (fresh state dir) over /bench, `run_pass(IndexWriter, full=True)`
   + `writer.close()` into emptied cores, against, in the same run, a bare recursive
   LISTSTATUS_BATCH crawl of the same tree with the `hdfs` client (`navd.webhdfs.list_status_batch`,
   as many threads as navd uses) that indexes nothing. Best of 2 each. Goal: navd / bare <= 1.3.
2. incremental run after 1% of the files changed (0.5% created, 0.5% deleted, with FsShell, one
   JVM per kind) in `--changed-dirs` leaf directories; then a run with nothing changed. Goal: time
   and WebHDFS requests <= 10% of the full run's.
3. peak RSS of the extractor: every full run happens in a child Python process that reports its
   own ru_maxrss; also once over a quarter of the tree, to show it stays flat. Goal: < 300 MB.
4. the fsimage bulk path: `load_fsimage(master="local[2]")` of an `oiv -p Delimited` dump of the
   same tree, elements/s against the WebHDFS full run's. Making the dump is not timed.

The tree (/bench/data/<dataset>/<yyyy>/<mm>/<dd>/part-NNNNN.snappy.parquet, a few hundred leaf
directories, a fifth of them with more than 1000 files so listings page) is made once with FsShell
(about 400 files/s on 2 cores) and cached in .bench/hdfs-<files>/ (gitignored), with its fsimage
dump; the incremental benchmark reverts its changes afterwards so the cache stays valid. Figures
are printed and written to .bench/hdfs.json. Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import platform
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import navd
from navd.config import DEFAULT_SOLR_VERSION, NavdConfig, default_solr_dist_dir
from navd.extractors.hdfs.settings import HdfsConfig
from navd.extractors.hdfs.bulk import _spark_session, load_fsimage
from navd.extractors.hdfs.extractor import DEFAULT_WORKERS, HdfsExtractor
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.logs import setup_logging
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port
from navd.webhdfs import list_status_batch, make_client, request_count
from navd_devstack.hadoop import DFSADMIN_CLASS, FSSHELL_CLASS, OIV_CLASS, DevHdfs, HdfsPorts
from navd.extractors import run_pass

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_writer import _git_commit  # noqa: E402  (same directory)

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO / ".bench"
RESULT_FILE = BENCH_DIR / "hdfs.json"
ROOT = "/bench"
DATA = f"{ROOT}/data"
CORES = ("elements", "relations")
SEED = 20260117
LAYOUT_VERSION = 1  # bump when the tree's shape changes: the cache key includes it

RATIO_GOAL = 1.3  # navd full run / bare crawl
INCREMENTAL_GOAL = 0.10  # incremental time and requests as a fraction of the full run's
RSS_GOAL_MB = 300.0
CHUNK = 8000  # paths per FsShell JVM: ~350 KB of arguments, far below ARG_MAX
PARALLEL_JVMS = 2  # the NameNode, two FsShell JVMs and this process share 2 cores

# Ten datasets of 30 daily partitions each (300 leaf directories). The weight scales a leaf's
# file count: the two heavy datasets average ~1400 files a day, so their listings take 2-3
# LISTSTATUS_BATCH pages (dfs.ls.limit 1000), the others ~240-700 files, one page.
DATASETS: tuple[tuple[str, float], ...] = (
    ("clickstream", 3.0), ("orders", 1.0), ("payments", 1.0), ("sensor_readings", 1.0),
    ("inventory", 1.0), ("shipments", 1.0), ("sessions", 1.0), ("ad_impressions", 3.0),
    ("user_profiles", 1.0), ("app_logs", 1.0))
DAYS = 30
FIRST_DAY = date(2026, 1, 17)  # the 30 days span January and February: two month directories


def part_name(i: int) -> str:
    return f"part-{i:05d}.snappy.parquet"


# --- the tree -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Tree:
    files: int
    leaves: tuple[tuple[str, int], ...]  # (leaf directory, number of files in it)

    @property
    def directories(self) -> int:
        """Every directory at or below ROOT: /bench, /bench/data, datasets, years, months, days."""
        parents = {ROOT}
        for leaf, _ in self.leaves:
            path = leaf
            while path != ROOT:
                parents.add(path)
                path = path.rsplit("/", 1)[0]
        return len(parents)

    @property
    def entries(self) -> int:
        """What a full run finds: every directory and file at or below ROOT, ROOT included."""
        return self.directories + self.files

    def paths(self) -> Iterator[str]:
        for leaf, count in self.leaves:
            for i in range(count):
                yield f"{leaf}/{part_name(i)}"


def make_tree(files: int) -> Tree:
    rng = random.Random(SEED)
    weights: list[tuple[str, float]] = []
    for dataset, weight in DATASETS:
        for d in range(DAYS):
            day = FIRST_DAY + timedelta(days=d)
            weights.append((f"{DATA}/{dataset}/{day:%Y/%m/%d}", weight * rng.uniform(0.5, 1.5)))
    total = sum(w for _, w in weights)
    counts = [int(files * w / total) for _, w in weights]
    for i in range(files - sum(counts)):  # the rounding remainder, one file each
        counts[i % len(counts)] += 1
    return Tree(files, tuple((leaf, n) for (leaf, _), n in zip(weights, counts)))


@dataclasses.dataclass(frozen=True)
class Changes:
    created: tuple[str, ...]
    deleted: tuple[str, ...]
    directories: tuple[str, ...]


def make_changes(tree: Tree, changed_dirs: int) -> Changes:
    """0.5% of the files created and 0.5% deleted, round-robin over `changed_dirs` leaves picked
    at random (fixed seed): late part files landing, old ones expiring."""
    rng = random.Random(SEED + 1)
    picked = sorted(rng.sample(range(len(tree.leaves)), min(changed_dirs, len(tree.leaves))))
    each = max(1, tree.files // 200)
    created, deleted = [], []
    for k in range(each):
        leaf, count = tree.leaves[picked[k % len(picked)]]
        created.append(f"{leaf}/{part_name(count + k // len(picked))}")
        deleted.append(f"{leaf}/{part_name((k // len(picked)) % count)}")
    return Changes(tuple(created), tuple(deleted), tuple(tree.leaves[i][0] for i in picked))


def fs_shell_chunks(hdfs: DevHdfs, command: str, paths: Sequence[str], progress: str | None = None) -> None:
    """FsShell `command` over `paths`, CHUNK paths per JVM, PARALLEL_JVMS JVMs at once: a JVM
    start costs ~2 s, and one JVM sends its RPCs one after another."""
    chunks = [list(paths[i:i + CHUNK]) for i in range(0, len(paths), CHUNK)]
    done = 0
    start = time.perf_counter()
    lock = threading.Lock()

    def run(chunk: list[str]) -> None:
        nonlocal done
        hdfs.run_tool(FSSHELL_CLASS, command, *chunk)
        with lock:
            done += len(chunk)
            if progress:
                rate = done / (time.perf_counter() - start)
                sys.stderr.write(f"  {progress}: {done:,}/{len(paths):,} ({rate:,.0f}/s)\n")

    with ThreadPoolExecutor(PARALLEL_JVMS) as pool:
        list(pool.map(run, chunks))


@dataclasses.dataclass
class Cache:
    home: Path
    tree: Tree
    generated_seconds: float
    dump: Path
    cached: bool

    @property
    def marker(self) -> Path:
        return self.home / "complete.json"

    @property
    def dirty(self) -> Path:
        """Exists while the incremental benchmark's changes are applied: the next start reverts."""
        return self.home / "changes-applied.json"


def _key(tree: Tree) -> str:
    return hashlib.sha256(json.dumps([LAYOUT_VERSION, tree.leaves]).encode()).hexdigest()[:16]


def open_cache(files: int) -> tuple[Path, Tree, dict[str, Any] | None]:
    """The cached HDFS home for `files` files and what its marker says (None: generate it)."""
    tree = make_tree(files)
    home = BENCH_DIR / f"hdfs-{files}"
    marker = home / "complete.json"
    if marker.is_file():
        meta = json.loads(marker.read_text())
        if meta.get("key") == _key(tree):
            return home, tree, meta
    # Partial or of another shape: the NameNode is formatted anew (after stopping daemons a
    # killed generation may have left running on it).
    if home.exists():
        DevHdfs(home, HdfsPorts.free()).stop()
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    return home, tree, None


def generate(hdfs: DevHdfs, tree: Tree) -> float:
    start = time.perf_counter()
    sys.stderr.write(f"generating {tree.files:,} files in {len(tree.leaves)} leaf directories with FsShell "
                     f"(cached in {hdfs.home.relative_to(REPO)}) ...\n")
    hdfs.run_tool(FSSHELL_CLASS, "-mkdir", "-p", *(leaf for leaf, _ in tree.leaves))
    fs_shell_chunks(hdfs, "-touchz", list(tree.paths()), progress="touchz")
    return time.perf_counter() - start


def delimited_dump(hdfs: DevHdfs, out: Path) -> None:
    """`oiv -p Delimited` of the NameNode's namespace, as tests/test_hdfs_fsimage.py makes it."""
    hdfs.run_tool(DFSADMIN_CLASS, "-safemode", "enter")
    try:
        hdfs.run_tool(DFSADMIN_CLASS, "-saveNamespace")
    finally:
        hdfs.run_tool(DFSADMIN_CLASS, "-safemode", "leave")
    with tempfile.TemporaryDirectory(prefix="navd-bench-fsimage-") as tmp:
        hdfs.run_tool(DFSADMIN_CLASS, "-fetchImage", tmp)
        [image] = Path(tmp).glob("fsimage_*")
        # oiv prints its JVM's local time; load_fsimage reads UTC by default.
        previous = os.environ.get("TZ")
        os.environ["TZ"] = "UTC"
        try:
            hdfs.run_tool(OIV_CLASS, "-p", "Delimited", "-i", str(image), "-o", str(out) + ".tmp")
        finally:
            if previous is None:
                os.environ.pop("TZ", None)
            else:
                os.environ["TZ"] = previous
    Path(str(out) + ".tmp").replace(out)


def ensure_tree(hdfs: DevHdfs, home: Path, tree: Tree, meta: dict[str, Any] | None) -> Cache:
    cache = Cache(home, tree, 0.0, home / "fsimage.tsv", cached=meta is not None)
    if meta is None:
        cache.generated_seconds = generate(hdfs, tree)
        count = hdfs_client(hdfs).content(DATA)["fileCount"]
        if count != tree.files:
            raise RuntimeError(f"generated {count} files under {DATA}, expected {tree.files}")
        cache.marker.write_text(json.dumps({"key": _key(tree), "files": tree.files,
                                            "generated_seconds": cache.generated_seconds}, indent=2) + "\n")
    else:
        cache.generated_seconds = float(meta["generated_seconds"])
        if cache.dirty.is_file():
            sys.stderr.write("a previous run stopped with its changes applied: reverting them ...\n")
            applied = json.loads(cache.dirty.read_text())
            revert_changes(hdfs, cache, Changes(tuple(applied["created"]), tuple(applied["deleted"]), ()))
    if not cache.dump.is_file():
        sys.stderr.write("dumping the fsimage (dfsadmin -saveNamespace, -fetchImage, oiv -p Delimited) ...\n")
        delimited_dump(hdfs, cache.dump)
    return cache


def apply_changes(hdfs: DevHdfs, cache: Cache, changes: Changes) -> None:
    # The lists themselves: a later run with other options reverts exactly these.
    cache.dirty.write_text(json.dumps({"created": changes.created, "deleted": changes.deleted}) + "\n")
    # One JVM per kind, as an admin's batch job would: the figures are navd's, not FsShell's.
    hdfs.run_tool(FSSHELL_CLASS, "-touchz", *changes.created)
    hdfs.run_tool(FSSHELL_CLASS, "-rm", "-skipTrash", *changes.deleted)


def revert_changes(hdfs: DevHdfs, cache: Cache, changes: Changes) -> None:
    # -f: also right after a run that died halfway through applying them.
    hdfs.run_tool(FSSHELL_CLASS, "-rm", "-f", "-skipTrash", *changes.created)
    hdfs.run_tool(FSSHELL_CLASS, "-touchz", *changes.deleted)  # zero-length files: touchz accepts them existing
    count = hdfs_client(hdfs).content(DATA)["fileCount"]
    if count != cache.tree.files:
        raise RuntimeError(f"after reverting the changes {DATA} holds {count} files, expected {cache.tree.files}")
    cache.dirty.unlink(missing_ok=True)


def hdfs_client(hdfs: DevHdfs) -> Any:
    return make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user=hdfs.superuser))


# --- the runs -------------------------------------------------------------------------------------


def bare_crawl(hdfs: DevHdfs, root: str, workers: int) -> dict[str, Any]:
    """Recursive LISTSTATUS_BATCH of `root` from `workers` threads; counts entries, keeps nothing."""
    client = hdfs_client(hdfs)
    tasks: queue.LifoQueue[str | None] = queue.LifoQueue()  # depth first, as navd's pool
    lock = threading.Lock()
    finished = threading.Event()
    pending = 1
    entries = directories = 0
    errors: list[BaseException] = []

    def work() -> None:
        nonlocal pending, entries, directories
        while True:
            path = tasks.get()
            if path is None:
                return
            found, below = 0, []
            try:
                for status in list_status_batch(client, path):
                    found += 1
                    if status["type"] == "DIRECTORY":
                        below.append(f"{path.rstrip('/')}/{status['pathSuffix']}")
            except BaseException as exc:  # reported by the caller; the crawl still ends
                errors.append(exc)
            with lock:
                entries += found
                directories += 1
                pending += len(below) - 1
                for child in below:
                    tasks.put(child)
                if pending == 0:
                    finished.set()

    start = time.perf_counter()
    threads = [threading.Thread(target=work, daemon=True, name=f"bench-bare-{i}") for i in range(workers)]
    for thread in threads:
        thread.start()
    tasks.put(root)
    finished.wait()
    seconds = time.perf_counter() - start
    for _ in threads:
        tasks.put(None)
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"bare crawl: {errors[0]!r}")
    # +1: the root itself, which navd's run counts as an entry (it has its status anyway).
    return {"seconds": seconds, "requests": request_count(client), "entries": entries + 1,
            "directories": directories}


# The full run in a child process, so its peak RSS is the extractor's alone (ru_maxrss of the
# process: this process's own peak includes the test's tree of paths and the FsShell runs).
_CHILD = """
import json, resource, sys, time
from pathlib import Path
args = json.loads(sys.stdin.read())  # not argv: it carries the Solr password
from navd.config import SolrConfig
from navd.extractors.hdfs.settings import HdfsConfig
from navd.extractors.hdfs.extractor import HdfsExtractor
from navd.index.client import IndexWriter, SolrIndex
from navd.logs import setup_logging
from navd.webhdfs import make_client

def rss_mb(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0

setup_logging("console", "warning")
client = make_client(HdfsConfig(urls=(args["webhdfs"],), user=args["user"]))
with SolrIndex(SolrConfig(**args["solr"])) as index:
    extractor = HdfsExtractor(client, index, default_fs=args["default_fs"], roots=args["roots"],
                              state_dir=Path(args["state"]), extractor_run_id=args["run_id"])
    before = rss_mb("VmRSS")
    writer = IndexWriter(index)
    start = time.perf_counter()
    report = run_pass(extractor, writer, full=True)
    ok = writer.close()
    seconds = time.perf_counter() - start
    extractor.state.close()
print(json.dumps({"seconds": seconds, "ok": ok, "requests": report.requests, "entries": report.entries,
                  "records": report.records, "directories_listed": report.directories_listed,
                  "skipped": report.skipped, "rss_before_mb": before, "peak_rss_mb": rss_mb("VmHWM"),
                  "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def clear_cores(index: SolrIndex) -> None:
    for core in CORES:
        index.delete_query(core, "*:*")
        index.commit(core)


def live_elements(index: SolrIndex) -> int:
    for core in CORES:
        index.commit(core)
    return index.count("elements", filters=["deleted:false"])


def navd_full_child(hdfs: DevHdfs, index: SolrIndex, state: Path, roots: Sequence[str], run_id: str) -> dict[str, Any]:
    solr = {"url": index.base_url, "auth": index.config.auth, "username": index.config.username,
            "password": index.config.password}
    args = {"webhdfs": hdfs.webhdfs_url, "user": hdfs.superuser, "solr": solr,
            "default_fs": hdfs.default_fs, "roots": list(roots), "state": str(state), "run_id": run_id}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_CHILD)], input=json.dumps(args),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"navd full run (child process) failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    if not result["ok"]:
        raise RuntimeError("navd full run: writer.close() returned False (documents not written)")
    return result


def navd_pass(extractor: HdfsExtractor, index: SolrIndex) -> dict[str, Any]:
    """An incremental run (the extractor's state decides what is listed), timed with close()."""
    writer = IndexWriter(index)
    start = time.perf_counter()
    report = run_pass(extractor, writer)
    ok = writer.close()
    seconds = time.perf_counter() - start
    if not ok:
        raise RuntimeError("navd incremental run: writer.close() returned False")
    return {"seconds": seconds, **dataclasses.asdict(report)}


def measure_full(hdfs: DevHdfs, index: SolrIndex, tree: Tree, state: Path) -> dict[str, Any]:
    progress = sys.stderr
    runs: dict[str, list[dict[str, Any]]] = {"bare": [], "navd": []}
    for n in range(2):
        progress.write(f"run {n + 1}/2: bare LISTSTATUS_BATCH crawl ({DEFAULT_WORKERS} threads) ...")
        progress.flush()
        bare = bare_crawl(hdfs, ROOT, DEFAULT_WORKERS)
        if bare["entries"] != tree.entries:
            raise RuntimeError(f"bare crawl found {bare['entries']} entries, the tree has {tree.entries}")
        runs["bare"].append(bare)
        progress.write(f" {bare['seconds']:.2f} s, {bare['requests']} requests\n")

        clear_cores(index)
        shutil.rmtree(state, ignore_errors=True)  # the last run's state stays for the incremental runs
        progress.write(f"run {n + 1}/2: navd HdfsExtractor pass (full=True) -> Solr (child process) ...")
        progress.flush()
        full = navd_full_child(hdfs, index, state, [ROOT], f"bench-hdfs-full##{n + 1}")
        full["indexed"] = live_elements(index)
        if full["entries"] != tree.entries or full["indexed"] != tree.entries:
            raise RuntimeError(f"navd full run: {full['entries']} entries, {full['indexed']} in Solr; "
                               f"the tree has {tree.entries}")
        runs["navd"].append(full)
        progress.write(f" {full['seconds']:.2f} s, {full['requests']} requests, {full['records']:,} records, "
                       f"peak RSS {full['peak_rss_mb']:.0f} MB\n")
    best = {k: min(r["seconds"] for r in v) for k, v in runs.items()}
    ratio = best["navd"] / best["bare"]
    return {"runs": runs, "best_seconds": best, "ratio": ratio, "goal": RATIO_GOAL, "met": ratio <= RATIO_GOAL,
            "entries": tree.entries, "entries_per_s": tree.entries / best["navd"]}


def measure_incremental(hdfs: DevHdfs, index: SolrIndex, cache: Cache, changes: Changes, state: Path,
                        full: dict[str, Any]) -> dict[str, Any]:
    progress = sys.stderr
    last_full = full["runs"]["navd"][-1]  # its state is the one the incremental run continues from
    extractor = HdfsExtractor(hdfs_client(hdfs), index, default_fs=hdfs.default_fs, roots=[ROOT],
                              state_dir=state, extractor_run_id="bench-hdfs-incremental##1")
    try:
        progress.write(f"applying the changes: {len(changes.created):,} files created, {len(changes.deleted):,} "
                       f"deleted in {len(changes.directories)} leaf directories (FsShell, one JVM each) ...\n")
        apply_changes(hdfs, cache, changes)
        try:
            progress.write("incremental run after the changes ...")
            progress.flush()
            changed = navd_pass(extractor, index)
            changed["indexed"] = live_elements(index)
            progress.write(f" {changed['seconds']:.2f} s, {changed['requests']} requests\n")
            progress.write("incremental run, nothing changed ...")
            progress.flush()
            unchanged = navd_pass(extractor, index)
            progress.write(f" {unchanged['seconds']:.2f} s, {unchanged['requests']} requests\n")
        finally:
            progress.write("reverting the changes (the cached tree stays as generated) ...\n")
            revert_changes(hdfs, cache, changes)
    finally:
        extractor.state.close()
    expected = cache.tree.entries + len(changes.created) - len(changes.deleted)
    if changed["indexed"] != expected:
        raise RuntimeError(f"after the incremental run Solr holds {changed['indexed']} live elements, "
                           f"expected {expected}")
    time_fraction = changed["seconds"] / full["best_seconds"]["navd"]
    request_fraction = changed["requests"] / last_full["requests"]
    return {"created": len(changes.created), "deleted": len(changes.deleted),
            "changed_directories": len(changes.directories), "changed": changed, "unchanged": unchanged,
            "time_fraction": time_fraction, "request_fraction": request_fraction,
            "unchanged_time_fraction": unchanged["seconds"] / full["best_seconds"]["navd"],
            "unchanged_request_fraction": unchanged["requests"] / last_full["requests"],
            "goal": INCREMENTAL_GOAL, "time_met": time_fraction <= INCREMENTAL_GOAL,
            "requests_met": request_fraction <= INCREMENTAL_GOAL}


def measure_rss_subset(hdfs: DevHdfs, index: SolrIndex, tree: Tree) -> dict[str, Any]:
    """A full run over the first datasets holding about a quarter of the files: the peak RSS
    should not depend on the tree's size."""
    per_dataset: dict[str, int] = {}
    for leaf, count in tree.leaves:
        dataset = leaf.split("/")[3]
        per_dataset[dataset] = per_dataset.get(dataset, 0) + count
    roots, files = [], 0
    for dataset, count in per_dataset.items():
        if files >= tree.files // 4:
            break
        roots.append(f"{DATA}/{dataset}")
        files += count
    clear_cores(index)
    with tempfile.TemporaryDirectory(prefix="navd-bench-hdfs-state-") as state:
        sys.stderr.write(f"peak RSS at a quarter of the tree: navd full run over {len(roots)} datasets, "
                         f"{files:,} files (child process) ...")
        sys.stderr.flush()
        result = navd_full_child(hdfs, index, Path(state), roots, "bench-hdfs-subset##1")
    sys.stderr.write(f" {result['seconds']:.2f} s, peak RSS {result['peak_rss_mb']:.0f} MB\n")
    return {"roots": roots, "files": files, **result}


def measure_fsimage(hdfs: DevHdfs, index: SolrIndex, cache: Cache, full: dict[str, Any]) -> dict[str, Any]:
    clear_cores(index)
    config = NavdConfig(solr=index.config)
    sys.stderr.write("fsimage: starting Spark local[2] (untimed) ...")
    sys.stderr.flush()
    start = time.perf_counter()
    # The session load_fsimage would start itself: made first so its JVM start is timed apart.
    spark, _owned = _spark_session("local[2]", "navd-bench-hdfs-fsimage")
    spark_start = time.perf_counter() - start
    try:
        sys.stderr.write(f" {spark_start:.1f} s; load_fsimage ...")
        sys.stderr.flush()
        start = time.perf_counter()
        report = load_fsimage(config, str(cache.dump), master="local[2]", default_fs=hdfs.default_fs,
                              extractor_run_id="bench-hdfs-fsimage##1", root=ROOT)
        seconds = time.perf_counter() - start
    finally:
        spark.stop()
    indexed = live_elements(index)
    sys.stderr.write(f" {seconds:.2f} s, {report.elements:,} elements\n")
    if report.elements != cache.tree.entries or indexed != cache.tree.entries or report.bad_lines:
        raise RuntimeError(f"fsimage: {report.elements} elements ({indexed} in Solr, {report.bad_lines} bad "
                           f"lines), the tree has {cache.tree.entries}")
    rate = report.elements / seconds
    return {"dump_mb": cache.dump.stat().st_size / 1e6, "seconds": seconds, "spark_start_seconds": spark_start,
            "elements": report.elements, "relations": report.relations, "elements_per_s": rate,
            "elements_per_s_with_spark_start": report.elements / (seconds + spark_start),
            "webhdfs_elements_per_s": full["entries_per_s"], "vs_webhdfs": rate / full["entries_per_s"]}


# --- reporting -------------------------------------------------------------------------------------


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def print_report(report: dict[str, Any]) -> None:
    setup, tree, full, inc = report["setup"], report["tree"], report["full"], report["incremental"]
    rss, fs = report["rss"], report.get("fsimage")
    out = sys.stdout
    out.write(f"\nnavd HDFS extractor benchmark: Hadoop {setup['hadoop']} (NameNode + DataNode) and Solr "
              f"{setup['solr_version']} (heap {setup['heap']}) on the same host; {setup['cpus']} CPU(s); "
              f"Python {setup['python']}; navd {DEFAULT_WORKERS} WebHDFS workers\n")
    out.write(f"load average at start {setup['loadavg_start']}, at end {setup['loadavg_end']}\n")
    out.write(f"tree: {tree['files']:,} files in {tree['leaf_directories']} leaf directories "
              f"({tree['leaves_over_1000']} with > 1000 entries), {tree['directories']} directories, "
              f"{tree['entries']:,} entries under {ROOT} ({'cached' if tree['cached'] else 'generated'}: "
              f"{tree['generated_seconds']:.0f} s to generate with FsShell)\n\n")

    out.write(f"1. full run{'':<38} {'run 1':>9} {'run 2':>9} {'best':>9} {'requests':>9}\n")
    rows = (("bare LISTSTATUS_BATCH crawl [baseline]", "bare"), ("navd run_pass(full) + close -> Solr", "navd"))
    for label, key in rows:
        runs = full["runs"][key]
        out.write(f"   {label:<45} {runs[0]['seconds']:8.2f}s {runs[1]['seconds']:8.2f}s "
                  f"{full['best_seconds'][key]:8.2f}s {runs[-1]['requests']:>9,}\n")
    nav = full["runs"]["navd"][-1]
    out.write(f"   navd: {nav['entries']:,} entries -> {nav['records']:,} records, {nav['directories_listed']} "
              f"directories listed; Solr holds {nav['indexed']:,} live elements; "
              f"{full['entries_per_s']:,.0f} entries/s\n")
    out.write(f"   navd / bare: {full['ratio']:.2f}x   goal <= {RATIO_GOAL}x: {_met(full['met'])}\n\n")

    c, u = inc["changed"], inc["unchanged"]
    out.write(f"2. incremental: {inc['created']:,} files created + {inc['deleted']:,} deleted "
              f"({(inc['created'] + inc['deleted']) / tree['files']:.1%} of the files) in "
              f"{inc['changed_directories']} leaf directories\n")
    out.write(f"   after the changes: {c['seconds']:.2f} s = {inc['time_fraction']:.1%} of the full run, "
              f"{c['requests']:,} requests = {inc['request_fraction']:.1%} ({c['directories_listed']} directories "
              f"listed, {c['directories_unchanged']} unchanged, {c['entries']:,} entries, {c['deletions']:,} "
              f"deletions); Solr holds {c['indexed']:,} live elements\n")
    out.write(f"   goal <= {INCREMENTAL_GOAL:.0%}: time {_met(inc['time_met'])}, requests {_met(inc['requests_met'])}\n")
    out.write(f"   nothing changed: {u['seconds']:.2f} s = {inc['unchanged_time_fraction']:.1%} of the full run, "
              f"{u['requests']:,} requests = {inc['unchanged_request_fraction']:.1%}\n\n")

    out.write(f"3. peak RSS of the extractor process (VmHWM; RSS after imports {rss['full_runs'][0]['rss_before_mb']:.0f} MB):\n")
    for run in rss["full_runs"]:
        out.write(f"   full run, {tree['files']:,} files: {run['peak_rss_mb']:.0f} MB\n")
    sub = rss.get("subset")
    if sub:
        out.write(f"   full run, {sub['files']:,} files ({len(sub['roots'])} datasets): {sub['peak_rss_mb']:.0f} MB\n")
    out.write(f"   goal < {RSS_GOAL_MB:.0f} MB at {tree['files']:,} files: {_met(rss['met'])}\n\n")

    if fs:
        out.write(f"4. fsimage bulk path: load_fsimage(master=\"local[2]\") of a {fs['dump_mb']:.1f} MB Delimited dump: "
                  f"{fs['elements']:,} elements in {fs['seconds']:.2f} s = {fs['elements_per_s']:,.0f} elements/s "
                  f"({fs['elements_per_s_with_spark_start']:,.0f}/s counting the Spark start, "
                  f"{fs['spark_start_seconds']:.1f} s)\n")
        out.write(f"   WebHDFS full run: {fs['webhdfs_elements_per_s']:,.0f} elements/s; fsimage / WebHDFS: "
                  f"{fs['vs_webhdfs']:.2f}x\n")
    out.write(f"\nfigures written to {RESULT_FILE.relative_to(REPO)}\n")


# --- main ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200_000, help="files in the generated tree (default 200000)")
    parser.add_argument("--changed-dirs", type=int, default=20,
                        help="leaf directories the incremental benchmark's 1%% of changes fall in (default 20 "
                             "of 300)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
    parser.add_argument("--no-subset", action="store_true", help="skip the peak-RSS run over a quarter of the tree")
    parser.add_argument("--no-fsimage", action="store_true", help="skip the fsimage bulk path")
    args = parser.parse_args(argv)
    if args.files < 1000 or args.changed_dirs < 1:
        parser.error("--files must be >= 1000, --changed-dirs >= 1")

    setup_logging("console", "warning")  # keep navd's structlog lines out of the report
    loadavg_start = _loadavg()
    home, tree, meta = open_cache(args.files)
    changes = make_changes(tree, args.changed_dirs)
    hdfs = DevHdfs(home, HdfsPorts.free())
    solr_home = Path(tempfile.mkdtemp(prefix="navd-bench-solr-"))
    state = Path(tempfile.mkdtemp(prefix="navd-bench-hdfs-state-"))
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    server = EmbeddedSolr(solr_home, free_port(), args.heap, distribution)
    fsimage: dict[str, Any] | None = None
    subset: dict[str, Any] | None = None
    try:
        hdfs.stop()  # daemons a killed earlier run may have left on this home
        sys.stderr.write(f"starting HDFS ({home.relative_to(REPO)}) ...\n")
        hdfs.start(timeout=600)  # a cached namespace of 200k files loads its edits first
        cache = ensure_tree(hdfs, home, tree, meta)
        distribution.ensure()
        status = server.start()
        with SolrIndex(server.client_config()) as index:
            init_solr(index)
            full = measure_full(hdfs, index, tree, state)
            incremental = measure_incremental(hdfs, index, cache, changes, state, full)
            if not args.no_subset:
                subset = measure_rss_subset(hdfs, index, tree)
            if not args.no_fsimage:
                fsimage = measure_fsimage(hdfs, index, cache, full)
            solr_version = status.solr_version or "unknown"
    finally:
        server.stop()
        hdfs.stop()
        shutil.rmtree(solr_home, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)

    peaks = [r["peak_rss_mb"] for r in full["runs"]["navd"]]
    report: dict[str, Any] = {
        "setup": {"hadoop": hdfs.distribution.version, "solr_version": solr_version, "heap": args.heap,
                  "cpus": os.cpu_count() or 1, "python": platform.python_version(),
                  "navd_version": navd.__version__, "git_commit": _git_commit(),
                  "when": datetime.now(UTC).isoformat(timespec="seconds"),
                  "loadavg_start": loadavg_start, "loadavg_end": _loadavg(), "workers": DEFAULT_WORKERS},
        "tree": {"files": tree.files, "leaf_directories": len(tree.leaves),
                 "leaves_over_1000": sum(1 for _, n in tree.leaves if n > 1000),
                 "directories": tree.directories, "entries": tree.entries, "cached": cache.cached,
                 "generated_seconds": cache.generated_seconds, "home": str(home.relative_to(REPO))},
        "full": full,
        "incremental": incremental,
        "rss": {"full_runs": full["runs"]["navd"], "subset": subset, "goal_mb": RSS_GOAL_MB,
                "met": max(peaks) < RSS_GOAL_MB},
        "fsimage": fsimage,
    }
    RESULT_FILE.parent.mkdir(exist_ok=True)
    RESULT_FILE.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print_report(report)
    return 0


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())

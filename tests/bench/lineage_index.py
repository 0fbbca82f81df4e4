"""The generated lineage graph (lineage_graph.py) loaded into a cached Solr home, and `navd serve`
over it: shared by bench_api.py and bench_lineage.py.

A home is loaded once into `.bench/solr-lineage-<elements>-<seed>/` (standalone) or
`.bench/solr-lineage-cloud<shards>-<elements>-<seed>/` (one SolrCloud node with the ZooKeeper
Solr embeds, collections of `<shards>` shards); `manifest.json` beside the home, written last,
marks it complete, so reruns start that Solr and skip loading. Delete the directory to load again;
a manifest of another generator version reloads.

Loading goes through navd's own IndexWriter, from several producer processes (the generator is
a pure function of (seed, job): process i writes job blocks i, i + n, i + 2n, ...), each with its
own writer (bigger batches, its writer threads), inside `SolrIndex.bulk_load` (Solr's soft
commits off during the load, one hard commit at the end). `timed_load` loads a throwaway home,
with or without bulk_load, to compare the two.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import requests

from navd.config import DEFAULT_SOLR_VERSION, SolrConfig, default_solr_dist_dir
from navd.index.admin import init_solr
from navd.errors import SolrUnavailable
from navd.index.client import IndexWriter, SolrIndex
from navd.solr.server import ZK_PORT_OFFSET, EmbeddedSolr, SolrDistribution, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lineage_graph  # noqa: E402 - a sibling module of this script, not a package

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / ".bench"
CORES = ("elements", "relations")
#: Jobs a producer process writes before it takes its next block (and reports progress).
BLOCK = 200


@dataclasses.dataclass(frozen=True)
class Manifest:
    generator_version: int
    elements: int
    seed: int
    jobs: int
    indexed_elements: int
    indexed_relations: int
    load_seconds: float
    shards: int = 0  # 0: a standalone core; else the SolrCloud collections' shards
    port: int = 0  # a SolrCloud home's node is registered in its ZooKeeper by port: reused
    producers: int = 1
    batch_size: int = 1000
    writer_threads: int = 2
    heap: str = ""
    bulk: bool = True  # soft commits off during the load (SolrIndex.bulk_load)

    @property
    def docs_per_second(self) -> float:
        return (self.indexed_elements + self.indexed_relations) / max(self.load_seconds, 1e-9)


@dataclasses.dataclass(frozen=True)
class LoadSettings:
    producers: int = 2
    batch_size: int = 5000
    writer_threads: int = 2
    bulk: bool = True  # through SolrIndex.bulk_load: soft commits off, one commit at the end


# -- the cached home -------------------------------------------------------------------------

def cache_dir(shape: lineage_graph.Shape, shards: int = 0) -> Path:
    mode = f"cloud{shards}-" if shards else ""
    return BENCH / f"solr-lineage-{mode}{shape.elements}-{shape.seed}"


def read_manifest(cache: Path) -> Manifest | None:
    try:
        manifest = Manifest(**json.loads((cache / "manifest.json").read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return manifest if manifest.generator_version == lineage_graph.GENERATOR_VERSION else None


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        # As Jetty binds: a port with connections of a stopped server in TIME_WAIT is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cloud_port() -> int:
    """A free port for Solr whose embedded ZooKeeper's port (Solr's + 1000) is free as well."""
    for _ in range(100):
        port = free_port()
        if port + ZK_PORT_OFFSET < 65536 and _bindable(port + ZK_PORT_OFFSET):
            return port
    raise SystemExit("no free pair of ports (Solr, Solr + 1000) on 127.0.0.1")


def solr_for(cache: Path, heap: str, shards: int = 0, port: int = 0) -> EmbeddedSolr:
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    if not shards:
        return EmbeddedSolr(cache / "home", free_port(), heap, distribution)
    if port and not (_bindable(port) and _bindable(port + ZK_PORT_OFFSET)):
        raise SystemExit(f"the SolrCloud home {cache} is registered on port {port} (and {port + ZK_PORT_OFFSET} "
                         f"for ZooKeeper), which is in use: free it or delete the directory to load again")
    return EmbeddedSolr(cache / "home", port or cloud_port(), heap, distribution, cloud=True)


def client_config(server: EmbeddedSolr, shards: int = 0, **settings: object) -> SolrConfig:
    if shards:
        settings = {"shards": shards, **settings}
    return server.client_config(**settings)


def _produce(config: SolrConfig, seed: int, jobs: int, first_block: int, step: int,
             settings: LoadSettings, done: Any) -> None:
    """One producer process: job blocks first_block, first_block + step, ... through its own
    IndexWriter."""
    with SolrIndex(config) as index:
        writer = IndexWriter(index, batch_size=settings.batch_size, threads=settings.writer_threads)
        for block in range(first_block, (jobs + BLOCK - 1) // BLOCK, step):
            end = min(jobs, (block + 1) * BLOCK)
            for t in range(block * BLOCK, end):
                writer.write_all(lineage_graph.job_records(seed, t))
            with done.get_lock():
                done.value += end - block * BLOCK
        if not writer.close():
            raise SystemExit(1)


def load(server: EmbeddedSolr, shape: lineage_graph.Shape, settings: LoadSettings, shards: int = 0,
         heap: str = "") -> Manifest:
    """Write the generated graph through IndexWriter from `settings.producers` processes, then
    hard-commit and count."""
    started = time.monotonic()
    jobs = lineage_graph.jobs_for(shape)
    # A long timeout: on a busy shared host a batch can wait minutes for Solr's CPU, and a
    # timed-out batch is posted again, which only adds to the load.
    config = client_config(server, shards, timeout_seconds=600.0)
    with SolrIndex(config) as index:
        init_solr(index)
        with index.bulk_load() if settings.bulk else nullcontext(index):
            _write(config, shape, settings, jobs, started)
        if not settings.bulk:  # what plain writers rely on: soft commits, and a commit to count
            for core in CORES:
                index.commit(core)
        counts = index.count("elements"), index.count("relations")
    return Manifest(lineage_graph.GENERATOR_VERSION, shape.elements, shape.seed, jobs, *counts,
                    round(time.monotonic() - started, 1), shards, server.port if shards else 0,
                    settings.producers, settings.batch_size, settings.writer_threads, heap, settings.bulk)


def _write(config: SolrConfig, shape: lineage_graph.Shape, settings: LoadSettings, jobs: int,
           started: float) -> None:
    """The producer processes, each through its own IndexWriter; returns when all are done."""
    context = multiprocessing.get_context("spawn")  # children start clean: no inherited pools
    done = context.Value("q", 0)
    processes = [context.Process(target=_produce, name=f"producer-{i}", daemon=True,
                                 args=(config, shape.seed, jobs, i, settings.producers, settings, done))
                 for i in range(settings.producers)]
    try:
        for process in processes:
            process.start()
        reported = 0
        while any(p.is_alive() for p in processes):
            time.sleep(1)
            if done.value - reported >= jobs / 10:
                reported = done.value
                elapsed = time.monotonic() - started
                print(f"  loading: {reported}/{jobs} jobs, {elapsed:.0f}s", flush=True)
        for process in processes:
            process.join()
        if any(p.exitcode != 0 for p in processes):
            raise SystemExit("the generated graph was not completely written to Solr (see the log)")
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join()


def timed_load(shape: lineage_graph.Shape, heap: str, settings: LoadSettings) -> Manifest:
    """Load `shape` into a throwaway home (removed afterwards) and return its manifest: the
    load time of one mode, for comparing bulk_load with plain writes at the same size."""
    cache = BENCH / f"solr-lineage-timed-{'bulk' if settings.bulk else 'plain'}-{shape.elements}-{shape.seed}"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    server = solr_for(cache, heap)
    try:
        server.start()
        return load(server, shape, settings, heap=heap)
    finally:
        server.stop()
        shutil.rmtree(cache, ignore_errors=True)


@contextmanager
def cached_solr(shape: lineage_graph.Shape, heap: str, shards: int = 0,
                settings: LoadSettings = LoadSettings()) -> Iterator[tuple[EmbeddedSolr, Manifest]]:
    """The embedded Solr over the cached index of `shape` (standalone, or SolrCloud with
    `shards`), loaded first if the cache is not complete; stopped on the way out."""
    cache = cache_dir(shape, shards)
    manifest = read_manifest(cache)
    if manifest is None:
        if (cache / "home").is_dir() and solr_for(cache, heap).status().running:
            raise SystemExit(f"{cache} is incomplete and its Solr runs: another run is loading it (or was killed: "
                             f"stop that Solr with `navd solr stop --home {cache / 'home'}`)")
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
    server = solr_for(cache, heap, shards, manifest.port if manifest else 0)
    try:
        server.start()
        if manifest is None:
            print(f"loading {shape.elements:,} elements (seed {shape.seed}) into {cache} "
                  f"({settings.producers} producers, batches of {settings.batch_size}, "
                  f"{settings.writer_threads} writer threads each, heap {heap}) ...", flush=True)
            manifest = load(server, shape, settings, shards, heap)
            (cache / "manifest.json").write_text(json.dumps(dataclasses.asdict(manifest), indent=1))
            print(f"loaded in {manifest.load_seconds:.0f}s: {manifest.docs_per_second:,.0f} docs/s", flush=True)
        else:
            print(f"cached index {cache}", flush=True)
            wait_for_cores(server)
        yield server, manifest
    finally:
        server.stop()


def wait_for_cores(server: EmbeddedSolr, timeout: float = 600) -> None:
    """Until both cores of a cached index answer: Solr answers before it has opened a large
    index (503 "SolrCore is loading"), and the timed queries run without retries."""
    deadline = time.monotonic() + timeout
    with SolrIndex(server.client_config()) as index:
        while True:
            try:
                for core in CORES:
                    index.count(core)
                return
            except SolrUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)


def solr_footprint(index: SolrIndex) -> dict[str, int]:
    """Index bytes on disk over every core (replica) of the node, and the JVM's heap in use."""
    cores = index.request("GET", "admin/cores", params={"action": "STATUS"}, what="core status")
    disk = sum(int(c.get("index", {}).get("sizeInBytes", 0)) for c in cores.get("status", {}).values())
    memory = index.system_info().get("jvm", {}).get("memory", {}).get("raw", {})
    return {"index_bytes": disk, "heap_used_bytes": int(memory.get("used", 0)),
            "heap_max_bytes": int(memory.get("max", 0))}


# -- the server --------------------------------------------------------------------------------

def write_config(server: EmbeddedSolr, directory: Path, port: int, shards: int = 0) -> Path:
    """A navd.toml that reaches `server` by URL (as its read-only user when it has one: a SolrCloud
    home runs without authentication), and serves on `port`."""
    credentials = server.credentials("reader")
    if credentials is None and not shards:
        raise SystemExit(f"no reader credentials in {server.home}")
    auth = ""
    if credentials is not None:
        password_file = directory / "reader-password"
        password_file.write_text(credentials[1])
        password_file.chmod(0o600)
        auth = f'auth = "basic"\nusername = "{credentials[0]}"\npassword_file = "{password_file}"\n'
    config = directory / "navd.toml"
    config.write_text(f'[cluster]\nname = "{lineage_graph.CLUSTER}"\n'
                      f'[solr]\nurl = "{server.url}"\n{auth}' + (f"shards = {shards}\n" if shards else "")
                      + f'[server]\nhost = "127.0.0.1"\nport = {port}\nauth = "none"\n'
                      # the server walks every time: the hub cache is measured in-process (bench_lineage)
                      + '[lineage]\nhub_cache_entries = 0\n[logging]\nlevel = "warning"\n')
    config.chmod(0o600)
    return config


@contextmanager
def navd_serve(config: Path, directory: Path, port: int) -> Iterator[str]:
    """`navd serve` as a user runs it; its URL once /readyz answers; stopped (SIGTERM) on exit."""
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(directory / "state")}
    log = (directory / "serve.log").open("w")
    process = subprocess.Popen([str(Path(sys.executable).parent / "navd"), "serve"], env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"navd serve exited {process.returncode}: {(directory / 'serve.log').read_text()}")
            try:
                if requests.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("navd serve did not answer /readyz within 60 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


# -- measuring -----------------------------------------------------------------------------------

def percentile(values: list[float], p: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def pick_roots(manifest: Manifest, count: int, seed: int) -> list[str]:
    """`count` random tables (not temporaries: those are deleted), by identity."""
    rng = random.Random(f"roots/{seed}")
    roots: list[str] = []
    while len(roots) < count:
        t = rng.randrange(manifest.jobs)
        if not lineage_graph.is_temporary(manifest.seed, t):
            roots.append(lineage_graph.table_ref(manifest.seed, t).identity)
    return roots

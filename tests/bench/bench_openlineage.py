"""OpenLineage intake throughput: events/s through `POST /api/v1/lineage` of a real `navd serve`
against a raw bulk post of the same resulting documents to Solr, in the same run.

Run: python tests/bench/bench_openlineage.py [--events 2000] [--clients 8] [--rounds 2]

It starts its own embedded Solr (navd's own code, temporary home, free port) and `navd serve`
with `[openlineage] enabled` as navd's admin user (the intake writes), then, each into emptied
cores, alternating, `--rounds` times:

- raw [baseline]: the documents the intake would write for the same events (navd.openlineage.
  mapping, the executions as the first event of a run writes them, navd.index.documents),
  serialised before the clock starts, posted to each core's /update in batches of the writer's
  size from as many threads as the writer uses: Solr's own speed plus HTTP;
- intake: the events posted by `--clients` threads (one requests.Session each), each a RunEvent
  COMPLETE of its own run with 3 inputs, 2 outputs (schema facets) and 20 column edges; timed
  from the first post until the last 201 (201 means Solr acknowledged the event's documents).

- bare: the same events through a second `navd serve` with no authentication and no events
  kept (`[openlineage] keep_events = 0`);
- API key + kept: through a third with `[server] auth = "basic"`, each event sent with
  `Authorization: Bearer` and an API key (`navd server add-api-key`), and every event kept as
  posted (the `keep_events` default): what an emitter configured with `auth.type = api_key`
  costs against the bare intake. Ratios are printed against the raw baseline and against bare;
  no thresholds.

Each run is checked afterwards (hard commit): the cores hold exactly the expected documents.
The headline is intake / raw (best round of each); the goal is >= 0.5.

The fair baseline beside it: once, untimed, the same events go through a `navd serve` whose
Solr URL is a recording proxy (tests/bench/fair_baseline.py), which keeps the update bodies the
intake posted; each round then posts those very bodies raw into fresh cores of the same Solr
(the intake's own batches, parameters and commits; `[solr] writer_threads` requests per core at
once), timed. intake / raw post of what it wrote: the goal is >= 0.7.

Then small events beside a large one: the latency of a small event (one of the above) posted
alone, one after the other, against that of small events posted while a large event is in flight
(`--big-outputs` Hive tables, written by the intake in slices; its own time printed too): the
ratio says how much a large event holds up the others (1 would be not at all; before the
intake wrote large events in slices, a small event waited for the whole large one).

Figures are printed and written to .bench/openlineage.json (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir
from navd.index.admin import init_solr
from navd.index.client import SolrIndex, batches, serialise
from navd.index.documents import element_document, relation_document, stub_document
from navd.logs import setup_logging
from navd.model import Element, ElementStub, Relation
from navd.openlineage.mapping import MappingSettings, map_event
from navd.openlineage.schema import validate
from navd.server.api_keys import add_api_key
from navd.server.roles import Role
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fair_baseline import Recorded, RecordingProxy, describe, fresh_cores, post_recorded  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RESULT_FILE = REPO / ".bench" / "openlineage.json"
GOAL = 0.5
RAW_POST_GOAL = 0.7
CLUSTER = "bench"
HIVE = "hive://metastore:9083"
JOB_NAMESPACE = "airflow://scheduler"
PRODUCER = "https://github.com/navd/navd/tests/bench/bench_openlineage.py"
COLUMNS = 10  # per input table; the 20 column edges read 3 inputs' columns
SERVE_SECONDS = 60


def event(i: int) -> dict[str, Any]:
    """Event i: job `etl.task_<i % 50>`, its own run, reading `bench.in_<i % 40>_{0,1,2}` and
    writing `bench.out_<i>_{0,1}`, 10 columns each of the outputs fed by 2 input columns (20
    column edges, DIRECT, plus a dataset-wide INDIRECT FILTER)."""
    inputs = [(HIVE, f"bench.in_{i % 40}_{k}") for k in range(3)]
    outputs = [(HIVE, f"bench.out_{i}_{k}") for k in range(2)]

    def schema(prefix: str) -> dict[str, Any]:
        return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json",
                "fields": [{"name": f"{prefix}{c}", "type": "string"} for c in range(COLUMNS)]}

    def lineage(k: int) -> dict[str, Any]:
        fields = {f"o{c}": {"inputFields": [{"namespace": HIVE, "name": inputs[(c + k) % 3][1], "field": f"c{c}",
                                             "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}
                  for c in range(COLUMNS)}
        return {"_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
                "fields": fields}

    return {
        "eventType": "COMPLETE", "eventTime": "2026-11-23T06:00:00Z", "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.UUID(int=i + 1, version=4)), "facets": {}},
        "job": {"namespace": JOB_NAMESPACE, "name": f"etl.task_{i % 50}", "facets": {}},
        "inputs": [{"namespace": ns, "name": name, "facets": {"schema": schema("c")}} for ns, name in inputs],
        "outputs": [{"namespace": ns, "name": name, "facets": {"schema": schema("o"), "columnLineage": lineage(k)}}
                    for k, (ns, name) in enumerate(outputs)],
    }


def documents(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """core -> the documents the intake writes for `events` (stubs under `stubs`)."""
    settings = MappingSettings({HIVE: CLUSTER}, CLUSTER)
    out: dict[str, list[dict[str, Any]]] = {"elements": [], "stubs": [], "relations": []}
    for body in events:
        mapped = map_event(body, validate(body), settings)
        assert mapped.execution is not None
        out["elements"].append(element_document(mapped.execution))
        for record in mapped.records:
            if isinstance(record, Element):
                out["elements"].append(element_document(record))
            elif isinstance(record, ElementStub):
                out["stubs"].append(stub_document(record))
            elif isinstance(record, Relation):
                out["relations"].append(relation_document(record))
    return out


def empty(index: SolrIndex) -> None:
    for core in ("elements", "relations", "runs"):  # runs: the events kept as posted
        index.delete_query(core, "*:*")
        index.commit(core)


def counts(index: SolrIndex) -> dict[str, int]:
    for core in ("elements", "relations"):
        index.commit(core)
    return {core: index.count(core) for core in ("elements", "relations")}


def raw_post(index: SolrIndex, docs: dict[str, list[dict[str, Any]]]) -> float:
    """Seconds to post the pre-serialised documents, elements and stubs, then relations."""
    size, threads = index.config.batch_size, index.config.writer_threads
    bodies = [(index.core("elements"), serialise(b), {}) for b in batches(docs["elements"], size)]
    bodies += [(index.core("elements"), serialise(b), {"failOnVersionConflicts": "false"})
               for b in batches(docs["stubs"], size)]
    bodies += [(index.core("relations"), serialise(b), {}) for b in batches(docs["relations"], size)]
    local = threading.local()
    auth = index.session.auth

    def post(item: tuple[str, bytes, dict[str, str]]) -> None:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
            session.auth = auth
        core, body, params = item
        answer = session.post(f"{index.base_url}/{core}/update", data=body, params=params,
                              headers={"Content-Type": "application/json"}, timeout=120)
        answer.raise_for_status()

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(post, bodies))
    return time.perf_counter() - started


def intake_post(url: str, bodies: list[bytes], clients: int, api_key: str | None = None) -> float:
    """Seconds for `clients` threads to post every event and get its 201 (with the API key as
    `Authorization: Bearer` when given)."""
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
    local = threading.local()
    codes: dict[int, int] = {}

    def post(body: bytes) -> None:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
        answer = session.post(f"{url}/api/v1/lineage", data=body, headers=headers, timeout=120)
        codes[answer.status_code] = codes.get(answer.status_code, 0) + 1

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(post, bodies))
    elapsed = time.perf_counter() - started
    if set(codes) != {201}:
        raise SystemExit(f"the intake answered {codes}, not 201 to every event")
    return elapsed


def big_event(outputs: int) -> dict[str, Any]:
    """A COMPLETE writing `outputs` Hive tables (no facets): a large event."""
    return {"eventType": "COMPLETE", "eventTime": "2026-11-23T06:00:00Z", "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.uuid4()), "facets": {}},
            "job": {"namespace": JOB_NAMESPACE, "name": "etl.big", "facets": {}},
            "outputs": [{"namespace": HIVE, "name": f"bench.big_{n}"} for n in range(outputs)]}


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def large_events_in_flight(url: str) -> float | None:
    """The intake's gauge; None from a navd without it (one that wrote a large event at once)."""
    for line in requests.get(f"{url}/metrics", timeout=30).text.splitlines():
        if line.startswith("navd_openlineage_large_events_in_flight "):
            return float(line.split()[1])
    return None


def beside_a_large_event(url: str, small: list[bytes], big_outputs: int) -> dict[str, float]:
    """Seconds per small event alone (median), per small event posted while a large one is in
    flight (median), and for the large event itself."""
    session = requests.Session()

    def post(body: bytes) -> float:
        started = time.perf_counter()
        answer = session.post(f"{url}/api/v1/lineage", data=body, headers={"Content-Type": "application/json"},
                              timeout=600)
        if answer.status_code != 201:
            raise SystemExit(f"the intake answered {answer.status_code}: {answer.text[:300]}")
        return time.perf_counter() - started

    alone = [post(body) for body in small[:50]]
    big = json.dumps(big_event(big_outputs)).encode()
    big_seconds: list[float] = []
    worker = threading.Thread(target=lambda: big_seconds.append(post_alone(url, big)))
    worker.start()
    deadline = time.monotonic() + 120
    while worker.is_alive() and time.monotonic() < deadline:
        in_flight = large_events_in_flight(url)
        if in_flight is None:  # no gauge to tell: give the post time to arrive
            time.sleep(0.3)
            break
        if in_flight >= 1:
            break
        time.sleep(0.01)
    beside: list[float] = []
    for body in small[50:]:
        if not worker.is_alive():
            break
        beside.append(post(body))
    worker.join()
    if not beside:
        raise SystemExit("the large event was answered before any small one was posted beside it")
    return {"small_alone_seconds": median(alone), "small_beside_large_seconds": median(beside),
            "small_beside_large_count": len(beside), "large_seconds": big_seconds[0]}


def post_alone(url: str, body: bytes) -> float:
    started = time.perf_counter()
    answer = requests.post(f"{url}/api/v1/lineage", data=body, headers={"Content-Type": "application/json"},
                           timeout=600)
    if answer.status_code != 201:
        raise SystemExit(f"the intake answered {answer.status_code} to the large event: {answer.text[:300]}")
    return time.perf_counter() - started


def write_config(server: EmbeddedSolr, directory: Path, port: int, *, auth: str = "none",
                 keep_events: int | None = None, solr_url: str | None = None) -> Path:
    """A navd.toml that writes to `server` (through `solr_url` when given) as navd's admin user
    and serves the intake on `port`, in `directory`: `auth` `none`, or `basic` with the API keys
    of `directory`/api-keys; `keep_events` when given (else its default)."""
    directory.mkdir(parents=True, exist_ok=True)
    credentials = server.credentials()
    if credentials is None:
        raise SystemExit(f"no admin credentials in {server.home}")
    password_file = directory / "admin-password"
    password_file.write_text(credentials[1])
    password_file.chmod(0o600)
    config = directory / "navd.toml"
    config.write_text(f'[cluster]\nname = "{CLUSTER}"\n'
                      f'[solr]\nurl = "{solr_url or server.url}"\nauth = "basic"\nusername = "{credentials[0]}"\n'
                      f'password_file = "{password_file}"\n'
                      f'[server]\nhost = "127.0.0.1"\nport = {port}\nauth = "{auth}"\n'
                      f'users_file = "{directory / "users"}"\napi_keys_file = "{directory / "api-keys"}"\n'
                      f'[openlineage]\nenabled = true\nspool_dir = "{directory / "spool"}"\n'
                      + (f"keep_events = {keep_events}\n" if keep_events is not None else "")
                      +                       f'[openlineage.namespaces]\n"{HIVE}" = "{CLUSTER}"\n'
                      f'[logging]\nlevel = "warning"\n')
    config.chmod(0o600)
    return config


@contextmanager
def navd_serve(config: Path, directory: Path, port: int) -> Iterator[str]:
    """`navd serve` as a user runs it; its URL once /readyz answers; stopped (SIGTERM) on exit."""
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(directory / "state")}
    log_path = directory / "serve.log"
    with log_path.open("w") as log:
        process = subprocess.Popen([str(Path(sys.executable).parent / "navd"), "serve"], env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVE_SECONDS
        while True:
            if process.poll() is not None:
                raise SystemExit(f"navd serve exited {process.returncode}: {log_path.read_text()}")
            try:
                if requests.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"navd serve did not answer /readyz within {SERVE_SECONDS} s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def record_intake(server: EmbeddedSolr, index: SolrIndex, home: Path, bodies: list[bytes],
                  clients: int) -> Recorded:
    """The update bodies the intake posts for `bodies`: one untimed run of a `navd serve` whose Solr
    is a recording proxy, into emptied cores."""
    directory = home / "recording"
    directory.mkdir()
    port = free_port()
    with RecordingProxy(server.url) as proxy:
        with navd_serve(write_config(server, directory, port, solr_url=proxy.url), directory, port) as url:
            empty(index)
            proxy.updates.clear()  # what serve's start-up wrote is not the intake's
            intake_post(url, bodies, clients)
            recorded = Recorded(tuple(proxy.updates))
    empty(index)
    return recorded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000, help="events per run (default 2000)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent posting clients (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="raw + intake rounds; the best counts (default 2)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
    parser.add_argument("--big-outputs", type=int, default=10_000,
                        help="tables of the large event small ones are posted beside (default 10000, the "
                             "[openlineage] max_datasets default)")
    args = parser.parse_args(argv)
    if min(args.events, args.clients, args.rounds, args.big_outputs) < 1:
        parser.error("--events, --clients, --rounds and --big-outputs must be >= 1")
    setup_logging("console", "warning")

    events = [event(i) for i in range(args.events)]
    bodies = [json.dumps(e).encode() for e in events]
    docs = documents(events)
    per_event = {k: len(v) / args.events for k, v in docs.items()}
    home = Path(tempfile.mkdtemp(prefix="navd-bench-ol-"))
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    server = EmbeddedSolr(home / "solr", free_port(), args.heap, distribution)
    raw_times: list[float] = []
    intake_times: list[float] = []
    bare_times: list[float] = []
    keyed_times: list[float] = []
    written_times: list[float] = []
    try:
        distribution.ensure()
        server.start()
        with SolrIndex(server.client_config()) as index:
            init_solr(index)
            recorded = record_intake(server, index, home, bodies, args.clients)
            port, bare_port, keyed_port = free_port(), free_port(), free_port()
            keyed_config = write_config(server, home / "keyed", keyed_port, auth="basic")
            api_key = add_api_key(home / "keyed" / "api-keys", "bench", Role.EDITOR)
            with navd_serve(write_config(server, home, port), home, port) as url, \
                    navd_serve(write_config(server, home / "bare", bare_port, keep_events=0), home / "bare",
                               bare_port) as bare_url, \
                    navd_serve(keyed_config, home / "keyed", keyed_port) as keyed_url:
                empty(index)
                raw_post(index, docs)  # warm-up: Solr's JIT
                intake_post(url, bodies[: min(200, len(bodies))], args.clients)
                intake_post(bare_url, bodies[: min(200, len(bodies))], args.clients)
                intake_post(keyed_url, bodies[: min(200, len(bodies))], args.clients, api_key)
                expected: dict[str, int] | None = None
                for _ in range(args.rounds):
                    empty(index)
                    raw_times.append(raw_post(index, docs))
                    expected = counts(index)
                    empty(index)
                    intake_times.append(intake_post(url, bodies, args.clients))
                    got = counts(index)
                    if got != expected:
                        raise SystemExit(f"the intake wrote {got} documents, the raw post {expected}")
                    for times, target, key in ((bare_times, bare_url, None), (keyed_times, keyed_url, api_key)):
                        empty(index)
                        times.append(intake_post(target, bodies, args.clients, key))
                        got = counts(index)
                        if got != expected:
                            raise SystemExit(f"the intake at {target} wrote {got} documents, the raw post {expected}")
                    with fresh_cores(index) as fresh:
                        written_times.append(post_recorded(index, fresh, recorded).seconds)
                        replayed = counts(fresh)
                    if replayed != got:
                        raise SystemExit(f"the intake wrote {got} documents, the recorded post {replayed}")
                fresh = [json.dumps(event(args.events + n)).encode() for n in range(2000)]
                beside = beside_a_large_event(url, fresh, args.big_outputs)
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    raw_rate, intake_rate = args.events / min(raw_times), args.events / min(intake_times)
    ratio = intake_rate / raw_rate
    bare_rate, keyed_rate = args.events / min(bare_times), args.events / min(keyed_times)
    written_rate = args.events / min(written_times)
    written_ratio = intake_rate / written_rate
    held_up = beside["small_beside_large_seconds"] / beside["small_alone_seconds"]
    report = {"events": args.events, "clients": args.clients, "documents_per_event": per_event,
              "raw_events_per_s": round(raw_rate, 1), "intake_events_per_s": round(intake_rate, 1),
              "ratio": round(ratio, 3), "goal": GOAL, "raw_seconds": raw_times, "intake_seconds": intake_times,
              "bare_events_per_s": round(bare_rate, 1), "api_key_kept_events_per_s": round(keyed_rate, 1),
              "bare_ratio": round(bare_rate / raw_rate, 3), "api_key_kept_ratio": round(keyed_rate / raw_rate, 3),
              "api_key_kept_vs_bare": round(keyed_rate / bare_rate, 3), "bare_seconds": bare_times,
              "api_key_kept_seconds": keyed_times,
              "raw_post": {"events_per_s": round(written_rate, 1), "seconds": written_times,
                           "ratio": round(written_ratio, 3), "goal": RAW_POST_GOAL,
                           "documents": recorded.documents, "requests": recorded.requests},
              "big_outputs": args.big_outputs, **beside, "small_beside_large_ratio": round(held_up, 2)}
    RESULT_FILE.parent.mkdir(exist_ok=True)
    RESULT_FILE.write_text(json.dumps(report, indent=2) + "\n")
    print(f"OpenLineage intake, {args.events} events (3 inputs, 2 outputs, 20 column edges; "
          f"{sum(per_event.values()):.0f} documents each), {args.clients} clients")
    print(f"  raw bulk post [baseline]  {raw_rate:8.1f} events/s")
    print(f"  intake POST /api/v1/lineage {intake_rate:6.1f} events/s   ratio {ratio:.2f} "
          f"(goal >= {GOAL}: {'met' if ratio >= GOAL else 'NOT met'})")
    print(f"  bare (no auth, no events kept) {bare_rate:5.1f} events/s   ratio {bare_rate / raw_rate:.2f}")
    print(f"  API key + events kept     {keyed_rate:8.1f} events/s   ratio {keyed_rate / raw_rate:.2f}, "
          f"{keyed_rate / bare_rate:.2f} x bare")
    print(f"  raw post of what the intake wrote [fair baseline] {written_rate:8.1f} events/s   intake / raw post "
          f"{written_ratio:.2f} (goal >= {RAW_POST_GOAL}: {'met' if written_ratio >= RAW_POST_GOAL else 'NOT met'})")
    print(f"    what the intake wrote: {describe(recorded)}")
    print(f"small events beside a large one ({args.big_outputs} outputs, answered in "
          f"{beside['large_seconds']:.2f} s):")
    print(f"  small event alone           {1000 * beside['small_alone_seconds']:8.1f} ms (median)")
    print(f"  small event beside it       {1000 * beside['small_beside_large_seconds']:8.1f} ms (median of "
          f"{beside['small_beside_large_count']:.0f})   ratio {held_up:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Lineage page benchmark: how long until a 400-node diagram is laid out and drawn in the browser
(goal < 1 s), measured with the page's own performance marks in Debian's headless Chromium.

Run: python tests/bench/bench_page.py [--runs 10] [--nodes 400] [--small 40]
Starts its own embedded Solr (temporary home, free port) and a `navd serve` over it, writes two
lineage trees (upstream and downstream of a root) through navd's writer (tests/page_graph.py), and loads
`/#/lineage/<root>?...&operations=1` in a fresh page per run. Phases from the page's marks:
fetch (the /api/lineage request until its JSON is parsed), layout (data received -> ELK layered
layout done), draw (layout done -> the frame after cytoscape rendered), and shown = layout + draw,
the goal's figure, total = fetch + shown, and navigation (the page's navigation start -> drawn:
what a reader waits; the page asks for the lineage before its libraries are loaded and run).
Baselines in the same run: the same for a small graph, and the bare /api/lineage fetch of the big
graph from an idle page (fetch + JSON parse, no drawing), made after each page run so that both
see the same load. Both fetches are split with the request's resource
timing and navd's Server-Timing: queue, server (navd's app), download, after the last byte.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from bisect import bisect_left
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
from playwright.sync_api import Browser, Page, sync_playwright

from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port
from navd.server.page import SECURITY_HEADERS, static_dir
from navd.state import write_atomically

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from page_graph import tree, write  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NAVD = str(Path(sys.executable).parent / "navd")
OUT = Path(__file__).resolve().parent.parent.parent / ".bench"


_TICKS = os.sysconf("SC_CLK_TCK")
#: the CPU groups sampled: the browser (Chromium and Playwright's driver, this process's other
#: descendants), Solr, navd serve, and everything else on the host (other work, this process too)
GROUPS = ("browser", "solr", "navd", "other")


def _cpu_seconds(pid: int) -> float:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # gone: a closed page's renderer
        return 0.0
    return (int(stat[11]) + int(stat[12])) / _TICKS


def _host_busy_seconds() -> float:
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9])
    return (user + nice + system + irq + softirq + steal) / _TICKS


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


class CpuSampler(threading.Thread):
    """Every `interval` seconds, the CPU-seconds used so far by each of GROUPS (from /proc), so
    that the CPU each group used in a window of a run (the fetch phase) can be read afterwards:
    the browser shares this host's cores with Solr and navd, which a real user's browser does not."""

    def __init__(self, solr_pid: int, navd_pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.solr_pid, self.navd_pid, self.interval = solr_pid, navd_pid, interval
        self.times: list[float] = []
        self.samples: list[dict[str, float]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        browser: set[int] = set()
        used_by: dict[int, float] = {}  # a browser process that ended keeps its last figure
        rescanned = 0.0
        while not self.stopping.is_set():
            now = time.time()
            if now - rescanned > 0.25:  # new pages start renderer processes
                browser = _descendants(os.getpid()) - {self.solr_pid, self.navd_pid} - _descendants(self.solr_pid)
                rescanned = now
            for pid in browser:
                used_by[pid] = max(used_by.get(pid, 0.0), _cpu_seconds(pid))
            sample = {"browser": sum(used_by.values()), "solr": _cpu_seconds(self.solr_pid),
                      "navd": _cpu_seconds(self.navd_pid)}
            sample["other"] = _host_busy_seconds() - sum(sample.values())
            self.times.append(now)
            self.samples.append(sample)
            self.stopping.wait(self.interval)

    def used(self, start: float, end: float) -> dict[str, float]:
        """CPU-milliseconds per group between two epoch times (the nearest samples after each)."""
        first = min(bisect_left(self.times, start), len(self.times) - 1)
        last = min(bisect_left(self.times, end), len(self.times) - 1)
        return {group: 1000 * (self.samples[last][group] - self.samples[first][group]) for group in GROUPS}


def pin_browser_apart(server_pids: list[int]) -> str:
    """Every thread of the server processes (Solr, navd serve) on CPU 0, this process and so the
    browser it starts next on the others: as if the browser ran on another machine, which a
    user's does. Threads made later inherit their creator's CPUs. Returns what was done."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs at least 2 CPUs")
    for pid in server_pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            os.sched_setaffinity(int(task.name), {cpus[0]})
    os.sched_setaffinity(0, set(cpus[1:]))
    return f"Solr and navd serve on CPU {cpus[0]}, the browser on CPU {','.join(map(str, cpus[1:]))}"


def serve(home: Path, solr: EmbeddedSolr) -> tuple[subprocess.Popen[bytes], str]:
    credentials = solr.credentials()
    assert credentials is not None
    password = home / "solr-admin-password"
    write_atomically(password, credentials[1].encode())
    port = free_port()
    config = home / "navd.toml"
    config.write_text(f'[solr]\nurl = "{solr.url}"\nauth = "basic"\nusername = "{credentials[0]}"\n'
                      f'password_file = "{password}"\n[logging]\nformat = "json"\n[daemon]\n'
                      f'state_dir = "{home / "state"}"\n[server]\nport = {port}\n')
    config.chmod(0o600)
    log = (home / "serve.log").open("wb")
    proc = subprocess.Popen([NAVD, "serve"], env={**os.environ, "NAVD_CONFIG": str(config)}, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/healthz", timeout=2).status_code == 200:
                return proc, url
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"navd serve did not answer: {(home / 'serve.log').read_text()}")


#: The timing of the last /api/lineage request a page made, from its resource timing entry:
#: queue (asked -> sent), server (sent -> first byte), app (navd's own part of it: the answer's
#: Server-Timing), download (first byte -> last byte); `end` is the last byte's time.
LINEAGE_REQUEST = """() => {
    const e = performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname.endsWith("/api/lineage")).pop();
    const app = e.serverTiming.find((t) => t.name === "app");
    return { start: e.startTime, queue: e.requestStart - e.startTime, server: e.responseStart - e.requestStart,
             app: app ? app.duration : NaN, download: e.responseEnd - e.responseStart, end: e.responseEnd };
}"""


#: The page's own files, which --against serves from a git revision (the libraries in static/vendor
#: and the API are this tree's for both).
PAGE_FILES = {"page.html": "text/html; charset=utf-8", "page.js": "text/javascript; charset=utf-8"}


def page_files(revision: str | None) -> dict[str, bytes]:
    """page.html and page.js of a git revision, or of this tree (None)."""
    if revision is None:
        return {name: (static_dir() / name).read_bytes() for name in PAGE_FILES}
    repo = Path(__file__).resolve().parent.parent.parent
    files = {}
    for name in PAGE_FILES:
        shown = subprocess.run(["git", "-C", str(repo), "show", f"{revision}:navd/server/static/{name}"],
                               capture_output=True)
        if shown.returncode:
            raise SystemExit(f"--against {revision}: no navd/server/static/{name} there: {shown.stderr.decode().strip()}")
        files[name] = shown.stdout
    return files


def page_run(browser: Browser, url: str, root: str, depth: int, files: dict[str, bytes] | None = None) -> dict[str, Any]:
    """One fresh page (no cache of its own) drawing `root`'s lineage: its first drawing's marks,
    its /api/lineage request's timing and every /api/ request's duration. With `files`, the page's
    own files are those (served through the browser's routing, with navd's headers)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=url)
    if files is not None:
        for name, media_type in PAGE_FILES.items():
            pattern = url + ("/" if name == "page.html" else "/static/" + name)
            context.route(lambda u, pattern=pattern: u.split("#")[0] == pattern,
                          lambda route, *_, body=files[name], media_type=media_type: route.fulfill(
                              status=200, body=body, headers={**SECURITY_HEADERS, "Content-Type": media_type}))
    page = context.new_page()
    page.goto(f"/#/lineage/{quote(root, safe='')}?direction=both&depth={depth}&operations=1")
    page.wait_for_function("() => window.navdPage && window.navdPage.drawn > 0 && !window.navdPage.busy",
                           timeout=120_000)
    timing = page.evaluate("""() => ({ ...window.navdPage.timings[0], requests: Object.fromEntries(
        performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/"))
          .map((e) => [new URL(e.name).pathname, e.duration])) })""")
    timing["request"] = page.evaluate(LINEAGE_REQUEST)
    timing["origin"] = page.evaluate("() => performance.timeOrigin")
    context.close()
    return timing


def bare_run(idle: Page, params: str) -> dict[str, Any]:
    """The page's lineage request alone, from an idle page: fetch + JSON parse, nothing drawn."""
    idle.evaluate("() => performance.clearResourceTimings()")
    total = idle.evaluate("""async (params) => {
        const t0 = performance.now();
        // no-store, not a cache-busting parameter: the API answers 400 to a parameter it does not take
        const response = await fetch("api/lineage?" + params, { cache: "no-store" });
        if (!response.ok) throw new Error("GET api/lineage answered " + response.status + ": " + await response.text());
        await response.json();
        return { fetch: t0, data: performance.now(), origin: performance.timeOrigin };
    }""", params)
    return {**total, "request": idle.evaluate(LINEAGE_REQUEST)}


def draw_runs(browser: Browser, url: str, root: str, depth: int, runs: int,
              bare_params: str | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`runs` page runs after one warm-up (dropped); with `bare_params`, each page run is followed
    by the bare request from an idle page, so both see the same load and the same Solr warmth."""
    timings: list[dict[str, Any]] = []
    bare: list[dict[str, Any]] = []
    idle = None
    if bare_params is not None:
        idle = browser.new_context(base_url=url).new_page()
        idle.goto("/#/search")
    for run in range(runs + 1):
        timing = page_run(browser, url, root, depth)
        alone = bare_run(idle, bare_params) if idle is not None and bare_params is not None else None
        if run:
            timings.append(timing)
            if alone is not None:
                bare.append(alone)
    if idle is not None:
        idle.context.close()
    return timings, bare


def against_runs(browser: Browser, url: str, root: str, depth: int, runs: int, revision: str,
                 bare_params: str) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """The big graph drawn by this tree's page and by `revision`'s, one after the other in each run
    (one warm-up round dropped), each round followed by the bare request: both pages see the same
    load, which on a shared host moves more between two runs of the bench than the page does."""
    variants = {"this tree": page_files(None), revision: page_files(revision)}
    timings: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    bare: list[dict[str, Any]] = []
    idle = browser.new_context(base_url=url).new_page()
    idle.goto("/#/search")
    for run in range(runs + 1):
        for name, files in variants.items():
            timing = page_run(browser, url, root, depth, files)
            if run:
                timings[name].append(timing)
        alone = bare_run(idle, bare_params)
        if run:
            bare.append(alone)
    idle.context.close()
    return timings, bare


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def fetch_cpu(sampler: CpuSampler, timings: list[dict[str, Any]]) -> dict[str, float]:
    """Mean CPU-milliseconds per group during the fetch phases of `timings` (a clock tick is 10 ms:
    a mean over the runs, not a median), and the phase's mean length."""
    windows = [((t["origin"] + t["fetch"]) / 1000, (t["origin"] + t["data"]) / 1000) for t in timings]
    used = [sampler.used(start, end) for start, end in windows]
    return {**{group: statistics.fmean(u[group] for u in used) for group in GROUPS},
            "window": statistics.fmean(1000 * (end - start) for start, end in windows)}


def request_split(timings: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Where a fetch phase goes: asked -> sent (queue), the server's answer (server, of which
    navd's app), the download, and after the last byte until the data mark (parse, for the page
    also its own work before drawing)."""
    return {"queue": summary([t["request"]["start"] - t["fetch"] + t["request"]["queue"] for t in timings]),
            "server": summary([t["request"]["server"] for t in timings]),
            "app": summary([t["request"]["app"] for t in timings]),
            "download": summary([t["request"]["download"] for t in timings]),
            "after": summary([t["data"] - t["request"]["end"] for t in timings]),
            "fetch": summary([t["data"] - t["fetch"] for t in timings])}


def phases(timings: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {"fetch": summary([t["data"] - t["fetch"] for t in timings]),
            "layout": summary([t["layout"] - t["data"] for t in timings]),
            "draw": summary([t["drawn"] - t["layout"] for t in timings]),
            "shown": summary([t["drawn"] - t["data"] for t in timings]),
            "total": summary([t["drawn"] - t["fetch"] for t in timings]),
            "navigation": summary([t["drawn"] for t in timings])}


def line(label: str, figures: dict[str, float]) -> str:
    return f"{label:<28} p50 {figures['p50']:7.1f} ms  p95 {figures['p95']:7.1f} ms  max {figures['max']:7.1f} ms"


def against(timings: dict[str, list[dict[str, Any]]], bare: list[dict[str, Any]], runs: int, pinned: str) -> None:
    """Print --against's comparison: per page, p50 of each phase and the fetch against the bare request."""
    bare_fetch = summary([b["data"] - b["fetch"] for b in bare])["p50"]
    print(f"lineage page against another revision's, {runs} runs each, alternately (fresh page per run, "
          f"one warm-up round dropped), Chromium headless; {pinned}")
    print(f"{'p50, ms':<14} {'asked at':>9} {'fetch':>7} {'layout':>7} {'draw':>6} {'shown':>7} {'navigation':>11}"
          f"   fetch / bare ({bare_fetch:.0f} ms)")
    for name, runs_of in timings.items():
        shown = phases(runs_of)
        asked = summary([t["fetch"] for t in runs_of])["p50"]
        print(f"{name[:14]:<14} {asked:9.0f} {shown['fetch']['p50']:7.0f} {shown['layout']['p50']:7.0f} "
              f"{shown['draw']['p50']:6.0f} {shown['shown']['p50']:7.0f} {shown['navigation']['p50']:11.0f}"
              f"   {shown['fetch']['p50'] / bare_fetch:.2f}x")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    OUT.mkdir(exist_ok=True)
    (OUT / "page-against.json").write_text(json.dumps(
        {"bare_fetch": bare_fetch, "pages": {name: phases(runs_of) for name, runs_of in timings.items()}}, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=400, help="nodes of the big graph (the page's node cap: 400)")
    parser.add_argument("--small", type=int, default=40, help="nodes of the baseline graph")
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--pin", action="store_true",
                        help="the browser on CPUs apart from Solr's and navd's, as on a user's machine")
    parser.add_argument("--against", metavar="REVISION",
                        help="instead: the big graph drawn by this tree's page.html/page.js and by a git revision's "
                             "(e.g. main), alternately in one run")
    args = parser.parse_args()
    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit(f"{CHROMIUM} is missing: make setup-test installs Debian's chromium")
    home = Path(tempfile.mkdtemp(prefix="navd-bench-page-"))
    (home / "solr").mkdir()
    solr = EmbeddedSolr(home / "solr", free_port(), args.heap, SolrDistribution(DEFAULT_SOLR_VERSION,
                                                                                 default_solr_dist_dir()))
    solr.start()
    proc = None
    try:
        with SolrIndex(solr.client_config()) as index:
            init_solr(index)
            big, big_root, big_depth = tree("big", args.nodes - 4)  # the last job may add fanout + 1
            small, small_root, small_depth = tree("small", args.small)
            write(index, [*big, *small])
        proc, url = serve(home, solr)
        solr_pid = solr.status().pid
        assert solr_pid is not None
        pinned = pin_browser_apart([solr_pid, proc.pid]) if args.pin else "no pinning: all share every CPU"
        sampler = CpuSampler(solr_pid, proc.pid)
        sampler.start()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                params = (f"entity={quote(big_root, safe='')}&direction=both&depth={big_depth}&operations=true"
                          f"&deleted=false&columns=false&max_nodes=400")  # exactly what the page asks
                big_runs, bare_runs = draw_runs(browser, url, big_root, big_depth, args.runs, params)
                if args.against:
                    against(*against_runs(browser, url, big_root, big_depth, args.runs, args.against, params),
                            args.runs, pinned)
                    return
                small_runs, _ = draw_runs(browser, url, small_root, small_depth, args.runs)
            finally:
                browser.close()
                time.sleep(0.1)  # a sample after the last window
                sampler.stopping.set()
                sampler.join()
        page_cpu, bare_cpu = fetch_cpu(sampler, big_runs), fetch_cpu(sampler, bare_runs)
        big_phases, small_phases = phases(big_runs), phases(small_runs)
        page_split, bare_split = request_split(big_runs), request_split(bare_runs)
        bare = bare_split["fetch"]
        big_nodes, small_nodes = big_runs[0]["nodes"], small_runs[0]["nodes"]
        print(f"lineage page, {args.runs} runs each (fresh page per run, one warm-up dropped), Chromium headless; {pinned}")
        for label, shown, nodes, edges in (("big", big_phases, big_nodes, big_runs[0]["edges"]),
                                           ("small", small_phases, small_nodes, small_runs[0]["edges"])):
            print(f"-- {label}: {nodes} nodes, {edges} edges drawn")
            for phase in ("fetch", "layout", "draw", "shown", "total", "navigation"):
                print(line(f"{label} {phase}", shown[phase]))
        print(line("bare /api/lineage (big)", bare) + "  [baseline: fetch + JSON parse, after each page run]")
        for path in sorted(big_runs[0]["requests"]):
            print(line(f"big page's {path}", summary([r["requests"].get(path, 0.0) for r in big_runs])))
        print("-- where the big fetch goes (p50, ms): queue | server (navd's app) | download | after the last byte")
        for label, split in (("page", page_split), ("bare", bare_split)):
            print(f"{label:<5} {split['queue']['p50']:6.1f} | {split['server']['p50']:7.1f} ({split['app']['p50']:7.1f}) | "
                  f"{split['download']['p50']:5.1f} | {split['after']['p50']:6.1f}   fetch {split['fetch']['p50']:7.1f}")
        print("-- CPU used during the big fetch (mean ms of CPU per run; 2 cores give 2 ms per ms): "
              + " | ".join(GROUPS))
        for label, cpu in (("page", page_cpu), ("bare", bare_cpu)):
            print(f"{label:<5} " + " | ".join(f"{cpu[group]:6.0f}" for group in GROUPS) + f"   in {cpu['window']:6.0f} ms")
        paired = statistics.median((p["data"] - p["fetch"]) / (b["data"] - b["fetch"]) for p, b in zip(big_runs, bare_runs))
        fetch_ratio = big_phases["fetch"]["p50"] / bare["p50"]
        print(f"goal: the page's fetch within 1.2x the bare request: p50 {fetch_ratio:.2f}x "
              f"(median of the paired runs' ratios {paired:.2f}x): {'met' if fetch_ratio <= 1.2 else 'NOT met'}")
        print(f"goal: {big_nodes}-node diagram shown (data received -> drawn) p50 "
              f"{big_phases['shown']['p50']:.0f} ms, < 1000 ms: {'met' if big_phases['shown']['p50'] < 1000 else 'NOT met'}")
        print(f"ratio big/small shown p50: {big_phases['shown']['p50'] / small_phases['shown']['p50']:.2f} "
              f"(nodes {big_nodes / small_nodes:.1f}x)")
        print(f"ratio big total / bare fetch p50: {big_phases['total']['p50'] / bare['p50']:.2f}")
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        OUT.mkdir(exist_ok=True)
        (OUT / "page.json").write_text(json.dumps({"big": big_phases, "small": small_phases, "bare_fetch": bare,
                                                   "fetch_split": {"page": page_split, "bare": bare_split},
                                                   "fetch_cpu": {"page": page_cpu, "bare": bare_cpu},
                                                   "fetch_ratio": fetch_ratio,
                                                   "nodes": {"big": big_nodes, "small": small_nodes}}, indent=2))
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        solr.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

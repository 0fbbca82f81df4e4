"""Lineage page benchmark: how long until a 400-node diagram is laid out and drawn in the browser
(goal < 1 s), measured with the page's own performance marks in Debian's headless Chromium.

Run: python tests/bench/bench_page.py [--runs 10] [--nodes 400] [--small 40]
Starts its own embedded Solr (temporary home, free port) and a `navd serve` over it, writes two
lineage trees (upstream and downstream of a root) through navd's writer (tests/page_graph.py), and loads
`/#/lineage/<root>?...&operations=1` in a fresh page per run. Phases from the page's marks:
fetch (the /api/lineage request until its JSON is parsed), layout (data received -> ELK layered
layout done), draw (layout done -> the frame after cytoscape rendered), and shown = layout + draw,
the goal's figure. Baselines in the same run: the same for a small graph, and the bare
/api/lineage fetch of the big graph from inside the page (fetch + JSON parse, no drawing).
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
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
from playwright.sync_api import Browser, sync_playwright

from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port
from navd.state import write_atomically

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from page_graph import tree, write  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NAVD = str(Path(sys.executable).parent / "navd")
OUT = Path(__file__).resolve().parent.parent.parent / ".bench"


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


def draw_runs(browser: Browser, url: str, root: str, depth: int, runs: int) -> list[dict[str, Any]]:
    """One fresh page per run (no cache of the page's own); the first run warms up and is dropped."""
    timings = []
    for run in range(runs + 1):
        context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=url)
        page = context.new_page()
        page.goto(f"/#/lineage/{quote(root, safe='')}?direction=both&depth={depth}&operations=1")
        page.wait_for_function("() => window.navdPage && window.navdPage.drawn > 0 && !window.navdPage.busy",
                               timeout=120_000)
        timing = page.evaluate("""() => ({ ...window.navdPage.timings[0], requests: Object.fromEntries(
            performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/"))
              .map((e) => [new URL(e.name).pathname, e.duration])) })""")
        context.close()
        if run:
            timings.append(timing)
    return timings


def fetch_runs(browser: Browser, url: str, root: str, depth: int, runs: int) -> list[float]:
    context = browser.new_context(base_url=url)
    page = context.new_page()
    page.goto("/#/search")
    params = f"entity={quote(root, safe='')}&direction=both&depth={depth}&operations=true&deleted=false&columns=false&max_nodes=400"
    millis = page.evaluate("""async ([params, runs]) => {
        const out = [];
        for (let i = 0; i <= runs; i++) {
            const t0 = performance.now();
            // no-store, not a cache-busting parameter: the API answers 400 to a parameter it does not take
            const response = await fetch("api/lineage?" + params, { cache: "no-store" });
            if (!response.ok) throw new Error("GET api/lineage answered " + response.status + ": " + await response.text());
            await response.json();
            out.push(performance.now() - t0);
        }
        return out.slice(1);
    }""", [params, runs])
    context.close()
    return list(millis)


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def phases(timings: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {"fetch": summary([t["data"] - t["fetch"] for t in timings]),
            "layout": summary([t["layout"] - t["data"] for t in timings]),
            "draw": summary([t["drawn"] - t["layout"] for t in timings]),
            "shown": summary([t["drawn"] - t["data"] for t in timings]),
            "total": summary([t["drawn"] - t["fetch"] for t in timings])}


def line(label: str, figures: dict[str, float]) -> str:
    return f"{label:<28} p50 {figures['p50']:7.1f} ms  p95 {figures['p95']:7.1f} ms  max {figures['max']:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=400, help="nodes of the big graph (the page's node cap: 400)")
    parser.add_argument("--small", type=int, default=40, help="nodes of the baseline graph")
    parser.add_argument("--heap", default="1g")
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
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                big_runs = draw_runs(browser, url, big_root, big_depth, args.runs)
                small_runs = draw_runs(browser, url, small_root, small_depth, args.runs)
                bare = summary(fetch_runs(browser, url, big_root, big_depth, args.runs))
            finally:
                browser.close()
        big_phases, small_phases = phases(big_runs), phases(small_runs)
        big_nodes, small_nodes = big_runs[0]["nodes"], small_runs[0]["nodes"]
        print(f"lineage page, {args.runs} runs each (fresh page per run, one warm-up dropped), Chromium headless")
        for label, shown, nodes, edges in (("big", big_phases, big_nodes, big_runs[0]["edges"]),
                                           ("small", small_phases, small_nodes, small_runs[0]["edges"])):
            print(f"-- {label}: {nodes} nodes, {edges} edges drawn")
            for phase in ("fetch", "layout", "draw", "shown", "total"):
                print(line(f"{label} {phase}", shown[phase]))
        print(line("bare /api/lineage (big)", bare) + "  [baseline: fetch + JSON parse in the page]")
        for path in sorted(big_runs[0]["requests"]):  # where the page's fetch phase goes
            print(line(f"big page's {path}", summary([r["requests"].get(path, 0.0) for r in big_runs])))
        print(f"goal: {big_nodes}-node diagram shown (data received -> drawn) p50 "
              f"{big_phases['shown']['p50']:.0f} ms, < 1000 ms: {'met' if big_phases['shown']['p50'] < 1000 else 'NOT met'}")
        print(f"ratio big/small shown p50: {big_phases['shown']['p50'] / small_phases['shown']['p50']:.2f} "
              f"(nodes {big_nodes / small_nodes:.1f}x)")
        print(f"ratio big total / bare fetch p50: {big_phases['total']['p50'] / bare['p50']:.2f}")
        OUT.mkdir(exist_ok=True)
        (OUT / "page.json").write_text(json.dumps({"big": big_phases, "small": small_phases, "bare_fetch": bare,
                                                   "nodes": {"big": big_nodes, "small": small_nodes}}, indent=2))
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        solr.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

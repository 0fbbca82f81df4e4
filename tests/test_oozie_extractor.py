"""The Oozie extractor's runs over Oozie's paging, on a golden sequence of answers
(tests/fixtures/oozie/paging_sequence.json): two runs of a server that lists five, then six
workflows two a page (`offset` from 1, `len`, `total`), two coordinators and a bundle. An Oozie
server cannot be assembled here (tests/fixtures/oozie/README.md); a replay server answers the
recorded pages and job bodies and nothing else (an unrecorded page is an HTTP 400, as Oozie
answers a bad request), so a request the extractor should not make fails the run."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from navd.extractors.oozie.extractor import OozieExtractionError, OozieExtractor
from navd.model import Element, ElementType, Relation, RelationType

FIXTURES = Path(__file__).parent / "fixtures" / "oozie"
SEQUENCE = json.loads((FIXTURES / "paging_sequence.json").read_text(encoding="utf-8"))["runs"]
#: the recorded jobs are from 2014: the first run's window reaches them
SINCE_2014 = timedelta(days=365 * 20)


class OozieReplay(http.server.BaseHTTPRequestHandler):
    """Answers `answers` (one run of the sequence: `lists` keyed "<jobtype> <offset>", `jobs` by
    id) and records each request's path and query in `asked`."""

    answers: dict[str, Any] = {}
    asked: list[tuple[str, dict[str, str]]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        self.asked.append((url.path, query))
        if url.path == "/oozie/v2/admin/status":
            self.answer(200, {"systemMode": "NORMAL"})
        elif url.path == "/oozie/v2/jobs":
            page = self.answers["lists"].get(f"{query.get('jobtype')} {query.get('offset')}")
            if page is None or str(page["len"]) != query.get("len"):
                self.answer(400, {"error": {"code": "E0420", "message": f"no recorded page for {url.query}"}})
            else:
                self.answer(200, page)
        elif url.path.startswith("/oozie/v2/job/"):
            job = self.answers["jobs"].get(urllib.parse.unquote(url.path.rpartition("/")[2]))
            self.answer(200, job) if job else self.answer(404, {"error": {"code": "E0604", "message": "no job"}})
        else:
            self.answer(404, {})

    def answer(self, status: int, body: Any) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def replay() -> Iterator[tuple[str, type[OozieReplay]]]:
    handler = type("Replay", (OozieReplay,), {"answers": SEQUENCE[0], "asked": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/oozie", handler
    server.shutdown()
    server.server_close()


def listed(asked: list[tuple[str, dict[str, str]]], jobtype: str) -> list[str]:
    return [q["offset"] for path, q in asked if path == "/oozie/v2/jobs" and q["jobtype"] == jobtype]


def read(asked: list[tuple[str, dict[str, str]]]) -> list[str]:
    return [path.rpartition("/")[2] for path, _ in asked if path.startswith("/oozie/v2/job/")]


def wf(n: int) -> str:
    return f"{n:07d}-140324163709596-oozie-chit-W"


COORDINATOR = "0000001-111219170928042-oozie-joe-C"
HOURLY = "0000003-140324163709596-oozie-chit-C"
BUNDLE = "0000002-140324163709596-oozie-chit-B"


def test_a_first_run_pages_as_oozie_does_and_the_next_reads_only_what_changed(
        replay: tuple[str, type[OozieReplay]], tmp_path: Path) -> None:
    url, server = replay
    extractor = OozieExtractor([url], tmp_path, page_size=2, first_run=SINCE_2014)
    records = list(extractor.extract())
    extractor.commit()
    # five workflows two a page: offsets 1, 3, 5, and no sixth ask (`total` says the list ended)
    assert listed(server.asked, "wf") == ["1", "3", "5"]
    assert listed(server.asked, "coordinator") == ["1"] and listed(server.asked, "bundle") == ["1"]
    assert {(q["len"], q["filter"]) for p, q in server.asked if p.endswith("/jobs") and q["jobtype"] == "wf"} == {
        ("2", "sortby=lastModifiedTime")}
    assert read(server.asked) == [wf(5), wf(4), wf(3), wf(2), wf(1), COORDINATOR, HOURLY, BUNDLE]
    report = extractor.report
    assert (report.workflows, report.coordinators, report.bundles, report.skipped) == (5, 2, 1, 0)
    assert report.requests == 1 + 3 + 5 + 1 + 2 + 1 + 1
    names = {r.qualified_name for r in records if isinstance(r, Element)}
    assert {f"oozie://{wf(n)}" for n in range(1, 6)} | {
        "oozie://bundle/sales-bundle", "oozie://coordinator/daily-sales-coord", f"oozie://{COORDINATOR}@1"} <= names
    parents = {(r.endpoint1.qualified_name, r.endpoint2.qualified_name) for r in records
               if isinstance(r, Relation) and r.type is RelationType.PARENT_CHILD}
    assert ("oozie://bundle/sales-bundle", "oozie://coordinator/daily-sales-coord") in parents
    assert (f"oozie://{COORDINATOR}@1", f"oozie://{wf(1)}") in parents

    # The next run: a new workflow and a rerun one on top, a coordinator materialised an action.
    server.answers, server.asked[:] = SEQUENCE[1], []
    extractor = OozieExtractor([url], tmp_path, page_size=2, first_run=SINCE_2014)
    records = list(extractor.extract())
    extractor.commit()
    # page 2 reaches the last run's newest change (hourly-orders, same time: skipped) and the
    # one before it: the listing stops there, page 3 is not asked
    assert listed(server.asked, "wf") == ["1", "3"]
    assert read(server.asked) == [wf(6), wf(3), COORDINATOR]  # the bundle is as it was
    assert (extractor.report.workflows, extractor.report.coordinators, extractor.report.bundles) == (2, 1, 0)
    runs = {r.qualified_name for r in records if isinstance(r, Element) and r.type is ElementType.OPERATION_EXECUTION}
    assert f"oozie://{COORDINATOR}@2" in runs and f"oozie://{wf(6)}" in runs and f"oozie://{wf(5)}" not in runs

    # and a third run of the same answers reads nothing: its first page reaches the newest change
    server.asked[:] = []
    extractor = OozieExtractor([url], tmp_path, page_size=2, first_run=SINCE_2014)
    assert list(extractor.extract()) == []
    assert read(server.asked) == [] and listed(server.asked, "wf") == ["1"]


def test_a_server_that_leaves_total_out_is_read_to_a_short_page(
        replay: tuple[str, type[OozieReplay]], tmp_path: Path) -> None:
    url, server = replay
    lists = {key: {k: v for k, v in page.items() if k != "total"} for key, page in SEQUENCE[0]["lists"].items()}
    lists["coordinator 3"] = {"offset": 3, "len": 2, "coordinatorjobs": []}  # past the end: an empty page
    server.answers = {**SEQUENCE[0], "lists": lists}
    extractor = OozieExtractor([url], tmp_path, page_size=2, first_run=SINCE_2014)
    list(extractor.extract())
    assert listed(server.asked, "wf") == ["1", "3", "5"]  # page 3 had one job
    assert listed(server.asked, "coordinator") == ["1", "3"]  # page 1 was full
    assert (extractor.report.workflows, extractor.report.coordinators) == (5, 2)


@pytest.mark.parametrize("total", ["5", -1, True, 2.5])
def test_a_total_that_is_not_a_count_ends_the_run_with_one_line(
        replay: tuple[str, type[OozieReplay]], tmp_path: Path, total: Any) -> None:
    url, server = replay
    server.answers = {**SEQUENCE[0], "lists": {**SEQUENCE[0]["lists"], "wf 1": {
        **SEQUENCE[0]["lists"]["wf 1"], "total": total}}}
    extractor = OozieExtractor([url], tmp_path, page_size=2, first_run=SINCE_2014)
    with pytest.raises(OozieExtractionError, match=r"/oozie/v2/jobs: total .* is not a count of jobs"):
        list(extractor.extract())
    assert not (tmp_path / "oozie-state.json").exists()


def test_a_page_oozie_refuses_ends_the_run_and_keeps_the_watermark(
        replay: tuple[str, type[OozieReplay]], tmp_path: Path) -> None:
    url, server = replay
    extractor = OozieExtractor([url], tmp_path, page_size=3, first_run=SINCE_2014)  # no page of 3 recorded
    with pytest.raises(OozieExtractionError, match=r"answered HTTP 400: .*E0420"):
        list(extractor.extract())
    assert not (tmp_path / "oozie-state.json").exists()

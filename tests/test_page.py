"""The lineage page in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright)
against a real `navd serve` over the session Solr: no request leaves navd, upstream is drawn left
of the root and downstream right, each toggle adds and removes exactly the expected nodes, a
table expands to its own columns, a column click highlights exactly its path, an application
named like an HTML tag is text, search -> entity -> lineage by clicking, the operation's
queryText and run history, and "show more" on a node the cap cut.

Positions, classes and the elements shown are read from the page's cytoscape instance
(`window.navdPage.cy`); the expected sets come from the graph written and from /api/lineage.
A screenshot is kept in .artifacts/ (its path is printed)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from playwright.sync_api import Browser, Page, sync_playwright

from navd.annotations.rules import Edit
from navd.annotations.service import AnnotationService
from navd.extractors.oozie.records import parse_workflow, workflow_records
from navd.extractors.s3.records import bucket_records
from navd.index.client import SolrIndex
from navd.model import ElementType, EntityRef, Relation, RelationType, SourceType
from navd.server.page import CONTENT_SECURITY_POLICY
from navd.solr.server import EmbeddedSolr
from lineage_cases import history
from page_graph import XSS_NAME, Pipeline, fan, pipeline, write
from conftest import Served, serve_on_free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parent.parent / ".artifacts"
#: how long the page may take to draw (a wait limit, not a measurement: tests/bench times it)
DRAW_MS = 60_000


def page_cluster() -> str:
    """The cluster (and name prefix) of this module's graph: its own, in the shared session Solr."""
    return f"pg{os.getpid()}"


@pytest.fixture(scope="module")
def graph(index: SolrIndex) -> Pipeline:
    data = pipeline(page_cluster())
    write(index, data.records)
    return data


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, graph: Pipeline) -> Iterator[Served]:
    """`navd serve` on loopback, as a user starts it, over the session Solr; the graph's cluster
    is one whose metastore navd extracts, so its table no extractor indexed yet is unlinked."""
    metastore = f'[cluster]\nname = "{page_cluster()}"\n[hive]\nhost = "hs2.invalid"\n'
    with serve_on_free_port(tmp_path_factory.mktemp("page"), solr_server, extra=metastore) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make setup-test` installs Debian's chromium (apt-get install -y chromium)",
                    pytrace=False)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


class Seen:
    """What one page did: every request's URL, dialogs, console errors, CSP violations."""

    def __init__(self, page: Page) -> None:
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        # Chromium logs every answer >= 400 as a console error: those are checked by URL instead,
        # as the search box's name lookup gets its 404 when a name is only a substring.
        page.on("console", lambda message: self.errors.append(message.text)
                if message.type == "error" and not message.text.startswith("Failed to load resource") else None)
        page.on("response", lambda response: self.errors.append(f"{response.status} {response.url}")
                if response.status >= 400 and not (response.status == 404 and "/api/entities/" in response.url)
                else None)


@pytest.fixture
def page(browser: Browser, served: Served) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=served.url)
    page = context.new_page()
    page.add_init_script("window.__csp = []; document.addEventListener('securitypolicyviolation', "
                         "(e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));")
    page.seen = Seen(page)  # type: ignore[attr-defined]
    yield page
    seen: Seen = page.seen  # type: ignore[attr-defined]
    assert not seen.dialogs, seen.dialogs
    assert not seen.errors, seen.errors
    context.close()


# -- helpers --------------------------------------------------------------------------------------

def lineage_url(entity: str, **flags: Any) -> str:
    params = "&".join(f"{k}={v}" for k, v in {"direction": "both", "depth": 3, **flags}.items())
    return f"/#/lineage/{quote(entity, safe='')}?{params}"


def drawn(page: Page, after: int = 0) -> int:
    """Wait until the page has drawn a diagram newer than `after`; its generation."""
    # A function, not an expression: Playwright evals expressions, which the page's CSP refuses.
    page.wait_for_function("(after) => window.navdPage && !window.navdPage.busy && window.navdPage.drawn > after",
                           arg=after, timeout=DRAW_MS)
    return int(page.evaluate("window.navdPage.drawn"))


def generation(page: Page) -> int:
    return int(page.evaluate("window.navdPage.drawn"))


def open_lineage(page: Page, entity: str, **flags: Any) -> None:
    """Load the page (a fresh one: each test has its own) on an entity's lineage."""
    page.goto(lineage_url(entity, **flags))
    drawn(page)


def node_ids(page: Page) -> set[str]:
    return set(page.evaluate("window.navdPage.cy.nodes().map((n) => n.id())"))


def edges(page: Page) -> set[tuple[str, str, str]]:
    return {tuple(e) for e in page.evaluate(  # type: ignore[misc]
        "window.navdPage.cy.edges().map((e) => [e.data('source'), e.data('target'), e.data('edge').type])")}


def api_lineage(served: Served, entity: str, **flags: bool | str) -> dict[str, Any]:
    params = {"entity": entity, "direction": "both", "depth": 3, "max_nodes": 400,
              **{k: v if isinstance(v, str) else str(v).lower() for k, v in flags.items()}}
    answer = served.get("/api/lineage", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def click_node(page: Page, node_id: str) -> None:
    """A real mouse click on the node where cytoscape drew it (zoomed in first when it is tiny); on
    a table drawn with its columns, on its top padding, which no column covers."""
    x, y = page.evaluate("""(id) => {
        const cy = window.navdPage.cy, node = cy.getElementById(id);
        if (node.renderedHeight() < 14) { cy.zoom(1.2); cy.center(node); }
        const box = cy.container().getBoundingClientRect(), at = node.renderedPosition();
        const y = node.isParent() ? node.renderedBoundingBox({ includeLabels: false }).y1 + 4 : at.y;
        return [box.left + at.x, box.top + y];
    }""", node_id)
    page.mouse.click(x, y)


def toggle(page: Page, flag: str) -> None:
    before = generation(page)
    page.click(f"#toggle-{flag}")
    drawn(page, before)


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


# -- the tests --------------------------------------------------------------------------------------

def test_the_page_is_served_behind_strict_headers(served: Served) -> None:
    for path in ("/", "/static/page.js", "/static/vendor/cytoscape.min.js", "/static/vendor/elkjs.LICENSE.md"):
        answer = served.get(path)
        assert answer.status_code == 200, (path, answer.status_code)
        assert answer.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Referrer-Policy"] == "no-referrer"
    assert "'unsafe-eval'" not in CONTENT_SECURITY_POLICY and "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert served.get("/").headers["content-type"].startswith("text/html")
    assert served.get("/static/page.js").headers["content-type"].startswith("text/javascript")
    for outside in ("/static/../page.py", "/static/%2e%2e/page.py", "/static/vendor", "/static/nope.js"):
        assert served.get(outside).status_code == 404, outside


def test_the_page_loads_with_no_request_leaving_navd(page: Page, served: Served, graph: Pipeline) -> None:
    page.goto(lineage_url(graph.id("merged"), operations=1, deleted=1))
    drawn(page)
    seen: Seen = page.seen  # type: ignore[attr-defined]
    assert seen.requests and all(url.startswith(served.url + "/") for url in seen.requests), seen.requests
    assert {url.split("?")[0].removeprefix(served.url) for url in seen.requests} >= {
        "/", "/static/page.js", "/static/vendor/cytoscape.min.js", "/static/vendor/elk-api.js",
        "/static/vendor/elk-worker.min.js", "/api/lineage"}
    assert page.evaluate("window.__csp") == []  # elkjs and cytoscape run under the CSP: no eval, no inline
    # navd's own time reaches the page's resource timing (tests/bench/bench_page.py splits the fetch with it)
    app = page.evaluate("""() => performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/lineage?"))
        .map((e) => e.serverTiming.filter((t) => t.name === "app").map((t) => t.duration))""")
    assert app and all(len(durations) == 1 and durations[0] > 0 for durations in app), app
    shot = screenshot(page, "lineage-page.png")
    assert shot.stat().st_size > 10_000


def test_a_lineage_url_asks_for_its_data_before_the_libraries_run(page: Page, graph: Pipeline) -> None:
    """page.js runs first and asks what the first drawing needs (with the columns toggle, the graph
    with columns too) while the parser is still on the page, before the deferred cytoscape and
    elk-api run; the drawing takes those answers: each is asked once."""
    open_lineage(page, graph.id("merged"), operations=1, columns=1)
    asked = page.evaluate("""() => performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/"))
        .map((e) => ({ url: new URL(e.name).pathname + new URL(e.name).search, start: e.startTime }))""")
    parsed = page.evaluate('performance.getEntriesByType("navigation")[0].domInteractive')
    lineage = [a for a in asked if a["url"].startswith("/api/lineage?")]
    assert sorted("columns=true" in a["url"] for a in lineage) == [False, True], asked
    assert len([a for a in asked if a["url"].startswith("/api/taints?")]) == 1, asked
    assert all(a["start"] < parsed for a in lineage), (lineage, parsed)
    assert node_ids(page) >= {graph.id("raw.id"), graph.id("merged.id")}  # the columns' graph was drawn


def test_upstream_is_left_of_the_root_and_downstream_right(page: Page, graph: Pipeline) -> None:
    open_lineage(page, graph.id("merged"), operations=1, deleted=1)
    x = page.evaluate("Object.fromEntries(window.navdPage.cy.nodes().map((n) => [n.id(), n.position('x')]))")
    root = x[graph.id("merged")]
    for upstream in ("raw", "create", "tmp", "merge", "ghost"):
        assert x[graph.id(upstream)] < root, upstream
    for downstream in ("publish", "report"):
        assert x[graph.id(downstream)] > root, downstream
    assert x[graph.id("raw")] < x[graph.id("create")] < x[graph.id("tmp")] < x[graph.id("merge")]
    classes = page.evaluate("Object.fromEntries(window.navdPage.cy.nodes().map((n) => [n.id(), n.classes()]))")
    assert "root" in classes[graph.id("merged")]
    assert "unlinked" in classes[graph.id("ghost")] and "deleted" in classes[graph.id("tmp")]
    label = page.evaluate("(id) => window.navdPage.cy.getElementById(id).data('label')", graph.id("tmp"))
    assert "\u0336" in label  # struck through


def test_operations_and_deleted_toggles_add_and_remove_exactly_their_nodes(page: Page, served: Served,
                                                                         graph: Pipeline) -> None:
    merged = graph.id("merged")
    open_lineage(page, merged)
    plain = node_ids(page)
    assert plain == {graph.id(n) for n in ("raw", "merged", "report")}
    assert plain == {n["id"] for n in api_lineage(served, merged)["nodes"]}

    toggle(page, "operations")
    assert "operations=1" in page.url
    with_operations = node_ids(page)
    assert with_operations == {n["id"] for n in api_lineage(served, merged, operations=True)["nodes"]}
    assert with_operations - plain == {graph.id(n) for n in ("create", "merge", "publish", "merge_job", "ghost")}

    toggle(page, "deleted")
    everything = node_ids(page)
    assert everything - with_operations == {graph.id("tmp")}

    toggle(page, "operations")
    assert node_ids(page) == plain | {graph.id("tmp")}
    toggle(page, "deleted")
    assert node_ids(page) == plain and "deleted=1" not in page.url and "operations=1" not in page.url


def test_a_toggle_redraws_the_diagram_in_place(page: Page, graph: Pipeline) -> None:
    """The diagram is not rebuilt when a control changes: the same cytoscape instance, the nodes
    both drawings show are the same elements (moved)."""
    merged, raw = graph.id("merged"), graph.id("raw")
    open_lineage(page, merged)
    page.evaluate("""(raw) => { window.navdPage.cy.scratch("probe", "first drawing");
                               window.keptNode = window.navdPage.cy.getElementById(raw); }""", raw)
    before = page.evaluate("(raw) => window.navdPage.cy.getElementById(raw).position()", raw)

    toggle(page, "operations")
    assert graph.id("merge") in node_ids(page)
    assert page.evaluate('window.navdPage.cy.scratch("probe")') == "first drawing"
    assert page.evaluate("(raw) => !window.keptNode.removed() && window.keptNode.same(window.navdPage.cy.getElementById(raw))",
                         raw)
    after = page.evaluate("(raw) => window.navdPage.cy.getElementById(raw).position()", raw)
    assert after != before  # laid out again with the operations between the tables
    assert page.locator("#toggle-operations").is_checked()

    page.go_back()  # the URL is the state: back to the drawing without operations, in place too
    page.wait_for_function("(id) => !window.navdPage.busy && !window.navdPage.cy.getElementById(id).nonempty()",
                           arg=graph.id("merge"), timeout=DRAW_MS)
    assert page.evaluate('window.navdPage.cy.scratch("probe")') == "first drawing"
    assert not page.locator("#toggle-operations").is_checked()


def test_columns_and_control_flow_toggles(page: Page, served: Served, graph: Pipeline) -> None:
    merged = graph.id("merged")
    open_lineage(page, merged)
    tables = node_ids(page)
    toggle(page, "columns")
    with_columns = node_ids(page)
    expected = api_lineage(served, merged, columns=True)
    fields = {n["id"] for n in expected["nodes"] if n["type"] == "FIELD"}
    assert with_columns - tables == fields == {graph.id(c) for c in (
        "raw.id", "raw.amount", "raw.day", "merged.id", "merged.total", "merged.day", "report.total_sum")}
    parents = page.evaluate("Object.fromEntries(window.navdPage.cy.nodes().map((n) => [n.id(), n.data('parent') || null]))")
    assert parents[graph.id("raw.amount")] == graph.id("raw") and parents[graph.id("report.total_sum")] == graph.id("report")
    control = {(s, t) for s, t, kind in edges(page) if kind == "CONTROL_FLOW"}
    assert control == set()

    toggle(page, "control")
    assert node_ids(page) == with_columns
    control = {(s, t) for s, t, kind in edges(page) if kind == "CONTROL_FLOW"}
    assert control == {(e["source"], e["target"]) for e in expected["edges"] if e["type"] == "CONTROL_FLOW"} \
        == {(graph.id("raw.day"), graph.id("merged.total"))}
    assert page.evaluate("window.navdPage.cy.edges('.control').every((e) => e.style('line-style') === 'dashed')")

    toggle(page, "control")
    assert not any(kind == "CONTROL_FLOW" for _, _, kind in edges(page))
    toggle(page, "columns")
    assert node_ids(page) == tables


def test_clicking_a_table_shows_only_its_columns(page: Page, graph: Pipeline) -> None:
    open_lineage(page, graph.id("merged"))
    tables = node_ids(page)
    before = generation(page)
    click_node(page, graph.id("raw"))
    drawn(page, before)
    assert node_ids(page) - tables == {graph.id(c) for c in ("raw.id", "raw.amount", "raw.day")}
    assert page.evaluate("(id) => window.navdPage.cy.getElementById(id).isParent()", graph.id("raw"))
    assert "columns=1" not in page.url  # one table's columns, not the toggle
    before = generation(page)
    click_node(page, graph.id("raw"))
    drawn(page, before)
    assert node_ids(page) == tables


def test_a_column_click_highlights_exactly_its_path(page: Page, served: Served, graph: Pipeline) -> None:
    merged = graph.id("merged")
    open_lineage(page, merged, columns=1, control=1)
    shown = api_lineage(served, merged, columns=True)
    column_edges = [(e["source"], e["target"]) for e in shown["edges"]
                    if {e["source"], e["target"]} <= {n["id"] for n in shown["nodes"] if n["type"] == "FIELD"}]

    def path(start: str) -> tuple[set[str], set[tuple[str, str]]]:
        nodes, walked = {start}, set()
        for forward in (True, False):
            frontier = [start]
            while frontier:
                here = frontier.pop()
                for source, target in column_edges:
                    near, far = (source, target) if forward else (target, source)
                    if near == here:
                        walked.add((source, target))
                        if far not in nodes:
                            nodes.add(far)
                            frontier.append(far)
        return nodes, walked

    for column, expected_columns in (
            ("merged.total", {"merged.total", "raw.amount", "raw.day", "report.total_sum"}),
            ("merged.id", {"merged.id", "raw.id"})):
        nodes, walked = path(graph.id(column))
        assert nodes == {graph.id(c) for c in expected_columns}
        click_node(page, graph.id(column))
        highlighted_nodes = set(page.evaluate("window.navdPage.cy.nodes('.highlighted').map((n) => n.id())"))
        highlighted_edges = {tuple(e) for e in page.evaluate(
            "window.navdPage.cy.edges('.highlighted').map((e) => [e.data('source'), e.data('target')])")}
        assert highlighted_nodes == nodes
        assert highlighted_edges == walked
        dimmed = set(page.evaluate("window.navdPage.cy.elements('.dimmed').map((e) => e.id())"))
        assert graph.id("merged.day") in dimmed and not dimmed & nodes
    screenshot(page, "column-path.png")
    corner = page.evaluate("(() => { const box = document.getElementById('cy').getBoundingClientRect(); "
                           "return [box.left + 4, box.top + 4]; })()")
    page.mouse.click(*corner)  # the background: the highlight goes
    assert page.evaluate("window.navdPage.cy.elements('.highlighted, .dimmed').length") == 0


def test_an_application_named_like_html_is_text(page: Page, graph: Pipeline) -> None:
    open_lineage(page, graph.id("merged"), operations=1)
    label = page.evaluate("(id) => window.navdPage.cy.getElementById(id).data('label')", graph.id("publish"))
    assert label.startswith(XSS_NAME)
    click_node(page, graph.id("publish"))
    assert page.text_content("#panel h2") == XSS_NAME
    page.click("#panel a.node-entity")
    page.wait_for_selector("#properties")
    assert page.text_content("h1") == XSS_NAME
    page.goto("/#/search?q=" + quote(XSS_NAME, safe=""))  # found by name: the search box's own query
    page.wait_for_selector("ul.results li")
    assert XSS_NAME in page.text_content("ul.results")
    assert page.evaluate("document.querySelectorAll('img').length") == 0  # no element made of the name


def test_search_entity_and_lineage_by_clicking(page: Page, graph: Pipeline) -> None:
    page.goto("/")
    page.fill("#search-input", graph.names["merged"])
    page.press("#search-input", "Enter")
    page.wait_for_selector("ul.results li")
    assert page.url.endswith("#/search?q=" + quote(graph.names["merged"], safe=""))
    page.click(f"ul.results a.result-link:text-is('{graph.names['merged']}')")
    page.wait_for_selector("#properties")
    assert page.url.endswith("#/entity/" + graph.id("merged"))
    assert page.text_content("h1") == graph.names["merged"]
    page.click("#lineage-link")
    drawn(page)
    assert page.evaluate("window.navdPage.graph.root") == graph.id("merged")
    assert "direction=both" in page.url and "depth=3" in page.url


def test_an_operation_shows_its_query_text_and_run_history(page: Page, graph: Pipeline) -> None:
    page.goto("/#/entity/" + graph.id("merge_job"))
    page.wait_for_selector("#run-history tr.run")
    assert page.text_content("#queryText").startswith(f"INSERT OVERWRITE TABLE shop.{graph.names['merged']}")
    runs = page.eval_on_selector_all("#run-history tr.run td:nth-child(3)", "(cells) => cells.map((c) => c.textContent)")
    assert runs == [graph.names["merge"], graph.names["merge_2"], graph.names["merge_1"]]  # newest first
    assert "3 executions" in page.text_content("#run-history")
    # an execution's own page: its query text and its operation's history
    page.click(f"#run-history a:text-is('{graph.names['merge_1']}')")
    page.wait_for_selector("#run-history tr.run.current")
    assert page.text_content("h1") == graph.names["merge_1"]
    assert "JOIN" in page.text_content("#queryText")


def test_show_more_on_a_node_the_cap_cut_adds_its_neighbours(page: Page, served: Served, index: SolrIndex,
                                                              unique: str) -> None:
    records, hub, inputs = fan(unique, 450)
    write(index, records)
    page.goto(lineage_url(hub, direction="upstream"))
    drawn(page)
    assert page.is_visible("#truncated")
    graph = page.evaluate("window.navdPage.graph")
    assert graph["truncated"] is True
    cut = [n["id"] for n in graph["nodes"] if n.get("cut") and n["id"] in set(inputs)]
    assert cut, "the cap cut no input"
    target = cut[0]
    before_nodes = node_ids(page)
    own = served.get("/api/lineage", params={"entity": target, "direction": "upstream", "depth": 3,
                                             "max_nodes": 400}).json()
    neighbours = {n["id"] for n in own["nodes"]} - before_nodes
    assert neighbours  # its source table, which the cap left out
    click_node(page, target)
    page.wait_for_selector("#show-more")
    before = generation(page)
    page.click("#show-more")
    drawn(page, before)
    after = node_ids(page)
    assert neighbours <= after and before_nodes <= after
    assert not page.evaluate("(id) => window.navdPage.graph.nodes.find((n) => n.id === id).cut", target)
    assert requests.get(served.url + "/healthz", timeout=5).status_code == 200


def test_an_entitys_tags_and_description_show_on_its_page_in_the_panel_and_in_search(
        page: Page, graph: Pipeline, index: SolrIndex) -> None:
    """What people wrote (navd annotate) on the entity page, in the lineage panel of its node, and
    found by the search box's query."""
    tag = f"reviewed{os.getpid()}"
    AnnotationService(index).edit(graph.id("raw"), Edit(add_tags=(tag,), description="churn inputs <b>raw</b>"),
                                  "eddie")
    page.goto("/#/entity/" + graph.id("raw"))
    page.wait_for_selector("#annotations")
    assert page.eval_on_selector_all("#annotations .user-tag", "(tags) => tags.map((t) => t.textContent)") == [tag]
    assert page.text_content("#annotations .annotation-description") == "churn inputs <b>raw</b>"  # text, not markup
    open_lineage(page, graph.id("merged"))
    click_node(page, graph.id("raw"))
    page.wait_for_selector("#panel-annotations")
    assert tag in page.text_content("#panel-annotations")
    click_node(page, graph.id("merged"))  # nobody annotated it: no section
    page.wait_for_selector(".node-entity")
    assert page.query_selector("#panel-annotations") is None
    page.goto("/#/search?q=" + quote(f"tags:{tag}", safe=""))
    page.wait_for_selector("ul.results li")
    assert page.eval_on_selector_all("ul.results a.result-link", "(links) => links.map((a) => a.textContent)") == \
        [graph.names["raw"]]


def test_selecting_an_execution_in_the_diagram_shows_its_query_text(page: Page, graph: Pipeline) -> None:
    """As Navigator's details pane: the query text of the selected operation, next to the diagram."""
    open_lineage(page, graph.id("merged"), operations=1)
    click_node(page, graph.id("merge"))
    page.wait_for_selector("#panel-queryText")
    assert page.text_content("#panel-queryText").startswith(f"INSERT OVERWRITE TABLE shop.{graph.names['merged']}")
    click_node(page, graph.id("raw"))  # a table: no query text
    page.wait_for_selector(".node-entity")
    assert page.query_selector("#panel-queryText") is None


def test_a_tainted_node_is_marked_and_the_legend_says_so(page: Page, graph: Pipeline, index: SolrIndex) -> None:
    """navd taint on a table: its node carries the `tainted` class (a red fill), no other node does."""
    from navd.taint.service import clear_taints, taint

    record = taint(index, graph.id("raw"), reason="bad load")
    try:
        open_lineage(page, graph.id("merged"), operations=1, deleted=1)
        classes = page.evaluate("Object.fromEntries(window.navdPage.cy.nodes().map((n) => [n.id(), n.classes()]))")
        assert {node for node, names in classes.items() if "tainted" in names} == {graph.id("raw")}
        assert page.evaluate("(id) => window.navdPage.cy.getElementById(id).style('background-color')",
                             graph.id("raw")) == "rgb(249,214,213)"
        assert "Red fill: tainted" in page.inner_text("#legend")
    finally:
        clear_taints(index, taint_id=record["id"])


def test_a_bucket_and_an_oozie_workflow_read_as_what_they_are(page: Page, index: SolrIndex) -> None:
    """An S3 bucket is drawn as a barrel labelled "S3 bucket", an Oozie workflow as "OOZIE workflow"."""
    bucket = f"pg{os.getpid()}-lake"
    table = EntityRef(SourceType.HIVE, f"pg{os.getpid()}_s3.t@primary", ElementType.TABLE)
    workflow = parse_workflow({"id": f"0000001-{os.getpid():015d}-oozie-pg-W", "appName": f"pg{os.getpid()}-daily",
                               "status": "SUCCEEDED", "user": "etl", "actions": [
                                   {"id": f"0000001-{os.getpid():015d}-oozie-pg-W@aggregate", "name": "aggregate",
                                    "type": "spark", "status": "OK", "externalChildIDs": "application_1_1"}]})
    write(index, [*bucket_records(bucket), *workflow_records(workflow),
                  Relation(RelationType.LOGICAL_PHYSICAL, table, EntityRef(SourceType.S3, f"s3a://{bucket}/",
                                                                           ElementType.S3BUCKET), linked1=False)])
    bucket_id = bucket_records(bucket)[0].identity  # type: ignore[union-attr]
    open_lineage(page, bucket_id)
    assert page.evaluate("(id) => window.navdPage.cy.getElementById(id).data('label')",
                         bucket_id) == f"{bucket}\nS3 bucket"
    assert page.evaluate("(id) => window.navdPage.cy.getElementById(id).hasClass('bucket')", bucket_id)
    assert page.evaluate("(id) => window.navdPage.cy.getElementById(id).style('shape')", bucket_id) == "barrel"
    run = next(r for r in workflow_records(workflow) if getattr(r, "type", None) is ElementType.OPERATION_EXECUTION)
    open_lineage(page, run.identity, operations=1)  # type: ignore[union-attr]
    labels = page.evaluate("window.navdPage.cy.nodes().map((n) => n.data('label'))")
    assert f"pg{os.getpid()}-daily\nOOZIE workflow" in labels, labels


def test_the_time_control_redraws_the_lineage_as_it_stood(page: Page, served: Served, index: SolrIndex) -> None:
    """A job over days (tests/lineage_cases.py's `history`): b written from a, then from c, then a
    dropped; the as-of control redraws b's lineage as it stood then and keeps it in the URL."""
    days = history(f"asof{os.getpid()}")
    write(index, days.records)  # type: ignore[arg-type]
    ids = {label: days.identity(label) for label in ("a", "b", "c")}
    open_lineage(page, ids["b"], direction="upstream")
    assert node_ids(page) == {ids["b"], ids["c"]}  # now: a is dropped
    for moment, shown in (("2026-11-01T12:00", {"a", "b"}), ("2026-11-03T12:00", {"a", "b", "c"}),
                          ("2026-11-01T09:00", {"b"})):
        before = generation(page)
        page.fill("#as-of", moment)
        page.dispatch_event("#as-of", "change")
        drawn(page, before)
        assert node_ids(page) == {ids[label] for label in shown}, moment
        assert f"as_of={quote(moment, safe='')}" in page.url
        assert node_ids(page) == {n["id"] for n in api_lineage(served, ids["b"], as_of=moment,
                                                               direction="upstream")["nodes"]}

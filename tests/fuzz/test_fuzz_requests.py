"""Fuzz targets for what users type: `navd` command lines (the argument parser and the config
path it loads), the HTTP API's query parameters (navd's app in-process through FastAPI's
TestClient, over the session's real Solr holding a captured Spark application), and Solr queries
as navd writes them back (the session's Solr reads them as the typed ones)."""

from __future__ import annotations

import contextlib
import io
import shlex
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from starlette.datastructures import Headers

import query_corpus
from fuzz.fuzzing import ODD_STRINGS, fuzz_settings, huge_strings, query_texts, run_target, string_variant
from navd.cli import build_parser
from navd.config import ServerConfig, load_config, parse_config
from navd.extractors.spark.records import process_lines, stubs_for
from navd.errors import ConfigError, SolrError
from navd.index.client import IndexWriter, SolrIndex
from navd.index.query_syntax import QuerySyntaxError, lucene_query
from navd.server.app import create_app
from navd.server.request_checks import refusal, server_names
from spark_fixtures import DEFAULT_FS, fixture_lines

# --- the command line ------------------------------------------------------------------------------

#: command lines as the docs and `navd --help` show them
COMMAND_LINES = (
    "search queryText:*temp_table*", "search 'sourceType:HIVE AND type:TABLE' --rows 5 --json",
    "entity sales.orders@primary", "entity hdfs://nameservice1/data/orders --json",
    "lineage sales.revenue@primary --direction upstream --depth 3 --columns",
    "lineage sales.revenue.total@primary --format json --max-nodes 100",
    "export openlineage --since 2026-11-23T08:00:00Z --entity sales.revenue@primary --validate",
    "extract spark --once", "extract hdfs --full", "purge --dry-run", "status --json", "link",
    "solr status", "solr init", "server status", "--log-level debug status",
    "--config /etc/navd/navd.toml status", "serve --port 7187",
)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    argv = shlex.split(draw(st.sampled_from(COMMAND_LINES)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(argv)))
        op = draw(st.integers(0, 4))
        if op == 0 and at < len(argv):
            argv[at] = draw(string_variant(argv[at]))
        elif op == 1 and at < len(argv):
            del argv[at]
        elif op == 2:
            argv.insert(at, draw(st.sampled_from(("--json", "--depth", "--rows", "-1", "0", "99999999999999999999",
                                                  "--since", "--config", "--", "-", "--help=x", "--log-level",
                                                  *ODD_STRINGS[:12]))))
        elif op == 3 and at < len(argv):
            argv.insert(at, argv[at])
        else:
            argv.append(draw(st.one_of(st.text(max_size=30), huge_strings())))
    return [a.replace("\x00", "") for a in argv]  # argv cannot carry NUL


@fuzz_settings()
@given(argv=command_lines())
def test_cli_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    def parse() -> None:
        # The interpreter's stderr writes what UTF-8 cannot hold (argv's undecodable bytes, lone
        # surrogates argparse repeats in its usage line) as backslash escapes; pytest's capture
        # stream is strict. The parser is given the streams a real `navd` process has.
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                args = build_parser().parse_args(argv)
        except SystemExit as exc:  # argparse's one usage line (2), or --help (0)
            assert exc.code in (0, 2), f"exit {exc.code!r}"
            return
        # what main() does next, before any command runs: the config file named or defaulted
        load_config(args.config, environ={})

    run_target("cli arguments", (ConfigError,), parse)
    capsys.readouterr()


# --- the HTTP API ----------------------------------------------------------------------------------

#: its own cluster: the session's Solr holds other tests' sales.* tables (test_spark_extractor
#: asks for the one column edge of sales.s.c@primary)
CLUSTER = "fuzzapi"
TABLE = f"sales.t@{CLUSTER}"
#: a huge parameter stays under the client's URL limit (httpx: 64 kB), as any proxy's would cap it
URL_UNITS = 5_000
#: the whole query at most this long percent-encoded (httpx: 65,536 per URL component)
MAX_QUERY_BYTES = 60_000


@pytest.fixture(scope="module")
def api(index: SolrIndex) -> Iterator[TestClient]:
    _, emitted = process_lines(fixture_lines("ctas_expression"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    writer = IndexWriter(index)
    writer.write_all([*emitted, *stubs_for(emitted, None)])
    assert writer.close()
    index.commit("elements", soft=True)
    index.commit("relations", soft=True)
    config = parse_config({"cluster": {"name": CLUSTER}}, source="fuzz", environ={})
    # unhandled errors raise here, not as 500s; a loopback Host, one of the server's names (TestClient's
    # own, testserver, is refused as any name the server does not have)
    with TestClient(create_app(config, index), base_url="http://127.0.0.1") as client:
        yield client


#: (path, real parameters) per route; the values come from the docs' examples
REQUESTS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("/api/entities", (("query", "sourceType:HIVE AND type:TABLE"), ("rows", "20"), ("cursor", "*"))),
    (f"/api/entities/{TABLE}", ()),
    ("/api/lineage", (("entity", TABLE), ("direction", "upstream"), ("depth", "3"), ("columns", "true"),
                      ("operations", "false"), ("max_nodes", "100"))),
    ("/api/executions", (("operation", "spark://ctas_expression"), ("rows", "5"), ("start", "0"))),
    ("/api/runs", (("component", "spark"), ("rows", "5"), ("start", "0"))),
    ("/api/v1/lineage", (("nodeId", "dataset:hive://metastore:9083:sales.t"), ("depth", "2"))),
    ("/api/v1/column-lineage", (("nodeId", "datasetField:hive://metastore:9083:sales.t:c"), ("depth", "2"),
                                ("withDownstream", "true"))),
    ("/api/v9/entities", (("query", "sourceType:HIVE"), ("offset", "0"), ("limit", "10"))),
    ("/api/v9/lineage", (("entityIds", "0123456789abcdef0123456789abcdef"),)),
    # the attempts to reach past the query syntax (tests/query_corpus.py), mutated from there
    *((path, (("query", query_corpus.query(template)),)) for path in ("/api/entities", "/api/v9/entities")
      for template in (*(t for t, _ in query_corpus.REFUSED), *query_corpus.TEXT)),
)


@st.composite
def api_requests(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    path, base = draw(st.sampled_from(REQUESTS))
    params = list(base)
    if path.startswith("/api/entities/") and draw(st.booleans()):
        path = "/api/entities/" + draw(string_variant(TABLE))[:URL_UNITS]
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.integers(0, 4))
        at = draw(st.integers(0, max(0, len(params) - 1)))
        if op == 0 and params:
            params[at] = (params[at][0], draw(string_variant(params[at][1]))[:URL_UNITS])
        elif op == 1 and params:
            del params[at]
        elif op == 2 and params:
            params.append(params[at])  # a parameter given twice
        elif op == 3 and params:
            params[at] = (params[at][0], draw(st.one_of(st.sampled_from(("-1", "0", "1e9", "99999999999999999999",
                                                                           "true", "", " ", "NaN", "*:*", "(", "\\")),
                                                         st.text(max_size=40), huge_strings(URL_UNITS))))
        else:
            params.append((draw(st.text(max_size=10)), draw(st.text(max_size=20))))
    # what a client can send: the path percent-encoded (a tab, a space, a lone surrogate's bytes
    # reach the server as %09, %20, %ED%A0%80; the query so in the test), the query within the client's URL limit (two
    # 5,000-emoji parameters are 120 kB encoded: httpx refuses to build that URL)
    path = quote(path.encode("utf-8", "surrogatepass"), safe="/@:")
    while sum(3 * len(f"{k}={v}".encode("utf-8", "surrogatepass")) + 1 for k, v in params) > MAX_QUERY_BYTES:
        longest = max(range(len(params)), key=lambda i: len(params[i][1]))
        params[longest] = (params[longest][0], params[longest][1][:len(params[longest][1]) // 2])
    return path, params


@fuzz_settings()
@given(request=api_requests())
def test_api_query_parameters(api: TestClient, request: tuple[str, list[tuple[str, str]]]) -> None:
    path, params = request

    # the query percent-encoded here, from the UTF-8 bytes (a lone surrogate as its own: the
    # client's urlencode refuses the character, a hostile client sends the bytes)
    query = urlencode([(k.encode("utf-8", "surrogatepass"), v.encode("utf-8", "surrogatepass")) for k, v in params])
    url = f"{path}?{query}" if query else path

    def call() -> Any:
        response = api.get(url)
        # 4xx: the parameter named in one line; 5xx would be navd failing on input it was given
        assert response.status_code < 500, f"{response.status_code}: {response.text[:300]}"
        if response.status_code >= 400:
            assert response.headers["content-type"].startswith("application/json"), response.text[:300]

    run_target("api query parameters", (), call)


# --- what Solr makes of a query navd writes back ---------------------------------------------------

def solr_reading(index: SolrIndex, text: str) -> str:
    """The Lucene query Solr's lucene parser builds of `text`, or the HTTP status it refuses it with."""
    try:
        body = index.search("elements", text, rows=0, params={"defType": "lucene", "debugQuery": "true"})
    except SolrError as exc:
        return f"HTTP {exc.status}"
    return str(body["debug"]["parsedquery"])


@fuzz_settings()
@given(text=query_texts())
def test_solr_reads_the_written_query_as_typed(index: SolrIndex, text: str) -> None:
    def compare() -> None:
        written = lucene_query(text)  # refused: QuerySyntaxError, allowed
        # what navd sends means what was typed (the typed text goes to Solr here only once navd took it)
        assert solr_reading(index, written) == solr_reading(index, text), f"written as {written!r}"

    run_target("query written back", (QuerySyntaxError,), compare)


# --- the request checks (navd/server/request_checks.py) --------------------------------------------

#: the headers real clients send (curl, the OpenLineage clients, Navigator's SDK, Chromium)
REQUEST_HEADERS: tuple[tuple[str, str], ...] = (
    ("host", "127.0.0.1:7187"), ("host", "[::1]:7187"), ("host", "navd.example.com"),
    ("origin", "http://127.0.0.1:7187"), ("origin", "null"), ("sec-fetch-site", "same-origin"),
    ("content-type", "application/json; charset=UTF-8"), ("content-type", "multipart/form-data; boundary=x"),
    ("content-length", "42"), ("transfer-encoding", "chunked"), ("content-encoding", "gzip"),
)


@st.composite
def request_lines(draw: st.DrawFn) -> tuple[str, str, list[tuple[bytes, bytes]]]:
    method = draw(st.sampled_from(("GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH", "post", "")))
    path = draw(st.sampled_from(("/api/v1/lineage", "/healthz", "/static/page.js", "/")))
    if draw(st.booleans()):
        path = draw(string_variant(path))
    headers = [draw(st.sampled_from(REQUEST_HEADERS)) for _ in range(draw(st.integers(0, 6)))]
    for at in range(len(headers)):
        if draw(st.booleans()):
            headers[at] = (headers[at][0], draw(st.one_of(string_variant(headers[at][1]), huge_strings(20_000))))
    # what arrives off the wire is bytes, read as latin-1: any text becomes some bytes
    return method, path, [(k.encode(), v.encode("utf-8", "surrogatepass")) for k, v in headers]


@fuzz_settings()
@given(request=request_lines())
def test_request_checks(request: tuple[str, str, list[tuple[bytes, bytes]]]) -> None:
    method, path, raw = request
    names = server_names(ServerConfig(allowed_hosts=("navd.example.com",)), ())

    def check() -> None:
        refused = refusal(method, path, Headers(raw=raw), "http", "127.0.0.1", names)
        if refused is not None:  # a 4xx naming the header (or path) in one line
            assert refused.status in (400, 403, 415), refused
            assert refused.message.startswith(f"{refused.parameter}: ") and "\n" not in refused.message, refused

    run_target("request checks", (), check)

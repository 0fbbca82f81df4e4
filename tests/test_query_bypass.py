"""Attempts to reach past Solr's Lucene syntax through every way a user's query reaches Solr: a
real `navd serve` (GET /api/entities, GET /api/v9/entities, POST /api/v9/entities/paging, POST
/api/v9/interactive/entities with the query in its `query` or behind Hue's `{!tag=type}` in its
`filterQueries`, POST /api/v9/relations/paging, the query percent-encoded as clients and
attackers spell it) and `navd search`. The corpus is
tests/query_corpus.py; each refusal is a 400 (CLI: exit 2) naming `query`, and no answer
depends on another core.

The oracle: a run record in the runs core carries an element's identity and a secret component
name. A cross-core join from the elements core, `{!join fromIndex=<runs core> ...
v='component:<guess>'}`, finds that element when the guess is right and nothing when it is
wrong: asked of Solr directly it does; asked through navd it must never run."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from conftest import NavdRunner
from navd.index.client import IndexWriter, SolrIndex, serialise
from navd.model import Element, ElementType, SourceType
from navd.solr.server import EmbeddedSolr
from query_corpus import CAPPED, DEEP, REFUSED, TEXT, query
from conftest import Served, serve_on_free_port

#: the first refused query: a join into another core that got past the old check
CROSS_CORE_EXPLOIT = REFUSED[0][0]


@pytest.fixture(scope="module")
def oracle(index: SolrIndex) -> Element:
    """An element whose identity a run record in the runs core carries, with a component name
    only that record knows (`secret`)."""
    element = Element(SourceType.HIVE, ElementType.TABLE, f"o{uuid.uuid4().hex[:10]}.oracle@bypass", name="oracle")
    writer = IndexWriter(index)
    writer.write(element)
    assert writer.close()
    index.commit("elements", soft=True)
    index.post_update("runs", serialise([{"identity": element.identity, "kind": "probe",
                                          "component": "secret" + element.identity}]))
    index.commit("runs", soft=True)
    return element


@pytest.fixture(scope="module")
def secret(oracle: Element) -> str:
    return "secret" + oracle.identity


@pytest.fixture(scope="module")
def runs_core(index: SolrIndex) -> str:
    return index.core("runs")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("bypass")
    with serve_on_free_port(tmp, solr_server, extra='[cluster]\nname = "bypass"\n') as served:
        yield served


def found_by_solr(index: SolrIndex, text: str) -> int:
    """numFound of `text` asked of Solr directly, as navd sent user queries before it parsed them."""
    return int(index.search("elements", text, rows=0, params={"defType": "lucene"})["response"]["numFound"])


def test_the_oracle_reads_the_other_core_when_solr_is_asked_directly(index: SolrIndex, secret: str,
                                                                     runs_core: str) -> None:
    assert found_by_solr(index, query(CROSS_CORE_EXPLOIT, runs_core, secret)) == 1
    assert found_by_solr(index, query(CROSS_CORE_EXPLOIT, runs_core, "wrong")) == 0


# -- the HTTP API ------------------------------------------------------------------------------

def ask(served: Served, route: str, text: str, encoding: str = "requests") -> requests.Response:
    """`text` as the query of `route`, spelt on the wire as `encoding` says."""
    if route in BODY_ROUTES:
        path, body = BODY_ROUTES[route](text)
        if encoding == "json-escapes":  # `{` as \u007b: the JSON parser gives `{` back
            body = body.replace("{!", "\\u007b!")
        return requests.post(served.url + path, data=body.encode(), timeout=60,
                             headers={"Content-Type": "application/json"})
    path = "/api/entities" if route == "entities" else "/api/v9/entities"
    if encoding == "requests":
        return requests.get(served.url + path, params={"query": text}, timeout=60)
    encoded = quote(text.encode(), safe="")  # %7B%21, spaces as %20
    if encoding == "lower-hex-plus":  # %7b%21, spaces as +
        encoded = re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quote(text.encode(), safe=" ")).replace(" ", "+")
    return requests.get(f"{served.url}{path}?query={encoded}", timeout=60)


#: The routes whose query travels in a JSON body: (path, body) of a query text
BODY_ROUTES = {
    "paging": lambda text: ("/api/v9/entities/paging", json.dumps({"query": text, "limit": 10})),
    "interactive": lambda text: ("/api/v9/interactive/entities", json.dumps({"query": text, "facetFields": ["type"]})),
    # Hue's tagged filter: the tag is the one local parameter navd takes, the rest is a query
    "filter": lambda text: ("/api/v9/interactive/entities",
                            json.dumps({"query": "*", "filterQueries": ["{!tag=type} " + text]})),
    "relations": lambda text: ("/api/v9/relations/paging", json.dumps({"query": text, "limit": 10})),
}
#: The parameter a refusal names, where it is not `query`
PARAMETER = {"filter": "filterQueries"}


def identities(route: str, answer: requests.Response) -> list[str]:
    assert answer.status_code == 200, answer.text[:300]
    body = answer.json()
    found = body["docs"] if route == "entities" else body if route == "v9" else body["results"]
    return [str(doc["identity"]) for doc in found]


ROUTES = ("entities", "v9", *BODY_ROUTES)
#: The routes over the elements core: the texts that reach Solr name element fields
ELEMENT_ROUTES = tuple(route for route in ROUTES if route != "relations")
ENCODINGS = {"entities": ("requests", "upper-hex", "lower-hex-plus"), "v9": ("requests", "lower-hex-plus"),
             **{route: ("requests", "json-escapes") for route in BODY_ROUTES}}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(("template", "named"), REFUSED, ids=[t[:40] for t, _ in REFUSED])
def test_the_bypass_corpus_is_refused_at_the_api(served: Served, secret: str, runs_core: str, route: str,
                                                 template: str, named: str) -> None:
    for guess in (secret, "wrong"):
        for encoding in ENCODINGS[route]:
            answer = ask(served, route, query(template, runs_core, guess), encoding)
            # a 200 here would be an answer Solr computed, for the right guess from the other core
            assert answer.status_code == 400, (encoding, answer.status_code, answer.text[:300])
            body = answer.json()
            parameter = PARAMETER.get(route, "query")
            assert body["parameter"] == parameter and body["error"].startswith(f"{parameter}: {named}"), body
            assert "\n" not in body["error"]


@pytest.mark.parametrize("route", ELEMENT_ROUTES)
@pytest.mark.parametrize("template", TEXT)
def test_the_same_characters_as_text_read_no_other_core(served: Served, oracle: Element, secret: str,
                                                        runs_core: str, route: str, template: str) -> None:
    right = identities(route, ask(served, route, query(template, runs_core, secret)))
    # the join, had it run, finds the oracle element for the right guess only
    assert oracle.identity not in right
    assert right == identities(route, ask(served, route, query(template, runs_core, "wrong")))


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(("text", "named"), CAPPED, ids=["5000 (", "1025 clauses"])
def test_nesting_and_size_are_capped_before_solr(served: Served, solr_server: EmbeddedSolr, route: str,
                                                 text: str, named: str) -> None:
    solr_log = Path(solr_server.home) / "logs" / "solr.log"
    before = solr_log.stat().st_size if solr_log.exists() else 0
    answer = ask(served, route, text)
    assert answer.status_code == 400, answer.text[:300]
    parameter = PARAMETER.get(route, "query")
    assert answer.json()["parameter"] == parameter and answer.json()["error"].startswith(f"{parameter}: {named}")
    # before, Solr's parser overflowed its stack: HTTP 502 here, a 142 kB stack trace there
    if solr_log.exists():
        with solr_log.open("rb") as log:
            log.seek(before)
            assert b"StackOverflowError" not in log.read()


# -- the CLI ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("template", "named"), [*REFUSED, (DEEP, CAPPED[0][1])],
                         ids=[t[:40] for t, _ in REFUSED] + ["5000 ("])
def test_the_bypass_corpus_is_refused_by_navd_search(navd: NavdRunner, secret: str, runs_core: str, template: str,
                                                     named: str) -> None:
    result = navd("search", query(template, runs_core, secret))
    assert result.returncode == 2 and result.stdout == "", (result.returncode, result.stdout[:300])
    lines = [line for line in result.stderr.splitlines() if line.startswith("navd:")]
    assert len(lines) == 1 and lines[0].startswith(f"navd: error: query: {named}"), result.stderr[-500:]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("template", TEXT)
def test_navd_search_takes_the_same_characters_as_text(navd: NavdRunner, oracle: Element, secret: str,
                                                       runs_core: str, template: str) -> None:
    answers = []
    for guess in (secret, "wrong"):
        result = navd("search", query(template, runs_core, guess), "--json", "--rows", "1000")
        assert result.returncode == 0, result.stderr[-500:]
        answers.append([doc["identity"] for doc in json.loads(result.stdout)["docs"]])
    assert oracle.identity not in answers[0] and answers[0] == answers[1]


#: what Lucene refuses after the parse: a regular expression it cannot read, a pattern whose
#: automaton is too large (Solr's HTTP 500 for both; navd answered 502, `navd search` exit 1)
TOO_MUCH_FOR_LUCENE = (("originalName:/\\{!jo[in.*/", "the regular expression at character 14 is not Lucene's"),
                       ("originalName:/<foo>/", "the regular expression at character 14 is not Lucene's"),
                       ("originalName:*" + "a?*" * 400, "too complex for Solr"),
                       ("originalName:/a{99999}/", "too complex for Solr"))


@pytest.mark.parametrize("route", ELEMENT_ROUTES)
@pytest.mark.parametrize(("text", "named"), TOO_MUCH_FOR_LUCENE, ids=["class", "automaton", "wildcards", "repeat"])
def test_what_lucene_refuses_is_a_400_naming_the_query(served: Served, route: str, text: str, named: str) -> None:
    answer = ask(served, route, text)
    assert answer.status_code == 400, answer.text[:300]
    parameter = PARAMETER.get(route, "query")
    assert answer.json()["parameter"] == parameter and answer.json()["error"].startswith(f"{parameter}: {named}")


def test_what_lucene_refuses_is_exit_2_from_navd_search(navd: NavdRunner, index: SolrIndex) -> None:
    for text, named in TOO_MUCH_FOR_LUCENE:
        result = navd("search", text)
        assert result.returncode == 2, (text, result.returncode, result.stderr[-300:])
        assert result.stderr.strip().splitlines()[-1].startswith(f"navd: error: query: {named}"), result.stderr[-300:]

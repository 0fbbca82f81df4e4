"""The read facade over the real Solr: search, entity, status and run history, as typed results."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from navd.catalog.service import entity, search
from navd.errors import EntityNotFound, UsageError
from navd.index.client import IndexWriter, SolrIndex, serialise
from navd.model import Element, ElementType, SourceType
from navd.runs import Run, last_started
from navd.status import run_history, status

STARTED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def write_runs(index: SolrIndex, component: str, count: int) -> list[str]:
    """`count` finished runs of `component`, an hour apart; their ids, oldest first."""
    runs = [Run(f"{component}##{n}", component, STARTED + timedelta(hours=n), counts={"elements": n})
            for n in range(count)]
    index.post_update("runs", serialise([r.document("SUCCEEDED", ended=r.started + timedelta(minutes=5))
                                         for r in runs]))
    index.commit("runs", soft=True)
    return [r.run_id for r in runs]


def test_run_history_is_newest_first_and_paged(index: SolrIndex, unique: str) -> None:
    component = f"extractor.{unique}"
    ids = write_runs(index, component, 5)
    first = run_history(index, component, rows=2)
    assert first.found == 5 and first.start == 0
    assert [r["identity"] for r in first.runs] == [ids[4], ids[3]]
    assert first.runs[0]["count_elements"] == 4 and "kind" not in first.runs[0] and "_version_" not in first.runs[0]
    rest = run_history(index, component, rows=10, start=2)
    assert [r["identity"] for r in rest.runs] == [ids[2], ids[1], ids[0]]
    assert run_history(index, f"{component}.none").found == 0
    with pytest.raises(ValueError, match="rows=-1"):
        run_history(index, component, rows=-1)


def test_last_started(index: SolrIndex, unique: str) -> None:
    component = f"purge.{unique}"
    assert last_started(index, component) is None
    write_runs(index, component, 3)
    assert last_started(index, component) == STARTED + timedelta(hours=2)


def test_status_shows_each_components_last_run(index: SolrIndex, unique: str) -> None:
    component = f"linker.{unique}"
    ids = write_runs(index, component, 2)
    shown = status(index)
    assert shown["components"][component]["last_run"]["identity"] == ids[1]
    assert shown["components"][component]["last_success"] == "2026-11-01T13:05:00Z"
    assert set(shown["totals"]) == {"elements", "relations", "unlinked_relations", "deleted_elements"}


def test_search_and_entity(index: SolrIndex, unique: str) -> None:
    element = Element(SourceType.HIVE, ElementType.TABLE, f"{unique}.orders@primary", name="orders",
                      properties={"tier": "gold"})
    writer = IndexWriter(index)
    writer.write(element)
    assert writer.close()
    index.commit("elements", soft=True)
    found = search(index, "elements", f'qualifiedName:"{element.qualified_name}"', rows=5)
    assert found.found == 1 and found.millis is not None
    assert found.docs[0]["properties"] == {"tier": "gold"} and "prop_tier" not in found.docs[0]
    assert search(index, "elements", f'qualifiedName:"{element.qualified_name}"', rows=0).docs == ()
    [shown] = entity(index, element.qualified_name.upper())
    assert shown["identity"] == element.identity
    with pytest.raises(EntityNotFound, match=f"'{unique}.nope@primary'"):
        entity(index, f"{unique}.nope@primary")


@pytest.mark.parametrize("query", [
    "{!join fromIndex=nav_relations from=id to=id}*:*",  # a cross-core oracle: answers about another core
    "originalName:x OR {!join fromIndex=nav_runs from=identity to=identity}*:*",  # nested clause
    '_query_:"{!join fromIndex=nav_relations from=id to=id}*:*"',  # the magic field carrying it
    '\\_query\\_:"{!lucene}x"',  # escapes are resolved before Solr reads a field name
    '_val_:"sum(1,1)"',
])
def test_search_refuses_local_params_and_magic_fields(index: SolrIndex, query: str) -> None:
    with pytest.raises(UsageError, match=r"^query: (local parameters|the field _(query|val)_) "):
        search(index, "elements", query)


def test_search_refuses_local_params_in_the_sort(index: SolrIndex) -> None:
    refused = r"^--sort: .query\(\{!join fromIndex=nav_elements.* is not 'FIELD asc' or 'FIELD desc'"
    with pytest.raises(UsageError, match=refused):
        search(index, "relations", "*:*", sort="query({!join fromIndex=nav_elements from=id to=id v='*:*'},0) desc")


def test_search_takes_lucene_syntax_with_phrases_wildcards_and_braces_in_quotes(index: SolrIndex, unique: str) -> None:
    spaced = Element(SourceType.HIVE, ElementType.TABLE, f"{unique}.a b@primary", name=f"{unique} a b")
    braced = Element(SourceType.HIVE, ElementType.TABLE, f"{unique}.c@primary", name=f"{unique} {{!join}}")
    writer = IndexWriter(index)
    writer.write_all([spaced, braced])
    assert writer.close()
    index.commit("elements", soft=True)
    assert {d["identity"] for d in search(index, "elements", f'originalName:"{unique} a b"').docs} == {spaced.identity}
    assert search(index, "elements", f"qualifiedName:{unique}.*").found == 2
    # In a quoted phrase `{!` is text to match, not local parameters.
    assert {d["identity"] for d in search(index, "elements", f'originalName:"{unique} {{!join}}"').docs} \
        == {braced.identity}

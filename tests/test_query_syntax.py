"""Solr's query syntax, parsed and written back (navd/index/query_syntax.py): what is refused and
why, what is written, and that the real Solr reads the written text as the query typed."""

from __future__ import annotations

import pytest

from navd.errors import SolrError
from navd.index.client import SolrIndex
from navd.index.query_syntax import (
    MAX_CLAUSES,
    MAX_DEPTH,
    Phrase,
    Query,
    QuerySyntaxError,
    Clause,
    Regexp,
    Term,
    escape,
    lucene_query,
    parse,
    range_bound,
    sort_spec,
    write,
)
from query_corpus import CAPPED, REFUSED, TEXT, query

#: (typed, written): spacing and operators normalised, escapes kept, odd range bounds quoted
WRITTEN = [
    ("*:*", "*:*"),
    ("queryText:*temp_table*", "queryText:*temp_table*"),
    ("sourceType:HIVE AND type:(TABLE OR VIEW)", "sourceType:HIVE AND type:(TABLE OR VIEW)"),
    ("(originalName:*x*^3)OR(originalDescription:*x*^10)", "(originalName:*x*^3) OR (originalDescription:*x*^10)"),
    ("+a -b !c NOT d", "+a -b NOT c NOT d"),
    ("a && b || c", "a AND b OR c"),
    ("fileSystemPath:\\/user\\/x AND -type:FILE", "fileSystemPath:\\/user\\/x AND -type:FILE"),
    ('originalName:"a \\"b\\" {!join}"~2^3', 'originalName:"a \\"b\\" {!join}"^3~2'),
    ("started:[2026-01-01T00:00:00Z TO *}", "started:[2026-01-01T00:00:00Z TO *}"),
    ('originalName:[a" TO "b c"]', 'originalName:["a\\u0022" TO "b c"]'),
    ("qualifiedName:/sales\\.t@.*/", "qualifiedName:/sales\\.t@.*/"),
    ("a /* a comment with {!join} */ b", "a b"),
    (f"a{chr(0x3000)}b", "a b"),  # U+3000 is whitespace to Solr
    ("filter(type:TABLE) a^=2 b~1", "filter(type:TABLE) a^=2 b~1"),
    ("originalName:\uff5b\uff01join", "originalName:\uff5b\uff01join"),  # fullwidth: text
]


@pytest.mark.parametrize(("typed", "written"), WRITTEN)
def test_a_query_is_written_back_as_solr_reads_it(typed: str, written: str) -> None:
    assert lucene_query(typed) == written
    assert lucene_query(written) == written  # written once, it stays


@pytest.mark.parametrize(("template", "named"), REFUSED, ids=[t[:50] for t, _ in REFUSED])
def test_syntax_that_runs_another_parser_is_refused(template: str, named: str) -> None:
    with pytest.raises(QuerySyntaxError, match=rf"^query: {named}") as refused:
        parse(query(template))
    assert "\n" not in str(refused.value) and refused.value.parameter == "query"


@pytest.mark.parametrize("template", TEXT)
def test_the_same_characters_as_text_are_taken(template: str) -> None:
    written = lucene_query(query(template))
    assert lucene_query(written) == written


def test_the_refusal_says_where() -> None:
    with pytest.raises(QuerySyntaxError, match=r"^query: local parameters '\{!join x=y\}' at character 18 are refused"):
        parse("originalName:x (({!join x=y}a))")
    with pytest.raises(QuerySyntaxError, match=r"^q: the field _val_ at character 7 is refused"):
        parse('a OR (_val_:"1")', parameter="q")


@pytest.mark.parametrize(("text", "named"), CAPPED, ids=["5000 (", "1025 clauses"])
def test_nesting_and_clauses_are_capped(text: str, named: str) -> None:
    with pytest.raises(QuerySyntaxError, match=f"^query: {named}"):
        parse(text)


def test_up_to_the_caps_is_taken() -> None:
    assert lucene_query("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH) == "(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH
    assert len(parse(" ".join(["a"] * MAX_CLAUSES)).clauses) == MAX_CLAUSES


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("  /* only a comment */ ", "empty"),
    ("type:(", "the '(' at character 6 is not closed with ')'"),
    ("a)", "')' at character 2 closes no '('"),
    ("()", "the '(' at character 1 is empty"),
    ('a:"b', "the phrase '\"' at character 3 is not closed"),
    ("a /* b", "the comment '/*' at character 3 is not closed"),
    ("a\\", "the query ends with an escape character"),
    ("a^", "the boost '^' at character 2 needs a number"),
    ("a^x", "the boost '^' at character 2 needs a number"),
    ("x:[a b]", "the range at character 3 needs 'TO'"),
    ("x:[a TO b", "the range at character 3 is not closed"),
    ("AND a", "'AND' at character 1 joins nothing before it"),
    ("a b}", "'}' at character 4 closes no range"),
    ("a //", "'/' at character 3 starts neither a regular expression"),
    ("a:b:c", "expected a term, a phrase, a range or '(', found ':' at character 4"),
    ("\\u12", "at character 1: a unicode escape \\u needs four hex digits"),
    ("a \ud800", "not UTF-8 text at character 3"),
])
def test_what_solr_would_not_parse_is_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError) as refused:
        parse(text)
    assert str(refused.value).startswith("query: ") and "\n" not in str(refused.value)
    assert message in str(refused.value), str(refused.value)


def test_a_tree_that_cannot_be_written_back_unchanged_is_refused() -> None:
    # built by hand, not parsed: a raw space inside a term, a regular expression ending in `\`
    for node in (Term("term", "a b"), Regexp("a\\"), Phrase('a"b')):
        with pytest.raises(QuerySyntaxError, match="^query: navd cannot pass this query on unchanged"):
            write(Query((Clause(node),)))


def test_values_navd_puts_into_queries_stay_literal() -> None:
    for value in ("a b", "a\tb", "a\nb", "{!join}", "AND", "x:*", '"', "\\", "a\u3000b", "-1"):
        [clause] = parse(escape(value)).clauses
        assert isinstance(clause.node, Term) and clause.node.kind == "term" and clause.node.text == value
        bound = parse(f"x:[{range_bound(value)} TO *]").clauses[0].node
        assert bound.low == value  # type: ignore[union-attr]


def test_a_sort_is_fields_and_directions_only() -> None:
    assert sort_spec("lastModified DESC,identity asc") == "lastModified desc, identity asc"
    for bad in ("query({!join fromIndex=x},0) desc", "sum(a,b) asc", "a", "a up", "a asc b"):
        with pytest.raises(QuerySyntaxError, match="^--sort: .* is not 'FIELD asc' or 'FIELD desc'"):
            sort_spec(bad)


# -- against the real Solr -------------------------------------------------------------------

#: queries as people type them (README, Hue, the Navigator SDK) and odd corners of the grammar
SOLR_READS_THE_SAME = [
    "*:*", "queryText:*temp_table*", "sourceType:HIVE AND type:TABLE", 'originalName:"a b"', "a b c",
    "(originalName:*x*^3)OR(description:*x*^10)", "originalName:[* TO *]", "-deleted:true",
    "+a -b !c NOT d", "a && b || c", "qualifiedName:/ab.*/", 'a~2 "x y"~3^2', "filter(sourceType:HIVE)",
    'a /* comment "*/ b', "originalName:a\\:name\\:b", "fileSystemPath:\\/user\\/x AND -type:FILE", "a + b",
    "identity:{a TO b]", 'originalName:["a b" TO "c\\"d"]', "a^=2", "originalName:café",
    "originalName:\uff5b\uff01join", 'originalName:"{!join from=identity fromIndex=nav_runs to=identity}"',
    "originalName:[{!a TO b]", 'originalName:[a" TO a]', "originalName:\\u0041bc", "originalName:a\\u0041*",
    "originalName:*a\\u0041*", "originalName:or?ers", "qualifiedName:sales.t@*",
    "sourceType:hive AND type:(table OR view)",
    "((originalName:*orders*^3)OR(description:*orders*^1))AND((originalName:[* TO *])"
    "OR(description:[* TO *])) AND (*) AND ((type:TABLE)OR(type:VIEW))",
    '+(parentPath:"/db") +(originalName:orders) +(type:TABLE)',
    "DATABASE AND (sourceType:HIVE)AND(originalName:db)AND(deleted:false)",
    "started:[2026-01-01T00:00:00Z TO *}", "size:{10 TO *]", "originalName:a\\ b", "originalName:a-b/c!d",
    'originalName:"back\\\\slash"', "text:(foo bar) AND NOT originalName:baz", "originalName:foo~1",
    "(a OR b)^3", "*:* -deleted:true", "originalName:TO", "originalName:\\AND", "qualifiedName:/a\\/b/",
    "prop_tblproperty.tier:gold", "originalName:xx\tyy", "a AND (b OR (c AND (d OR e)))",
]


def _parsed_by_solr(index: SolrIndex, text: str) -> str:
    body = index.search("elements", text, rows=0, params={"defType": "lucene", "debugQuery": "true"})
    return str(body["debug"]["parsedquery"])


def test_solr_reads_the_written_query_as_the_typed_one(index: SolrIndex) -> None:
    differ = {typed: (_parsed_by_solr(index, typed), _parsed_by_solr(index, lucene_query(typed)))
              for typed in SOLR_READS_THE_SAME}
    assert {typed: pair for typed, pair in differ.items() if pair[0] != pair[1]} == {}


#: regular expressions Lucene takes and ones it refuses (Solr answers those with HTTP 500)
REGEXPS = ["ab.*", "\\d+", "<1-5>", "a{2,}b{3}c?d+", "[a-z0-9_]+@.*", "sales\\.t@.*", "()", "a|b|c&d", "~a",
           "[^abc]", "|", "#", "@", "\"a\"b", "<5-1>", "\\.", "[\\]]", "[a-\\d]", "a**", "a{2}{3}", "[-a]", "é+",
           "[😀-😂]", "{2}", "\\{!jo{in.*", "\\{!jo[in.*", "a(", "<foo>", "~", "a&", '"ab', "a{3,1}", "\\n",
           "[z-a]",
           "a{,3}", "[]", "[a", "a)", "<->", "<1-2-3>", "\\q", "a|", "x[]y", "[a-]", "<1-99999999999>"]


def test_a_regular_expression_is_taken_when_solr_takes_it(index: SolrIndex) -> None:
    def solr_takes(text: str) -> bool:
        try:
            index.search("elements", text, rows=0, params={"defType": "lucene"})
        except SolrError as exc:
            assert exc.status == 500, exc  # Lucene's refusal, answered as a failure
            return False
        return True

    def navd_takes(text: str) -> bool:
        try:
            parse(text)
        except QuerySyntaxError as exc:
            assert "the regular expression at character 14 is not Lucene's syntax" in str(exc), exc
            return False
        return True

    differ = {pattern: solr_takes(f"originalName:/{pattern}/") for pattern in REGEXPS
              if solr_takes(f"originalName:/{pattern}/") != navd_takes(f"originalName:/{pattern}/")}
    assert differ == {}

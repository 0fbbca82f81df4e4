"""Query text that tries to reach past Solr's Lucene syntax (local parameters, magic fields, deep
nesting), and text that only looks like it: for the refusal tests at the API and the CLI
(tests/test_query_bypass.py), the parser's tests (tests/test_query_syntax.py) and the fuzz
targets (tests/fuzz). In a template CORE stands for the core a cross-core join would read and
GUESS for the value it probes (`query()` fills them in): when Solr runs the join, the answer
says whether the guess was right."""

from __future__ import annotations

#: Solr's whitespace beyond ASCII (navd/index/query_syntax.py WHITESPACE)
IDEOGRAPHIC_SPACE = "\u3000"
_JOIN = "{!join from=identity fromIndex=CORE to=identity v='component:GUESS'}"

#: (template, what the refusal names); the ones marked "got past" answered 200 before navd parsed
#: queries (a pattern check skipping what it took for quoted text)
REFUSED: tuple[tuple[str, str], ...] = (
    # got past: to Solr the `"` is part of the range bound `a"`, to the check it opened a phrase
    ('originalName:[a" TO a] OR ({!join from=identity fromIndex=CORE to=identity v="component:GUESS"}) OR "zzqq"',
     "local parameters"),
    ("{!join from=identity fromIndex=CORE to=identity}component:GUESS", "local parameters"),
    (f"originalName:x OR {_JOIN}", "local parameters"),
    (f"originalName:x OR ({_JOIN})", "local parameters"),
    (f"filter({_JOIN})", "local parameters"),
    # got past: a `"` inside a comment, then inside a regular expression
    (f'originalName:x /* " */ OR {_JOIN} /* " */', "local parameters"),
    (f'originalName:/"/ OR {_JOIN} OR originalName:/"/', "local parameters"),
    # got past: the range trick for the other parsers
    ("originalName:[a\" TO a] OR {!xmlparser v='<MatchAllDocsQuery/>'}", "local parameters"),
    ('originalName:[a" TO a] OR {!frange l=0 u=10}sum(1,1)', "local parameters"),
    ('originalName:[a" TO a] OR {!func}sum(1,1)', "local parameters"),
    ("{!xmlparser v='<MatchAllDocsQuery/>'}", "local parameters"),
    ("{!frange l=0 u=10}sum(1,1)", "local parameters"),
    ("{!func}sum(1,1)", "local parameters"),
    # Solr's whitespace: tab, newline, U+3000
    (f"originalName:x OR\n\t{_JOIN}", "local parameters"),
    (f"originalName:x OR{IDEOGRAPHIC_SPACE}{_JOIN}", "local parameters"),
    # the magic fields, plain, escaped, nested, spaced
    ('_query_:"{!join from=identity fromIndex=CORE to=identity}component:GUESS"', "the field _query_"),
    ('\\_query\\_:"{!join from=identity fromIndex=CORE to=identity}component:GUESS"', "the field _query_"),
    # got past: Solr resolves \uXXXX in a field name
    ('\\u005Fquery_:"{!join from=identity fromIndex=CORE to=identity}component:GUESS"', "the field _query_"),
    ('originalName:x OR (type:TABLE AND (_query_:"{!join from=identity fromIndex=CORE to=identity}component:GUESS"))',
     "the field _query_"),
    ('_query_ :"{!join from=identity fromIndex=CORE to=identity}component:GUESS"', "the field _query_"),
    (f'_query_{IDEOGRAPHIC_SPACE}:"{{!join from=identity fromIndex=CORE to=identity}}component:GUESS"',
     "the field _query_"),
    ("_query_:(component\\:GUESS)", "the field _query_"),
    ('_val_:"sum(1,1)"', "the field _val_"),
)

#: the same bytes of the join, not Solr syntax: each is searched as text (no join runs)
TEXT: tuple[str, ...] = (
    f'originalName:"{_JOIN}"',  # a phrase
    "originalName:\\{!join",  # an escaped brace
    "originalName:\\u007B!join",  # a unicode escape: the term `{!join`
    "originalName:\uff5b\uff01join OR originalName:\uff5bjoin\uff5d",  # fullwidth braces and bang
    'originalName:["{!join from=identity" TO "{!join from=identitz"]',  # range bounds
    "originalName:%7B%21join%20from%3Didentity",  # percent-encoded once more than the URL decodes
    "originalName:/\\{!join.*/",  # a regular expression
    f"originalName:x /* {_JOIN} */",  # a comment: skipped
)

#: the nesting and size caps (query_syntax.MAX_DEPTH, MAX_CLAUSES)
DEEP = "(" * 5000 + "a" + ")" * 5000
WIDE = " OR ".join(["a"] * 1025)
CAPPED: tuple[tuple[str, str], ...] = (
    (DEEP, "groups nested deeper than 32 levels are refused"),
    (WIDE, "more than 1024 clauses are refused"),
)


def query(template: str, core: str = "nav_runs", guess: str = "secret") -> str:
    return template.replace("CORE", core).replace("GUESS", guess)

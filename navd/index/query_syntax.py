"""Solr's standard query syntax (the `lucene` query parser), parsed and written back: the one
gate user query text passes before it reaches Solr (`navd search`, GET /api/entities, Navigator's
entity queries).

Solr's lucene parser runs local parameters wherever its grammar meets them: a query starting
with `{!...}`, a clause `{!join fromIndex=<core>}...` in the middle, and the magic fields
`_query_:"{!...}"` and `_val_:"<function>"`. `{!join fromIndex=<core>}` reads any core on the
node, `{!xmlparser}`, `{!func}` and `{!frange}` run other parsers. Solr 9 has no switch that
turns this off for the lucene parser (LuceneQParser enables sub-parsers on every parse), so the
refusal is navd's: the text is parsed with Solr's own grammar and only the parsed tree is sent.

The tokenizer (navd.index.query_tokens) follows Solr 9's grammar
(solr/core/src/java/org/apache/solr/parser/QueryParser.jj) token for token: longest match, a tie to the token declared first, its lexical states (DEFAULT,
Range after `[`/`{`, Boost after `^`), its whitespace (` \\t\\n\\r` and U+3000) and its nested
`/* comments */`. A pattern check that skips quoted text cannot do that: a `"` inside a range
bound (`[a" TO a]`) or a comment is not a quote to Solr, and `\\u005Fquery_` is `_query_`.

`parse` refuses, naming the parameter and the character: local parameters anywhere outside a
phrase, the magic fields (however escaped), groups nested deeper than MAX_DEPTH, more than
MAX_CLAUSES clauses (5,000 `(` overflowed Solr's stack), regular expressions Lucene's RegExp
does not parse (Solr answers those with HTTP 500), and whatever Solr's grammar does not parse.
`write` turns a tree back into the text Solr reads: terms and phrases as the user escaped
them (an escape is inert in every Solr token), range bounds quoted with unicode escapes,
operators and spacing normalised. It parses its own output again and refuses unless that gives
the same tree, so the text Solr reads is the text that was checked.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from .lucene_regexp import check_regexp
from .query_tokens import (
    INSIDE_TERM,
    KEYWORDS,
    NOT_TERM_START,
    WHITESPACE,
    WILDCARDS,
    Lexer,
    QuerySyntaxError,
    Token,
    TokenKind,
    at_character,
    shown,
    unescape,
)

__all__ = ["MAGIC_FIELDS", "MAX_CLAUSES", "MAX_DEPTH", "WHITESPACE", "Clause", "Group", "Node", "Phrase", "Query",
           "QuerySyntaxError", "Range", "Regexp", "Term", "escape", "lucene_query", "parse", "quote", "range_bound",
           "sort_spec", "write"]

#: Parentheses nested deeper are refused: Solr parses them recursively (5,000 `(` overflowed
#: its stack: HTTP 500 and 142 kB of stack trace in solr.log per request).
MAX_DEPTH = 32
#: Terms, phrases, ranges and regular expressions in one query: Solr's maxBooleanClauses.
MAX_CLAUSES = 1024

#: Solr's magic field names: each parses its value with another query parser.
MAGIC_FIELDS = frozenset({"_query_", "_val_"})
#: A range bound written without quotes: what no Range token reads otherwise.
_PLAIN_BOUND = re.compile(r"[A-Za-z0-9_.:@+\-/,=]+")
_SORT_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


# -- the tree ---------------------------------------------------------------------------------

TermKind = Literal["term", "prefix", "wildcard", "star", "bare"]


@dataclasses.dataclass(frozen=True)
class Term:
    """A term: `orders`, `orders*` (prefix), `*temp_table*` (wildcard), `*`, or a lone `+`/`-`/
    `!` followed by whitespace (bare: Solr searches the character)."""

    kind: TermKind
    image: str  # as typed, escapes kept: `a\:b`; Solr resolves them (term, prefix) or reads `\x` as x (wildcard)
    boost: str | None = None  # the number after `^`
    fuzzy: str | None = None  # `~` or `~2`

    @property
    def text(self) -> str:
        """The value searched for, escapes resolved (a prefix without its `*`; a wildcard term
        as typed)."""
        if self.kind == "term":
            return unescape(self.image)
        if self.kind == "prefix":
            return unescape(self.image[:-1])
        return self.image


@dataclasses.dataclass(frozen=True)
class Phrase:
    image: str  # between the quotes, as typed (escapes kept)
    boost: str | None = None
    slop: str | None = None  # `~2`

    @property
    def text(self) -> str:
        return unescape(self.image)


@dataclasses.dataclass(frozen=True)
class Range:
    low: str | None  # the bound's value, escapes resolved; None: open (`*`)
    high: str | None
    low_inclusive: bool  # `[` (else `{`)
    high_inclusive: bool  # `]` (else `}`)
    boost: str | None = None


@dataclasses.dataclass(frozen=True)
class Regexp:
    pattern: str  # between the slashes, as typed
    boost: str | None = None
    fuzzy: str | None = None  # accepted by Solr's grammar and ignored


@dataclasses.dataclass(frozen=True)
class Group:
    query: Query
    boost: str | None = None
    filter: bool = False  # Solr's `filter(...)`: the group cached as a filter


Node = Term | Phrase | Range | Regexp | Group


@dataclasses.dataclass(frozen=True)
class Clause:
    node: Node
    field: str | None = None  # escapes resolved; None: the enclosing group's field or Solr's default
    conjunction: Literal["AND", "OR"] | None = None  # before this clause (`&&`, `||` are spelt AND, OR)
    modifier: Literal["+", "-", "NOT"] | None = None  # `!` is spelt NOT


@dataclasses.dataclass(frozen=True)
class Query:
    clauses: tuple[Clause, ...]


_TERM_KINDS: dict[TokenKind, TermKind] = {
    TokenKind.TERM: "term", TokenKind.PREFIXTERM: "prefix", TokenKind.WILDTERM: "wildcard", TokenKind.STAR: "star",
    TokenKind.BAREOPER: "bare"}
_BOUND_KINDS = (TokenKind.RANGE_GOOP, TokenKind.RANGE_QUOTED, TokenKind.RANGE_TO)


# -- the parser ---------------------------------------------------------------------------------

class _Parser:
    """Solr's grammar (QueryParser.jj: Query, Clause, Term) over the tokens, recursive descent
    with the depth bounded."""

    def __init__(self, text: str, parameter: str) -> None:
        self.text = text
        self.parameter = parameter
        self.tokens = Lexer(text, parameter).tokens()
        self.next = 0
        self.clauses = 0

    def error(self, message: str) -> QuerySyntaxError:
        return QuerySyntaxError(self.parameter, message)

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.next + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        token = self.peek()
        self.next += 1
        return token

    def expected(self, what: str) -> QuerySyntaxError:
        token = self.peek()
        found = "the end of the query" if token.kind is TokenKind.EOF else f"{shown(token.text)} {at_character(token.at)}"
        return self.error(f"expected {what}, found {found}")

    def top(self) -> Query:
        if self.peek().kind is TokenKind.EOF:
            raise self.error("empty: give a query (*:* matches everything)")
        query = self.query(0)
        if self.peek().kind is not TokenKind.EOF:
            token = self.peek()
            if token.kind is TokenKind.RPAREN:
                raise self.error(f"')' {at_character(token.at)} closes no '('")
            raise self.expected("a clause")
        return query

    def query(self, depth: int) -> Query:
        clauses: list[Clause] = []
        while self.peek().kind not in (TokenKind.RPAREN, TokenKind.EOF):
            token = self.peek()
            conjunction: Literal["AND", "OR"] | None = None
            if token.kind in (TokenKind.AND, TokenKind.OR):
                if not clauses:
                    raise self.error(f"{shown(token.text)} {at_character(token.at)} joins nothing before it")
                self.take()
                conjunction = "AND" if token.kind is TokenKind.AND else "OR"
            modifier: Literal["+", "-", "NOT"] | None = None
            token = self.peek()
            if token.kind in (TokenKind.PLUS, TokenKind.MINUS, TokenKind.NOT):
                self.take()
                modifier = "+" if token.kind is TokenKind.PLUS else "-" if token.kind is TokenKind.MINUS else "NOT"
            clauses.append(self.clause(depth, conjunction, modifier))
        if not clauses:
            raise self.expected("a clause")
        return Query(tuple(clauses))

    def clause(self, depth: int, conjunction: Literal["AND", "OR"] | None,
               modifier: Literal["+", "-", "NOT"] | None) -> Clause:
        field = None
        first = self.peek()
        if self.peek(1).kind is TokenKind.COLON and first.kind in (TokenKind.TERM, TokenKind.STAR):
            field = "*" if first.kind is TokenKind.STAR else self.unescape(first.text, first.at)
            if field in MAGIC_FIELDS:
                raise self.error(f"the field {field} {at_character(first.at)} is refused: it runs another query parser "
                                 f"or a function; navd takes Solr's Lucene query syntax only")
            self.take()
            self.take()
        token = self.peek()
        if token.kind in (TokenKind.LPAREN, TokenKind.FILTER):
            if depth + 1 > MAX_DEPTH:
                raise self.error(f"groups nested deeper than {MAX_DEPTH} levels are refused "
                                 f"('(' {at_character(token.at)} opens level {depth + 1})")
            self.take()
            if self.peek().kind in (TokenKind.RPAREN, TokenKind.EOF):
                raise self.error(f"the '(' {at_character(token.at)} " + ("is empty" if self.peek().kind is TokenKind.RPAREN
                                                               else "is not closed with ')'"))
            inner = self.query(depth + 1)
            if self.peek().kind is not TokenKind.RPAREN:
                raise self.error(f"the '(' {at_character(token.at)} is not closed with ')'")
            self.take()
            node: Node = Group(inner, self.boost(), filter=token.kind is TokenKind.FILTER)
        else:
            node = self.term()
        return Clause(node, field, conjunction, modifier)

    def count(self, token: Token) -> None:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise self.error(f"more than {MAX_CLAUSES} clauses are refused (clause {self.clauses} {at_character(token.at)})")

    def term(self) -> Node:
        token = self.peek()
        if token.kind in _TERM_KINDS or token.kind is TokenKind.REGEXPTERM:
            self.take()
            self.count(token)
            boost, fuzzy = self.suffix()
            if token.kind is TokenKind.REGEXPTERM:
                pattern = token.text[1:-1]
                if pattern.endswith("\\"):
                    raise self.error(f"the regular expression {at_character(token.at)} ends with '\\' before its closing '/'")
                try:
                    check_regexp(pattern, MAX_DEPTH)
                except ValueError as exc:
                    raise self.error(f"the regular expression {at_character(token.at)} is not Lucene's syntax: {exc}") from None
                return Regexp(pattern, boost, fuzzy)
            image = token.text[0] if token.kind is TokenKind.BAREOPER else token.text
            if token.kind in (TokenKind.TERM, TokenKind.PREFIXTERM):
                self.unescape(image, token.at)  # what Solr refuses: `\u12`, a trailing `\`
            return Term(_TERM_KINDS[token.kind], image, boost, fuzzy)
        if token.kind is TokenKind.QUOTED:
            self.take()
            self.count(token)
            self.unescape(token.text[1:-1], token.at)
            boost, slop = self.suffix()
            return Phrase(token.text[1:-1], boost, slop)
        if token.kind in (TokenKind.RANGEIN_START, TokenKind.RANGEEX_START):
            self.take()
            self.count(token)
            low = self.bound(token)
            if self.peek().kind is not TokenKind.RANGE_TO:
                raise self.error(f"the range {at_character(token.at)} needs 'TO' between its bounds ([a TO b])")
            self.take()
            high = self.bound(token)
            end = self.peek()
            if end.kind not in (TokenKind.RANGEIN_END, TokenKind.RANGEEX_END):
                raise self.error(f"the range {at_character(token.at)} is not closed with ']' or '}}'")
            self.take()
            return Range(low, high, token.kind is TokenKind.RANGEIN_START, end.kind is TokenKind.RANGEIN_END, self.boost())
        raise self.expected("a term, a phrase, a range or '('")

    def bound(self, start: Token) -> str | None:
        token = self.peek()
        if token.kind not in _BOUND_KINDS:
            raise self.error(f"the range {at_character(start.at)} needs two bounds ([a TO b], * for open)")
        self.take()
        if token.kind is TokenKind.RANGE_QUOTED:
            return self.unescape(token.text[1:-1], token.at)
        return None if token.text == "*" else self.unescape(token.text, token.at)

    def boost(self) -> str | None:
        if self.peek().kind is not TokenKind.CARAT:
            return None
        caret = self.take()
        number = self.take()
        if number.kind is not TokenKind.NUMBER:
            raise self.error(f"the boost '^' {at_character(caret.at)} needs a number after it (a^2)")
        return number.text

    def suffix(self) -> tuple[str | None, str | None]:
        """`[^N [~M]] | [~M [^N]]`: the boost and the fuzziness (or slop)."""
        boost = fuzzy = None
        if self.peek().kind is TokenKind.CARAT:
            boost = self.boost()
            if self.peek().kind is TokenKind.FUZZY_SLOP:
                fuzzy = self.take().text
        elif self.peek().kind is TokenKind.FUZZY_SLOP:
            fuzzy = self.take().text
            boost = self.boost()
        return boost, fuzzy

    def unescape(self, image: str, at: int) -> str:
        try:
            return unescape(image)
        except ValueError as exc:
            raise self.error(f"{shown(image)} {at_character(at)}: {exc}") from None



def parse(text: str, parameter: str = "query") -> Query:
    """The query `text` as Solr's lucene parser reads it; QuerySyntaxError (naming `parameter`
    and the character) for what navd refuses to send (module docstring)."""
    for index, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            raise QuerySyntaxError(parameter, f"not UTF-8 text {at_character(index)}")
    return _Parser(text, parameter).top()


# -- writing back ---------------------------------------------------------------------------------

def write(query: Query, parameter: str = "query") -> str:
    """The text Solr reads for `query`: parsed again, it gives `query` (QuerySyntaxError naming
    `parameter` otherwise: navd does not send what it cannot write back unchanged)."""
    text = _query_text(query)
    try:
        same = parse(text, parameter) == query
    except QuerySyntaxError:
        same = False
    if not same:
        raise QuerySyntaxError(parameter, f"navd cannot pass this query on unchanged: written back as {shown(text)}")
    return text


def lucene_query(text: str, parameter: str = "query") -> str:
    """`text` parsed and written back: what navd sends Solr for a user's query."""
    return write(parse(text, parameter), parameter)


def _query_text(query: Query) -> str:
    return " ".join(_clause_text(clause) for clause in query.clauses)


def _clause_text(clause: Clause) -> str:
    out = f"{clause.conjunction} " if clause.conjunction else ""
    if clause.modifier:
        out += "NOT " if clause.modifier == "NOT" else clause.modifier
    if clause.field is not None:
        out += ("*" if clause.field == "*" else escape(clause.field)) + ":"
    return out + _node_text(clause.node)


def _suffix(boost: str | None, fuzzy: str | None) -> str:
    return (f"^{boost}" if boost is not None else "") + (fuzzy or "")


def _node_text(node: Node) -> str:
    if isinstance(node, Term):
        if node.kind == "bare":
            return node.image + " " + _suffix(node.boost, node.fuzzy)
        return _image(node.image, node.kind) + _suffix(node.boost, node.fuzzy)
    if isinstance(node, Phrase):
        return f'"{_phrase_image(node.image)}"' + _suffix(node.boost, node.slop)
    if isinstance(node, Range):
        return ("[" if node.low_inclusive else "{") + f"{range_bound(node.low)} TO {range_bound(node.high)}" \
            + ("]" if node.high_inclusive else "}") + _suffix(node.boost, None)
    if isinstance(node, Regexp):
        return f"/{node.pattern}/" + _suffix(node.boost, node.fuzzy)
    return ("filter(" if node.filter else "(") + _query_text(node.query) + ")" + _suffix(node.boost, None)


def _image(image: str, kind: str) -> str:
    """A term image as one token of its kind: escape pairs kept, any other character that is
    syntax where it stands escaped (the parse gave none; this keeps it so)."""
    out: list[str] = []
    i = 0
    while i < len(image):
        char = image[i]
        if char == "\\" and i + 1 < len(image):
            out.append(image[i:i + 2])
            i += 2
            continue
        wildcard = char in WILDCARDS and kind in ("prefix", "wildcard", "star")
        inside = char in INSIDE_TERM and i > 0
        out.append(char if wildcard or inside or char not in NOT_TERM_START else "\\" + char)
        i += 1
    text = "".join(out)
    return "\\" + text if text in KEYWORDS else text


def _phrase_image(image: str) -> str:
    """A phrase's inside as typed; a quote or a lone backslash escaped (the parse gave none)."""
    out: list[str] = []
    i = 0
    while i < len(image):
        if image[i] == "\\" and i + 1 < len(image):
            out.append(image[i:i + 2])
            i += 2
        else:
            out.append("\\" + image[i] if image[i] in '"\\' else image[i])
            i += 1
    return "".join(out)


def range_bound(value: str | None) -> str:
    """A range bound as Solr reads it back to `value` (None: `*`, open). Plain values as they
    are; others quoted, `"` and `\\` as unicode escapes: in a quoted bound Solr's tokenizer would
    otherwise take `\\"` for an escaped quote and read on to the next one."""
    if value is None:
        return "*"
    if _PLAIN_BOUND.fullmatch(value) and value != "TO":
        return value
    return '"' + "".join(f"\\u{ord(c):04X}" if c in '"\\' or "\ud800" <= c <= "\udfff" else c for c in value) + '"'


# -- values navd puts into queries ------------------------------------------------------------------

def escape(value: str) -> str:
    """`value` as one term that matches it literally: every character that is syntax escaped
    (wildcards too). Append a `*` for a prefix query."""
    text = "".join("\\" + c if c in NOT_TERM_START or c in "&|" else c for c in value)
    return "\\" + text if text in KEYWORDS else text


def quote(value: str) -> str:
    """`value` as a phrase: in double quotes, backslashes and quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sort_spec(text: str, parameter: str = "--sort") -> str:
    """A Solr sort of fields only, `FIELD asc|desc[, ...]`, as navd sends it; QuerySyntaxError
    naming `parameter` for anything else (a sort function can carry local parameters)."""
    parts: list[str] = []
    for item in text.split(","):
        words = item.split()
        if len(words) != 2 or not _SORT_FIELD.fullmatch(words[0]) or words[1].lower() not in ("asc", "desc"):
            raise QuerySyntaxError(parameter, f"{shown(item.strip())} is not 'FIELD asc' or 'FIELD desc' "
                                              f"(functions and local parameters are refused)")
        parts.append(f"{words[0]} {words[1].lower()}")
    return ", ".join(parts)

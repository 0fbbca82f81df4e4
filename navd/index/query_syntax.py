"""Solr's standard query syntax (the `lucene` query parser), parsed and written back: the one
gate user query text passes before it reaches Solr (`navd search`, GET /api/entities, Navigator's
entity queries).

Solr's lucene parser runs local parameters wherever its grammar meets them: a query starting
with `{!...}`, a clause `{!join fromIndex=<core>}...` in the middle, and the magic fields
`_query_:"{!...}"` and `_val_:"<function>"`. `{!join fromIndex=<core>}` reads any core on the
node, `{!xmlparser}`, `{!func}` and `{!frange}` run other parsers. Solr 9 has no switch that
turns this off for the lucene parser (LuceneQParser enables sub-parsers on every parse), so the
refusal is navd's: the text is parsed with Solr's own grammar and only the parsed tree is sent.

The tokenizer follows Solr 9's grammar (solr/core/src/java/org/apache/solr/parser/QueryParser.jj)
token for token: longest match, a tie to the token declared first, its lexical states (DEFAULT,
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
import enum
import re
from typing import Literal

from navd.errors import UsageError

__all__ = ["MAGIC_FIELDS", "MAX_CLAUSES", "MAX_DEPTH", "WHITESPACE", "Clause", "Group", "Node", "Phrase", "Query",
           "QuerySyntaxError", "Range", "Regexp", "Term", "escape", "lucene_query", "parse", "quote", "range_bound",
           "sort_spec", "write"]

#: Parentheses nested deeper are refused: Solr parses them recursively (5,000 `(` overflowed
#: its stack: HTTP 500 and 142 kB of stack trace in solr.log per request).
MAX_DEPTH = 32
#: Terms, phrases, ranges and regular expressions in one query: Solr's maxBooleanClauses.
MAX_CLAUSES = 1024

#: Solr's whitespace (QueryParser.jj `_WHITESPACE`); other Unicode spaces are term characters.
WHITESPACE = frozenset(" \t\n\r\u3000")
#: Characters that cannot start a term unescaped (`_TERM_START_CHAR`)...
_NOT_TERM_START = WHITESPACE | frozenset('+-!():^[]"{}~*?\\/')
#: ...of which these may follow its first character (`_TERM_CHAR`).
_INSIDE_TERM = frozenset("-+/!")
_WILDCARDS = frozenset("*?")
_KEYWORDS = frozenset({"AND", "OR", "NOT", "&&", "||"})
#: Solr's magic field names: each parses its value with another query parser.
MAGIC_FIELDS = frozenset({"_query_", "_val_"})
#: A range bound written without quotes: what no Range token reads otherwise.
_PLAIN_BOUND = re.compile(r"[A-Za-z0-9_.:@+\-/,=]+")
_SORT_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
#: a boost (QueryParser.jj `NUMBER`, the Boost state's one token)
_NUMBER = re.compile(r"=?-?[0-9]+(?:\.[0-9]+)?")
_SHOWN_CHARS = 60


class QuerySyntaxError(UsageError):
    """Query text navd refuses to send: not Solr's Lucene syntax, or syntax that runs another
    query parser. One line starting with the parameter (`query: ...`), as the API's 400 and the
    CLI's exit 2 show it."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(f"{parameter}: {message}")
        self.parameter = parameter


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
            return _unescape(self.image)
        if self.kind == "prefix":
            return _unescape(self.image[:-1])
        return self.image


@dataclasses.dataclass(frozen=True)
class Phrase:
    image: str  # between the quotes, as typed (escapes kept)
    boost: str | None = None
    slop: str | None = None  # `~2`

    @property
    def text(self) -> str:
        return _unescape(self.image)


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


# -- tokens -------------------------------------------------------------------------------------

class _Kind(enum.Enum):
    # DEFAULT state, in QueryParser.jj's order (a tie goes to the earlier one)
    AND = enum.auto()
    OR = enum.auto()
    NOT = enum.auto()
    PLUS = enum.auto()
    MINUS = enum.auto()
    BAREOPER = enum.auto()
    LPAREN = enum.auto()
    RPAREN = enum.auto()
    COLON = enum.auto()
    STAR = enum.auto()
    CARAT = enum.auto()
    QUOTED = enum.auto()
    TERM = enum.auto()
    FUZZY_SLOP = enum.auto()
    PREFIXTERM = enum.auto()
    WILDTERM = enum.auto()
    REGEXPTERM = enum.auto()
    RANGEIN_START = enum.auto()
    RANGEEX_START = enum.auto()
    FILTER = enum.auto()
    # Boost state
    NUMBER = enum.auto()
    # Range state
    RANGE_TO = enum.auto()
    RANGEIN_END = enum.auto()
    RANGEEX_END = enum.auto()
    RANGE_QUOTED = enum.auto()
    RANGE_GOOP = enum.auto()
    EOF = enum.auto()


@dataclasses.dataclass(frozen=True)
class _Token:
    kind: _Kind
    text: str
    at: int  # index in the query text


_TERM_KINDS: dict[_Kind, TermKind] = {_Kind.TERM: "term", _Kind.PREFIXTERM: "prefix", _Kind.WILDTERM: "wildcard",
                                      _Kind.STAR: "star", _Kind.BAREOPER: "bare"}
_BOUND_KINDS = (_Kind.RANGE_GOOP, _Kind.RANGE_QUOTED, _Kind.RANGE_TO)


def _at(index: int) -> str:
    return f"at character {index + 1}"


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "...")


class _Lexer:
    """Solr's token manager: the text as tokens, lexical states and all."""

    def __init__(self, text: str, parameter: str) -> None:
        self.text = text
        self.parameter = parameter

    def error(self, message: str) -> QuerySyntaxError:
        return QuerySyntaxError(self.parameter, message)

    def tokens(self) -> list[_Token]:
        out: list[_Token] = []
        state = "default"
        i, n = 0, len(self.text)
        while True:
            if state == "default":
                i = self._skip(i)
            elif state == "range":
                while i < n and self.text[i] in WHITESPACE:
                    i += 1
            if i >= n:
                out.append(_Token(_Kind.EOF, "", n))
                return out
            if state == "boost":
                kind, length = _Kind.NUMBER, self._number(i)
                if not length:
                    raise self.error(f"the boost '^' {_at(i - 1)} needs a number after it (a^2)")
            elif state == "range":
                kind, length = self._range_token(i)
            else:
                kind, length = self._default_token(i)
            token = _Token(kind, self.text[i:i + length], i)
            out.append(token)
            i += length
            if kind is _Kind.CARAT:
                state = "boost"
            elif kind in (_Kind.RANGEIN_START, _Kind.RANGEEX_START):
                state = "range"
            elif kind in (_Kind.NUMBER, _Kind.RANGEIN_END, _Kind.RANGEEX_END):
                state = "default"

    def _skip(self, i: int) -> int:
        """Past whitespace and (nested) comments."""
        text, n = self.text, len(self.text)
        while i < n:
            if text[i] in WHITESPACE:
                i += 1
            elif text.startswith("/*", i):
                start, depth, i = i, 1, i + 2
                while depth:
                    if i >= n:
                        raise self.error(f"the comment '/*' {_at(start)} is not closed with '*/'")
                    if text.startswith("/*", i):
                        depth, i = depth + 1, i + 2
                    elif text.startswith("*/", i):
                        depth, i = depth - 1, i + 2
                    else:
                        i += 1
            else:
                return i
        return i

    # DEFAULT state ------------------------------------------------------------------------

    def _default_token(self, i: int) -> tuple[_Kind, int]:
        text, char = self.text, self.text[i]
        if text.startswith("{!", i):
            end = text.find("}", i)
            piece = text[i:end + 1] if end >= 0 else text[i:]
            raise self.error(f"local parameters {_shown(piece)} {_at(i)} are refused: navd takes Solr's Lucene "
                             f"query syntax only (no other query parsers, no cross-core joins)")
        term = self._term(i)
        candidates = (
            (_Kind.AND, 3 if text.startswith("AND", i) else 2 if text.startswith("&&", i) else 0),
            (_Kind.OR, 2 if text.startswith(("OR", "||"), i) else 0),
            (_Kind.NOT, 3 if text.startswith("NOT", i) else 1 if char == "!" else 0),
            (_Kind.PLUS, int(char == "+")),
            (_Kind.MINUS, int(char == "-")),
            (_Kind.BAREOPER, 2 if char in "+-!" and i + 1 < len(text) and text[i + 1] in WHITESPACE else 0),
            (_Kind.LPAREN, int(char == "(")),
            (_Kind.RPAREN, int(char == ")")),
            (_Kind.COLON, int(char == ":")),
            (_Kind.STAR, int(char == "*")),
            (_Kind.CARAT, int(char == "^")),
            (_Kind.QUOTED, self._quoted(i)),
            (_Kind.TERM, term),
            (_Kind.FUZZY_SLOP, self._fuzzy(i)),
            (_Kind.PREFIXTERM, 1 if char == "*" else term + 1 if term and text[i + term:i + term + 1] == "*" else 0),
            (_Kind.WILDTERM, self._wildcard(i)),
            (_Kind.REGEXPTERM, self._regexp(i)),
            (_Kind.RANGEIN_START, int(char == "[")),
            (_Kind.RANGEEX_START, int(char == "{")),
            (_Kind.FILTER, 7 if text.startswith("filter(", i) else 0),
        )
        kind, length = max(candidates, key=lambda c: c[1])  # max() keeps the first of equals
        if length:
            return kind, length
        raise self.error(self._unreadable(i))

    def _unreadable(self, i: int) -> str:
        char = self.text[i]
        if char == '"':
            return f"the phrase '\"' {_at(i)} is not closed"
        if char == "\\":
            return f"the query ends with an escape character '\\' {_at(i)}"
        if char == "/":
            return (f"'/' {_at(i)} starts neither a regular expression /.../ nor a comment /*...*/ "
                    f"(escape it: \\/)")
        if char in "]}":
            return f"{char!r} {_at(i)} closes no range"
        return f"{char!r} {_at(i)} is not Solr's Lucene query syntax (escape it with '\\')"

    def _term_start(self, j: int) -> int:
        if j >= len(self.text):
            return 0
        if self.text[j] == "\\":
            return 2 if j + 1 < len(self.text) else 0
        return 0 if self.text[j] in _NOT_TERM_START else 1

    def _term_char(self, j: int) -> int:
        return self._term_start(j) or int(j < len(self.text) and self.text[j] in _INSIDE_TERM)

    def _term(self, i: int) -> int:
        j = i + self._term_start(i)
        if j == i:
            return 0
        while step := self._term_char(j):
            j += step
        return j - i

    def _wildcard(self, i: int) -> int:
        def step(j: int, first: bool) -> int:
            found = self._term_start(j) if first else self._term_char(j)
            return found or int(j < len(self.text) and self.text[j] in _WILDCARDS)

        j = i + step(i, True)
        if j == i:
            return 0
        while length := step(j, False):
            j += length
        return j - i

    def _quoted(self, i: int) -> int:
        text, n = self.text, len(self.text)
        if text[i] != '"':
            return 0
        j = i + 1
        while j < n:
            if text[j] == '"':
                return j + 1 - i
            if text[j] == "\\":
                if j + 1 >= n:
                    return 0
                j += 2
            else:
                j += 1
        return 0

    def _digits(self, j: int) -> int:
        k = j
        while k < len(self.text) and self.text[k] in "0123456789":
            k += 1
        return k - j

    def _fuzzy(self, i: int) -> int:
        if self.text[i] != "~":
            return 0
        j = i + 1
        digits = self._digits(j)
        if digits:
            j += digits
            if self.text[j:j + 1] == "." and self._digits(j + 1):
                j += 1 + self._digits(j + 1)
        return j - i

    def _regexp(self, i: int) -> int:
        """`/` (~[*/] | \\/) (~[/] | \\/)* `/`, longest match: it ends at the first `/` not
        preceded by a backslash; a `\\/` may also end it when no later `/` can."""
        return self._delimited(i, "/", forbidden_first="*/")

    def _delimited(self, i: int, delimiter: str, forbidden_first: str) -> int:
        text, n = self.text, len(self.text)
        if text[i] != delimiter or i + 1 >= n or text[i + 1] in forbidden_first:
            return 0
        best = 0
        j = text.find(delimiter, i + 2)
        while j >= 0:
            best = j + 1 - i
            if text[j - 1] != "\\":
                break  # this one cannot be inside: the token ends here
            j = text.find(delimiter, j + 1)
        return best

    # Boost and Range states ---------------------------------------------------------------

    def _number(self, i: int) -> int:
        match = _NUMBER.match(self.text, i)
        return match.end() - i if match else 0

    def _range_token(self, i: int) -> tuple[_Kind, int]:
        text = self.text
        goop = i
        while goop < len(text) and text[goop] not in " ]}":
            goop += 1
        candidates = (
            (_Kind.RANGE_TO, 2 if text.startswith("TO", i) else 0),
            (_Kind.RANGEIN_END, int(text[i] == "]")),
            (_Kind.RANGEEX_END, int(text[i] == "}")),
            (_Kind.RANGE_QUOTED, self._delimited(i, '"', forbidden_first='"')),
            (_Kind.RANGE_GOOP, goop - i),
        )
        return max(candidates, key=lambda c: c[1])  # one of them always matches


# -- the parser ---------------------------------------------------------------------------------

class _Parser:
    """Solr's grammar (QueryParser.jj: Query, Clause, Term) over the tokens, recursive descent
    with the depth bounded."""

    def __init__(self, text: str, parameter: str) -> None:
        self.text = text
        self.parameter = parameter
        self.tokens = _Lexer(text, parameter).tokens()
        self.next = 0
        self.clauses = 0

    def error(self, message: str) -> QuerySyntaxError:
        return QuerySyntaxError(self.parameter, message)

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.next + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.next += 1
        return token

    def expected(self, what: str) -> QuerySyntaxError:
        token = self.peek()
        found = "the end of the query" if token.kind is _Kind.EOF else f"{_shown(token.text)} {_at(token.at)}"
        return self.error(f"expected {what}, found {found}")

    def top(self) -> Query:
        if self.peek().kind is _Kind.EOF:
            raise self.error("empty: give a query (*:* matches everything)")
        query = self.query(0)
        if self.peek().kind is not _Kind.EOF:
            token = self.peek()
            if token.kind is _Kind.RPAREN:
                raise self.error(f"')' {_at(token.at)} closes no '('")
            raise self.expected("a clause")
        return query

    def query(self, depth: int) -> Query:
        clauses: list[Clause] = []
        while self.peek().kind not in (_Kind.RPAREN, _Kind.EOF):
            token = self.peek()
            conjunction: Literal["AND", "OR"] | None = None
            if token.kind in (_Kind.AND, _Kind.OR):
                if not clauses:
                    raise self.error(f"{_shown(token.text)} {_at(token.at)} joins nothing before it")
                self.take()
                conjunction = "AND" if token.kind is _Kind.AND else "OR"
            modifier: Literal["+", "-", "NOT"] | None = None
            token = self.peek()
            if token.kind in (_Kind.PLUS, _Kind.MINUS, _Kind.NOT):
                self.take()
                modifier = "+" if token.kind is _Kind.PLUS else "-" if token.kind is _Kind.MINUS else "NOT"
            clauses.append(self.clause(depth, conjunction, modifier))
        if not clauses:
            raise self.expected("a clause")
        return Query(tuple(clauses))

    def clause(self, depth: int, conjunction: Literal["AND", "OR"] | None,
               modifier: Literal["+", "-", "NOT"] | None) -> Clause:
        field = None
        first = self.peek()
        if self.peek(1).kind is _Kind.COLON and first.kind in (_Kind.TERM, _Kind.STAR):
            field = "*" if first.kind is _Kind.STAR else self.unescape(first.text, first.at)
            if field in MAGIC_FIELDS:
                raise self.error(f"the field {field} {_at(first.at)} is refused: it runs another query parser "
                                 f"or a function; navd takes Solr's Lucene query syntax only")
            self.take()
            self.take()
        token = self.peek()
        if token.kind in (_Kind.LPAREN, _Kind.FILTER):
            if depth + 1 > MAX_DEPTH:
                raise self.error(f"groups nested deeper than {MAX_DEPTH} levels are refused "
                                 f"('(' {_at(token.at)} opens level {depth + 1})")
            self.take()
            if self.peek().kind in (_Kind.RPAREN, _Kind.EOF):
                raise self.error(f"the '(' {_at(token.at)} " + ("is empty" if self.peek().kind is _Kind.RPAREN
                                                               else "is not closed with ')'"))
            inner = self.query(depth + 1)
            if self.peek().kind is not _Kind.RPAREN:
                raise self.error(f"the '(' {_at(token.at)} is not closed with ')'")
            self.take()
            node: Node = Group(inner, self.boost(), filter=token.kind is _Kind.FILTER)
        else:
            node = self.term()
        return Clause(node, field, conjunction, modifier)

    def count(self, token: _Token) -> None:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise self.error(f"more than {MAX_CLAUSES} clauses are refused (clause {self.clauses} {_at(token.at)})")

    def term(self) -> Node:
        token = self.peek()
        if token.kind in _TERM_KINDS or token.kind is _Kind.REGEXPTERM:
            self.take()
            self.count(token)
            boost, fuzzy = self.suffix()
            if token.kind is _Kind.REGEXPTERM:
                pattern = token.text[1:-1]
                if pattern.endswith("\\"):
                    raise self.error(f"the regular expression {_at(token.at)} ends with '\\' before its closing '/'")
                try:
                    _RegexpCheck(pattern).check()
                except ValueError as exc:
                    raise self.error(f"the regular expression {_at(token.at)} is not Lucene's syntax: {exc}") from None
                return Regexp(pattern, boost, fuzzy)
            image = token.text[0] if token.kind is _Kind.BAREOPER else token.text
            if token.kind in (_Kind.TERM, _Kind.PREFIXTERM):
                self.unescape(image, token.at)  # what Solr refuses: `\u12`, a trailing `\`
            return Term(_TERM_KINDS[token.kind], image, boost, fuzzy)
        if token.kind is _Kind.QUOTED:
            self.take()
            self.count(token)
            self.unescape(token.text[1:-1], token.at)
            boost, slop = self.suffix()
            return Phrase(token.text[1:-1], boost, slop)
        if token.kind in (_Kind.RANGEIN_START, _Kind.RANGEEX_START):
            self.take()
            self.count(token)
            low = self.bound(token)
            if self.peek().kind is not _Kind.RANGE_TO:
                raise self.error(f"the range {_at(token.at)} needs 'TO' between its bounds ([a TO b])")
            self.take()
            high = self.bound(token)
            end = self.peek()
            if end.kind not in (_Kind.RANGEIN_END, _Kind.RANGEEX_END):
                raise self.error(f"the range {_at(token.at)} is not closed with ']' or '}}'")
            self.take()
            return Range(low, high, token.kind is _Kind.RANGEIN_START, end.kind is _Kind.RANGEIN_END, self.boost())
        raise self.expected("a term, a phrase, a range or '('")

    def bound(self, start: _Token) -> str | None:
        token = self.peek()
        if token.kind not in _BOUND_KINDS:
            raise self.error(f"the range {_at(start.at)} needs two bounds ([a TO b], * for open)")
        self.take()
        if token.kind is _Kind.RANGE_QUOTED:
            return self.unescape(token.text[1:-1], token.at)
        return None if token.text == "*" else self.unescape(token.text, token.at)

    def boost(self) -> str | None:
        if self.peek().kind is not _Kind.CARAT:
            return None
        caret = self.take()
        number = self.take()
        if number.kind is not _Kind.NUMBER:
            raise self.error(f"the boost '^' {_at(caret.at)} needs a number after it (a^2)")
        return number.text

    def suffix(self) -> tuple[str | None, str | None]:
        """`[^N [~M]] | [~M [^N]]`: the boost and the fuzziness (or slop)."""
        boost = fuzzy = None
        if self.peek().kind is _Kind.CARAT:
            boost = self.boost()
            if self.peek().kind is _Kind.FUZZY_SLOP:
                fuzzy = self.take().text
        elif self.peek().kind is _Kind.FUZZY_SLOP:
            fuzzy = self.take().text
            boost = self.boost()
        return boost, fuzzy

    def unescape(self, image: str, at: int) -> str:
        try:
            return _unescape(image)
        except ValueError as exc:
            raise self.error(f"{_shown(image)} {_at(at)}: {exc}") from None


def _unescape(image: str) -> str:
    """Solr's discardEscapeChar: `\\x` is x, `\\uXXXX` the UTF-16 unit XXXX. ValueError for
    what Solr refuses."""
    out: list[str] = []
    i, n = 0, len(image)
    while i < n:
        char = image[i]
        if char != "\\":
            out.append(char)
            i += 1
        elif i + 1 >= n:
            raise ValueError("it ends with an escape character '\\'")
        elif image[i + 1] == "u":
            digits = image[i + 2:i + 6]
            if len(digits) < 4:
                raise ValueError("a unicode escape \\u needs four hex digits")
            if not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError(f"{digits!r} after \\u is not four hex digits")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(image[i + 1])
            i += 2
    return "".join(out)


class _RegexpCheck:
    """Whether Lucene's RegExp parser (every optional syntax on, as Solr's regexp query has it)
    takes a pattern: Solr answers a pattern it refuses with HTTP 500, as if it had failed.
    Follows lucene/core/.../util/automaton/RegExp.java (parseUnionExp and below), its
    right-recursions as loops and its parentheses nested at most MAX_DEPTH deep. ValueError says
    what is wrong. Not checked: whether the automaton is too complex to build (Solr's 500 for
    that is turned into a refusal where the query is sent)."""

    _INVALID_ESCAPES = frozenset("abcefghijklmnopqrtuvxyzABCEFGHIJKLMNOPQRTUVXYZ")

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0
        self.depth = 0

    def check(self) -> None:
        if not self.text:
            return
        self.union()
        if self.more():
            raise ValueError(f"{self.text[self.pos]!r} at position {self.pos} ends nothing")

    def more(self) -> bool:
        return self.pos < len(self.text)

    def peek(self, chars: str) -> bool:
        return self.more() and self.text[self.pos] in chars

    def match(self, char: str) -> bool:
        if self.more() and self.text[self.pos] == char:
            self.pos += 1
            return True
        return False

    def next(self) -> str:
        if not self.more():
            raise ValueError("it ends where a character is needed")
        self.pos += 1
        return self.text[self.pos - 1]

    def union(self) -> None:
        self.intersection()
        while self.match("|"):
            self.intersection()

    def intersection(self) -> None:
        self.concatenation()
        while self.match("&"):
            self.concatenation()

    def concatenation(self) -> None:
        self.repeat()
        while self.more() and not self.peek(")|&"):
            self.repeat()

    def repeat(self) -> None:
        self.complement()
        while self.peek("?*+{"):
            if self.next() != "{":
                continue
            low = self.number("{")
            high = low
            if self.match(","):
                high = self.number("{n,", optional=True)
            if not self.match("}"):
                raise ValueError(f"expected '}}' at position {self.pos}")
            if high is not None and low is not None and high < low:
                raise ValueError(f"the repetition {{{low},{high}}} counts down")

    def number(self, after: str, optional: bool = False) -> int | None:
        start = self.pos
        while self.peek("0123456789"):
            self.pos += 1
        if start == self.pos:
            if optional:
                return None
            raise ValueError(f"a number is needed after {after!r} at position {start}")
        value = int(self.text[start:self.pos])
        if value > 2**31 - 1:
            raise ValueError(f"{value} at position {start} is too large")
        return value

    def complement(self) -> None:
        while self.match("~"):
            pass
        if self.match("["):
            self.match("^")
            self.char_class()
            while self.more() and not self.peek("]"):
                self.char_class()
            if not self.match("]"):
                raise ValueError(f"expected ']' at position {self.pos}")
        else:
            self.simple()

    def char_class(self) -> None:
        if self.predefined():
            return
        low = self.char()
        if self.match("-"):
            high = self.char()
            if ord(low) > ord(high):
                raise ValueError(f"the range {low}-{high} counts down")

    def simple(self) -> None:
        if self.match(".") or self.match("#") or self.match("@"):
            return
        if self.match('"'):
            if self.text.find('"', self.pos) < 0:
                raise ValueError(f"the string '\"' at position {self.pos - 1} is not closed")
            self.pos = self.text.index('"', self.pos) + 1
        elif self.match("("):
            if self.match(")"):
                return
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ValueError(f"groups nested deeper than {MAX_DEPTH} levels are refused")
            self.union()
            self.depth -= 1
            if not self.match(")"):
                raise ValueError(f"expected ')' at position {self.pos}")
        elif self.match("<"):
            end = self.text.find(">", self.pos)
            if end < 0:
                raise ValueError(f"expected '>' after position {self.pos - 1}")
            inside, self.pos = self.text[self.pos:end], end + 1
            low, dash, high = inside.partition("-")
            if not dash:
                raise ValueError(f"<{inside}> names an automaton; Solr has none")
            if not (low.isascii() and low.isdigit() and high.isascii() and high.isdigit()) \
                    or max(int(low), int(high)) > 2**31 - 1:
                raise ValueError(f"<{inside}> is not an interval <n-m> of numbers")
        elif not self.predefined():
            self.char()

    def predefined(self) -> bool:
        """A class `\\d \\D \\s \\S \\w \\W` or an escaped backslash (consumed); the backslash of any
        other escape is consumed and its character left to char()."""
        if not self.match("\\"):
            return False
        if self.peek("dDwWsS\\"):
            self.pos += 1
            return True
        if self.peek("".join(self._INVALID_ESCAPES)):
            raise ValueError(f"'\\{self.text[self.pos]}' at position {self.pos - 1} is no class Lucene knows")
        return False

    def char(self) -> str:
        self.match("\\")
        return self.next()


def parse(text: str, parameter: str = "query") -> Query:
    """The query `text` as Solr's lucene parser reads it; QuerySyntaxError (naming `parameter`
    and the character) for what navd refuses to send (module docstring)."""
    for index, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            raise QuerySyntaxError(parameter, f"not UTF-8 text {_at(index)}")
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
        raise QuerySyntaxError(parameter, f"navd cannot pass this query on unchanged: written back as {_shown(text)}")
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
        wildcard = char in _WILDCARDS and kind in ("prefix", "wildcard", "star")
        inside = char in _INSIDE_TERM and i > 0
        out.append(char if wildcard or inside or char not in _NOT_TERM_START else "\\" + char)
        i += 1
    text = "".join(out)
    return "\\" + text if text in _KEYWORDS else text


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
    text = "".join("\\" + c if c in _NOT_TERM_START or c in "&|" else c for c in value)
    return "\\" + text if text in _KEYWORDS else text


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
            raise QuerySyntaxError(parameter, f"{_shown(item.strip())} is not 'FIELD asc' or 'FIELD desc' "
                                              f"(functions and local parameters are refused)")
        parts.append(f"{words[0]} {words[1].lower()}")
    return ", ".join(parts)

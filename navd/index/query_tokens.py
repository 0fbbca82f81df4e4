"""Solr's standard query syntax as tokens: the token manager of Solr 9's lucene parser
(solr/core/src/java/org/apache/solr/parser/QueryParser.jj), token for token.

Longest match, a tie to the token declared first, its lexical states (DEFAULT, Range after
`[`/`{`, Boost after `^`), its whitespace (` \\t\\n\\r` and U+3000) and its nested
`/* comments */`. Local parameters (`{!...}`) are refused here, where the grammar meets them.
navd.index.query_syntax parses the tokens into a tree and writes it back. Pure.
"""

from __future__ import annotations

import dataclasses
import enum
import re

from navd.errors import UsageError

#: Solr's whitespace (QueryParser.jj `_WHITESPACE`); other Unicode spaces are term characters.
WHITESPACE = frozenset(" \t\n\r\u3000")
#: Characters that cannot start a term unescaped (`_TERM_START_CHAR`)...
NOT_TERM_START = WHITESPACE | frozenset('+-!():^[]"{}~*?\\/')
#: ...of which these may follow its first character (`_TERM_CHAR`).
INSIDE_TERM = frozenset("-+/!")
WILDCARDS = frozenset("*?")
KEYWORDS = frozenset({"AND", "OR", "NOT", "&&", "||"})
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


# -- tokens -------------------------------------------------------------------------------------

class TokenKind(enum.Enum):
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
class Token:
    kind: TokenKind
    text: str
    at: int  # index in the query text



def at_character(index: int) -> str:
    return f"at character {index + 1}"


def shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "...")



class Lexer:
    """Solr's token manager: the text as tokens, lexical states and all."""

    def __init__(self, text: str, parameter: str) -> None:
        self.text = text
        self.parameter = parameter

    def error(self, message: str) -> QuerySyntaxError:
        return QuerySyntaxError(self.parameter, message)

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        state = "default"
        i, n = 0, len(self.text)
        while True:
            if state == "default":
                i = self._skip(i)
            elif state == "range":
                while i < n and self.text[i] in WHITESPACE:
                    i += 1
            if i >= n:
                out.append(Token(TokenKind.EOF, "", n))
                return out
            if state == "boost":
                kind, length = TokenKind.NUMBER, self._number(i)
                if not length:
                    raise self.error(f"the boost '^' {at_character(i - 1)} needs a number after it (a^2)")
            elif state == "range":
                kind, length = self._range_token(i)
            else:
                kind, length = self._default_token(i)
            token = Token(kind, self.text[i:i + length], i)
            out.append(token)
            i += length
            if kind is TokenKind.CARAT:
                state = "boost"
            elif kind in (TokenKind.RANGEIN_START, TokenKind.RANGEEX_START):
                state = "range"
            elif kind in (TokenKind.NUMBER, TokenKind.RANGEIN_END, TokenKind.RANGEEX_END):
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
                        raise self.error(f"the comment '/*' {at_character(start)} is not closed with '*/'")
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

    def _default_token(self, i: int) -> tuple[TokenKind, int]:
        text, char = self.text, self.text[i]
        if text.startswith("{!", i):
            end = text.find("}", i)
            piece = text[i:end + 1] if end >= 0 else text[i:]
            raise self.error(f"local parameters {shown(piece)} {at_character(i)} are refused: navd takes Solr's Lucene "
                             f"query syntax only (no other query parsers, no cross-core joins)")
        term = self._term(i)
        candidates = (
            (TokenKind.AND, 3 if text.startswith("AND", i) else 2 if text.startswith("&&", i) else 0),
            (TokenKind.OR, 2 if text.startswith(("OR", "||"), i) else 0),
            (TokenKind.NOT, 3 if text.startswith("NOT", i) else 1 if char == "!" else 0),
            (TokenKind.PLUS, int(char == "+")),
            (TokenKind.MINUS, int(char == "-")),
            (TokenKind.BAREOPER, 2 if char in "+-!" and i + 1 < len(text) and text[i + 1] in WHITESPACE else 0),
            (TokenKind.LPAREN, int(char == "(")),
            (TokenKind.RPAREN, int(char == ")")),
            (TokenKind.COLON, int(char == ":")),
            (TokenKind.STAR, int(char == "*")),
            (TokenKind.CARAT, int(char == "^")),
            (TokenKind.QUOTED, self._quoted(i)),
            (TokenKind.TERM, term),
            (TokenKind.FUZZY_SLOP, self._fuzzy(i)),
            (TokenKind.PREFIXTERM, 1 if char == "*" else term + 1 if term and text[i + term:i + term + 1] == "*" else 0),
            (TokenKind.WILDTERM, self._wildcard(i)),
            (TokenKind.REGEXPTERM, self._regexp(i)),
            (TokenKind.RANGEIN_START, int(char == "[")),
            (TokenKind.RANGEEX_START, int(char == "{")),
            (TokenKind.FILTER, 7 if text.startswith("filter(", i) else 0),
        )
        kind, length = max(candidates, key=lambda c: c[1])  # max() keeps the first of equals
        if length:
            return kind, length
        raise self.error(self._unreadable(i))

    def _unreadable(self, i: int) -> str:
        char = self.text[i]
        if char == '"':
            return f"the phrase '\"' {at_character(i)} is not closed"
        if char == "\\":
            return f"the query ends with an escape character '\\' {at_character(i)}"
        if char == "/":
            return (f"'/' {at_character(i)} starts neither a regular expression /.../ nor a comment /*...*/ "
                    f"(escape it: \\/)")
        if char in "]}":
            return f"{char!r} {at_character(i)} closes no range"
        return f"{char!r} {at_character(i)} is not Solr's Lucene query syntax (escape it with '\\')"

    def _term_start(self, j: int) -> int:
        if j >= len(self.text):
            return 0
        if self.text[j] == "\\":
            return 2 if j + 1 < len(self.text) else 0
        return 0 if self.text[j] in NOT_TERM_START else 1

    def _term_char(self, j: int) -> int:
        return self._term_start(j) or int(j < len(self.text) and self.text[j] in INSIDE_TERM)

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
            return found or int(j < len(self.text) and self.text[j] in WILDCARDS)

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

    def _range_token(self, i: int) -> tuple[TokenKind, int]:
        text = self.text
        goop = i
        while goop < len(text) and text[goop] not in " ]}":
            goop += 1
        candidates = (
            (TokenKind.RANGE_TO, 2 if text.startswith("TO", i) else 0),
            (TokenKind.RANGEIN_END, int(text[i] == "]")),
            (TokenKind.RANGEEX_END, int(text[i] == "}")),
            (TokenKind.RANGE_QUOTED, self._delimited(i, '"', forbidden_first='"')),
            (TokenKind.RANGE_GOOP, goop - i),
        )
        return max(candidates, key=lambda c: c[1])  # one of them always matches




def unescape(image: str) -> str:
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

"""Whether Lucene's RegExp parser takes a pattern: the check navd.index.query_syntax runs on
every `/regular expression/` of a query before Solr sees it (Solr answers a pattern Lucene
refuses with HTTP 500). Pure.
"""

from __future__ import annotations


def check_regexp(pattern: str, max_depth: int) -> None:
    """ValueError saying what is wrong with `pattern` for Lucene's RegExp (every optional syntax
    on), parentheses nested deeper than `max_depth` included."""
    _RegexpCheck(pattern, max_depth).check()


class _RegexpCheck:
    """Whether Lucene's RegExp parser (every optional syntax on, as Solr's regexp query has it)
    takes a pattern: Solr answers a pattern it refuses with HTTP 500, as if it had failed.
    Follows lucene/core/.../util/automaton/RegExp.java (parseUnionExp and below), its
    right-recursions as loops and its parentheses nested at most max_depth deep. ValueError says
    what is wrong. Not checked: whether the automaton is too complex to build (Solr's 500 for
    that is turned into a refusal where the query is sent)."""

    _INVALID_ESCAPES = frozenset("abcefghijklmnopqrtuvxyzABCEFGHIJKLMNOPQRTUVXYZ")

    def __init__(self, pattern: str, max_depth: int) -> None:
        self.text = pattern
        self.max_depth = max_depth
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
            if self.depth > self.max_depth:
                raise ValueError(f"groups nested deeper than {self.max_depth} levels are refused")
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


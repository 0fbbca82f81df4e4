"""How Spark prints the pieces of a plan: lists (`[a#1, f(b#2, c#3) AS d#4]`), attribute
references with their expression ids (`name#7`, `sum(w#4)#5`), aliases, table identifiers,
file index locations, and the expressions Spark wraps around the user's (CHAR/VARCHAR checks,
CASE WHEN / If branches). Pure string functions, shared by the parse and both readings."""

from __future__ import annotations

import re

from .model import MAX_EXPRESSION_CHARS, PlanError, TableId

SESSION_CATALOG = "spark_catalog"

# --- identifiers -------------------------------------------------------------------------------

_BACKTICK_IDENT = re.compile(r"(`(?:[^`]|``)+`(?:\.`(?:[^`]|``)+`)+)")
_IDENT_PART = re.compile(r"`((?:[^`]|``)+)`")
#: a table named without backticks (`spark_catalog.sales.s`, a scan's node name)
PLAIN_IDENT = re.compile(r"^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)+$")
#: a JDBC table read through a V2 catalog: `Scan JDBC v1 Relation from v2 scan jdbc.app.v2_out`
JDBC_V2_SCAN = re.compile(r"^Scan JDBC v1 Relation from v2 scan (\S+)$")


def parse_identifier(text: str) -> TableId:
    """`spark_catalog`.`db`.`t`, spark_catalog.db.t, `db`.`t`, db.t -> TableId."""
    text = text.strip()
    if "`" in text:
        parts = [p.replace("``", "`") for p in _IDENT_PART.findall(text)]
    else:
        parts = text.split(".")
    parts = [p.strip() for p in parts]
    if len(parts) < 2 or any(not p for p in parts):
        raise PlanError(f"not a table identifier: {text!r}")
    if len(parts) == 2:
        return TableId(None, parts[0], parts[1])
    return TableId(parts[0], ".".join(parts[1:-1]), parts[-1])


def first_backticked(text: str) -> TableId | None:
    """The first backticked table identifier in `text` (`` `spark_catalog`.`db`.`t` ``), if any."""
    match = _BACKTICK_IDENT.search(text)
    return parse_identifier(match.group(1)) if match else None


# --- file index locations ------------------------------------------------------------------------

_LOCATION = re.compile(r"^\w+(?:\(\d+ paths?\))?\s*\[(.*)\]?$", re.S)


def location_paths(location: str) -> tuple[list[str], bool]:
    """`InMemoryFileIndex(2 paths)[file:/a, file:/b...` -> (['file:/a'], truncated=True)."""
    match = _LOCATION.match(location.strip())
    if not match:
        raise PlanError(f"Location {location!r} is not `Index[paths]`")
    body = match.group(1)
    truncated = not location.rstrip().endswith("]") or body.endswith("...")
    body = body.rstrip("]")
    paths: list[str] = []
    for item in body.split(", "):
        item = item.strip()
        if not item:
            continue
        if item.endswith("..."):
            truncated = True
            continue
        paths.append(item)
    return paths, truncated


# --- lists ---------------------------------------------------------------------------------------

_BRACKET = re.compile(r"[()\[\]{}]")
_AS_PARENS = str.maketrans("[{]}", "(())")


def split_list(text: str) -> list[str]:
    """`[a#1, f(b#2, c#3) AS d#4]` -> ['a#1', 'f(b#2, c#3) AS d#4'] (top-level commas only).

    Every bracket kind counts alike (`(`, `[`, `{` open, `)`, `]`, `}` close) and a comma splits
    where that depth is 0. The text is cut at every comma by str.split and a comma-separated
    piece's depth change is counted with str.count (C speed), instead of looking at every bracket
    in Python: this runs for every list of every plan section.
    """
    text = text.strip()
    end = len(text)
    if end >= 2 and text[0] == "[" and text[-1] == "]":
        if _BRACKET.search(text, 1, end - 1) is None:   # `[a#1, b#2L]`: the usual attribute list
            return _split_flat(text[1:-1])
        if _balanced(text[1:-1]):   # the outer `[` closes at the end: a list in brackets
            text = text[1:-1]
            end -= 2
    elif _BRACKET.search(text) is None:
        return _split_flat(text)
    items: list[str] = []
    depth = 0
    start = 0
    pos = 0   # where the current piece ends: at a comma, or at the end of the text
    for piece in text.split(","):
        pos += len(piece)
        if _BRACKET.search(piece) is not None:
            depth += (piece.count("(") + piece.count("[") + piece.count("{")
                      - piece.count(")") - piece.count("]") - piece.count("}"))
        if depth == 0 and pos < end:
            items.append(text[start:pos].strip())
            start = pos + 1
        pos += 1
    tail = text[start:].strip()
    if tail:
        items.append(tail)
    return items


def _split_flat(text: str) -> list[str]:
    """split_list of a text without brackets: every comma splits; an empty last item is dropped."""
    pieces = text.split(",")
    last = pieces.pop().strip()
    items = [piece.strip() for piece in pieces]
    if last:
        items.append(last)
    return items


def _balanced(text: str) -> bool:
    """Whether the brackets of `text` (all kinds alike) pair up: the depth never goes below 0 and
    ends at 0. Removing adjacent `()` pairs until none is left empties exactly such sequences."""
    shape = "".join(_BRACKET.findall(text)).translate(_AS_PARENS)
    while "()" in shape:
        shape = shape.replace("()", "")
    return not shape


def closing(text: str, open_at: int) -> int:
    """The index of the bracket closing the one at `open_at`; -1 when it does not close."""
    depth = 0
    for index in range(open_at, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


#: How Spark ends a list it cut after spark.sql.debug.maxToStringFields items: `... 6 more fields`.
CUT_LIST = " more fields"
#: How Spark ends a plan text it cut after spark.sql.maxPlanStringLength characters
PLAN_TRUNCATED = re.compile(r"\.\.\. (\d+) more characters\s*$")
CUT_COUNT = re.compile(r"\.\.\. (\d+) more fields")

# --- attributes and expressions ------------------------------------------------------------------

#: a bare reference `name#7` (no brackets, commas or spaces in the name)
ATTR = re.compile(r"([^\s\[\](),]+)#(\d+)L?$")
#: any named attribute, also `sum(w)#51`: a column named "sum(w)"
NAMED_ATTR = re.compile(r"^(.+)#(\d+)L?$", re.S)
REF_ID = re.compile(r"#(\d+)L?\b")
#: a reference with the identifier before its `#` (names with spaces or dots: see substitute)
REF_TOKEN = re.compile(r"([A-Za-z_][\w$]*)?#(\d+)L?\b")
# `Subquery subquery#68, [id=#852]`: #852 numbers a plan, not an attribute
PLAN_ID = re.compile(r",? \[id=#\d+\]")


def split_alias(item: str) -> tuple[str, str, int] | None:
    """`expr AS name#7` -> (expr, name, 7); None when the item is not an alias."""
    cut = item.rfind(" AS ")
    if cut < 0:
        return None
    named = NAMED_ATTR.match(item[cut + 4:])
    if not named:
        return None
    return item[:cut], named.group(1), int(named.group(2))


#: A logical plan's subquery expression with the outer query's columns it refers to:
#: `exists#51 [customer_id#37]`, `scalar-subquery#128 [customer_id#37]`, `list#62 []`
SUBQUERY_WITH_OUTER = re.compile(r"\b((?:list|exists|scalar-subquery|lateral-subquery)#\d+) \[[^\[\]]*\]")


def without_outer_references(text: str) -> str:
    """`text` less the outer references listed after its subquery expressions: those columns
    are compared in the subquery's own conditions (`outer(customer_id#37)`), where they are
    read; the list only repeats them."""
    return SUBQUERY_WITH_OUTER.sub(r"\1", text) if "#" in text and " [" in text else text


def ids(text: str) -> list[int]:
    """The expression ids referenced in `text`, in order (plan ids `[id=#852]` and the outer
    references of subquery expressions left out)."""
    if "[id=#" in text:   # cheap test first: the substitution is rarely needed
        text = PLAN_ID.sub("", text)
    if "list#" in text or "exists#" in text or "subquery#" in text:
        text = without_outer_references(text)
    return [int(x) for x in REF_ID.findall(text)]


def bounded(text: str) -> str:
    return text if len(text) <= MAX_EXPRESSION_CHARS else text[:MAX_EXPRESSION_CHARS] + "..."


_BRANCH_WORD = re.compile(r"\b(?:CASE WHEN|WHEN|THEN|ELSE|END)\b(?!#)|(?<![\w.])if \(|[()\[\]{}]")


def branch_ids(expression: str) -> tuple[set[int], set[int]]:
    """(ids in a CASE WHEN / if() condition, ids anywhere else) of `expression`.

    `CASE WHEN (x#1 > 0) THEN y#2 ELSE z#3 END` -> ({1}, {2, 3}); `if ((x#1 > 0)) y#2 else z#3`
    (Spark's If) the same. Spark prints a simple `CASE x WHEN 1` as `CASE WHEN (x = 1)`. A
    condition holds everything from WHEN to its THEN, nested expressions included; an If's is
    its bracketed predicate."""
    deciding: set[int] = set()
    valued: set[int] = set()
    # a stack of open constructs: ("case", in condition?) or ("if", in condition?) or ("(", None)
    frames: list[list[object]] = []
    last = 0

    def take(upto: int) -> None:
        found = ids(expression[last:upto])
        in_condition = any(frame[1] is True for frame in frames)
        (deciding if in_condition else valued).update(found)

    for match in _BRANCH_WORD.finditer(expression):
        token = match.group(0)
        take(match.start())
        last = match.end()
        if token == "CASE WHEN":
            frames.append(["case", True])
        elif token == "if (":
            frames.append(["if", True])
        elif token in ("(", "[", "{"):
            frames.append(["(", None])
        elif token in (")", "]", "}"):
            if frames:
                frames.pop()
        elif frames and frames[-1][0] == "case":
            if token == "WHEN":
                frames[-1][1] = True
            elif token in ("THEN", "ELSE"):
                frames[-1][1] = False
            elif token == "END":
                frames.pop()
    take(len(expression))
    return deciding, valued


# Spark's own wrappers around a written or read CHAR/VARCHAR column (ApplyCharTypePadding,
# CharVarcharUtils): length checks on write, padding on read. Spark 3.4+ prints
# `static_invoke(CharVarcharCodegenUtils.charTypeWriteSideCheck(s#1, 5))`; Spark 3.1-3.3
# `staticinvoke(class org.apache.spark.sql.catalyst.util.CharVarcharCodegenUtils, StringType,
# charTypeWriteSideCheck, s#1, 5, true, false, true)`.
_CHAR_VARCHAR = "CharVarcharCodegenUtils"
_CHAR_VARCHAR_CALL = re.compile(
    r"static_invoke\(CharVarcharCodegenUtils\.(?:charTypeWriteSideCheck|varcharTypeWriteSideCheck|readSidePadding)\("
    r"|staticinvoke\(class org\.apache\.spark\.sql\.catalyst\.util\.CharVarcharCodegenUtils, ")


def unwrap_char_varchar(expression: str) -> str:
    """`expression` without Spark's CHAR/VARCHAR checks and padding: they are not the user's
    expression, and a copy through them is a copy (SIMPLE)."""
    for _ in range(expression.count(_CHAR_VARCHAR)):
        match = _CHAR_VARCHAR_CALL.search(expression)
        if match is None:
            break
        if match.group(0).startswith("static_invoke"):
            # `static_invoke(CharVarcharCodegenUtils.charTypeWriteSideCheck(<value>, 5))`
            end = closing(expression, match.end() - 1)
            args = split_list(expression[match.end():end]) if end >= 0 else []
            value, stop = (args[0] if args else ""), end + 1   # the static_invoke's own `)`
        else:
            # `staticinvoke(class ...CharVarcharCodegenUtils, StringType, <method>, <value>, 5, ...)`
            end = stop = closing(expression, match.start() + len("staticinvoke"))
            args = split_list(expression[match.end():end]) if end >= 0 else []
            value = args[2] if len(args) > 2 else ""
        if not value or stop >= len(expression) or expression[stop] != ")":
            break
        expression = expression[:match.start()] + value + expression[stop + 1:]
    return expression


def has_char_varchar(expression: str) -> bool:
    return _CHAR_VARCHAR in expression

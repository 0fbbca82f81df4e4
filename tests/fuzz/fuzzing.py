"""What every fuzz target shares: the Hypothesis settings of the two runs, the structured
mutations of captured inputs, the per-input hard timeout, the per-target counts and the
property on the records a parser emits (tests/fuzz/README.md).

The mutations start from real inputs (tests/fixtures) and change them the way broken clusters,
truncated files and hostile clients do: a key dropped, duplicated or given another type, a line
cut short, unicode, spaces and case in names, huge strings, deep nesting. Random bytes alone
would almost never get past a parser's first check.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from navd.model import Deletion, Element, ElementStub, Record, Relation
from navd.names import (ElementType, EntityRef, InvalidName, SourceType, is_path_name, lookup_name, parse_hive_name,
                        path_qualified_name, split_path_field)
from query_corpus import REFUSED, TEXT, query

#: `make fuzz` sets FUZZ_EXAMPLES (10,000 there); without it, the short fixed-seed slice of `make test`
FULL_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0") or 0)
SLICE_EXAMPLES = 50
#: A hang is an input a parser never finishes: far beyond any real input's time, so a loaded host
#: (this one runs benchmarks beside the tests) cannot make a slow input look like one.
HARD_TIMEOUT_SECONDS = 120.0


def fuzz_settings() -> settings:
    """The full campaign: random, FULL_EXAMPLES inputs, a per-input deadline (Hypothesis reports
    an input slower than it, then shrinks it). The slice: fixed seed (derandomize), no database,
    no deadline (a wall-clock limit in `make test` would fail on a busy CI host; the hard timeout
    still catches a hang)."""
    common: dict[str, Any] = {
        "database": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                                  HealthCheck.large_base_example, HealthCheck.function_scoped_fixture],
        "print_blob": True,
    }
    if FULL_EXAMPLES:
        return settings(max_examples=FULL_EXAMPLES, deadline=timedelta(seconds=30), **common)
    return settings(max_examples=SLICE_EXAMPLES, derandomize=True, deadline=None, **common)


# --- counts ------------------------------------------------------------------------------------

@dataclasses.dataclass
class Count:
    examples: int = 0
    refused: int = 0  # ended by the parser's named bad-input error: the rest went all the way through
    failures: int = 0


#: per target: inputs run and inputs that broke the property (Hypothesis' shrinking re-runs included)
COUNTS: dict[str, Count] = {}


class Hang(Exception):
    """An input ran past HARD_TIMEOUT_SECONDS."""


@contextlib.contextmanager
def _hard_timeout(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise Hang(f"input still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_target(target: str, allowed: tuple[type[BaseException], ...], body: Callable[[], Any]) -> Any:
    """Run one input: count it, stop it after the hard timeout, and let only `allowed` (the
    parser's named bad-input errors) end it quietly. Returns body's result, None when refused."""
    count = COUNTS.setdefault(target, Count())
    count.examples += 1
    try:
        with _hard_timeout(HARD_TIMEOUT_SECONDS):
            return body()
    except allowed:
        count.refused += 1
        return None
    except BaseException:
        count.failures += 1
        raise


# --- the property on records -----------------------------------------------------------------

_HIVE_LIKE = frozenset({SourceType.HIVE, SourceType.IMPALA})
_CATALOG_TYPES = frozenset({ElementType.DATABASE, ElementType.TABLE, ElementType.VIEW, ElementType.FIELD,
                            ElementType.PARTITION})


def name_problem(ref: EntityRef) -> str | None:
    """Why `ref`'s qualified name is empty or not in the one spelling navd/names.py builds, or
    None. Normalised: what names.py's builder would give back for it (a path through
    path_qualified_name unchanged; a Hive/Impala name parsed back with lower-case, unpadded
    database and table; an HDFS column split back into a normalised path and a column)."""
    name = ref.qualified_name
    try:
        lookup_name(name)
    except InvalidName as exc:
        return str(exc)
    if ref.source_type is SourceType.HDFS:
        path = name
        if ref.type is ElementType.FIELD:
            split = split_path_field(name)
            if split is None:
                return f"HDFS field {name!r} is not <path>#<column>"
            path = split[0]
        try:
            if path_qualified_name(path) != path:
                return f"path {path!r} is not normalised (would be {path_qualified_name(path)!r})"
        except InvalidName as exc:
            return f"path {path!r}: {exc}"
    elif ref.source_type in _HIVE_LIKE and ref.type in _CATALOG_TYPES:
        parsed = parse_hive_name(name)
        if parsed is None:
            return f"Hive name {name!r} has no @cluster"
        for part in (parsed.database, parsed.table, parsed.cluster):
            if part is not None and part != part.strip().strip("`").strip().lower():
                return f"Hive name {name!r}: part {part!r} is not lower case and trimmed"
        if parsed.column is not None and (not parsed.column or parsed.column != parsed.column.lower()):
            return f"Hive name {name!r}: column {parsed.column!r} is empty or not lower case"
        if not parsed.cluster.strip():
            return f"Hive name {name!r} has an empty cluster"
    elif is_path_name(name) and ref.type in (ElementType.FILE, ElementType.DIRECTORY):
        try:
            if path_qualified_name(name) != name:
                return f"path {name!r} is not normalised"
        except InvalidName as exc:
            return f"path {name!r}: {exc}"
    return None


def refs_of(record: Record) -> Iterator[EntityRef]:
    if isinstance(record, ElementStub):
        record = record.element
    if isinstance(record, Element):
        yield EntityRef(record.source_type, record.qualified_name, record.type)
        if record.parent is not None:
            yield record.parent
    elif isinstance(record, Relation):
        yield record.endpoint1
        yield record.endpoint2
    elif isinstance(record, Deletion):
        yield record.ref


def check_records(records: list[Record]) -> None:
    """The property on what a parser emits: every name non-empty and normalised."""
    for record in records:
        for ref in refs_of(record):
            problem = name_problem(ref)
            assert problem is None, f"{type(record).__name__} {ref.source_type}/{ref.type}: {problem}"


# --- structured mutations --------------------------------------------------------------------

ODD_STRINGS = ("", " ", "  ", "\t", "\n", "ü", "Ä", "\u200b", "\u00a0", "😀", "\x00", "\ud800", "`", "``", ".", "..",
               "/", "//", "@", "#", "%", "%2F", ":", "=", ",", "[", "]", "(", ")", "{", "}", '"', "'", "\\",
               "null", "hdfs://", "file:", "-1", "1e999", "NaN", "DROP TABLE x")
ODD_NUMBERS = (0, -1, 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, 1e308, -1e308, 0.5,
               float("nan"), float("inf"), float("-inf"))


@st.composite
def huge_strings(draw: st.DrawFn, max_units: int = 200_000) -> str:
    unit = draw(st.sampled_from(("a", "é", "x.", "a/", "`", " ", "😀")))
    return unit * draw(st.integers(min(10_000, max_units), max_units))


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), st.sampled_from(ODD_NUMBERS), st.integers(),
                     st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(ODD_STRINGS),
                     st.text(max_size=40), huge_strings())


def other_values() -> st.SearchStrategy[Any]:
    """A value of any JSON type (and some a JSON parser can hand over: NaN, huge integers)."""
    return st.one_of(scalars(), st.lists(scalars(), max_size=4),
                     st.dictionaries(st.text(max_size=10), scalars(), max_size=4))


@st.composite
def string_variant(draw: st.DrawFn, text: str) -> str:
    """`text` as it might come back from another cluster: case, spaces, unicode, cut, doubled."""
    how = draw(st.integers(0, 9))
    odd = draw(st.sampled_from(ODD_STRINGS))
    at = draw(st.integers(0, len(text)))
    if how == 0:
        return text.upper()
    if how == 1:
        return f" {text} "
    if how == 2:
        return text[:at] + odd + text[at:]
    if how == 3:
        return text[:at]
    if how == 4:
        # at most about huge_strings' length: a string mutated twice (strings_only: up to 4
        # times at one place) was repeated 5,000 times over, billions of characters (the host's
        # 23 GB were gone before the parser saw it)
        return text * draw(st.integers(2, max(2, min(5000, 200_000 // max(1, len(text))))))
    if how == 5:
        return text.replace(".", odd).replace("/", odd)
    if how == 6:
        return text + draw(st.text(min_size=1, max_size=20))
    if how == 7:
        return "`" + text + "`"
    if how == 8:
        return text.replace("_", " ").replace("a", "ä")
    return odd


def nested(value: Any, depth: int, as_list: bool) -> Any:
    for _ in range(depth):
        value = [value] if as_list else {"x": value}
    return value


@st.composite
def _path(draw: st.DrawFn, value: Any) -> list[Any]:
    """A random walk from the root: mostly deeper, stopping anywhere."""
    path: list[Any] = []
    node = value
    while isinstance(node, (dict, list)) and node and draw(st.integers(0, 9)) < 8:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = keys[draw(st.integers(0, len(keys) - 1))]
        path.append(key)
        node = node[key]
    return path


def _replace(value: Any, path: list[Any], change: Callable[[Any, Any], Any]) -> Any:
    """A copy of `value` with the container holding path[-1] passed through change(container,
    key); containers off the path are shared, not copied (inputs hold large plans)."""
    if not path:
        return change(None, None)
    key, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[key] = _replace(value[key], rest, change)
        return copy
    return change(copy, key)


@st.composite
def mutated_json(draw: st.DrawFn, base: Any, max_mutations: int = 4, *, strings_only: bool = False) -> Any:
    """`base` with 1 to `max_mutations` structured changes at random places; `strings_only`:
    only strings spelt otherwise (types kept, so a schema check lets most of them through)."""
    value = base
    for _ in range(draw(st.integers(1, max_mutations))):
        path = draw(_path(value))
        if not path:
            continue
        node = _get(value, path)
        if strings_only and not isinstance(node, str):
            continue
        op = 2 if strings_only else draw(st.integers(0, 6))

        def change(container: Any, key: Any, op: int = op, node: Any = node) -> Any:
            if op == 0:  # drop the key / element
                del container[key]
            elif op == 1:  # another type
                container[key] = draw(other_values())
            elif op == 2 and isinstance(node, str):  # the same string, spelt otherwise
                container[key] = draw(string_variant(node))
            elif op == 2:
                container[key] = draw(st.sampled_from(ODD_NUMBERS)) if isinstance(node, (int, float)) else \
                    draw(other_values())
            elif op == 3 and isinstance(container, list):  # duplicated
                container.insert(key, node)
            elif op == 3:
                container[f"{key}"] = node
                container[draw(st.sampled_from((key.upper() if isinstance(key, str) else key, f" {key}")))] = \
                    draw(other_values())
            elif op == 4:  # nested deeper
                container[key] = nested(node, draw(st.integers(1, 60)), draw(st.booleans()))
            elif op == 5 and isinstance(node, list):  # emptied
                container[key] = []
            elif op == 5 and isinstance(node, dict):
                container[key] = {}
            else:  # a list where an object was, or the other way round
                container[key] = [node] if not isinstance(node, list) else {"0": node}
            return container

        value = _replace(value, path, change)
    return value


def _get(value: Any, path: list[Any]) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def json_text(draw: st.DrawFn, value: Any) -> str:
    """`value` as JSON text, sometimes broken at the text level: cut short, a key duplicated with
    another value, a BOM, NaN, trailing garbage, extreme nesting."""
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), allow_nan=True)
    how = draw(st.integers(0, 9))
    if how == 0:
        return text[:draw(st.integers(0, len(text)))]
    if how == 1 and isinstance(value, dict) and value:
        key = list(value)[draw(st.integers(0, len(value) - 1))]
        extra = json.dumps(draw(other_values()), allow_nan=True)
        return text[:-1] + ("," if len(text) > 2 else "") + json.dumps(key) + ":" + extra + "}"
    if how == 2:
        return "\ufeff" + text
    if how == 3:
        return text + draw(st.sampled_from((" ", "}", "]", "\x00", ",", " trailing", "\r")))
    if how == 4:
        depth = draw(st.integers(500, 50_000))
        return "[" * depth + text + "]" * depth
    return text


@st.composite
def mutated_lines(draw: st.DrawFn, lines: list[str], mutate: Callable[[Any], st.SearchStrategy[Any]]) -> list[str]:
    """Lines of a log (JSON objects one a line): some parsed, mutated and written back, some
    dropped, duplicated, swapped, cut or replaced by junk."""
    out = list(lines)
    for _ in range(draw(st.integers(1, 5))):
        if not out:
            out.append(draw(st.text(max_size=50)))
            continue
        at = draw(st.integers(0, len(out) - 1))
        op = draw(st.integers(0, 9))
        if op <= 3:
            # orjson: its depth limit is fixed; json.loads' RecursionError on a line nested
            # thousands deep depends on the stack depth it is called at, and the same input then
            # drew differently on a re-run (Hypothesis' FlakyStrategyDefinition)
            try:
                parsed = orjson.loads(out[at])
            except orjson.JSONDecodeError:
                continue
            out[at] = draw(json_text(draw(mutate(parsed))))
        elif op == 4:
            del out[at]
        elif op == 5:
            out.insert(at, out[at])
        elif op == 6:
            other = draw(st.integers(0, len(out) - 1))
            out[at], out[other] = out[other], out[at]
        elif op == 7:
            out[at] = out[at][:draw(st.integers(0, len(out[at])))]
        elif op == 8:
            out.insert(at, draw(st.sampled_from(("", " ", "\x00", "{}", "[]", "null", "1", '"x"', "{", "\ud800"))))
        else:
            out.insert(at, draw(st.text(max_size=200)))
    return out


# --- Solr query text -----------------------------------------------------------------------------

#: README's queries, Hue's and the Navigator SDK's, and the attempts to reach past the syntax
#: (tests/query_corpus.py), mutated around the places the attempts use (no NOW: the targets
#: comparing what Solr makes of two texts would see two clocks)
QUERIES = ("queryText:*temp_table*", "sourceType:HIVE AND type:TABLE", 'originalName:"a b"~2^3',
           "(type:TABLE OR type:VIEW) AND (sourceType:HIVE)AND(originalName:orders)AND(deleted:false)",
           "((originalName:*orders*^3)OR(tags:*orders*^5))AND((originalName:[* TO *])) AND (*)",
           '+(parentPath:"/db") +(originalName:orders) +(type:TABLE)',
           "started:[2026-11-01T00:00:00Z TO *} -deleted:true",
           "qualifiedName:/sales\\.t@.*/ && filter(type:FIELD) || a~1", "fileSystemPath:\\/user\\/x*",
           *(query(template) for template, _ in REFUSED), *(query(template) for template in TEXT))
#: what the attempts are made of
SYNTAX = ('"', "\\", "{!", "{", "}", "[", "]", "(", ")", "/*", "*/", "/", ":", "^", "~", "\u3000", "\\u005F",
          "\\u007B", "_query_:", "_val_:", " TO ", " AND ", "&&", "!", "- ", "+", "*", "?", "'", "filter(")


@st.composite
def query_texts(draw: st.DrawFn) -> str:
    """A query of QUERIES, cut, spliced, spelt otherwise or given a piece of SYNTAX."""
    text = draw(st.sampled_from(QUERIES))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        how = draw(st.integers(0, 3))
        if how == 0:
            text = draw(string_variant(text))
        elif how == 1:
            text = text[:at] + draw(st.sampled_from(SYNTAX)) + text[at:]
        elif how == 2:
            text = text[:at] + text[draw(st.integers(at, len(text))):]
        else:
            text = text[:at] + draw(st.sampled_from(QUERIES)) + text[at:]
    return text

"""The guard on queries people write in the Lucene syntax (`navd search`, /api/entities,
Navigator's `query`): what reaches past that syntax is refused before Solr sees it."""

from __future__ import annotations

import re

from navd.errors import UsageError

#: Lucene's "magic" fields: `_query_:"{!...}"` runs any query parser, `_val_:"..."` a function.
_MAGIC_FIELD = re.compile(r"(?<![\w.*?])(_query_|_val_)\s*:")
_SHOWN_CHARS = 80


def _unquoted(text: str) -> str:
    """`text` without its quoted phrases and with backslash escapes resolved: what Solr's
    Lucene parser reads as syntax (field names, local parameters). A phrase is only text."""
    out: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            escaped = False
            if not quoted:
                out.append(char)
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
            out.append(" ")
        elif not quoted:
            out.append(char)
    return "".join(out)


def check_search(query: str, sort: str | None = None) -> None:
    """Refuse what reaches past the Lucene query syntax: local parameters (`{!join
    fromIndex=<other core>}` reads any core on the node, `{!func}` and other parsers) and the
    magic fields `_query_`/`_val_` that carry them. Inside a quoted phrase `{!` is only text.
    UsageError names the parameter and the piece refused."""
    for parameter, text in (("query", query), ("--sort", sort or "")):
        syntax = _unquoted(text)
        start = syntax.find("{!")
        if start >= 0:
            end = syntax.find("}", start)
            piece = syntax[start:end + 1 if end >= 0 else len(syntax)][:_SHOWN_CHARS]
            raise UsageError(f"search {parameter}: local parameters {piece!r} are not allowed: navd search "
                             f"takes the Lucene query syntax only (no other query parsers, no cross-core joins)")
        magic = _MAGIC_FIELD.search(syntax)
        if magic:
            raise UsageError(f"search {parameter}: the field {magic.group(1)} is not allowed: it runs other "
                             f"query parsers or functions; navd search takes the Lucene query syntax only")

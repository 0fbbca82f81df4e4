"""What one OpenLineage event may make the intake do, checked before any work is spent on it.
Pure: no I/O.

- Counts (`event_size`, `check_size`): the datasets an event names, the schema-facet fields of
  its datasets (nested ones too: validation walks them) and the column edges its columnLineage
  facets expand to, each against its `[openlineage]` cap (EventTooLarge, answered 413 naming the
  key). Counted on the parsed but unvalidated body, so anything that is not the expected shape
  counts as nothing (validation refuses it next).
- Names (`check_names`): every string of the event that navd indexes as one term (job and
  dataset namespaces and names, column names and types, the producer) must fit Solr's limit on
  one indexed term (InvalidEvent naming its JSON path, answered 400), instead of Solr refusing
  the documents with its own message. A name within the limit can still make a longer one
  (`openlineage://<namespace>/<job>`): the intake checks the documents too
  (navd.index.documents.oversized_term).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from navd.config import OpenLineageConfig
from navd.errors import NavdError
from navd.index.documents import MAX_TERM_BYTES, utf8_length_above
from navd.openlineage.schema import InvalidEvent

_SIDES = ("inputs", "outputs")


class EventTooLarge(NavdError):
    """An event beyond one of the `[openlineage]` caps: `key` is the cap's key."""

    def __init__(self, key: str, what: str, count: int, cap: int) -> None:
        super().__init__(f"body: the event has {count:,} {what}, more than [openlineage] {key} ({cap:,})")
        self.key = key
        self.count = count


@dataclasses.dataclass(frozen=True)
class EventLimits:
    max_datasets: int
    max_fields: int
    max_column_edges: int

    @classmethod
    def of(cls, config: OpenLineageConfig) -> EventLimits:
        return cls(config.max_datasets, config.max_fields, config.max_column_edges)


@dataclasses.dataclass(frozen=True)
class EventSize:
    """How much an event names: what the intake's work on it grows with."""

    datasets: int = 0
    fields: int = 0
    column_edges: int = 0

    @property
    def documents(self) -> int:
        """About how many documents the event makes: per dataset its element and a flow, per
        field its element and the link to its dataset, per column edge one relation."""
        return 2 * self.datasets + 2 * self.fields + self.column_edges


def check_size(event: Any, limits: EventLimits) -> EventSize:
    """The event's size; EventTooLarge for the first cap it passes."""
    size = event_size(event)
    for key, what, count, cap in (
            ("max_datasets", "datasets (inputs and outputs)", size.datasets, limits.max_datasets),
            ("max_fields", "schema fields", size.fields, limits.max_fields),
            ("max_column_edges", "column-lineage edges", size.column_edges, limits.max_column_edges)):
        if count > cap:
            raise EventTooLarge(key, what, count, cap)
    return size


def event_size(event: Any) -> EventSize:
    datasets = list(_datasets(event))
    fields = edges = 0
    for _path, dataset in datasets:
        facets = _dict(dataset.get("facets"))
        schema = _dict(facets.get("schema"))
        fields += _count_fields(schema.get("fields"))
        edges += _column_edges(_dict(facets.get("columnLineage")), schema)
    return EventSize(len(datasets), fields, edges)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _datasets(event: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(JSON path, dataset) of each dataset an event names in its inputs, outputs or `dataset`."""
    if not isinstance(event, dict):
        return
    for side in _SIDES:
        for number, dataset in enumerate(_list(event.get(side))):
            if isinstance(dataset, dict):
                yield f"$.{side}[{number}]", dataset
    if isinstance(event.get("dataset"), dict):
        yield "$.dataset", event["dataset"]


def _count_fields(fields: Any) -> int:
    """Schema fields, nested struct fields included (without recursion: nesting is the sender's)."""
    count, stack = 0, [fields]
    while stack:
        for field in _list(stack.pop()):
            count += 1
            if isinstance(field, dict) and isinstance(field.get("fields"), list):
                stack.append(field["fields"])
    return count


def _column_edges(lineage: Mapping[str, Any], schema: Mapping[str, Any]) -> int:
    """The edges a columnLineage facet makes, as navd.openlineage.mapping expands it: one per
    transformation of each input field of each column, and each transformation of a
    dataset-wide input once per written column (the facet's columns and the schema's)."""
    columns = _dict(lineage.get("fields"))
    edges = sum(_transformations(source) for spec in columns.values()
                for source in _list(_dict(spec).get("inputFields")))
    wide = sum(_transformations(source) for source in _list(lineage.get("dataset")))
    if wide:
        written = set(columns) | {f["name"] for f in _list(schema.get("fields"))
                                  if isinstance(f, dict) and isinstance(f.get("name"), str)}
        edges += wide * len(written)
    return edges


def _transformations(source: Any) -> int:
    return max(1, len(_list(_dict(source).get("transformations"))))


def check_names(event: Mapping[str, Any], text_bytes: int | None = None) -> None:
    """InvalidEvent naming the first string navd would index as one term that is longer than
    Solr takes (MAX_TERM_BYTES in UTF-8). The event is a valid one (navd.openlineage.schema).
    `text_bytes`: the length of the JSON text the event was parsed from, when known. A string
    takes at least as many bytes in JSON (UTF-8) as it has in UTF-8 (an escape is longer than
    what it stands for), so no string of a text of at most MAX_TERM_BYTES is too long, and the
    walk, a tenth of the route's time for an event of a few kilobytes, is skipped."""
    if text_bytes is not None and text_bytes <= MAX_TERM_BYTES:
        return
    for path, value in _indexed_strings(event):
        size = utf8_length_above(value, MAX_TERM_BYTES)
        if size is not None:
            raise InvalidEvent(path, f"{size:,} bytes long: Solr indexes at most {MAX_TERM_BYTES:,} bytes "
                                     "of one name (UTF-8)")


def _indexed_strings(event: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    yield "$.producer", event.get("producer", "")
    job = _dict(event.get("job"))
    for key in ("namespace", "name"):
        yield f"$.job.{key}", job.get(key, "")
    parent = _dict(_dict(_dict(event.get("run")).get("facets")).get("parent"))
    for key in ("namespace", "name"):
        yield f"$.run.facets.parent.job.{key}", _dict(parent.get("job")).get(key, "")
    for path, dataset in _datasets(event):
        yield from _dataset_strings(path, dataset)
        facets = _dict(dataset.get("facets"))
        symlinks = _dict(facets.get("symlinks"))
        for number, identifier in enumerate(_list(symlinks.get("identifiers"))):
            yield from _dataset_strings(f"{path}.facets.symlinks.identifiers[{number}]", _dict(identifier))
        for number, field in enumerate(_list(_dict(facets.get("schema")).get("fields"))):
            for key in ("name", "type"):
                yield f"{path}.facets.schema.fields[{number}].{key}", _dict(field).get(key, "")
        lineage = _dict(facets.get("columnLineage"))
        for column, spec in _dict(lineage.get("fields")).items():
            where = f"{path}.facets.columnLineage.fields"
            yield where, column
            key = column if len(column) <= 64 else f"{column[:64]}..."  # a path to read, not to follow
            for number, source in enumerate(_list(_dict(spec).get("inputFields"))):
                yield from _input_field_strings(f"{where}.{key}.inputFields[{number}]", _dict(source))
        for number, source in enumerate(_list(lineage.get("dataset"))):
            yield from _input_field_strings(f"{path}.facets.columnLineage.dataset[{number}]", _dict(source))


def _dataset_strings(path: str, dataset: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for key in ("namespace", "name"):
        value = dataset.get(key, "")
        yield f"{path}.{key}", value if isinstance(value, str) else ""


def _input_field_strings(path: str, source: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    yield from _dataset_strings(path, source)
    field = source.get("field", "")
    yield f"{path}.field", field if isinstance(field, str) else ""
    for number, transformation in enumerate(_list(source.get("transformations"))):
        subtype = _dict(transformation).get("subtype", "")
        yield f"{path}.transformations[{number}].subtype", subtype if isinstance(subtype, str) else ""

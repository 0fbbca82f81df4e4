"""OpenLineage events checked against the spec's JSON Schema (2-0-2, vendored in spec/ with its
source: spec/SOURCE.md), with `jsonschema`. The first bad field is named by its JSON path."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime
from importlib import resources
from typing import Any

import orjson
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from navd.errors import NavdError

#: the spec version navd validates against (the `$id` of spec/OpenLineage.json)
SPEC_VERSION = "2-0-2"
CORE_ID = f"https://openlineage.io/spec/{SPEC_VERSION}/OpenLineage.json"
#: facets navd maps, validated by their own schema when present: where they sit -> schema files
_RUN_FACETS = ("ErrorMessageRunFacet.json", "NominalTimeRunFacet.json", "ParentRunFacet.json")
_DATASET_FACETS = ("SchemaDatasetFacet.json", "ColumnLineageDatasetFacet.json")
#: how many valid facet sets `validate` remembers. A dataset's facets come again and again (in
#: each event of a run, in every run that reads the table) and jsonschema takes about a
#: millisecond for a 10-column schema facet: 5 datasets' facets cost 6 of the 8 ms an event took
#: (tests/bench/bench_openlineage.py). Validity is a function of the facets' content alone, so a
#: set seen valid is valid again; only valid ones are kept (an invalid one is refused anyway).
VALID_FACETS_MEMORY = 4096


class InvalidEvent(NavdError):
    """An event the schema refuses: `path` is the JSON path of the first bad field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


@dataclasses.dataclass(frozen=True)
class _Schemas:
    core: Draft202012Validator
    kinds: Mapping[str, Draft202012Validator]
    run_facets: tuple[Draft202012Validator, ...]
    dataset_facets: tuple[Draft202012Validator, ...]
    #: "inputs" / "outputs" -> the validator of one dataset of that list
    datasets: Mapping[str, Draft202012Validator]
    #: the names of the facets those schemas describe (the ones navd maps)
    facet_names: frozenset[str]


def _format_checker() -> FormatChecker:
    """The formats the spec uses that navd relies on: `uuid` (runId) and `date-time` (eventTime,
    a datetime navd parses). jsonschema checks `date-time` only with an extra package; Python's
    ISO parser is what the mapping uses anyway."""
    checker = FormatChecker(formats=())

    @checker.checks("uuid", raises=ValueError)
    def _uuid(value: object) -> bool:
        return not isinstance(value, str) or bool(uuid.UUID(value))

    @checker.checks("date-time", raises=ValueError)
    def _date_time(value: object) -> bool:
        return not isinstance(value, str) or parse_time(value) is not None

    return checker


def parse_time(value: str) -> datetime:
    """An OpenLineage date-time (RFC 3339, e.g. `2026-11-23T08:11:29.501Z`) as an aware datetime;
    ValueError for anything else (a time without its zone included)."""
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"{value!r} has no time zone")
    return parsed


@functools.cache
def _schemas() -> _Schemas:
    """Loaded on first use (nothing at import time), once."""
    spec = resources.files("navd.openlineage") / "spec"
    documents = {name: json.loads((spec / name).read_text(encoding="utf-8"))
                 for name in ("OpenLineage.json", *_RUN_FACETS, *_DATASET_FACETS)}
    registry: Registry = Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc)) for doc in documents.values())
    checker = _format_checker()

    def validator(schema: Mapping[str, Any]) -> Draft202012Validator:
        return Draft202012Validator(schema, registry=registry, format_checker=checker)

    core = documents["OpenLineage.json"]
    kinds = {kind: validator({"$ref": f"{CORE_ID}#/$defs/{kind}"}) for kind in ("RunEvent", "DatasetEvent", "JobEvent")}
    datasets = {"inputs": validator({"$ref": f"{CORE_ID}#/$defs/InputDataset"}),
                "outputs": validator({"$ref": f"{CORE_ID}#/$defs/OutputDataset"})}
    return _Schemas(validator(core), kinds, tuple(validator(documents[n]) for n in _RUN_FACETS),
                    tuple(validator(documents[n]) for n in _DATASET_FACETS), datasets,
                    frozenset(name for n in (*_RUN_FACETS, *_DATASET_FACETS) for name in documents[n]["properties"]))


def event_kind(event: Mapping[str, Any]) -> str:
    """RunEvent (has `run`), DatasetEvent (has `dataset`) or JobEvent: the spec's `oneOf` tells
    them apart by these keys, so an invalid event is checked against the one it means to be."""
    if "run" in event:
        return "RunEvent"
    if "dataset" in event:
        return "DatasetEvent"
    return "JobEvent"


def validate(event: Any) -> str:
    """The event's kind; InvalidEvent naming the first bad field otherwise, a facet's included
    (strict: what navd itself writes, as its export, is held to the whole spec)."""
    if not isinstance(event, dict):
        raise InvalidEvent("$", f"an OpenLineage event is a JSON object, got {type(event).__name__}")
    kind = event_kind(event)
    _check_core(event, kind)
    for where, facets, validators in _facet_places(event):
        _check_remembered(facets, facets, validators, where)
    return kind


@dataclasses.dataclass(frozen=True)
class NonconformingFacet:
    """A facet of a taken event that does not conform to its schema: left out of the mapping."""

    #: where it sits, as `$.run.facets` or `$.outputs[0].facets`
    place: str
    name: str
    #: the first bad field's JSON path and what is wrong with it
    problem: str


@dataclasses.dataclass(frozen=True)
class CheckedEvent:
    kind: str
    #: the event as the mapping reads it: without its nonconforming facets (the event itself
    #: when every facet conforms)
    mappable: dict[str, Any]
    nonconforming: tuple[NonconformingFacet, ...]


#: the base fields every facet carries by the spec (who made it, its schema): about provenance,
#: not content, and left out by some producers (custom facets, the Java client dropping nulls)
_BASE_FACET_FIELDS = {"_producer": "", "_schemaURL": "about:blank"}


def check_event(event: Any) -> CheckedEvent:
    """What the intake takes, as Marquez does: the event's core (kind, eventType, eventTime,
    run.runId, job namespace and name, producer, datasets' namespace and name) checked strictly
    (InvalidEvent naming the first bad field); a facet navd maps that does not conform to its
    schema, or a facet that is not a JSON object, is listed and left out of `mappable`, never a
    reason to refuse the event. A facet without `_producer` or `_schemaURL` conforms."""
    if not isinstance(event, dict):
        raise InvalidEvent("$", f"an OpenLineage event is a JSON object, got {type(event).__name__}")
    kind = event_kind(event)
    core, places = _without_facets(event)
    _check_core(core, kind)
    schemas = _schemas()
    bad: list[NonconformingFacet] = []
    for where, facets in places:
        validators = (schemas.run_facets if where == "$.run.facets" else
                      schemas.dataset_facets if where.endswith("].facets") or where == "$.dataset.facets" else ())
        for name, facet in facets.items():
            if not isinstance(facet, dict):
                bad.append(NonconformingFacet(where, name, f"{where}.{name}: a facet is a JSON object, got "
                                                           f"{type(facet).__name__}"))
                continue
            if not validators or name not in schemas.facet_names:
                continue  # a facet navd does not map: kept as it came, read by nothing that trusts it
            complete = {**_BASE_FACET_FIELDS, **facet}
            try:
                _check_remembered({name: complete}, {name: complete}, validators, where)
            except InvalidEvent as exc:
                bad.append(NonconformingFacet(where, name, str(exc)))
    return CheckedEvent(kind, _without(event, bad) if bad else event, tuple(bad))


def _without_facets(event: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The event with every facet set emptied (its core), and the facet sets: (place, facets)."""
    core = dict(event)
    places: list[tuple[str, dict[str, Any]]] = []
    for key in ("run", "job", "dataset"):
        owner = event.get(key)
        if isinstance(owner, dict) and isinstance(owner.get("facets"), dict):
            core[key] = {**owner, "facets": {}}
            places.append((f"$.{key}.facets", owner["facets"]))
    for side, own in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        datasets = event.get(side)
        if not isinstance(datasets, list):
            continue
        stripped = []
        for number, dataset in enumerate(datasets):
            if isinstance(dataset, dict):
                dataset = dict(dataset)
                for key in ("facets", own):
                    if isinstance(dataset.get(key), dict):
                        places.append((f"$.{side}[{number}].{key}", dataset[key]))
                        dataset[key] = {}
            stripped.append(dataset)
        core[side] = stripped
    return core, places


def _without(event: dict[str, Any], bad: list[NonconformingFacet]) -> dict[str, Any]:
    """A copy of `event` without the `bad` facets (the event itself is left as it came)."""
    copy = dict(event)
    for facet in bad:
        place = facet.place.removeprefix("$.")
        owner_path, _, key = place.rpartition(".")
        if "[" in owner_path:
            side, number = owner_path.rstrip("]").split("[")
            copy[side] = list(copy[side])
            owner = copy[side][int(number)] = dict(copy[side][int(number)])
        else:
            owner = copy[owner_path] = dict(copy[owner_path])
        owner[key] = {name: value for name, value in owner[key].items() if name != facet.name}
    return copy


def _check_core(event: dict[str, Any], kind: str) -> None:
    """InvalidEvent naming the first field of `event` its kind's schema refuses (facets included,
    if it has any)."""
    schemas = _schemas()
    # The datasets of a run's or job's lists one by one, the event without them first: the
    # spec's schema of a dataset takes any strings as its namespace and name, so datasets that
    # differ only there are all valid or all not, and one check covers them (an event of 10,000
    # outputs spent 3 s of its 5 in jsonschema, one dataset after the other).
    lists = {side: event[side] for side in ("inputs", "outputs")
             if kind != "DatasetEvent" and isinstance(event.get(side), list) and event[side]}
    core = {**event, **dict.fromkeys(lists, [])} if lists else event
    _check_remembered(_core_shape(core), core, (schemas.kinds[kind],), "$")
    for side, datasets in lists.items():
        checker = schemas.datasets[side]
        for number, dataset in enumerate(datasets):
            shape = ({**dataset, "namespace": "", "name": ""} if isinstance(dataset, dict)
                     and isinstance(dataset.get("namespace"), str) and isinstance(dataset.get("name"), str) else None)
            _check_remembered(shape, dataset, (checker,), f"$.{side}[{number}]")


#: what `_core_shape` puts in place of a valid runId and eventTime
_SHAPE_RUN_ID = "00000000-0000-4000-8000-000000000000"
_SHAPE_TIME = "2000-01-01T00:00:00Z"


def _core_shape(core: dict[str, Any]) -> dict[str, Any]:
    """The event's core as far as its schema can tell it from another's: a runId and an
    eventTime that pass their format check (the spec asks nothing else of them: a string of
    format uuid, of format date-time) replaced by fixed ones, so the cores of a job's runs are
    one shape, checked once (`_check_remembered`) instead of by jsonschema at every event (a
    tenth of the route's time). A value that fails its format is left as it is: checked, and
    named in the refusal."""
    shape = dict(core)
    when = core.get("eventTime")
    if isinstance(when, str) and _valid_format(parse_time, when):
        shape["eventTime"] = _SHAPE_TIME
    run = core.get("run")
    if isinstance(run, dict) and isinstance(run.get("runId"), str) and _valid_format(uuid.UUID, run["runId"]):
        shape["run"] = {**run, "runId": _SHAPE_RUN_ID}
    return shape


def _valid_format(check: Any, value: str) -> bool:
    """Whether `value` passes the format check the validators run (`_format_checker`)."""
    try:
        check(value)
    except ValueError:
        return False
    return True


def _check_remembered(key_value: Any, value: Any, validators: tuple[Draft202012Validator, ...], where: str) -> None:
    """`value` checked by `validators`, unless a value of the same `key_value` (None: no key, always
    checked) was found valid by them before."""
    key: tuple[tuple[int, ...], bytes] | None = None
    if key_value is not None:
        try:
            # The digest, not the text: a column-lineage facet of a wide table is megabytes, and
            # 4,096 of them would be gigabytes of memo. 128 bits of BLAKE2b: no collision to fear.
            key = (tuple(map(id, validators)), hashlib.blake2b(orjson.dumps(key_value, option=orjson.OPT_SORT_KEYS),
                                                     digest_size=16).digest())
        except TypeError:  # e.g. an integer beyond 64 bits: validated, not remembered
            key = None
    if key is not None and key[1] in _valid_facets.get(key[0], {}):
        return
    for checker in validators:
        _raise_first(checker.iter_errors(value), where)
    if key is not None:
        _remember_valid(key)


#: facet sets and dataset shapes found valid, per validator tuple: canonical JSON's digest -> None,
#: oldest first (a bounded memo of a pure function; plain dicts, so a lost race of two threads
#: costs a repeat, never a wrong answer)
_valid_facets: dict[tuple[int, ...], dict[bytes, None]] = {}


def _remember_valid(key: tuple[tuple[int, ...], bytes]) -> None:
    known = _valid_facets.setdefault(key[0], {})
    known[key[1]] = None
    while len(known) > VALID_FACETS_MEMORY:
        try:
            del known[next(iter(known))]
        except (StopIteration, KeyError, RuntimeError):  # emptied or changed by another thread
            break


def _facet_places(event: Mapping[str, Any]) -> Iterator[tuple[str, Any, tuple[Draft202012Validator, ...]]]:
    schemas = _schemas()
    run = event.get("run")
    if isinstance(run, dict) and isinstance(run.get("facets"), dict):
        yield "$.run.facets", run["facets"], schemas.run_facets
    for side in ("inputs", "outputs"):
        for number, dataset in enumerate(event.get(side) or ()):
            if isinstance(dataset, dict) and isinstance(dataset.get("facets"), dict):
                yield f"$.{side}[{number}].facets", dataset["facets"], schemas.dataset_facets
    dataset = event.get("dataset")
    if isinstance(dataset, dict) and isinstance(dataset.get("facets"), dict):
        yield "$.dataset.facets", dataset["facets"], schemas.dataset_facets


def _raise_first(errors: Iterator[ValidationError], prefix: str) -> None:
    error = best_match(errors)
    if error is None:
        return
    # best_match descends into anyOf/allOf; the deepest error names the field itself
    while error.context:
        error = best_match(error.context)
    path = prefix + error.json_path[1:]
    message = error.message
    if len(message) > 200:
        message = message[:200] + "..."
    raise InvalidEvent(path, message)

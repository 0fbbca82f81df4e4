"""YARN application records -> navd.model records. Pure: the ResourceManager's JSON in, records out.

One application (an element of `/ws/v1/cluster/apps` -> `apps.app[]`) becomes:
- an OPERATION_EXECUTION `yarn://<application id>` (user as principal, queue, type, state,
  finalStatus, start/finish, elapsed, tracking URL, diagnostics when it did not succeed);
- an OPERATION template `yarn://<type>/<name>` (Navigator groups executions by what ran), joined
  by INSTANCE_OF;
- for a Spark application, LOGICAL_PHYSICAL from the Spark application run `spark://<id>/1` (the
  logical operation, written by the Spark extractor from the event log, which carries the same
  application id) to the YARN execution (the physical one), unlinked until that run is indexed.
  The Spark extractor writes the same relation from its side, so whichever source comes first
  creates it and the other one's copy is the same document.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from navd.model import Element, ElementType, Record, Relation, RelationType, SourceType
from navd.names import is_utf8, shown, spark_run_ref, yarn_application_ref, yarn_execution_ref

#: YARN states in which an application can still change.
UNFINISHED_STATES = ("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING")
_MAX_DIAGNOSTICS = 2000


class BadApplication(ValueError):
    """An application record without what every application has (its id, name, type, ...)."""


@dataclasses.dataclass(frozen=True, slots=True)
class YarnApplication:
    application_id: str
    name: str
    application_type: str
    user: str
    queue: str
    state: str
    final_status: str
    started: datetime | None
    finished: datetime | None
    elapsed_ms: int | None
    tracking_url: str
    diagnostics: str
    tags: str

    @property
    def finished_ms(self) -> int:
        return int(self.finished.timestamp() * 1000) if self.finished else 0


def _time(value: Any, key: str, app_id: str) -> datetime | None:
    """Epoch milliseconds, 0 (or absent) meaning not yet."""
    if value in (None, "", 0):
        return None
    try:
        millis = int(value)
        return datetime.fromtimestamp(millis / 1000, UTC) if millis > 0 else None
    except (TypeError, ValueError, OverflowError):  # also an Infinity, or a time past year 9999
        raise BadApplication(f"application {app_id}: {key} is not epoch milliseconds: {value!r:.80}") from None


def parse_application(raw: Mapping[str, Any]) -> YarnApplication:
    """The fields navd keeps of one `apps.app[]` item; BadApplication names what is wrong."""
    if not isinstance(raw, Mapping):
        raise BadApplication(f"application record is not an object: {str(raw)[:100]!r}")
    app_id = raw.get("id")
    if not isinstance(app_id, str) or not app_id.startswith("application_"):
        raise BadApplication(f"application record without a valid id: id={app_id!r}")
    missing = [key for key in ("name", "user", "state") if not isinstance(raw.get(key), str)]
    if missing:
        raise BadApplication(f"application {app_id}: missing {', '.join(missing)}")
    elapsed = raw.get("elapsedTime")
    app = YarnApplication(
        # a blank name or type (`spark.app.name=" "`) cannot name an operation: the id, "YARN" stand in
        application_id=app_id, name=raw["name"] if raw["name"].strip() else app_id,
        application_type=str(raw.get("applicationType") or "").strip() or "YARN",
        user=raw["user"], queue=str(raw.get("queue") or ""), state=raw["state"],
        final_status=str(raw.get("finalStatus") or "UNDEFINED"),
        started=_time(raw.get("startedTime"), "startedTime", app_id),
        finished=_time(raw.get("finishedTime"), "finishedTime", app_id),
        elapsed_ms=int(elapsed) if isinstance(elapsed, int) and elapsed >= 0 else None,
        tracking_url=str(raw.get("trackingUrl") or ""), diagnostics=str(raw.get("diagnostics") or ""),
        tags=str(raw.get("applicationTags") or ""))
    for field in dataclasses.fields(app):
        value = getattr(app, field.name)
        if isinstance(value, str) and not is_utf8(value):  # JSON's "\ud800": no document can carry it
            raise BadApplication(f"application {shown(app_id)}: {field.name} is not valid UTF-8 text")
    return app


def application_records(app: YarnApplication, *, extractor_run_id: str | None = None) -> Iterator[Record]:
    template = Element(SourceType.YARN, ElementType.OPERATION,
                       yarn_application_ref(app.application_type, app.name).qualified_name, name=app.name,
                       extractor_run_id=extractor_run_id, properties={"applicationType": app.application_type})
    props = {"applicationType": app.application_type, "queue": app.queue, "state": app.state,
             "finalStatus": app.final_status}
    if app.elapsed_ms is not None:
        props["elapsedMs"] = str(app.elapsed_ms)
    if app.tracking_url:
        props["trackingUrl"] = app.tracking_url
    if app.tags:
        props["applicationTags"] = app.tags
    if app.diagnostics and app.final_status not in ("SUCCEEDED", "UNDEFINED"):
        props["diagnostics"] = app.diagnostics[:_MAX_DIAGNOSTICS]
    execution = Element(SourceType.YARN, ElementType.OPERATION_EXECUTION,
                        yarn_execution_ref(app.application_id).qualified_name, name=f"{app.name} ({app.application_id})", principal=app.user, started=app.started,
                        ended=app.finished, source_id=app.application_id, extractor_run_id=extractor_run_id,
                        properties=props)
    yield template
    yield execution
    yield Relation(RelationType.INSTANCE_OF, template.ref, execution.ref, extractor_run_id=extractor_run_id)
    if app.application_type.upper() == "SPARK":
        yield Relation(RelationType.LOGICAL_PHYSICAL, spark_run_ref(app.application_id), execution.ref,
                       linked1=False, extractor_run_id=extractor_run_id)

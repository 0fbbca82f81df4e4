"""Oozie REST JSON -> navd records. Pure: `GET /v2/job/<id>?show=info` bodies in, records out.

Field names are Oozie's (client/.../rest/JsonTags.java); times are RFC 1123 (`Thu, 01 Jan 2009
00:00:00 GMT`), as Oozie writes them. One workflow job becomes:

- an OPERATION `oozie://workflow/<appName>` (the workflow, Navigator's template of its runs);
- an OPERATION_EXECUTION `oozie://<job id>` (the run: user, status, times, appPath, run number,
  the coordinator action that started it as `parentId`), INSTANCE_OF from the workflow;
- per action an OPERATION_EXECUTION `oozie://<job id>@<action name>` (type, status,
  externalStatus, times, error), PARENT_CHILD from the run;
- per YARN application an action started (its `externalId` and `externalChildIDs`; a MapReduce
  `job_<ts>_<n>` is the application `application_<ts>_<n>`), LOGICAL_PHYSICAL from the YARN
  execution `yarn://<application id>` (logical: what the action triggered) to the action
  (physical), unlinked until the YARN extractor writes it. Through the YARN execution the walk
  reaches a Spark run and its SQL executions (the YARN extractor's and Spark extractor's own
  LOGICAL_PHYSICAL), so a table's lineage with operations shows the workflow that produced it.

A coordinator job becomes an OPERATION `oozie://coordinator/<appName>`; each of its actions (one
materialisation, `oozie://<coord id>@<n>`) an OPERATION_EXECUTION with INSTANCE_OF from the
coordinator and PARENT_CHILD to the workflow run it started (its `externalId`).

A bundle job (`bundleJobId`, `bundleJobName`, `bundleJobPath`, its `bundleCoordJobs`; the REST
documentation's example spells them `id`, `appName`, `appPath`) becomes an OPERATION
`oozie://bundle/<appName>` with PARENT_CHILD to the coordinator OPERATION of each coordinator it
started: a bundle has no runs of its own, it starts coordinators once and they run.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

from navd.model import Element, ElementType, Record, Relation, RelationType, SourceType
from navd.names import is_utf8, oozie_application_ref, oozie_execution_ref, shown, yarn_execution_ref

#: Oozie job ids: `<seq>-<server start time>-<system id>-<W|C|B>` (`0000001-140324163709596-oozie-chit-W`)
_JOB_ID = re.compile(r"\d+-\d+-.+-[WCB]")
#: what an action's external ids name on YARN: a MapReduce job or an application
_YARN_ID = re.compile(r"(?:job|application)_(\d+)_(\d+)")
_MAX_ERROR = 2000
_KINDS = {"W": "workflow", "C": "coordinator", "B": "bundle"}


class BadJob(ValueError):
    """A job body without what every job has (its id, appName, status), or with a bad value."""


def parse_time(value: Any, key: str, where: str) -> datetime | None:
    """An Oozie time (`Thu, 01 Jan 2009 00:00:00 GMT`); None for null or ""."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise BadJob(f"{where}: {key} is not a time: {value!r:.80}")
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        raise BadJob(f"{where}: {key} {shown(value, 80)} is not an RFC 1123 time") from None
    if parsed.tzinfo is None:
        raise BadJob(f"{where}: {key} {shown(value, 80)} has no time zone")
    return parsed


def yarn_application_ids(*external: Any) -> tuple[str, ...]:
    """The YARN applications named in an action's `externalId` / `externalChildIDs` (a comma
    list): `job_1_2` and `application_1_2` are both `application_1_2`; order kept, no repeats."""
    found: dict[str, None] = {}
    for value in external:
        if isinstance(value, str):
            for match in _YARN_ID.finditer(value):
                found.setdefault(f"application_{match[1]}_{match[2]}", None)
    return tuple(found)


@dataclasses.dataclass(frozen=True, slots=True)
class OozieAction:
    id: str
    name: str
    type: str
    status: str
    external_status: str
    started: datetime | None
    ended: datetime | None
    error: str
    applications: tuple[str, ...]
    console_url: str


@dataclasses.dataclass(frozen=True, slots=True)
class OozieWorkflow:
    id: str
    app_name: str
    app_path: str
    user: str
    status: str
    run: int
    parent_id: str
    created: datetime | None
    started: datetime | None
    ended: datetime | None
    modified: datetime | None
    actions: tuple[OozieAction, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class CoordinatorAction:
    id: str
    number: int
    status: str
    workflow_id: str
    nominal: datetime | None
    created: datetime | None


@dataclasses.dataclass(frozen=True, slots=True)
class OozieCoordinator:
    id: str
    app_name: str
    app_path: str
    user: str
    status: str
    frequency: str
    started: datetime | None
    ended: datetime | None
    actions: tuple[CoordinatorAction, ...]
    bundle_id: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class BundleCoordinator:
    """A coordinator a bundle started: its job id and application name (its OPERATION's name)."""

    id: str
    app_name: str
    status: str


@dataclasses.dataclass(frozen=True, slots=True)
class OozieBundle:
    id: str
    app_name: str
    app_path: str
    user: str
    status: str
    kickoff: datetime | None
    created: datetime | None
    started: datetime | None
    ended: datetime | None
    coordinators: tuple[BundleCoordinator, ...]


def _text(raw: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = raw.get(key)
    if value is None:
        if required:
            raise BadJob(f"{where}: no {key}")
        return ""
    text = str(value)
    if not is_utf8(text):
        raise BadJob(f"{where}: {key} is not valid UTF-8 text")
    if required and not text.strip():
        raise BadJob(f"{where}: empty {key}")
    return text


def _object(raw: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise BadJob(f"{what} is not a JSON object: {str(raw)[:100]!r}")
    return raw


def _job_id(raw: Mapping[str, Any], kind: str) -> str:
    job_id = raw.get("id")
    if not isinstance(job_id, str) or not _JOB_ID.fullmatch(job_id) or not job_id.endswith(f"-{kind}"):
        raise BadJob(f"{_KINDS[kind]} job without a valid id: id={job_id!r:.100}")
    return job_id


def parse_workflow(body: Any) -> OozieWorkflow:
    """A workflow job's `show=info` body; BadJob names what is wrong."""
    raw = _object(body, "workflow job")
    job_id = _job_id(raw, "W")
    actions = []
    for item in raw.get("actions") or ():
        action = _object(item, f"an action of {job_id}")
        action_id = _text(action, "id", job_id, required=True)
        if not action_id.startswith(job_id + "@"):
            raise BadJob(f"{job_id}: action id {shown(action_id, 100)} is not {job_id}@<name>")
        actions.append(OozieAction(
            id=action_id, name=_text(action, "name", action_id) or action_id.partition("@")[2],
            type=_text(action, "type", action_id), status=_text(action, "status", action_id),
            external_status=_text(action, "externalStatus", action_id),
            started=parse_time(action.get("startTime"), "startTime", action_id),
            ended=parse_time(action.get("endTime"), "endTime", action_id),
            error=" ".join(filter(None, (_text(action, "errorCode", action_id),
                                         _text(action, "errorMessage", action_id)))),
            applications=yarn_application_ids(action.get("externalId"), action.get("externalChildIDs")),
            console_url=_text(action, "consoleUrl", action_id)))
    run = raw.get("run")
    return OozieWorkflow(
        id=job_id, app_name=_text(raw, "appName", job_id, required=True), app_path=_text(raw, "appPath", job_id),
        user=_text(raw, "user", job_id), status=_text(raw, "status", job_id, required=True),
        run=run if isinstance(run, int) and run >= 0 else 0, parent_id=_text(raw, "parentId", job_id),
        created=parse_time(raw.get("createdTime"), "createdTime", job_id),
        started=parse_time(raw.get("startTime"), "startTime", job_id),
        ended=parse_time(raw.get("endTime"), "endTime", job_id),
        modified=parse_time(raw.get("lastModTime"), "lastModTime", job_id), actions=tuple(actions))


def parse_coordinator(body: Any) -> OozieCoordinator:
    """A coordinator job's `show=info` body; BadJob names what is wrong."""
    raw = _object(body, "coordinator job")
    job_id = raw.get("coordJobId") or raw.get("id")
    job_id = _job_id({"id": job_id}, "C")
    actions = []
    for item in raw.get("actions") or ():
        action = _object(item, f"an action of {job_id}")
        action_id = _text(action, "id", job_id, required=True)
        number = action.get("actionNumber")
        if not isinstance(number, int):
            number = int(action_id.rpartition("@")[2]) if action_id.rpartition("@")[2].isdigit() else 0
        actions.append(CoordinatorAction(
            id=action_id, number=number, status=_text(action, "status", action_id),
            workflow_id=_text(action, "externalId", action_id),
            nominal=parse_time(action.get("nominalTime"), "nominalTime", action_id),
            created=parse_time(action.get("createdTime"), "createdTime", action_id)))
    return OozieCoordinator(
        id=job_id, app_name=_text(raw, "coordJobName", job_id) or _text(raw, "appName", job_id, required=True),
        app_path=_text(raw, "coordJobPath", job_id) or _text(raw, "appPath", job_id),
        user=_text(raw, "user", job_id), status=_text(raw, "status", job_id, required=True),
        frequency=str(raw.get("frequency") or ""), started=parse_time(raw.get("startTime"), "startTime", job_id),
        ended=parse_time(raw.get("endTime"), "endTime", job_id), actions=tuple(actions),
        bundle_id=_text(raw, "bundleId", job_id))


def parse_bundle(body: Any) -> OozieBundle:
    """A bundle job's `show=info` body (JsonTags' `bundleJobId`/`bundleJobName`/`bundleJobPath`,
    or the REST documentation's `id`/`appName`/`appPath`) with its `bundleCoordJobs`; BadJob
    names what is wrong."""
    raw = _object(body, "bundle job")
    job_id = _job_id({"id": raw.get("bundleJobId") or raw.get("id")}, "B")
    coordinators = []
    for item in raw.get("bundleCoordJobs") or ():
        coordinator = _object(item, f"a coordinator of {job_id}")
        coordinator_id = _job_id({"id": coordinator.get("coordJobId") or coordinator.get("id")}, "C")
        name = (_text(coordinator, "coordJobName", coordinator_id)
                or _text(coordinator, "appName", coordinator_id, required=True))
        coordinators.append(BundleCoordinator(id=coordinator_id, app_name=name,
                                              status=_text(coordinator, "status", coordinator_id)))
    return OozieBundle(
        id=job_id, app_name=_text(raw, "bundleJobName", job_id) or _text(raw, "appName", job_id, required=True),
        app_path=_text(raw, "bundleJobPath", job_id) or _text(raw, "appPath", job_id),
        user=_text(raw, "user", job_id), status=_text(raw, "status", job_id, required=True),
        kickoff=parse_time(raw.get("kickoffTime"), "kickoffTime", job_id),
        created=parse_time(raw.get("createdTime"), "createdTime", job_id),
        started=parse_time(raw.get("startTime"), "startTime", job_id),
        ended=parse_time(raw.get("endTime"), "endTime", job_id), coordinators=tuple(coordinators))


def workflow_records(job: OozieWorkflow, *, extractor_run_id: str | None = None) -> Iterator[Record]:
    template = Element(SourceType.OOZIE, ElementType.OPERATION,
                       oozie_application_ref("workflow", job.app_name).qualified_name, name=job.app_name,
                       extractor_run_id=extractor_run_id, properties={"kind": "workflow"})
    props = {"kind": "workflow", "status": job.status, "appPath": job.app_path, "run": str(job.run)}
    if job.parent_id:
        props["parentId"] = job.parent_id
    run = Element(SourceType.OOZIE, ElementType.OPERATION_EXECUTION, oozie_execution_ref(job.id).qualified_name,
                  name=f"{job.app_name} ({job.id})", principal=job.user or None, created=job.created,
                  started=job.started, ended=job.ended, last_modified=job.modified, source_id=job.id,
                  extractor_run_id=extractor_run_id, properties=props)
    yield template
    yield run
    yield Relation(RelationType.INSTANCE_OF, template.ref, run.ref, extractor_run_id=extractor_run_id)
    for action in job.actions:
        yield from _action_records(action, run, extractor_run_id)


def _action_records(action: OozieAction, run: Element, extractor_run_id: str | None) -> Iterator[Record]:
    props = {"kind": "action", "actionType": action.type, "status": action.status}
    if action.external_status:
        props["externalStatus"] = action.external_status
    if action.error:
        props["error"] = action.error[:_MAX_ERROR]
    if action.applications:
        props["yarnApplications"] = ",".join(action.applications)
    if action.console_url:
        props["consoleUrl"] = action.console_url
    element = Element(SourceType.OOZIE, ElementType.OPERATION_EXECUTION,
                      oozie_execution_ref(action.id).qualified_name, name=f"{action.name} ({action.type})",
                      parent=run.ref, principal=run.principal, started=action.started, ended=action.ended,
                      source_id=action.id, extractor_run_id=extractor_run_id, properties=props)
    yield element
    yield Relation(RelationType.PARENT_CHILD, run.ref, element.ref, extractor_run_id=extractor_run_id)
    for application in action.applications:
        # logical: what the action triggered on YARN; physical: the action (Navigator's rule)
        yield Relation(RelationType.LOGICAL_PHYSICAL, yarn_execution_ref(application), element.ref,
                       linked1=False, extractor_run_id=extractor_run_id)


def coordinator_records(job: OozieCoordinator, *, extractor_run_id: str | None = None) -> Iterator[Record]:
    template = Element(SourceType.OOZIE, ElementType.OPERATION,
                       oozie_application_ref("coordinator", job.app_name).qualified_name, name=job.app_name,
                       extractor_run_id=extractor_run_id,
                       properties={"kind": "coordinator", "appPath": job.app_path, "frequency": job.frequency,
                                   "status": job.status, "coordinatorId": job.id,
                                   **({"bundleId": job.bundle_id} if job.bundle_id else {})})
    yield template
    for action in job.actions:
        props = {"kind": "coordinator-action", "status": action.status, "actionNumber": str(action.number)}
        run = Element(SourceType.OOZIE, ElementType.OPERATION_EXECUTION, oozie_execution_ref(action.id).qualified_name,
                      name=f"{job.app_name} ({action.id})", principal=job.user or None, created=action.created,
                      started=action.nominal, source_id=action.id, extractor_run_id=extractor_run_id,
                      properties=props)
        yield run
        yield Relation(RelationType.INSTANCE_OF, template.ref, run.ref, extractor_run_id=extractor_run_id)
        if action.workflow_id:
            yield Relation(RelationType.PARENT_CHILD, run.ref, oozie_execution_ref(action.workflow_id),
                           linked2=False, extractor_run_id=extractor_run_id)


def bundle_records(job: OozieBundle, *, extractor_run_id: str | None = None) -> Iterator[Record]:
    """The bundle's OPERATION and PARENT_CHILD to each coordinator's OPERATION (unlinked until
    the coordinator's own records are written: the coordinator pass writes them)."""
    props = {"kind": "bundle", "appPath": job.app_path, "status": job.status, "bundleId": job.id, "user": job.user,
             "kickoffTime": job.kickoff.isoformat() if job.kickoff else "",
             "coordinators": ",".join(c.id for c in job.coordinators)}
    bundle = Element(SourceType.OOZIE, ElementType.OPERATION,
                     oozie_application_ref("bundle", job.app_name).qualified_name, name=job.app_name,
                     extractor_run_id=extractor_run_id, properties={k: v for k, v in props.items() if v})
    yield bundle
    for name in dict.fromkeys(c.app_name for c in job.coordinators):
        yield Relation(RelationType.PARENT_CHILD, bundle.ref, oozie_application_ref("coordinator", name),
                       linked2=False, extractor_run_id=extractor_run_id)


def jobs_of(body: Any, key: str) -> Sequence[Mapping[str, Any]]:
    """The jobs of a `GET /v2/jobs` page (`workflows`, `coordinatorjobs`); BadJob when the body
    is not that."""
    if not isinstance(body, Mapping) or not isinstance(body.get(key, []), list):
        raise BadJob(f"jobs list without a {key} list: {str(body)[:200]!r}")
    return [job for job in body.get(key) or () if isinstance(job, Mapping)]

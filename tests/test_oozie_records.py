"""Oozie REST responses -> records, on golden inputs taken from Oozie's own documentation and
REST field names (tests/fixtures/oozie/README.md says which)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from navd.config import parse_config
from navd.errors import ConfigError
from navd.extractors.oozie.extractor import OozieExtractionError, OozieExtractor
from navd.extractors.oozie.records import (BadJob, bundle_records, coordinator_records, jobs_of, parse_bundle,
                                           parse_coordinator, parse_workflow, workflow_records, yarn_application_ids)
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.names import oozie_execution_ref, yarn_execution_ref
from navd.process import free_port

FIXTURES = Path(__file__).parent / "fixtures" / "oozie"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def elements(records: list[Any]) -> dict[str, Element]:
    return {r.qualified_name: r for r in records if isinstance(r, Element)}


def relations(records: list[Any], kind: RelationType) -> set[tuple[str, str]]:
    return {(r.endpoint1.qualified_name, r.endpoint2.qualified_name) for r in records
            if isinstance(r, Relation) and r.type is kind}


def test_the_documentations_workflow_job_is_a_workflow_a_run_and_its_action() -> None:
    job = parse_workflow(load("workflow_doc.json"))
    records = list(workflow_records(job, extractor_run_id="oozie##1"))
    found = elements(records)
    workflow = found["oozie://workflow/indexer-workflow"]
    run = found["oozie://0-200905191240-oozie-W"]
    action = found["oozie://0-200905191240-oozie-W@indexer"]
    assert (workflow.source_type, workflow.type) == (SourceType.OOZIE, ElementType.OPERATION)
    assert (run.type, run.principal, run.started, run.ended) == (
        ElementType.OPERATION_EXECUTION, "bansalm", datetime(2009, 1, 2, tzinfo=UTC), None)
    assert run.properties["status"] == "RUNNING" and run.properties["appPath"] == "hdfs://user/bansalm/indexer.wf"
    assert (action.type, action.name, action.properties["actionType"], action.properties["externalStatus"]) == (
        ElementType.OPERATION_EXECUTION, "indexer (map-reduce)", "map-reduce", "SUCCEEDED")
    assert action.parent == run.ref
    assert relations(records, RelationType.INSTANCE_OF) == {(workflow.qualified_name, run.qualified_name)}
    assert relations(records, RelationType.PARENT_CHILD) == {(run.qualified_name, action.qualified_name)}
    # `job-123-200903101010` names no YARN application: no link
    assert relations(records, RelationType.LOGICAL_PHYSICAL) == set()


def test_actions_link_to_the_yarn_applications_they_started() -> None:
    job = parse_workflow(load("workflow_spark_hive.json"))
    records = list(workflow_records(job))
    links = relations(records, RelationType.LOGICAL_PHYSICAL)
    run = "oozie://0000001-140324163709596-oozie-chit-W"
    assert links == {
        ("yarn://application_1395703212345_0007", f"{run}@aggregate"),   # the Spark action's launcher
        ("yarn://application_1395703212345_0008", f"{run}@aggregate"),   # and the Spark application
        ("yarn://application_1395703212345_0009", f"{run}@load"),        # Hive: MapReduce job ids
        ("yarn://application_1395703212345_0010", f"{run}@load"),
        ("yarn://application_1395703212345_0011", f"{run}@load"),
    }
    # logical: the YARN execution, unlinked until the YARN extractor writes it; physical: the action
    [link] = [r for r in records if isinstance(r, Relation) and r.type is RelationType.LOGICAL_PHYSICAL
              and r.endpoint1.qualified_name.endswith("_0008")]
    assert link.endpoint1 == yarn_execution_ref("application_1395703212345_0008") and not link.linked1
    assert link.endpoint2 == EntityRef(SourceType.OOZIE, f"{run}@aggregate", ElementType.OPERATION_EXECUTION)
    found = elements(records)
    load_action = found[f"{run}@load"]
    assert load_action.properties["error"] == "JA018 Main Class [org.apache.oozie.action.hadoop.HiveMain], exit code [2]"
    assert load_action.properties["status"] == "ERROR"
    assert found[run].properties["parentId"] == "0000001-111219170928042-oozie-joe-C@1"
    assert found[run].last_modified == datetime(2014, 3, 24, 23, 52, 10, tzinfo=UTC)
    # the control nodes are actions too (Oozie lists them): they start nothing
    assert found[f"{run}@:start:"].properties["actionType"] == ":START:"


def test_a_coordinator_is_an_operation_its_actions_runs_of_it() -> None:
    job = parse_coordinator(load("coordinator_doc.json"))
    records = list(coordinator_records(job))
    found = elements(records)
    coordinator = found["oozie://coordinator/indexer-Coord"]
    action = found["oozie://0000010-130426111815091-oozie-bansalm-C@1"]
    assert coordinator.type is ElementType.OPERATION and coordinator.properties["frequency"] == "${days(1)}"
    assert action.type is ElementType.OPERATION_EXECUTION and action.started == datetime(2010, 1, 1, 1, tzinfo=UTC)
    assert relations(records, RelationType.INSTANCE_OF) == {(coordinator.qualified_name, action.qualified_name)}
    assert relations(records, RelationType.PARENT_CHILD) == set()  # it started no workflow yet
    started = parse_coordinator({**load("coordinator_doc.json"), "actions": [
        {"id": "0000001-111219170928042-oozie-joe-C@1", "actionNumber": 1, "status": "SUCCEEDED",
         "externalId": "0000001-140324163709596-oozie-chit-W", "nominalTime": "Fri, 01 Jan 2010 01:00:00 GMT"}]})
    assert relations(list(coordinator_records(started)), RelationType.PARENT_CHILD) == {
        ("oozie://0000001-111219170928042-oozie-joe-C@1", oozie_execution_ref("0000001-140324163709596-oozie-chit-W")
         .qualified_name)}


def test_the_documentations_bundle_is_an_operation_parent_of_its_coordinator() -> None:
    # the REST documentation's example spells the bundle's keys id/appName/appPath
    job = parse_bundle(load("bundle_doc.json"))
    records = list(bundle_records(job, extractor_run_id="oozie##1"))
    found = elements(records)
    bundle = found["oozie://bundle/new-bundle"]
    assert (bundle.source_type, bundle.type) == (SourceType.OOZIE, ElementType.OPERATION)
    assert bundle.properties["kind"] == "bundle" and bundle.properties["bundleId"] == "0-200905191240-oozie-B"
    assert bundle.properties["coordinators"] == "0000010-130426111815091-oozie-bansalm-C"
    assert relations(records, RelationType.PARENT_CHILD) == {("oozie://bundle/new-bundle", "oozie://coordinator/coord-1")}
    assert relations(records, RelationType.INSTANCE_OF) == set()


def test_a_bundle_as_oozie_writes_it_names_each_coordinator_once() -> None:
    # JsonTags' keys (bundleJobId, bundleJobName, bundleJobPath, bundleCoordJobs of full coordinators)
    job = parse_bundle(load("bundle_info.json"))
    assert (job.id, job.app_name, job.app_path, job.user, job.status) == (
        "0000002-140324163709596-oozie-chit-B", "sales-bundle", "hdfs://nameservice1/user/etl/apps/sales-bundle",
        "etl", "RUNNING")
    assert job.kickoff == datetime(2014, 3, 24, 23, tzinfo=UTC)
    records = list(bundle_records(job))
    [link, _] = sorted((r for r in records if isinstance(r, Relation)), key=lambda r: r.endpoint2.qualified_name)
    assert link.endpoint2 == EntityRef(SourceType.OOZIE, "oozie://coordinator/daily-sales-coord", ElementType.OPERATION)
    assert not link.linked2  # the coordinator pass writes it
    assert relations(records, RelationType.PARENT_CHILD) == {
        ("oozie://bundle/sales-bundle", "oozie://coordinator/daily-sales-coord"),
        ("oozie://bundle/sales-bundle", "oozie://coordinator/hourly-refunds-coord")}
    # a coordinator names its bundle
    [first, _] = load("bundle_info.json")["bundleCoordJobs"]
    coordinator = elements(list(coordinator_records(parse_coordinator(first))))["oozie://coordinator/daily-sales-coord"]
    assert coordinator.properties["bundleId"] == "0000002-140324163709596-oozie-chit-B"


@pytest.mark.parametrize(("change", "message"), [
    ({"bundleJobId": "0000002-140324163709596-oozie-chit-C"}, "bundle job without a valid id"),
    ({"bundleJobName": None, "appName": None}, "no appName"),
    ({"bundleCoordJobs": [{"coordJobId": "x-C", "coordJobName": "c"}]}, "coordinator job without a valid id"),
    ({"bundleCoordJobs": ["0000001-111219170928042-oozie-joe-C"]}, "a coordinator of 0000002-140324163709596-oozie-"
                                                                  "chit-B is not a JSON object"),
    ({"kickoffTime": "soon"}, "kickoffTime 'soon' is not an RFC 1123 time"),
])
def test_a_bad_bundle_names_what_is_wrong(change: dict[str, Any], message: str) -> None:
    with pytest.raises(BadJob, match=message):
        parse_bundle({**load("bundle_info.json"), **change})


def test_a_jobs_page_lists_its_workflows() -> None:
    jobs = jobs_of(load("jobs_v2.json"), "workflows")
    assert [j["id"] for j in jobs] == ["0000001-140324163709596-oozie-chit-W", "0-200905191240-oozie-W"]
    with pytest.raises(BadJob, match="without a workflows list"):
        jobs_of({"workflows": "x"}, "workflows")


@pytest.mark.parametrize(("external", "expected"), [
    (("job_1395703212345_0009",), ("application_1395703212345_0009",)),
    (("application_1_2", "job_1_2,application_1_3"), ("application_1_2", "application_1_3")),
    (("-", None, "job-123-200903101010"), ()),
])
def test_yarn_ids_of_external_ids(external: tuple[Any, ...], expected: tuple[str, ...]) -> None:
    assert yarn_application_ids(*external) == expected


@pytest.mark.parametrize(("change", "message"), [
    ({"id": "not-a-job"}, "workflow job without a valid id"),
    ({"id": "0000001-140324163709596-oozie-chit-C"}, "workflow job without a valid id"),
    ({"appName": ""}, "empty appName"),
    ({"startTime": "yesterday"}, "startTime 'yesterday' is not an RFC 1123 time"),
    ({"actions": [{"id": "0000009-140324163709596-oozie-chit-W@x"}]}, "is not 0000001-140324163709596-oozie-chit-W@<name>"),
    ({"appName": "bad \ud800"}, "appName is not valid UTF-8"),
])
def test_a_bad_job_names_what_is_wrong(change: dict[str, Any], message: str) -> None:
    with pytest.raises(BadJob, match=message.replace("[", r"\[").replace("(", r"\(")):
        parse_workflow({**load("workflow_spark_hive.json"), **change})


def test_an_unreachable_server_ends_the_run_with_one_line(tmp_path: Path) -> None:
    extractor = OozieExtractor([f"http://127.0.0.1:{free_port()}/oozie"], tmp_path, timeout=2)
    with pytest.raises(OozieExtractionError, match=r"no Oozie server answered: Oozie http://127\.0\.0\.1:\d+/oozie/"
                                                   r"v2/admin/status unreachable") as raised:
        list(extractor.extract())
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "oozie-state.json").exists()  # nothing committed


@pytest.mark.parametrize(("section", "message"), [
    ({"enabled": True}, r"\[oozie\] urls: \[oozie\] is enabled but has no urls"),
    ({"urls": ["oozie:11000"]}, r"\[oozie\] urls: 'oozie:11000' is not an http\(s\) URL"),
    ({"urls": ["http://o:11000/oozie"], "keytab": "/k"}, r"\[oozie\] keytab: set only with auth = \"kerberos\""),
    ({"page_size": 0}, r"\[oozie\] page_size"),
])
def test_bad_settings_name_the_key(section: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({"oozie": section}, environ={})

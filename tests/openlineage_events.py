"""OpenLineage events built with the real `openlineage-python` client's classes (as an Airflow
or dbt integration builds them), for the mapping tests and for posting through the client's
HTTP transport. `as_json` is the body the client's transport sends (its own serialiser)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    error_message_run,
    nominal_time_run,
    parent_run,
    schema_dataset,
    sql_job,
)
from openlineage.client.serde import Serde

PRODUCER = "https://github.com/navd/navd/tests/openlineage_events.py"
STARTED = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)
#: the Airflow scheduler's namespace and the datasets' namespaces of the sample job
JOB_NAMESPACE = "airflow://scheduler"
HIVE = "hive://metastore:9083"
HDFS = "hdfs://nn:8020"


def _time(offset_seconds: float) -> str:
    return (STARTED + timedelta(seconds=offset_seconds)).isoformat().replace("+00:00", "Z")


def _schema(*columns: tuple[str, str]) -> schema_dataset.SchemaDatasetFacet:
    return schema_dataset.SchemaDatasetFacet(fields=[schema_dataset.SchemaDatasetFacetFields(name=n, type=t)
                                                     for n, t in columns])


def _input(dataset: tuple[str, str], field: str, kind: str, subtype: str,
           description: str | None = None) -> column_lineage_dataset.InputField:
    transformation = column_lineage_dataset.Transformation(type=kind, subtype=subtype, description=description)
    return column_lineage_dataset.InputField(namespace=dataset[0], name=dataset[1], field=field,
                                             transformations=[transformation])


def job_run(run_id: str, job: str, state: RunState, *, offset: float = 0, database: str = "sales",
            parent: tuple[str, str] | None = None, error: str | None = None) -> RunEvent:
    """One event of a task `job` reading Hive `<database>.orders` and `<database>.customers` and
    writing Hive `<database>.revenue` and HDFS `/data/<database>/revenue_export`, with a schema
    facet on each and a column-lineage facet on the outputs; `parent` = (DAG name, DAG runId)."""
    orders, customers = (HIVE, f"{database}.orders"), (HIVE, f"{database}.customers")
    revenue_lineage = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            "region": column_lineage_dataset.Fields(inputFields=[_input(customers, "region", "DIRECT", "IDENTITY")]),
            "total": column_lineage_dataset.Fields(inputFields=[
                _input(orders, "amount", "DIRECT", "AGGREGATION", "sum(amount)")]),
        },
        dataset=[_input(orders, "customer_id", "INDIRECT", "JOIN"), _input(customers, "id", "INDIRECT", "JOIN"),
                 _input(orders, "status", "INDIRECT", "FILTER"), _input(customers, "region", "INDIRECT", "GROUP_BY")])
    export_lineage = column_lineage_dataset.ColumnLineageDatasetFacet(fields={
        "region": column_lineage_dataset.Fields(inputFields=[_input(customers, "region", "DIRECT", "TRANSFORMATION",
                                                                    "upper(region)")]),
    })
    run_facets: dict[str, Any] = {"nominalTime": nominal_time_run.NominalTimeRunFacet(
        nominalStartTime=_time(-3600), nominalEndTime=_time(0))}
    if parent is not None:
        run_facets["parent"] = parent_run.ParentRunFacet(run=parent_run.Run(runId=parent[1]),
                                                         job=parent_run.Job(namespace=JOB_NAMESPACE, name=parent[0]))
    if error is not None:
        run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(message=error, programmingLanguage="PYTHON")
    return RunEvent(
        eventType=state, eventTime=_time(offset), producer=PRODUCER,
        run=Run(runId=run_id, facets=run_facets),
        job=Job(namespace=JOB_NAMESPACE, name=job,
                facets={"sql": sql_job.SQLJobFacet(query=f"insert into {database}.revenue select ...")}),
        inputs=[InputDataset(namespace=orders[0], name=orders[1],
                             facets={"schema": _schema(("customer_id", "BIGINT"), ("amount", "DECIMAL(10,2)"),
                                                       ("status", "STRING"))}),
                InputDataset(namespace=customers[0], name=customers[1],
                             facets={"schema": _schema(("id", "BIGINT"), ("region", "STRING"))})],
        outputs=[OutputDataset(namespace=HIVE, name=f"{database}.revenue",
                               facets={"schema": _schema(("region", "STRING"), ("total", "DECIMAL(20,2)")),
                                       "columnLineage": revenue_lineage}),
                 OutputDataset(namespace=HDFS, name=f"/data/{database}/revenue_export",
                               facets={"columnLineage": export_lineage})])


def wide_job_run(run_id: str, job: str, database: str, outputs: int, columns: int,
                 state: RunState = RunState.COMPLETE) -> RunEvent:
    """A run writing `outputs` Hive tables `<database>.t<n>` of `columns` columns each: a large
    event (navd writes it in slices)."""
    fields = [schema_dataset.SchemaDatasetFacetFields(name=f"c{c}", type="STRING") for c in range(columns)]
    return RunEvent(eventType=state, eventTime=_time(30 if state == RunState.COMPLETE else 0), producer=PRODUCER,
                    run=Run(runId=run_id), job=Job(namespace=JOB_NAMESPACE, name=job),
                    outputs=[OutputDataset(namespace=HIVE, name=f"{database}.t{n}",
                                           facets={"schema": schema_dataset.SchemaDatasetFacet(fields=fields)})
                             for n in range(outputs)])


def as_json(event: RunEvent) -> dict[str, Any]:
    """The event as the client's HTTP transport sends it."""
    return json.loads(Serde.to_json(event))

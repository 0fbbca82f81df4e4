"""GET /metrics in Prometheus's text format: request latencies (a histogram this process keeps)
and, read from the index at each scrape, runs, failures, the last run's duration and the last
success per component (the run records) and the index totals. Nothing global: each app has its
own registry, so two apps in one process (tests, `navd run`) never collide."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from navd.errors import NavdError, first_line
from navd.index.client import SolrIndex
from navd.logs import get_logger
from navd.index.documents import parse_solr_date
from navd.status import run_totals, status

if TYPE_CHECKING:
    from navd.openlineage.intake import Intake

log = get_logger("navd.server")


class IndexCollector(Collector):
    """What the run records and the cores say, read at scrape time (navd/status.py)."""

    def __init__(self, index: SolrIndex) -> None:
        self.index = index

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("navd_solr_up", "1 if Solr answered this scrape's queries")
        try:
            totals = run_totals(self.index)
            cores = status(self.index)["totals"]
        except NavdError as exc:
            log.warning("metrics: Solr did not answer", reason=first_line(exc))
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        runs = CounterMetricFamily("navd_runs", "run records per component", labels=["component"])
        failures = CounterMetricFamily("navd_run_failures", "FAILED run records per component",
                                       labels=["component"])
        duration = GaugeMetricFamily("navd_last_run_duration_seconds", "the newest ended run's duration",
                                     labels=["component"])
        success = GaugeMetricFamily("navd_last_success_timestamp_seconds",
                                    "when the last successful run ended (Unix time)", labels=["component"])
        for name, component in totals.items():
            runs.add_metric([name], component.runs)
            failures.add_metric([name], component.failures)
            if component.last_duration_seconds is not None:
                duration.add_metric([name], component.last_duration_seconds)
            if component.last_success_ended:
                success.add_metric([name], parse_solr_date(component.last_success_ended).timestamp())
        documents = GaugeMetricFamily("navd_index_documents", "documents in the index", labels=["kind"])
        for kind, count in cores.items():
            documents.add_metric([kind], count)
        yield from (runs, failures, duration, success, documents)


class IntakeCollector(Collector):
    """The OpenLineage intake's own counts (`[openlineage] enabled`), read at scrape time."""

    def __init__(self, intake: Intake) -> None:
        self.intake = intake

    def collect(self) -> Iterator[Metric]:
        large = GaugeMetricFamily("navd_openlineage_large_events_in_flight",
                                  "large OpenLineage events taken and not yet answered (written in slices, "
                                  "with the small events between them)")
        large.add_metric([], self.intake.large_events_in_flight)
        unknown = CounterMetricFamily("navd_openlineage_unknown_metastore_events",
                                      "OpenLineage events that named a hive:// namespace of no metastore navd "
                                      "knows (their datasets kept in their own namespace, a warning logged)")
        unknown.add_metric([], self.intake.unknown_metastore_events)
        nonconforming = CounterMetricFamily("navd_openlineage_nonconforming_facets",
                                            "facets of taken OpenLineage events that do not conform to their "
                                            "schema (the event taken, the facet left out of the mapping, a "
                                            "warning per producer and facet an hour)")
        nonconforming.add_metric([], self.intake.nonconforming_facets)
        yield from (large, unknown, nonconforming)


class Metrics:
    def __init__(self, index: SolrIndex) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.latency = Histogram("navd_http_request_duration_seconds", "HTTP request latency",
                                 ["method", "route", "status"], registry=self.registry)
        self.registry.register(IndexCollector(index))
        self.router = APIRouter(tags=["probes"])
        self.router.add_api_route("/metrics", self.scrape, methods=["GET"], summary="Prometheus metrics",
                                  response_class=Response)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.latency.labels(method, route, str(status)).observe(seconds)

    def scrape(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

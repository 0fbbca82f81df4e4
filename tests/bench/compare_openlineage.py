"""navd's Spark column lineage against the OpenLineage Spark listener's, on the same runs.

Run: python tests/bench/compare_openlineage.py [--cases a,b,...] [--no-run]   (make compare-openlineage)

A report, not a test (it exits 0 whatever the differences). For each case of
tests/fixtures/spark_events/capture.py (default: every case whose jobs write tables or paths) it
runs that case's Spark application once, as capture.py does, with event logs on AND the
OpenLineage listener (`io.openlineage:openlineage-spark_2.13`, file transport) attached, so both
see the same run. The listener jar comes from Maven Central once, through navd's own Maven fetch
(navd.jvm.fetch_maven_jars, tests/bench/openlineage-pom.xml), into ~/.cache/navd.

Then, without Solr:
- navd: the event log through the extractor's pure path (ApplicationProcessor: events -> SQL
  executions with their column edges);
- OpenLineage: the `columnLineage` facet of each output dataset of the COMPLETE events: every
  field's `inputFields` with their transformations (DIRECT / INDIRECT, subtype), and the
  facet's `dataset` list (inputs that affect the whole dataset: filters, joins, sorts, ... when
  OpenLineage's dataset lineage is on, as in 1.53's default) applied to every column of the
  output's `schema` facet.

Both become edges (target dataset, target column, source dataset, source column, kind), kind
`data` (navd DATA_FLOW, OpenLineage DIRECT) or `control` (navd CONTROL_FLOW, OpenLineage
INDIRECT), each with its set of subtypes. Datasets are named alike: a catalog table
`db.table`, anything else its path (`file:` and the run's temporary directory dropped, so
`/tmp/navd-capture/output/...` as in the fixtures). An OpenLineage COMPLETE event belongs to
the SQL execution whose end has its time (the listener stamps a SQL execution's events with the
Spark event's time), folded into its root execution as navd folds nested executions.

The report lists per case, per root SQL execution and target dataset: agreed edges, edges only
navd has, only OpenLineage has, and edges both have with different subtypes. It is printed and
written to .bench/openlineage-comparison.md and .json; each case's event log and OpenLineage
events stay in .bench/openlineage/<case>/ (`--no-run` compares those again without Spark).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from navd.config import default_solr_dist_dir
from navd.errors import NavdError
from navd.extractors.spark.application_run import ApplicationRun
from navd.extractors.spark.events import ApplicationProcessor
from navd.jvm import fetch_maven_jars
from navd.model import RelationType, SourceType
from navd.names import EntityRef, split_field, split_path_field

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CAPTURE = REPO / "tests" / "fixtures" / "spark_events" / "capture.py"
BENCH_DIR = REPO / ".bench"
RUNS_DIR = BENCH_DIR / "openlineage"
OPENLINEAGE_VERSION = "1.53.0"
OPENLINEAGE_ARTIFACT = "openlineage-spark_2.13"
LISTENER = "io.openlineage.spark.agent.OpenLineageSparkListener"
#: capture.py's stand-in for the run's temporary directory (its fixtures use it too)
PLACEHOLDER = "/tmp/navd-capture"
WAREHOUSE = f"{PLACEHOLDER}/warehouse"
CLUSTER = "primary"
#: capture.py's cases with no written dataset to compare (catalog commands only)
NOT_COMPARED = frozenset({"catalog_ops"})
EVENT_LOG = "eventlog.jsonl"
OPENLINEAGE_EVENTS = "openlineage.jsonl"
DATA, CONTROL = "data", "control"


class CompareError(NavdError):
    """The comparison could not run (the listener jar, a case's Spark run)."""


# --- the pure part: edges, normalised, compared ----------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Edge:
    """One column edge in the common form: `source` flows into (data) or controls (control)
    `target`; datasets `db.table` or a path, columns lower case."""

    target_dataset: str
    target_column: str
    kind: str               # DATA | CONTROL
    source_dataset: str
    source_column: str

    def text(self) -> str:
        return f"{self.target_dataset}.{self.target_column} <- {self.kind} {self.source_dataset}.{self.source_column}"


#: an execution's edges with the subtypes of each (IDENTITY, FILTER, ...; empty when unknown)
Edges = dict[Edge, frozenset[str]]


def common_path(path: str) -> str:
    """A local path as both sides spell it: no `file:` scheme, no trailing '/'."""
    path = re.sub(r"^file:(//)?", "", path)
    return path.rstrip("/") or "/"


def _navd_dataset(field: EntityRef) -> tuple[str, str] | None:
    """(dataset, column) of one of navd's FIELD refs: a HIVE `db.t.c@cluster` -> `db.t`, a
    SPARK V2 catalog's `<catalog>.ns.t.c@cluster` -> `ns.t` (OpenLineage names such a table
    by its source system, a JDBC URL's, and the table's name there, not by Spark's catalog),
    an HDFS `<path>#c` -> path."""
    if field.source_type is SourceType.HDFS:
        split = split_path_field(field.qualified_name)
        return (common_path(split[0]), split[1]) if split is not None else None
    split = split_field(field.qualified_name, field.source_type)
    if split is None:
        return None
    table = split[0].rpartition("@")[0]
    return (table.split(".", 1)[1] if field.source_type is SourceType.SPARK else table), split[1]


def navd_edges(run: ApplicationRun) -> dict[int, Edges]:
    """Per root SQL execution, navd's column edges in the common form."""
    out: dict[int, Edges] = {}
    for execution in run.executions:
        edges: Edges = {}
        for column in execution.columns:
            target, source = _navd_dataset(column.target), _navd_dataset(column.source)
            if target is None or source is None:
                continue
            kind = DATA if column.kind is RelationType.DATA_FLOW else CONTROL
            edge = Edge(target[0], target[1].lower(), kind, source[0], source[1].lower())
            subtypes = frozenset(s for s in column.subtype.split(",") if s)
            edges[edge] = edges.get(edge, frozenset()) | subtypes
        out[execution.execution_id] = edges
    return out


def execution_times(event_log_lines: Iterable[str]) -> dict[int, int]:
    """End time (epoch ms) -> root SQL execution id, from an event log's SQL execution events."""
    roots: dict[int, int] = {}
    ends: dict[int, int] = {}
    for line in event_log_lines:
        if "SQLExecution" not in line:  # most lines: skip the JSON decoding
            continue
        event = json.loads(line)
        name = str(event.get("Event", ""))
        if name.endswith("SQLExecutionStart"):
            roots[event["executionId"]] = event.get("rootExecutionId", event["executionId"])
        elif name.endswith("SQLExecutionEnd"):
            ends[event["time"]] = event["executionId"]
    return {time: roots.get(execution_id, execution_id) for time, execution_id in ends.items()}


def openlineage_tables(events: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Path -> `db.table` from every dataset's `symlinks` facet (a TABLE identifier): the
    listener names a catalog table by its location and gives the table name only there."""
    tables: dict[str, str] = {}
    for event in events:
        for dataset in (*event.get("inputs", ()), *event.get("outputs", ())):
            for identifier in dataset.get("facets", {}).get("symlinks", {}).get("identifiers", ()):
                if identifier.get("type") == "TABLE":
                    tables[_ol_path(dataset)] = str(identifier["name"]).lower()
    return tables


def _ol_path(dataset: Mapping[str, Any]) -> str:
    namespace, name = str(dataset["namespace"]), str(dataset["name"])
    if namespace == "file" or namespace.startswith("file:"):
        return common_path(name)
    return f"{namespace.rstrip('/')}/{name.lstrip('/')}" if "://" in namespace else f"{namespace}.{name}"


_WAREHOUSE_TABLE = re.compile(r"^(?P<warehouse>.*)/(?P<db>[^/]+)\.db/(?P<table>[^/]+)$")


def openlineage_dataset(dataset: Mapping[str, Any], tables: Mapping[str, str], warehouse: str = WAREHOUSE) -> str:
    """The common name of an OpenLineage dataset: its table (symlinks, or a path under the
    warehouse: `<warehouse>/<db>.db/<table>`, `<warehouse>/<table>` for `default`), else its path."""
    path = _ol_path(dataset)
    if path in tables:
        return tables[path]
    match = _WAREHOUSE_TABLE.match(path)
    if match and match["warehouse"] == warehouse:
        return f"{match['db']}.{match['table']}"
    if path.startswith(warehouse + "/") and path.count("/") == warehouse.count("/") + 1:
        return "default." + path.rsplit("/", 1)[1]
    return path


@dataclasses.dataclass(frozen=True, slots=True)
class OpenLineageSide:
    """What OpenLineage's COMPLETE events say, per root SQL execution."""

    edges: dict[int, Edges]
    #: the same per OpenLineage job (the job's name without the application's): the listener
    #: reports a statement in several jobs (a CTAS and its insert), each from its own plan
    by_job: dict[int, dict[str, Edges]]
    #: every output dataset of the execution's COMPLETE events, with or without column lineage
    outputs: dict[int, frozenset[str]]
    #: COMPLETE events with outputs that no execution ended at (named by their job)
    unmatched: tuple[str, ...]


def _application(event: Mapping[str, Any]) -> str:
    """The Spark application an event of the listener belongs to: its root job's name (the
    application's own events have no parent), the app name in snake case."""
    root = event.get("run", {}).get("facets", {}).get("parent", {}).get("root", {}).get("job", {})
    return _snake(str(root.get("name") or event.get("job", {}).get("name", "")))


def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()).strip("_")


def openlineage_edges(events: Iterable[Mapping[str, Any]], ends: Mapping[int, int], *,
                      application: str | None = None, warehouse: str = WAREHOUSE) -> OpenLineageSide:
    """Per root SQL execution (by the COMPLETE event's time, `execution_times`), OpenLineage's
    output datasets and column edges in the common form. With `application`, only that Spark
    application's events count (a case's setup sessions report to the same file)."""
    events = [e for e in events if application is None or _application(e) == _snake(application)]
    tables = openlineage_tables(events)
    out: dict[int, Edges] = defaultdict(dict)
    by_job: dict[int, dict[str, Edges]] = defaultdict(dict)
    outputs_of: dict[int, set[str]] = defaultdict(set)
    unmatched: list[str] = []
    for event in events:
        if event.get("eventType") != "COMPLETE" or not event.get("outputs"):
            continue
        root = ends.get(_epoch_ms(str(event["eventTime"])))
        if root is None:
            unmatched.append(str(event["job"]["name"]))
            continue
        outputs_of[root].update(openlineage_dataset(o, tables, warehouse) for o in event["outputs"])
        job = str(event["job"]["name"]).split(".", 1)[-1]
        edges = by_job[root].setdefault(job, {})
        for output in event["outputs"]:
            if "columnLineage" not in output.get("facets", {}):
                continue
            target = openlineage_dataset(output, tables, warehouse)
            facet = output["facets"]["columnLineage"]
            fields = facet.get("fields", {})
            # `dataset`: inputs that affect the whole output, every column of its schema, also
            # those `fields` leaves out for having no input of their own (`count(*) AS n`)
            whole = facet.get("dataset", ())
            schema = [f["name"] for f in output["facets"].get("schema", {}).get("fields", ())] if whole else []
            for column in dict.fromkeys((*fields, *schema)):
                for input_field in (*fields.get(column, {}).get("inputFields", ()), *whole):
                    source = openlineage_dataset(input_field, tables, warehouse)
                    for transformation in input_field.get("transformations") or ({"type": "DIRECT"},):
                        kind = DATA if transformation.get("type") == "DIRECT" else CONTROL
                        edge = Edge(target, column.lower(), kind, source, str(input_field["field"]).lower())
                        subtype = transformation.get("subtype")
                        edges[edge] = edges.get(edge, frozenset()) | ({subtype} if subtype else set())
    for root, jobs in by_job.items():
        for job_edges in jobs.values():
            for edge, subtypes in job_edges.items():
                out[root][edge] = out[root].get(edge, frozenset()) | subtypes
    return OpenLineageSide({k: v for k, v in out.items() if v},
                           {k: {j: e for j, e in v.items() if e} for k, v in by_job.items() if any(v.values())},
                           {k: frozenset(v) for k, v in outputs_of.items()}, tuple(unmatched))


def _epoch_ms(text: str) -> int:
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


@dataclasses.dataclass(frozen=True, slots=True)
class TargetDiff:
    """One root SQL execution's edges into one target dataset, on both sides."""

    execution_id: int
    target: str
    agreed: tuple[Edge, ...]
    only_navd: tuple[Edge, ...]
    only_openlineage: tuple[Edge, ...]
    #: (edge, navd's subtypes, OpenLineage's): both have the edge, used differently
    subtypes: tuple[tuple[Edge, frozenset[str], frozenset[str]], ...]
    #: OpenLineage's COMPLETE events have the target as an output (with or without columns)
    openlineage_output: bool = True
    #: edges OpenLineage's own jobs for the execution disagree on: (edge, ((job, subtypes or
    #: None when that job, with column lineage for the target, lacks the edge), ...))
    openlineage_split: tuple[tuple[Edge, tuple[tuple[str, frozenset[str] | None], ...]], ...] = ()


def compare(execution_id: int, navd: Edges, openlineage: Edges,
            openlineage_outputs: frozenset[str] | None = None,
            openlineage_jobs: Mapping[str, Edges] | None = None) -> list[TargetDiff]:
    """Both sides' edges of one execution, per target dataset (sorted); `openlineage_outputs`
    (default: the targets of its edges) tells an output OpenLineage did not report from one it
    reported without columns; `openlineage_jobs` (`openlineage` per job) where its jobs differ."""
    targets = sorted({e.target_dataset for e in (*navd, *openlineage)})
    reported = openlineage_outputs if openlineage_outputs is not None else {e.target_dataset for e in openlineage}
    diffs = []
    for target in targets:
        mine = {e: s for e, s in navd.items() if e.target_dataset == target}
        theirs = {e: s for e, s in openlineage.items() if e.target_dataset == target}
        both = sorted(mine.keys() & theirs.keys())
        diffs.append(TargetDiff(
            execution_id, target, tuple(both),
            tuple(sorted(mine.keys() - theirs.keys())), tuple(sorted(theirs.keys() - mine.keys())),
            tuple((e, mine[e], theirs[e]) for e in both if mine[e] != theirs[e]), target in reported,
            _split(theirs, target, openlineage_jobs or {})))
    return diffs


def _split(edges: Edges, target: str, jobs: Mapping[str, Edges]
           ) -> tuple[tuple[Edge, tuple[tuple[str, frozenset[str] | None], ...]], ...]:
    reporting = sorted(j for j, e in jobs.items() if any(x.target_dataset == target for x in e))
    out = []
    for edge in sorted(edges):
        said = tuple((job, jobs[job].get(edge)) for job in reporting)
        if len({subtypes for _, subtypes in said}) > 1:
            out.append((edge, said))
    return tuple(out)


def compare_run(run: ApplicationRun, ol_events: Iterable[Mapping[str, Any]], event_log_lines: Iterable[str], *,
                warehouse: str = WAREHOUSE) -> tuple[list[TargetDiff], list[str]]:
    """Every root SQL execution with column edges on either side, compared; and the
    OpenLineage events no execution matched."""
    navd = navd_edges(run)
    side = openlineage_edges(ol_events, execution_times(event_log_lines), application=run.app_name,
                             warehouse=warehouse)
    diffs = []
    for execution_id in sorted(navd.keys() | side.edges.keys()):
        diffs.extend(compare(execution_id, navd.get(execution_id, {}), side.edges.get(execution_id, {}),
                             side.outputs.get(execution_id, frozenset()), side.by_job.get(execution_id, {})))
    return diffs, list(side.unmatched)


def _subtypes(subtypes: frozenset[str]) -> str:
    return ",".join(sorted(subtypes)) or "-"


def _openlineage_output(diff: TargetDiff) -> str:
    if not diff.openlineage_output:
        return " (OpenLineage: not an output of this run)"
    if not diff.agreed and not diff.only_openlineage:
        return " (OpenLineage: an output without column lineage)"
    return ""


def _listed(items: list[str], most: int | None) -> list[str]:
    if most is None or len(items) <= most:
        return items
    return [*items[:most], f"  - ... {len(items) - most} more like these (all in the JSON report)"]


def render_case(case: str, run: ApplicationRun, diffs: list[TargetDiff], unmatched: list[str],
                most: int | None = None) -> str:
    """One case's part of the report (markdown); at most `most` items of each list per target."""
    statements = {e.execution_id: (e.query_text or e.description or "").strip() for e in run.executions}
    notes = {e.execution_id: e.column_notes for e in run.executions}
    agreed = sum(len(d.agreed) for d in diffs)
    only_navd = sum(len(d.only_navd) for d in diffs)
    only_ol = sum(len(d.only_openlineage) for d in diffs)
    subtype = sum(len(d.subtypes) for d in diffs)
    lines = [f"## {case}", "",
             f"{agreed} agreed, {only_navd} only navd, {only_ol} only OpenLineage, {subtype} with other subtypes", ""]
    current = None
    for diff in diffs:
        if diff.execution_id != current:
            if current is not None:
                lines.append("")
            current = diff.execution_id
            statement = " ".join(statements.get(current, "").split())
            lines.append(f"### sql/{current}: {statement[:300] or '(no statement text)'}")
            lines.extend(f"- navd note: {note}" for note in notes.get(current, ()))
            lines.append("")
        lines.append(f"- `{diff.target}`: {len(diff.agreed)} agreed, {len(diff.only_navd)} only navd, "
                     f"{len(diff.only_openlineage)} only OpenLineage, {len(diff.subtypes)} other subtypes"
                     + _openlineage_output(diff))
        lines += _listed([f"  - only navd: `{e.text()}`" for e in diff.only_navd], most)
        lines += _listed([f"  - only OpenLineage: `{e.text()}`" for e in diff.only_openlineage], most)
        lines += _listed([f"  - subtypes: `{e.text()}` navd {_subtypes(mine)}, OpenLineage {_subtypes(theirs)}"
                          for e, mine, theirs in diff.subtypes], most)
        lines += _listed([f"  - OpenLineage's jobs differ: `{e.text()}` "
                          + "; ".join(f"{job} {'(no edge)' if subtypes is None else _subtypes(subtypes)}"
                                      for job, subtypes in said)
                          for e, said in diff.openlineage_split], most)
    if current is not None:
        lines.append("")
    if unmatched:
        lines += [f"OpenLineage events with column lineage at no SQL execution's end: {', '.join(unmatched)}", ""]
    return "\n".join(lines)


def diff_json(diff: TargetDiff) -> dict[str, Any]:
    return {"execution": diff.execution_id, "target": diff.target, "openlineage_output": diff.openlineage_output,
            "agreed": [e.text() for e in diff.agreed],
            "only_navd": [e.text() for e in diff.only_navd],
            "only_openlineage": [e.text() for e in diff.only_openlineage],
            "subtypes": [{"edge": e.text(), "navd": sorted(m), "openlineage": sorted(t)} for e, m, t in diff.subtypes],
            "openlineage_jobs_differ": [{"edge": e.text(), "jobs": {j: None if t is None else sorted(t) for j, t in said}}
                                        for e, said in diff.openlineage_split]}


# --- the I/O: the listener jar, the Spark runs -------------------------------------------------

def listener_jar() -> Path:
    """The OpenLineage Spark listener jar, fetched from Maven Central on first use."""
    # navd's jar cache (~/.cache/navd), beside the Solr and Hadoop jars
    target = default_solr_dist_dir() / f"openlineage-spark-{OPENLINEAGE_VERSION}"
    fetch_maven_jars(HERE / "openlineage-pom.xml", target, {"openlineage.version": OPENLINEAGE_VERSION},
                     what=f"OpenLineage Spark listener {OPENLINEAGE_VERSION}", error=CompareError)
    jar = target / "lib" / f"{OPENLINEAGE_ARTIFACT}-{OPENLINEAGE_VERSION}.jar"
    if not jar.is_file():
        raise CompareError(f"{jar} missing after the Maven fetch into {target}")
    return jar


def run_case(case: str, jar: Path, into: Path) -> None:
    """One capture.py case under the listener: its event log and OpenLineage events into `into`
    (the run's temporary directory replaced by the fixtures' placeholder in both)."""
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="navd-compare-") as tmp:
        root, out = Path(tmp) / "root", Path(tmp) / "out"
        root.mkdir()
        out.mkdir()
        events = root / OPENLINEAGE_EVENTS
        conf = {"spark.jars": str(jar), "spark.extraListeners": LISTENER,
                "spark.openlineage.transport.type": "file", "spark.openlineage.transport.location": str(events),
                "spark.openlineage.namespace": "navd-compare"}
        command = [sys.executable, str(CAPTURE), "--run", case, "--root", str(root), "--out", str(out)]
        for key, value in conf.items():
            command += ["--conf", f"{key}={value}"]
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
        proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        log = into / "spark.stderr"  # Spark and the listener are verbose: the whole of it, kept
        log.write_text(proc.stderr, encoding="utf-8")
        if proc.returncode != 0:
            errors = [line for line in proc.stderr.splitlines() if re.match(r"^\w*(Error|Exception|SystemExit)\b", line)]
            raise CompareError(f"case {case}: Spark run failed (exit {proc.returncode}): "
                               f"{errors[-1] if errors else 'no error line'} (all of it in {log})")
        if not events.is_file():
            raise CompareError(f"case {case}: the OpenLineage listener wrote no events to {events}")
        shutil.copy(out / f"{case}.jsonl", into / EVENT_LOG)
        (into / OPENLINEAGE_EVENTS).write_text(events.read_text(encoding="utf-8").replace(str(root), PLACEHOLDER),
                                               encoding="utf-8")


def compare_case(case: str, directory: Path, most: int | None = None) -> tuple[str, list[TargetDiff], list[str]]:
    log_lines = (directory / EVENT_LOG).read_text(encoding="utf-8").splitlines(keepends=True)
    processor = ApplicationProcessor(cluster=CLUSTER, default_fs="")
    processor.feed_lines(log_lines)
    run = processor.finish()
    ol_events = [json.loads(line) for line in (directory / OPENLINEAGE_EVENTS).read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    diffs, unmatched = compare_run(run, ol_events, log_lines)
    return render_case(case, run, diffs, unmatched, most), diffs, unmatched


def default_cases() -> list[str]:
    sys.path.insert(0, str(CAPTURE.parent))
    from capture import CASES  # noqa: PLC0415  (capture.py is a script beside the fixtures)

    return [name for name in CASES if name not in NOT_COMPARED]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", help="comma-separated capture.py cases (default: every case that writes "
                                        "tables or paths)")
    parser.add_argument("--no-run", action="store_true",
                        help=f"compare the runs kept in {RUNS_DIR.relative_to(REPO)} again, without Spark")
    parser.add_argument("--most", type=int, default=10,
                        help="list at most this many edges of a kind per target in the text report (default 10; "
                             "the JSON report has all)")
    args = parser.parse_args(argv)
    known = default_cases()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()] if args.cases else known
    unknown = [c for c in cases if c not in known]
    if unknown:
        print(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    jar = None if args.no_run else listener_jar()
    parts: list[str] = []
    summary = ["| case | targets | agreed | only navd | only OpenLineage | other subtypes |",
               "| --- | ---: | ---: | ---: | ---: | ---: |"]
    results: dict[str, Any] = {}
    for case in cases:
        directory = RUNS_DIR / case
        try:
            if jar is not None:
                print(f"{case}: running under the OpenLineage listener ...", file=sys.stderr, flush=True)
                run_case(case, jar, directory)
            text, diffs, unmatched = compare_case(case, directory, args.most)
        except (CompareError, OSError) as exc:  # one case failing still reports the others
            text, diffs, unmatched = f"## {case}\n\nnot compared: {exc}\n", [], []
            results[case] = {"error": str(exc)}
        else:
            results[case] = {"targets": [diff_json(d) for d in diffs], "unmatched_openlineage": unmatched}
            summary.append(f"| {case} | {len(diffs)} | {sum(len(d.agreed) for d in diffs)} "
                           f"| {sum(len(d.only_navd) for d in diffs)} | {sum(len(d.only_openlineage) for d in diffs)} "
                           f"| {sum(len(d.subtypes) for d in diffs)} |")
        print(text, flush=True)
        parts.append(text)
    print("\n".join(summary))
    BENCH_DIR.mkdir(exist_ok=True)
    report = [f"# navd vs OpenLineage {OPENLINEAGE_VERSION} column lineage\n", *summary, "", *parts]
    (BENCH_DIR / "openlineage-comparison.md").write_text("\n".join(report), encoding="utf-8")
    (BENCH_DIR / "openlineage-comparison.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

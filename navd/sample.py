"""`navd quickstart`: navd's main job on a real pipeline, end to end, in steps.

After the embedded Solr is up (the CLI starts it), the steps run in order, each printing what it
did: create the cores; run the sample pipeline (navd/sample_job.py: a real local PySpark job,
through the temporary tables `temp_sample_07`, `temp_sample_08` -> `sample_merge`, dropped at the
end) with event logs on; extract its event log with the registered Spark component through the
runner (recorded, locked, followed by a link pass, as `navd extract spark --once`); print the
text lineage of `sample_merge`; start the server in the background (navd/server/background.py) and
print the URL of `sample_merge`'s lineage page. A step is a function of the Quickstart it shares;
later ones are appended to QUICKSTART_STEPS.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

from navd.catalog.service import entity, lookup_scope
from navd.config import NavdConfig, with_server
from navd.errors import NavdError
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.lineage.rules import LineageOptions, render_text
from navd.lineage.service import lineage
from navd.names import hive_qualified_name
from navd.process import free_port
from navd.registry import components
from navd.runner import PushTail, make_visible

#: where the pipeline's tables live (Spark's in-memory catalog: the `default` database)
SAMPLE_DATABASE = "default"
SAMPLE_TABLE = "sample_merge"
#: lines of the job's own log quoted when it fails
_LOG_TAIL_LINES = 20


@dataclasses.dataclass(frozen=True)
class Quickstart:
    """What the steps share. `config` is the user's with `[spark]` pointed at the pipeline's
    event logs (and its own extractor state), so the quickstart reads no other application."""

    config: NavdConfig
    index: SolrIndex
    root: Path
    #: the global options of the `navd` command (`--log-format`, `--log-level`), for the server
    #: the last step starts as a process of its own
    log_format: str | None = None
    log_level: str | None = None

    @property
    def event_log_dir(self) -> Path:
        return self.root / "spark-events"

    @property
    def table(self) -> str:
        """`default.sample_merge@<cluster>`, the table whose lineage is shown."""
        return hive_qualified_name(self.config.cluster.name, SAMPLE_DATABASE, SAMPLE_TABLE)


def quickstart(config: NavdConfig, index: SolrIndex, root: Path, *, log_format: str | None = None,
               log_level: str | None = None) -> Quickstart:
    from navd.extractors.spark.settings import SECTION, SparkConfig  # noqa: PLC0415 - a registered component

    root = root.expanduser().resolve()
    spark = SparkConfig(enabled=True, event_log_dirs=(str(root / "spark-events"),),
                        state_dir=str(root / "spark-state"))
    return Quickstart(dataclasses.replace(config, sections={**config.sections, SECTION: spark}), index, root,
                      log_format, log_level)


# -- the steps --------------------------------------------------------------------------------

def create_cores(run: Quickstart) -> Iterator[str]:
    for result in init_solr(run.index):
        yield f"{result.core}: {result.action} ({result.detail})"


def run_pipeline(run: Quickstart) -> Iterator[str]:
    """The PySpark job in its own process (a JVM per run; its log in `root`/sample_job.log)."""
    log = run.root / "sample_job.log"
    yield f"running the sample pipeline (PySpark, local; log: {log}) ..."
    try:
        run.root.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            done = subprocess.run([sys.executable, "-m", "navd.sample_job", "--root", str(run.root)],
                                  stdout=out, stderr=subprocess.STDOUT, check=False)
    except OSError as exc:  # not a directory, not writable
        raise NavdError(f"quickstart --dir {run.root}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-_LOG_TAIL_LINES:]
        errors = [line for line in tail if "Error" in line or "Exception" in line]
        raise NavdError(f"the sample pipeline failed (exit {done.returncode}): "
                        f"{(errors or tail or ['no output'])[-1].strip()} (see {log})")
    yield f"pipeline done: event log in {run.event_log_dir}"


def extract_and_link(run: Quickstart) -> Iterator[str]:
    """One pass of the registered Spark component over the pipeline's event log, and the link
    pass the runner follows it with."""
    component = components()["spark"]
    tail = PushTail(run.index, run.config, component)
    try:
        result = tail.poll()
    finally:
        tail.close()
    make_visible(run.index)
    yield component.summary(result.report)
    for follow_up in result.follow_ups:
        yield follow_up.line()


def show_lineage(run: Quickstart) -> Iterator[str]:
    """`navd lineage <sample_merge> --direction upstream`, then with `--deleted`."""
    for deleted in (False, True):
        flag = " --deleted" if deleted else ""
        yield ""
        yield f"$ navd lineage {run.table} --direction upstream{flag}"
        graph = lineage(run.index, run.table, LineageOptions(direction="upstream", deleted=deleted))
        yield render_text(graph)
    yield ""
    yield (f"try: navd lineage {SAMPLE_TABLE} --operations --deleted   navd entity {SAMPLE_TABLE}   "
           "navd search 'queryText:*temp_sample_08*'")


def lineage_page_url(server_url: str, identity: str) -> str:
    """The lineage page's address of an entity (navd's page at /: `#/lineage/<identity>`), upstream.
    The identity is escaped as JavaScript's encodeURIComponent escapes it."""
    return f"{server_url}/#/lineage/{quote(identity, safe=URI_COMPONENT_SAFE)}?direction=upstream"


#: what encodeURIComponent leaves as it is besides letters, digits and `-_.` (quote keeps those)
URI_COMPONENT_SAFE = "!~*'()"


def start_server(run: Quickstart) -> Iterator[str]:
    """The server in the background, on loopback without a login (the quickstart is one user's
    machine), on [server] port or a free one when that is taken; then the lineage page's URL.

    A server this user started in the background already (an earlier quickstart) is kept when it
    reads this Solr: one server per state dir."""
    # FastAPI and uvicorn (navd.server.run, under background) load in about half a second:
    # imported by the one step that starts the server, not by every `navd` command
    from navd.server import background  # noqa: PLC0415

    solr = run.index.base_url
    current = background.status(run.config)
    if current.running and current.solr != solr:
        raise NavdError(f"a navd server started for another Solr ({current.solr}) runs on {current.url}: "
                        "stop it with `navd server stop`, then run the quickstart again")
    server, started = current, False
    if not current.running:
        config = with_server(run.config, host="127.0.0.1", auth="none")
        if background.listening(config.server):
            config = with_server(config, port=free_port())
        server, started = background.start(config, solr, log_format=run.log_format, log_level=run.log_level)
    yield ""
    yield (f"navd server {'started' if started else 'already running'} on {server.url} "
           f"(pid {server.pid}, log {server.log_file})")
    [table] = entity(run.index, run.table, lookup_scope(run.config))
    yield f"the lineage of {run.table} in a browser:"
    yield f"  {lineage_page_url(str(server.url), str(table['identity']))}"
    yield "stop the server: navd server stop"


Step = Callable[[Quickstart], Iterator[str]]

#: The quickstart, in order; each step's lines are printed as it goes.
QUICKSTART_STEPS: tuple[Step, ...] = (create_cores, run_pipeline, extract_and_link, show_lineage, start_server)

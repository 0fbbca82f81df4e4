"""The component contract end to end: a source registered the way a site would register its own
runs under `navd extract` and `navd run`; the paths that used to bypass the runner
(`--from-fsimage`, `link --spark`) take their lock and leave run records; the daemon's link
passes use `[linker] fs_aliases`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from navd.index.client import IndexWriter, SolrIndex
from navd.locks import component_lock
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.registry import components, run_order
from navd.solr.server import EmbeddedSolr
from test_daemon import log_lines, now, runs, start, stop, succeeded, wait_until, write_config

NAVD = str(Path(sys.executable).parent / "navd")
GOLDEN_TSV = Path(__file__).resolve().parent / "fixtures" / "hdfs" / "oiv-delimited-3.5.0.tsv"

#: A whole source, as a site would write it: its settings, extractor and Component in one module.
PROBE_MODULE = '''
"""A site's own source: one FILE element per file in a local inbox directory."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

from navd.errors import ConfigError
from navd.extractors import BuildContext, Component, write_checkpointed
from navd.model import Element, ElementType, SourceType, path_qualified_name


@dataclasses.dataclass(frozen=True)
class ProbeConfig:
    enabled: bool = False
    inbox: str = ""
    interval_seconds: float = 1.0

    def validate(self) -> None:
        if self.enabled and not self.inbox:
            raise ConfigError("[probe] inbox: [probe] is enabled but has no inbox")

    @property
    def interval(self) -> timedelta:
        return timedelta(seconds=self.interval_seconds)


@dataclasses.dataclass
class ProbeReport:
    files: int = 0


class ProbeExtractor:
    def __init__(self, inbox: Path, run_id: str) -> None:
        self.inbox, self.run_id = inbox, run_id

    def run_pass(self, writer, *, full=False, stop=None):
        report = ProbeReport()

        def records():
            for path in sorted(self.inbox.iterdir()):
                report.files += 1
                yield Element(SourceType.HDFS, ElementType.FILE, path_qualified_name(path.as_uri()),
                              name=path.name, extractor_run_id=self.run_id)

        write_checkpointed(records(), writer, commit=lambda: None, stop=stop)
        return report

    def close(self) -> None:
        pass


def check(config, options) -> None:
    if not config.section("probe", ProbeConfig).inbox:
        raise ConfigError("[probe] inbox: not set")


def build(context: BuildContext) -> ProbeExtractor:
    return ProbeExtractor(Path(context.config.section("probe", ProbeConfig).inbox), context.run_id)


COMPONENT = Component(name="probe", section="probe", settings_type=ProbeConfig, mode="pull", build=build,
                      summary=lambda r: f"probe: {r.files} files", check=check, help="files in an inbox")
'''


@pytest.fixture
def probe_plugin(tmp_path: Path) -> dict[str, str]:
    """The probe source installed as a distribution with one entry point, as pip would leave it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "navd_probe.py").write_text(PROBE_MODULE, encoding="utf-8")
    info = site / "navd_probe-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: navd-probe\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[navd.components]\nprobe = navd_probe:COMPONENT\n", encoding="utf-8")
    return {"PYTHONPATH": str(site)}


def inbox(tmp_path: Path, names: tuple[str, ...]) -> Path:
    directory = tmp_path / "inbox"
    directory.mkdir()
    for name in names:
        (directory / name).write_text("x", encoding="utf-8")
    return directory


def navd(config: Path, *args: str, extra_env: dict[str, str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NAVD_CONFIG": str(config), **(extra_env or {})}
    return subprocess.run([NAVD, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def test_a_registered_component_runs_under_navd_extract_and_navd_run(
        solr_server: EmbeddedSolr, index: SolrIndex, tmp_path: Path, probe_plugin: dict[str, str],
        unique: str) -> None:
    assert "probe" not in components()  # only the subprocesses see the plugin
    files = ("a.csv", "b c.csv", "ünï.csv")
    body = f'[cluster]\nname = "{unique}"\n[probe]\ninbox = "{inbox(tmp_path, files)}"\ninterval_seconds = 1\n'
    config = write_config(tmp_path / "navd.toml", solr_server, tmp_path / "state", body)
    began = now()

    result = navd(config, "extract", "probe", extra_env=probe_plugin)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "probe: 3 files"
    assert result.stdout.splitlines()[1].startswith("link: ")  # the runner's link pass followed
    [run] = succeeded(index, "extractor.probe", began)
    assert (run["count_files"], run["count_written_elements"]) == (3, 3)
    assert index.count("elements", f'extractorRunId:"{run["identity"]}"') == 3
    assert succeeded(index, "linker", began)
    assert (tmp_path / "state" / "locks" / "extractor.probe.lock").exists()

    # `extract all` and `navd status` know it too; a config without its inbox names the key.
    assert navd(config, "extract", "all", extra_env=probe_plugin).returncode == 0
    assert len(succeeded(index, "extractor.probe", began, at_least=2)) == 2
    bad = write_config(tmp_path / "bad.toml", solr_server, tmp_path / "state", "[probe]\nenabled = true\n")
    refused = navd(bad, "extract", "probe", extra_env=probe_plugin)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("[probe] inbox: [probe] is enabled but has no inbox")

    (config.parent / "navd.toml").write_text(config.read_text() + "enabled = true\n")
    log = tmp_path / "navd.log"
    daemon_began = now()
    proc = start(config, log, extra_env=probe_plugin)
    try:
        done = wait_until(lambda: succeeded(index, "extractor.probe", daemon_began, at_least=2), 90,
                          "two scheduled probe runs", proc, log)
        status = json.loads(navd(config, "status", "--json", extra_env=probe_plugin).stdout)
    finally:
        code, _ = stop(proc)
    assert code == 0
    assert all(d["count_files"] == 3 for d in done)
    assert status["components"]["extractor.probe"]["last_run"]["state"] in ("SUCCEEDED", "RUNNING")
    summaries = [line for line in log_lines(log) if line.get("logger") == "navd.extractor.probe"]
    assert any(line["event"] == "probe: 3 files" for line in summaries)
    assert not [line for line in log_lines(log) if line.get("level") in ("error", "critical")]


def hold_then_release(lock_root: Path, component: str, proc: subprocess.Popen[str], seconds: float) -> None:
    """Hold a component's lock while `proc` starts; it must wait, not run."""
    with component_lock(lock_root, component, wait=False):
        time.sleep(seconds)
        assert proc.poll() is None, "the command ran although the component's lock was held"


def wait_for(proc: subprocess.Popen[str], timeout: float = 300) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_fsimage_load_takes_the_hdfs_lock_and_leaves_a_run_record(
        solr_server: EmbeddedSolr, index: SolrIndex, tmp_path: Path, unique: str) -> None:
    state = tmp_path / "state"
    body = f'[cluster]\nname = "{unique}"\ndefault_fs = "hdfs://{unique}:8020"\n[hdfs]\nroots = ["/exp"]\n'
    config = write_config(tmp_path / "navd.toml", solr_server, state, body)
    began = now()
    with component_lock(state, "extractor.hdfs", wait=False):
        proc = subprocess.Popen([NAVD, "extract", "hdfs", "--from-fsimage", str(GOLDEN_TSV), "--master", "local[1]"],
                                env={**os.environ, "NAVD_CONFIG": str(config)}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(8)
        assert proc.poll() is None, "the fsimage load ran although extractor.hdfs was locked"
        assert not runs(index, "extractor.hdfs", began)
    code, out, err = wait_for(proc)
    assert code == 0, err
    assert "waiting for the hdfs extraction run in progress" in err
    rows = len(GOLDEN_TSV.read_text(encoding="utf-8").removesuffix("\n").split("\n")) - 2  # no header, no "/"
    assert out.splitlines()[0] == f"hdfs fsimage: {rows} elements, {rows} relations, 0 bad lines skipped"
    [run] = succeeded(index, "extractor.hdfs", began)
    assert (run["count_elements"], run["count_relations"], run["count_bad_lines"]) == (rows, rows, 0)
    index.commit("elements")
    assert index.count("elements", f'extractorRunId:"{run["identity"]}"') == rows
    assert succeeded(index, "linker", began)  # the link pass followed


def test_spark_link_takes_the_linker_lock_and_leaves_a_run_record(
        solr_server: EmbeddedSolr, index: SolrIndex, tmp_path: Path, unique: str) -> None:
    state = tmp_path / "state"
    config = write_config(tmp_path / "navd.toml", solr_server, state, f'[cluster]\nname = "{unique}"\n')
    began = now()
    with component_lock(state, "linker", wait=False):
        proc = subprocess.Popen([NAVD, "link", "--spark", "--master", "local[1]"],
                                env={**os.environ, "NAVD_CONFIG": str(config)}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(5)
        assert proc.poll() is None, "navd link --spark ran although the linker was locked"
    code, out, err = wait_for(proc)
    assert code == 0, err
    assert "waiting for the link run in progress" in err
    [run] = succeeded(index, "linker", began)
    assert out.strip() == (f"link: {run['count_examined']} unlinked relations examined, {run['count_linked']} "
                           f"linked, {run['count_still_unlinked']} still unlinked")


def test_the_daemons_link_passes_use_the_configured_fs_aliases(
        solr_server: EmbeddedSolr, index: SolrIndex, tmp_path: Path, unique: str,
        probe_plugin: dict[str, str]) -> None:
    u = unique
    directory = Element(SourceType.HDFS, ElementType.DIRECTORY, f"hdfs://{u}ns/wh/orders", name="orders")
    execution = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, f"spark://{u}app/1", name="1")
    # The job wrote the directory under its NameNode's address, not the nameservice.
    seen = EntityRef(SourceType.HDFS, f"hdfs://{u}nn:8020/wh/orders", ElementType.DIRECTORY)
    flow = Relation(RelationType.DATA_FLOW, execution.ref, seen, linked2=False)
    writer = IndexWriter(index)
    writer.write_all([directory, execution, flow])
    assert writer.close()

    def unlinked() -> list[Any]:
        index.commit("relations", soft=True)
        docs = index.search("relations", "*:*", rows=10, filters=[f"endpoint1Id:{execution.identity}"])
        return [d["unlinked"] for d in docs["response"]["docs"]]

    base = (f'[cluster]\nname = "{u}"\ndefault_fs = "hdfs://{u}ns"\n[hdfs]\n'
            f'[probe]\nenabled = true\ninbox = "{inbox(tmp_path, ("f",))}"\ninterval_seconds = 1\n')
    plain = write_config(tmp_path / "plain.toml", solr_server, tmp_path / "state", base)
    assert navd(plain, "link", "--full", extra_env=probe_plugin).returncode == 0
    assert unlinked() == [True]  # without the alias nothing names that directory

    config = write_config(tmp_path / "navd.toml", solr_server, tmp_path / "state",
                          base + f'[linker]\nfs_aliases = ["{u}nn:8020=hdfs://{u}ns"]\n')
    log = tmp_path / "navd.log"
    began = now()
    proc = start(config, log, extra_env=probe_plugin)
    try:
        wait_until(lambda: succeeded(index, "linker", began), 90, "the daemon's link pass", proc, log)
        linked = wait_until(lambda: unlinked() == [False], 30, "the relation linked through the alias", proc, log)
    finally:
        code, _ = stop(proc)
    assert linked and code == 0
    index.commit("relations", soft=True)
    docs = index.search("relations", "*:*", rows=10, filters=[f"endpoint1Id:{execution.identity}"])["response"]["docs"]
    assert [d["endpoint2Id"] for d in docs] == [directory.identity]


def test_a_broken_registration_is_one_line_naming_it(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    site = tmp_path / "site"
    info = site / "navd_broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: navd-broken\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[navd.components]\nbroken = navd_broken_missing:COMPONENT\n",
                                           encoding="utf-8")
    config = write_config(tmp_path / "navd.toml", solr_server, tmp_path / "state", "")
    result = navd(config, "status", extra_env={"PYTHONPATH": str(site)})
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "component 'broken' (navd_broken_missing:COMPONENT) cannot be loaded" in line


def test_extract_all_runs_the_derived_components_after_every_source() -> None:
    """Sensitivity propagates levels along the lineage the sources wrote: run in name order it
    would come before spark and yarn, and one `navd extract all` would miss their writes."""
    order = run_order()
    derived = [c.name for c in order if c.derived]
    assert "sensitivity" in derived
    assert [c.derived for c in order] == sorted(c.derived for c in order)  # every source first
    sources = [c.name for c in order if not c.derived]
    assert {"hdfs", "hms", "spark", "yarn"} <= set(sources) and sources == sorted(sources)

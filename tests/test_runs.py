"""Run records and `navd status` through the real CLI and Solr: successes with counts, and a
failing source (a ResourceManager on a closed port) recorded FAILED with its error."""

from __future__ import annotations

import json
import os
from pathlib import Path

from navd.index.client import SolrIndex
from navd.process import free_port
from navd.solr.server import EmbeddedSolr
from conftest import solr_section


def test_runs_are_recorded_and_shown_by_status(navd, solr_server: EmbeddedSolr, index: SolrIndex,  # type: ignore[no-untyped-def]
                                               tmp_path: Path) -> None:
    dead_rm = f"http://127.0.0.1:{free_port()}"
    config = tmp_path / "navd.toml"
    config.write_text(f'{solr_section(solr_server)}[logging]\nformat = "json"\n[yarn]\nurls = ["{dead_rm}"]\n')
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(tmp_path / "state")}
    assert navd("link", env=env).returncode == 0
    assert navd("purge", "--older-than-days", "3650", env=env).returncode == 0
    failed = navd("extract", "yarn", env=env)
    assert failed.returncode == 1 and "no active ResourceManager" in failed.stderr

    shown = navd("status", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    current = json.loads(shown.stdout)
    linker, purge, yarn = (current["components"][c] for c in ("linker", "purge", "extractor.yarn"))
    assert linker["last_run"]["state"] == "SUCCEEDED" and "count_examined" in linker["last_run"]
    assert linker["last_success"] == linker["last_run"]["ended"]
    assert purge["last_run"]["state"] == "SUCCEEDED" and "count_deleted_entities" in purge["last_run"]
    assert yarn["last_run"]["state"] == "FAILED" and dead_rm in yarn["last_run"]["error"]
    assert set(current["totals"]) == {"elements", "relations", "unlinked_relations", "deleted_elements"}
    text = navd("status", env=env)
    assert text.returncode == 0 and "extractor.yarn: last run FAILED" in text.stdout

"""API keys as emitters use them: keys made with `navd server add-api-key`, sent by the real
openlineage-python HTTP transport configured with `auth.type = api_key` to a real `navd serve`
with `[server] auth = "basic"`; reads with a key; a viewer key refused on writes; an unknown
and a revoked key answered alike (401)."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from urllib.parse import quote

import requests
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport

from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, free_port
from openlineage_events import JOB_NAMESPACE, as_json, job_run
from conftest import NAVD, serving, write_server_config


def navd_command(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVD, *args], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_api_keys_made_listed_used_by_openlineage_python_and_revoked(tmp_path: Path, solr_server: EmbeddedSolr,
                                                                     index: SolrIndex) -> None:
    keys_file = tmp_path / "keys"
    port = free_port()
    config = write_server_config(tmp_path, solr_server,
                          f'port = {port}\nauth = "basic"\nusers_file = "{tmp_path / "users"}"\n'
                          f'api_keys_file = "{keys_file}"',
                          f'[openlineage]\nenabled = true\nspool_dir = "{tmp_path / "spool"}"\n')
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    made = navd_command(env, "server", "add-api-key", "airflow")
    assert made.returncode == 0, made.stderr
    emitter_key = made.stdout.strip()
    assert emitter_key.startswith("navd_") and len(made.stdout.splitlines()) == 1
    viewer = navd_command(env, "server", "add-api-key", "dashboards", "--role", "viewer")
    assert viewer.returncode == 0, viewer.stderr
    viewer_key = viewer.stdout.strip()
    assert oct(keys_file.stat().st_mode & 0o777) == "0o600"
    stored = keys_file.read_text()
    assert emitter_key not in stored and viewer_key not in stored and "airflow:sha256$" in stored
    listed = navd_command(env, "server", "list-api-keys")
    assert listed.returncode == 0 and listed.stdout.splitlines() == ["airflow\teditor", "dashboards\tviewer"]
    for bad, named in ((["add-api-key", "x", "--role", "owner"], "--role"), (["add-api-key", "a:b"], "'a:b'"),
                       (["revoke-api-key", "nobody"], "'nobody'")):
        refused = navd_command(env, "server", *bad)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert named in refused.stderr.strip().splitlines()[-1], refused.stderr

    url = f"http://127.0.0.1:{port}"
    with serving(config, url) as served:
        # as an emitter's openlineage.yml configures it
        transport = HttpTransport(HttpConfig.from_dict(
            {"type": "http", "url": url, "auth": {"type": "api_key", "apiKey": emitter_key}}))
        client = OpenLineageClient(transport=transport)
        run_id = str(uuid.uuid4())
        database = f"db{uuid.uuid4().hex[:8]}"
        for state in (RunState.START, RunState.COMPLETE):
            answer = transport.emit(job_run(run_id, "load_revenue", state, database=database))
            assert answer.status_code == 201, answer.text
        del client
        for core in ("elements", "relations"):  # what the intake acknowledged, searchable now
            index.commit(core, soft=True)

        execution = f"openlineage://{JOB_NAMESPACE}/load_revenue/{run_id}"
        path = f"{url}/api/entities/{quote(execution, safe='')}"
        for key in (emitter_key, viewer_key):  # reads with either role
            read = requests.get(path, headers={"Authorization": f"Bearer {key}"}, timeout=30)
            assert read.status_code == 200, read.text
            assert read.json()["qualifiedName"] == execution
        assert requests.get(path, timeout=30).status_code == 401

        body = as_json(job_run(str(uuid.uuid4()), "load_revenue", RunState.START, database=database))
        lineage_url = f"{url}/api/v1/lineage"
        as_viewer = requests.post(lineage_url, json=body, timeout=30,
                                  headers={"Authorization": f"Bearer {viewer_key}"})
        assert as_viewer.status_code == 403 and "viewer" in as_viewer.json()["error"]

        unknown = requests.get(path, headers={"Authorization": "Bearer navd_" + "x" * 43}, timeout=30)
        assert unknown.status_code == 401
        revoked = navd_command(env, "server", "revoke-api-key", "airflow")
        assert revoked.returncode == 0, revoked.stderr
        after = requests.get(path, headers={"Authorization": f"Bearer {emitter_key}"}, timeout=30)
        # a revoked key and one navd never made get one answer: nothing tells which names exist
        assert (after.status_code, after.json()) == (unknown.status_code, unknown.json())
        assert navd_command(env, "server", "list-api-keys").stdout.splitlines() == ["dashboards\tviewer"]
    text = served.log.read_text()
    assert "Traceback" not in text and emitter_key not in text and viewer_key not in text

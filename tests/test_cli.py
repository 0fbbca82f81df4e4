"""The `navd` command, run as a user runs it: exit codes, one-line errors, output."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from conftest import distribution
from navd import __version__
from navd.config import load_config
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, effective_solr_config, free_port


def assert_one_line_error(result, *fragments: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("navd:")]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_version(navd) -> None:  # type: ignore[no-untyped-def]
    result = navd("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"navd {__version__}"


#: what `navd quickstart` prints of sample_merge's lineage across the temporary tables
QUICKSTART_LINEAGE = """$ navd lineage default.sample_merge@primary --direction upstream
default.sample_merge@primary (HIVE TABLE)
  default.sample_07@primary (HIVE TABLE) -> default.sample_merge@primary (HIVE TABLE)  [DATA_FLOW]
  default.sample_08@primary (HIVE TABLE) -> default.sample_merge@primary (HIVE TABLE)  [DATA_FLOW]

$ navd lineage default.sample_merge@primary --direction upstream --deleted
default.sample_merge@primary (HIVE TABLE)
  default.sample_07@primary (HIVE TABLE) -> default.temp_sample_07@primary (HIVE TABLE) [deleted]  [DATA_FLOW]
  default.sample_08@primary (HIVE TABLE) -> default.temp_sample_08@primary (HIVE TABLE) [deleted]  [DATA_FLOW]
  default.temp_sample_07@primary (HIVE TABLE) [deleted] -> default.sample_merge@primary (HIVE TABLE)  [DATA_FLOW]
  default.temp_sample_08@primary (HIVE TABLE) [deleted] -> default.sample_merge@primary (HIVE TABLE)  [DATA_FLOW]
"""


def test_embedded_server_lifecycle_through_the_cli(navd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`navd solr start [--home X] --port N && navd solr status`, then the quickstart (a real
    PySpark pipeline, extracted and linked) in its own home although another Solr was started
    since, search, stop: each command on the Solr it means."""
    # The embedded default (no config file), for a user with no embedded Solr recorded yet.
    env = {k: v for k, v in os.environ.items() if k != "NAVD_CONFIG"}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    default_home = tmp_path / "data" / "navd" / "solr"  # the quickstart's own, under XDG_DATA_HOME
    port = free_port()
    other_home, other_port = tmp_path / "other", free_port()
    try:
        started = navd("solr", "start", "--port", str(port), env=env)
        assert started.returncode == 0, started.stderr
        assert f"127.0.0.1:{port}/solr" in started.stdout and f"home {default_home})" in started.stdout
        status = navd("solr", "status", env=env)
        assert status.returncode == 0, status.stderr
        assert "running: Solr 9." in status.stdout and f"127.0.0.1:{port}/solr" in status.stdout
        again = navd("solr", "start", "--port", str(port), env=env)
        assert again.returncode == 0 and again.stdout == started.stdout
        # Another instance, started last: remembered for the commands without flags ...
        other = navd("solr", "start", "--home", str(other_home), "--port", str(other_port), "--heap", "256m", env=env)
        assert other.returncode == 0, other.stderr
        assert f"home {other_home})" in navd("solr", "status", env=env).stdout
        # ... but the quickstart uses its own home (where its Solr runs: on `port`)
        quickstart = navd("quickstart", env=env, timeout=600)
        assert quickstart.returncode == 0, quickstart.stderr[-3000:]
        assert quickstart.stdout.startswith(started.stdout)
        assert "nav_elements: created" in quickstart.stdout
        pipeline = tmp_path / "data" / "navd" / "quickstart"  # the default, under XDG_DATA_HOME
        assert f"pipeline done: event log in {pipeline / 'spark-events'}" in quickstart.stdout
        assert "spark: " in quickstart.stdout and ", 0 warnings" in quickstart.stdout
        assert QUICKSTART_LINEAGE in quickstart.stdout
        # and is the one later commands reach: it was started last
        search = navd("search", "queryText:*temp_sample_08*", "--json", env=env)
        texts = {d["queryText"] for d in json.loads(search.stdout)["docs"]}
        assert {"DROP TABLE temp_sample_08",
                "INSERT INTO sample_merge SELECT * FROM temp_sample_07 UNION ALL SELECT * FROM temp_sample_08"} <= texts
        status_json = json.loads(navd("solr", "status", "--json", env=env).stdout)
        assert status_json["running"] and status_json["port"] == port
        # the other instance holds none of it: no cores were created there
        assert not list(other_home.glob("nav_*")), sorted(p.name for p in other_home.iterdir())
    finally:
        server = navd("server", "stop", env=env)
        stopped = navd("solr", "stop", env=env)
        other_stopped = navd("solr", "stop", "--home", str(other_home), env=env)
    assert server.returncode == 0 and server.stdout.startswith("stopped the navd server on http://127.0.0.1:")
    assert stopped.returncode == 0 and stopped.stdout == f"stopped Solr (home {default_home})\n"
    assert other_stopped.returncode == 0 and other_stopped.stdout == f"stopped Solr (home {other_home})\n"
    after = navd("solr", "status", env=env)
    assert after.returncode == 3 and "not running" in after.stdout


def test_each_config_and_state_dir_keeps_its_own_embedded_solr(navd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two configurations, each with its state directory and an embedded Solr started with
    `--home/--port`: every command without flags (status, init, search, stop) acts on its own
    configuration's Solr; a third config file sharing a state directory sees neither."""
    env = {k: v for k, v in os.environ.items() if k != "NAVD_CONFIG"}
    env["XDG_STATE_HOME"] = str(tmp_path / "user-state")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    configs, homes, ports = {}, {}, {}
    for name in ("a", "b"):
        configs[name] = tmp_path / f"{name}.toml"
        configs[name].write_text(f'[daemon]\nstate_dir = "{tmp_path / ("state-" + name)}"\n')
        homes[name], ports[name] = tmp_path / f"solr-{name}", free_port()
    # the same state directory as a, another file: another configuration
    configs["a2"] = tmp_path / "a2.toml"
    configs["a2"].write_text(configs["a"].read_text())

    def run(name: str, *args: str):  # type: ignore[no-untyped-def]
        return navd("--config", str(configs[name]), *args, env=env)

    try:
        for name in ("a", "b"):
            started = run(name, "solr", "start", "--home", str(homes[name]), "--port", str(ports[name]),
                          "--heap", "256m")
            assert started.returncode == 0, started.stderr
        for name in ("a", "b"):
            status = json.loads(run(name, "solr", "status", "--json").stdout)
            assert (status["running"], status["home"], status["port"]) == (True, str(homes[name]), ports[name])
            assert run(name, "solr", "init").returncode == 0
        # a write through a's configuration reaches a's Solr alone
        marked = f"only-in-a-{os.getpid()}"
        with SolrIndex(effective_solr_config(load_config(str(configs["a"]), environ=env))) as index:
            index.add("elements", [{"identity": marked, "qualifiedName": f"/{marked}", "sourceType": "HDFS",
                                    "type": "FILE"}])
            index.commit("elements")
        found = {name: json.loads(run(name, "search", f"identity:{marked}", "--json").stdout)["numFound"]
                 for name in ("a", "b")}
        assert found == {"a": 1, "b": 0}
        third = run("a2", "solr", "status", "--json")
        assert third.returncode == 3 and json.loads(third.stdout)["home"] == str(tmp_path / "data" / "navd" / "solr")
        # stop without --home: a's own Solr only
        stopped = run("a", "solr", "stop")
        assert stopped.returncode == 0 and stopped.stdout == f"stopped Solr (home {homes['a']})\n"
        assert run("a", "solr", "status").returncode == 3
        assert run("b", "solr", "status").returncode == 0
    finally:
        for name in ("a", "b"):
            EmbeddedSolr(homes[name], ports[name], "256m", distribution()).stop()


def test_init_twice_then_quickstart_against_a_configured_solr(navd, navd_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = navd("solr", "init")
    second = navd("solr", "init")
    assert first.returncode == 0 and second.returncode == 0
    assert second.stdout.count(": unchanged (") == 3
    config = Path(navd_env["NAVD_CONFIG"])
    with socket.socket() as taken:  # [server] port is taken: the quickstart's server takes a free one
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        config.write_text(config.read_text() + f'[daemon]\nstate_dir = "{tmp_path / "state"}"\n'
                                               f"[server]\nport = {taken.getsockname()[1]}\n")
        server = "?"
        try:
            result = navd("quickstart", "--dir", str(tmp_path / "qs"), timeout=600)
            assert result.returncode == 0, result.stderr[-3000:]
            assert (tmp_path / "qs" / "spark-events").is_dir() and QUICKSTART_LINEAGE in result.stdout
            # the text lineage, then the page's URL and how to stop the server, last
            tail = result.stdout.split(QUICKSTART_LINEAGE, 1)[1].splitlines()[-4:]
            match = re.fullmatch(r"navd server started on (http://127\.0\.0\.1:(\d+)) \(pid \d+, log .+\)", tail[0])
            assert match and int(match[2]) != taken.getsockname()[1], tail
            server = match[1]
            identity = json.loads(navd("entity", "default.sample_merge@primary", "--json").stdout)["identity"]
            assert tail[1:] == ["the lineage of default.sample_merge@primary in a browser:",
                                f"  {server}/#/lineage/{identity}?direction=upstream",
                                "stop the server: navd server stop"]
            graph = requests.get(f"{server}/api/lineage", params={"entity": identity, "direction": "upstream"},
                                 timeout=60)
            assert graph.status_code == 200, graph.text
            assert {n["qualifiedName"] for n in graph.json()["nodes"]} == {
                "default.sample_merge@primary", "default.sample_07@primary", "default.sample_08@primary"}
            # the background server of `navd serve --background` and `navd server stop`
            again = navd("serve", "--background", "--port", match[2])
            assert again.returncode == 0 and again.stdout.startswith(f"already running: navd server on {server} ")
        finally:
            stopped = navd("server", "stop")
    assert stopped.returncode == 0 and stopped.stdout.startswith(f"stopped the navd server on {server}")
    entity = navd("entity", "DEFAULT.Sample_Merge@primary", "--json")  # Hive names are case-insensitive
    doc = json.loads(entity.stdout)
    assert doc["qualifiedName"] == "default.sample_merge@primary" and doc["type"] == "TABLE"
    by_identity = json.loads(navd("entity", doc["identity"], "--json").stdout)
    assert by_identity == doc
    assert json.loads(navd("entity", "sample_merge", "--json").stdout) == doc  # as a Hive user names it
    # The insert's execution, by its application id and execution number, with its query text and
    # the plan that ran, its lines kept in the value column.
    graph = json.loads(navd("lineage", "sample_merge", "--direction", "upstream", "--operations",
                            "--format", "json").stdout)
    [insert] = [n for n in graph["nodes"] if n["type"] == "OPERATION_EXECUTION"
                and any(e["target"] == doc["identity"] and e["source"] == n["id"] for e in graph["edges"])]
    app, attempt, _, number = insert["qualifiedName"].removeprefix("spark://").split("/")
    run = navd("entity", f"{app}/sql/{number}")
    assert run.returncode == 0, run.stderr
    assert "INSERT INTO sample_merge SELECT * FROM temp_sample_07 UNION ALL SELECT * FROM temp_sample_08" in run.stdout
    plan_line = next(line for line in run.stdout.splitlines() if line.startswith("executionPlan"))
    width = plan_line.index("== Physical Plan ==")
    assert "\n" + " " * width + "+- WriteFiles (7)\n" in run.stdout
    app_run = json.loads(navd("entity", app, "--json").stdout)
    assert app_run["qualifiedName"] == f"spark://{app}/{attempt}" and app_run["properties"]["outcome"] == "SUCCEEDED"
    # The tables are known from the job only (no metastore extractor here): their reads stay
    # unlinked relations, as Navigator keeps them until an extractor indexes the far end.
    unlinked = navd("search", f'unlinked:true AND endpoint2QualifiedName:"spark://{app}/{attempt}/sql/{number}"',
                    "--core", "relations")
    assert "default.temp_sample_08@primary -> " in unlinked.stdout and "[unlinked]" in unlinked.stdout
    text = navd("search", "originalName:*MERGE*", "--rows", "50")
    assert text.returncode == 0 and "default.sample_merge@primary" in text.stdout


def test_quickstart_into_a_file_is_one_line(navd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    taken = tmp_path / "a-file"
    taken.write_text("not a directory")
    result = navd("quickstart", "--dir", str(taken / "qs"))
    assert result.returncode == 1
    assert_one_line_error(result, f"quickstart --dir {taken / 'qs'}: Not a directory")


def test_bad_query_is_one_line(navd, index: SolrIndex) -> None:  # type: ignore[no-untyped-def]
    # (index: the cores exist, so Solr's own refusal is a 400, not a missing core's 404)
    assert_one_line_error(navd("search", "type:("), "query: the '(' at character 6 is not closed")
    assert_one_line_error(navd("search", "nosuchfield:x"), "HTTP 400", "undefined field nosuchfield")


def test_search_with_local_params_is_one_line_exit_2(navd, index: SolrIndex) -> None:  # type: ignore[no-untyped-def]
    result = navd("search", "{!join fromIndex=nav_relations from=id to=id}*:*")
    assert result.returncode == 2 and result.stdout == ""
    assert_one_line_error(result, "query: local parameters '{!join fromIndex=nav_relations", "are refused")
    assert navd("search", "queryText:*temp_table*").returncode == 0
    assert navd("search", 'originalName:"a b"').returncode == 0


def test_an_argument_that_is_not_utf8_is_the_usage_line_exit_2() -> None:
    # tests/fuzz gave argparse a lone surrogate: its error line repeats the argument, which a
    # strict UTF-8 stream cannot write. A real process's stderr writes it escaped (argv's
    # undecodable bytes arrive as such surrogates): exit 2 and the usage line, no traceback.
    executable = str(Path(sys.executable).parent / "navd")
    result = subprocess.run([executable, "search", "x", b"\xff", b"\xed\xa0\x80"], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "navd: error: unrecognized arguments: \\udcff \\udced\\udca0\\udc80" in result.stderr


def test_unknown_entity_is_one_line(navd) -> None:  # type: ignore[no-untyped-def]
    assert_one_line_error(navd("entity", "nope.nothing@primary"), "no element", "nope.nothing@primary")


# A name no element can have: one line, exit 2 (bad input), the name quoted at most 200 chars.
BAD_NAMES = [
    ("hdfs://[::1/x", "has a bad authority: Invalid IPv6 URL"),
    ("hdfs://h:99999/x", "has a bad authority: Port out of range"),
    ("file://h:x/y", "has a bad authority: Port could not be cast to integer"),
    (os.fsdecode(b"hdfs://nn/\xff\xfe/x"), "is not valid UTF-8"),
    ("hdfs://h:99999/" + "y" * 100_000, "has a bad authority"),
]


@pytest.mark.parametrize(("name", "problem"), BAD_NAMES, ids=["ipv6", "port-range", "port-text", "utf8", "long"])
@pytest.mark.parametrize("command", ["entity", "lineage"])
def test_malformed_names_are_one_line_and_cut(navd, index, command: str, name: str, problem: str) -> None:  # type: ignore[no-untyped-def]
    result = navd(command, name)
    assert result.returncode == 2
    assert_one_line_error(result, problem)
    assert len(result.stderr) < 400 and repr(name)[1:21] in result.stderr  # quoted as repr quotes it


def test_a_long_unknown_name_is_cut_in_the_error(navd, index) -> None:  # type: ignore[no-untyped-def]
    result = navd("entity", "z" * 100_000)
    assert result.returncode == 1
    assert_one_line_error(result, "no element", "z" * 200 + "'...")
    assert len(result.stderr) < 400


def test_an_operation_name_with_brackets_and_colons_is_looked_up_not_refused(navd, index) -> None:  # type: ignore[no-untyped-def]
    # spark://<app name>: an application name may hold anything; it is not a path to parse.
    assert_one_line_error(navd("entity", "spark://My App: [v2"), "no element", "'spark://My App: [v2'")


def test_unreachable_solr_is_one_line(navd, navd_env) -> None:  # type: ignore[no-untyped-def]
    env = {**navd_env, "NAVD_SOLR_URL": f"http://127.0.0.1:{free_port()}/solr"}
    result = navd("search", "*:*", env=env)
    assert result.returncode == 1
    assert_one_line_error(result, "cannot reach Solr", "connection refused")


def test_bad_config_is_one_line(navd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "bad.toml"
    config.write_text('[solr]\ntimeout_seconds = -1\n')
    result = navd("--config", str(config), "search", "*:*")
    assert result.returncode == 2
    assert_one_line_error(result, "[solr] timeout_seconds: must be a number > 0 and <= 3600, got -1", str(config))


def test_embedded_commands_refuse_when_a_url_is_configured(navd) -> None:  # type: ignore[no-untyped-def]
    assert_one_line_error(navd("solr", "start"), "[solr] url is set")


def test_logs_are_json_lines_named_by_component(navd) -> None:  # type: ignore[no-untyped-def]
    result = navd("solr", "init")
    records = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert all(r["logger"].startswith("navd.") for r in records)


def test_status_of_a_stopped_home_exits_3(navd, tmp_path: Path, solr_server: EmbeddedSolr) -> None:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k != "NAVD_CONFIG"}
    result = navd("solr", "status", "--home", str(tmp_path), "--port", str(free_port()), env=env)
    assert result.returncode == 3 and "not running" in result.stdout


# -- bad numbers on the command line, config errors, insecure credentials -----------------------

@pytest.mark.parametrize(("args", "message"), [
    (("--older-than-days", "nan"), "navd: config error: --older-than-days: must be a number >= 0 and <= 36500, got nan"),
    (("--older-than-days", "1e12"),
     "navd: config error: --older-than-days: must be a number >= 0 and <= 36500, got 1000000000000"),
    (("--older-than-days", "-1"), "navd: config error: --older-than-days: must be a number >= 0 and <= 36500, got -1"),
    (("--runtime-cap-minutes", "inf"),
     "navd: config error: --runtime-cap-minutes: must be a number >= 0 and <= 527040, got inf"),
])
def test_purge_refuses_a_bad_number_in_one_line(navd, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    result = navd("purge", "--dry-run", *args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == message


def test_non_utf8_config_is_one_line_naming_the_key(navd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "navd.toml"
    config.write_bytes(b'[spark]\npoll_seconds = 5\nevent_log_dirs = ["/var/log/sp\xe4rk"]\n')
    result = navd("--config", str(config), "status")
    assert result.returncode == 2
    assert result.stderr.strip() == (f"navd: config error: {config}: [spark] event_log_dirs: not UTF-8 text "
                                     "(byte 0xe4 at line 3, column 31); save the file as UTF-8")


def test_inline_password_is_warned_about_once_and_refused_by_the_setting(  # type: ignore[no-untyped-def]
        navd, navd_env: dict[str, str], solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    config = Path(navd_env["NAVD_CONFIG"])
    credentials = solr_server.credentials()
    assert credentials is not None
    user, secret = credentials  # the session Solr's admin, inline: it must work and never be shown
    config.write_text(f'[solr]\nurl = "{solr_server.url}"\nauth = "basic"\nusername = "{user}"\n'
                      f'password = "{secret}"\n[logging]\nformat = "json"\n')
    config.chmod(0o600)
    result = navd("solr", "init")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in map(json.loads, filter(lambda t: t.startswith("{"), result.stderr.splitlines()))
                if line["level"] != "info"]
    assert [(w["logger"], w["level"], w["event"]) for w in warnings] == [
        ("navd.config", "warning", f"{config}: [solr] password: a password inline in the config file; put it in "
                                   "a file only navd can read and set [solr] password_file")]
    assert secret not in result.stderr + result.stdout

    config.write_text(config.read_text() + '[security]\ninsecure_credentials = "refuse"\n')
    refused = navd("solr", "init")
    assert refused.returncode == 2
    assert_one_line_error(refused, "[solr] password: a password inline",
                          '(refused: [security] insecure_credentials = "refuse")')

    config.chmod(0o644)
    readable = navd("solr", "init")
    assert readable.returncode == 2
    assert_one_line_error(readable, f"{config}: holds [solr] password but users other than its owner may read it "
                                    "(mode 0644)")
    assert secret not in refused.stderr + readable.stderr

"""The kill -9 campaign's driver: a component that writes runs as its own `navd` process against
the session's real Solr, is SIGKILLed at seeded random moments, is restarted to completion, and
its final index is compared document by document with a clean run's.

One round: empty the cores and lay the inputs (`Scenario.reset`), start the command, SIGKILL it
after a delay drawn from [5%, 95%] of the clean run's measured duration (start-up included, so
kills land while reading, writing to Solr and committing positions alike), do that `chain` times
in a row (each run going on from what the one before committed), then run it to completion and
compare. Only kills that found the process still running count as kill points.

tests/test_chaos.py runs a small fixed-seed slice in CI; `make chaos` the full campaign
(CHAOS_KILLS kill points per component, CHAOS_SEED)."""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from navd.index.client import SolrIndex

NAVD = str(Path(sys.executable).parent / "navd")
# Fields that legitimately differ between a clean run and a killed-then-restarted one: when Solr
# took the write (Solr's own `_version_`, navd's `lastIndexed`) and which run wrote it (each run
# names itself). Everything else must be equal.
VOLATILE = ("_version_", "lastIndexed", "extractorRunId")
CORES = ("elements", "relations")  # the data; the `runs` core differs by design (one record a run)

Snapshot = dict[str, dict[str, dict[str, object]]]


class Driver(Protocol):
    """How a component that is not one command run to its end is run: a server fed by a client
    (the OpenLineage intake). `run_to_end` returns the seconds the work took; `kill_at` SIGKILLs
    the component `delay` seconds into the work and says whether it was still working."""

    def run_to_end(self, env: Mapping[str, str]) -> float: ...

    def kill_at(self, env: Mapping[str, str], delay: float) -> bool: ...


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One component under the campaign: `reset` empties the cores and lays the inputs afresh
    (a new state directory each time: the returned environment), `command` the navd arguments;
    `driver` replaces running `command` to its end for a component that does not end by itself."""

    name: str
    command: tuple[str, ...]
    reset: Callable[[str], Mapping[str, str]]
    timeout: float = 600
    driver: Driver | None = None


@dataclasses.dataclass(frozen=True)
class Outcome:
    name: str
    kill_points: int
    missed: int  # kills drawn after the process had already finished: not counted
    lost: int
    duplicated: int
    changed: int
    clean_seconds: float
    documents: int

    def line(self) -> str:
        return (f"chaos {self.name}: {self.kill_points} kill points, {self.lost} lost, "
                f"{self.duplicated} duplicated, {self.changed} changed ({self.documents} documents, "
                f"clean run {self.clean_seconds:.1f} s, {self.missed} kills after the end not counted)")


def snapshot(index: SolrIndex) -> Snapshot:
    out: Snapshot = {}
    for core in CORES:
        index.commit(core)
        out[core] = {str(d["identity"]): {k: v for k, v in d.items() if k not in VOLATILE}
                     for d in index.scan(core)}
    return out


def empty(index: SolrIndex) -> None:
    for core in CORES:
        index.delete_query(core, "*:*")
        index.commit(core)


def compare(expected: Snapshot, actual: Snapshot) -> tuple[int, int, int, list[str]]:
    """(lost, duplicated, changed, a few examples): a document of the clean run missing, one the
    clean run does not have (the same thing written twice under another identity), one whose
    fields differ."""
    lost = duplicated = changed = 0
    examples: list[str] = []
    for core in CORES:
        want, got = expected[core], actual[core]
        missing, extra = want.keys() - got.keys(), got.keys() - want.keys()
        differ = [key for key in want.keys() & got.keys() if want[key] != got[key]]
        lost, duplicated, changed = lost + len(missing), duplicated + len(extra), changed + len(differ)
        examples += [f"{core} lost {k}" for k in sorted(missing)[:3]]
        examples += [f"{core} extra {k}" for k in sorted(extra)[:3]]
        examples += [f"{core} changed {k}: {want[k]} != {got[k]}" for k in sorted(differ)[:3]]
    return lost, duplicated, changed, examples


def run_to_end(scenario: Scenario, env: Mapping[str, str]) -> float:
    if scenario.driver is not None:
        return scenario.driver.run_to_end(env)
    started = time.monotonic()
    done = subprocess.run([NAVD, *scenario.command], env=dict(env), capture_output=True, text=True,
                          timeout=scenario.timeout, check=False)
    assert done.returncode == 0, f"{scenario.name}: {done.stderr[-3000:]}"
    return time.monotonic() - started


def kill_at(scenario: Scenario, env: Mapping[str, str], delay: float) -> bool:
    """Start the command, SIGKILL its process group after `delay` seconds; whether it was running."""
    if scenario.driver is not None:
        return scenario.driver.kill_at(env, delay)
    proc = subprocess.Popen([NAVD, *scenario.command], env=dict(env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        return True


def campaign(index: SolrIndex, scenario: Scenario, *, kills: int, seed: int, chain: int = 2) -> Outcome:
    rng = random.Random(f"{seed}:{scenario.name}")
    clean_seconds = run_to_end(scenario, scenario.reset("clean"))
    expected = snapshot(index)
    assert sum(map(len, expected.values())), f"{scenario.name}: the clean run wrote nothing"
    landed = missed = lost = duplicated = changed = rounds = 0
    examples: list[str] = []
    # Bounded: a component much faster than its clean measurement would otherwise never be hit.
    while landed < kills and rounds < 4 * kills:
        rounds += 1
        env = scenario.reset(f"killed{rounds}")
        for _ in range(min(chain, kills - landed)):
            if kill_at(scenario, env, clean_seconds * rng.uniform(0.05, 0.95)):
                landed += 1
            else:
                missed += 1
        run_to_end(scenario, env)
        result = compare(expected, snapshot(index))
        lost, duplicated, changed = lost + result[0], duplicated + result[1], changed + result[2]
        examples += result[3]
    outcome = Outcome(scenario.name, landed, missed, lost, duplicated, changed, clean_seconds,
                      sum(map(len, expected.values())))
    print(outcome.line(), *examples[:9], sep="\n  ", flush=True)
    return outcome


def navd_env(tmp: Path, label: str, solr: str, body: str, cluster: str = "chaos",
             default_fs: str = "") -> dict[str, str]:
    """A navd.toml for one run family: its own state directory (positions), the session Solr;
    `[cluster] default_fs` when given."""
    config = tmp / f"{label}.toml"
    fs = f'default_fs = "{default_fs}"\n' if default_fs else ""
    config.write_text(f'[cluster]\nname = "{cluster}"\n{fs}{solr}[logging]\nformat = "json"\n'
                      f'[daemon]\nstate_dir = "{tmp / label}"\n{body}')
    return {**os.environ, "NAVD_CONFIG": str(config)}


def summary(outcomes: Sequence[Outcome]) -> str:
    return (f"chaos total: {sum(o.kill_points for o in outcomes)} kill points over {len(outcomes)} components, "
            f"{sum(o.lost for o in outcomes)} lost, {sum(o.duplicated for o in outcomes)} duplicated, "
            f"{sum(o.changed for o in outcomes)} changed")

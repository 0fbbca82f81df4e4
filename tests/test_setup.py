"""What `make quickstart` and `make test` install, on a fresh clone: the main job gets navd and its
runtime dependencies (and the Solr jars) only; the tests add their tools, the dev services,
Debian's Chromium and the MIT Kerberos packages.

Two halves, both cheap enough for every CI run: the Makefile's own plan (`make -n`, in a copy of
the files its rules read and no virtualenv, as a fresh clone is) says which installs each target
runs; navd's metadata (the installed distributions' requirements, as pip resolves them) says
what the runtime install pulls in. `tests/test_packaging.py` installs navd into a fresh
virtualenv for real.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
#: what the Makefile's rules read besides itself (their prerequisites)
MAKE_INPUTS = ("Makefile", "pyproject.toml", "deploy/dev/pyproject.toml", "tests/emitters/requirements.txt")
#: the test tools of navd's `test` extra and what only the tests use
TEST_ONLY = {"pytest", "hypothesis", "playwright", "openlineage-python", "marquez-python", "pysolr", "pandas",
             "pyarrow", "httpx", "pyflakes", "gssapi", "requests-gssapi", "navd-devstack"}
KRB5_PACKAGES = ("libkrb5-dev", "krb5-kdc", "krb5-admin-server", "krb5-user")


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clone")
    for name in MAKE_INPUTS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    return root


def plan(clone: Path, target: str) -> str:
    """The commands `make TARGET` would run there (make -n runs none of them)."""
    # --no-print-directory: under `make test` this make is a sub-make, which would otherwise
    # print "Entering directory" lines around the plan
    done = subprocess.run(["make", "--no-print-directory", "-n", target], cwd=clone, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def pip_installs(commands: str) -> list[str]:
    """The arguments of each `pip install` in the plan."""
    return [args.strip() for args in re.findall(r"/pip install ([^\n\\]*)", commands)]


def test_the_quickstart_installs_navd_and_its_runtime_only(fresh_clone: Path) -> None:
    commands = plan(fresh_clone, "quickstart")
    assert pip_installs(commands) == ["--upgrade pip", "-e ."]
    for word in ("[test]", "deploy/dev", "apt-get", "chromium", *KRB5_PACKAGES):
        assert word not in commands, f"`make quickstart` would run something with {word!r}"
    assert "navd solr fetch" in commands and "javac" in commands and "mvn" in commands
    assert commands.rstrip().endswith(".venv/bin/navd quickstart")


def test_the_tests_add_their_tools_the_browser_and_the_kdc(fresh_clone: Path) -> None:
    commands = plan(fresh_clone, "test")
    assert pip_installs(commands) == ["--upgrade pip", "-e .", "-e '.[test]' -e deploy/dev",
                                      "-r tests/emitters/requirements.txt"]  # the emitters, into .venv-emitters
    assert "-m venv .venv-emitters" in commands
    assert "chromium" in commands and all(package in commands for package in KRB5_PACKAGES)
    for target in ("bench", "fuzz", "chaos", "outages", "dev-up"):
        assert "-e '.[test]' -e deploy/dev" in plan(fresh_clone, target), target


def runtime_closure(name: str) -> set[str]:
    """The distributions `pip install NAME` (no extras) brings, from the installed metadata."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset())]
    while todo:
        current, extras = todo.pop()
        key = canonicalize_name(current)
        if key in seen and not extras:
            continue
        seen.add(key)
        try:
            requires = distribution(current).requires or []
        except PackageNotFoundError:  # a platform's optional dependency not installed here
            continue
        for line in requires:
            requirement = Requirement(line)
            markers = [{"extra": extra} for extra in ("", *extras)]
            if requirement.marker is None or any(requirement.marker.evaluate(m) for m in markers):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return seen


def test_navd_s_runtime_dependencies_hold_no_test_tool() -> None:
    closure = runtime_closure("navd")
    assert {"fastapi", "pyspark", "uvicorn", "jsonschema"} <= closure  # the runtime is there ...
    assert closure & TEST_ONLY == set()  # ... and nothing of the tests

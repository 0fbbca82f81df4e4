"""What `pip install .` puts into a fresh virtualenv: all of navd, none of its dev services.

The dev and test services (HDFS, YARN, Hive metastore, Spark Thrift Server) are the separate
distribution navd-devstack under deploy/dev; nothing of them may ship with navd. The install is
the real one a user runs (PEP 517 build with build isolation, so pip fetches setuptools from the
package index as it would for them), only `--no-deps`: navd's runtime dependencies are not what
is under test and would take minutes to install.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# What a clean checkout lacks. `build/` above all: setuptools packs whatever an earlier build left
# in build/lib into the wheel, so a stale navd/dev there would ship even though pyproject.toml no
# longer lists it; the copy builds from the sources alone.
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", ".dev", ".bench",
                                     ".pytest_cache", "__pycache__")
# The classes that make a module a dev service, wherever it might move to inside navd.
DEV_SERVICE_CLASS = re.compile(r"^class (DevHdfs|DevYarn|HiveMetastore|SparkThriftServer|DevServiceError)\b",
                               re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Installed:
    site_packages: Path
    scripts: Path  # the virtualenv's bin/
    files: frozenset[str]  # every file under site-packages, relative, "/"-separated
    navd_record: frozenset[str]  # the files navd's RECORD lists
    pip_output: str  # what `pip install --quiet` printed (the build backend's warnings among it)


def run(cmd: list[str | Path], what: str) -> str:
    return run_both(cmd, what)[0]


def run_both(cmd: list[str | Path], what: str) -> tuple[str, str]:
    """stdout and stderr of a command that must succeed."""
    done = subprocess.run([str(part) for part in cmd], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout, done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("packaging")
    source = root / "src"
    shutil.copytree(REPO, source, ignore=NOT_SOURCES)
    venv = root / "venv"
    run([sys.executable, "-m", "venv", venv], "creating a virtualenv")
    python = venv / "bin" / "python"
    pip_output = "\n".join(run_both([python, "-m", "pip", "install", "--quiet", "--no-deps",
                                     "--disable-pip-version-check", source], "pip install . (navd)"))
    # -I: the virtualenv alone, without the working directory on sys.path, where the checkout's own
    # navd.egg-info (from `make setup`) would answer for the installed navd.
    site_packages = Path(run([python, "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             "locating site-packages").strip())
    record = json.loads(run([python, "-I", "-c", "import importlib.metadata as m, json; "
                                                 "print(json.dumps([str(f) for f in m.files('navd')]))"],
                            "reading navd's RECORD"))
    files = frozenset(path.relative_to(site_packages).as_posix()
                      for path in site_packages.rglob("*") if path.is_file())
    return Installed(site_packages, venv / "bin", files, frozenset(record), pip_output)


def source_modules() -> set[str]:
    """Where every module of the source tree installs, as pyproject's package-dir maps the folders.

    By file rather than by __init__.py: navd/index is a namespace package and has none.
    """
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    modules = set()
    for name, directory in setuptools["package-dir"].items():
        for module in (REPO / directory).rglob("*.py"):
            modules.add("/".join((*name.split("."), *module.relative_to(REPO / directory).parts)))
    return modules


def test_no_dev_service_is_installed(installed: Installed) -> None:
    devstack = sorted(f for f in installed.files if f.startswith(("navd/dev/", "navd_devstack/")))
    assert devstack == [], f"dev-service files installed: {devstack}"
    poms = sorted(f for f in installed.files if f.endswith("hadoop-pom.xml"))
    assert poms == [], f"the dev HDFS's Hadoop pom installed: {poms}"
    services = sorted(f for f in installed.navd_record if f.endswith(".py")
                      and DEV_SERVICE_CLASS.search((installed.site_packages / f).read_text()))
    assert services == [], f"modules defining a dev service installed: {services}"


def test_every_module_of_navd_is_installed(installed: Installed) -> None:
    modules = source_modules()
    assert {"navd/cli/__init__.py", "navd/index/client.py", "navd/extractors/spark/__init__.py",
            "navd/extractors/hdfs/extractor.py", "navd/linker/__init__.py", "navd/purge/__init__.py"} <= modules
    missing = sorted(modules - installed.navd_record)
    assert missing == [], f"modules of the source tree not installed: {missing}"
    # Package data: the Solr pom and every configset travel with the code that reads them.
    assert "navd/solr/jvm/pom.xml" in installed.navd_record
    # the OpenLineage schemas the intake validates against, with the note of where they came from
    assert {"navd/openlineage/spec/OpenLineage.json", "navd/openlineage/spec/ColumnLineageDatasetFacet.json",
            "navd/openlineage/spec/SOURCE.md"} <= installed.navd_record
    configsets = {p.parent.parent.name for p in (REPO / "solr_conf").glob("*/conf/solrconfig.xml")}
    assert configsets and all(f"navd/solr_conf/{name}/conf/solrconfig.xml" in installed.navd_record
                              for name in configsets)
    # The lineage page and its vendored JavaScript with the licences: nothing is fetched at run time.
    page_files = {p.relative_to(REPO).as_posix() for p in (REPO / "navd/server/static").rglob("*") if p.is_file()}
    assert {"navd/server/static/page.html", "navd/server/static/vendor/elk-worker.min.js",
            "navd/server/static/vendor/elkjs.LICENSE.md", "navd/server/static/vendor/cytoscape.LICENSE.txt"} <= page_files
    assert page_files <= installed.navd_record, sorted(page_files - installed.navd_record)
    assert (installed.scripts / "navd").is_file(), "the navd console command was not installed"


def test_the_build_warns_of_nothing(installed: Installed) -> None:
    """setuptools warned of the license table's deprecation and of data directories it would leave
    out of the package (49 warning blocks before the first line of navd)."""
    assert "Warning" not in installed.pip_output and "deprecated" not in installed.pip_output, installed.pip_output
    # the licence travels with the distribution (license-files)
    assert any(f.endswith(".dist-info/licenses/LICENSE") for f in installed.navd_record)

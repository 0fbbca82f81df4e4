"""JVM software navd runs for itself (the embedded Solr, the development Hadoop): find the JDK
tools, and fetch a set of jars from Maven Central once into a cache directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from navd.errors import NavdError
from navd.logs import get_logger

log = get_logger("navd.jvm")
COMPLETE_MARKER = ".complete"


def find_tool(name: str, error: type[NavdError]) -> str:
    """`java`, `javac` or `mvn`: from JAVA_HOME first, else PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).exists():
        return str(Path(java_home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise error(f"{name} not found on PATH (nor in JAVA_HOME): navd's embedded services need a "
                    f"JDK 17+ and Maven")
    return found


def run_tool(cmd: list[str], *, what: str, error: type[NavdError],
             env: Mapping[str, str] | None = None) -> str:
    """Run to completion; on failure raise `error` naming `what` with the output's last lines."""
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          env=dict(env) if env is not None else None)
    if proc.returncode != 0:
        detail = (proc.stdout + proc.stderr).strip().splitlines()
        tail = " | ".join(detail[-5:]) if detail else f"exit code {proc.returncode}"
        raise error(f"{what} failed: {tail}")
    return proc.stdout


def fetch_maven_jars(pom: Path, target: Path, properties: Mapping[str, str], *, what: str,
                     error: type[NavdError]) -> None:
    """Copy `pom`'s runtime dependencies into `target`/lib, unless `target` is already complete.

    The jars land in a temporary directory beside `target` that is renamed into place only when
    complete, so an interrupted fetch leaves nothing half-done behind and two processes
    fetching at once both end with one complete copy."""
    if (target / COMPLETE_MARKER).is_file():
        return
    mvn = find_tool("mvn", error)
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("fetching from Maven Central", what=what, into=str(target))
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as tmp:
        work = Path(tmp)
        shutil.copy(pom, work / "pom.xml")
        lib = work / "dist" / "lib"
        _ = run_tool([mvn, "-B", "-q", "-f", str(work / "pom.xml"), "dependency:copy-dependencies",
                      *(f"-D{key}={value}" for key, value in properties.items()),
                      f"-DoutputDirectory={lib}", "-DincludeScope=runtime"],
                     what=f"Maven fetch of {what}", error=error)
        (work / "dist" / COMPLETE_MARKER).write_text(what + "\n")
        if target.exists():
            shutil.rmtree(target)
        try:
            (work / "dist").rename(target)
        except OSError:
            if not (target / COMPLETE_MARKER).is_file():  # another process may have won the race
                raise

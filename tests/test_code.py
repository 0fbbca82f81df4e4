"""The code itself: pyflakes over every Python package of the repository (unused imports and
variables, undefined names, redefinitions), so a merge that leaves one behind fails here rather
than at run time in the one branch that reaches it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("navd", "extractors", "linker", "purge", "deploy", "tests")


def test_pyflakes_finds_nothing() -> None:
    done = subprocess.run([sys.executable, "-m", "pyflakes", *PACKAGES], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")

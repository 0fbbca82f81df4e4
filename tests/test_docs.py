"""The generated references (docs/reference/*.md, `make docs`): the committed files are exactly
what the generator writes from today's parser, config dataclasses and OpenAPI description, so a
flag, key or route changed without `make docs` fails here. Needs no service: the OpenAPI
description is built without a Solr."""

from __future__ import annotations

import dataclasses
import difflib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from navd.config import number, setting
from navd.docs import UndocumentedKey, config_reference, references

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "docs" / "reference"


@pytest.mark.parametrize("name", ["cli.md", "config.md", "http.md"])
def test_the_committed_reference_is_what_make_docs_writes(name: str) -> None:
    wanted = references()[name]
    committed = (REFERENCE / name).read_text(encoding="utf-8") if (REFERENCE / name).is_file() else ""
    diff = "".join(difflib.unified_diff(committed.splitlines(True), wanted.splitlines(True),
                                        f"docs/reference/{name} (committed)", f"docs/reference/{name} (generated)"))
    assert committed == wanted, f"docs/reference/{name} is out of date: run `make docs`\n{diff[:4000]}"


def test_the_references_name_every_command_key_and_route() -> None:
    wanted = references()
    assert "## navd lineage" in wanted["cli.md"] and "`--direction {upstream,downstream,both}`" in wanted["cli.md"]
    assert "## [solr.embedded]" in wanted["config.md"] and "| `max_share_percent` |" in wanted["config.md"]
    assert "## [spark]" in wanted["config.md"]  # a registered component's section
    assert "## POST /api/v1/lineage" in wanted["http.md"]  # the intake, mounted only when enabled


@dataclasses.dataclass(frozen=True)
class Documented:
    """`[site]`: a section of a site's own source."""

    url: str = setting("", help="where it is")
    interval_minutes: float = number(10.0, 0, 60, low_open=True, help="how often")


@dataclasses.dataclass(frozen=True)
class Undocumented:
    """`[site]`: a section of a site's own source."""

    url: str = setting("", help="where it is")
    retries: int = number(3, 0, 10)


@dataclasses.dataclass(frozen=True)
class Core:
    """The top level."""


def test_a_documented_section_renders_its_types_defaults_and_help() -> None:
    text = config_reference(Core, {"site": Documented})
    assert "| `url` | string | `\"\"` | where it is |" in text
    assert "| `interval_minutes` | number > 0, <= 60 | `10.0` | how often |" in text


def test_a_key_without_help_stops_the_generator_naming_it() -> None:
    with pytest.raises(UndocumentedKey, match=r"^\[site\] retries: no help text"):
        config_reference(Core, {"site": Undocumented})


def test_check_names_a_stale_file_and_writes_nothing(tmp_path: Path) -> None:
    for name, text in references().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    check = [sys.executable, "-m", "navd.docs", "--check", "--out", str(tmp_path)]
    fresh = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert (fresh.returncode, fresh.stderr) == (0, "")
    (tmp_path / "config.md").write_text("edited by hand\n", encoding="utf-8")
    stale = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert stale.returncode == 1
    assert stale.stderr == f"navd.docs: {tmp_path / 'config.md'} is out of date: run make docs\n"
    assert (tmp_path / "config.md").read_text(encoding="utf-8") == "edited by hand\n"


def _headings(path: Path) -> set[str]:
    from navd.docs import _anchor

    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_anchor(line.lstrip("#").strip()) for line in text.splitlines() if line.startswith("#")}


def test_every_relative_link_of_the_docs_reaches_a_file_and_heading() -> None:
    """README.md and docs/: each relative link names a file that exists, and its `#anchor` a
    heading of that file (GitHub's anchors), so moving a section cannot leave a dead link."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    dead = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            name, _, anchor = target.partition("#")
            linked = (page.parent / name).resolve() if name else page
            if not linked.exists() or (anchor and linked.is_file() and anchor not in _headings(linked)):
                dead.append(f"{page.relative_to(REPO)}: {target}")
    assert dead == []

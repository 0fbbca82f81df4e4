"""The one registry of components: the `navd.components` entry-point group.

navd's own sources, the linker and purge register in pyproject.toml; a site's own source is a
package that declares an entry point in the same group, e.g. `mysource = "mypkg.component:COMPONENT"`.
The runner, the daemon, the CLI and the config loader all iterate `components()`; nothing else
lists them.
Loaded on first use (not at import), once per process.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any

from navd.errors import ConfigError
from navd.extractors import Component

GROUP = "navd.components"


@functools.cache
def components() -> Mapping[str, Component[Any, Any]]:
    """Every registered component by name, in name order."""
    found: dict[str, Component[Any, Any]] = {}
    sections: dict[str, str] = {}
    for entry in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        try:
            component = entry.load()
        except Exception as exc:  # a broken plugin names itself instead of a traceback
            raise ConfigError(f"component {entry.name!r} ({entry.value}) cannot be loaded: {exc}") from None
        if not isinstance(component, Component):
            raise ConfigError(f"component {entry.name!r} ({entry.value}) is a {type(component).__name__}, "
                              "not a navd.extractors.Component")
        if component.name != entry.name:
            raise ConfigError(f"component {entry.value} is named {component.name!r} but registered as "
                              f"{entry.name!r}")
        if component.name in found:
            continue  # the same distribution seen twice on sys.path (an editable install)
        if component.section in sections:
            raise ConfigError(f"components {sections[component.section]!r} and {component.name!r} both claim "
                              f"the config section [{component.section}]")
        found[component.name] = component
        sections[component.section] = component.name
    return MappingProxyType(found)


def run_order() -> list[Component[Any, Any]]:
    """The components in the order one pass over all of them (`navd extract all`) runs them: the
    sources by name, then the components derived from what they wrote. The upkeep components
    (the linker, purge) are not among them: they have their own commands, and the link pass
    follows every run anyway."""
    return sorted((c for c in components().values() if not c.upkeep), key=lambda c: (c.derived, c.name))


def component(name: str) -> Component[Any, Any]:
    known = components()
    if name not in known:
        raise ConfigError(f"unknown component {name!r}: expected one of {', '.join(known)}")
    return known[name]


def section_types() -> dict[str, type]:
    """The config section of every component and its settings dataclass."""
    return {c.section: c.settings_type for c in components().values()}

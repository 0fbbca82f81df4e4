"""Which HDFS paths a crawl indexes: `[hdfs] include` / `exclude` patterns. Pure."""

from __future__ import annotations

import dataclasses
import fnmatch


@dataclasses.dataclass(frozen=True)
class PathFilter:
    """Include/exclude patterns: a plain path means it and everything below; `*?[` make a glob."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def excluded(self, path: str) -> bool:
        return any(_matches(path, pattern) for pattern in self.exclude)

    def included(self, path: str) -> bool:
        return not self.include or any(_matches(path, pattern) for pattern in self.include)

    def worth_descending(self, directory: str) -> bool:
        """Could anything included lie at or below `directory`?"""
        if not self.include:
            return True
        prefix = directory.rstrip("/") + "/"
        return any(_is_glob(p) or _matches(directory, p) or p.startswith(prefix) for p in self.include)


def _is_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _matches(path: str, pattern: str) -> bool:
    if _is_glob(pattern):
        return fnmatch.fnmatchcase(path, pattern)
    base = pattern.rstrip("/") or "/"
    return path == base or path.startswith(base.rstrip("/") + "/")

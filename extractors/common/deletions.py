"""The deletion fail-safe every extractor that infers deletions from a listing goes through.

An extractor flags an entity deleted when a listing no longer shows it. A listing that failed,
came back empty, or lost most of what it used to show is far more often an outage, a
permissions change or a wrong mount than a real deletion, and flagging on it would mark half a
cluster deleted (and purge would then remove it). So, per scope (an HDFS root, the selected Hive
databases), before the first Deletion of that scope is yielded, the extractor asks the guard,
which refuses, and the extractor then flags NOTHING in that scope for that run, when:

(a) the listing failed;
(b) the listing came back empty while entities are indexed under the scope;
(c) the run would flag more than `[deletions] max_share_percent` (default 75) of the entities
    indexed under the scope (as DataHub's stale-entity removal `fail_safe_threshold`).

A refusal is logged as a warning naming the scope, the numbers and the config key, and kept on
the guard for the run's report (`deletions_refused`, `refused`). What was proven stays proven
where the extractor keeps it (HDFS: its pending deletions), so raising the threshold, or the
listing coming back, lets a later run apply it.

Deletions an extractor is told about explicitly (a Spark DROP TABLE event) are not inferred
from a listing and do not go through the guard.
"""

from __future__ import annotations

import dataclasses

# `[deletions]` is a core section (every extractor that flags deletions reads it): the loader
# owns its dataclass; it is named here too for the extractors.
from navd.config import DEFAULT_MAX_SHARE_PERCENT, DeletionsConfig  # noqa: F401 - re-export
from navd.logs import get_logger

MAX_SHARE_KEY = "[deletions] max_share_percent"


@dataclasses.dataclass(frozen=True)
class Refusal:
    """Deletions of one scope not flagged in one run, and why."""

    scope: str
    would_flag: int
    indexed: int
    reason: str


def refusal(scope: str, *, would_flag: int, indexed: int, listed: int | None = None, failed: bool = False,
            max_share_percent: float = DEFAULT_MAX_SHARE_PERCENT) -> Refusal | None:
    """Whether deletions of `scope` must be refused; pure.

    `would_flag`: entities the run would flag deleted under the scope (what is indexed below a
    deleted directory included); `indexed`: entities indexed and not deleted under it; `listed`:
    entries the scope's listing returned, when the extractor has that number; `failed`: the
    listing did not complete."""
    if failed:
        return Refusal(scope, would_flag, indexed,
                       f"deletions under {scope} refused: its listing failed; nothing flagged")
    if listed == 0 and indexed > 0:
        return Refusal(scope, would_flag, indexed,
                       f"deletions under {scope} refused: its listing came back empty while {indexed} "
                       f"entities are indexed under it; nothing flagged")
    if would_flag <= 0 or indexed <= 0:
        return None
    share = 100.0 * would_flag / indexed
    if share <= max_share_percent:
        return None
    # Whole percents, unless rounding would show a share that does not exceed the threshold.
    shown = f"{share:.0f}" if round(share) > max_share_percent else f"{share:.1f}"
    return Refusal(scope, would_flag, indexed,
                   f"deletions under {scope} refused: would flag {would_flag} of {indexed} indexed entities "
                   f"({shown}%) deleted, above {MAX_SHARE_KEY} = {max_share_percent:g}; nothing flagged")


class DeletionGuard:
    """One run's fail-safe: `allows` before the Deletions of a scope, refusals for the report."""

    def __init__(self, config: DeletionsConfig, component: str) -> None:
        self.max_share_percent = config.max_share_percent
        self.log = get_logger(component)
        self.refusals: list[Refusal] = []

    def allows(self, scope: str, *, would_flag: int, indexed: int, listed: int | None = None,
               failed: bool = False) -> bool:
        """True when the deletions of `scope` may be flagged; else the refusal is logged and kept."""
        refused = refusal(scope, would_flag=would_flag, indexed=indexed, listed=listed, failed=failed,
                          max_share_percent=self.max_share_percent)
        if refused is None:
            return True
        self.refusals.append(refused)
        self.log.warning(refused.reason, scope=scope, would_flag=would_flag, indexed=indexed)
        return False

    @property
    def refused_count(self) -> int:
        """Entities not flagged because of refusals (the run's `deletions_refused` count)."""
        return sum(r.would_flag for r in self.refusals)

    @property
    def reason(self) -> str:
        """Every refusal of the run, for the run record ("" when none)."""
        return "; ".join(r.reason for r in self.refusals)

"""The deletion fail-safe's rules, pure: which runs may flag deletions and what a refusal says.
(Its use by the extractors runs against the real HDFS and HiveServer2 in their own tests.)"""

from __future__ import annotations

import pytest

from navd.extractors.common.deletions import DeletionGuard, DeletionsConfig, refusal

SCOPE = "hdfs://nn/data"

CASES = [
    # (would_flag, indexed, listed, failed, max_share, refused reason or None)
    (0, 1000, None, False, 75.0, None),
    (1, 1000, None, False, 75.0, None),
    (750, 1000, None, False, 75.0, None),  # at the threshold: allowed
    (751, 1000, 5, False, 75.0, "would flag 751 of 1000 indexed entities (75.1%) deleted, above "
                                "[deletions] max_share_percent = 75; nothing flagged"),
    (812, 1000, None, False, 75.0, "would flag 812 of 1000 indexed entities (81%) deleted, above "
                                   "[deletions] max_share_percent = 75; nothing flagged"),
    (1, 1, None, False, 100.0, None),
    (1, 1, None, False, 99.5, "would flag 1 of 1 indexed entities (100%) deleted, above "
                              "[deletions] max_share_percent = 99.5; nothing flagged"),
    (300, 1000, None, False, 25.0, "would flag 300 of 1000 indexed entities (30%) deleted, above "
                                   "[deletions] max_share_percent = 25; nothing flagged"),
    (1000, 1000, 0, False, 100.0, "its listing came back empty while 1000 entities are indexed under it; "
                                  "nothing flagged"),
    (0, 0, 0, False, 75.0, None),         # empty and nothing indexed: a new, empty root
    (3, 1000, None, True, 75.0, "its listing failed; nothing flagged"),
    (0, 1000, None, True, 75.0, "its listing failed; nothing flagged"),
    (5, 0, None, False, 75.0, None),      # nothing counted as indexed (not visible yet): not a mass deletion
]


@pytest.mark.parametrize(("would_flag", "indexed", "listed", "failed", "max_share", "reason"), CASES)
def test_refusal_rules(would_flag: int, indexed: int, listed: int | None, failed: bool, max_share: float,
                       reason: str | None) -> None:
    refused = refusal(SCOPE, would_flag=would_flag, indexed=indexed, listed=listed, failed=failed,
                      max_share_percent=max_share)
    if reason is None:
        assert refused is None
    else:
        assert refused is not None and refused.reason == f"deletions under {SCOPE} refused: {reason}"
        assert (refused.scope, refused.would_flag, refused.indexed) == (SCOPE, would_flag, indexed)


def test_guard_keeps_every_refusal_of_a_run_for_its_report() -> None:
    guard = DeletionGuard(DeletionsConfig(), "navd.extractor.test")
    assert guard.allows("hdfs://nn/a", would_flag=2, indexed=10)
    assert not guard.allows("hdfs://nn/b", would_flag=9, indexed=10)
    assert not guard.allows("hdfs://nn/c", would_flag=4, indexed=4, listed=0)
    assert guard.refused_count == 13
    assert guard.reason.count("refused") == 2 and "hdfs://nn/b" in guard.reason and "hdfs://nn/c" in guard.reason
    assert DeletionGuard(DeletionsConfig(), "navd.extractor.test").reason == ""

"""Solr dates written and read in one place (navd/index/documents.py): what `solr_date` writes,
`parse_solr_date` reads back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from navd.index.documents import parse_solr_date, solr_date, stored_time


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-11-23T05:00:00.123Z", datetime(2026, 11, 23, 5, 0, 0, 123000, tzinfo=UTC)),
    ("2026-11-23T05:00:00Z", datetime(2026, 11, 23, 5, tzinfo=UTC)),
    ("2026-11-23T07:00:00+02:00", datetime(2026, 11, 23, 5, tzinfo=UTC)),
])
def test_a_solr_date_is_an_aware_datetime(text: str, expected: datetime) -> None:
    parsed = parse_solr_date(text)
    assert parsed == expected and parsed.tzinfo is not None


@pytest.mark.parametrize("moment", [datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
                                    datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=-7)))])
def test_what_solr_date_writes_reads_back(moment: datetime) -> None:
    assert parse_solr_date(solr_date(moment)) == moment


def test_not_a_date_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_solr_date("yesterday")


@pytest.mark.parametrize("absent", [None, ""])
def test_an_absent_stored_time_is_none(absent: object) -> None:
    assert stored_time(absent) is None

"""The pure rules of taint and reprocess (navd/taint/rules.py): partition periods, conversion, order."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from navd.errors import UsageError
from navd.taint.rules import (DAY, HOUR, MONTH, YEAR, Period, Periods, converted, dependency_order, leaves,
                        partition_period, split_partition_path, taint_range)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(("spec", "expected"), [
    ({"dt": "2026-11-01", "hr": "05"}, ("2026-11-01T05:00", "2026-11-01T06:00", HOUR)),
    ({"dt": "2026-11-01", "hour": "5"}, ("2026-11-01T05:00", "2026-11-01T06:00", HOUR)),
    ({"dt": "2026-11-01"}, ("2026-11-01", "2026-11-02", DAY)),
    ({"ds": "20261130"}, ("2026-11-30", "2026-12-01", DAY)),
    ({"date": "2026/11/01"}, ("2026-11-01", "2026-11-02", DAY)),
    ({"month": "2026-11"}, ("2026-11-01", "2026-12-01", MONTH)),
    ({"month": "2026-12"}, ("2026-12-01", "2027-01-01", MONTH)),
    ({"yyyymm": "202611"}, ("2026-11-01", "2026-12-01", MONTH)),
    ({"year": "2026", "month": "11"}, ("2026-11-01", "2026-12-01", MONTH)),
    ({"year": "2026", "month": "11", "day": "3"}, ("2026-11-03", "2026-11-04", DAY)),
    ({"year": "2026"}, ("2026-01-01", "2027-01-01", YEAR)),
    ({"dh": "2026110123"}, ("2026-11-01T23:00", "2026-11-02T00:00", HOUR)),
    ({"ts": "2026-11-01T07"}, ("2026-11-01T07:00", "2026-11-01T08:00", HOUR)),
    ({"ts": "2026-11-01 07:00:00"}, ("2026-11-01T07:00", "2026-11-01T08:00", HOUR)),
    ({"region": "eu", "dt": "2026-11-01"}, ("2026-11-01", "2026-11-02", DAY)),
    ({"snapshot": "2026-11-01"}, ("2026-11-01", "2026-11-02", DAY)),  # dashed dates under any key
])
def test_partition_period(spec: dict[str, str], expected: tuple[str, str, str]) -> None:
    assert partition_period(spec) == Period(at(expected[0]), at(expected[1]), expected[2])


@pytest.mark.parametrize("spec", [
    {"region": "eu"},
    {"id": "20261101"},  # compact digits only under a date key
    {"hr": "05"},  # an hour of no day
    {"dt": "2026-13-01"},
    {"dt": "2026-11-01", "hr": "24"},
    {"day": "3"},
    {},
])
def test_no_period(spec: dict[str, str]) -> None:
    assert partition_period(spec) is None


@pytest.mark.parametrize(("path", "dataset", "spec"), [
    ("hdfs://nn:8020/w/hourly/dt=2026-11-01/hr=05", "hdfs://nn:8020/w/hourly", {"dt": "2026-11-01", "hr": "05"}),
    ("/w/daily/DT=2026-11-01/", "/w/daily", {"dt": "2026-11-01"}),
    ("/w/daily", "/w/daily", {}),
    ("/w/a=b/c", "/w/a=b/c", {}),
])
def test_split_partition_path(path: str, dataset: str, spec: dict[str, str]) -> None:
    assert split_partition_path(path) == (dataset, spec)


def hours(day: str, *numbers: int) -> list[Period]:
    return [partition_period({"dt": day, "hr": f"{n:02d}"}) for n in numbers]  # type: ignore[misc]


def days(*names: str) -> list[Period]:
    return [partition_period({"dt": name}) for name in names]  # type: ignore[misc]


# 10 bad hours across midnight -> the two days they fall in -> the one month; neighbours untouched
@pytest.mark.parametrize(("partitions", "incoming", "expected"), [
    (days("2026-10-31", "2026-11-01", "2026-11-02", "2026-11-03"),
     Periods([(at("2026-11-01T19:00"), at("2026-11-02T05:00"))]),
     Periods([(at("2026-11-01"), at("2026-11-03"))])),
    ([partition_period({"month": m}) for m in ("2026-10", "2026-11", "2026-12")],
     Periods([(at("2026-11-01"), at("2026-11-03"))]),
     Periods([(at("2026-11-01"), at("2026-12-01"))])),
    # a day down to the hours of it that exist
    (hours("2026-11-01", 3, 4) + hours("2026-11-02", 3),
     Periods([(at("2026-11-01"), at("2026-11-02"))]),
     Periods([(at("2026-11-01T03:00"), at("2026-11-01T05:00"))])),
    # no time partitions: the period passes on
    ([None, None], Periods([(at("2026-11-01"), at("2026-11-02"))]),
     Periods([(at("2026-11-01"), at("2026-11-02"))])),
    (days("2026-11-01"), Periods.all(), Periods([(at("2026-11-01"), at("2026-11-02"))])),
    (days("2026-10-01"), Periods([(at("2026-11-01"), at("2026-11-02"))]), Periods()),
])
def test_converted(partitions: list[Period | None], incoming: Periods, expected: Periods) -> None:
    assert converted(partitions, incoming) == expected


def test_periods_cover_and_merge() -> None:
    merged = Periods([(at("2026-11-01T02:00"), at("2026-11-01T03:00")), (at("2026-11-01T03:00"), at("2026-11-01T04:00"))])
    assert merged.intervals == ((at("2026-11-01T02:00"), at("2026-11-01T04:00")),)
    assert merged.covers(partition_period({"dt": "2026-11-01"}))
    assert not merged.covers(partition_period({"dt": "2026-11-02"}))
    assert merged.covers(None)  # a partition with no time: always touched
    assert Periods.all().union(merged) == Periods.all()
    assert merged.as_list() == [{"from": "2026-11-01T02:00:00Z", "to": "2026-11-01T04:00:00Z"}]


def test_taint_range() -> None:
    assert taint_range(None, None) == Periods.all()
    with pytest.raises(UsageError, match="go together"):
        taint_range(at("2026-11-01"), None)
    with pytest.raises(UsageError, match="must be after"):
        taint_range(at("2026-11-02"), at("2026-11-01"))


def test_leaves() -> None:
    assert leaves(["dt=1", "dt=1/hr=01", "dt=1/hr=02", "dt=2", "dt=10"]) == ["dt=1/hr=01", "dt=1/hr=02", "dt=10",
                                                                              "dt=2"]


@pytest.mark.parametrize(("nodes", "edges", "expected"), [
    (["a", "b", "c"], [("a", "b"), ("b", "c")], ["a", "b", "c"]),
    # discovered in another order than the dependencies: b (found first) waits for c
    (["a", "b", "c"], [("a", "b"), ("a", "c"), ("c", "b")], ["a", "c", "b"]),
    # a diamond: ties in discovery order
    (["a", "x", "y", "z"], [("a", "x"), ("a", "y"), ("x", "z"), ("y", "z")], ["a", "x", "y", "z"]),
    # a cycle after a: in discovery order
    (["a", "b", "c"], [("a", "b"), ("b", "c"), ("c", "b")], ["a", "b", "c"]),
    (["a"], [("a", "a")], ["a"]),
])
def test_dependency_order(nodes: list[str], edges: list[tuple[str, str]], expected: list[str]) -> None:
    assert dependency_order(nodes, edges) == expected

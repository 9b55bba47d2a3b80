"""The receipt execution window (seed 004 §5c; :mod:`core.missions.receipt_window`)."""

from __future__ import annotations

import pytest

from core.missions.receipt_window import ExecutionWindow, check_window
from core.refusals import Code, Refused
from core.time import instant_iso, instant_us

NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def window_refusal(started: str, finished: str) -> Refused:
    with pytest.raises(Refused) as caught:
        check_window(ExecutionWindow(started_at=started, finished_at=finished), now_ms=NOW_MS)
    assert caught.value.code == Code.RECEIPT_WINDOW_INVALID
    return caught.value


def test_reversed_window_refused():
    refused = window_refusal("2025-12-31T23:30:00Z", "2025-12-31T23:00:00Z")
    assert refused.field == "finished_at"


def test_equal_timestamps_refused():
    window_refusal("2025-12-31T23:00:00Z", "2025-12-31T23:00:00Z")


def test_the_same_instant_written_with_two_offsets_is_equal_and_refused():
    window_refusal("2025-12-31T23:00:00Z", "2026-01-01T01:00:00+02:00")


def test_future_dated_window_refused():
    refused = window_refusal("2025-12-31T23:00:00Z", "2026-01-01T00:00:00.001Z")
    assert refused.field == "finished_at"


def test_window_ending_exactly_now_is_accepted():
    check_window(
        ExecutionWindow(started_at="2025-12-31T23:00:00Z", finished_at="2026-01-01T00:00:00Z"),
        now_ms=NOW_MS,
    )


def test_window_longer_than_24_hours_refused():
    refused = window_refusal("2025-12-30T23:59:59Z", "2026-01-01T00:00:00Z")
    assert refused.field == "started_at"


def test_window_of_exactly_24_hours_is_accepted():
    check_window(
        ExecutionWindow(started_at="2025-12-31T00:00:00Z", finished_at="2026-01-01T00:00:00Z"),
        now_ms=NOW_MS,
    )


def test_instant_without_offset_is_not_an_instant():
    with pytest.raises(ValueError, match="offset"):
        instant_us("2026-01-01T00:00:00")


def test_instant_iso_round_trips_milliseconds():
    assert instant_iso(NOW_MS + 250) == "2026-01-01T00:00:00.250Z"
    assert instant_us(instant_iso(NOW_MS + 250)) == (NOW_MS + 250) * 1000

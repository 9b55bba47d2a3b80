"""The execution window of a receipt (seed 004 §5c); its instants are :mod:`core.time`'s.

A receipt candidate says when the work it proves ran: ``{started_at, finished_at}``, two
ISO-8601 instants with an explicit offset (``2026-01-01T10:00:00Z``,
``2026-01-01T12:00:00.250+02:00``). Importing a receipt (:mod:`core.missions.receipt_import`, and
the
host receipts of :mod:`core.tools.receipts`) accepts the window only when, mechanically:

1. both instants parse and carry an offset (a naive time names no instant);
2. ``started_at < finished_at`` — a reversed or zero-length window is refused;
3. ``finished_at <= now`` by the host clock — a window ending in the future is refused. There is
   no skew allowance: a receipt is imported after the run it proves, and a refusal is honest
   and retryable once the host clock has caught up;
4. ``finished_at - started_at <= 24 h`` (exactly 24 h passes).

Every failure is ``receipt-window-invalid`` naming the field. Comparisons are done in whole
microseconds since the Unix epoch, so an offset never changes the answer.
"""

from __future__ import annotations

from core.model import Contract
from core.refusals import Code, Refused
from core.time import Instant, instant_us

__all__ = ["MAX_WINDOW_US", "ExecutionWindow", "check_window", "check_window_us"]

MAX_WINDOW_US = 24 * 3600 * 1_000_000
"""The longest window a receipt may claim: 24 hours, in microseconds."""


class ExecutionWindow(Contract):
    """When the proved work ran: ``started_at`` and ``finished_at``, ISO-8601 with offsets."""

    started_at: Instant
    finished_at: Instant


def check_window_us(started_us: int, finished_us: int, now_us: int) -> None:
    """Apply rules 2–4 of the module docstring to microsecond instants.

    Raises :class:`~core.refusals.Refused` ``receipt-window-invalid`` naming the field.
    """
    if finished_us < started_us:
        raise Refused(
            Code.RECEIPT_WINDOW_INVALID,
            "The window is reversed: it finishes before it starts.",
            field="finished_at",
        )
    if finished_us == started_us:
        raise Refused(
            Code.RECEIPT_WINDOW_INVALID,
            "The window is empty: it starts and finishes at the same instant.",
            field="finished_at",
        )
    if finished_us > now_us:
        raise Refused(
            Code.RECEIPT_WINDOW_INVALID,
            "The window finishes in the future by the host's clock.",
            field="finished_at",
        )
    if finished_us - started_us > MAX_WINDOW_US:
        raise Refused(
            Code.RECEIPT_WINDOW_INVALID,
            "The window is longer than 24 hours.",
            field="started_at",
        )


def check_window(window: ExecutionWindow, *, now_ms: int) -> ExecutionWindow:
    """Return ``window`` when it is acceptable at host time ``now_ms`` (ms since the epoch).

    Raises :class:`~core.refusals.Refused` ``receipt-window-invalid`` (rules in the module
    docstring); ``field`` names ``started_at`` or ``finished_at``.
    """
    try:
        started = instant_us(window.started_at)
    except ValueError as exc:
        raise Refused(Code.RECEIPT_WINDOW_INVALID, str(exc), field="started_at") from None
    try:
        finished = instant_us(window.finished_at)
    except ValueError as exc:
        raise Refused(Code.RECEIPT_WINDOW_INVALID, str(exc), field="finished_at") from None
    check_window_us(started, finished, now_ms * 1000)
    return window

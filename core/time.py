"""The project's time: instants as RFC 3339 UTC text, one format everywhere (SPEC §5, §9, §10).

The host writes every instant it records — audit records, mission letters and mailbox lines,
block ratifications and receipt imports, archive manifests, tray state — with
:func:`instant_iso`: RFC 3339 in UTC with milliseconds and ``Z``, e.g.
``2026-01-01T10:00:00.250Z``, computed exactly from integer milliseconds (no float rounding).

It reads instants others wrote (a receipt's execution window, a letter's ``updated_at``) as
:data:`Instant`: any ISO-8601 text with an explicit offset (``Z`` or ``+02:00``), kept exactly
as written; :func:`instant_us` turns one into whole microseconds since the Unix epoch, so an
offset never changes a comparison. Records written before this rule (audit records said
``+00:00``) stay as they are: the audit verifies the bytes it stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated

from pydantic import AfterValidator, Field

__all__ = ["Instant", "instant_iso", "instant_us"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def instant_iso(ms: int) -> str:
    """``ms`` milliseconds since the Unix epoch as RFC 3339 UTC text,
    ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (the one format the host writes)."""
    seconds, millis = divmod(ms, 1000)
    return f"{_second_iso(seconds)}.{millis:03d}Z"


@lru_cache(maxsize=8)
def _second_iso(seconds: int) -> str:
    """The whole second's part of :func:`instant_iso`, kept for the few seconds in use (every
    audit record of a second shares it: issue 18, the read path)."""
    moment = datetime.fromtimestamp(seconds, tz=UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="seconds")


def instant_us(text: str) -> int:
    """Microseconds since the Unix epoch of the ISO-8601 instant ``text``.

    Raises ``ValueError`` when ``text`` is not ISO-8601 or has no offset (``Z`` counts).
    """
    if not isinstance(text, str) or len(text) > 64:
        raise ValueError("an instant is ISO-8601 text of at most 64 characters")
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("an instant needs an offset, e.g. 'Z' or '+02:00'")
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _valid_instant(text: str) -> str:
    instant_us(text)
    return text


Instant = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_valid_instant)]
"""An ISO-8601 instant with an offset, kept exactly as written (never normalised)."""

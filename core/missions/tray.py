"""What the mission tray shows and what its gestures may do (seed 004 §3, §1h, F2.5d).

The tray is read-only over letters (§3e). This module holds its presentation rules, as pure
functions over mission heads, the block store and the clock, so the page asks instead of
deciding:

- **Pinned failure** (§3c): a ``failed`` head is pinned above every other card until a person
  dismisses it.
- **Stagnant** (§3c-ext): a ``judging`` or ``executing`` head whose ``updated_at`` is more than
  :data:`STAGNANT_AFTER_MS` (24 h) behind the host clock.
- **Dismissible**: a failed head, or a stagnant one — nothing else. A dismissal hides exactly
  the head it names (:class:`core.missions.ui_state.Dismissal`); when the mission moves on, the new
  head is shown again, so a dismissal never buries a head that became actionable (``merge_wait``,
  ``landed``).
- **Counts**: per phase, over every head, hidden or not (the strip counts what is true, not
  what is shown).
- **Follow-up letters** (:func:`next_letter`): the two letters the tray itself posts, both
  extending a ``merge_wait`` head — ``landed`` after a person imported its receipt (F2.5d), and
  ``archived``, the person's archive gesture (§1h). The host still checks every rule when the
  letter is posted (:mod:`core.missions.posting`).
- **Archive preview** (:func:`archive_preview`): the fresh two-boundary comparison the archive
  confirm states ("proved at boundary v1 — the block is at v3"), and whether the receipt would
  still import right now (a dry run of :func:`core.missions.receipt_import.import_receipt`; nothing
  is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from core.missions.blocks import SkeletonStore
from core.missions.letters import PHASES, MissionLetter, parse_letter, sha12
from core.missions.receipt_import import import_receipt
from core.missions.ui_state import Dismissal, DismissReason
from core.refusals import Code, Refused
from core.time import instant_iso, instant_us

__all__ = [
    "STAGNANT_AFTER_MS",
    "ArchivePreview",
    "FollowUp",
    "archive_preview",
    "dismiss_reason",
    "is_hidden",
    "is_stagnant",
    "next_letter",
    "phase_counts",
]

STAGNANT_AFTER_MS = 24 * 3600 * 1000
"""A judging/executing head unchanged for longer than this (ms) may be hidden (§3c-ext)."""

FollowUp = Literal["landed", "archived"]


def is_stagnant(letter: MissionLetter, now_ms: int) -> bool:
    """True for a ``judging``/``executing`` head whose ``updated_at`` is over 24 h old."""
    if letter.phase not in ("judging", "executing"):
        return False
    return now_ms * 1000 - instant_us(letter.updated_at) > STAGNANT_AFTER_MS * 1000


def dismiss_reason(letter: MissionLetter, now_ms: int) -> DismissReason | None:
    """Why this head may be hidden (``failed`` / ``stagnant``), or ``None`` when it may not."""
    if letter.phase == "failed":
        return "failed"
    if is_stagnant(letter, now_ms):
        return "stagnant"
    return None


def is_hidden(head_letter_id: str, dismissal: Dismissal | None) -> bool:
    """True when ``dismissal`` hid exactly this head (a moved mission shows again)."""
    return dismissal is not None and dismissal.letter_id == head_letter_id


def phase_counts(phases: list[str]) -> dict[str, int]:
    """How many heads are in each of the eight phases, in the seed's order."""
    return {phase: phases.count(phase) for phase in PHASES}


def _later(now_ms: int, head: MissionLetter) -> str:
    now = instant_iso(now_ms)
    return now if instant_us(now) >= instant_us(head.updated_at) else head.updated_at


def next_letter(
    head: MissionLetter,
    head_letter_id: str,
    *,
    phase: FollowUp,
    now_ms: int,
    store_version: int | None = None,
) -> dict[str, Any]:
    """The letter that extends the ``merge_wait`` head ``head`` into ``phase`` (JSON data).

    ``landed`` names the ``store_version`` the person's import made and keeps the candidate it
    imported; ``archived`` sets the receipt aside (no receipt, no candidate). Both keep the
    head's block, brain, seat, runner, capability, gate, verdict and ``packet_ref``, and move
    ``updated_at`` to the host clock. Refuses ``invalid_transition`` unless the head is
    ``merge_wait``, and ``args-invalid`` for a landing without a store version.
    """
    if head.phase != "merge_wait":
        raise Refused(
            Code.INVALID_TRANSITION,
            f"Only a merge_wait mission can become {phase}; this one is {head.phase}.",
            field="phase",
        )
    body = head.wire()
    body.update(
        mission_seq=head.mission_seq + 1,
        prev_letter_id=sha12(head_letter_id),
        phase=phase,
        updated_at=_later(now_ms, head),
    )
    if phase == "landed":
        if store_version is None:
            raise Refused(
                Code.ARGS_INVALID,
                "A landing names the store version the receipt import made.",
                field="store_version",
            )
        body["receipt"] = {"imported": True, "store_version": store_version}
    else:
        body["receipt"] = None
        body["receipt_candidate"] = None
    parse_letter(body)  # the letter's own contract holds (raises letter_invalid otherwise)
    return body


@dataclass(frozen=True, slots=True)
class ArchivePreview:
    """A fresh look at a ``merge_wait`` head before archiving it.

    ``proved_boundary`` is the candidate's ``scope.boundary_version`` (``None`` without a
    candidate); ``block_boundary`` the block's boundary now (``None`` when the block is gone);
    ``would_import`` whether importing the candidate would succeed right now, and if not, the
    refusal it would get (``import_code``, ``import_message``).
    """

    block_id: str
    block_name: str | None
    proved_boundary: int | None
    block_boundary: int | None
    store_version: int | None
    would_import: bool
    import_code: str | None
    import_message: str | None


def archive_preview(
    head: MissionLetter, store: SkeletonStore | None, *, now_ms: int, mission_id: str
) -> ArchivePreview:
    """The two boundaries and the would-it-still-import answer for ``head`` (nothing written).

    Refuses ``invalid_transition`` unless the head is ``merge_wait`` (only such a head can be
    archived, §1h(b)).
    """
    if head.phase != "merge_wait":
        raise Refused(
            Code.INVALID_TRANSITION,
            f"Only a merge_wait mission can be archived; this one is {head.phase}.",
            field="mission_id",
        )
    candidate = head.receipt_candidate
    block_ref = candidate.block_id if candidate is not None else head.block_id
    block = None if store is None else store.block(block_ref)
    code: str | None = None
    message: str | None = None
    if candidate is None:
        code, message = "args-invalid", "The letter carries no receipt candidate to import."
    else:
        try:
            outcome = import_receipt(
                store,
                head.wire()["receipt_candidate"],
                now_ms=now_ms,
                mission_id=mission_id,
            )
            if outcome.duplicate:
                code, message = None, "This receipt was already imported."
        except Refused as refusal:
            code, message = str(refusal.code), refusal.message
    return ArchivePreview(
        block_id=block_ref,
        block_name=None if block is None else block.name,
        proved_boundary=None if candidate is None else candidate.scope.boundary_version,
        block_boundary=None if block is None else block.boundary_version,
        store_version=None if store is None else store.store_version,
        would_import=candidate is not None and code is None,
        import_code=code,
        import_message=message,
    )
